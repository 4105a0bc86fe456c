//! SHA-256 of pairs of equal-length blocks (what Merkle trees hash): mdu's
//! two-way interleaved `finup2x` against its one-way `finup` and the `sha2`
//! crate, with and without a salted prefix state; and of sixteen blocks
//! through `finup_many` (the AVX-512 lanes).
//!
//! ```
//! let mut g = mdu_bench::registry::sha256::pairs();
//! let case = g.cases.remove(0)().expect("every backend checked");
//! assert_eq!(case.name, "4 KiB pairs");
//! ```

use std::hint::black_box;
use std::rc::Rc;

use mdu_verity::sha256::{Backend, State};
use sha2::{Digest, Sha256};

use super::{Case, Group, Imp, Kind, check};
use crate::buffer::Buf;

/// Bytes per message.
pub const MSG: usize = 4096;
/// The salt of the salted cases.
const SALT: [u8; 32] = {
    let mut s = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        s[i] = i as u8;
        i += 1;
    }
    s
};

/// Two 4 KiB messages from the same state, unsalted and with a 32-byte
/// salt: `finup2x` and `finup` twice on every backend, and the `sha2`
/// crate. Group `sha256-pairs`.
pub fn pairs() -> Group {
    Group::new("sha256-pairs", false)
        .case(|| pair(false))
        .case(|| pair(true))
}

fn pair(salted: bool) -> Result<Case, String> {
    let a = Rc::new(Buf::random(MSG, 1));
    let b = Rc::new(Buf::random(MSG, 2));
    let prefix: &[u8] = if salted { &SALT } else { &[] };
    let want = |m: &[u8]| -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(prefix);
        h.update(m);
        h.finalize().into()
    };
    let (wa, wb) = (want(a.bytes()), want(b.bytes()));
    let mut states = Vec::new();
    for &backend in Backend::available() {
        let mut s = State::with_backend(backend).map_err(|e| e.to_string())?;
        s.update(prefix);
        let (ga, gb) = s.finup2x(a.bytes(), b.bytes());
        check(&format!("{backend:?} finup2x a"), &ga, &wa)?;
        check(&format!("{backend:?} finup2x b"), &gb, &wb)?;
        check(&format!("{backend:?} finup"), &s.finup(b.bytes()), &wb)?;
        states.push((backend, s));
    }
    let name = if salted {
        "4 KiB pairs, 32-byte salt"
    } else {
        "4 KiB pairs"
    };
    let mut case = Case::new(name, 2 * MSG, None);
    for (backend, s) in &states {
        let (s2, a, b) = (s.clone(), Rc::clone(&a), Rc::clone(&b));
        case = case.imp(Imp::new(
            format!("mdu finup2x ({})", backend.name()),
            Kind::Mdu,
            move || {
                black_box(s2.finup2x(black_box(a.bytes()), black_box(b.bytes())));
            },
        ));
    }
    for (backend, s1) in states {
        let (a, b) = (Rc::clone(&a), Rc::clone(&b));
        case = case.imp(Imp::new(
            format!("mdu finup ×2 ({})", backend.name()),
            Kind::Mdu,
            move || {
                black_box(s1.finup(black_box(a.bytes())));
                black_box(s1.finup(black_box(b.bytes())));
            },
        ));
    }
    let mut pre = Sha256::new();
    pre.update(prefix);
    Ok(
        case.imp(Imp::new("sha2, one at a time", Kind::Peer, move || {
            let mut h = pre.clone();
            h.update(black_box(a.bytes()));
            black_box(h.finalize());
            let mut h = pre.clone();
            h.update(black_box(b.bytes()));
            black_box(h.finalize());
        })),
    )
}

/// Sixteen 4 KiB messages from one salted state through `finup_many` on
/// every backend (sixteen AVX-512 lanes at once, or pairs), and the
/// `sha2` crate one at a time. Group `sha256-sixteen`.
///
/// ```
/// let g = mdu_bench::registry::sha256::sixteen();
/// assert_eq!(g.cases.len(), 1);
/// ```
pub fn sixteen() -> Group {
    Group::new("sha256-sixteen", false).case(|| {
        let buf = Rc::new(Buf::random(16 * MSG, 3));
        let want: Vec<[u8; 32]> = buf
            .bytes()
            .chunks(MSG)
            .map(|m| {
                let mut h = Sha256::new();
                h.update(SALT);
                h.update(m);
                h.finalize().into()
            })
            .collect();
        let mut case = Case::new("16 × 4 KiB, 32-byte salt", 16 * MSG, None);
        for &backend in Backend::available() {
            let mut s = State::with_backend(backend).map_err(|e| e.to_string())?;
            s.update(&SALT);
            let mut out = vec![[0u8; 32]; 16];
            let msgs: Vec<&[u8]> = buf.bytes().chunks(MSG).collect();
            s.finup_many(&msgs, &mut out);
            check(
                &format!("{backend:?} finup_many"),
                out.as_flattened(),
                want.as_flattened(),
            )?;
            let buf = Rc::clone(&buf);
            case = case.imp(Imp::new(
                format!(
                    "mdu finup_many ({}, {} at once)",
                    backend.name(),
                    backend.lanes()
                ),
                Kind::Mdu,
                move || {
                    let msgs: [&[u8]; 16] = messages(buf.bytes());
                    let mut out = [[0u8; 32]; 16];
                    s.finup_many(black_box(&msgs), &mut out);
                    black_box(out);
                },
            ));
        }
        let mut pre = Sha256::new();
        pre.update(SALT);
        Ok(
            case.imp(Imp::new("sha2, one at a time", Kind::Peer, move || {
                for m in &messages(buf.bytes()) {
                    let mut h = pre.clone();
                    h.update(black_box(m));
                    black_box(h.finalize());
                }
            })),
        )
    })
}

/// The sixteen messages of `buf`.
fn messages(buf: &[u8]) -> [&[u8]; 16] {
    core::array::from_fn(|i| &buf[i * MSG..(i + 1) * MSG])
}

/// Every SHA-256 group, in the report's order.
///
/// ```
/// assert_eq!(mdu_bench::registry::sha256::groups().len(), 2);
/// ```
pub fn groups() -> Vec<Group> {
    vec![pairs(), sixteen()]
}
