//! Outputs written where they lie: a file or device an in-place command
//! rewrites, a new file that must not exist yet, a directory tree made
//! entry by entry, and a second handle with direct I/O.

use super::*;

/// Opens the existing file or device `path` that an in-place command
/// rewrites (`mdu crypt --in-place`, `mdu verity repair`, a LUKS2 header
/// written over an image, a reencryption): never created, never renamed,
/// read back when `read` is set. `exclusive` opens a device with `O_EXCL`
/// (the kernel refuses a mounted one); a regular file is opened as it is.
/// `action` says what the open is for, in the error.
///
/// ```
/// use std::os::unix::fs::FileExt;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("image");
/// std::fs::write(&path, b"abcd")?;
/// let f = mdu_io::output::in_place(&path, true, true, "open for writing")?;
/// f.write_all_at(b"X", 1)?;
/// assert_eq!(std::fs::read(&path)?, b"aXcd");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn in_place(
    path: &Path,
    read: bool,
    exclusive: bool,
    action: &'static str,
) -> Result<File, Error> {
    let excl = exclusive && !path.is_file();
    OpenOptions::new()
        .read(read)
        .write(true)
        .custom_flags(if excl { libc::O_EXCL } else { 0 })
        .open(path)
        .map_err(|e| Error::io(path, action, e))
}

/// Creates the new file `path`, readable and writable by its owner only
/// (a journal, a detached header, an extracted file: it may hold keys or
/// plaintext), read back when `read` is set; an existing name is an error,
/// never replaced or followed.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("journal");
/// mdu_io::output::create_new(&path, true, "create the journal")?;
/// assert!(mdu_io::output::create_new(&path, true, "create the journal").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn create_new(path: &Path, read: bool, action: &'static str) -> Result<File, Error> {
    OpenOptions::new()
        .read(read)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(path, action, e))
}

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
}

/// A second handle on `f` with `O_DIRECT`, for reading (`write` false) or
/// writing, where the system and the file system offer one.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let f = std::fs::File::create(dir.path().join("f"))?;
/// // None where the file system has no direct I/O (tmpfs).
/// let _direct: Option<std::fs::File> = mdu_io::output::direct(&f, true);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn direct(f: &File, write: bool) -> Option<File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        OpenOptions::new()
            .read(!write)
            .write(write)
            .custom_flags(libc::O_DIRECT)
            .open(format!("/proc/self/fd/{}", f.as_raw_fd()))
            .ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (f, write);
        None
    }
}
