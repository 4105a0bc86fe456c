//! Criterion benchmarks: XTS-AES, batched data units against their peers.
//!
//! One run measures, for 1 MiB requests of 512-, 4096- and 65536-byte data
//! units, AES-256 and AES-128, encryption and decryption, all in place:
//!
//! * `mdu batched/<backend>`: one `DataUnits` request (the native
//!   multi-unit path) on every backend this CPU runs;
//! * `mdu one unit at a time/<backend>`: the same bytes as one call of the
//!   one-message function per unit;
//! * `xts-mode`: the RustCrypto `xts-mode` crate, one sector at a time;
//! * `openssl evp`: OpenSSL EVP aes-xts, one context, the IV re-set per unit;
//! * `openssl 3.x evp` and `openssl 3.x one message`: the recent OpenSSL
//!   that release builds compile from source (`mdu_bench::openssl_peer`,
//!   with its AVX-512 XTS path), per unit as above and on the whole
//!   request as one message (its best case), out of place;
//! * `aes-only bound, ...`: AES-ECB over the same bytes with the widest AES
//!   instructions of the CPU (`mdu_bench::bound`, the bound the report uses
//!   too), the ceiling for any XTS on this CPU; and `aes crate ecb` for
//!   reference.
//!
//! Then a single-unit request through `DataUnits` against the one-message
//! function directly, and `par_encrypt` against `encrypt` for 64 MiB.
//!
//! Every mdu path and every peer is checked against OpenSSL's output once
//! before it is timed.
//!
//! Single-threaded rows are timed in the benchmark thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID` on Linux), so that time spent preempted on a
//! shared machine does not count; the `par_encrypt` rows use wall-clock
//! time, as they must.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use criterion::{Bencher, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mdu_bench::bound::{AesBound, ecb_encrypt, expand_key};
use mdu_bench::buffer::Buf;
use mdu_xts::{Backend, DataUnitCipher, DataUnits, Iv, XtsAes128, XtsAes256};
use openssl::cipher::Cipher;
use openssl::cipher_ctx::CipherCtx;

const REQUEST: usize = 1 << 20;
const FIRST_SECTOR: u64 = 1 << 20;

/// XTS-AES-128 or -256 behind one type, for the benchmark loops.
#[derive(Clone, Debug)]
enum Xts {
    A128(XtsAes128),
    A256(XtsAes256),
}

impl Xts {
    fn new(key: &[u8], backend: Backend) -> Xts {
        match key.len() {
            32 => Xts::A128(XtsAes128::with_backend(key, backend).expect("available")),
            _ => Xts::A256(XtsAes256::with_backend(key, backend).expect("available")),
        }
    }

    /// The one-message function of the concrete type.
    #[inline]
    fn one(&self, enc: bool, iv: Iv, buf: &mut [u8]) {
        let r = match (self, enc) {
            (Xts::A128(x), true) => x.encrypt(iv, buf),
            (Xts::A128(x), false) => x.decrypt(iv, buf),
            (Xts::A256(x), true) => x.encrypt(iv, buf),
            (Xts::A256(x), false) => x.decrypt(iv, buf),
        };
        r.expect("valid message");
    }

    /// One batched request through `DataUnits`.
    #[inline]
    fn batched(&self, enc: bool, unit: usize, iv: Iv, buf: &mut [u8]) {
        fn go<C: DataUnitCipher<Iv = Iv>>(c: &C, enc: bool, unit: usize, iv: Iv, buf: &mut [u8]) {
            let units = DataUnits::new(c, unit).expect("unit size");
            let r = if enc {
                units.encrypt(iv, buf)
            } else {
                units.decrypt(iv, buf)
            };
            r.expect("valid request");
        }
        match self {
            Xts::A128(x) => go(x, enc, unit, iv, buf),
            Xts::A256(x) => go(x, enc, unit, iv, buf),
        }
    }

    /// One call per unit, IVs derived by the caller.
    #[inline]
    fn one_at_a_time(&self, enc: bool, unit: usize, iv: Iv, buf: &mut [u8]) {
        for (i, chunk) in buf.chunks_exact_mut(unit).enumerate() {
            self.one(enc, iv.advance(i as u128), chunk);
        }
    }
}

/// OpenSSL EVP aes-xts with one context; the IV is re-set for every unit.
struct OpenSsl {
    ctx: CipherCtx,
}

impl OpenSsl {
    fn new(key: &[u8], enc: bool) -> OpenSsl {
        let cipher = match key.len() {
            32 => Cipher::aes_128_xts(),
            _ => Cipher::aes_256_xts(),
        };
        let mut ctx = CipherCtx::new().expect("context");
        if enc {
            ctx.encrypt_init(Some(cipher), Some(key), None)
                .expect("key");
        } else {
            ctx.decrypt_init(Some(cipher), Some(key), None)
                .expect("key");
        }
        OpenSsl { ctx }
    }

    fn run(&mut self, enc: bool, unit: usize, iv: Iv, buf: &mut [u8]) {
        for (i, chunk) in buf.chunks_exact_mut(unit).enumerate() {
            let iv = iv.advance(i as u128);
            if enc {
                self.ctx.encrypt_init(None, None, Some(&iv.0)).expect("iv");
            } else {
                self.ctx.decrypt_init(None, None, Some(&iv.0)).expect("iv");
            }
            let n = self.ctx.cipher_update_inplace(chunk, unit).expect("update");
            debug_assert_eq!(n, unit);
        }
    }
}

/// The `xts-mode` crate, one sector at a time.
enum XtsMode {
    A128(Box<xts_mode::Xts128<aes::Aes128>>),
    A256(Box<xts_mode::Xts128<aes::Aes256>>),
}

impl XtsMode {
    fn new(key: &[u8]) -> XtsMode {
        let (k1, k2) = key.split_at(key.len() / 2);
        match key.len() {
            32 => XtsMode::A128(Box::new(xts_mode::Xts128::new(
                aes::Aes128::new_from_slice(k1).expect("key"),
                aes::Aes128::new_from_slice(k2).expect("key"),
            ))),
            _ => XtsMode::A256(Box::new(xts_mode::Xts128::new(
                aes::Aes256::new_from_slice(k1).expect("key"),
                aes::Aes256::new_from_slice(k2).expect("key"),
            ))),
        }
    }

    fn run(&self, enc: bool, unit: usize, iv: Iv, buf: &mut [u8]) {
        for (i, chunk) in buf.chunks_exact_mut(unit).enumerate() {
            let t = iv.advance(i as u128).0.into();
            match (self, enc) {
                (XtsMode::A128(x), true) => x.encrypt_sector(chunk, t),
                (XtsMode::A128(x), false) => x.decrypt_sector(chunk, t),
                (XtsMode::A256(x), true) => x.encrypt_sector(chunk, t),
                (XtsMode::A256(x), false) => x.decrypt_sector(chunk, t),
            }
        }
    }
}

/// ECB with the `aes` crate (AES-NI, eight blocks at a time).
fn aes_crate_ecb(key: &[u8], enc: bool, buf: &mut [u8]) {
    fn go<A>(a: &A, enc: bool, buf: &mut [u8])
    where
        A: BlockCipherEncrypt
            + BlockCipherDecrypt
            + aes::cipher::BlockSizeUser<BlockSize = aes::cipher::consts::U16>,
    {
        let (blocks, _) = aes::Block::slice_as_chunks_mut(buf);
        if enc {
            a.encrypt_blocks(blocks);
        } else {
            a.decrypt_blocks(blocks);
        }
    }
    let k1 = &key[..key.len() / 2];
    match key.len() {
        32 => go(&aes::Aes128::new_from_slice(k1).expect("key"), enc, buf),
        _ => go(&aes::Aes256::new_from_slice(k1).expect("key"), enc, buf),
    }
}

/// CPU time consumed so far by the calling thread.
#[cfg(target_os = "linux")]
fn thread_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a Linux
    // constant, and on failure `ts` stays zero (never the case in practice).
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall-clock fallback where no thread CPU clock is wired up.
#[cfg(not(target_os = "linux"))]
fn thread_time() -> Duration {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed()
}

/// Times `iters` runs of `f` in thread CPU time.
fn cpu_iter(b: &mut Bencher<'_>, mut f: impl FnMut()) {
    b.iter_custom(|iters| {
        let start = thread_time();
        for _ in 0..iters {
            f();
        }
        thread_time().saturating_sub(start)
    })
}

fn key(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(0x3b).wrapping_add(0x11))
        .collect()
}

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 4099) as u8).collect()
}

/// The reference output of a request: OpenSSL, unit by unit.
fn reference(key: &[u8], enc: bool, unit: usize, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    OpenSsl::new(key, enc).run(enc, unit, Iv::plain64(FIRST_SECTOR), &mut out);
    out
}

fn check(name: &str, got: &[u8], want: &[u8]) {
    assert!(got == want, "{name}: output differs from OpenSSL");
}

fn bench_requests(c: &mut Criterion) {
    let iv = Iv::plain64(FIRST_SECTOR);
    for key_len in [64usize, 32] {
        let bits = key_len * 4;
        let key = key(key_len);
        for enc in [true, false] {
            let dir = if enc { "enc" } else { "dec" };
            for unit in [512usize, 4096, 65536] {
                let plain = data(REQUEST);
                let cipher = reference(&key, true, unit, &plain);
                let input = if enc { plain.clone() } else { cipher.clone() };
                let want = if enc { cipher.clone() } else { plain.clone() };

                let mut group = c.benchmark_group(format!("xts-aes{bits}-{dir}/1MiB/unit-{unit}"));
                group.throughput(Throughput::Bytes(REQUEST as u64));
                // The working buffer sits at a case-dependent offset from a
                // 64-byte boundary.
                let mut store = Buf::random(REQUEST, (unit ^ key_len) as u64 ^ u64::from(enc));
                let buf = store.bytes_mut();

                for &backend in Backend::available() {
                    let x = Xts::new(&key, backend);
                    buf.copy_from_slice(&input);
                    x.batched(enc, unit, iv, buf);
                    check("mdu batched", buf, &want);
                    group.bench_function(BenchmarkId::new("mdu batched", backend), |b| {
                        cpu_iter(b, || {
                            x.batched(enc, unit, iv, black_box(&mut *buf));
                        })
                    });
                    if backend == Backend::Generic {
                        continue;
                    }
                    buf.copy_from_slice(&input);
                    x.one_at_a_time(enc, unit, iv, buf);
                    check("mdu one unit at a time", buf, &want);
                    group.bench_function(
                        BenchmarkId::new("mdu one unit at a time", backend),
                        |b| {
                            cpu_iter(b, || {
                                x.one_at_a_time(enc, unit, iv, black_box(&mut *buf));
                            })
                        },
                    );
                }

                let xm = XtsMode::new(&key);
                buf.copy_from_slice(&input);
                xm.run(enc, unit, iv, buf);
                check("xts-mode", buf, &want);
                group.bench_function("xts-mode", |b| {
                    cpu_iter(b, || {
                        xm.run(enc, unit, iv, black_box(&mut *buf));
                    })
                });

                let mut ossl = OpenSsl::new(&key, enc);
                buf.copy_from_slice(&input);
                ossl.run(enc, unit, iv, buf);
                check("openssl evp", buf, &want);
                group.bench_function("openssl evp", |b| {
                    cpu_iter(b, || {
                        ossl.run(enc, unit, iv, black_box(&mut *buf));
                    })
                });

                #[cfg(mdu_openssl_peer)]
                {
                    use mdu_bench::openssl_peer::{self as p, Cipher};
                    let name = p::short_name(p::version()).to_lowercase();
                    let mut out = vec![0u8; REQUEST];
                    let long_want = reference(&key, enc, REQUEST, &input);
                    for (label, len, want) in
                        [("evp", unit, &want), ("one message", REQUEST, &long_want)]
                    {
                        let mut recent = Cipher::xts(&key, enc).expect("an XTS key");
                        let mut run = |out: &mut [u8]| recent.crypt_units(len, iv, &input, out);
                        run(&mut out);
                        check(&format!("{name} {label}"), &out, want);
                        group.bench_function(format!("{name} {label}"), |b| {
                            cpu_iter(b, || run(black_box(&mut out)))
                        });
                    }
                }

                // The AES-only bound: the shared ECB loop of `mdu_bench::bound`
                // (widest AES instructions of this CPU), checked against the
                // aes crate with the same data key. It encrypts in both
                // directions: the decryption rounds cost the same.
                let widest = AesBound::detect();
                if widest != AesBound::None {
                    let rk = expand_key(&key[..key_len / 2]);
                    buf.copy_from_slice(&input);
                    assert!(ecb_encrypt(widest, &rk, buf), "{widest:?} runs here");
                    let mut slow = input.clone();
                    aes_crate_ecb(&key, true, &mut slow);
                    assert!(
                        *buf == slow[..],
                        "{widest:?} ECB bound differs from the aes crate"
                    );
                    group.bench_function(format!("aes-only bound, {}", widest.label()), |b| {
                        cpu_iter(b, || {
                            black_box(ecb_encrypt(widest, &rk, black_box(&mut *buf)));
                        })
                    });
                }

                buf.copy_from_slice(&input);
                aes_crate_ecb(&key, enc, buf);
                let mut again = buf.to_vec();
                aes_crate_ecb(&key, !enc, &mut again);
                assert!(again == input, "aes crate ECB does not invert");
                group.bench_function("aes crate ecb", |b| {
                    cpu_iter(b, || {
                        aes_crate_ecb(&key, enc, black_box(&mut *buf));
                    })
                });
                group.finish();
            }
        }
    }
}

/// A request of one unit through `DataUnits` against the one-message
/// function: the batched API must not slow down the common case.
fn bench_single_unit(c: &mut Criterion) {
    let key = key(64);
    let x = XtsAes256::new(&key).expect("key");
    let units512 = DataUnits::new(&x, 512).expect("unit");
    let units4k = DataUnits::new(&x, 4096).expect("unit");
    for (unit, units) in [(512usize, &units512), (4096, &units4k)] {
        let plain = data(unit);
        let want = reference(&key, true, unit, &plain);
        let mut group = c.benchmark_group(format!("xts-aes256-enc/single-unit-{unit}"));
        group.throughput(Throughput::Bytes(unit as u64));
        let iv = Iv::plain64(FIRST_SECTOR);
        let mut store = Buf::random(unit, unit as u64);
        let buf = store.bytes_mut();
        buf.copy_from_slice(&plain);
        units.encrypt(iv, buf).expect("request");
        check("DataUnits::encrypt", buf, &want);
        buf.copy_from_slice(&plain);
        x.encrypt(iv, buf).expect("message");
        check("XtsAes256::encrypt", buf, &want);
        let name = format!("DataUnits::encrypt ({})", x.backend());
        group.bench_function(name, |b| {
            cpu_iter(b, || {
                black_box(units.encrypt(black_box(iv), black_box(&mut *buf))).expect("request");
            })
        });
        let name = format!("XtsAes256::encrypt direct ({})", x.backend());
        group.bench_function(name, |b| {
            cpu_iter(b, || {
                black_box(x.encrypt(black_box(iv), black_box(&mut *buf))).expect("message");
            })
        });
        group.finish();
    }
}

/// 64 MiB of 4 KiB units on one thread and on the rayon pool.
fn bench_parallel(c: &mut Criterion) {
    const BIG: usize = 64 << 20;
    let key = key(64);
    let x = XtsAes256::new(&key).expect("key");
    let units = DataUnits::new(&x, 4096).expect("unit");
    let iv = Iv::plain64(FIRST_SECTOR);
    let plain = data(BIG);
    let mut store_a = Buf::random(BIG, 1);
    let mut store_b = Buf::random(BIG, 2);
    let (a, b) = (store_a.bytes_mut(), store_b.bytes_mut());
    a.copy_from_slice(&plain);
    b.copy_from_slice(&plain);
    units.encrypt(iv, a).expect("request");
    units.par_encrypt(iv, b).expect("request");
    assert!(a == b, "par_encrypt differs from encrypt");
    check(
        "DataUnits::encrypt (64 MiB, first MiB)",
        &a[..REQUEST],
        &reference(&key, true, 4096, &plain[..REQUEST]),
    );
    let mut group = c.benchmark_group("xts-aes256-enc/64MiB/unit-4096");
    group.throughput(Throughput::Bytes(BIG as u64));
    group.sample_size(10);
    group.bench_function(format!("DataUnits::encrypt ({})", x.backend()), |bch| {
        bch.iter(|| units.encrypt(iv, black_box(&mut *a)))
    });
    let threads = rayon_threads();
    group.bench_function(
        format!(
            "DataUnits::par_encrypt ({}, {threads} threads)",
            x.backend()
        ),
        |bch| bch.iter(|| units.par_encrypt(iv, black_box(&mut *b))),
    );
    group.finish();
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

criterion_group!(benches, bench_requests, bench_single_unit, bench_parallel);
criterion_main!(benches);
