//! Inputs: the files and devices of `mdu_io::input`, and the glue to the
//! hashing library's `Source` (read with a progress bar on a terminal).

use std::path::Path;

use indicatif::ProgressBar;
use mdu_verity::{Error as VerityError, Source};

use crate::error::CliError;
use crate::progress::progress;
pub(crate) use mdu_io::input::*;

/// A library error about the input `path` as a CLI error (exit 2): an input
/// that ended before the size it had when it was opened names the offset
/// where it ended, as `fsverity digest` reports an unexpected end of file.
pub(crate) fn source_error(path: &Path, e: VerityError) -> CliError {
    match e {
        VerityError::UnexpectedEof { expected, got } => CliError::Input {
            path: path.to_owned(),
            offset: got,
            rule: format!(
                "unexpected end of file: it was {expected} bytes long when it was opened \
                 (was it truncated while it was read?)"
            ),
        },
        e => CliError::lib(path, e),
    }
}

/// What [`open_source`] does with an input that has no size (a character
/// device, a FIFO or pipe, a socket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unsized {
    /// Refuse it (exit 2), as `veritysetup format` does: hashing has no
    /// end to stop at.
    Refuse,
    /// Read it as far as the work needs (dm-verity verification, bounded
    /// by the tree's block count; a character device that seeks, such as
    /// `/dev/null`, counts as empty).
    Bounded,
}

/// `path` as a [`Source`] for the library, with its length and a progress
/// bar for `what` when it is read (hidden when it is mapped; finish it when
/// done): the windows of a mapped regular file, with their total length,
/// or the file or device read through the library's read ring. The
/// source holds exactly the length found when it was opened: an input
/// that ends earlier is an error ([`source_error`]), never a digest of the
/// shorter data. An input without a size is refused or read as `no_size`
/// says (its length is then 0).
pub(crate) fn open_source(
    path: &Path,
    mmap: bool,
    what: &str,
    no_size: Unsized,
) -> Result<(Source<'static>, u64, ProgressBar), CliError> {
    if no_size == Unsized::Refuse {
        refuse_unsized(path)?;
    }
    let f = open_read(path)?;
    let (input, len) = match sized_len(path, &f)? {
        Some(len) => (open_sized(f, len, mmap), len),
        None if no_size == Unsized::Bounded => {
            return Ok((Source::seekable(f), 0, ProgressBar::hidden()));
        }
        None => return Err(not_sized(path, &f).into()),
    };
    Ok(match input {
        Input::Mapped(windows) => (
            Source::chunks(windows).with_len(len),
            len,
            ProgressBar::hidden(),
        ),
        Input::File(file) => {
            let pb = progress(len, what);
            (Source::seekable(pb.wrap_read(file)).with_len(len), len, pb)
        }
    })
}
