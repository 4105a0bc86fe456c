//! How the exhaustive tests of the mdu crates sample their cases, and how
//! to run them all.
//!
//! Some tests are exhaustive: every flipped bit of a verity image, every
//! byte at every position of a base64 text, every unit count of the
//! harness for 4 KiB units, hundreds of proptest cases, every sync point
//! of a crash sweep. Under a user-mode emulator (`MDU_EMULATED=1`, which
//! `.ci/qemu-aarch64.toml` sets) every instruction is interpreted, and
//! the tests that check architecture-independent logic, or that check the
//! same SIMD paths many times over, run a deterministic part of their
//! cases instead ([`emulated_stride`], [`proptest_cases`]); a few loops
//! over architecture-independent logic sample on the host too
//! ([`stride`]). Each one that samples prints a line saying so:
//!
//! ```text
//! every_backend_equals_generic: sampled: 250 of 1000 proptest cases (MDU_EMULATED=1); MDU_EXHAUSTIVE=1 runs all
//! ```
//!
//! `MDU_EXHAUSTIVE=1` runs every case everywhere, emulated or not. A
//! sampled test is still a test: what it samples is checked as strictly as
//! in the full run, and it fails the same way.

use std::env;
use std::println;

/// The variable that runs every case of every exhaustive test.
pub const EXHAUSTIVE_VAR: &str = "MDU_EXHAUSTIVE";

/// The variable that says the tests run under a user-mode emulator.
pub const EMULATED_VAR: &str = "MDU_EMULATED";

/// Under emulation, proptest blocks run one case in this many.
pub const EMULATED_CASE_DIVISOR: u32 = 4;

fn set(var: &str) -> bool {
    env::var(var).is_ok_and(|v| v == "1")
}

/// Whether `MDU_EXHAUSTIVE=1`: every case of every exhaustive test runs.
pub fn exhaustive() -> bool {
    set(EXHAUSTIVE_VAR)
}

/// Whether `MDU_EMULATED=1`: the tests run under a user-mode emulator.
pub fn emulated() -> bool {
    set(EMULATED_VAR)
}

/// Whether the exhaustive tests sample their cases here: under emulation,
/// unless `MDU_EXHAUSTIVE=1`.
pub fn sampling() -> bool {
    emulated() && !exhaustive()
}

/// Prints the line of a sampled test: `test: sampled: N of M what (why);
/// MDU_EXHAUSTIVE=1 runs all`.
pub fn note(test: &str, ran: usize, of: usize, what: &str, why: &str) {
    println!("{test}: sampled: {ran} of {of} {what} ({why}); {EXHAUSTIVE_VAR}=1 runs all");
}

/// Whether a test leaves out its one run of `what` here: under emulation
/// ([`sampling`]), with a line saying so and `why` (for a run of
/// architecture-independent code that takes minutes in an emulator).
///
/// ```
/// # use mdu_core::testing::sample;
/// if !sample::skipped_under_emulation("my_test", "harness runs", "portable code") {
///     // the run
/// }
/// ```
pub fn skipped_under_emulation(test: &str, what: &str, why: &str) -> bool {
    let skipped = sampling();
    if skipped {
        note(test, 0, 1, what, &std::format!("{EMULATED_VAR}=1: {why}"));
    }
    skipped
}

/// The number of cases of a proptest block whose full run is `full`
/// cases: `full`, or under emulation ([`sampling`]) one in
/// [`EMULATED_CASE_DIVISOR`] (at least one), with a line saying so.
///
/// ```
/// # use mdu_core::testing::sample;
/// // proptest! { #![proptest_config(ProptestConfig::with_cases(
/// //     sample::proptest_cases("my_property", 1000)))] ... }
/// let n = sample::proptest_cases("my_property", 1000);
/// assert!(n == 1000 || n == 250);
/// ```
pub fn proptest_cases(test: &str, full: u32) -> u32 {
    if !sampling() {
        return full;
    }
    let n = full.div_ceil(EMULATED_CASE_DIVISOR).max(1);
    note(
        test,
        n as usize,
        full as usize,
        "proptest cases",
        "MDU_EMULATED=1",
    );
    n
}

/// The stride over `total` cases of an exhaustive loop that samples
/// under emulation only: 1, or under emulation ([`sampling`]) `stride`,
/// with a line saying how many of the `total` cases (`what`) run.
///
/// Take a stride coprime to the periods the loop crosses (block and
/// vector sizes: an odd prime) so that the cases taken fall at every
/// offset within them.
pub fn emulated_stride(test: &str, total: usize, what: &str, stride: usize) -> usize {
    if !sampling() {
        return 1;
    }
    self::stride(test, total, what, stride)
}

/// The stride over `total` cases of an exhaustive loop that samples
/// wherever it runs: `stride`, or 1 with `MDU_EXHAUSTIVE=1`, with a line
/// saying how many of the `total` cases (`what`) run. For loops over
/// architecture-independent logic whose every case is worth a run only
/// when that logic changes (every flipped bit of an image).
pub fn stride(test: &str, total: usize, what: &str, stride: usize) -> usize {
    if exhaustive() || stride <= 1 {
        return 1;
    }
    let why = if emulated() {
        std::format!("MDU_EMULATED=1: every {}", ordinal(stride))
    } else {
        std::format!("every {}", ordinal(stride))
    };
    note(test, total.div_ceil(stride), total, what, &why);
    stride
}

/// `1st`, `2nd`, `3rd`, `4th`, ... `11th`, ... `21st`.
pub fn ordinal(n: usize) -> std::string::String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    std::format!("{n}{suffix}")
}
