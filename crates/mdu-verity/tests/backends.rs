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

/// SHA-256 on the profiles of real CPUs: SHA-NI before the sixteen
/// AVX-512 lanes on AMD's cores, after them on Intel's.
#[test]
fn each_cpu_profile_gets_its_sha256_backends_best_first() {
    use Backend::{ArmCe, Avx512, Generic, ShaNi};
    use mdu_testkit::cpus::{self, check_selection};
    check_selection(&[
        (cpus::WESTMERE, &[Generic]),
        (cpus::HASWELL, &[Generic]),
        (cpus::SKYLAKE_X, &[Avx512, Generic]),
        (cpus::ICE_LAKE, &[Avx512, ShaNi, Generic]),
        (cpus::ALDER_LAKE, &[ShaNi, Generic]),
        (cpus::GOLDMONT, &[ShaNi, Generic]),
        (cpus::ZEN_2, &[ShaNi, Generic]),
        (cpus::ZEN_3, &[ShaNi, Generic]),
        (cpus::ZEN_4, &[ShaNi, Avx512, Generic]),
        (cpus::NEOVERSE_N1, &[ArmCe, Generic]),
        (cpus::CORTEX_A72, &[Generic]),
    ]);
}

/// FEC on the profiles of real CPUs: GFNI on zmm, then on ymm, then the
/// AVX2 nibble lookups; NEON on every arm64 CPU.
#[test]
fn each_cpu_profile_gets_its_fec_backends_best_first() {
    use dmverity::fec::Backend::{Avx2, Generic, Gfni, Gfni512, Neon};
    use mdu_testkit::cpus::{self, check_selection};
    check_selection(&[
        (cpus::WESTMERE, &[Generic]),
        (cpus::HASWELL, &[Avx2, Generic]),
        (cpus::SKYLAKE_X, &[Avx2, Generic]),
        (cpus::ICE_LAKE, &[Gfni512, Gfni, Avx2, Generic]),
        (cpus::ALDER_LAKE, &[Gfni, Avx2, Generic]),
        (cpus::GOLDMONT, &[Generic]),
        (cpus::ZEN_2, &[Avx2, Generic]),
        (cpus::ZEN_3, &[Avx2, Generic]),
        (cpus::ZEN_4, &[Gfni512, Gfni, Avx2, Generic]),
        (cpus::NEOVERSE_N1, &[Neon, Generic]),
        (cpus::CORTEX_A72, &[Neon, Generic]),
    ]);
}
