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
pub(crate) fn in_place(
    path: &Path,
    read: bool,
    exclusive: bool,
    action: &'static str,
) -> Result<File, CliError> {
    let excl = exclusive && !path.is_file();
    OpenOptions::new()
        .read(read)
        .write(true)
        .custom_flags(if excl { libc::O_EXCL } else { 0 })
        .open(path)
        .map_err(|e| CliError::io(path, action, e))
}

/// Creates the new file `path`, readable and writable by its owner only
/// (a journal, a detached header, an extracted file: it may hold keys or
/// plaintext), read back when `read` is set; an existing name is an error,
/// never replaced or followed.
pub(crate) fn create_new(path: &Path, read: bool, action: &'static str) -> Result<File, CliError> {
    OpenOptions::new()
        .read(read)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| CliError::io(path, action, e))
}

/// A directory tree written entry by entry (`mdu fscrypt extract`): the
/// top is created, or an existing empty directory; nothing in it is ever
/// overwritten, every entry is new.
pub(crate) struct Dir {
    top: PathBuf,
}

impl Dir {
    /// Creates the directory `top`, or takes it if it exists and is empty.
    pub(crate) fn create(top: &Path) -> Result<Dir, CliError> {
        match std::fs::read_dir(top) {
            Ok(mut it) => {
                if it.next().is_some() {
                    return Err(CliError::Usage(format!(
                        "{}: exists and is not empty; nothing is overwritten",
                        top.display()
                    )));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir(top)
                    .map_err(|e| CliError::io(top, "create the directory", e))?;
            }
            Err(e) => return Err(CliError::io(top, "read the directory", e)),
        }
        Ok(Dir {
            top: top.to_owned(),
        })
    }

    /// The path of `rel` (relative, its components joined by `/`) below
    /// the top.
    pub(crate) fn path(&self, rel: &[u8]) -> PathBuf {
        self.top.join(std::ffi::OsStr::from_bytes(rel))
    }

    /// Creates the directory `rel`.
    pub(crate) fn dir(&self, rel: &[u8]) -> Result<(), CliError> {
        let p = self.path(rel);
        std::fs::create_dir(&p).map_err(|e| CliError::io(&p, "create the directory", e))
    }

    /// Creates the symbolic link `rel` to `target`.
    pub(crate) fn symlink(&self, rel: &[u8], target: &[u8]) -> Result<(), CliError> {
        let p = self.path(rel);
        std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), &p)
            .map_err(|e| CliError::io(&p, "create the symlink", e))
    }

    /// Creates the new regular file `rel` (mode 0600 until its own is set).
    pub(crate) fn file(&self, rel: &[u8]) -> Result<File, CliError> {
        create_new(&self.path(rel), false, "create")
    }
}

/// A second handle on `f` with `O_DIRECT`, for reading (`write` false) or
/// writing, where the system and the file system offer one.
pub(crate) fn direct(f: &File, write: bool) -> Option<File> {
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
