//! What an output path names (a file, a device, a descriptor of this
//! process), and whether it overlaps an input.

use super::*;
use crate::error::{DescriptorProblem, Overlap};

/// What an existing output path is, after following symbolic links.
///
/// ```
/// use mdu_io::output::Target;
/// let dir = tempfile::tempdir()?;
/// assert!(matches!(Target::resolve(&dir.path().join("new"))?, Target::New(_)));
/// assert!(matches!(Target::resolve("/dev/null".as_ref())?, Target::Stream(_, _, None)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub enum Target {
    /// Nothing there yet: a new regular file at this path.
    New(PathBuf),
    /// An existing regular file (the resolved path) and its metadata.
    File(PathBuf, Metadata),
    /// A block device.
    Block(PathBuf, Metadata),
    /// A character device or a FIFO, or (with a [`Descriptor`]) whatever
    /// a descriptor of this process named by the path is open on.
    Stream(PathBuf, Metadata, Option<Descriptor>),
}

/// A descriptor of this process that an output path names (`/dev/stdout`,
/// `/dev/fd/N`, `/proc/self/fd/N`): its number, and a duplicate of it to
/// write through (sharing its position and flags).
///
/// ```
/// use mdu_io::output::Target;
/// // Standard error, whatever it is open on, is written through as a stream.
/// if let Ok(Target::Stream(_, _, Some(d))) = Target::resolve("/dev/stderr".as_ref()) {
///     assert_eq!(d.fd(), 2);
/// }
/// ```
#[derive(Debug)]
pub struct Descriptor {
    pub(super) fd: RawFd,
    pub(super) file: File,
}

impl Target {
    /// Follows `path` to what a write would reach: refuses a dangling
    /// symbolic link, a directory and a socket. A path that names a
    /// descriptor of this process is that descriptor, whatever it is open
    /// on.
    ///
    /// ```
    /// use mdu_io::output::Target;
    /// let dir = tempfile::tempdir()?;
    /// let link = dir.path().join("link");
    /// std::os::unix::fs::symlink(dir.path().join("nothing"), &link)?;
    /// let e = Target::resolve(&link).err().unwrap();
    /// assert!(matches!(e, mdu_io::Error::DanglingSymlink { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolve(path: &Path) -> Result<Target, Error> {
        if let Some(fd) = own_descriptor(path) {
            return Descriptor::target(path, fd);
        }
        let link = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Target::New(path.to_owned()));
            }
            Err(e) => return Err(Error::io(path, "examine the output", e)),
        };
        let (real, meta) = if link.file_type().is_symlink() {
            match std::fs::canonicalize(path) {
                Ok(real) => {
                    let meta = std::fs::metadata(&real)
                        .map_err(|e| Error::io(path, "examine the output", e))?;
                    (real, meta)
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(Error::DanglingSymlink {
                        path: path.to_owned(),
                    });
                }
                Err(e) => return Err(Error::io(path, "follow the symbolic link", e)),
            }
        } else {
            (path.to_owned(), link)
        };
        let t = meta.file_type();
        if t.is_file() {
            Ok(Target::File(real, meta))
        } else if t.is_block_device() {
            Ok(Target::Block(real, meta))
        } else if t.is_char_device() || t.is_fifo() {
            Ok(Target::Stream(real, meta, None))
        } else {
            let kind = if t.is_dir() {
                "a directory"
            } else {
                "a socket"
            };
            Err(Error::NotAnOutput {
                path: path.to_owned(),
                kind,
            })
        }
    }

    /// The path a write reaches (the link's target for a symbolic link).
    pub(super) fn path(&self) -> &Path {
        match self {
            Target::New(p) | Target::File(p, _) | Target::Block(p, _) | Target::Stream(p, _, _) => {
                p
            }
        }
    }

    pub(super) fn meta(&self) -> Option<&Metadata> {
        match self {
            Target::New(_) => None,
            Target::File(_, m) | Target::Block(_, m) | Target::Stream(_, m, _) => Some(m),
        }
    }
}

/// The descriptor of this process that `path` names, if it names one:
/// `/proc/self/fd/N` (or `/proc/<this pid>/fd/N`, `/proc/thread-self/fd/N`)
/// reached directly or through symbolic links (`/dev/stdout`, `/dev/fd/N`).
/// Such a path is a link the kernel makes to whatever the descriptor is
/// open on, which may have no name (a pipe, a socket): it is told by where
/// it lies, not by what it points to, so the links are followed one at a
/// time.
fn own_descriptor(path: &Path) -> Option<RawFd> {
    let me = std::fs::canonicalize("/proc/self").ok()?;
    let mut p = path.to_path_buf();
    // The limit on links the kernel follows in one lookup.
    for _ in 0..40 {
        let name = p.file_name()?.to_str()?;
        let dir = std::fs::canonicalize(parent_dir(&p)).ok()?;
        let fd_dir = dir.file_name().is_some_and(|n| n == "fd");
        let ours = fd_dir
            && dir
                .parent()
                .is_some_and(|up| up == me || (up.parent().is_some_and(|t| t == me.join("task"))));
        if ours && !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
            return name.parse().ok();
        }
        if !std::fs::symlink_metadata(&p).ok()?.file_type().is_symlink() {
            return None;
        }
        let next = std::fs::read_link(&p).ok()?;
        p = parent_dir(&p).join(next);
    }
    None
}

impl Descriptor {
    /// The descriptor's number.
    ///
    /// ```
    /// use mdu_io::output::Target;
    /// if let Ok(Target::Stream(_, _, Some(d))) = Target::resolve("/dev/stdout".as_ref()) {
    ///     assert_eq!(d.fd(), 1);
    /// }
    /// ```
    pub fn fd(&self) -> RawFd {
        self.fd
    }

    /// The output `path`, which names this process's descriptor `fd`:
    /// refused if `fd` is not open, not open for writing, or open on a
    /// directory.
    fn target(path: &Path, fd: RawFd) -> Result<Target, Error> {
        let refuse = |why: DescriptorProblem| Error::Descriptor {
            path: path.to_owned(),
            fd,
            why,
        };
        // SAFETY: fcntl(F_DUPFD_CLOEXEC) takes any integer; on a number
        // that is not an open descriptor it fails with EBADF.
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            return Err(refuse(DescriptorProblem::NotOpen(
                io::Error::last_os_error(),
            )));
        }
        // SAFETY: `dup` is a new open descriptor that nothing else owns.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(dup) });
        // SAFETY: F_GETFL on the open descriptor `dup` only reads its flags.
        let flags = unsafe { libc::fcntl(dup, libc::F_GETFL) };
        if flags < 0 || flags & libc::O_PATH != 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
            return Err(refuse(DescriptorProblem::NotWritable));
        }
        let meta = file
            .metadata()
            .map_err(|e| Error::io(path, "examine the output", e))?;
        if meta.is_dir() {
            return Err(refuse(DescriptorProblem::Directory));
        }
        Ok(Target::Stream(
            path.to_owned(),
            meta,
            Some(Descriptor { fd, file }),
        ))
    }
}

/// Whether writing `out` (what `target` resolved to) would overwrite the
/// input `input` (opened, with metadata `inp`), and why.
pub(super) fn overlap(
    inp: &Metadata,
    input: &Path,
    out: &Metadata,
    target: &Target,
) -> Option<Overlap> {
    if inp.dev() == out.dev() && inp.ino() == out.ino() {
        return Some(Overlap::SameFile);
    }
    let block = |m: &Metadata| m.file_type().is_block_device();
    let dev = |m: &Metadata| block(m) || m.file_type().is_char_device();
    if dev(inp) && dev(out) && block(inp) == block(out) && inp.rdev() == out.rdev() {
        return Some(Overlap::SameDevice);
    }
    if block(out) && !dev(inp) && inp.dev() == out.rdev() {
        return Some(Overlap::InputOnOutputDevice);
    }
    if block(inp) && !dev(out) && out.dev() == inp.rdev() {
        return Some(Overlap::OutputOnInputDevice);
    }
    if block(inp) && block(out) {
        let (a, b) = (Part::of(inp.rdev())?, Part::of(out.rdev())?);
        if a.disk == b.disk && a.start < b.end && b.start < a.end {
            return Some(Overlap::OverlapOnDisk);
        }
    }
    // A loop device backed by the other one.
    let backs = |dev_meta: &Metadata, file: &Path| {
        let backing = Part::of(dev_meta.rdev()).and_then(|p| p.backing)?;
        let file = std::fs::canonicalize(file).ok()?;
        (backing == file).then_some(())
    };
    if block(out) && backs(out, input).is_some() {
        return Some(Overlap::OutputLoopsInput);
    }
    if block(inp) && backs(inp, target.path()).is_some() {
        return Some(Overlap::InputLoopsOutput);
    }
    None
}

/// Where a block device lies on its disk, from sysfs: the whole disk's
/// number, the byte range, and a loop device's backing file.
#[derive(Debug)]
struct Part {
    disk: u64,
    start: u64,
    end: u64,
    backing: Option<PathBuf>,
}

impl Part {
    fn of(rdev: u64) -> Option<Part> {
        let (maj, min) = (libc::major(rdev), libc::minor(rdev));
        let dir = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()?;
        let read = |p: &Path| std::fs::read_to_string(p).ok();
        let num = |p: &Path| read(p).and_then(|s| s.trim().parse::<u64>().ok());
        let size = num(&dir.join("size"))? * 512;
        let (disk_dir, start) = match num(&dir.join("start")) {
            Some(start) if dir.join("partition").exists() => (dir.parent()?.to_owned(), start),
            _ => (dir.clone(), 0),
        };
        let disk = read(&disk_dir.join("dev"))?;
        let (dmaj, dmin) = disk.trim().split_once(':')?;
        let disk = libc::makedev(dmaj.parse().ok()?, dmin.parse().ok()?);
        let backing = read(&disk_dir.join("loop/backing_file"))
            .map(|s| PathBuf::from(s.trim_end_matches('\n')));
        Some(Part {
            disk,
            start: start * 512,
            end: start * 512 + size,
            backing,
        })
    }
}
