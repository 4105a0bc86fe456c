//! XTS-AES: mdu batched against mdu one unit at a time, the `xts-mode`
//! crate, OpenSSL's EVP interface and the AES-ECB bound.

use std::hint::black_box;

use mdu_bench::bound::{self, AesBound};
#[cfg(mdu_openssl_peer)]
use mdu_bench::openssl_peer::short_name;
use mdu_xts::{Backend, BlockXts, DataUnits, Iv, XtsAes128, XtsAes256};
use openssl::cipher::Cipher;
use openssl::cipher_ctx::CipherCtx;

use super::{
    Buf, Ctx, Suite, case, check, ecb_bound_row, per_cycle_cell, recent_openssl_note,
    system_openssl, width_bound,
};
use crate::measure::{Imp, Kind};
use crate::report::{Table, Unit};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "xts",
        run,
        backends: || {
            vec![
                (
                    "XTS-AES backend".to_string(),
                    format!(
                        "{:?} (available: {:?})",
                        Backend::detect(),
                        Backend::available()
                    ),
                ),
                (
                    "AES bound".to_string(),
                    AesBound::detect().label().to_string(),
                ),
            ]
        },
    }
}

const REQUEST: usize = 1 << 20;
const FIRST: u64 = 0x1_0000_0000 - 7;

#[derive(Clone, Copy, PartialEq)]
enum Dir {
    Enc,
    Dec,
}

/// The two key sizes behind one interface.
#[derive(Clone)]
enum Xts {
    A128(XtsAes128),
    A256(XtsAes256),
}

impl Xts {
    fn new(key: &[u8], backend: Backend) -> Xts {
        if key.len() == 32 {
            Xts::A128(XtsAes128::with_backend(key, backend).expect("valid key, available backend"))
        } else {
            Xts::A256(XtsAes256::with_backend(key, backend).expect("valid key, available backend"))
        }
    }

    fn batched(&self, dir: Dir, unit: usize, iv: Iv, buf: &mut [u8]) {
        macro_rules! go {
            ($c:expr) => {{
                let u = DataUnits::new($c, unit).expect("unit size");
                match dir {
                    Dir::Enc => u.encrypt(iv, buf),
                    Dir::Dec => u.decrypt(iv, buf),
                }
                .expect("valid request")
            }};
        }
        match self {
            Xts::A128(c) => go!(c),
            Xts::A256(c) => go!(c),
        }
    }

    fn one(&self, dir: Dir, iv: Iv, unit: &mut [u8]) {
        let r = match (self, dir) {
            (Xts::A128(c), Dir::Enc) => c.encrypt(iv, unit),
            (Xts::A128(c), Dir::Dec) => c.decrypt(iv, unit),
            (Xts::A256(c), Dir::Enc) => c.encrypt(iv, unit),
            (Xts::A256(c), Dir::Dec) => c.decrypt(iv, unit),
        };
        r.expect("valid unit");
    }

    fn per_unit(&self, dir: Dir, unit: usize, iv: Iv, buf: &mut [u8]) {
        for (i, u) in buf.chunks_mut(unit).enumerate() {
            self.one(dir, iv.advance(i as u128), u);
        }
    }
}

/// OpenSSL EVP with one context for all units, the IV re-set per unit (how
/// a user of OpenSSL encrypts sectors).
struct Openssl {
    ctx: CipherCtx,
    dir: Dir,
}

impl Openssl {
    fn new(key: &[u8], dir: Dir) -> Openssl {
        let cipher = if key.len() == 32 {
            Cipher::aes_128_xts()
        } else {
            Cipher::aes_256_xts()
        };
        let mut ctx = CipherCtx::new().expect("OpenSSL context");
        match dir {
            Dir::Enc => ctx.encrypt_init(Some(cipher), Some(key), None),
            Dir::Dec => ctx.decrypt_init(Some(cipher), Some(key), None),
        }
        .expect("OpenSSL XTS key");
        Openssl { ctx, dir }
    }

    /// `dst` must be 16 bytes longer than `src` (OpenSSL's output rule).
    fn run(&mut self, unit: usize, iv: Iv, src: &[u8], dst: &mut [u8]) {
        for (i, u) in src.chunks(unit).enumerate() {
            let iv = iv.advance(i as u128).0;
            match self.dir {
                Dir::Enc => self.ctx.encrypt_init(None, None, Some(&iv)),
                Dir::Dec => self.ctx.decrypt_init(None, None, Some(&iv)),
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

/// The recent OpenSSL (built from source in release builds), one unit at a
/// time with the IV re-set per unit as for the system OpenSSL; with
/// `unit == REQUEST`, its best case, one long message.
#[cfg(mdu_openssl_peer)]
fn recent_openssl(
    key: &[u8],
    dir: Dir,
    unit: usize,
    iv: Iv,
) -> impl FnMut(&[u8], &mut [u8]) + use<> {
    let mut c = mdu_bench::openssl_peer::Cipher::xts(key, dir == Dir::Enc).expect("an XTS key");
    move |src: &[u8], dst: &mut [u8]| c.crypt_units(unit, iv, src, dst)
}

/// Whether the recent OpenSSL's XTS code runs on backend `b`'s vector
/// width on this CPU: its AVX-512 path on zmm, else AES-NI on xmm (it has
/// no ymm XTS code).
#[cfg(mdu_openssl_peer)]
fn same_width_as_openssl(b: Backend) -> bool {
    match b {
        Backend::Vaes512 => mdu_bench::openssl_peer::xts_avx512(),
        Backend::AesNi => !mdu_bench::openssl_peer::xts_avx512(),
        _ => false,
    }
}

/// The `xts-mode` crate, sector by sector with the same IVs.
fn xts_mode(key: &[u8], dir: Dir, unit: usize, iv: Iv) -> impl FnMut(&mut [u8]) + use<> {
    use aes::cipher::KeyInit;
    let (k1, k2) = key.split_at(key.len() / 2);
    #[allow(clippy::large_enum_variant)] // built once per case, never moved in a loop
    enum X {
        A128(xts_mode::Xts128<aes::Aes128>),
        A256(xts_mode::Xts128<aes::Aes256>),
    }
    let x = if key.len() == 32 {
        X::A128(xts_mode::Xts128::new(
            aes::Aes128::new_from_slice(k1).expect("key"),
            aes::Aes128::new_from_slice(k2).expect("key"),
        ))
    } else {
        X::A256(xts_mode::Xts128::new(
            aes::Aes256::new_from_slice(k1).expect("key"),
            aes::Aes256::new_from_slice(k2).expect("key"),
        ))
    };
    move |b: &mut [u8]| {
        for (i, u) in b.chunks_mut(unit).enumerate() {
            let t = iv.advance(i as u128).0.into();
            match (&x, dir) {
                (X::A128(x), Dir::Enc) => x.encrypt_sector(u, t),
                (X::A128(x), Dir::Dec) => x.decrypt_sector(u, t),
                (X::A256(x), Dir::Enc) => x.encrypt_sector(u, t),
                (X::A256(x), Dir::Dec) => x.decrypt_sector(u, t),
            }
        }
    }
}

/// The [`Imp::same_code`] name of an XTS row: the same key size,
/// direction, backend, unit size and path over 1 MiB is the same code,
/// whichever table times it.
fn code(bits: usize, verb: &str, backend: Backend, unit: usize, path: &str) -> String {
    format!("xts/aes{bits}/{verb}/{backend:?}/{unit}/{path}")
}

fn key(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(101))
        .collect()
}

/// One table: a key size and a direction over unit sizes.
fn table(ctx: &Ctx, key_len: usize, dir: Dir, units: &[usize]) -> Result<Table, String> {
    let k = key(key_len);
    let best = Backend::detect();
    let xts = Xts::new(&k, best);
    let iv = Iv::plain64(FIRST);
    let bound = AesBound::detect();
    let rk = bound::expand_key(&k[..key_len / 2]);
    let bits = key_len * 4;
    let verb = if dir == Dir::Enc {
        "encrypt"
    } else {
        "decrypt"
    };
    let mut cases = Vec::new();
    for &unit in units {
        let input = Buf::random(REQUEST, unit as u64 ^ key_len as u64);
        // The reference: the xts-mode crate, one sector at a time.
        let mut want = input.bytes().to_vec();
        xts_mode(&k, dir, unit, iv)(&mut want);

        let mut a = Buf::random(REQUEST, 1);
        a.bytes_mut().copy_from_slice(input.bytes());
        xts.batched(dir, unit, iv, a.bytes_mut());
        check(&format!("mdu batched {unit}"), a.bytes(), &want)?;
        let mut b = Buf::random(REQUEST, 2);
        b.bytes_mut().copy_from_slice(input.bytes());
        xts.per_unit(dir, unit, iv, b.bytes_mut());
        check(&format!("mdu per unit {unit}"), b.bytes(), &want)?;
        let mut ossl = Openssl::new(&k, dir);
        let mut c = Buf::random(REQUEST + 16, 3);
        ossl.run(unit, iv, input.bytes(), c.bytes_mut());
        check(&format!("OpenSSL {unit}"), &c.bytes()[..REQUEST], &want)?;
        let mut d = Buf::random(REQUEST, 4);
        let mut xm = xts_mode(&k, dir, unit, iv);
        let mut e = Buf::random(REQUEST, 5);
        #[cfg(mdu_openssl_peer)]
        let (mut recent, mut recent_long, mut r, mut rl) = {
            let mut recent = recent_openssl(&k, dir, unit, iv);
            let mut r = Buf::random(REQUEST, 6);
            recent(input.bytes(), r.bytes_mut());
            check(&format!("recent OpenSSL {unit}"), r.bytes(), &want)?;
            // Its best case: the whole request as one message.
            let mut long_want = input.bytes().to_vec();
            xts_mode(&k, dir, REQUEST, iv)(&mut long_want);
            let mut recent_long = recent_openssl(&k, dir, REQUEST, iv);
            let mut rl = Buf::random(REQUEST, 7);
            recent_long(input.bytes(), rl.bytes_mut());
            check("recent OpenSSL one message", rl.bytes(), &long_want)?;
            (recent, recent_long, r, rl)
        };

        let (xa, xb) = (xts.clone(), xts.clone());
        let src = input.bytes();
        let mut imps = vec![
            Imp::new("mdu batched", Kind::Mdu, || {
                xa.batched(dir, unit, iv, a.bytes_mut())
            })
            .same_code(code(bits, verb, best, unit, "batched")),
            Imp::new("mdu one unit at a time", Kind::Mdu, || {
                xb.per_unit(dir, unit, iv, b.bytes_mut())
            })
            .same_code(code(bits, verb, best, unit, "one unit at a time")),
            Imp::new(system_openssl(), Kind::Peer, || {
                ossl.run(unit, iv, src, c.bytes_mut())
            }),
            Imp::new("xts-mode", Kind::Peer, || xm(d.bytes_mut())),
        ];
        #[cfg(mdu_openssl_peer)]
        {
            let name = short_name(mdu_bench::openssl_peer::version());
            imps.push(Imp::new(format!("{name} EVP"), Kind::Peer, || {
                recent(src, r.bytes_mut())
            }));
            imps.push(Imp::new(
                format!("{name} one 1 MiB message"),
                Kind::Peer,
                || recent_long(src, rl.bytes_mut()),
            ));
        }
        if bound != AesBound::None {
            imps.push(Imp::new(bound.label(), Kind::Bound, || {
                black_box(bound::ecb_encrypt(bound, &rk, e.bytes_mut()));
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
        id: format!("xts{bits}-{verb}"),
        title: format!("XTS-AES-{bits} {verb}, 1 MiB requests"),
        unit: Unit::Throughput,
        x_label: Some("data-unit size (bytes)".to_string()),
        notes: vec![
            format!(
                "mdu backend: {best:?}. OpenSSL: one EVP context, IV re-set per unit, out of \
                 place; \"one 1 MiB message\" is the same context on the whole request as one \
                 data unit (a different, easier workload: its best case). xts-mode: \
                 `encrypt_sector` per unit. The bound is AES-{bits}-ECB over the same bytes with \
                 the widest AES instructions of the CPU and no tweak work."
            ),
            format!("System OpenSSL: {}.", openssl::version::version()),
            recent_openssl_note(),
        ],
        cases,
    })
}

/// Every backend on the same workload: what the dispatch chooses between.
fn backends(ctx: &Ctx) -> Result<Table, String> {
    let k = key(64);
    let iv = Iv::plain64(FIRST);
    let input = Buf::random(REQUEST, 77);
    let mut want = input.bytes().to_vec();
    xts_mode(&k, Dir::Enc, 4096, iv)(&mut want);
    let mut bufs = Vec::new();
    let mut ciphers = Vec::new();
    for &b in Backend::available() {
        let x = Xts::new(&k, b);
        let mut buf = Buf::random(REQUEST, b.rank() as u64);
        buf.bytes_mut().copy_from_slice(input.bytes());
        x.batched(Dir::Enc, 4096, iv, buf.bytes_mut());
        check(&format!("{b:?}"), buf.bytes(), &want)?;
        bufs.push(buf);
        ciphers.push((b, x));
    }
    let imps = ciphers
        .iter()
        .zip(bufs.iter_mut())
        .map(|((b, x), buf)| {
            Imp::new(format!("{b:?}"), Kind::Mdu, move || {
                x.batched(Dir::Enc, 4096, iv, buf.bytes_mut())
            })
            .same_code(code(256, "encrypt", *b, 4096, "batched"))
        })
        .collect();
    let cases = vec![case(ctx, "4096-byte units", REQUEST, None, imps)];
    Ok(Table {
        id: "xts-backends".to_string(),
        title: "XTS-AES-256 encrypt by backend, 1 MiB of 4096-byte units".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes: vec!["Ratios are against the first (best) backend.".to_string()],
        cases,
    })
}

/// Every SIMD backend, forced, against the AES bound of its own vector
/// width: what each width achieves of what its AES instructions allow, in
/// bytes per cycle at the clock measured in the same run.
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
        let mut notes = Vec::new();
        let mut per_cycle_cells = Vec::new();
        let mut long_cells = Vec::new();
        #[allow(unused_mut)] // filled only when the recent OpenSSL is built
        let mut openssl_cells: Vec<String> = Vec::new();
        for (key_len, dir, unit) in [
            (64, Dir::Enc, 512),
            (64, Dir::Dec, 512),
            (64, Dir::Enc, 4096),
            (64, Dir::Dec, 4096),
            (32, Dir::Enc, 512),
            (32, Dir::Enc, 4096),
        ] {
            let k = key(key_len);
            let xts = Xts::new(&k, b);
            let iv = Iv::plain64(FIRST);
            let input = Buf::random(REQUEST, unit as u64 ^ 0x5a);
            let mut want = input.bytes().to_vec();
            xts_mode(&k, dir, unit, iv)(&mut want);
            let mut a = Buf::random(REQUEST, 1);
            a.bytes_mut().copy_from_slice(input.bytes());
            xts.batched(dir, unit, iv, a.bytes_mut());
            check(&format!("{b:?} batched {unit}"), a.bytes(), &want)?;
            let mut o = Buf::random(REQUEST, 2);
            o.bytes_mut().copy_from_slice(input.bytes());
            xts.per_unit(dir, unit, iv, o.bytes_mut());
            check(&format!("{b:?} one at a time {unit}"), o.bytes(), &want)?;
            let (xa, xb) = (xts.clone(), xts.clone());
            let verb = if dir == Dir::Enc {
                "encrypt"
            } else {
                "decrypt"
            };
            let bits = key_len * 4;
            let mut imps = vec![
                Imp::new(format!("{b:?} batched"), Kind::Mdu, || {
                    xa.batched(dir, unit, iv, a.bytes_mut())
                })
                .same_code(code(bits, verb, b, unit, "batched")),
                Imp::new(format!("{b:?} one unit at a time"), Kind::Mdu, || {
                    xb.per_unit(dir, unit, iv, o.bytes_mut())
                })
                .same_code(code(bits, verb, b, unit, "one unit at a time")),
            ];
            if let Some((how, width)) = own {
                imps.push(ecb_bound_row(how, width, &k[..key_len / 2], REQUEST));
            }
            // The same backend on one message of the whole request: the
            // rate the units should reach (the kernel's long-message loop).
            let mut long_want = input.bytes().to_vec();
            xts_mode(&k, dir, REQUEST, iv)(&mut long_want);
            let mut l = Buf::random(REQUEST, 3);
            l.bytes_mut().copy_from_slice(input.bytes());
            xts.batched(dir, REQUEST, iv, l.bytes_mut());
            check(&format!("{b:?} one 1 MiB message"), l.bytes(), &long_want)?;
            let xl = xts.clone();
            imps.push(Imp::new(
                format!("{b:?} one 1 MiB message"),
                Kind::Mdu,
                move || xl.batched(dir, REQUEST, iv, l.bytes_mut()),
            ));
            // The recent OpenSSL's one long message where its XTS code has
            // this width: zmm when its AVX-512 path is eligible, else xmm.
            #[cfg(mdu_openssl_peer)]
            if same_width_as_openssl(b) {
                let mut recent = recent_openssl(&k, dir, REQUEST, iv);
                let mut r = Buf::random(REQUEST, 4);
                recent(input.bytes(), r.bytes_mut());
                check("recent OpenSSL one message", r.bytes(), &long_want)?;
                let src = input.bytes();
                imps.push(Imp::new(
                    format!(
                        "{} one 1 MiB message",
                        short_name(mdu_bench::openssl_peer::version())
                    ),
                    Kind::Peer,
                    move || recent(src, r.bytes_mut()),
                ));
            }
            let name = format!("AES-{bits} {verb}, {unit}-byte units");
            let c = case(ctx, name, REQUEST, None, imps);
            per_cycle_cells.extend(per_cycle_cell(ctx, &c));
            // The batched rate over the rate of the row `name` (medians are
            // times).
            let over = |name: &str| {
                let long = c.results.iter().find(|s| s.name == name)?;
                Some(format!(
                    "{} {:.2}",
                    c.name,
                    long.median() / c.results[0].median()
                ))
            };
            long_cells.extend(over(&format!("{b:?} one 1 MiB message")));
            #[cfg(mdu_openssl_peer)]
            openssl_cells.extend(over(&format!(
                "{} one 1 MiB message",
                short_name(mdu_bench::openssl_peer::version())
            )));
            cases.push(c);
        }
        notes.push(format!(
            "Units ÷ one long message (the batched rate over the rate of one 1 MiB message \
             on the same backend; the goal is ≥ 0.95 at 512 bytes and ≥ 0.98 at 4 KiB): {}.",
            long_cells.join("; ")
        ));
        if !openssl_cells.is_empty() {
            notes.push(format!(
                "Units ÷ the recent OpenSSL's one long message on the same vector width (the \
                 goal is ≥ 1): {}.",
                openssl_cells.join("; ")
            ));
        }
        if let Some(ghz) = ctx.clock_ghz {
            notes.push(format!(
                "Bytes per cycle at {ghz:.2} GHz (batched / bound): {}.",
                per_cycle_cells.join("; ")
            ));
        }
        let width = own.map_or("its own width", |(_, w)| w);
        notes.insert(
            0,
            format!(
                "{b:?} forced. The bound is AES-ECB with the same key size on {width} \
                 registers, eight vectors in flight, over the same bytes: the AES \
                 instruction throughput of that width. Decryption is compared with the \
                 encryption bound (the rounds cost the same)."
            ),
        );
        tables.push(Table {
            id: format!("xts-width-{}", format!("{b:?}").to_lowercase()),
            title: format!("XTS-AES, backend {b:?} against the AES bound of its width"),
            unit: Unit::Throughput,
            x_label: None,
            notes,
            cases,
        });
    }
    Ok(tables)
}

/// The batched API must not slow down the common single-unit request.
fn single_unit(ctx: &Ctx) -> Result<Table, String> {
    let k = key(64);
    let c = XtsAes256::new(&k).map_err(|e| e.to_string())?;
    let mut cases = Vec::new();
    for unit in [512usize, 4096] {
        let units = DataUnits::new(c.clone(), unit).map_err(|e| e.to_string())?;
        let mut a = Buf::random(unit, 9);
        let mut b = Buf::random(unit, 9);
        units
            .encrypt(Iv::plain64(5), a.bytes_mut())
            .map_err(|e| e.to_string())?;
        c.encrypt(Iv::plain64(5), b.bytes_mut())
            .map_err(|e| e.to_string())?;
        check("single unit", a.bytes(), b.bytes())?;
        let cc = c.clone();
        let imps = vec![
            Imp::new("DataUnits::encrypt", Kind::Mdu, || {
                units.encrypt(Iv::plain64(5), a.bytes_mut()).expect("valid")
            }),
            Imp::new("XtsAes256::encrypt (direct)", Kind::Mdu, || {
                cc.encrypt(Iv::plain64(5), b.bytes_mut()).expect("valid")
            }),
        ];
        cases.push(case(ctx, format!("one {unit}-byte unit"), unit, None, imps));
    }
    Ok(Table {
        id: "xts-single-unit".to_string(),
        title: "XTS-AES-256: one-unit request through DataUnits vs the direct call".to_string(),
        unit: Unit::Latency,
        x_label: None,
        notes: vec!["×1.00 means no overhead from the batched API.".to_string()],
        cases,
    })
}

/// `par_encrypt` on 1, 2, 4, ... threads up to every core: one case per
/// thread count, so the throughput chart draws the scaling as a line.
fn parallel(ctx: &Ctx) -> Result<Table, String> {
    let len = if ctx.full { 256 << 20 } else { 64 << 20 };
    let k = key(64);
    let units = DataUnits::new(XtsAes256::new(&k).map_err(|e| e.to_string())?, 4096)
        .map_err(|e| e.to_string())?;
    let mut want = Buf::random(len, 11);
    units
        .encrypt(Iv::ZERO, want.bytes_mut())
        .map_err(|e| e.to_string())?;
    let mut counts: Vec<usize> = (0..)
        .map(|i| 1usize << i)
        .take_while(|&n| n < ctx.threads)
        .collect();
    counts.push(ctx.threads);
    let mut cases = Vec::new();
    let mut one = None;
    let mut scaling = Vec::new();
    for n in counts {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| format!("a pool of {n} threads: {e}"))?;
        let mut b = Buf::random(len, 11);
        pool.install(|| units.par_encrypt(Iv::ZERO, b.bytes_mut()))
            .map_err(|e| e.to_string())?;
        check(
            &format!("par_encrypt, {n} threads"),
            b.bytes(),
            want.bytes(),
        )?;
        let imps = vec![Imp::new("par_encrypt", Kind::Mdu, || {
            pool.install(|| units.par_encrypt(Iv::ZERO, b.bytes_mut()))
                .expect("valid")
        })];
        let threads = if n == 1 { "thread" } else { "threads" };
        let c = case(ctx, format!("{n} {threads}"), len, Some(n as f64), imps);
        let ns = c.results[0].median();
        let base = *one.get_or_insert(ns);
        if n > 1 {
            scaling.push(format!("{n} threads {:.2}×", base / ns));
        }
        cases.push(c);
    }
    Ok(Table {
        id: "xts-parallel".to_string(),
        title: format!(
            "XTS-AES-256 encrypt across threads, {} MiB of 4096-byte units",
            len >> 20
        ),
        unit: Unit::Throughput,
        x_label: Some("threads".to_string()),
        notes: vec![if scaling.is_empty() {
            "One logical core: nothing to scale to.".to_string()
        } else {
            format!(
                "Against one thread: {} ({} logical cores).",
                scaling.join(", "),
                ctx.threads
            )
        }],
        cases,
    })
}

/// XTS over the other block ciphers of dm-crypt (`BlockXts`): batched
/// requests go through the auto-splitter, one unit per call, so batching
/// buys them nothing; the table shows that, and the xts-mode crate over
/// the same RustCrypto cipher beside them.
fn block_ciphers(ctx: &Ctx) -> Result<Table, String> {
    fn one<C>(ctx: &Ctx, name: &str, key: &[u8]) -> Result<crate::report::CaseResult, String>
    where
        C: mdu_aes::BlockAes + zeroize::ZeroizeOnDrop,
    {
        let (k1, k2) = key.split_at(key.len() / 2);
        let xts = BlockXts::<C>::new(key).map_err(|e| e.to_string())?;
        let oracle = xts_mode::Xts128::<C>::new(
            C::new_from_slice(k1).map_err(|e| e.to_string())?,
            C::new_from_slice(k2).map_err(|e| e.to_string())?,
        );
        let iv = Iv::plain64(FIRST);
        let input = Buf::random(REQUEST, 0xb10c);
        let mut want = input.bytes().to_vec();
        for (i, u) in want.chunks_mut(4096).enumerate() {
            oracle.encrypt_sector(u, iv.advance(i as u128).0.into());
        }
        let units = DataUnits::new(&xts, 4096).map_err(|e| e.to_string())?;
        let mut a = Buf::random(REQUEST, 1);
        a.bytes_mut().copy_from_slice(input.bytes());
        units
            .encrypt(iv, a.bytes_mut())
            .map_err(|e| e.to_string())?;
        check(&format!("{name} BlockXts"), a.bytes(), &want)?;
        let mut b = Buf::random(REQUEST, 2);
        let mut c = Buf::random(REQUEST, 3);
        let imps = vec![
            Imp::new("mdu BlockXts batched", Kind::Mdu, || {
                units.encrypt(iv, a.bytes_mut()).expect("valid")
            }),
            Imp::new("mdu BlockXts one unit at a time", Kind::Mdu, || {
                for (i, u) in b.bytes_mut().chunks_mut(4096).enumerate() {
                    xts.encrypt(iv.advance(i as u128), u).expect("valid");
                }
            }),
            Imp::new("xts-mode", Kind::Peer, || {
                for (i, u) in c.bytes_mut().chunks_mut(4096).enumerate() {
                    oracle.encrypt_sector(u, iv.advance(i as u128).0.into());
                }
            }),
        ];
        Ok(case(
            ctx,
            format!("{name}, 4096-byte units"),
            REQUEST,
            None,
            imps,
        ))
    }
    let key = key(64);
    let cases = vec![
        one::<serpent::Serpent>(ctx, "serpent-xts-plain64, 512-bit key", &key)?,
        one::<twofish::Twofish>(ctx, "twofish-xts-plain64, 512-bit key", &key)?,
        one::<camellia::Camellia256>(ctx, "camellia-xts-plain64, 512-bit key", &key)?,
        one::<sm4::Sm4>(ctx, "sm4-xts-plain64, 256-bit key", &key[..32])?,
    ];
    Ok(Table {
        id: "xts-block-ciphers".to_string(),
        title: "XTS over other block ciphers (BlockXts, portable), encrypt, 1 MiB requests"
            .to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes: vec![
            "A generic block cipher has no multi-unit kernel: a batched request is split into \
             one call per unit, so batched and one-at-a-time are the same code, and both run \
             the portable XTS of mdu-xts over the RustCrypto cipher."
                .to_string(),
        ],
        cases,
    })
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    let units: &[usize] = &[512, 4096, 65536];
    Ok(vec![
        table(ctx, 64, Dir::Enc, units)?,
        table(ctx, 64, Dir::Dec, units)?,
        table(ctx, 32, Dir::Enc, units)?,
        table(ctx, 32, Dir::Dec, units)?,
        backends(ctx)?,
    ]
    .into_iter()
    .chain(widths(ctx)?)
    .chain([single_unit(ctx)?, block_ciphers(ctx)?, parallel(ctx)?])
    .collect())
}
