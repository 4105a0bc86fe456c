//! `mdu fscrypt extract`: a checked tree written into a new directory,
//! files in parallel and as sparse as in the image.

use super::*;

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

fn to_system_time(t: Timestamp) -> SystemTime {
    let ns = Duration::from_nanos(u64::from(t.nsecs.min(999_999_999)));
    if t.secs >= 0 {
        UNIX_EPOCH + Duration::from_secs(t.secs as u64) + ns
    } else {
        UNIX_EPOCH - Duration::from_secs(t.secs.unsigned_abs()) + ns
    }
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
    let out = output::Dir::create(&a.out)?;
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
                finish(&file, &p, &inode)
            })
    })?;
    bar.finish_and_clear();
    for (i, inode) in &specials {
        let p = out_path(*i);
        make_special(&p, inode)?;
    }
    // Directories last, deepest first: creating their entries changed
    // their times.
    for (i, n) in tree.nodes.iter().enumerate().rev() {
        if n.kind != NodeKind::Dir {
            continue;
        }
        let p = out_path(i);
        let inode = img.vol.inode(n.ino).map_err(|e| img.err(e))?;
        let dir = File::open(&p).map_err(|e| CliError::io(&p, "open", e))?;
        finish(&dir, &p, &inode)?;
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

/// Makes FIFO or device node `path` as `inode` is, with its mode and
/// times.
fn make_special(path: &Path, inode: &Inode) -> Result<(), CliError> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| CliError::Usage(format!("{}: a NUL in the path", path.display())))?;
    let perm = libc::mode_t::from(inode.permissions() & 0o777);
    let r = match inode.file_type() {
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        FileType::Fifo => unsafe { libc::mkfifo(c.as_ptr(), perm) },
        t => {
            let (major, minor) = inode.device();
            let fmt = if t == FileType::CharDev {
                libc::S_IFCHR
            } else {
                libc::S_IFBLK
            };
            // SAFETY: as for mkfifo; the mode and device are plain values.
            unsafe { libc::mknod(c.as_ptr(), fmt | perm, libc::makedev(major, minor)) }
        }
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(CliError::io(path, "create the special file", e));
    }
    fs::set_permissions(path, fs::Permissions::from_mode(extracted_mode(inode)))
        .map_err(|e| CliError::io(path, "set the mode of", e))?;
    let ts = |t: Timestamp| libc::timespec {
        tv_sec: t.secs as libc::time_t,
        tv_nsec: t.nsecs.min(999_999_999) as libc::c_long,
    };
    let times = [ts(inode.atime), ts(inode.mtime)];
    // SAFETY: `c` is a NUL-terminated path and `times` an array of two
    // timespecs, both alive across the call; no file is opened (a FIFO or
    // a device is never opened here).
    let r = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            times.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(CliError::io(path, "set the times of", e));
    }
    Ok(())
}

/// The mode an extracted file gets: the image's permission bits less
/// setuid and setgid. Owners are not restored (the files belong to whoever
/// extracts), so those bits would hand an untrusted image's programs the
/// extracting user's rights, root's as root; GNU tar and libarchive drop
/// them too when they do not restore the owner.
fn extracted_mode(inode: &Inode) -> u32 {
    u32::from(inode.permissions()) & !0o6000
}

/// Sets `path`'s permissions and times from `inode`.
fn finish(file: &File, path: &Path, inode: &Inode) -> Result<(), CliError> {
    file.set_permissions(fs::Permissions::from_mode(extracted_mode(inode)))
        .map_err(|e| CliError::io(path, "set the mode of", e))?;
    let times = fs::FileTimes::new()
        .set_accessed(to_system_time(inode.atime))
        .set_modified(to_system_time(inode.mtime));
    file.set_times(times)
        .map_err(|e| CliError::io(path, "set the times of", e))
}
