//! Which x86-64 backends this CPU runs and which it does not (and why),
//! and `MDU_REQUIRE_X86_BACKENDS`, through the workspace's test support
//! (mdu-testkit). mdu-testkit is not published, so this file stays out of
//! the package (`exclude` in Cargo.toml); the other tests, which ship, print
//! only the backends they ran.

/// Prints which backends run here and which x86-64 ones do not (and why);
/// fails when `MDU_REQUIRE_X86_BACKENDS` names `avx2` or `avx512vbmi` and
/// this CPU does not run it, or names no backend at all.
#[test]
fn the_x86_backends_named_in_mdu_require_x86_backends_run_here() {
    use mdu_base64::Backend;
    let available: Vec<&str> = Backend::available().iter().map(|b| b.name()).collect();
    mdu_testkit::backends::require_x86_backends(
        mdu_testkit::backends::BASE64,
        &Backend::ALL.map(Backend::name),
        &available,
    );
}
