//! This process: its user, its worker threads and its random bytes.

use crate::args::MAX_THREADS;
use crate::error::CliError;

/// The effective user id of this process (0: root).
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// A rayon pool of `threads` threads (0 or absent = every core).
pub(crate) fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, CliError> {
    let n = match threads {
        Some(n) if n > 0 => n.min(MAX_THREADS),
        _ => std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start {n} threads: {e}")))
}

/// Random bytes from the operating system.
pub(crate) fn random_bytes(buf: &mut [u8]) -> Result<(), CliError> {
    getrandom::fill(buf).map_err(|e| CliError::Usage(format!("cannot get random bytes: {e}")))
}
