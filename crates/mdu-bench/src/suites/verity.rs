//! Merkle trees over 64 MiB in memory: the fs-verity file digest, the
//! dm-verity hash area and its verification, on one thread and on every
//! thread, against the same trees built (and checked) with the `sha2`
//! crate one block at a time; dm-verity FEC parity against the byte-serial
//! encoder and Intel ISA-L's `ec_encode_data` (when `libisal` is there).

use std::io::Cursor;

use mdu_bench::isal;
#[cfg(mdu_isal)]
use mdu_bench::isal::FecIsal;
use mdu_verity::sha256::Backend;
use mdu_verity::{dmverity, fsverity};

use super::{Buf, Ctx, Suite, case, check};
use crate::measure::{Imp, Kind};
use crate::report::{Table, Unit};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "verity",
        run,
        backends: Vec::new,
    }
}

fn pool(threads: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    let len = if ctx.full { 256 << 20 } else { 64 << 20 };
    let input = Buf::random(len, 42);
    let data = input.bytes();
    let one = pool(1)?;
    let all = pool(ctx.threads)?;
    let best = Backend::detect();
    let mb = len >> 20;

    // fs-verity.
    let fp = fsverity::Params::default();
    let fp_generic = fsverity::Params {
        backend: Some(Backend::Generic),
        ..fsverity::Params::default()
    };
    let want = one
        .install(|| fsverity::digest(data, &fp_generic))
        .map_err(|e| e.to_string())?;
    for (p, n) in [(&one, 1), (&all, ctx.threads)] {
        let got = p
            .install(|| fsverity::digest(data, &fp))
            .map_err(|e| e.to_string())?;
        check(
            &format!("fs-verity digest, {n} threads"),
            got.digest().as_bytes(),
            want.digest().as_bytes(),
        )?;
    }
    let fs_case = case(
        ctx,
        format!("fs-verity digest, {mb} MiB"),
        len,
        None,
        vec![
            Imp::new(
                format!("mdu {}, {} threads", best.name(), ctx.threads),
                Kind::Mdu,
                || {
                    all.install(|| fsverity::digest(data, &fp).expect("valid"));
                },
            ),
            Imp::new(format!("mdu {}, 1 thread", best.name()), Kind::Mdu, || {
                one.install(|| fsverity::digest(data, &fp).expect("valid"));
            }),
            Imp::new("sha2, one block at a time, 1 thread", Kind::Peer, || {
                one.install(|| fsverity::digest(data, &fp_generic).expect("valid"));
            }),
        ],
    );

    // dm-verity (the veritysetup defaults: SHA-256, 4 KiB blocks, 32-byte salt).
    let dp = dmverity::Params {
        salt: (0..32).collect(),
        superblock: false,
        ..Default::default()
    };
    let format = |backend: Option<Backend>| {
        let mut out = Cursor::new(Vec::with_capacity(len / 100));
        let p = dmverity::Params {
            backend,
            ..dp.clone()
        };
        let f = dmverity::format(data, &mut out, &p).expect("valid");
        (f.root_hash(), out.into_inner())
    };
    let reference = one.install(|| format(Some(Backend::Generic)));
    for (p, n) in [(&one, 1), (&all, ctx.threads)] {
        let got = p.install(|| format(None));
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
    let dm_case = case(
        ctx,
        format!("dm-verity format, {mb} MiB"),
        len,
        None,
        vec![
            Imp::new(
                format!("mdu {}, {} threads", best.name(), ctx.threads),
                Kind::Mdu,
                || {
                    all.install(|| format(None));
                },
            ),
            Imp::new(format!("mdu {}, 1 thread", best.name()), Kind::Mdu, || {
                one.install(|| format(None));
            }),
            Imp::new("sha2, one block at a time, 1 thread", Kind::Peer, || {
                one.install(|| format(Some(Backend::Generic)));
            }),
        ],
    );
    // dm-verity verify of the same data against the area just built.
    let root = reference.0;
    let area = reference.1;
    let verify = |backend: Option<Backend>| {
        let p = dmverity::Params {
            backend,
            ..dp.clone()
        };
        dmverity::Verifier::new(&p, &root)
            .verify(data, Cursor::new(&area))
            .map(drop)
    };
    for (p, n) in [(&one, 1), (&all, ctx.threads)] {
        p.install(|| verify(None))
            .map_err(|e| format!("dm-verity verify, {n} threads: {e}"))?;
    }
    one.install(|| verify(Some(Backend::Generic)))
        .map_err(|e| format!("dm-verity verify, generic: {e}"))?;
    let verify_case = case(
        ctx,
        format!("dm-verity verify, {mb} MiB"),
        len,
        None,
        vec![
            Imp::new(
                format!("mdu {}, {} threads", best.name(), ctx.threads),
                Kind::Mdu,
                || {
                    all.install(|| verify(None)).expect("verifies");
                },
            ),
            Imp::new(format!("mdu {}, 1 thread", best.name()), Kind::Mdu, || {
                one.install(|| verify(None)).expect("verifies");
            }),
            Imp::new("sha2, one block at a time, 1 thread", Kind::Peer, || {
                one.install(|| verify(Some(Backend::Generic)))
                    .expect("verifies");
            }),
        ],
    );
    let fec = fec_table(ctx, data, &one, &all)?;
    Ok(vec![
        Table {
            id: "verity-trees".to_string(),
            title: format!("Merkle trees over {mb} MiB in memory (SHA-256, 4 KiB blocks)"),
            unit: Unit::Throughput,
            x_label: None,
            notes: vec![
                "dm-verity: 32-byte salt, no superblock, hash area written to memory and \
             verified from there. The sha2 rows build (and check) the same tree with the \
             generic backend (the sha2 crate's block function), one block at a time."
                    .to_string(),
            ],
            cases: vec![fs_case, dm_case, verify_case],
        },
        fec,
    ])
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

/// dm-verity FEC parity (`veritysetup format --fec-device`) over the same
/// input: mdu's encoder against the byte-serial one.
fn fec_table(
    ctx: &Ctx,
    data: &[u8],
    one: &rayon::ThreadPool,
    all: &rayon::ThreadPool,
) -> Result<Table, String> {
    use mdu_verity::dmverity::fec::{Encoder, Layout};
    let bs = 4096usize;
    let blocks = data.len() / bs;
    let mb = data.len() >> 20;
    let encode = |roots: u8| {
        let layout = Layout::new(blocks as u64, bs as u32, roots).expect("valid layout");
        let mut enc = Encoder::new(layout).expect("addressable");
        // The CLI's 64 MiB windows.
        for w in data.chunks(64 << 20) {
            enc.push(w).expect("whole blocks");
        }
        enc.finish().expect("every block")
    };
    let mut cases = Vec::new();
    for roots in [2u8, 8, 24] {
        let want = fec_serial(data, bs, usize::from(roots));
        for (p, n) in [(one, 1), (all, ctx.threads)] {
            let got = p.install(|| encode(roots));
            check(
                &format!("FEC parity, roots {roots}, {n} threads"),
                &got,
                &want,
            )?;
        }
        #[cfg(mdu_isal)]
        let isal = FecIsal::new(blocks, bs, roots, ISAL_RANGE)?;
        #[cfg(mdu_isal)]
        for (p, n, parallel) in [(one, 1, false), (all, ctx.threads, true)] {
            // `want` is mdu's parity: checked equal to it just above.
            let got = p.install(|| isal.parity(data, parallel));
            check(
                &format!("ISA-L ec_encode_data FEC parity, roots {roots}, {n} threads"),
                &got,
                &want,
            )?;
        }
        let mut imps = vec![
            Imp::new(format!("mdu, {} threads", ctx.threads), Kind::Mdu, || {
                all.install(|| encode(roots));
            }),
            Imp::new("mdu, 1 thread", Kind::Mdu, || {
                one.install(|| encode(roots));
            }),
        ];
        #[cfg(mdu_isal)]
        {
            let isal = &isal;
            imps.push(Imp::new(
                format!("ISA-L ec_encode_data, {} threads", ctx.threads),
                Kind::Peer,
                move || {
                    all.install(|| isal.parity(data, true));
                },
            ));
            imps.push(Imp::new(
                "ISA-L ec_encode_data, 1 thread",
                Kind::Peer,
                move || {
                    one.install(|| isal.parity(data, false));
                },
            ));
        }
        // The serial encoder takes seconds per pass from 8 roots on.
        if roots == 2 {
            imps.push(Imp::new(
                "byte-serial LFSR per codeword (veritysetup's method), 1 thread",
                Kind::Peer,
                || {
                    fec_serial(data, bs, 2);
                },
            ));
        }
        cases.push(case(
            ctx,
            format!("FEC parity, roots {roots}, {mb} MiB"),
            data.len(),
            Some(f64::from(roots)),
            imps,
        ));
    }
    Ok(Table {
        id: "verity-fec".to_string(),
        title: format!(
            "dm-verity FEC parity over {mb} MiB in memory (RS(255, 255 - roots), 4 KiB blocks)"
        ),
        unit: Unit::Throughput,
        x_label: Some("roots".to_string()),
        notes: vec![
            "Throughput of the FEC input (data area). mdu steps a column of 32 or 64 codewords \
             through 16 blocks at a time in vector registers (GFNI on zmm or ymm, or AVX2 \
             nibble lookups); its parity is checked against the byte-serial encoder at every \
             root count before timing. The byte-serial row, timed at roots 2 only, is how \
             veritysetup computes the parity."
                .to_string(),
            isal_note(),
        ],
        cases,
    })
}

/// Codewords per call of ISA-L: its `k` source slices of this length (at
/// most 253 KiB) stay in L2 across its passes of up to six parity rows.
#[cfg(mdu_isal)]
const ISAL_RANGE: usize = 1024;

/// What the ISA-L rows are, or why there are none.
fn isal_note() -> String {
    #[cfg(mdu_isal)]
    {
        format!(
            "ISA-L {} `ec_encode_data` (its {} kernel, by its own CPUID dispatch), as \
             erasure-code libraries use it: RS(255, k) parity is a linear map, so the \
             roots × k matrix whose column i is mdu's parity of the unit message e_i goes \
             to `ec_init_tables` once, outside the timing. Its k sources are the input in \
             place: source i is blocks i·R to (i+1)·R - 1 (R rounds), so that byte c of every \
             source belongs to codeword c (round c div bs, byte c mod bs); only the source \
             straddling the end is copied, padded with zeros, and the sources past it are one \
             zero buffer. ISA-L is called per {ISAL_RANGE} codewords (spread over the pool in \
             the all-threads row) and its roots output rows are transposed into dm-verity's \
             order, inside the timing as mdu's own reordering is. Its parity is checked \
             byte for byte against mdu's at every root count, on 1 and on all threads, \
             before timing.",
            isal::VERSION,
            isal::kernel(),
        )
    }
    #[cfg(not(mdu_isal))]
    {
        format!(
            "ISA-L `ec_encode_data` peer skipped: {}.",
            isal::skipped().unwrap_or("not built")
        )
    }
}
