//! The report's tables. Each suite measures the groups of its primitive in
//! `mdu_bench::registry` (whose cases check every implementation's output
//! against the reference once before they are timed) and adds what the
//! report says of them.

use mdu_bench::registry::{Case, Group};

use crate::measure::{Kind, Plan, measure};
use crate::report::{CaseResult, Table};

/// What a suite is given.
pub(crate) struct Ctx {
    pub(crate) plan: Plan,
    pub(crate) full: bool,
    pub(crate) threads: usize,
    /// The core clock measured at the start of the run, in GHz.
    pub(crate) clock_ghz: Option<f64>,
}

/// A suite: its name (for `--only`) and what it measures.
pub(crate) struct Suite {
    pub(crate) name: &'static str,
    pub(crate) run: fn(&Ctx) -> Result<Vec<Table>, String>,
    /// (primitive, backend) lines for the report header.
    pub(crate) backends: fn() -> Vec<(String, String)>,
}

mod base64;
mod cbc;
mod fscrypt;
mod sha256;
mod verity;
mod xts;

/// Every suite, in report order.
pub(crate) fn all() -> Vec<Suite> {
    vec![
        xts::suite(),
        cbc::suite(),
        sha256::suite(),
        verity::suite(),
        base64::suite(),
        fscrypt::suite(),
    ]
}

/// Builds (checking every implementation) and measures each case of
/// `group`, in order.
pub(crate) fn measure_group(ctx: &Ctx, group: Group) -> Result<Vec<CaseResult>, String> {
    group
        .cases
        .into_iter()
        .map(|build| Ok(measure_case(ctx, build()?)))
        .collect()
}

/// Measures one case.
pub(crate) fn measure_case(ctx: &Ctx, case: Case) -> CaseResult {
    let Case {
        name,
        bytes,
        x,
        mut imps,
    } = case;
    eprintln!("  {name}");
    CaseResult {
        name,
        bytes: bytes as u64,
        x,
        results: measure(&mut imps, ctx.plan),
    }
}

/// `"<case>: <first row> / <bound row>"` in bytes per cycle at the clock
/// measured for the run (the bound is the third row, when there is one);
/// `None` without a clock.
pub(crate) fn per_cycle_cell(ctx: &Ctx, c: &CaseResult) -> Option<String> {
    let ghz = ctx.clock_ghz?;
    let per_cycle = |s: &crate::measure::Samples| c.bytes as f64 / s.median() / ghz;
    let bound = c
        .results
        .iter()
        .find(|s| s.kind == Kind::Bound)
        .map_or(String::new(), |s| format!(" / {:.2}", per_cycle(s)));
    Some(format!(
        "{}: {:.2}{bound}",
        c.name,
        per_cycle(&c.results[0])
    ))
}

/// What the recent OpenSSL rows of the XTS and CBC tables are, or why there
/// are none.
pub(crate) fn recent_openssl_note() -> String {
    #[cfg(mdu_openssl_peer)]
    {
        use mdu_bench::openssl_peer as p;
        format!(
            "{} ({}, built from source with its assembly; its AVX-512 VAES XTS path is {} \
             on this CPU by its own test).",
            p::version(),
            p::SOURCE,
            if p::xts_avx512() {
                "eligible"
            } else {
                "not eligible"
            }
        )
    }
    #[cfg(not(mdu_openssl_peer))]
    {
        format!(
            "The recent OpenSSL peer is not in this build: {}.",
            mdu_bench::openssl_peer::skipped().unwrap_or("not built")
        )
    }
}
