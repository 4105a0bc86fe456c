//! The journal file of `mdu crypt --in-place` as the tool keeps it: created
//! without a name and named only once complete, locked for the whole run,
//! removed at the end. Its format and rules are the library's
//! ([`mdu_inplace::plain`]).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::CliError;

/// Creates the journal at `path` (which must not exist): a file without a
/// name, locked, that `write` fills (the header and the first record,
/// synced), then named, never over an existing file. A failure leaves
/// nothing behind.
pub(crate) fn create<T>(
    path: &Path,
    write: impl FnOnce(File) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let (file, tmp) = new_unnamed(dir, path)?;
    let shown = tmp.as_deref().unwrap_or(path);
    let written = mdu_inplace::lock::hold(&file, shown)
        .map_err(CliError::from)
        .and_then(|()| {
            file.try_clone()
                .map_err(|e| CliError::io(shown, "open the journal", e))
        })
        .and_then(write);
    let placed = written.and_then(|t| {
        // Into place only if nothing is there (a journal of another run),
        // complete with its first record.
        name_it(&file, tmp.as_deref(), path)
            .map(|()| t)
            .map_err(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    CliError::Usage(format!(
                        "{}: the journal exists: it belongs to an interrupted run (go on with \
                         --resume) or to a running one",
                        path.display()
                    ))
                } else {
                    CliError::io(path, "create the journal", e)
                }
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

/// Opens and locks the journal of an interrupted run.
pub(crate) fn open(path: &Path) -> Result<File, CliError> {
    let file = crate::output::in_place(path, true, false, "open the journal")?;
    mdu_inplace::lock::hold(&file, path)?;
    Ok(file)
}

/// Removes the journal of a finished run (its copies already wiped).
pub(crate) fn remove(path: &Path) -> Result<(), CliError> {
    std::fs::remove_file(path).map_err(|e| CliError::io(path, "remove the journal", e))
}

/// A new journal file in `dir` that has no name yet (`O_TMPFILE`), so that
/// a crash before it is complete leaves nothing behind; where the file
/// system cannot do that, a hidden temporary name next to `path` (the
/// second value).
fn new_unnamed(dir: &Path, path: &Path) -> Result<(File, Option<PathBuf>), CliError> {
    if let Some(f) = crate::output::open_unnamed(dir, 0o600) {
        return Ok((f, None));
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{}.mdu-new-{}",
        name.unwrap_or_default(),
        std::process::id()
    ));
    let f = crate::output::create_new(&tmp, true, "create the journal")?;
    Ok((f, Some(tmp)))
}

/// Gives the new journal `f` its name `path`, failing with `AlreadyExists`
/// if `path` exists: a link of the unnamed file, or a rename of `tmp`
/// that replaces nothing.
fn name_it(f: &File, tmp: Option<&Path>, path: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let Some(tmp) = tmp else {
        return crate::output::link_proc(f, path);
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
