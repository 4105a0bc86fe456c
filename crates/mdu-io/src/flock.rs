//! `flock(2)` without waiting: the one `flock` of the workspace (the
//! temporary files of atomic outputs here, the in-place locks of
//! `mdu-inplace`).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// A `flock` mode for [`try_flock`].
///
/// ```
/// assert_ne!(mdu_io::flock::Flock::Shared, mdu_io::flock::Flock::Exclusive);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flock {
    /// `LOCK_SH`.
    Shared,
    /// `LOCK_EX`.
    Exclusive,
}

/// `flock(how | LOCK_NB)` on `f`, never waiting. A lock that another open
/// file description holds and that excludes this one is
/// [`io::ErrorKind::WouldBlock`]; the lock lasts as long as `f`'s open
/// file description.
///
/// ```
/// use mdu_io::flock::{Flock, try_flock};
/// let f = tempfile::tempfile()?;
/// try_flock(&f, Flock::Exclusive)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn try_flock(f: &File, how: Flock) -> io::Result<()> {
    let how = match how {
        Flock::Shared => libc::LOCK_SH,
        Flock::Exclusive => libc::LOCK_EX,
    };
    // SAFETY: flock on a descriptor `f` keeps open for the call; it
    // changes only the lock and touches no memory.
    if unsafe { libc::flock(f.as_raw_fd(), how | libc::LOCK_NB) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
