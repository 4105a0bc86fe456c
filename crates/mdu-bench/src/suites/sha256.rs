//! SHA-256 of pairs of equal-length blocks (what Merkle trees hash): mdu's
//! two-way interleaved `finup2x` against its one-way `finup` and the `sha2`
//! crate, with and without a salted prefix state; and of sixteen blocks
//! through `finup_many` (the AVX-512 lanes).

use mdu_bench::registry::sha256::{self as registry, MSG};
use mdu_verity::sha256::Backend;

use super::{Ctx, Suite, measure_group};
use crate::report::{Table, Unit, gbps};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "sha256",
        run,
        backends: || {
            vec![(
                "SHA-256 backend".to_string(),
                format!(
                    "{:?} (available: {:?})",
                    Backend::detect(),
                    Backend::available()
                ),
            )]
        },
    }
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    let group = registry::pairs();
    let id = group.name.clone();
    let cases = measure_group(ctx, group)?;
    let mut notes = Vec::new();
    for c in &cases {
        let name = &c.name;
        // The bound: twice the single-stream rate of the best backend.
        let two = c.results.first().map(|s| gbps(2 * MSG as u64, s.median()));
        let one = c
            .results
            .iter()
            .find(|s| s.name.starts_with("mdu finup ×2"))
            .map(|s| gbps(2 * MSG as u64, s.median()));
        if let (Some(two), Some(one)) = (two, one) {
            notes.push(format!(
                "{name}: finup2x runs at {two:.2} GB/s = {:.0}% of the bound of two \
                 single streams (2 × {one:.2} GB/s); speedup over one stream ×{:.2}.",
                100.0 * two / (2.0 * one),
                two / one
            ));
        }
    }
    notes.push(
        "Each iteration hashes two 4 KiB messages from the same (salted) state, the \
         shape of Merkle-tree work. The sha2 crate uses SHA-NI itself where the CPU \
         has it. On the avx512 backend, finup and finup2x are SHA-NI's one- and \
         two-way kernels; its sixteen lanes are in the next table."
            .to_string(),
    );
    let pairs = Table {
        id,
        title: "SHA-256 of 4 KiB message pairs".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes,
        cases,
    };
    Ok(vec![pairs, sixteen(ctx)?])
}

/// Sixteen 4 KiB messages from one salted state through `finup_many`:
/// sixteen AVX-512 lanes at once, or pairs, on each backend.
fn sixteen(ctx: &Ctx) -> Result<Table, String> {
    let group = registry::sixteen();
    Ok(Table {
        id: group.name.clone(),
        title: "SHA-256 of sixteen 4 KiB messages (finup_many)".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes: vec![
            "Sixteen equal-length messages from one salted state, as a Merkle level \
             hashes them: the avx512 backend runs them in the sixteen 32-bit lanes of \
             zmm registers, the others in pairs (shani, arm-ce) or one by one."
                .to_string(),
        ],
        cases: measure_group(ctx, group)?,
    })
}
