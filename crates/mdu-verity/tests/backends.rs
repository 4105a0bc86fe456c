//! Which x86-64 SHA-256 and FEC backends this CPU runs and which it does
//! not (and why), and `MDU_REQUIRE_X86_BACKENDS`, through the workspace's
//! test support (mdu-testkit). mdu-testkit is not published, so this file
//! stays out of the package (`exclude` in Cargo.toml).

use mdu_testkit::backends;
use mdu_verity::dmverity;
use mdu_verity::sha256::Backend;

/// The names of the SHA-256 backends this CPU runs, best first.
fn available_names() -> Vec<&'static str> {
    Backend::available().iter().map(|b| b.name()).collect()
}

/// Prints which SHA-256 and FEC backends run here and which x86-64 ones do
/// not (and why); fails when `MDU_REQUIRE_X86_BACKENDS` names one of them
/// (`shani`, `gfni`, ...) and this CPU does not run it, or names no backend
/// at all.
#[test]
fn the_x86_backends_named_in_mdu_require_x86_backends_run_here() {
    backends::require_x86_backends(
        backends::SHA256,
        &Backend::ALL.map(Backend::name),
        &available_names(),
    );
    use dmverity::fec::Backend as Fec;
    let fec: Vec<&str> = Fec::available().iter().map(|b| b.name()).collect();
    backends::require_x86_backends(backends::FEC, &Fec::ALL.map(Fec::name), &fec);
}
