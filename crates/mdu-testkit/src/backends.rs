//! Which x86-64 SIMD backends a test run exercised, and the
//! `MDU_REQUIRE_X86_BACKENDS` switch that turns a missing one into a failure.
//!
//! Every crate with backends tests each backend its CPU runs against the
//! portable one. A backend the CPU lacks is simply not run, so a green run on
//! an AVX2-only machine says nothing about the AVX-512 code. This module
//! makes that visible (each backend test prints what ran and what did not,
//! and why) and, when asked, an error.
//!
//! `MDU_REQUIRE_X86_BACKENDS` is one comma-separated list of backend names
//! for the whole workspace, for example
//! `MDU_REQUIRE_X86_BACKENDS=vaes512,vaes256,aesni,shani,avx2,avx512vbmi`.
//! Backends come in families, one per `Backend` enum: a crate
//! (`mdu-xts`, `mdu-base64`), or a crate and module where a crate has
//! several (`mdu-verity::sha256`, `mdu-verity::fec`). Each family's tests
//! check the names that belong to that family (see [`x86_backends`]) and
//! fail when one of them is not available on this CPU; a name that belongs
//! to no family fails in every one, so a typo cannot pass unnoticed. A name
//! two families share (`vaes512`, `vaes256` and `aesni` are backends of
//! mdu-xts and of mdu-cbc; `avx2` of mdu-base64 and of mdu-verity's FEC) is
//! required of both. Unset or empty, nothing is required.
//!
//! ```
//! use mdu_testkit::backends::{self, RequireError};
//!
//! // A CPU where mdu-xts runs only AES-NI and the portable backend.
//! let available = ["aesni", "generic"];
//! assert_eq!(backends::check_required("aesni,shani", "mdu-xts", &available), Ok(vec!["aesni"]));
//! assert!(matches!(
//!     backends::check_required("vaes512", "mdu-xts", &available),
//!     Err(RequireError::Missing { name: "vaes512", .. })
//! ));
//! assert!(matches!(
//!     backends::check_required("vaes-512", "mdu-base64", &available),
//!     Err(RequireError::UnknownName { .. })
//! ));
//! ```

use std::fmt;
use std::sync::LazyLock;

use mdu_aes::__private::Mode;
use mdu_cbc::CbcMode;
use mdu_platform::cpu::Features;
use mdu_xts::XtsMode;

/// The environment variable that lists the x86-64 backends a test run must
/// exercise.
pub const REQUIRE_X86_VAR: &str = "MDU_REQUIRE_X86_BACKENDS";

/// The family of mdu-verity's SHA-256 backends (`mdu_verity::sha256::Backend`).
pub const SHA256: &str = "mdu-verity::sha256";
/// The family of mdu-verity's FEC kernels (`mdu_verity::dmverity::fec::Backend`).
pub const FEC: &str = "mdu-verity::fec";
/// The family of mdu-base64's backends (`mdu_base64::Backend`).
pub const BASE64: &str = "mdu-base64";

/// An x86-64 SIMD backend of one of the workspace's crates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct X86Backend {
    /// The name the crate's `Backend::name()` (and `Display`) gives it.
    pub name: &'static str,
    /// The family the backend belongs to: its crate (`mdu-xts`), or its
    /// crate and module where the crate has several `Backend` enums
    /// ([`SHA256`], [`FEC`]).
    pub family: &'static str,
    /// The CPU features (as `is_x86_feature_detected!` spells them) that the
    /// backend declares it needs, and that its crate requires before it
    /// selects the backend.
    pub cpu_features: Vec<&'static str>,
}

/// Every x86-64 SIMD backend of the workspace, by family, best first
/// within a family. The portable backends (`generic`) always run and are
/// not listed, nor are the arm64 ones. A name may belong to several
/// families (`vaes512` is a backend of mdu-xts and of mdu-cbc): naming it
/// requires it of each of them.
///
/// Generated from the crates' own declarations, nothing written here:
/// every name is the crate's `Backend::name()` and the CPU features are the
/// ones each backend declares and its selection reads (`Backend::needs()`
/// of mdu-verity's SHA-256 and FEC backends, of mdu-base64 and of the AES
/// modes of mdu-xts and mdu-cbc, `mdu_aes::Backend::needs`). A
/// backend is an x86-64 one when it needs some feature and no arm64 one.
pub fn x86_backends() -> &'static [X86Backend] {
    static REGISTRY: LazyLock<Vec<X86Backend>> = LazyLock::new(|| registry().0);
    &REGISTRY
}

/// The x86-64 backends, and the other ones (arm64 and portable) of the same
/// families.
fn registry() -> (Vec<X86Backend>, Vec<X86Backend>) {
    use mdu_base64::Backend as Base64;
    use mdu_verity::dmverity::fec::Backend as Fec;
    use mdu_verity::sha256::Backend as Sha256;
    let declared = [
        aes_mode::<XtsMode>(),
        Sha256::ALL.map(|b| (SHA256, b.name(), b.needs())).to_vec(),
        Fec::ALL.map(|b| (FEC, b.name(), b.needs())).to_vec(),
        Base64::ALL.map(|b| (BASE64, b.name(), b.needs())).to_vec(),
        aes_mode::<CbcMode>(),
    ];
    let (mut x86, mut others) = (Vec::new(), Vec::new());
    for (family, name, needs) in declared.into_iter().flatten() {
        let entry = X86Backend {
            name,
            family,
            cpu_features: needs.names().collect(),
        };
        if is_x86(needs) {
            x86.push(entry);
        } else {
            others.push(X86Backend {
                cpu_features: Vec::new(),
                ..entry
            });
        }
    }
    (x86, others)
}

/// Whether a backend that needs `needs` is an x86-64 SIMD one: it needs
/// some feature, and none of arm64's (AES is on both).
fn is_x86(needs: Features) -> bool {
    let arm64 = Features {
        pmull: true,
        neon: true,
        sha2: true,
        ..Features::NONE
    };
    needs != Features::NONE && needs.difference(arm64) == needs
}

/// Every backend of the AES mode `M` with the features the mode declares
/// for it (`Backend::needs`, read from the mode's `Needs` types).
fn aes_mode<M: Mode>() -> Vec<(&'static str, &'static str, Features)> {
    use mdu_aes::Backend;
    [
        Backend::<M>::Vaes512,
        Backend::Vaes256,
        Backend::AesNi,
        Backend::ArmCe,
        Backend::Generic,
    ]
    .into_iter()
    .map(|b| (M::CRATE, b.name(), b.needs()))
    .collect()
}

/// The backends of the same families that are no x86-64 SIMD backend (the
/// arm64 and the portable ones), with no CPU features listed: what
/// [`require_x86_backends`] needs to tell a backend the registry lacks from
/// one it need not list.
fn other_backends() -> &'static [X86Backend] {
    static OTHERS: LazyLock<Vec<X86Backend>> = LazyLock::new(|| registry().1);
    &OTHERS
}

/// Why `MDU_REQUIRE_X86_BACKENDS` is not satisfied.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequireError {
    /// The list names something that is no x86-64 backend of any crate.
    UnknownName {
        /// The name as written in the list.
        name: String,
    },
    /// A backend of the family under test is required but this CPU (or
    /// this build) does not run it.
    Missing {
        /// The backend's name.
        name: &'static str,
        /// Its family (see [`X86Backend::family`]).
        family: &'static str,
        /// Why it is not available, as [`unavailable_reason`] says.
        reason: String,
    },
}

impl fmt::Display for RequireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequireError::UnknownName { name } => write!(
                f,
                "{REQUIRE_X86_VAR} names `{name}`, which is no x86-64 backend of mdu; \
                 expected a comma-separated list of {}",
                known_names()
            ),
            RequireError::Missing {
                name,
                family,
                reason,
            } => write!(
                f,
                "{REQUIRE_X86_VAR} requires the {family} backend `{name}`, but it did not \
                 run here: {reason}"
            ),
        }
    }
}

impl std::error::Error for RequireError {}

/// The known names with their families, for messages: "vaes512, vaes256,
/// aesni (mdu-xts), shani, avx512 (mdu-verity::sha256), ...".
fn known_names() -> String {
    let mut out = String::new();
    for (i, b) in x86_backends().iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(b.name);
        let last_of_family = x86_backends()
            .get(i + 1)
            .is_none_or(|next| next.family != b.family);
        if last_of_family {
            out.push_str(&format!(" ({})", b.family));
        }
    }
    out
}

/// The backends a `MDU_REQUIRE_X86_BACKENDS` value names, in its order
/// (every family's backend of that name). Names are separated by commas;
/// blanks around them and empty entries are ignored; letter case does not
/// matter.
///
/// # Errors
///
/// [`RequireError::UnknownName`] for the first name that is no backend in
/// [`x86_backends`].
///
/// ```
/// use mdu_testkit::backends::parse_required;
///
/// let named: Vec<_> = parse_required(" shani, AVX2,,").unwrap().iter().map(|b| b.family).collect();
/// // `avx2` is a backend of mdu-verity's FEC and of mdu-base64.
/// assert_eq!(named, ["mdu-verity::sha256", "mdu-verity::fec", "mdu-base64"]);
/// assert!(parse_required("generic").is_err());
/// ```
pub fn parse_required(list: &str) -> Result<Vec<&'static X86Backend>, RequireError> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let before = out.len();
        out.extend(
            x86_backends()
                .iter()
                .filter(|b| b.name.eq_ignore_ascii_case(name)),
        );
        if out.len() == before {
            return Err(RequireError::UnknownName {
                name: name.to_owned(),
            });
        }
    }
    Ok(out)
}

/// Checks a `MDU_REQUIRE_X86_BACKENDS` value for one family: every name
/// must be known, and every name of `family` must be among `available` (the
/// names of the family's `Backend::available()`). Returns the names of
/// `family` that were required, in the list's order.
///
/// # Errors
///
/// The first unknown name, else the first required backend of `family`
/// that is not in `available`.
pub fn check_required(
    list: &str,
    family: &str,
    available: &[&str],
) -> Result<Vec<&'static str>, RequireError> {
    let mut required = Vec::new();
    for b in parse_required(list)? {
        if b.family != family {
            continue;
        }
        if !available.contains(&b.name) {
            return Err(RequireError::Missing {
                name: b.name,
                family: b.family,
                reason: unavailable_reason(b),
            });
        }
        required.push(b.name);
    }
    Ok(required)
}

/// Why this build on this CPU does not run `backend`: the CPU features it
/// lacks, or that this is no x86-64 build, or that the SIMD backends do not
/// run under Miri (no CPU feature is detected there, and the AES modes
/// compile theirs out).
pub fn unavailable_reason(backend: &X86Backend) -> String {
    if !cfg!(target_arch = "x86_64") {
        return format!("this is an {} build, not x86-64", std::env::consts::ARCH);
    }
    if cfg!(miri) {
        return "the SIMD backends do not run under Miri".to_owned();
    }
    let lacking: Vec<&str> = backend
        .cpu_features
        .iter()
        .copied()
        .filter(|f| !x86_feature_detected(f).unwrap_or(false))
        .collect();
    if lacking.is_empty() {
        format!(
            "the CPU has every feature it needs ({}), yet it was not selected",
            backend.cpu_features.join(", ")
        )
    } else {
        format!("CPU lacks {}", lacking.join(", "))
    }
}

/// Whether the running CPU (and OS) supports the x86 feature `name`, asked
/// of the standard library (not of `mdu_platform::cpu`, whose answers it
/// checks); `None` for a name this table lacks, `Some(false)` off x86-64.
#[cfg(x86_simd)]
fn x86_feature_detected(name: &str) -> Option<bool> {
    use std::arch::is_x86_feature_detected as has;
    Some(match name {
        "aes" => has!("aes"),
        "avx2" => has!("avx2"),
        "avx512f" => has!("avx512f"),
        "avx512bw" => has!("avx512bw"),
        "avx512vl" => has!("avx512vl"),
        "avx512vbmi" => has!("avx512vbmi"),
        "bmi2" => has!("bmi2"),
        "vaes" => has!("vaes"),
        "vpclmulqdq" => has!("vpclmulqdq"),
        "pclmulqdq" => has!("pclmulqdq"),
        "sha" => has!("sha"),
        "sse2" => has!("sse2"),
        "ssse3" => has!("ssse3"),
        "sse4.1" => has!("sse4.1"),
        "gfni" => has!("gfni"),
        _ => return None,
    })
}

#[cfg(not(x86_simd))]
fn x86_feature_detected(_name: &str) -> Option<bool> {
    Some(false)
}

/// The x86-64 backends of `family` that are not in `available`, with
/// the reason, grouped by reason: `"none"` when every one ran, else for
/// example `"vaes512 (CPU lacks avx512f, avx512bw, avx512vl)"`.
///
/// ```
/// use mdu_testkit::backends::not_run;
///
/// let every = ["vaes512", "vaes256", "aesni", "generic"];
/// assert_eq!(not_run("mdu-xts", &every), "none");
/// assert!(not_run("mdu-xts", &["generic"]).starts_with("vaes512"));
/// ```
pub fn not_run(family: &str, available: &[&str]) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for b in x86_backends()
        .iter()
        .filter(|b| b.family == family && !available.contains(&b.name))
    {
        let reason = unavailable_reason(b);
        match groups.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, names)) => names.push(b.name),
            None => groups.push((reason, vec![b.name])),
        }
    }
    if groups.is_empty() {
        return "none".to_owned();
    }
    groups
        .iter()
        .map(|(reason, names)| format!("{} ({reason})", names.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The test every family of x86-64 backends runs (`family` as in
/// [`X86Backend::family`]): prints which of its backends run on this CPU
/// and which do not (and why), checks that [`x86_backends`] agrees with
/// the crate, and enforces `MDU_REQUIRE_X86_BACKENDS`.
///
/// `every_backend` is the name of every variant of the family's `Backend`;
/// `available` the names of `Backend::available()`, best first.
///
/// # Panics
///
/// With a message that says what to do, when the variable names an unknown
/// backend or a backend of this family that is not available; when a listed
/// backend of `family` is not among `every_backend`, or one of
/// `every_backend` is not in the registry (the family is not read into it);
/// or when a backend's availability disagrees with the CPU features it
/// declares, as the standard library detects them.
pub fn require_x86_backends(family: &str, every_backend: &[&str], available: &[&str]) {
    println!(
        "{family}: backends this CPU runs: {}; x86-64 backends it does not run: {}",
        available.join(", "),
        not_run(family, available)
    );
    for name in every_backend {
        let known = x86_backends()
            .iter()
            .chain(other_backends())
            .any(|b| b.family == family && b.name == *name);
        assert!(
            known,
            "{family} has a backend `{name}` that mdu_testkit::backends does not know: \
             read the family's backends (`Backend::ALL` and `Backend::needs`) into the registry"
        );
    }
    for b in x86_backends().iter().filter(|b| b.family == family) {
        assert!(
            every_backend.contains(&b.name),
            "mdu_testkit::backends::x86_backends() lists `{}` for {family}, whose \
             backends are {}: the test passes an out-of-date list",
            b.name,
            every_backend.join(", ")
        );
        if cfg!(x86_simd) {
            let features_present = b
                .cpu_features
                .iter()
                .all(|f| x86_feature_detected(f).unwrap_or(false));
            assert_eq!(
                available.contains(&b.name),
                features_present,
                "{family} backend `{}`: available = {}, but the CPU features it declares \
                 ({}) are {}present as the standard library detects them; the declaration, \
                 the crate's selection or mdu_platform::cpu's detection is wrong",
                b.name,
                available.contains(&b.name),
                b.cpu_features.join(", "),
                if features_present { "" } else { "not all " }
            );
        }
    }
    let list = std::env::var(REQUIRE_X86_VAR).unwrap_or_default();
    match check_required(&list, family, available) {
        Ok(required) if required.is_empty() => println!(
            "{family}: {REQUIRE_X86_VAR} requires none of its backends{}",
            if list.trim().is_empty() {
                " (unset)"
            } else {
                ""
            }
        ),
        Ok(required) => println!(
            "{family}: {REQUIRE_X86_VAR} requires {}: available here (the backend tests \
             run every available backend)",
            required.join(", ")
        ),
        Err(e) => panic!("{e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_a_crate_and_lowercase() {
        for (i, a) in x86_backends().iter().enumerate() {
            assert_eq!(a.name, a.name.to_ascii_lowercase());
            assert!(
                x86_backends()[i + 1..]
                    .iter()
                    .all(|b| (b.name, b.family) != (a.name, a.family))
            );
            assert!(!a.cpu_features.is_empty());
        }
    }

    #[test]
    fn a_name_shared_by_two_crates_is_required_of_both() {
        let both = parse_required("vaes256").unwrap();
        let families: Vec<&str> = both.iter().map(|b| b.family).collect();
        assert_eq!(families, ["mdu-xts", "mdu-cbc"]);
        assert_eq!(
            check_required("vaes256", "mdu-cbc", &["vaes256", "aesni", "generic"]),
            Ok(vec!["vaes256"])
        );
        let e = check_required("vaes256", "mdu-cbc", &["aesni", "generic"]).unwrap_err();
        assert!(
            matches!(
                e,
                RequireError::Missing {
                    family: "mdu-cbc",
                    ..
                }
            ),
            "{e:?}"
        );
        // A crate without that backend is not affected.
        assert_eq!(check_required("vaes256", SHA256, &[]), Ok(Vec::new()));
    }

    #[test]
    fn an_unknown_name_fails_in_every_crate() {
        for krate in ["mdu-xts", SHA256, FEC, BASE64, "mdu-cbc"] {
            let e = check_required("aesni,vaes-512", krate, &["aesni"]).unwrap_err();
            assert_eq!(
                e,
                RequireError::UnknownName {
                    name: "vaes-512".to_owned()
                }
            );
            let msg = e.to_string();
            assert!(msg.contains("`vaes-512`"), "{msg}");
            assert!(msg.contains(
                "vaes512, vaes256, aesni (mdu-xts), shani, avx512 (mdu-verity::sha256), \
                 gfni512, gfni, avx2 (mdu-verity::fec), avx512vbmi, avx2 (mdu-base64), \
                 vaes512, vaes256, aesni (mdu-cbc)"
            ));
        }
        // The portable backends always run; naming them is a mistake too.
        assert!(parse_required("generic").is_err());
        assert!(parse_required("scalar").is_err());
    }

    #[test]
    fn a_missing_backend_of_the_crate_fails_and_one_of_another_crate_is_ignored() {
        let list = "vaes512, shani,avx2";
        // mdu-xts on an AVX2-only CPU: vaes512 is missing.
        let e = check_required(list, "mdu-xts", &["vaes256", "aesni", "generic"]).unwrap_err();
        let RequireError::Missing { name, family, .. } = &e else {
            panic!("{e:?}");
        };
        assert_eq!((*name, *family), ("vaes512", "mdu-xts"));
        assert!(e.to_string().contains("`vaes512`"), "{e}");
        // The other families see only their own names.
        assert_eq!(
            check_required(list, SHA256, &["shani", "generic"]),
            Ok(vec!["shani"])
        );
        assert_eq!(
            check_required(list, FEC, &["avx2", "generic"]),
            Ok(vec!["avx2"])
        );
        assert_eq!(
            check_required(list, "mdu-base64", &["avx2", "scalar"]),
            Ok(vec!["avx2"])
        );
        assert!(check_required(list, "mdu-base64", &["scalar"]).is_err());
    }

    #[test]
    fn the_registry_is_read_from_the_declarations() {
        let features = |family: &str, name: &str| {
            x86_backends()
                .iter()
                .find(|b| (b.family, b.name) == (family, name))
                .map(|b| b.cpu_features.join(","))
        };
        assert_eq!(
            features(SHA256, "shani").as_deref(),
            Some("sse2,ssse3,sse4.1,sha")
        );
        assert_eq!(
            features(SHA256, "avx512").as_deref(),
            Some("avx512f,avx512bw")
        );
        assert_eq!(features(FEC, "gfni512").as_deref(), Some("avx512f,gfni"));
        assert_eq!(features(FEC, "gfni").as_deref(), Some("avx2,gfni"));
        assert_eq!(features(FEC, "avx2").as_deref(), Some("avx2"));
        assert_eq!(
            features(BASE64, "avx512vbmi").as_deref(),
            Some("bmi2,avx512f,avx512bw,avx512vbmi")
        );
        assert_eq!(features(BASE64, "avx2").as_deref(), Some("avx2"));
        assert!(features("mdu-xts", "vaes512").is_some());
        // The AES modes' needs differ: XTS's tweak steps need a carry-less
        // multiply, CBC needs none.
        assert_eq!(
            features("mdu-xts", "aesni").as_deref(),
            Some("aes,pclmulqdq")
        );
        assert_eq!(
            features("mdu-xts", "vaes256").as_deref(),
            Some("aes,avx2,vaes,vpclmulqdq")
        );
        assert_eq!(features("mdu-cbc", "aesni").as_deref(), Some("aes"));
        assert_eq!(
            features("mdu-cbc", "vaes256").as_deref(),
            Some("aes,avx2,vaes")
        );
        // The arm64 and portable backends are known, and not x86-64 ones.
        for (family, name) in [
            (SHA256, "arm-ce"),
            (SHA256, "generic"),
            (FEC, "neon"),
            (FEC, "generic"),
            (BASE64, "neon"),
            (BASE64, "generic"),
            ("mdu-xts", "arm-ce"),
            ("mdu-cbc", "generic"),
        ] {
            assert_eq!(features(family, name), None, "{family} {name}");
            assert!(
                other_backends()
                    .iter()
                    .any(|b| (b.family, b.name) == (family, name)),
                "{family} {name}"
            );
        }
    }

    #[test]
    #[cfg(x86_simd)]
    fn every_feature_the_registry_names_is_checked_against_the_standard_library() {
        for b in x86_backends() {
            for f in &b.cpu_features {
                assert!(
                    x86_feature_detected(f).is_some(),
                    "{} {}: add `{f}` to x86_feature_detected",
                    b.family,
                    b.name
                );
            }
        }
    }

    #[test]
    fn an_empty_list_requires_nothing() {
        for list in ["", " ", ",", " , ,"] {
            assert_eq!(check_required(list, "mdu-xts", &[]), Ok(Vec::new()));
        }
    }

    #[test]
    fn not_run_names_each_missing_backend_with_a_reason() {
        assert_eq!(not_run(SHA256, &["avx512", "shani", "generic"]), "none");
        for krate in ["mdu-xts", "mdu-cbc"] {
            let s = not_run(krate, &["generic"]);
            for name in ["vaes512", "vaes256", "aesni"] {
                assert!(s.contains(name), "{s}");
            }
            assert!(s.contains('('), "{s}");
        }
        // A crate without x86 backends has nothing to miss.
        assert_eq!(not_run("mdu-core", &[]), "none");
    }
}
