//! The profiles of real CPUs, for testing each family's backend selection
//! on CPUs other than the one running the tests, and the one check every
//! family runs over them ([`check_selection`]).
//!
//! A profile is what a selection reads of a CPU (its features as the OS
//! reports them usable, and its vendor), written as the `#[target_feature]`
//! names of the extensions mdu's kernels use.
//!
//! ```
//! use mdu_testkit::cpus;
//!
//! assert!(cpus::ZEN_3.profile.features.vaes);
//! assert!(!cpus::ZEN_3.profile.features.avx512f);
//! assert_eq!(cpus::ALL.len(), 11);
//! ```

use std::fmt::Debug;

use mdu_platform::backend::BackendSet;
use mdu_platform::cpu::{Arch, Features, Profile, Vendor};

/// A named CPU profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cpu {
    /// The CPU (and the ones alike for mdu's kernels), for messages.
    pub name: &'static str,
    /// Its architecture.
    pub arch: Arch,
    /// Its features and vendor.
    pub profile: Profile,
}

/// A profile from a `#[target_feature]` list for `arch`.
const fn cpu(name: &'static str, arch: Arch, list: &str, vendor: Vendor) -> Cpu {
    Cpu {
        name,
        arch,
        profile: Profile {
            features: Features::from_target_features(arch, list),
            vendor,
        },
    }
}

/// Intel Westmere (2010): AES-NI and PCLMULQDQ, no AVX.
pub const WESTMERE: Cpu = cpu(
    "Intel Westmere",
    Arch::X86_64,
    "aes,pclmulqdq,sse2,ssse3,sse4.1",
    Vendor::Intel,
);

/// Intel Haswell (2013): AVX2 and BMI2.
pub const HASWELL: Cpu = cpu(
    "Intel Haswell",
    Arch::X86_64,
    "aes,pclmulqdq,sse2,ssse3,sse4.1,avx2,bmi2",
    Vendor::Intel,
);

/// Intel Skylake-SP, Cascade Lake (2017): AVX-512 F/BW/VL, no VAES, no
/// SHA-NI.
pub const SKYLAKE_X: Cpu = cpu(
    "Intel Skylake-SP, Cascade Lake",
    Arch::X86_64,
    "aes,pclmulqdq,sse2,ssse3,sse4.1,avx2,bmi2,avx512f,avx512bw,avx512vl",
    Vendor::Intel,
);

/// Intel Ice Lake, Sapphire Rapids (2019-): AVX-512 with VBMI, VAES,
/// VPCLMULQDQ, GFNI and SHA-NI.
pub const ICE_LAKE: Cpu = cpu(
    "Intel Ice Lake, Sapphire Rapids",
    Arch::X86_64,
    "aes,pclmulqdq,sse2,ssse3,sse4.1,sha,avx2,bmi2,avx512f,avx512bw,avx512vl,avx512vbmi,\
     vaes,vpclmulqdq,gfni",
    Vendor::Intel,
);

/// Intel Alder Lake (2021): VAES, VPCLMULQDQ, GFNI and SHA-NI on ymm, no
/// AVX-512.
pub const ALDER_LAKE: Cpu = cpu(
    "Intel Alder Lake",
    Arch::X86_64,
    "aes,pclmulqdq,sse2,ssse3,sse4.1,sha,avx2,bmi2,vaes,vpclmulqdq,gfni",
    Vendor::Intel,
);

/// Intel Goldmont (2016): SHA-NI without AVX.
pub const GOLDMONT: Cpu = cpu(
    "Intel Goldmont",
    Arch::X86_64,
    "aes,pclmulqdq,sse2,ssse3,sse4.1,sha",
    Vendor::Intel,
);

/// AMD Zen 2 (2019): AVX2 and SHA-NI, no VAES.
pub const ZEN_2: Cpu = cpu(
    "AMD Zen 2",
    Arch::X86_64,
    "aes,pclmulqdq,sse2,ssse3,sse4.1,sha,avx2,bmi2",
    Vendor::Amd,
);

/// AMD Zen 3 (2020): VAES and VPCLMULQDQ on ymm, no AVX-512.
pub const ZEN_3: Cpu = cpu(
    "AMD Zen 3",
    Arch::X86_64,
    "aes,pclmulqdq,sse2,ssse3,sse4.1,sha,avx2,bmi2,vaes,vpclmulqdq",
    Vendor::Amd,
);

/// AMD Zen 4, Zen 5 (2022-): AVX-512 with VBMI, VAES, VPCLMULQDQ, GFNI
/// and SHA-NI.
pub const ZEN_4: Cpu = cpu(
    "AMD Zen 4, Zen 5",
    Arch::X86_64,
    "aes,pclmulqdq,sse2,ssse3,sse4.1,sha,avx2,bmi2,avx512f,avx512bw,avx512vl,avx512vbmi,\
     vaes,vpclmulqdq,gfni",
    Vendor::Amd,
);

/// Arm Neoverse N1 (AWS Graviton2, Ampere Altra): the Crypto Extensions.
pub const NEOVERSE_N1: Cpu = cpu(
    "Arm Neoverse N1",
    Arch::Aarch64,
    "neon,aes,sha2",
    Vendor::Other,
);

/// Arm Cortex-A72 as in the Raspberry Pi 4: NEON without the Crypto
/// Extensions.
pub const CORTEX_A72: Cpu = cpu(
    "Arm Cortex-A72 (Raspberry Pi 4)",
    Arch::Aarch64,
    "neon",
    Vendor::Other,
);

/// Every profile above.
pub const ALL: [Cpu; 11] = [
    WESTMERE,
    HASWELL,
    SKYLAKE_X,
    ICE_LAKE,
    ALDER_LAKE,
    GOLDMONT,
    ZEN_2,
    ZEN_3,
    ZEN_4,
    NEOVERSE_N1,
    CORTEX_A72,
];

/// Checks a family's selection on CPU profiles: for each `(cpu, want)`,
/// what the family makes available there is `want` (best first, the
/// portable backend last) less the backends this build does not compile
/// (the SIMD ones under Miri), and what it detects there is the first of
/// that list. On x86_64 and aarch64 only the profiles of the build's own
/// architecture are checked (a feature name such as `aes` is the field of
/// both, so an arm64 profile would select an x86_64 kernel there);
/// elsewhere every profile is, and gets the portable backend. Every
/// profile of [`ALL`] must have a case, so a new profile is checked by
/// every family.
///
/// # Panics
///
/// On the first profile where the selection differs, naming it; if a
/// profile of [`ALL`] has no case.
///
/// ```
/// use mdu_testkit::cpus::{self, check_selection};
/// use mdu_base64::Backend::{Avx2, Avx512Vbmi, Generic, Neon};
///
/// check_selection(&[
///     (cpus::WESTMERE, &[Generic]),
///     (cpus::HASWELL, &[Avx2, Generic]),
///     (cpus::SKYLAKE_X, &[Avx2, Generic]),
///     (cpus::ICE_LAKE, &[Avx512Vbmi, Avx2, Generic]),
///     (cpus::ALDER_LAKE, &[Avx2, Generic]),
///     (cpus::GOLDMONT, &[Generic]),
///     (cpus::ZEN_2, &[Avx2, Generic]),
///     (cpus::ZEN_3, &[Avx2, Generic]),
///     (cpus::ZEN_4, &[Avx512Vbmi, Avx2, Generic]),
///     (cpus::NEOVERSE_N1, &[Neon, Generic]),
///     (cpus::CORTEX_A72, &[Neon, Generic]),
/// ]);
/// ```
pub fn check_selection<B: BackendSet + Debug>(cases: &[(Cpu, &[B])]) {
    for cpu in ALL {
        assert!(
            cases.iter().any(|(c, _)| *c == cpu),
            "no case for the profile {}",
            cpu.name
        );
    }
    let other_arch = |arch| match arch {
        Arch::X86_64 => cfg!(target_arch = "aarch64"),
        Arch::Aarch64 => cfg!(target_arch = "x86_64"),
    };
    for (cpu, want) in cases.iter().filter(|(cpu, _)| !other_arch(cpu.arch)) {
        let compiled: Vec<B> = want.iter().copied().filter(|b| b.compiled()).collect();
        assert_eq!(B::available_on(cpu.profile), compiled, "on {}", cpu.name);
        assert_eq!(B::detect_on(cpu.profile), compiled[0], "on {}", cpu.name);
    }
}
