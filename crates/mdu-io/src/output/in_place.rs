//! Outputs written where they lie: a file or device an in-place command
//! rewrites, a new file that must not exist yet, and a second handle with
//! direct I/O.

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
