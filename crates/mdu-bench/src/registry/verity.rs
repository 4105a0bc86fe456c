//! Merkle trees over 64 MiB in memory: the fs-verity file digest, the
//! dm-verity hash area and its verification, on one thread and on every
//! thread, against the same trees built (and checked) with the `sha2`
//! crate one block at a time; dm-verity FEC parity against the byte-serial
//! encoder and Intel ISA-L's `ec_encode_data` (when `libisal` is there).
//!
//! ```no_run
//! let [trees, fec] = mdu_bench::registry::verity::groups(64 << 20, 2);
//! assert_eq!((trees.name.as_str(), fec.name.as_str()), ("verity-trees", "verity-fec"));
//! ```

use std::cell::OnceCell;
use std::io::Cursor;
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

#[cfg(mdu_isal)]
use crate::isal::FecIsal;
use mdu_verity::sha256::Backend;
use mdu_verity::{Digest, dmverity, fsverity};

use super::{Case, Group, Imp, Kind, check};
use crate::buffer::Buf;

/// What the cases of both groups share: the input and the pools, made
/// when the first case runs.
struct Shared {
    input: Buf,
    one: rayon::ThreadPool,
    all: rayon::ThreadPool,
    threads: usize,
    /// dm-verity's root and hash area, built with the generic backend.
    reference: OnceLock<(Digest, Vec<u8>)>,
}

/// [`Shared`], made once.
struct Lazy {
    len: usize,
    threads: usize,
    made: OnceCell<Arc<Shared>>,
}

impl Lazy {
    fn get(&self) -> Result<Arc<Shared>, String> {
        if let Some(s) = self.made.get() {
            return Ok(Arc::clone(s));
        }
        let s = Arc::new(Shared {
            input: Buf::random(self.len, 42),
            one: pool(1)?,
            all: pool(self.threads)?,
            threads: self.threads,
            reference: OnceLock::new(),
        });
        Ok(Arc::clone(self.made.get_or_init(|| s)))
    }
}

fn pool(threads: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())
}

/// The trees (group `verity-trees`) and the FEC parity (group
/// `verity-fec`) over one input of `len` bytes, on 1 and on `threads`
/// threads.
pub fn groups(len: usize, threads: usize) -> [Group; 2] {
    let lazy = Rc::new(Lazy {
        len,
        threads,
        made: OnceCell::new(),
    });
    let (l1, l2, l3) = (Rc::clone(&lazy), Rc::clone(&lazy), Rc::clone(&lazy));
    let trees = Group::new("verity-trees", true)
        .case(move || fsverity_case(&l1.get()?))
        .case(move || format_case(&l2.get()?))
        .case(move || verify_case(&l3.get()?));
    let mut fec = Group::new("verity-fec", true);
    for roots in [2u8, 8, 24] {
        let lazy = Rc::clone(&lazy);
        fec = fec.case(move || fec_case(&lazy.get()?, roots));
    }
    [trees, fec]
}

fn mb(s: &Shared) -> usize {
    s.input.bytes().len() >> 20
}

/// The three rows of a tree case: mdu on every thread and on one, and the
/// generic backend (the sha2 crate's block function) on one.
fn tree_case(
    name: String,
    s: &Arc<Shared>,
    run: impl Fn(&Shared, Option<Backend>) + Clone + Send + Sync + 'static,
) -> Case {
    let best = Backend::detect();
    let (s1, s2, s3) = (Arc::clone(s), Arc::clone(s), Arc::clone(s));
    let (r1, r2, r3) = (run.clone(), run.clone(), run);
    Case::new(name, s.input.bytes().len(), None)
        .imp(Imp::new(
            format!("mdu {}, {} threads", best.name(), s.threads),
            Kind::Mdu,
            move || s1.all.install(|| r1(&s1, None)),
        ))
        .imp(Imp::new(
            format!("mdu {}, 1 thread", best.name()),
            Kind::Mdu,
            move || s2.one.install(|| r2(&s2, None)),
        ))
        .imp(Imp::new(
            "sha2, one block at a time, 1 thread",
            Kind::Peer,
            move || s3.one.install(|| r3(&s3, Some(Backend::Generic))),
        ))
}

fn fsverity_params(backend: Option<Backend>) -> fsverity::Params {
    fsverity::Params {
        backend,
        ..fsverity::Params::default()
    }
}

fn fsverity_case(s: &Arc<Shared>) -> Result<Case, String> {
    let data = s.input.bytes();
    let want = s
        .one
        .install(|| fsverity::digest(data, &fsverity_params(Some(Backend::Generic))))
        .map_err(|e| e.to_string())?;
    let fp = fsverity_params(None);
    for (p, n) in [(&s.one, 1), (&s.all, s.threads)] {
        let got = p
            .install(|| fsverity::digest(data, &fp))
            .map_err(|e| e.to_string())?;
        check(
            &format!("fs-verity digest, {n} threads"),
            got.digest().as_bytes(),
            want.digest().as_bytes(),
        )?;
    }
    Ok(tree_case(
        format!("fs-verity digest, {} MiB", mb(s)),
        s,
        |s, backend| {
            fsverity::digest(s.input.bytes(), &fsverity_params(backend)).expect("valid");
        },
    ))
}

/// dm-verity's parameters (the veritysetup defaults: SHA-256, 4 KiB
/// blocks, 32-byte salt), without a superblock.
fn dmverity_params(backend: Option<Backend>) -> dmverity::Params {
    dmverity::Params {
        salt: (0..32).collect(),
        superblock: false,
        backend,
        ..Default::default()
    }
}

/// The root and the hash area of the input, written to memory.
fn format(s: &Shared, backend: Option<Backend>) -> (Digest, Vec<u8>) {
    let mut out = Cursor::new(Vec::with_capacity(s.input.bytes().len() / 100));
    let f = dmverity::format(s.input.bytes(), &mut out, &dmverity_params(backend)).expect("valid");
    (f.root_hash(), out.into_inner())
}

fn reference(s: &Shared) -> &(Digest, Vec<u8>) {
    s.reference
        .get_or_init(|| s.one.install(|| format(s, Some(Backend::Generic))))
}

fn format_case(s: &Arc<Shared>) -> Result<Case, String> {
    let reference = reference(s);
    for (p, n) in [(&s.one, 1), (&s.all, s.threads)] {
        let got = p.install(|| format(s, None));
        check(
            &format!("dm-verity root, {n} threads"),
            got.0.as_bytes(),
            reference.0.as_bytes(),
        )?;
        check(
            &format!("dm-verity hash area, {n} threads"),
            &got.1,
            &reference.1,
        )?;
    }
    Ok(tree_case(
        format!("dm-verity format, {} MiB", mb(s)),
        s,
        |s, backend| {
            format(s, backend);
        },
    ))
}

/// dm-verity verification of the input against the area built with the
/// generic backend.
fn verify(s: &Shared, backend: Option<Backend>) -> Result<(), mdu_verity::Error> {
    let (root, area) = reference(s);
    dmverity::Verifier::new(&dmverity_params(backend), root)
        .verify(s.input.bytes(), Cursor::new(area))
        .map(drop)
}

fn verify_case(s: &Arc<Shared>) -> Result<Case, String> {
    for (p, n) in [(&s.one, 1), (&s.all, s.threads)] {
        p.install(|| verify(s, None))
            .map_err(|e| format!("dm-verity verify, {n} threads: {e}"))?;
    }
    s.one
        .install(|| verify(s, Some(Backend::Generic)))
        .map_err(|e| format!("dm-verity verify, generic: {e}"))?;
    Ok(tree_case(
        format!("dm-verity verify, {} MiB", mb(s)),
        s,
        |s, backend| verify(s, backend).expect("verifies"),
    ))
}

/// GF(2^8) multiplication modulo `0x11d`, bit by bit.
fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        a = (a << 1) ^ if a & 0x80 != 0 { 0x1d } else { 0 };
        b >>= 1;
    }
    p
}

/// The dm-verity FEC parity computed the way `veritysetup` computes it:
/// codeword after codeword, each message byte through a byte-serial LFSR
/// with 256-entry product tables (libfec's `encode_rs_char`), the message
/// bytes gathered from blocks `rounds` apart. Written here from the
/// format's description, independently of `mdu_verity`.
fn fec_serial(input: &[u8], bs: usize, roots: usize) -> Vec<u8> {
    let blocks = input.len() / bs;
    let rsn = 255 - roots;
    let rounds = blocks.div_ceil(rsn);
    // g(x) = (x + a^0)(x + a^1)...(x + a^(roots-1)), highest power first.
    let mut g = vec![1u8];
    let mut a = 1u8;
    for _ in 0..roots {
        let mut next = vec![0u8; g.len() + 1];
        for (k, &c) in g.iter().enumerate() {
            next[k] ^= c;
            next[k + 1] ^= gf_mul(c, a);
        }
        g = next;
        a = gf_mul(a, 2);
    }
    let tables: Vec<[u8; 256]> = g[1..]
        .iter()
        .map(|&c| core::array::from_fn(|x| gf_mul(x as u8, c)))
        .collect();
    let mut out = vec![0u8; rounds * bs * roots];
    for n in 0..rounds {
        for b in 0..bs {
            let p = &mut out[(n * bs + b) * roots..][..roots];
            for i in 0..rsn {
                let k = i * rounds + n;
                let m = if k < blocks { input[k * bs + b] } else { 0 };
                let fb = usize::from(m ^ p[0]);
                for j in 0..roots - 1 {
                    p[j] = p[j + 1] ^ tables[j][fb];
                }
                p[roots - 1] = tables[roots - 1][fb];
            }
        }
    }
    out
}

/// Codewords per call of ISA-L: its `k` source slices of this length (at
/// most 253 KiB) stay in L2 across its passes of up to six parity rows.
#[cfg(mdu_isal)]
pub const ISAL_RANGE: usize = 1024;

/// mdu's FEC parity of `data` (4 KiB blocks, `roots` parity bytes per
/// codeword), pushed in the CLI's 64 MiB windows.
fn encode(data: &[u8], roots: u8) -> Vec<u8> {
    use mdu_verity::dmverity::fec::{Encoder, Layout};
    let layout = Layout::new((data.len() / BS) as u64, BS as u32, roots).expect("valid layout");
    let mut enc = Encoder::new(layout).expect("addressable");
    for w in data.chunks(64 << 20) {
        enc.push(w).expect("whole blocks");
    }
    enc.finish().expect("every block")
}

const BS: usize = 4096;

fn fec_case(s: &Arc<Shared>, roots: u8) -> Result<Case, String> {
    let data = s.input.bytes();
    let want = fec_serial(data, BS, usize::from(roots));
    for (p, n) in [(&s.one, 1), (&s.all, s.threads)] {
        let got = p.install(|| encode(data, roots));
        check(
            &format!("FEC parity, roots {roots}, {n} threads"),
            &got,
            &want,
        )?;
    }
    #[cfg(mdu_isal)]
    let isal = Arc::new(FecIsal::new(data.len() / BS, BS, roots, ISAL_RANGE)?);
    #[cfg(mdu_isal)]
    for (p, n, parallel) in [(&s.one, 1, false), (&s.all, s.threads, true)] {
        // `want` is mdu's parity: checked equal to it just above.
        let got = p.install(|| isal.parity(data, parallel));
        check(
            &format!("ISA-L ec_encode_data FEC parity, roots {roots}, {n} threads"),
            &got,
            &want,
        )?;
    }
    let (s1, s2) = (Arc::clone(s), Arc::clone(s));
    let mut case = Case::new(
        format!("FEC parity, roots {roots}, {} MiB", mb(s)),
        data.len(),
        Some(f64::from(roots)),
    )
    .imp(Imp::new(
        format!("mdu, {} threads", s.threads),
        Kind::Mdu,
        move || {
            s1.all.install(|| encode(s1.input.bytes(), roots));
        },
    ))
    .imp(Imp::new("mdu, 1 thread", Kind::Mdu, move || {
        s2.one.install(|| encode(s2.input.bytes(), roots));
    }));
    #[cfg(mdu_isal)]
    {
        let (s1, s2, i1) = (Arc::clone(s), Arc::clone(s), Arc::clone(&isal));
        case = case
            .imp(Imp::new(
                format!("ISA-L ec_encode_data, {} threads", s.threads),
                Kind::Peer,
                move || {
                    s1.all.install(|| i1.parity(s1.input.bytes(), true));
                },
            ))
            .imp(Imp::new(
                "ISA-L ec_encode_data, 1 thread",
                Kind::Peer,
                move || {
                    s2.one.install(|| isal.parity(s2.input.bytes(), false));
                },
            ));
    }
    // The serial encoder takes seconds per pass from 8 roots on.
    if roots == 2 {
        let s = Arc::clone(s);
        case = case.imp(Imp::new(
            "byte-serial LFSR per codeword (veritysetup's method), 1 thread",
            Kind::Peer,
            move || {
                fec_serial(s.input.bytes(), BS, 2);
            },
        ));
    }
    Ok(case)
}
