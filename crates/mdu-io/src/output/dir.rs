//! A directory tree written entry by entry into a new directory: the
//! entries (directories, symbolic links, regular files, FIFOs and device
//! nodes), then their modes and times.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::*;

/// A directory tree written entry by entry (`mdu fscrypt extract`): the
/// top is created, or an existing empty directory; nothing in it is ever
/// overwritten, every entry is new.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let top = dir.path().join("tree");
/// let out = mdu_io::output::Dir::create(&top)?;
/// out.dir(b"etc")?;
/// out.symlink(b"etc/link", b"../target")?;
/// std::fs::write(out.path(b"etc/file"), b"x")?;
/// assert!(out.file(b"etc/file").is_err()); // never overwritten
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Dir {
    top: PathBuf,
}

impl Dir {
    /// Creates the directory `top`, or takes it if it exists and is empty.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("f"), b"x")?;
    /// let e = mdu_io::output::Dir::create(dir.path()).err().unwrap();
    /// assert!(matches!(e, mdu_io::Error::NotEmpty { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create(top: &Path) -> Result<Dir, Error> {
        match std::fs::read_dir(top) {
            Ok(mut it) => {
                if it.next().is_some() {
                    return Err(Error::NotEmpty {
                        path: top.to_owned(),
                    });
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir(top).map_err(|e| Error::io(top, "create the directory", e))?;
            }
            Err(e) => return Err(Error::io(top, "read the directory", e)),
        }
        Ok(Dir {
            top: top.to_owned(),
        })
    }

    /// The path of `rel` (relative, its components joined by `/`) below
    /// the top.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let out = mdu_io::output::Dir::create(&dir.path().join("t"))?;
    /// assert_eq!(out.path(b"a/b"), dir.path().join("t/a/b"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn path(&self, rel: &[u8]) -> PathBuf {
        self.top.join(std::ffi::OsStr::from_bytes(rel))
    }

    /// Creates the directory `rel`.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let out = mdu_io::output::Dir::create(&dir.path().join("t"))?;
    /// out.dir(b"sub")?;
    /// assert!(out.path(b"sub").is_dir());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dir(&self, rel: &[u8]) -> Result<(), Error> {
        let p = self.path(rel);
        std::fs::create_dir(&p).map_err(|e| Error::io(&p, "create the directory", e))
    }

    /// Creates the symbolic link `rel` to `target`.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let out = mdu_io::output::Dir::create(&dir.path().join("t"))?;
    /// out.symlink(b"l", b"elsewhere")?;
    /// assert_eq!(std::fs::read_link(out.path(b"l"))?, std::path::Path::new("elsewhere"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn symlink(&self, rel: &[u8], target: &[u8]) -> Result<(), Error> {
        let p = self.path(rel);
        std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), &p)
            .map_err(|e| Error::io(&p, "create the symlink", e))
    }

    /// Creates the new regular file `rel` (mode 0600 until its own is set).
    ///
    /// ```
    /// use std::io::Write;
    /// let dir = tempfile::tempdir()?;
    /// let out = mdu_io::output::Dir::create(&dir.path().join("t"))?;
    /// out.file(b"f")?.write_all(b"contents")?;
    /// assert_eq!(std::fs::read(out.path(b"f"))?, b"contents");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn file(&self, rel: &[u8]) -> Result<File, Error> {
        create_new(&self.path(rel), false, "create")
    }

    /// Creates the FIFO or device node `rel` as `kind` says, with the mode
    /// and times of `meta`. It is never opened (opening a FIFO waits for
    /// the other end, a device would be touched).
    ///
    /// ```
    /// use mdu_io::output::{Dir, Meta, Special, Time};
    /// use std::os::unix::fs::FileTypeExt;
    /// let dir = tempfile::tempdir()?;
    /// let out = Dir::create(&dir.path().join("t"))?;
    /// let t = Time { secs: 1_000_000_000, nsecs: 0 };
    /// out.special(b"fifo", Special::Fifo, &Meta { mode: 0o640, atime: t, mtime: t })?;
    /// let m = std::fs::symlink_metadata(out.path(b"fifo"))?;
    /// assert!(m.file_type().is_fifo());
    /// assert_eq!(m.modified()?, t.system_time());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn special(&self, rel: &[u8], kind: Special, meta: &Meta) -> Result<(), Error> {
        let path = self.path(rel);
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| Error::NulInPath { path: path.clone() })?;
        let perm = (meta.mode & 0o777) as libc::mode_t;
        let r = match kind {
            // SAFETY: `c` is a NUL-terminated path that outlives the call.
            Special::Fifo => unsafe { libc::mkfifo(c.as_ptr(), perm) },
            Special::CharDevice { major, minor } | Special::BlockDevice { major, minor } => {
                let fmt = if matches!(kind, Special::CharDevice { .. }) {
                    libc::S_IFCHR
                } else {
                    libc::S_IFBLK
                };
                // SAFETY: as for mkfifo; the mode and device are plain values.
                unsafe { libc::mknod(c.as_ptr(), fmt | perm, libc::makedev(major, minor)) }
            }
        };
        if r != 0 {
            let e = io::Error::last_os_error();
            return Err(Error::io(&path, "create the special file", e));
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(meta.mode))
            .map_err(|e| Error::io(&path, "set the mode of", e))?;
        let times = [meta.atime.timespec(), meta.mtime.timespec()];
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
            let e = io::Error::last_os_error();
            return Err(Error::io(&path, "set the times of", e));
        }
        Ok(())
    }

    /// Gives `file`, open as the entry `rel`, the mode and times of
    /// `meta`: last, once it is written (writing changes its times).
    ///
    /// ```
    /// use mdu_io::output::{Dir, Meta, Time};
    /// use std::os::unix::fs::PermissionsExt;
    /// let dir = tempfile::tempdir()?;
    /// let out = Dir::create(&dir.path().join("t"))?;
    /// let f = out.file(b"f")?;
    /// let t = Time { secs: -1, nsecs: 500 };
    /// out.finish(b"f", &f, &Meta { mode: 0o755, atime: t, mtime: t })?;
    /// let m = std::fs::metadata(out.path(b"f"))?;
    /// assert_eq!(m.permissions().mode() & 0o7777, 0o755);
    /// assert_eq!(m.modified()?, t.system_time());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish(&self, rel: &[u8], file: &File, meta: &Meta) -> Result<(), Error> {
        let path = self.path(rel);
        file.set_permissions(std::fs::Permissions::from_mode(meta.mode))
            .map_err(|e| Error::io(&path, "set the mode of", e))?;
        let times = std::fs::FileTimes::new()
            .set_accessed(meta.atime.system_time())
            .set_modified(meta.mtime.system_time());
        file.set_times(times)
            .map_err(|e| Error::io(&path, "set the times of", e))
    }

    /// Gives the directory `rel` (or the top, for an empty `rel`) the mode
    /// and times of `meta`: after its entries are made (making them
    /// changed its times), deepest first.
    ///
    /// ```
    /// use mdu_io::output::{Dir, Meta, Time};
    /// let dir = tempfile::tempdir()?;
    /// let out = Dir::create(&dir.path().join("t"))?;
    /// out.dir(b"sub")?;
    /// let t = Time { secs: 86_400, nsecs: 0 };
    /// out.finish_dir(b"sub", &Meta { mode: 0o700, atime: t, mtime: t })?;
    /// assert_eq!(std::fs::metadata(out.path(b"sub"))?.modified()?, t.system_time());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_dir(&self, rel: &[u8], meta: &Meta) -> Result<(), Error> {
        let path = self.path(rel);
        let dir = File::open(&path).map_err(|e| Error::io(&path, "open", e))?;
        self.finish(rel, &dir, meta)
    }
}

/// A special file [`Dir::special`] makes.
///
/// ```
/// let tty = mdu_io::output::Special::CharDevice { major: 5, minor: 0 };
/// # let _ = tty;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// A FIFO (named pipe).
    Fifo,
    /// A character device node (root only).
    CharDevice {
        /// The device's major number.
        major: u32,
        /// The device's minor number.
        minor: u32,
    },
    /// A block device node (root only).
    BlockDevice {
        /// The device's major number.
        major: u32,
        /// The device's minor number.
        minor: u32,
    },
}

/// A time as file systems store it: seconds from the epoch (before it when
/// negative) and nanoseconds (above 999,999,999 read as 999,999,999).
///
/// ```
/// let t = mdu_io::output::Time { secs: 1, nsecs: 5 };
/// assert_eq!(t.system_time(), std::time::UNIX_EPOCH + std::time::Duration::new(1, 5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Time {
    /// Seconds from the epoch.
    pub secs: i64,
    /// Nanoseconds into that second.
    pub nsecs: u32,
}

impl Time {
    /// As a [`SystemTime`].
    ///
    /// ```
    /// let t = mdu_io::output::Time { secs: -2, nsecs: 1 };
    /// let want = std::time::UNIX_EPOCH - std::time::Duration::from_secs(2)
    ///     + std::time::Duration::from_nanos(1);
    /// assert_eq!(t.system_time(), want);
    /// ```
    pub fn system_time(self) -> SystemTime {
        let ns = Duration::from_nanos(u64::from(self.nsecs.min(999_999_999)));
        if self.secs >= 0 {
            UNIX_EPOCH + Duration::from_secs(self.secs as u64) + ns
        } else {
            UNIX_EPOCH - Duration::from_secs(self.secs.unsigned_abs()) + ns
        }
    }

    /// As a `timespec` of `utimensat(2)`.
    fn timespec(self) -> libc::timespec {
        libc::timespec {
            tv_sec: self.secs as libc::time_t,
            tv_nsec: self.nsecs.min(999_999_999) as libc::c_long,
        }
    }
}

/// The mode and times an entry of a tree gets once it is complete.
///
/// ```
/// use mdu_io::output::{Meta, Time};
/// let t = Time { secs: 0, nsecs: 0 };
/// let m = Meta { mode: 0o644, atime: t, mtime: t };
/// # let _ = m;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The permission bits (`chmod`'s, 0o7777 at most).
    pub mode: u32,
    /// The time of last access.
    pub atime: Time,
    /// The time of last modification.
    pub mtime: Time,
}
