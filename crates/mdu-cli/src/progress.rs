//! The progress bar of long work on a terminal.

use std::io::{self, IsTerminal};

use indicatif::{ProgressBar, ProgressStyle};

/// Inputs at least this large get a progress bar (on a terminal).
const PROGRESS_MIN_BYTES: u64 = 64 << 20;

/// A progress bar of `total` bytes on stderr if stderr is a terminal and the
/// work is long, a hidden one otherwise.
pub(crate) fn progress(total: u64, what: &str) -> ProgressBar {
    if total < PROGRESS_MIN_BYTES || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_owned());
    pb
}
