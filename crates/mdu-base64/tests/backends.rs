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

/// The selection on the profiles of real CPUs: AVX-512 VBMI (with BMI2)
/// first, then AVX2; NEON on every arm64 CPU.
#[test]
fn each_cpu_profile_gets_its_backends_best_first() {
    use mdu_base64::Backend::{Avx2, Avx512Vbmi, Generic, Neon};
    use mdu_testkit::cpus::{self, check_selection};
    check_selection(&[
        (cpus::WESTMERE, &[Generic]),
        (cpus::HASWELL, &[Avx2, Generic]),
        (cpus::SKYLAKE_X, &[Avx2, Generic]),
        (cpus::ICE_LAKE, &[Avx512Vbmi, Avx2, Generic]),
        (cpus::ALDER_LAKE, &[Avx2, Generic]),
        (cpus::GOLDMONT, &[Generic]),
        (cpus::ZEN_2, &[Avx2, Generic]),
        (cpus::ZEN_3, &[Avx2, Generic]),
        (cpus::ZEN_4, &[Avx512Vbmi, Avx2, Generic]),
        (cpus::NEOVERSE_N1, &[Neon, Generic]),
        (cpus::CORTEX_A72, &[Neon, Generic]),
    ]);
}
