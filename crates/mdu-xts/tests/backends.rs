//! Which x86-64 backends this CPU runs and which it does not (and why),
//! and `MDU_REQUIRE_X86_BACKENDS`, through the workspace's test support
//! (mdu-testkit). mdu-testkit is not published, so this file stays out of
//! the package (`exclude` in Cargo.toml); the other tests, which ship, print
//! only the backends they ran.

use mdu_xts::Backend;

/// Prints which backends this CPU runs and which x86-64 ones it does not
/// (and why); fails when `MDU_REQUIRE_X86_BACKENDS` names an XTS backend that
/// is not among them, or names no backend at all.
#[test]
fn the_x86_backends_named_in_mdu_require_x86_backends_run_here() {
    let all = Backend::available();
    assert_eq!(all.last(), Some(&Backend::Generic));
    assert_eq!(all.first(), Some(&Backend::detect()));
    let every = [
        Backend::Vaes512,
        Backend::Vaes256,
        Backend::AesNi,
        Backend::ArmCe,
        Backend::Generic,
    ];
    let available: Vec<&str> = all.iter().map(|b| b.name()).collect();
    mdu_testkit::backends::require_x86_backends("mdu-xts", &every.map(Backend::name), &available);
}

/// The selection on the profiles of real CPUs: the widest VAES kernel the
/// CPU has (AVX-512 with VAES and VPCLMULQDQ for `Vaes512`), AES-NI with
/// PCLMULQDQ otherwise, the Crypto Extensions on arm64.
#[test]
fn each_cpu_profile_gets_its_backends_best_first() {
    use mdu_testkit::cpus::{self, check_selection};
    check_selection(&[
        (cpus::WESTMERE, &[Backend::AesNi, Backend::Generic]),
        (cpus::HASWELL, &[Backend::AesNi, Backend::Generic]),
        (cpus::SKYLAKE_X, &[Backend::AesNi, Backend::Generic]),
        (
            cpus::ICE_LAKE,
            &[
                Backend::Vaes512,
                Backend::Vaes256,
                Backend::AesNi,
                Backend::Generic,
            ],
        ),
        (
            cpus::ALDER_LAKE,
            &[Backend::Vaes256, Backend::AesNi, Backend::Generic],
        ),
        (cpus::GOLDMONT, &[Backend::AesNi, Backend::Generic]),
        (cpus::ZEN_2, &[Backend::AesNi, Backend::Generic]),
        (
            cpus::ZEN_3,
            &[Backend::Vaes256, Backend::AesNi, Backend::Generic],
        ),
        (
            cpus::ZEN_4,
            &[
                Backend::Vaes512,
                Backend::Vaes256,
                Backend::AesNi,
                Backend::Generic,
            ],
        ),
        (cpus::NEOVERSE_N1, &[Backend::ArmCe, Backend::Generic]),
        (cpus::CORTEX_A72, &[Backend::Generic]),
    ]);
}
