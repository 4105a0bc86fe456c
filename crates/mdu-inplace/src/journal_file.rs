//! The journal file of a plain-mode run ([`plain`](crate::plain)) as a
//! file: created without a name and named only once it is complete, locked
//! for the whole run, removed at the end.
//!
//! [`create`] makes a file that has no name yet (`O_TMPFILE`, or where the
//! file system cannot, a hidden temporary name beside the journal), locks
//! it, lets the caller write the header and first record into it
//! ([`Plain::start`](crate::plain::Plain::start), synced), and only then
//! gives it its name, never over an existing file: a crash before that
//! leaves no journal behind, and a journal that exists is always complete.
//! [`open`] locks the journal of an interrupted run; [`remove`] deletes the
//! journal of a finished one.
//!
//! ```
//! use std::io::Write;
//! use mdu_inplace::journal_file::{self, JournalError};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("journal");
//! journal_file::create(&path, |mut f| -> Result<(), Box<dyn std::error::Error>> {
//!     f.write_all(b"record")?; // the header and the first record, synced
//!     Ok(())
//! })?;
//! assert_eq!(std::fs::read(&path)?, b"record");
//! // A second run finds it: nothing is replaced.
//! let again = journal_file::create(&path, |_| Ok::<_, JournalError>(()));
//! assert!(matches!(again, Err(JournalError::Exists { .. })));
//! let journal = journal_file::open(&path)?; // locked until dropped
//! drop(journal);
//! journal_file::remove(&path)?;
//! assert!(!path.exists());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::lock::{self, LockError};
use mdu_io::output::{link_proc, open_unnamed};

/// Why a journal file could not be created, opened or removed.
///
/// ```
/// use std::path::PathBuf;
/// use mdu_inplace::journal_file::JournalError;
/// let e = JournalError::Exists { path: PathBuf::from("j") };
/// assert_eq!(e.to_string(), "j: the journal exists");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum JournalError {
    /// The journal's name is taken: by the journal of an interrupted run,
    /// or of a running one.
    Exists {
        /// The journal's path.
        path: PathBuf,
    },
    /// An I/O error.
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done ("create the journal", "open the journal",
        /// "remove the journal").
        action: &'static str,
        /// The error.
        source: io::Error,
    },
    /// The journal is locked by another process, or the lock failed.
    Lock(LockError),
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JournalError::Exists { path } => write!(f, "{}: the journal exists", path.display()),
            JournalError::Io {
                path,
                action,
                source,
            } => write!(f, "{}: cannot {action}: {source}", path.display()),
            JournalError::Lock(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for JournalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            JournalError::Io { source, .. } => Some(source),
            JournalError::Lock(e) => Some(e),
            JournalError::Exists { .. } => None,
        }
    }
}

impl From<LockError> for JournalError {
    fn from(e: LockError) -> JournalError {
        JournalError::Lock(e)
    }
}

fn io_error(path: &Path, action: &'static str, source: io::Error) -> JournalError {
    JournalError::Io {
        path: path.to_owned(),
        action,
        source,
    }
}

/// Creates the journal at `path`, which must not exist: a file without a
/// name, readable by its owner only, locked, that `write` fills (the
/// header and the first record, synced), then named `path`, never over an
/// existing file ([`JournalError::Exists`]). A failure leaves nothing
/// behind. The new name is synced with its directory.
///
/// ```
/// use mdu_inplace::journal_file::{self, JournalError};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("journal");
/// // A failed write leaves no journal.
/// let failed = journal_file::create(&path, |_| Err::<(), _>(JournalError::Exists { path: "x".into() }));
/// assert!(failed.is_err() && !path.exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn create<T, E: From<JournalError>>(
    path: &Path,
    write: impl FnOnce(File) -> Result<T, E>,
) -> Result<T, E> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let (file, tmp) = new_unnamed(dir, path)?;
    let shown = tmp.as_deref().unwrap_or(path);
    let written = lock::hold(&file, shown)
        .map_err(JournalError::from)
        .and_then(|()| {
            file.try_clone()
                .map_err(|e| io_error(shown, "open the journal", e))
        })
        .map_err(E::from)
        .and_then(write);
    let placed = written.and_then(|t| {
        // Into place only if nothing is there (a journal of another run),
        // complete with its first record.
        name_it(&file, tmp.as_deref(), path)
            .map(|()| t)
            .map_err(|e| {
                E::from(if e.kind() == io::ErrorKind::AlreadyExists {
                    JournalError::Exists {
                        path: path.to_owned(),
                    }
                } else {
                    io_error(path, "create the journal", e)
                })
            })
    });
    if placed.is_err()
        && let Some(tmp) = &tmp
    {
        let _ = std::fs::remove_file(tmp);
    }
    // The new name too must survive a crash.
    let _ = File::open(dir).and_then(|d| d.sync_all());
    placed
}

/// Opens the journal of an interrupted run for reading and writing, and
/// locks it for as long as the file is open.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("journal");
/// assert!(mdu_inplace::journal_file::open(&path).is_err()); // none yet
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open(path: &Path) -> Result<File, JournalError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| io_error(path, "open the journal", e))?;
    lock::hold(&file, path)?;
    Ok(file)
}

/// Removes the journal of a finished run (its copies already wiped).
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("journal");
/// std::fs::write(&path, b"")?;
/// mdu_inplace::journal_file::remove(&path)?;
/// assert!(!path.exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn remove(path: &Path) -> Result<(), JournalError> {
    std::fs::remove_file(path).map_err(|e| io_error(path, "remove the journal", e))
}

/// A new journal file in `dir` that has no name yet, so that a crash
/// before it is complete leaves nothing behind; where the file system
/// cannot make one, a hidden temporary name next to `path` (the second
/// value).
fn new_unnamed(dir: &Path, path: &Path) -> Result<(File, Option<PathBuf>), JournalError> {
    if let Some(f) = open_unnamed(dir, 0o600) {
        return Ok((f, None));
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{}.mdu-new-{}",
        name.unwrap_or_default(),
        std::process::id()
    ));
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| io_error(&tmp, "create the journal", e))?;
    Ok((f, Some(tmp)))
}

/// Gives the new journal `f` its name `path`, failing with `AlreadyExists`
/// if `path` exists: a link of the unnamed file, or a rename of `tmp`
/// that replaces nothing.
fn name_it(f: &File, tmp: Option<&Path>, path: &Path) -> io::Result<()> {
    let Some(tmp) = tmp else {
        return link_proc(f, path);
    };
    let to = CString::new(path.as_os_str().as_bytes())?;
    let from = CString::new(tmp.as_os_str().as_bytes())?;
    // SAFETY: both paths are NUL-terminated strings that live across the
    // call; renameat2 reads them and touches no other memory.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
        // No RENAME_NOREPLACE here: a hard link cannot replace either.
        std::fs::hard_link(tmp, path)?;
        return std::fs::remove_file(tmp);
    }
    Err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_create_replaces_nothing_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        create(&path, |_| Ok::<_, JournalError>(())).unwrap();
        std::fs::write(&path, b"first").unwrap();
        let e = create(&path, |_| Ok::<_, JournalError>(())).unwrap_err();
        assert!(matches!(e, JournalError::Exists { .. }));
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn the_journal_is_locked_while_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        std::fs::write(&path, b"").unwrap();
        let held = open(&path).unwrap();
        assert!(matches!(
            open(&path),
            Err(JournalError::Lock(LockError::Busy { .. }))
        ));
        drop(held);
        open(&path).unwrap();
    }

    #[test]
    fn the_new_journal_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        create(&path, |_| Ok::<_, JournalError>(())).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
