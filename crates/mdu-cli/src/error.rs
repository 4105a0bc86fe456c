//! Why a command failed, and the exit status that says so.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Exit status of a verification that ran and found a mismatch.
pub(crate) const EXIT_VERIFY_FAILED: u8 = 1;
/// Exit status of bad usage or bad input.
pub(crate) const EXIT_BAD_INPUT: u8 = 2;
/// Exit status of a file or device another process is using (cryptsetup's
/// "device busy").
pub(crate) const EXIT_BUSY: u8 = 5;

/// Why a command failed. Every message names the file, the offset (where
/// there is one) and the rule that was broken.
#[derive(Debug)]
pub(crate) enum CliError {
    /// An option value is invalid (exit 2).
    Usage(String),
    /// An I/O operation on a file failed (exit 2).
    Io {
        path: PathBuf,
        action: &'static str,
        source: io::Error,
    },
    /// A file's contents break a rule (exit 2).
    Input {
        path: PathBuf,
        offset: u64,
        rule: String,
    },
    /// A library call refused its input (exit 2).
    Library { path: PathBuf, message: String },
    /// A file or device that could not be opened, read or written as the
    /// command needs (`mdu_io`'s checks and I/O; exit 2).
    File(mdu_io::Error),
    /// Verification ran and found a mismatch (exit 1).
    VerifyFailed(String),
    /// An image that is damaged, or a key that does not open it (exit 1).
    Refused { path: PathBuf, message: String },
    /// Another process holds the lock of a file this command changes in
    /// place (exit 5).
    Busy { path: PathBuf, holder: String },
    /// `error`, with the exit status its namespace's table gives it
    /// (cryptsetup's under `mdu luks`).
    Status { code: u8, error: Box<CliError> },
}

impl CliError {
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::VerifyFailed(_) | CliError::Refused { .. } => EXIT_VERIFY_FAILED,
            CliError::Busy { .. } => EXIT_BUSY,
            CliError::Status { code, .. } => *code,
            _ => EXIT_BAD_INPUT,
        }
    }

    pub(crate) fn io(path: &Path, action: &'static str, source: io::Error) -> CliError {
        CliError::Io {
            path: path.to_owned(),
            action,
            source,
        }
    }

    pub(crate) fn lib(path: &Path, e: impl fmt::Display) -> CliError {
        CliError::Library {
            path: path.to_owned(),
            message: e.to_string(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) => f.write_str(m),
            CliError::Io {
                path,
                action,
                source,
            } => write!(f, "{}: cannot {action}: {source}", path.display()),
            CliError::Input { path, offset, rule } => {
                write!(f, "{}: at byte offset {offset}: {rule}", path.display())
            }
            CliError::Library { path, message } => write!(f, "{}: {message}", path.display()),
            CliError::File(e) => e.fmt(f),
            CliError::VerifyFailed(m) => write!(f, "verification failed: {m}"),
            CliError::Refused { path, message } => write!(f, "{}: {message}", path.display()),
            CliError::Busy { path, holder } => {
                write!(f, "{}: busy: {holder}; nothing was changed", path.display())
            }
            CliError::Status { error, .. } => error.fmt(f),
        }
    }
}

/// A key refused by the library, as a CLI error about `path`: a weak key
/// names the option that accepts it (exit 2).
pub(crate) fn key_error(path: &Path, what: &str, e: mdu_dmcrypt::Error) -> CliError {
    match e {
        e if e.is_weak_key() => CliError::Input {
            path: path.to_owned(),
            offset: 0,
            rule: format!("{what} is refused: {e} (--allow-weak-key accepts it)"),
        },
        e => CliError::lib(path, e),
    }
}

/// A lock not taken: busy (exit 5), or the I/O error of taking it.
impl From<mdu_inplace::lock::LockError> for CliError {
    fn from(e: mdu_inplace::lock::LockError) -> CliError {
        use mdu_inplace::lock::LockError;
        match e {
            LockError::Busy { path, holder } => CliError::Busy { path, holder },
            LockError::Io {
                path,
                action,
                source,
            } => CliError::Io {
                path,
                action,
                source,
            },
            e => CliError::Usage(e.to_string()),
        }
    }
}

/// An I/O error stays one (`mdu fscrypt cat` tells a closed pipe by it);
/// every other refusal of `mdu_io` keeps its message (exit 2).
impl From<mdu_io::Error> for CliError {
    fn from(e: mdu_io::Error) -> CliError {
        match e {
            mdu_io::Error::Io {
                path,
                action,
                source,
            } => CliError::Io {
                path,
                action,
                source,
            },
            e => CliError::File(e),
        }
    }
}

/// A plain journal file not created, opened or removed: its name taken
/// (a usage error naming --resume), its lock, or the I/O error.
impl From<mdu_inplace::journal_file::JournalError> for CliError {
    fn from(e: mdu_inplace::journal_file::JournalError) -> CliError {
        use mdu_inplace::journal_file::JournalError;
        match e {
            JournalError::Exists { path } => CliError::Usage(format!(
                "{}: the journal exists: it belongs to an interrupted run (go on with \
                 --resume) or to a running one",
                path.display()
            )),
            JournalError::Io {
                path,
                action,
                source,
            } => CliError::Io {
                path,
                action,
                source,
            },
            JournalError::Lock(e) => e.into(),
            e => CliError::Usage(e.to_string()),
        }
    }
}
