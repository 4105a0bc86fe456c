//! Files and devices as storage tools read and write them.
//!
//! * [`output`]: the one output layer. A regular file is replaced
//!   atomically (an unnamed temporary file, `O_TMPFILE`, named with
//!   `linkat` once complete and synced: nothing is left behind on a signal,
//!   the existing mode is kept, a file the user may not write is refused),
//!   symbolic links are followed, block devices are written in place after
//!   a size check, character devices, FIFOs and this process's descriptors
//!   as streams; an output that is an input under another name, or
//!   overlaps it on one device, is refused before anything is opened for
//!   writing. Files rewritten in place, files that must be new, directory
//!   trees written entry by entry and second handles with `O_DIRECT` come
//!   from it too.
//! * [`input`]: inputs opened for reading, sized from their type (a block
//!   device by seeking to its end; a FIFO or character device has no
//!   size), mapped window by window or read.
//! * [`pipeline`]: a threaded read -> transform -> write pipeline
//!   (`O_DIRECT` where the file system takes it, the page cache where it
//!   already holds the data), generic over the transform.
//!
//! Every error is an [`Error`] naming the file and what was wrong.
//!
//! ```
//! use mdu_io::output::Output;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("image");
//! std::fs::write(&path, b"old")?;
//! let mut out = Output::to(&path).open()?;
//! std::io::Write::write_all(out.file(), b"new")?;
//! // Until it is committed, the output is as it was.
//! assert_eq!(std::fs::read(&path)?, b"old");
//! out.commit()?;
//! assert_eq!(std::fs::read(&path)?, b"new");
//! // Nothing else was left in the directory.
//! assert_eq!(std::fs::read_dir(dir.path())?.count(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Linux only: the output layer relies on `O_TMPFILE`, `/proc/self/fd`
//! and `linkat`, and falls back to a named temporary file where the file
//! system lacks `O_TMPFILE`.

mod error;
pub mod flock;
pub mod input;
pub mod output;
pub mod pipeline;

pub use error::{DescriptorProblem, Error, Overlap, Stream};

/// Hears how many bytes of long work are done, as they are done (a
/// progress bar, a counter). Closures of `u64` implement it.
///
/// ```
/// use std::cell::Cell;
/// use mdu_io::Progress;
///
/// let done = Cell::new(0u64);
/// let counter = |n: u64| done.set(done.get() + n);
/// let p: &dyn Progress = &counter;
/// p.advance(4096);
/// p.advance(512);
/// assert_eq!(done.get(), 4608);
/// ```
pub trait Progress {
    /// `bytes` more bytes are done.
    ///
    /// ```
    /// use mdu_io::Progress;
    /// struct Quiet;
    /// impl Progress for Quiet {
    ///     fn advance(&self, _bytes: u64) {}
    /// }
    /// Quiet.advance(1);
    /// ```
    fn advance(&self, bytes: u64);
}

impl<F: Fn(u64)> Progress for F {
    fn advance(&self, bytes: u64) {
        self(bytes)
    }
}
