//! `mdu fscrypt extract`: a checked tree written into a new directory,
//! files in parallel and as sparse as in the image.

use super::*;
use mdu_io::output::{Dir, Meta, Special, Time};

/// Writes regular file `inode` into `file` (new and empty) as sparse as
/// the image has it: only the runs of blocks that hold data, each in
/// 1 MiB pieces at its offset, then the size; holes and unwritten extents
/// are never written.
fn copy_sparse(
    img: &Image,
    inode: &Inode,
    file: &File,
    path: &Path,
    done: &AtomicU64,
) -> Result<(), CliError> {
    use std::os::unix::fs::FileExt;
    let contents = img.vol.contents(inode).map_err(|e| img.err(e))?;
    let bs = u64::from(img.vol.ext4().block_size());
    let piece = (1 << 20) / bs;
    let mut buf = vec![0u8; (piece * bs) as usize];
    let mut written = 0;
    for (first, count) in contents.data_runs() {
        let mut block = first;
        while block < first + count && block * bs < contents.size() {
            let n = piece.min(first + count - block);
            let len = contents
                .read(block, &mut buf[..(n * bs) as usize])
                .map_err(|e| img.err(e))?;
            file.write_all_at(&buf[..len], block * bs)
                .map_err(|e| CliError::io(path, "write", e))?;
            written += len as u64;
            done.fetch_add(len as u64, Ordering::Relaxed);
            block += n;
        }
    }
    file.set_len(contents.size())
        .map_err(|e| CliError::io(path, "set the size of", e))?;
    // The holes count as done for the progress bar.
    done.fetch_add(contents.size().saturating_sub(written), Ordering::Relaxed);
    Ok(())
}

pub(super) fn extract(a: ExtractArgs) -> Result<(), CliError> {
    let img = Image::open(&a.image, keyring(&a.keys)?)?;
    let (top, top_inode) = img.lookup(a.path.as_deref().unwrap_or("/"))?;
    if !top_inode.is_dir() {
        return Err(CliError::Usage(format!(
            "{}: not a directory",
            a.image.display()
        )));
    }
    // The whole tree is checked first (names, duplicates, loops, keys,
    // block maps, symlink targets): a wrong key or a damaged image stops
    // the run before anything is written.
    let tree = img.vol.walk(top).map_err(|e| img.err(e))?;
    let out_path = |i: usize| a.out.join(OsStr::from_bytes(&tree.path(i)));
    let (mut files, specials) = sort_nodes(&img, &tree, &a)?;
    // OUT: created, or an existing empty directory.
    let out = Dir::create(&a.out)?;
    for (i, n) in tree.nodes.iter().enumerate().skip(1) {
        match n.kind {
            NodeKind::Dir => out.dir(&tree.path(i))?,
            NodeKind::Symlink => {
                out.symlink(&tree.path(i), tree.target(n.ino).unwrap_or_default())?
            }
            _ => {}
        }
    }
    let total: u64 = files.iter().map(|f| f.1).sum();
    let bar = progress::progress(total, "extract");
    let done = AtomicU64::new(0);
    let pool = process::pool(a.threads)?;
    // Large files first, so the last thread is not left with one.
    files.sort_by_key(|f| std::cmp::Reverse(f.1));
    pool.install(|| {
        files
            .par_iter()
            .try_for_each(|&(i, _)| -> Result<(), CliError> {
                let p = out_path(i);
                let inode = img.vol.inode(tree.nodes[i].ino).map_err(|e| img.err(e))?;
                let file = out.file(&tree.path(i))?;
                copy_sparse(&img, &inode, &file, &p, &done)?;
                bar.set_position(done.load(Ordering::Relaxed));
                Ok(out.finish(&tree.path(i), &file, &meta(&inode))?)
            })
    })?;
    bar.finish_and_clear();
    for (i, inode) in &specials {
        out.special(&tree.path(*i), special(inode), &meta(inode))?;
    }
    // Directories last, deepest first: creating their entries changed
    // their times.
    for (i, n) in tree.nodes.iter().enumerate().rev() {
        if n.kind != NodeKind::Dir {
            continue;
        }
        let inode = img.vol.inode(n.ino).map_err(|e| img.err(e))?;
        out.finish_dir(&tree.path(i), &meta(&inode))?;
    }
    Ok(())
}

/// The regular files of `tree` (node, size) and the special files made
/// as they are (node, inode: FIFOs, and device nodes as root); every other
/// special file is skipped with a line on stderr. A path below OUT the
/// system cannot create is refused before anything is written.
#[allow(clippy::type_complexity)]
fn sort_nodes(
    img: &Image,
    tree: &Tree,
    a: &ExtractArgs,
) -> Result<(Vec<(usize, u64)>, Vec<(usize, Inode)>), CliError> {
    let root = process::euid() == 0;
    let mut files = Vec::new();
    let mut specials = Vec::new();
    for (i, n) in tree.nodes.iter().enumerate() {
        let p = a.out.join(OsStr::from_bytes(&tree.path(i)));
        if p.as_os_str().len() >= PATH_MAX {
            return Err(CliError::Refused {
                path: a.image.clone(),
                message: format!(
                    "{}: a path of {} bytes, which the system cannot create (PATH_MAX {PATH_MAX})",
                    String::from_utf8_lossy(&tree.path(i)),
                    p.as_os_str().len()
                ),
            });
        }
        match n.kind {
            NodeKind::File => {
                let size = img.vol.inode(n.ino).map_err(|e| img.err(e))?.size;
                files.push((i, size));
            }
            NodeKind::Special => {
                let inode = img.vol.inode(n.ino).map_err(|e| img.err(e))?;
                let t = inode.file_type();
                let why = match t {
                    FileType::Fifo => None,
                    FileType::CharDev | FileType::BlockDev if root => None,
                    FileType::Socket => Some("sockets are not recreated"),
                    FileType::CharDev | FileType::BlockDev => {
                        Some("device nodes are made only as root")
                    }
                    _ => Some("not a type a file can have"),
                };
                match why {
                    None => specials.push((i, inode)),
                    Some(why) => eprintln!(
                        "mdu: skipped {} ({}): {why}",
                        String::from_utf8_lossy(&tree.path(i)),
                        kind(t)
                    ),
                }
            }
            _ => {}
        }
    }
    Ok((files, specials))
}

/// The longest path the system takes, with its NUL.
const PATH_MAX: usize = libc::PATH_MAX as usize;

/// The mode an extracted file gets: the image's permission bits less
/// setuid and setgid. Owners are not restored (the files belong to whoever
/// extracts), so those bits would hand an untrusted image's programs the
/// extracting user's rights, root's as root; GNU tar and libarchive drop
/// them too when they do not restore the owner.
fn extracted_mode(inode: &Inode) -> u32 {
    u32::from(inode.permissions()) & !0o6000
}

/// The mode and times an extracted entry gets from `inode`.
fn meta(inode: &Inode) -> Meta {
    let time = |t: Timestamp| Time {
        secs: t.secs,
        nsecs: t.nsecs,
    };
    Meta {
        mode: extracted_mode(inode),
        atime: time(inode.atime),
        mtime: time(inode.mtime),
    }
}

/// What the special file `inode` is, as [`Dir::special`] makes it (a FIFO,
/// or a device node as root: `sort_nodes` kept no other).
fn special(inode: &Inode) -> Special {
    let (major, minor) = inode.device();
    match inode.file_type() {
        FileType::Fifo => Special::Fifo,
        FileType::CharDev => Special::CharDevice { major, minor },
        _ => Special::BlockDevice { major, minor },
    }
}
