//! Criterion benchmarks: fs-verity digest and dm-verity format of 64 MiB in
//! memory (SHA-256, 4 KiB blocks, 32-byte salt for dm-verity).
//!
//! Rows: mdu on its best backend with one thread and with every thread of
//! the machine, and the same tree built one block at a time through the
//! `sha2` crate's block function (the generic backend) as the baseline.
#![allow(missing_docs)]

use std::io::Cursor;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mdu_bench::buffer::Buf;
use mdu_verity::sha256::Backend;
use mdu_verity::{dmverity, fsverity};

const LEN: usize = 64 << 20;

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

fn bench(c: &mut Criterion) {
    // 64 MiB at a pseudo-random offset from a 64-byte boundary.
    let store = Buf::random(LEN, 64);
    let data = store.bytes();
    let all = std::thread::available_parallelism().map_or(2, |n| n.get());
    let one = pool(1);
    let many = pool(all);

    // fs-verity
    let fp = fsverity::Params::default();
    let fp_generic = fsverity::Params {
        backend: Some(Backend::Generic),
        ..fsverity::Params::default()
    };
    let want = one.install(|| fsverity::digest(data, &fp_generic).unwrap());
    assert_eq!(many.install(|| fsverity::digest(data, &fp).unwrap()), want);
    assert_eq!(one.install(|| fsverity::digest(data, &fp).unwrap()), want);

    let mut g = c.benchmark_group("fsverity-digest/64MiB");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(LEN as u64));
    g.bench_function("sha2 one block at a time, 1 thread", |b| {
        b.iter(|| one.install(|| fsverity::digest(data, &fp_generic).unwrap()))
    });
    g.bench_function(format!("mdu {}, 1 thread", Backend::detect()), |b| {
        b.iter(|| one.install(|| fsverity::digest(data, &fp).unwrap()))
    });
    g.bench_function(format!("mdu {}, {all} threads", Backend::detect()), |b| {
        b.iter(|| many.install(|| fsverity::digest(data, &fp).unwrap()))
    });
    g.finish();

    // dm-verity
    let dp = dmverity::Params {
        salt: (0..32).collect(),
        superblock: false,
        ..Default::default()
    };
    let format = |backend: Option<Backend>| {
        let mut out = Cursor::new(Vec::with_capacity(LEN / 100));
        let p = dmverity::Params {
            backend,
            ..dp.clone()
        };
        let f = dmverity::format(data, &mut out, &p).unwrap();
        (f.root_hash(), out.into_inner())
    };
    let reference = one.install(|| format(Some(Backend::Generic)));
    assert!(many.install(|| format(None)) == reference);
    assert!(one.install(|| format(None)) == reference);

    let mut g = c.benchmark_group("dmverity-format/64MiB");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(LEN as u64));
    g.bench_function("sha2 one block at a time, 1 thread", |b| {
        b.iter(|| one.install(|| format(Some(Backend::Generic))))
    });
    g.bench_function(format!("mdu {}, 1 thread", Backend::detect()), |b| {
        b.iter(|| one.install(|| format(None)))
    });
    g.bench_function(format!("mdu {}, {all} threads", Backend::detect()), |b| {
        b.iter(|| many.install(|| format(None)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
