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
//! Each crate's tests check the names that belong to that crate (see
//! [`x86_backends`]) and fail when one of them is not available on this CPU;
//! a name that belongs to no crate fails in every crate, so a typo cannot
//! pass unnoticed. A name two crates share (`vaes512`, `vaes256` and
//! `aesni` are backends of mdu-xts and of mdu-cbc) is required of both.
//! Unset or empty, nothing is required.
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

use mdu_aes::{CpuFeatures, Mode};
use mdu_cbc::CbcMode;
use mdu_xts::XtsMode;

/// The environment variable that lists the x86-64 backends a test run must
/// exercise.
pub const REQUIRE_X86_VAR: &str = "MDU_REQUIRE_X86_BACKENDS";

/// An x86-64 SIMD backend of one of the workspace's crates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct X86Backend {
    /// The name the crate's `Backend::name()` (and `Display`) gives it.
    pub name: &'static str,
    /// The crate the backend belongs to.
    pub crate_name: &'static str,
    /// The CPU features (as `is_x86_feature_detected!` spells them) that the
    /// crate requires before it selects the backend.
    pub cpu_features: Vec<&'static str>,
}

/// Every x86-64 SIMD backend of the workspace, by crate, best first within
/// a crate. The portable backends (`generic`) always run and are not
/// listed, nor are the arm64 ones. A name may belong to several crates
/// (`vaes512` is a backend of mdu-xts and of mdu-cbc): naming it requires it
/// of each of them.
///
/// Read from the crates: every name is the crate's `Backend::name()`; the
/// CPU features of mdu-xts and mdu-cbc are the ones their modes declare
/// (`mdu_aes::Mode::NEEDS`, which their selection reads too). mdu-verity
/// and mdu-base64 declare theirs only inside their detection code, so the
/// features of those four backends are written here, and
/// [`require_x86_backends`] checks them against what the crate selects on
/// the running CPU.
pub fn x86_backends() -> &'static [X86Backend] {
    static REGISTRY: LazyLock<Vec<X86Backend>> = LazyLock::new(registry);
    &REGISTRY
}

fn registry() -> Vec<X86Backend> {
    use mdu_base64::Backend as Base64;
    use mdu_verity::sha256::Backend as Sha256;
    let mut out = aes_mode::<XtsMode>();
    let mut own = |name: &'static str, crate_name, cpu_features: &[&'static str]| {
        out.push(X86Backend {
            name,
            crate_name,
            cpu_features: cpu_features.to_vec(),
        })
    };
    own(
        Sha256::ShaNi.name(),
        "mdu-verity",
        &["sha", "sse2", "ssse3", "sse4.1"],
    );
    own(
        Sha256::Avx512.name(),
        "mdu-verity",
        &["avx512f", "avx512bw"],
    );
    own(
        Base64::Avx512Vbmi.name(),
        "mdu-base64",
        &["avx512f", "avx512bw", "avx512vbmi", "bmi2"],
    );
    own(Base64::Avx2.name(), "mdu-base64", &["avx2"]);
    out.extend(aes_mode::<CbcMode>());
    out
}

/// The x86-64 backends of the AES mode `M`, with the features the mode
/// declares for each.
fn aes_mode<M: Mode>() -> Vec<X86Backend> {
    use mdu_aes::Backend;
    // `Mode::NEEDS` is in the order Vaes512, Vaes256, AesNi, ArmCe.
    [Backend::<M>::Vaes512, Backend::Vaes256, Backend::AesNi]
        .into_iter()
        .map(|b| X86Backend {
            name: b.name(),
            crate_name: M::CRATE,
            cpu_features: x86_feature_names(M::NEEDS[b.rank()]),
        })
        .collect()
}

/// The backends of the same crates that are no x86-64 SIMD backend (the
/// arm64 and the portable ones), with no CPU features listed: what
/// [`require_x86_backends`] needs to tell a backend the registry lacks from
/// one it need not list.
fn other_backends() -> &'static [X86Backend] {
    static OTHERS: LazyLock<Vec<X86Backend>> = LazyLock::new(|| {
        use mdu_base64::Backend as Base64;
        use mdu_verity::sha256::Backend as Sha256;
        let entry = |name, crate_name| X86Backend {
            name,
            crate_name,
            cpu_features: Vec::new(),
        };
        vec![
            entry(mdu_xts::Backend::ArmCe.name(), XtsMode::CRATE),
            entry(mdu_xts::Backend::Generic.name(), XtsMode::CRATE),
            entry(mdu_cbc::Backend::ArmCe.name(), CbcMode::CRATE),
            entry(mdu_cbc::Backend::Generic.name(), CbcMode::CRATE),
            entry(Sha256::ArmCe.name(), "mdu-verity"),
            entry(Sha256::Generic.name(), "mdu-verity"),
            entry(Base64::Neon.name(), "mdu-base64"),
            entry(Base64::Generic.name(), "mdu-base64"),
        ]
    });
    &OTHERS
}

/// The x86-64 features of `f`, as `is_x86_feature_detected!` spells them.
fn x86_feature_names(f: CpuFeatures) -> Vec<&'static str> {
    f.names().collect()
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
    /// A backend of the crate under test is required but this CPU (or this
    /// build) does not run it.
    Missing {
        /// The backend's name.
        name: &'static str,
        /// Its crate.
        crate_name: &'static str,
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
                crate_name,
                reason,
            } => write!(
                f,
                "{REQUIRE_X86_VAR} requires the {crate_name} backend `{name}`, but it did not \
                 run here: {reason}"
            ),
        }
    }
}

impl std::error::Error for RequireError {}

/// The known names with their crates, for messages:
/// "vaes512, vaes256, aesni (mdu-xts), shani, avx512 (mdu-verity), ...".
fn known_names() -> String {
    let mut out = String::new();
    for (i, b) in x86_backends().iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(b.name);
        let last_of_crate = x86_backends()
            .get(i + 1)
            .is_none_or(|next| next.crate_name != b.crate_name);
        if last_of_crate {
            out.push_str(&format!(" ({})", b.crate_name));
        }
    }
    out
}

/// The backends a `MDU_REQUIRE_X86_BACKENDS` value names, in its order
/// (every crate's backend of that name). Names are separated by commas;
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
/// let names: Vec<_> = parse_required(" shani, AVX2,,").unwrap().iter().map(|b| b.name).collect();
/// assert_eq!(names, ["shani", "avx2"]);
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

/// Checks a `MDU_REQUIRE_X86_BACKENDS` value for one crate: every name must
/// be known, and every name of `crate_name` must be among `available` (the
/// names of the crate's `Backend::available()`). Returns the names of
/// `crate_name` that were required, in the list's order.
///
/// # Errors
///
/// The first unknown name, else the first required backend of `crate_name`
/// that is not in `available`.
pub fn check_required(
    list: &str,
    crate_name: &str,
    available: &[&str],
) -> Result<Vec<&'static str>, RequireError> {
    let mut required = Vec::new();
    for b in parse_required(list)? {
        if b.crate_name != crate_name {
            continue;
        }
        if !available.contains(&b.name) {
            return Err(RequireError::Missing {
                name: b.name,
                crate_name: b.crate_name,
                reason: unavailable_reason(b),
            });
        }
        required.push(b.name);
    }
    Ok(required)
}

/// Why this build on this CPU does not run `backend`: the CPU features it
/// lacks, or that this is no x86-64 build, or that the SIMD backends are
/// compiled out (under Miri).
pub fn unavailable_reason(backend: &X86Backend) -> String {
    if !cfg!(target_arch = "x86_64") {
        return format!("this is an {} build, not x86-64", std::env::consts::ARCH);
    }
    if cfg!(miri) {
        return "the SIMD backends are compiled out under Miri".to_owned();
    }
    let lacking: Vec<&str> = backend
        .cpu_features
        .iter()
        .copied()
        .filter(|f| !x86_feature_detected(f))
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

/// Whether the running CPU (and OS) supports the x86 feature `name`; false
/// for names outside [`x86_backends`]' feature lists and off x86-64.
#[cfg(all(target_arch = "x86_64", not(miri)))]
fn x86_feature_detected(name: &str) -> bool {
    use std::arch::is_x86_feature_detected as has;
    match name {
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
        _ => false,
    }
}

#[cfg(not(all(target_arch = "x86_64", not(miri))))]
fn x86_feature_detected(_name: &str) -> bool {
    false
}

/// The x86-64 backends of `crate_name` that are not in `available`, with
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
pub fn not_run(crate_name: &str, available: &[&str]) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for b in x86_backends()
        .iter()
        .filter(|b| b.crate_name == crate_name && !available.contains(&b.name))
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

/// The test every crate with x86-64 backends runs: prints which of its
/// backends run on this CPU and which do not (and why), checks that
/// [`x86_backends`] agrees with the crate, and enforces
/// `MDU_REQUIRE_X86_BACKENDS`.
///
/// `every_backend` is the name of every variant of the crate's `Backend`;
/// `available` the names of `Backend::available()`, best first.
///
/// # Panics
///
/// With a message that says what to do, when the variable names an unknown
/// backend or a backend of this crate that is not available; when a listed
/// backend of `crate_name` is not among `every_backend`, or one of
/// `every_backend` is not in the registry (the registry is out of date); or
/// when a backend's availability disagrees with the CPU features the
/// registry says it needs.
pub fn require_x86_backends(crate_name: &str, every_backend: &[&str], available: &[&str]) {
    println!(
        "{crate_name}: backends this CPU runs: {}; x86-64 backends it does not run: {}",
        available.join(", "),
        not_run(crate_name, available)
    );
    for name in every_backend {
        let known = x86_backends()
            .iter()
            .chain(other_backends())
            .any(|b| b.crate_name == crate_name && b.name == *name);
        assert!(
            known,
            "{crate_name} has a backend `{name}` that mdu_testkit::backends does not know: \
             add it to the registry (an x86-64 one with the CPU features it needs)"
        );
    }
    for b in x86_backends().iter().filter(|b| b.crate_name == crate_name) {
        assert!(
            every_backend.contains(&b.name),
            "mdu_testkit::backends::x86_backends() lists `{}` for {crate_name}, whose \
             backends are {}: update the registry",
            b.name,
            every_backend.join(", ")
        );
        if cfg!(all(target_arch = "x86_64", not(miri))) {
            let features_present = b.cpu_features.iter().all(|f| x86_feature_detected(f));
            assert_eq!(
                available.contains(&b.name),
                features_present,
                "{crate_name} backend `{}`: available = {}, but the CPU features the registry \
                 names for it ({}) are {}present; the registry or the crate's detection is \
                 wrong",
                b.name,
                available.contains(&b.name),
                b.cpu_features.join(", "),
                if features_present { "" } else { "not all " }
            );
        }
    }
    let list = std::env::var(REQUIRE_X86_VAR).unwrap_or_default();
    match check_required(&list, crate_name, available) {
        Ok(required) if required.is_empty() => println!(
            "{crate_name}: {REQUIRE_X86_VAR} requires none of its backends{}",
            if list.trim().is_empty() {
                " (unset)"
            } else {
                ""
            }
        ),
        Ok(required) => println!(
            "{crate_name}: {REQUIRE_X86_VAR} requires {}: available here (the backend tests \
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
                    .all(|b| (b.name, b.crate_name) != (a.name, a.crate_name))
            );
            assert!(!a.cpu_features.is_empty());
        }
    }

    #[test]
    fn a_name_shared_by_two_crates_is_required_of_both() {
        let both = parse_required("vaes256").unwrap();
        let crates: Vec<&str> = both.iter().map(|b| b.crate_name).collect();
        assert_eq!(crates, ["mdu-xts", "mdu-cbc"]);
        assert_eq!(
            check_required("vaes256", "mdu-cbc", &["vaes256", "aesni", "generic"]),
            Ok(vec!["vaes256"])
        );
        let e = check_required("vaes256", "mdu-cbc", &["aesni", "generic"]).unwrap_err();
        assert!(
            matches!(
                e,
                RequireError::Missing {
                    crate_name: "mdu-cbc",
                    ..
                }
            ),
            "{e:?}"
        );
        // A crate without that backend is not affected.
        assert_eq!(check_required("vaes256", "mdu-verity", &[]), Ok(Vec::new()));
    }

    #[test]
    fn an_unknown_name_fails_in_every_crate() {
        for krate in ["mdu-xts", "mdu-verity", "mdu-base64", "mdu-cbc"] {
            let e = check_required("aesni,vaes-512", krate, &["aesni"]).unwrap_err();
            assert_eq!(
                e,
                RequireError::UnknownName {
                    name: "vaes-512".to_owned()
                }
            );
            let msg = e.to_string();
            assert!(msg.contains("`vaes-512`"), "{msg}");
            assert!(msg.contains("vaes512, vaes256, aesni (mdu-xts), shani, avx512 (mdu-verity)"));
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
        let RequireError::Missing {
            name, crate_name, ..
        } = &e
        else {
            panic!("{e:?}");
        };
        assert_eq!((*name, *crate_name), ("vaes512", "mdu-xts"));
        assert!(e.to_string().contains("`vaes512`"), "{e}");
        // mdu-verity and mdu-base64 see only their own names.
        assert_eq!(
            check_required(list, "mdu-verity", &["shani", "generic"]),
            Ok(vec!["shani"])
        );
        assert_eq!(
            check_required(list, "mdu-base64", &["avx2", "scalar"]),
            Ok(vec!["avx2"])
        );
        assert!(check_required(list, "mdu-base64", &["scalar"]).is_err());
    }

    #[test]
    fn an_empty_list_requires_nothing() {
        for list in ["", " ", ",", " , ,"] {
            assert_eq!(check_required(list, "mdu-xts", &[]), Ok(Vec::new()));
        }
    }

    #[test]
    fn not_run_names_each_missing_backend_with_a_reason() {
        assert_eq!(
            not_run("mdu-verity", &["avx512", "shani", "generic"]),
            "none"
        );
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
