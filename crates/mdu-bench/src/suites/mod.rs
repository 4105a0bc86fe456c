//! The measured primitives. Each suite checks every implementation's output
//! against the reference once, then times them all in one run.

use std::hint::black_box;

use mdu_bench::bound::{self, AesBound};

use crate::measure::{Imp, Kind, Plan, measure};
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

/// The AES-ECB bound `how` with its register name, if this CPU runs it:
/// the bound of a backend's own vector width in the width tables.
pub(crate) fn width_bound(how: AesBound) -> Option<(AesBound, &'static str)> {
    let width = match how {
        AesBound::Vaes512 => "zmm",
        AesBound::Vaes256 => "ymm",
        AesBound::AesNi => "xmm",
        AesBound::None => return None,
    };
    bound::runs(how).then_some((how, width))
}

/// The bound row of a width table: AES-ECB on `width` registers with the
/// schedule of `key` (one AES key) over `len` bytes.
pub(crate) fn ecb_bound_row<'a>(how: AesBound, width: &str, key: &[u8], len: usize) -> Imp<'a> {
    let rk = bound::expand_key(key);
    let mut e = Buf::random(len, 5);
    Imp::new(format!("AES-ECB on {width}"), Kind::Bound, move || {
        black_box(bound::ecb_encrypt(how, &rk, e.bytes_mut()));
    })
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

/// The system OpenSSL's label ("OpenSSL 3.0 EVP"), a peer of XTS and CBC.
pub(crate) fn system_openssl() -> String {
    format!(
        "{} EVP",
        mdu_bench::openssl_peer::short_name(openssl::version::version())
    )
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
