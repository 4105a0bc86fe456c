//! Criterion benchmarks: SHA-256 of pairs of 4 KiB messages.
//!
//! Peers in one run: the `sha2` crate one message at a time, and for every
//! mdu backend `finup` twice and `finup2x` once, unsalted and after a 32-byte
//! salt (the dm-verity default). Throughput counts both messages.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mdu_bench::buffer::Buf;
use mdu_verity::sha256::{Backend, State};
use sha2::Digest as _;

const LEN: usize = 4096;

fn bench(c: &mut Criterion) {
    // Two messages at pseudo-random offsets from a 64-byte boundary.
    let (store_a, store_b) = (Buf::random(LEN, 1), Buf::random(LEN, 2));
    let (a, b) = (store_a.bytes(), store_b.bytes());
    let salt = [0xa5u8; 32];

    for (label, prefix) in [("4KiB", &[][..]), ("4KiB+salt32", &salt[..])] {
        let mut group = c.benchmark_group(format!("sha256/{label}"));
        group.throughput(Throughput::Bytes(2 * LEN as u64));

        let mut base = sha2::Sha256::new();
        base.update(prefix);
        let want_a: [u8; 32] = base.clone().chain_update(a).finalize().into();
        let want_b: [u8; 32] = base.clone().chain_update(b).finalize().into();

        group.bench_function("sha2 one at a time", |bench| {
            bench.iter(|| {
                let x = base.clone().chain_update(black_box(&a)).finalize();
                let y = base.clone().chain_update(black_box(&b)).finalize();
                (x, y)
            })
        });

        for &backend in Backend::available() {
            let mut st = State::with_backend(backend).expect("listed as available");
            st.update(prefix);
            assert_eq!(st.finup(a), want_a, "{backend} finup");
            assert_eq!(st.finup2x(a, b), (want_a, want_b), "{backend} finup2x");
            group.bench_function(format!("{backend} finup x2"), |bench| {
                bench.iter(|| (st.finup(black_box(a)), st.finup(black_box(b))))
            });
            group.bench_function(format!("{backend} finup2x"), |bench| {
                bench.iter(|| st.finup2x(black_box(a), black_box(b)))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
