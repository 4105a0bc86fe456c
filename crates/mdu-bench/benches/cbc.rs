//! Criterion benchmarks: AES-CBC, many units' chains side by side against
//! one unit at a time and OpenSSL; dm-crypt IV modes; units with unrelated
//! IVs.
//!
//! * `cbc-aes256-{enc,dec}/1MiB/unit-{512,4096}`: `mdu batched/<backend>`
//!   (one `crypt_units` request) and `mdu one unit at a time/<backend>` on
//!   every backend this CPU runs, `openssl evp` (the system OpenSSL: one
//!   context, the IV re-set per unit, no padding, out of place), the same
//!   with the recent OpenSSL that release builds compile from source
//!   (`mdu_bench::openssl_peer`, e.g. `openssl 3.6 evp`), and the AES-ECB
//!   bound of the widest AES instructions (`mdu_bench::bound`).
//! * `cbc-dmcrypt/1MiB/sector-512`: mdu-dmcrypt's `IvGenerator::encrypt`
//!   with `aes-cbc-plain64` and `aes-cbc-essiv:sha256`.
//! * `explicit-ivs/1MiB/unit-512`: 2048 units with unrelated IVs as one
//!   `crypt_units_with_ivs` call and as one call per unit, CBC encryption
//!   and XTS.
//!
//! Every mdu path and every peer is checked against OpenSSL's output once
//! before it is timed.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mdu_bench::bound::{AesBound, ecb_encrypt, expand_key};
use mdu_bench::buffer::Buf;
use mdu_cbc::{AesCbc256, Backend, DataUnitCipher, DataUnitSize, Direction, Iv};
use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
use mdu_xts::XtsAes256;
use openssl::cipher::Cipher;
use openssl::cipher_ctx::CipherCtx;

const REQUEST: usize = 1 << 20;
const FIRST_SECTOR: u64 = 1 << 20;

fn key(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(0x3b).wrapping_add(0x11))
        .collect()
}

fn data(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 + i / 4099) as u8).collect()
}

/// OpenSSL EVP aes-256-cbc, one context, the IV re-set for every unit.
struct OpenSsl {
    ctx: CipherCtx,
}

impl OpenSsl {
    fn new(key: &[u8], dir: Direction) -> OpenSsl {
        let mut ctx = CipherCtx::new().expect("context");
        match dir {
            Direction::Encrypt => ctx.encrypt_init(Some(Cipher::aes_256_cbc()), Some(key), None),
            Direction::Decrypt => ctx.decrypt_init(Some(Cipher::aes_256_cbc()), Some(key), None),
        }
        .expect("key");
        ctx.set_padding(false);
        OpenSsl { ctx }
    }

    /// Out of place: OpenSSL wants a block of room past each unit's output,
    /// so `dst` is 16 bytes longer than `src`.
    fn run(&mut self, dir: Direction, unit: usize, iv: Iv, src: &[u8], dst: &mut [u8]) {
        for (i, chunk) in src.chunks_exact(unit).enumerate() {
            let iv = iv.advance(i as u128);
            match dir {
                Direction::Encrypt => self.ctx.encrypt_init(None, None, Some(&iv.0)),
                Direction::Decrypt => self.ctx.decrypt_init(None, None, Some(&iv.0)),
            }
            .expect("iv");
            let out = &mut dst[i * unit..(i + 1) * unit + 16];
            let n = self.ctx.cipher_update(chunk, Some(out)).expect("update");
            debug_assert_eq!(n, unit);
        }
    }
}

fn check(name: &str, got: &[u8], want: &[u8]) {
    assert!(got == want, "{name}: output differs from OpenSSL");
}

fn bench_requests(c: &mut Criterion) {
    let key = key(32);
    let iv = Iv::plain64(FIRST_SECTOR);
    for dir in Direction::BOTH {
        for unit in [512usize, 4096] {
            let size = DataUnitSize::new(unit).expect("unit");
            let input = data(REQUEST);
            let mut want = vec![0u8; REQUEST + 16];
            OpenSsl::new(&key, dir).run(dir, unit, iv, &input, &mut want);
            want.truncate(REQUEST);
            let short = if dir.is_encrypt() { "enc" } else { "dec" };
            let mut group = c.benchmark_group(format!("cbc-aes256-{short}/1MiB/unit-{unit}"));
            group.throughput(Throughput::Bytes(REQUEST as u64));
            let mut store = Buf::random(REQUEST, unit as u64);
            let buf = store.bytes_mut();
            for &backend in Backend::available() {
                let cbc = AesCbc256::with_backend(&key, backend).expect("available");
                buf.copy_from_slice(&input);
                cbc.crypt_units(dir, iv, 1, size, buf).expect("request");
                check("mdu batched", buf, &want);
                group.bench_function(BenchmarkId::new("mdu batched", backend), |b| {
                    b.iter(|| {
                        cbc.crypt_units(dir, iv, 1, size, black_box(&mut *buf))
                            .expect("request")
                    })
                });
                let one = |buf: &mut [u8]| {
                    for (i, u) in buf.chunks_exact_mut(unit).enumerate() {
                        cbc.crypt_unit(dir, iv.advance(i as u128), u).expect("unit");
                    }
                };
                buf.copy_from_slice(&input);
                one(buf);
                check("mdu one unit at a time", buf, &want);
                group.bench_function(BenchmarkId::new("mdu one unit at a time", backend), |b| {
                    b.iter(|| one(black_box(&mut *buf)))
                });
            }
            let mut ossl = OpenSsl::new(&key, dir);
            let mut out = Buf::random(REQUEST + 16, 3);
            ossl.run(dir, unit, iv, &input, out.bytes_mut());
            check("openssl evp", &out.bytes()[..REQUEST], &want);
            group.bench_function("openssl evp", |b| {
                b.iter(|| ossl.run(dir, unit, iv, &input, black_box(out.bytes_mut())))
            });
            #[cfg(mdu_openssl_peer)]
            {
                use mdu_bench::openssl_peer::{self as p, Cipher};
                let name = p::short_name(p::version()).to_lowercase();
                let mut recent = Cipher::cbc(&key, dir.is_encrypt()).expect("a CBC key");
                let mut out = vec![0u8; REQUEST];
                recent.crypt_units(unit, iv, &input, &mut out);
                check(&format!("{name} evp"), &out, &want);
                group.bench_function(format!("{name} evp"), |b| {
                    b.iter(|| recent.crypt_units(unit, iv, &input, black_box(&mut out)))
                });
            }
            let widest = AesBound::detect();
            if widest != AesBound::None {
                let rk = expand_key(&key);
                group.bench_function(format!("aes-only bound, {}", widest.label()), |b| {
                    b.iter(|| black_box(ecb_encrypt(widest, &rk, black_box(&mut *buf))))
                });
            }
            group.finish();
        }
    }
}

fn bench_dmcrypt(c: &mut Criterion) {
    let key = key(32);
    let cbc = AesCbc256::new(&key).expect("key");
    let geo = Geometry::new(512, 0, false).expect("geometry");
    let mut group = c.benchmark_group("cbc-dmcrypt/1MiB/sector-512");
    group.throughput(Throughput::Bytes(REQUEST as u64));
    let mut store = Buf::random(REQUEST, 7);
    let buf = store.bytes_mut();
    for mode in [IvMode::Plain64, IvMode::EssivSha256] {
        let g = IvGenerator::new(mode, geo, &key).expect("generator");
        let mut want = data(REQUEST);
        for (i, s) in want.chunks_mut(512).enumerate() {
            let iv = g.iv(&cbc, FIRST_SECTOR + i as u64).expect("iv");
            cbc.encrypt(iv, s).expect("sector");
        }
        buf.copy_from_slice(&data(REQUEST));
        g.encrypt(&cbc, FIRST_SECTOR, buf).expect("request");
        check(mode.name(), buf, &want);
        group.bench_function(format!("aes-cbc-{mode} batched"), |b| {
            b.iter(|| g.encrypt(&cbc, FIRST_SECTOR, black_box(&mut *buf)))
        });
    }
    group.finish();
}

/// One explicit-IV batch.
type Batch<'a> = &'a dyn Fn(&[Iv], &mut [u8]);
/// One unit.
type One<'a> = &'a dyn Fn(Iv, &mut [u8]);

fn bench_explicit_ivs(c: &mut Criterion) {
    let unit = 512;
    let size = DataUnitSize::new(unit).expect("unit");
    let ivs: Vec<Iv> = (0..(REQUEST / unit) as u128)
        .map(|i| Iv::from_u128(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)))
        .collect();
    let cbc = AesCbc256::new(&key(32)).expect("key");
    let xts = XtsAes256::new(&key(64)).expect("key");
    let mut group = c.benchmark_group("explicit-ivs/1MiB/unit-512");
    group.throughput(Throughput::Bytes(REQUEST as u64));
    let mut store = Buf::random(REQUEST, 9);
    let buf = store.bytes_mut();
    let ciphers: [(&str, Batch<'_>, One<'_>); 2] = [
        (
            "cbc encrypt",
            &|ivs, b| {
                cbc.crypt_units_with_ivs(Direction::Encrypt, ivs, size, b)
                    .expect("request")
            },
            &|iv, u| cbc.encrypt(iv, u).expect("unit"),
        ),
        (
            "xts encrypt",
            &|ivs, b| {
                xts.crypt_units_with_ivs(Direction::Encrypt, ivs, size, b)
                    .expect("request")
            },
            &|iv, u| xts.encrypt(iv, u).expect("unit"),
        ),
    ];
    for (name, batch, one) in ciphers {
        let mut want = data(REQUEST);
        for (u, iv) in want.chunks_mut(unit).zip(&ivs) {
            one(*iv, u);
        }
        buf.copy_from_slice(&data(REQUEST));
        batch(&ivs, buf);
        check(name, buf, &want);
        group.bench_function(format!("{name}, one explicit-IV call"), |b| {
            b.iter(|| batch(&ivs, black_box(&mut *buf)))
        });
        group.bench_function(format!("{name}, one call per unit"), |b| {
            b.iter(|| {
                for (u, iv) in black_box(&mut *buf).chunks_mut(unit).zip(&ivs) {
                    one(*iv, u);
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_requests, bench_dmcrypt, bench_explicit_ivs);
criterion_main!(benches);
