//! AES-CBC: mdu batched (many units' chains side by side) against mdu one
//! unit at a time, OpenSSL's EVP interface and the AES-ECB bound of each
//! width; dm-crypt IV modes through mdu-dmcrypt; and batches of units with
//! unrelated IVs for CBC and XTS.

use std::hint::black_box;

use mdu_bench::bound::{self, AesBound};
use mdu_cbc::{AesCbc128, AesCbc256, Backend, DataUnitCipher, DataUnitSize, Direction, Iv};
use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
use mdu_xts::XtsAes256;
use openssl::cipher::Cipher;
use openssl::cipher_ctx::CipherCtx;

use super::{Buf, Ctx, Suite, case, check, ecb_bound_row, per_cycle_cell, width_bound};
use crate::measure::{Imp, Kind};
use crate::report::{Table, Unit};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "cbc",
        run,
        backends: || {
            vec![(
                "AES-CBC backend".to_string(),
                format!(
                    "{:?} (available: {:?})",
                    Backend::detect(),
                    Backend::available()
                ),
            )]
        },
    }
}

const REQUEST: usize = 1 << 20;
const FIRST: u64 = 0x1_0000_0000 - 7;

/// The two key sizes behind one interface.
#[derive(Clone)]
enum Cbc {
    A128(AesCbc128),
    A256(AesCbc256),
}

impl Cbc {
    fn new(key: &[u8], backend: Backend) -> Cbc {
        if key.len() == 16 {
            Cbc::A128(AesCbc128::with_backend(key, backend).expect("valid key, available backend"))
        } else {
            Cbc::A256(AesCbc256::with_backend(key, backend).expect("valid key, available backend"))
        }
    }

    fn with<R>(&self, f: impl FnOnce(&dyn Erased) -> R) -> R {
        match self {
            Cbc::A128(c) => f(c),
            Cbc::A256(c) => f(c),
        }
    }

    /// One request of consecutive IVs (plain64 of 512-byte sectors).
    fn batched(&self, dir: Direction, unit: usize, iv: Iv, buf: &mut [u8]) {
        let size = DataUnitSize::new(unit).expect("unit size");
        self.with(|c| c.units(dir, iv, size, buf));
    }

    /// One call per unit, IVs derived by the caller.
    fn per_unit(&self, dir: Direction, unit: usize, iv: Iv, buf: &mut [u8]) {
        self.with(|c| {
            for (i, u) in buf.chunks_mut(unit).enumerate() {
                c.one(dir, iv.advance(i as u128), u);
            }
        });
    }
}

/// What the loops need of a cipher, without its type.
trait Erased {
    fn units(&self, dir: Direction, iv: Iv, unit: DataUnitSize, buf: &mut [u8]);
    fn listed(&self, dir: Direction, ivs: &[Iv], unit: DataUnitSize, buf: &mut [u8]);
    fn one(&self, dir: Direction, iv: Iv, unit: &mut [u8]);
}

impl<C: DataUnitCipher<Iv = Iv>> Erased for C {
    fn units(&self, dir: Direction, iv: Iv, unit: DataUnitSize, buf: &mut [u8]) {
        self.crypt_units(dir, iv, 1, unit, buf)
            .expect("valid request");
    }
    fn listed(&self, dir: Direction, ivs: &[Iv], unit: DataUnitSize, buf: &mut [u8]) {
        self.crypt_units_with_ivs(dir, ivs, unit, buf)
            .expect("valid request");
    }
    fn one(&self, dir: Direction, iv: Iv, unit: &mut [u8]) {
        self.crypt_unit(dir, iv, unit).expect("valid unit");
    }
}

/// OpenSSL EVP aes-cbc without padding, one context for all units, the IV
/// re-set per unit (how a user of OpenSSL encrypts sectors).
struct Openssl {
    ctx: CipherCtx,
    dir: Direction,
}

impl Openssl {
    fn new(key: &[u8], dir: Direction) -> Openssl {
        let cipher = if key.len() == 16 {
            Cipher::aes_128_cbc()
        } else {
            Cipher::aes_256_cbc()
        };
        let mut ctx = CipherCtx::new().expect("OpenSSL context");
        match dir {
            Direction::Encrypt => ctx.encrypt_init(Some(cipher), Some(key), None),
            Direction::Decrypt => ctx.decrypt_init(Some(cipher), Some(key), None),
        }
        .expect("OpenSSL CBC key");
        ctx.set_padding(false);
        Openssl { ctx, dir }
    }

    /// `dst` must be 16 bytes longer than `src` (OpenSSL's output rule).
    fn run(&mut self, unit: usize, ivs: &mut dyn Iterator<Item = Iv>, src: &[u8], dst: &mut [u8]) {
        for ((i, u), iv) in src.chunks(unit).enumerate().zip(ivs) {
            match self.dir {
                Direction::Encrypt => self.ctx.encrypt_init(None, None, Some(&iv.0)),
                Direction::Decrypt => self.ctx.decrypt_init(None, None, Some(&iv.0)),
            }
            .expect("OpenSSL IV");
            let out = &mut dst[i * unit..i * unit + unit + 16];
            let n = self
                .ctx
                .cipher_update(u, Some(out))
                .expect("OpenSSL update");
            debug_assert_eq!(n, unit);
        }
    }
}

fn key(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(101))
        .collect()
}

/// The reference: OpenSSL, one unit at a time, consecutive IVs from `iv`.
fn reference(key: &[u8], dir: Direction, unit: usize, iv: Iv, input: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; input.len() + 16];
    let mut ivs = (0..).map(|i| iv.advance(i));
    Openssl::new(key, dir).run(unit, &mut ivs, input, &mut out);
    out.truncate(input.len());
    out
}

fn verb(dir: Direction) -> &'static str {
    match dir {
        Direction::Encrypt => "encrypt",
        Direction::Decrypt => "decrypt",
    }
}

/// AES-256-CBC over unit sizes in one direction, on the best backend.
fn table(ctx: &Ctx, dir: Direction, units: &[usize]) -> Result<Table, String> {
    let k = key(32);
    let best = Backend::detect();
    let cbc = Cbc::new(&k, best);
    let iv = Iv::plain64(FIRST);
    let widest = AesBound::detect();
    let rk = bound::expand_key(&k);
    let mut cases = Vec::new();
    for &unit in units {
        let input = Buf::random(REQUEST, unit as u64 ^ 0xcbc);
        let want = reference(&k, dir, unit, iv, input.bytes());
        let mut a = Buf::random(REQUEST, 1);
        a.bytes_mut().copy_from_slice(input.bytes());
        cbc.batched(dir, unit, iv, a.bytes_mut());
        check(&format!("mdu batched {unit}"), a.bytes(), &want)?;
        let mut b = Buf::random(REQUEST, 2);
        b.bytes_mut().copy_from_slice(input.bytes());
        cbc.per_unit(dir, unit, iv, b.bytes_mut());
        check(&format!("mdu per unit {unit}"), b.bytes(), &want)?;
        let mut ossl = Openssl::new(&k, dir);
        let mut c = Buf::random(REQUEST + 16, 3);
        let src = input.bytes();
        let mut e = Buf::random(REQUEST, 5);
        let (xa, xb) = (cbc.clone(), cbc.clone());
        let mut imps = vec![
            Imp::new("mdu batched", Kind::Mdu, || {
                xa.batched(dir, unit, iv, a.bytes_mut())
            }),
            Imp::new("mdu one unit at a time", Kind::Peer, || {
                xb.per_unit(dir, unit, iv, b.bytes_mut())
            }),
            Imp::new(super::system_openssl(), Kind::Peer, || {
                let mut ivs = (0..).map(|i| iv.advance(i));
                ossl.run(unit, &mut ivs, src, c.bytes_mut())
            }),
        ];
        #[cfg(mdu_openssl_peer)]
        {
            use mdu_bench::openssl_peer::{self as p, Cipher};
            let mut recent = Cipher::cbc(&k, dir == Direction::Encrypt).expect("a CBC key");
            let mut run = move |dst: &mut [u8]| recent.crypt_units(unit, iv, src, dst);
            let mut r = Buf::random(REQUEST, 6);
            run(r.bytes_mut());
            check(&format!("recent OpenSSL {unit}"), r.bytes(), &want)?;
            let name = p::short_name(p::version());
            imps.push(Imp::new(format!("{name} EVP"), Kind::Peer, move || {
                run(r.bytes_mut())
            }));
        }
        if widest != AesBound::None {
            let rk = &rk;
            imps.push(Imp::new(widest.label(), Kind::Bound, move || {
                black_box(bound::ecb_encrypt(widest, rk, e.bytes_mut()));
            }));
        }
        cases.push(case(
            ctx,
            format!("{unit}-byte units"),
            REQUEST,
            Some(unit as f64),
            imps,
        ));
    }
    Ok(Table {
        id: format!("cbc256-{}", verb(dir)),
        title: format!("AES-256-CBC {}, 1 MiB requests", verb(dir)),
        unit: Unit::Throughput,
        x_label: Some("data-unit size (bytes)".to_string()),
        notes: vec![
            format!(
                "mdu backend: {best:?}. \"mdu one unit at a time\" is mdu-cbc called once per \
                 unit (one CBC chain at a time), listed as a peer so that the ratio shows what \
                 batching gains. OpenSSL: one EVP context, IV re-set per unit, no padding, out \
                 of place. The bound is AES-256-ECB over the same bytes with the widest AES \
                 instructions of the CPU. Decryption is compared with the encryption bound \
                 (the rounds cost the same)."
            ),
            format!("System OpenSSL: {}.", openssl::version::version()),
            super::recent_openssl_note(),
        ],
        cases,
    })
}

/// The CBC chains backend `b` encrypts side by side (units per batch).
fn chains(b: Backend) -> usize {
    match b {
        Backend::AesNi | Backend::ArmCe => 8,
        _ => 16,
    }
}

/// Every SIMD backend, forced, against the AES bound of its own vector
/// width, in bytes per cycle at the clock measured in the same run.
fn widths(ctx: &Ctx) -> Result<Vec<Table>, String> {
    let mut tables = Vec::new();
    for &b in Backend::available() {
        if b == Backend::Generic {
            continue;
        }
        let own = width_bound(match b {
            Backend::Vaes512 => AesBound::Vaes512,
            Backend::Vaes256 => AesBound::Vaes256,
            Backend::AesNi => AesBound::AesNi,
            _ => AesBound::None,
        });
        let mut cases = Vec::new();
        let mut per_cycle_cells = Vec::new();
        let mut ceiling_cells = Vec::new();
        for (key_len, dir, unit) in [
            (32, Direction::Encrypt, 512),
            (32, Direction::Decrypt, 512),
            (32, Direction::Encrypt, 4096),
            (32, Direction::Decrypt, 4096),
            (16, Direction::Encrypt, 4096),
        ] {
            let k = key(key_len);
            let cbc = Cbc::new(&k, b);
            let iv = Iv::plain64(FIRST);
            let input = Buf::random(REQUEST, unit as u64 ^ 0x5a);
            let want = reference(&k, dir, unit, iv, input.bytes());
            let mut a = Buf::random(REQUEST, 1);
            a.bytes_mut().copy_from_slice(input.bytes());
            cbc.batched(dir, unit, iv, a.bytes_mut());
            check(&format!("{b:?} batched {unit}"), a.bytes(), &want)?;
            let mut o = Buf::random(REQUEST, 2);
            o.bytes_mut().copy_from_slice(input.bytes());
            cbc.per_unit(dir, unit, iv, o.bytes_mut());
            check(&format!("{b:?} one at a time {unit}"), o.bytes(), &want)?;
            let (xa, xb) = (cbc.clone(), cbc.clone());
            let mut imps = vec![
                Imp::new(format!("{b:?} batched"), Kind::Mdu, || {
                    xa.batched(dir, unit, iv, a.bytes_mut())
                }),
                Imp::new(format!("{b:?} one unit at a time"), Kind::Peer, || {
                    xb.per_unit(dir, unit, iv, o.bytes_mut())
                }),
            ];
            if let Some((how, width)) = own {
                imps.push(ecb_bound_row(how, width, &k, REQUEST));
            }
            // Encryption's ceiling on this backend: as many chains as it
            // runs side by side, each one long message (the request cut
            // into that many units).
            let long = REQUEST / chains(b);
            let ceiling = format!("{b:?} {} chains of one long message", chains(b));
            if dir == Direction::Encrypt {
                let long_want = reference(&k, dir, long, iv, input.bytes());
                let mut l = Buf::random(REQUEST, 3);
                l.bytes_mut().copy_from_slice(input.bytes());
                cbc.batched(dir, long, iv, l.bytes_mut());
                check(&ceiling, l.bytes(), &long_want)?;
                let xl = cbc.clone();
                imps.push(Imp::new(ceiling.clone(), Kind::Mdu, move || {
                    xl.batched(dir, long, iv, l.bytes_mut())
                }));
            }
            let name = format!("AES-{} {}, {unit}-byte units", key_len * 8, verb(dir));
            let c = case(ctx, name, REQUEST, None, imps);
            per_cycle_cells.extend(per_cycle_cell(ctx, &c));
            if let Some(l) = c.results.iter().find(|s| s.name == ceiling) {
                // Medians are times: the ceiling's over the units'.
                ceiling_cells.push(format!(
                    "{} {:.2}",
                    c.name,
                    l.median() / c.results[0].median()
                ));
            }
            cases.push(c);
        }
        let width = own.map_or("its own width", |(_, w)| w);
        let mut notes = vec![format!(
            "{b:?} forced. The bound is AES-ECB with the same key size on {width} registers, \
             eight vectors in flight, over the same bytes: the AES instruction throughput \
             of that width. Encryption runs {} units' chains side by side; decryption runs \
             a unit's blocks in parallel. Decryption is compared with the encryption bound.",
            chains(b)
        )];
        notes.push(format!(
            "Encryption's units ÷ its ceiling ({} chains of one long message each: the \
             request cut into {} units; the goal is ≥ 0.95 at 512 bytes and ≥ 0.98 at \
             4 KiB): {}.",
            chains(b),
            chains(b),
            ceiling_cells.join("; ")
        ));
        if let Some(ghz) = ctx.clock_ghz {
            notes.push(format!(
                "Bytes per cycle at {ghz:.2} GHz (batched / bound): {}.",
                per_cycle_cells.join("; ")
            ));
        }
        tables.push(Table {
            id: format!("cbc-width-{}", format!("{b:?}").to_lowercase()),
            title: format!("AES-CBC, backend {b:?} against the AES bound of its width"),
            unit: Unit::Throughput,
            x_label: None,
            notes,
            cases,
        });
    }
    Ok(tables)
}

/// dm-crypt through mdu-dmcrypt: plain64 (one batched request per affine
/// run) against essiv:sha256 (explicit-IV batches of 64 sectors, their IVs
/// in one ECB pass), and essiv one sector at a time.
fn dmcrypt(ctx: &Ctx) -> Result<Table, String> {
    let k = key(32);
    let cbc = AesCbc256::new(&k).map_err(|e| e.to_string())?;
    let xk = key(64);
    let xts = XtsAes256::new(&xk).map_err(|e| e.to_string())?;
    let mut cases = Vec::new();
    for ss in [512u32, 4096] {
        let geo = Geometry::new(ss, 0, false).map_err(|e| e.to_string())?;
        let gen_of = |mode, key: &[u8]| IvGenerator::new(mode, geo, key).map_err(|e| e.to_string());
        let (plain64, essiv) = (
            gen_of(IvMode::Plain64, &k)?,
            gen_of(IvMode::EssivSha256, &k)?,
        );
        let (xplain64, xessiv) = (
            gen_of(IvMode::Plain64, &xk)?,
            gen_of(IvMode::EssivSha256, &xk)?,
        );
        let first = FIRST;
        let input = Buf::random(REQUEST, u64::from(ss));
        // Every path against one sector at a time.
        let one_by_one = |g: &IvGenerator, c: &dyn Erased, buf: &mut [u8]| {
            for (i, s) in buf.chunks_mut(ss as usize).enumerate() {
                let iv = g.iv(&cbc, first + i as u64).expect("iv");
                c.one(Direction::Encrypt, iv, s);
            }
        };
        let mut want = input.bytes().to_vec();
        one_by_one(&essiv, &cbc, &mut want);
        let mut got = input.bytes().to_vec();
        essiv
            .encrypt(&cbc, first, &mut got)
            .map_err(|e| e.to_string())?;
        check("essiv batched", &got, &want)?;
        let mut want = input.bytes().to_vec();
        for (i, s) in want.chunks_mut(ss as usize).enumerate() {
            let iv = plain64.iv(&cbc, first + i as u64).expect("iv");
            cbc.encrypt(iv, s).expect("unit");
        }
        let mut got = input.bytes().to_vec();
        plain64
            .encrypt(&cbc, first, &mut got)
            .map_err(|e| e.to_string())?;
        check("plain64 batched", &got, &want)?;

        let mut bufs: Vec<Buf> = (0..6).map(|i| Buf::random(REQUEST, i)).collect();
        let [a, b, c, d, e, f] = &mut bufs[..] else {
            return Err("six buffers".to_string());
        };
        let cbc_ref = &cbc;
        let imps = vec![
            Imp::new("aes-cbc-essiv:sha256 batched", Kind::Mdu, || {
                essiv.encrypt(cbc_ref, first, a.bytes_mut()).expect("valid")
            }),
            Imp::new("aes-cbc-plain64 batched", Kind::Peer, || {
                plain64
                    .encrypt(cbc_ref, first, b.bytes_mut())
                    .expect("valid")
            }),
            Imp::new(
                "aes-cbc-essiv:sha256 one sector at a time",
                Kind::Peer,
                || one_by_one(&essiv, cbc_ref, c.bytes_mut()),
            ),
            Imp::new("aes-cbc-plain64 one sector at a time", Kind::Peer, || {
                for (i, s) in d.bytes_mut().chunks_mut(ss as usize).enumerate() {
                    cbc_ref
                        .encrypt(Iv::plain64(first + i as u64), s)
                        .expect("unit");
                }
            }),
            Imp::new("aes-xts-essiv:sha256 batched", Kind::Peer, || {
                xessiv.encrypt(&xts, first, e.bytes_mut()).expect("valid")
            }),
            Imp::new("aes-xts-plain64 batched", Kind::Peer, || {
                xplain64.encrypt(&xts, first, f.bytes_mut()).expect("valid")
            }),
        ];
        cases.push(case(
            ctx,
            format!("1 MiB of {ss}-byte sectors, encrypt"),
            REQUEST,
            None,
            imps,
        ));
    }
    Ok(Table {
        id: "cbc-dmcrypt".to_string(),
        title: "dm-crypt IV modes through mdu-dmcrypt, AES-256".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes: vec![
            "IvGenerator::encrypt over 1 MiB. plain64 is one batched request with \
             consecutive IVs; essiv:sha256 goes in explicit-IV batches of 64 sectors whose \
             IVs are computed in one AES-256-ECB pass. \"One sector at a time\" computes \
             each IV and encrypts each sector with its own call. The ×N of the plain64 \
             batched column is how much faster plain64 is than essiv (the issue's target: \
             within 10%)."
                .to_string(),
        ],
        cases,
    })
}

/// Units with unrelated IVs (a flat list, as a cache writing back
/// scattered sectors or an offload descriptor batch): one explicit-IV call
/// against one call per unit.
fn explicit_ivs(ctx: &Ctx) -> Result<Table, String> {
    let unit = 512;
    let count = REQUEST / unit;
    let ivs: Vec<Iv> = (0..count as u128)
        .map(|i| Iv::from_u128(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)))
        .collect();
    let size = DataUnitSize::new(unit).map_err(|e| e.to_string())?;
    let cbc = AesCbc256::new(&key(32)).map_err(|e| e.to_string())?;
    let xts = XtsAes256::new(&key(64)).map_err(|e| e.to_string())?;
    let input = Buf::random(REQUEST, 0x1f);
    let mut cases = Vec::new();
    let ciphers: [(&str, &dyn Erased); 2] = [("AES-256-CBC", &cbc), ("XTS-AES-256", &xts)];
    for (name, c) in ciphers {
        for dir in Direction::BOTH {
            let mut want = input.bytes().to_vec();
            for (u, iv) in want.chunks_mut(unit).zip(&ivs) {
                c.one(dir, *iv, u);
            }
            let mut got = input.bytes().to_vec();
            c.listed(dir, &ivs, size, &mut got);
            check(&format!("{name} explicit IVs"), &got, &want)?;
            let (mut a, mut b) = (Buf::random(REQUEST, 1), Buf::random(REQUEST, 2));
            let ivs = &ivs;
            let imps = vec![
                Imp::new("one call, one IV per unit", Kind::Mdu, move || {
                    c.listed(dir, ivs, size, a.bytes_mut())
                }),
                Imp::new("one call per unit", Kind::Peer, move || {
                    for (u, iv) in b.bytes_mut().chunks_mut(unit).zip(ivs) {
                        c.one(dir, *iv, u);
                    }
                }),
            ];
            cases.push(case(
                ctx,
                format!("{name} {}, 2048 units of 512 bytes", verb(dir)),
                REQUEST,
                None,
                imps,
            ));
        }
    }
    Ok(Table {
        id: "explicit-ivs".to_string(),
        title: "Units with unrelated IVs: one explicit-IV batch vs one call per unit".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes: vec![format!(
            "1 MiB of 512-byte units, each with an IV unrelated to its neighbours' (a \
             multiplicative hash of its index). The batch is \
             DataUnitCipher::crypt_units_with_ivs on the best backend (CBC: {:?}, XTS: {:?}).",
            cbc.backend(),
            xts.backend()
        )],
        cases,
    })
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    let units: &[usize] = &[512, 4096, 65536];
    Ok(vec![
        table(ctx, Direction::Encrypt, units)?,
        table(ctx, Direction::Decrypt, units)?,
    ]
    .into_iter()
    .chain(widths(ctx)?)
    .chain([dmcrypt(ctx)?, explicit_ivs(ctx)?])
    .collect())
}
