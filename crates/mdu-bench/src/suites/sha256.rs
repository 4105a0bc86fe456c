//! SHA-256 of pairs of equal-length blocks (what Merkle trees hash): mdu's
//! two-way interleaved `finup2x` against its one-way `finup` and the `sha2`
//! crate, with and without a salted prefix state.

use std::hint::black_box;

use mdu_verity::sha256::{Backend, State};
use sha2::{Digest, Sha256};

use super::{Buf, Ctx, Suite, case, check};
use crate::measure::{Imp, Kind};
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

const MSG: usize = 4096;

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    let a = Buf::random(MSG, 1);
    let b = Buf::random(MSG, 2);
    let (a, b) = (a.bytes(), b.bytes());
    let salt: Vec<u8> = (0..32u8).collect();
    let mut cases = Vec::new();
    let mut notes = Vec::new();
    for salted in [false, true] {
        let prefix: &[u8] = if salted { &salt } else { &[] };
        let want = |m: &[u8]| -> [u8; 32] {
            let mut h = Sha256::new();
            h.update(prefix);
            h.update(m);
            h.finalize().into()
        };
        let (wa, wb) = (want(a), want(b));
        let mut states = Vec::new();
        for &backend in Backend::available() {
            let mut s = State::with_backend(backend).map_err(|e| e.to_string())?;
            s.update(prefix);
            let (ga, gb) = s.finup2x(a, b);
            check(&format!("{backend:?} finup2x a"), &ga, &wa)?;
            check(&format!("{backend:?} finup2x b"), &gb, &wb)?;
            check(&format!("{backend:?} finup"), &s.finup(b), &wb)?;
            states.push((backend, s));
        }
        let mut imps: Vec<Imp<'_>> = Vec::new();
        for (backend, s) in &states {
            let s2 = s.clone();
            imps.push(Imp::new(
                format!("mdu finup2x ({})", backend.name()),
                Kind::Mdu,
                move || {
                    black_box(s2.finup2x(black_box(a), black_box(b)));
                },
            ));
        }
        for (backend, s) in &states {
            let s1 = s.clone();
            imps.push(Imp::new(
                format!("mdu finup ×2 ({})", backend.name()),
                Kind::Mdu,
                move || {
                    black_box(s1.finup(black_box(a)));
                    black_box(s1.finup(black_box(b)));
                },
            ));
        }
        let mut pre = Sha256::new();
        pre.update(prefix);
        imps.push(Imp::new("sha2, one at a time", Kind::Peer, move || {
            let mut h = pre.clone();
            h.update(black_box(a));
            black_box(h.finalize());
            let mut h = pre.clone();
            h.update(black_box(b));
            black_box(h.finalize());
        }));
        let name = if salted {
            "4 KiB pairs, 32-byte salt"
        } else {
            "4 KiB pairs"
        };
        let c = case(ctx, name, 2 * MSG, None, imps);
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
        cases.push(c);
    }
    notes.push(
        "Each iteration hashes two 4 KiB messages from the same (salted) state, the \
         shape of Merkle-tree work. The sha2 crate uses SHA-NI itself where the CPU \
         has it."
            .to_string(),
    );
    Ok(vec![Table {
        id: "sha256-pairs".to_string(),
        title: "SHA-256 of 4 KiB message pairs".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes,
        cases,
    }])
}
