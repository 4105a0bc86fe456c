//! SHA-256 of pairs of equal-length blocks (what Merkle trees hash): mdu's
//! two-way interleaved `finup2x` against its one-way `finup` and the `sha2`
//! crate, with and without a salted prefix state; and of sixteen blocks
//! through `finup_many` (the AVX-512 lanes).

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
         has it. On the avx512 backend, finup and finup2x are SHA-NI's one- and \
         two-way kernels; its sixteen lanes are in the next table."
            .to_string(),
    );
    let pairs = Table {
        id: "sha256-pairs".to_string(),
        title: "SHA-256 of 4 KiB message pairs".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes,
        cases,
    };
    Ok(vec![pairs, sixteen(ctx, &salt)?])
}

/// Sixteen 4 KiB messages from one salted state through `finup_many`:
/// sixteen AVX-512 lanes at once, or pairs, on each backend.
fn sixteen(ctx: &Ctx, salt: &[u8]) -> Result<Table, String> {
    let buf = Buf::random(16 * MSG, 3);
    let msgs: Vec<&[u8]> = buf.bytes().chunks(MSG).collect();
    let want: Vec<[u8; 32]> = msgs
        .iter()
        .map(|m| {
            let mut h = Sha256::new();
            h.update(salt);
            h.update(m);
            h.finalize().into()
        })
        .collect();
    let mut imps: Vec<Imp<'_>> = Vec::new();
    for &backend in Backend::available() {
        let mut s = State::with_backend(backend).map_err(|e| e.to_string())?;
        s.update(salt);
        let mut out = vec![[0u8; 32]; 16];
        s.finup_many(&msgs, &mut out);
        check(
            &format!("{backend:?} finup_many"),
            out.as_flattened(),
            want.as_flattened(),
        )?;
        let msgs = msgs.clone();
        imps.push(Imp::new(
            format!(
                "mdu finup_many ({}, {} at once)",
                backend.name(),
                backend.lanes()
            ),
            Kind::Mdu,
            move || {
                let mut out = [[0u8; 32]; 16];
                s.finup_many(black_box(&msgs), &mut out);
                black_box(out);
            },
        ));
    }
    let mut pre = Sha256::new();
    pre.update(salt);
    imps.push(Imp::new("sha2, one at a time", Kind::Peer, move || {
        for m in &msgs {
            let mut h = pre.clone();
            h.update(black_box(m));
            black_box(h.finalize());
        }
    }));
    let c = case(ctx, "16 × 4 KiB, 32-byte salt", 16 * MSG, None, imps);
    Ok(Table {
        id: "sha256-sixteen".to_string(),
        title: "SHA-256 of sixteen 4 KiB messages (finup_many)".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes: vec![
            "Sixteen equal-length messages from one salted state, as a Merkle level \
             hashes them: the avx512 backend runs them in the sixteen 32-bit lanes of \
             zmm registers, the others in pairs (shani, arm-ce) or one by one."
                .to_string(),
        ],
        cases: vec![c],
    })
}
