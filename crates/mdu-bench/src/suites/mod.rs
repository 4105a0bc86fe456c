//! The measured primitives. Each suite checks every implementation's output
//! against the reference once, then times them all in one run.

use crate::measure::{Imp, Plan, measure};
use crate::report::{CaseResult, Table};

/// What a suite is given.
pub(crate) struct Ctx {
    pub(crate) plan: Plan,
    pub(crate) full: bool,
    pub(crate) threads: usize,
}

/// A suite: its name (for `--only`) and what it measures.
pub(crate) struct Suite {
    pub(crate) name: &'static str,
    pub(crate) run: fn(&Ctx) -> Result<Vec<Table>, String>,
    /// (primitive, backend) lines for the report header.
    pub(crate) backends: fn() -> Vec<(String, String)>,
}

mod base64;
mod sha256;
mod verity;
mod xts;

/// Every suite, in report order.
pub(crate) fn all() -> Vec<Suite> {
    vec![
        xts::suite(),
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

/// A buffer of `len` pseudo-random bytes at a pseudo-random offset (0..64)
/// from a 64-byte boundary, so that no implementation is timed only on
/// conveniently aligned memory.
pub(crate) struct Buf {
    store: Vec<u8>,
    off: usize,
    len: usize,
}

impl Buf {
    pub(crate) fn random(len: usize, seed: u64) -> Buf {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut store = vec![0u8; len + 128];
        let base = store.as_ptr() as usize;
        let misalign = (next() % 64) as usize;
        let off = (64 - base % 64) % 64 + misalign;
        // The contents depend on the seed only, not on where they landed.
        for chunk in store[off..off + len].chunks_mut(8) {
            let v = next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        Buf { store, off, len }
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.store[self.off..self.off + self.len]
    }

    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.store[self.off..self.off + self.len]
    }
}
