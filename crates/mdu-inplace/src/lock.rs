//! Exclusive use of what is changed in place.
//!
//! Every in-place change (a reencryption, a plain-mode conversion, a
//! repair, a header written over an existing image) holds these locks for
//! its whole run, taken before it reads what it will change and before any
//! write; a second run is refused with the holder's name
//! ([`LockError::Busy`], cryptsetup's "busy").
//!
//! They are cryptsetup's own locks, so that mdu and cryptsetup exclude each
//! other:
//! - a regular file: `flock(LOCK_EX)` on the file itself, the lock
//!   libcryptsetup takes on a regular file while it reads or writes its
//!   metadata (and, in a reencryption, from loading the header through the
//!   key derivation until its reencryption flag is written);
//! - a block device: `flock(LOCK_EX)` on `/run/cryptsetup/L_MAJOR:MINOR`,
//!   libcryptsetup's lock for that device;
//! - a LUKS2 reencryption: also `/run/cryptsetup/LN_LUKS2-reencryption-UUID`,
//!   the lock a cryptsetup reencryption holds for the whole run (it drops
//!   the metadata lock between hotzones).
//!
//! libcryptsetup waits for a metadata lock, so a cryptsetup command started
//! while mdu holds one waits and then reads the header mdu left; its
//! reencryption lock is taken without waiting, as mdu takes every lock.

//!
//! ```no_run
//! use std::path::Path;
//! use mdu_inplace::lock::{LockError, Locks};
//!
//! let mut locks = Locks::new();
//! match locks.file(Path::new("disk.img")) {
//!     Ok(()) => { /* disk.img is this process's until `locks` is dropped */ }
//!     Err(LockError::Busy { holder, .. }) => eprintln!("busy: {holder}"),
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a lock was not taken.
///
/// ```
/// use std::path::PathBuf;
/// use mdu_inplace::lock::LockError;
/// let e = LockError::Busy { path: PathBuf::from("disk.img"), holder: "process 7 holds its lock".into() };
/// assert_eq!(e.to_string(), "disk.img: busy: process 7 holds its lock");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum LockError {
    /// Another process holds the lock of `path`, or has it open for
    /// writing, or backs a loop device with it: `holder` says which.
    Busy {
        /// What is locked.
        path: PathBuf,
        /// Who holds it, in words.
        holder: String,
    },
    /// An I/O error while taking a lock.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done ("lock", "open the lock file", ...).
        action: &'static str,
        /// The error.
        source: io::Error,
    },
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Busy { path, holder } => write!(f, "{}: busy: {holder}", path.display()),
            LockError::Io {
                path,
                action,
                source,
            } => write!(f, "{}: cannot {action}: {source}", path.display()),
        }
    }
}

impl std::error::Error for LockError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LockError::Io { source, .. } => Some(source),
            LockError::Busy { .. } => None,
        }
    }
}

fn io_error(path: &Path, action: &'static str, source: io::Error) -> LockError {
    LockError::Io {
        path: path.to_owned(),
        action,
        source,
    }
}

/// The workspace's one `flock` (`mdu_io::flock`), which every lock here
/// takes.
pub use mdu_io::flock::{Flock, try_flock};

/// libcryptsetup's lock directory (its compiled-in default).
const LOCK_DIR: &str = "/run/cryptsetup";

/// Locks held until dropped (closing a descriptor releases its `flock`).
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("disk.img");
/// std::fs::write(&path, [0u8; 4096])?;
/// let mut locks = mdu_inplace::lock::Locks::new();
/// locks.file(&path)?;
/// // Taken once per file: the same file again is already held.
/// locks.file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct Locks {
    held: Vec<File>,
}

impl Locks {
    /// No locks yet.
    ///
    /// ```
    /// let _locks = mdu_inplace::lock::Locks::new();
    /// ```
    pub fn new() -> Locks {
        Locks::default()
    }

    /// Takes the exclusive lock of the file or block device at `path`
    /// (what cryptsetup locks for it), refusing at once if another process
    /// holds it. A path that does not exist is not locked (it is created
    /// later by the caller, under the other locks).
    pub fn file(&mut self, path: &Path) -> Result<(), LockError> {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_error(path, "lock", e)),
        };
        if meta.file_type().is_block_device() {
            let rdev = meta.rdev();
            let name = format!("L_{}:{}", libc::major(rdev), libc::minor(rdev));
            self.resource(&name, path)?;
            return writers(path, &meta);
        }
        if !meta.is_file() {
            // Character devices and FIFOs are streams: nothing to lock.
            return Ok(());
        }
        let f = File::open(path).map_err(|e| io_error(path, "open to lock", e))?;
        if self.held_already(&f) {
            return Ok(());
        }
        take(&f, path, path)?;
        self.held.push(f);
        writers(path, &meta)
    }

    /// Takes cryptsetup's reencryption lock of the LUKS2 volume `uuid`.
    pub fn reencryption(&mut self, uuid: &str, image: &Path) -> Result<(), LockError> {
        self.resource(&format!("LN_LUKS2-reencryption-{uuid}"), image)
    }

    /// `flock` of the resource file `name` in the lock directory; `image`
    /// is what the lock stands for, named in errors.
    fn resource(&mut self, name: &str, image: &Path) -> Result<(), LockError> {
        let dir = Path::new(LOCK_DIR);
        // A user who may not create it here runs no cryptsetup that takes
        // it either; the locks on the files and the scan of their writers
        // still hold.
        let denied = |e: &io::Error| {
            matches!(
                e.raw_os_error(),
                Some(libc::EACCES | libc::EPERM | libc::EROFS)
            )
        };
        // (0700, as libcryptsetup creates it)
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Err(e) if denied(&e) => return Ok(()),
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
                return Err(io_error(dir, "create the lock directory", e));
            }
            _ => {}
        }
        let path = dir.join(name);
        // As libcryptsetup: never through a symbolic link, mode 0777 less
        // the umask (any user's cryptsetup must be able to take it).
        let f = match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o777)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if denied(&e) => return Ok(()),
            Err(e) => return Err(io_error(&path, "open the lock file", e)),
        };
        take(&f, &path, image)?;
        self.held.push(f);
        Ok(())
    }

    /// Whether `f` is a file whose lock this set already holds (a detached
    /// header given twice is refused elsewhere; one lock is enough).
    fn held_already(&self, f: &File) -> bool {
        let Ok(m) = f.metadata() else { return false };
        self.held.iter().any(|h| {
            h.metadata()
                .is_ok_and(|h| h.dev() == m.dev() && h.ino() == m.ino())
        })
    }
}

/// Refuses `path` if another process has it open for writing, or a loop
/// device is backed by it: a process that takes no lock (a cryptsetup
/// reencryption between hotzones holds only its reencryption lock, whose
/// name mdu cannot know when the header is elsewhere) is found this way, as
/// `fuser` finds it.
fn writers(path: &Path, meta: &std::fs::Metadata) -> Result<(), LockError> {
    let block = meta.file_type().is_block_device();
    let same = |m: &std::fs::Metadata| {
        if block {
            m.file_type().is_block_device() && m.rdev() == meta.rdev()
        } else {
            m.dev() == meta.dev() && m.ino() == meta.ino()
        }
    };
    let busy = |holder: String| LockError::Busy {
        path: path.to_owned(),
        holder,
    };
    if let Some(loop_dev) = (!block).then(|| loop_backed_by(meta)).flatten() {
        return Err(busy(format!("loop device {loop_dev} is backed by it")));
    }
    let me = std::process::id();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Ok(());
    };
    for p in procs.flatten() {
        let name = p.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            // The magic link leads to the open file even when it has been
            // renamed or removed.
            if !std::fs::metadata(fd.path()).is_ok_and(|m| same(&m)) {
                continue;
            }
            let info = p.path().join("fdinfo").join(fd.file_name());
            let writable = std::fs::read_to_string(info).ok().and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("flags:"))
                    .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
                    .map(|f| f & libc::O_ACCMODE as u32 != libc::O_RDONLY as u32)
            });
            if writable == Some(true) {
                return Err(busy(format!(
                    "{} has it open for writing",
                    describe(&pid.to_string())
                )));
            }
        }
    }
    Ok(())
}

/// The loop device whose backing file is the file of `meta`, if any.
fn loop_backed_by(meta: &std::fs::Metadata) -> Option<String> {
    for e in std::fs::read_dir("/sys/block").ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(dev) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        let dev = dev.trim_end_matches('\n');
        let m = match std::fs::metadata(dev) {
            Ok(m) => m,
            Err(_) => continue,
        };
        if m.dev() == meta.dev() && m.ino() == meta.ino() {
            return Some(format!("/dev/{name}"));
        }
    }
    None
}

/// Locks the file `f` (at `path`) itself, refusing at once if another
/// process holds it; the lock lasts as long as `f` is open.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("journal");
/// let f = std::fs::File::create(&path)?;
/// mdu_inplace::lock::hold(&f, &path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn hold(f: &File, path: &Path) -> Result<(), LockError> {
    take(f, path, path)
}

/// `flock(LOCK_EX | LOCK_NB)` on `f` (the lock file at `lock_path`, which
/// stands for `image`).
fn take(f: &File, lock_path: &Path, image: &Path) -> Result<(), LockError> {
    let Err(e) = try_flock(f, Flock::Exclusive) else {
        return Ok(());
    };
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        return Err(LockError::Busy {
            path: image.to_owned(),
            holder: format!(
                "{} holds its lock",
                holder(f).unwrap_or_else(|| "another process".into())
            ),
        });
    }
    Err(io_error(lock_path, "lock", e))
}

/// The process that holds a `flock` on `f`, from `/proc/locks`: "process
/// PID (NAME: COMMAND LINE)".
fn holder(f: &File) -> Option<String> {
    let m = f.metadata().ok()?;
    let (maj, min) = (libc::major(m.dev()), libc::minor(m.dev()));
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let me = std::process::id().to_string();
    for line in locks.lines() {
        // "1: FLOCK  ADVISORY  WRITE 6838 fe:00:761859 0 EOF"
        let mut w = line.split_whitespace().skip(1);
        let (Some(kind), Some(_), Some(_), Some(pid), Some(id)) =
            (w.next(), w.next(), w.next(), w.next(), w.next())
        else {
            continue;
        };
        if kind == "->" || pid == me || pid == "-1" {
            continue;
        }
        let mut parts = id.split(':');
        let (Some(a), Some(b), Some(ino)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let same = u32::from_str_radix(a, 16).ok() == Some(maj)
            && u32::from_str_radix(b, 16).ok() == Some(min)
            && ino.parse::<u64>().ok() == Some(m.ino());
        if same {
            return Some(describe(pid));
        }
    }
    None
}

/// "process PID (COMMAND LINE)" or "process PID".
fn describe(pid: &str) -> String {
    let cmdline: PathBuf = ["/proc", pid, "cmdline"].iter().collect();
    match std::fs::read(cmdline) {
        Ok(c) if !c.is_empty() => {
            let words: Vec<String> = c
                .split(|&b| b == 0)
                .filter(|w| !w.is_empty())
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect();
            format!("process {pid} ({})", words.join(" "))
        }
        _ => format!("process {pid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("img");
        std::fs::write(&path, [0u8; 512]).unwrap();
        let f = File::open(&path).unwrap();
        hold(&f, &path).unwrap();
        // Another open file description is another holder, as another
        // process would be.
        let g = File::open(&path).unwrap();
        let e = try_flock(&g, Flock::Exclusive).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        assert!(try_flock(&g, Flock::Shared).is_err());
        drop(f);
        try_flock(&g, Flock::Shared).unwrap();
    }

    #[test]
    fn a_path_that_does_not_exist_is_not_locked() {
        let dir = tempfile::tempdir().unwrap();
        Locks::new().file(&dir.path().join("absent")).unwrap();
    }

    #[test]
    fn the_holder_is_described_by_its_command_line() {
        let me = std::process::id().to_string();
        assert!(describe(&me).starts_with(&format!("process {me} (")));
        assert_eq!(describe("0"), "process 0");
    }
}
