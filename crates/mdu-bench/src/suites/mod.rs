//! The measured primitives. Each suite checks every implementation's output
//! against the reference once, then times them all in one run.

use crate::measure::{Imp, Plan, measure};
use crate::report::{CaseResult, Table};
pub(crate) use mdu_bench::buffer::Buf;

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
    ]
}

/// Measures one case.
pub(crate) fn case(
    ctx: &Ctx,
    name: impl Into<String>,
    bytes: usize,
    x: Option<f64>,
    mut imps: Vec<Imp<'_>>,
) -> CaseResult {
    let name = name.into();
    eprintln!("  {name}");
    CaseResult {
        name,
        bytes: bytes as u64,
        x,
        results: measure(&mut imps, ctx.plan),
    }
}

/// Fails a suite with a message when an implementation's output differs
/// from the reference.
pub(crate) fn check(what: &str, got: &[u8], want: &[u8]) -> Result<(), String> {
    if got == want {
        return Ok(());
    }
    let at = got.iter().zip(want).position(|(a, b)| a != b);
    Err(format!(
        "{what}: output differs from the reference (lengths {} and {}, first difference at {:?}); \
         refusing to benchmark wrong bytes",
        got.len(),
        want.len(),
        at
    ))
}
