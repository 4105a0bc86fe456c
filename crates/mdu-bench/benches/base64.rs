//! Criterion benchmarks: base64url without padding (fscrypt's encoding).
//!
//! Sizes 32, 64, 189, 252 (the largest fscrypt no-key name, and the length
//! of its encoding), 1 KiB, 64 KiB (in L2) and 1 MiB of raw bytes; encode
//! and decode. Peers in one run: every available `mdu-base64` backend
//! (each forced, so AVX2 is timed on AVX-512 machines too), the `base64` crate's
//! scalar `GeneralPurpose` engine and its runtime-detected `Simd` engine,
//! `base64-simd`, `base64-turbo` (its own detected kernel), and a memcpy
//! of the same input bytes as the ceiling.
//! Throughput counts the raw (decoded) bytes in both directions. Every
//! output is checked against the `base64` crate once before timing.
#![allow(missing_docs)]

use std::hint::black_box;

use base64::Engine as _;
use base64::engine::general_purpose::{GeneralPurpose, NO_PAD};
use base64::engine::{DecodePaddingMode, Simd};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mdu_base64::{Backend, URL_SAFE_NO_PAD};
use mdu_bench::buffer::Buf;

const SIZES: [usize; 7] = [32, 64, 189, 252, 1024, 64 << 10, 1 << 20];

fn label(n: usize) -> String {
    match n {
        1024 => "1KiB".into(),
        65536 => "64KiB".into(),
        1048576 => "1MiB".into(),
        n => format!("{n}B"),
    }
}

fn bench(c: &mut Criterion) {
    // The `base64` crate's strict unpadded base64url configuration.
    let config = NO_PAD
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(false);
    let gp = GeneralPurpose::new(&base64::alphabet::URL_SAFE, config);
    let simd = Simd::url_safe(config);
    let bsimd = base64_simd::URL_SAFE_NO_PAD;
    let turbo = base64_turbo::URL_SAFE_NO_PAD;

    for n in SIZES {
        // Input and outputs at pseudo-random offsets from a 64-byte boundary.
        let data_store = Buf::random(n, n as u64);
        let data = data_store.bytes();
        let text = gp.encode(data);
        let elen = text.len();
        let mut out_store = Buf::random(elen, 1);
        let mut raw_store = Buf::random(n, 2);
        let (out, raw) = (out_store.bytes_mut(), raw_store.bytes_mut());

        // Check every contestant once before timing.
        for &b in Backend::available() {
            let e = URL_SAFE_NO_PAD.with_backend(b).expect("available");
            assert_eq!(e.encode_slice(data, &mut *out), Ok(elen), "{b:?}");
            assert_eq!(out, text.as_bytes(), "{b:?} encode");
            assert_eq!(e.decode_slice(text.as_bytes(), &mut *raw), Ok(n), "{b:?}");
            assert_eq!(raw, data, "{b:?} decode");
        }
        assert_eq!(simd.encode(data), text);
        assert_eq!(simd.decode(&text).expect("valid"), data);
        assert_eq!(
            bsimd.encode(data, base64_simd::Out::from_slice(&mut *out)),
            text.as_bytes()
        );
        assert_eq!(
            bsimd
                .decode(text.as_bytes(), base64_simd::Out::from_slice(&mut *raw))
                .expect("valid"),
            data
        );

        assert_eq!(turbo.encode_slice(data, &mut *out), Ok(elen));
        assert_eq!(out, text.as_bytes(), "base64-turbo encode");
        // base64-turbo wants room for its estimate of the decoded length.
        let mut turbo_raw = vec![0u8; turbo.decoded_len_estimate(elen)];
        assert_eq!(turbo.decode_slice(text.as_bytes(), &mut turbo_raw), Ok(n));
        assert_eq!(&turbo_raw[..n], data, "base64-turbo decode");

        let mut group = c.benchmark_group(format!("base64/encode/{}", label(n)));
        group.throughput(Throughput::Bytes(n as u64));
        for &b in Backend::available() {
            let e = URL_SAFE_NO_PAD.with_backend(b).expect("available");
            group.bench_function(BenchmarkId::new("mdu", b.name()), |bench| {
                bench.iter(|| e.encode_slice(black_box(data), black_box(&mut *out)))
            });
        }
        group.bench_function("base64 0.23 GeneralPurpose", |bench| {
            bench.iter(|| gp.encode_slice(black_box(&data), black_box(&mut *out)))
        });
        group.bench_function("base64 0.23 Simd", |bench| {
            bench.iter(|| simd.encode_slice(black_box(&data), black_box(&mut *out)))
        });
        group.bench_function("base64-simd 0.8", |bench| {
            bench.iter(|| {
                bsimd
                    .encode(
                        black_box(data),
                        base64_simd::Out::from_slice(black_box(&mut *out)),
                    )
                    .len()
            })
        });
        group.bench_function("base64-turbo 0.5", |bench| {
            bench.iter(|| turbo.encode_slice(black_box(data), black_box(&mut *out)))
        });
        group.bench_function("memcpy", |bench| {
            bench.iter(|| raw.copy_from_slice(black_box(data)))
        });
        group.finish();

        let mut group = c.benchmark_group(format!("base64/decode/{}", label(n)));
        group.throughput(Throughput::Bytes(n as u64));
        let t = text.as_bytes();
        for &b in Backend::available() {
            let e = URL_SAFE_NO_PAD.with_backend(b).expect("available");
            group.bench_function(BenchmarkId::new("mdu", b.name()), |bench| {
                bench.iter(|| e.decode_slice(black_box(t), black_box(&mut *raw)))
            });
        }
        group.bench_function("base64 0.23 GeneralPurpose", |bench| {
            bench.iter(|| gp.decode_slice(black_box(t), black_box(&mut *raw)))
        });
        group.bench_function("base64 0.23 Simd", |bench| {
            bench.iter(|| simd.decode_slice(black_box(t), black_box(&mut *raw)))
        });
        group.bench_function("base64-simd 0.8", |bench| {
            bench.iter(|| {
                bsimd
                    .decode(
                        black_box(t),
                        base64_simd::Out::from_slice(black_box(&mut *raw)),
                    )
                    .map(|s| s.len())
            })
        });
        group.bench_function("base64-turbo 0.5", |bench| {
            bench.iter(|| turbo.decode_slice(black_box(t), black_box(&mut turbo_raw)))
        });
        group.bench_function("memcpy", |bench| {
            bench.iter(|| out.copy_from_slice(black_box(t)))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_millis(1200));
    targets = bench
}
criterion_main!(benches);
