//! Merkle trees over 64 MiB in memory: the fs-verity file digest, the
//! dm-verity hash area and its verification, on one thread and on every
//! thread, against the same trees built (and checked) with the `sha2`
//! crate one block at a time.

use std::io::Cursor;

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
        dmverity::verify(data, Cursor::new(&area), &p, &root)
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
    Ok(vec![Table {
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
    }])
}
