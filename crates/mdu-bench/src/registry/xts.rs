//! XTS-AES: mdu batched against mdu one unit at a time, the `xts-mode`
//! crate, OpenSSL's EVP interface (the system one and the recent one
//! built from source) and the AES-ECB bound; every backend; one-unit
//! requests; `par_encrypt` across threads; and XTS over the other block
//! ciphers of dm-crypt.
//!
//! ```no_run
//! for group in mdu_bench::registry::xts::groups() {
//!     println!("{}: {} cases", group.name, group.cases.len());
//! }
//! ```

use std::rc::Rc;

use mdu_xts::{Backend, BlockXts, DataUnits, Direction, Iv, XtsAes128, XtsAes256};

use super::evp::{Evp, system_label};
use super::{
    Case, Group, Imp, Kind, UNITS, aes_bound_row, check, ecb_bound_row, key, verb, width_bound,
};
use crate::bound::AesBound;
use crate::buffer::Buf;

const REQUEST: usize = 1 << 20;
const FIRST: u64 = 0x1_0000_0000 - 7;

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

    fn batched(&self, dir: Direction, unit: usize, iv: Iv, buf: &mut [u8]) {
        macro_rules! go {
            ($c:expr) => {{
                let u = DataUnits::new($c, unit).expect("unit size");
                match dir {
                    Direction::Encrypt => u.encrypt(iv, buf),
                    Direction::Decrypt => u.decrypt(iv, buf),
                }
                .expect("valid request")
            }};
        }
        match self {
            Xts::A128(c) => go!(c),
            Xts::A256(c) => go!(c),
        }
    }

    fn one(&self, dir: Direction, iv: Iv, unit: &mut [u8]) {
        let r = match (self, dir) {
            (Xts::A128(c), Direction::Encrypt) => c.encrypt(iv, unit),
            (Xts::A128(c), Direction::Decrypt) => c.decrypt(iv, unit),
            (Xts::A256(c), Direction::Encrypt) => c.encrypt(iv, unit),
            (Xts::A256(c), Direction::Decrypt) => c.decrypt(iv, unit),
        };
        r.expect("valid unit");
    }

    fn per_unit(&self, dir: Direction, unit: usize, iv: Iv, buf: &mut [u8]) {
        for (i, u) in buf.chunks_mut(unit).enumerate() {
            self.one(dir, iv.advance(i as u128), u);
        }
    }
}

/// The recent OpenSSL (built from source in release builds), one unit at a
/// time with the IV re-set per unit as for the system OpenSSL; with
/// `unit == REQUEST`, its best case, one long message.
#[cfg(mdu_openssl_peer)]
fn recent_openssl(
    key: &[u8],
    dir: Direction,
    unit: usize,
    iv: Iv,
) -> impl FnMut(&[u8], &mut [u8]) + use<> {
    let mut c =
        crate::openssl_peer::Cipher::xts(key, dir == Direction::Encrypt).expect("an XTS key");
    move |src: &[u8], dst: &mut [u8]| c.crypt_units(unit, iv, src, dst)
}

/// Whether the recent OpenSSL's XTS code runs on backend `b`'s vector
/// width on this CPU: its AVX-512 path on zmm, else AES-NI on xmm (it has
/// no ymm XTS code).
#[cfg(mdu_openssl_peer)]
fn same_width_as_openssl(b: Backend) -> bool {
    match b {
        Backend::Vaes512 => crate::openssl_peer::xts_avx512(),
        Backend::AesNi => !crate::openssl_peer::xts_avx512(),
        _ => false,
    }
}

/// The `xts-mode` crate, sector by sector with the same IVs.
fn xts_mode(key: &[u8], dir: Direction, unit: usize, iv: Iv) -> impl FnMut(&mut [u8]) + use<> {
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
                (X::A128(x), Direction::Encrypt) => x.encrypt_sector(u, t),
                (X::A128(x), Direction::Decrypt) => x.decrypt_sector(u, t),
                (X::A256(x), Direction::Encrypt) => x.encrypt_sector(u, t),
                (X::A256(x), Direction::Decrypt) => x.decrypt_sector(u, t),
            }
        }
    }
}

/// The [`Imp::same_code`] name of an XTS row: the same key size,
/// direction, backend, unit size and path over 1 MiB is the same code,
/// whichever table times it.
fn code(bits: usize, dir: Direction, backend: Backend, unit: usize, path: &str) -> String {
    format!("xts/aes{bits}/{}/{backend:?}/{unit}/{path}", verb(dir))
}

/// A buffer of `REQUEST` bytes (`seed`'s alignment) holding `input`.
fn copy_of(input: &Buf, seed: u64) -> Buf {
    let mut b = Buf::random(REQUEST, seed);
    b.bytes_mut().copy_from_slice(input.bytes());
    b
}

/// A key size (32 or 64 bytes) and a direction over [`UNITS`], 1 MiB
/// requests on the best backend: mdu batched and one unit at a time, the
/// OpenSSLs, `xts-mode` and the widest AES bound. Group
/// `xts<bits>-<verb>`.
///
/// ```no_run
/// let g = mdu_bench::registry::xts::requests(64, mdu_core::Direction::Encrypt);
/// assert_eq!(g.name, "xts256-encrypt");
/// ```
pub fn requests(key_len: usize, dir: Direction) -> Group {
    let bits = key_len * 4;
    let mut group = Group::new(format!("xts{bits}-{}", verb(dir)), false);
    for unit in UNITS {
        group = group.case(move || request(key_len, dir, unit));
    }
    group
}

fn request(key_len: usize, dir: Direction, unit: usize) -> Result<Case, String> {
    let k = key(key_len);
    let best = Backend::detect();
    let xts = Xts::new(&k, best);
    let iv = Iv::plain64(FIRST);
    let bits = key_len * 4;
    let input = Rc::new(Buf::random(REQUEST, unit as u64 ^ key_len as u64));
    // The reference: the xts-mode crate, one sector at a time.
    let mut want = input.bytes().to_vec();
    xts_mode(&k, dir, unit, iv)(&mut want);

    let mut a = copy_of(&input, 1);
    xts.batched(dir, unit, iv, a.bytes_mut());
    check(&format!("mdu batched {unit}"), a.bytes(), &want)?;
    let mut b = copy_of(&input, 2);
    xts.per_unit(dir, unit, iv, b.bytes_mut());
    check(&format!("mdu per unit {unit}"), b.bytes(), &want)?;
    let mut ossl = Evp::xts(&k, dir);
    let mut c = Buf::random(REQUEST + 16, 3);
    ossl.run(unit, iv, input.bytes(), c.bytes_mut());
    check(&format!("OpenSSL {unit}"), &c.bytes()[..REQUEST], &want)?;
    let mut d = Buf::random(REQUEST, 4);
    let mut xm = xts_mode(&k, dir, unit, iv);

    let (xa, xb) = (xts.clone(), xts);
    let src = Rc::clone(&input);
    let mut case = Case::new(format!("{unit}-byte units"), REQUEST, Some(unit as f64))
        .imp(
            Imp::new("mdu batched", Kind::Mdu, move || {
                xa.batched(dir, unit, iv, a.bytes_mut())
            })
            .same_code(code(bits, dir, best, unit, "batched")),
        )
        .imp(
            Imp::new("mdu one unit at a time", Kind::Mdu, move || {
                xb.per_unit(dir, unit, iv, b.bytes_mut())
            })
            .same_code(code(bits, dir, best, unit, "one unit at a time")),
        )
        .imp(Imp::new(system_label(), Kind::Peer, move || {
            ossl.run(unit, iv, src.bytes(), c.bytes_mut())
        }))
        .imp(Imp::new("xts-mode", Kind::Peer, move || xm(d.bytes_mut())));
    #[cfg(mdu_openssl_peer)]
    {
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
        let name = super::evp::recent_name();
        let (src, src_long) = (Rc::clone(&input), Rc::clone(&input));
        case = case
            .imp(Imp::new(format!("{name} EVP"), Kind::Peer, move || {
                recent(src.bytes(), r.bytes_mut())
            }))
            .imp(Imp::new(
                format!("{name} one 1 MiB message"),
                Kind::Peer,
                move || recent_long(src_long.bytes(), rl.bytes_mut()),
            ));
    }
    case.imps.extend(aes_bound_row(&k[..key_len / 2], REQUEST));
    Ok(case)
}

/// Every backend on the same workload, AES-256 encryption of 4096-byte
/// units: what the dispatch chooses between. Group `xts-backends`.
///
/// ```no_run
/// assert_eq!(mdu_bench::registry::xts::backends().cases.len(), 1);
/// ```
pub fn backends() -> Group {
    Group::new("xts-backends", false).case(|| {
        let k = key(64);
        let iv = Iv::plain64(FIRST);
        let input = Buf::random(REQUEST, 77);
        let mut want = input.bytes().to_vec();
        xts_mode(&k, Direction::Encrypt, 4096, iv)(&mut want);
        let mut case = Case::new("4096-byte units", REQUEST, None);
        for &b in Backend::available() {
            let x = Xts::new(&k, b);
            let mut buf = copy_of(&input, b.rank() as u64);
            x.batched(Direction::Encrypt, 4096, iv, buf.bytes_mut());
            check(&format!("{b:?}"), buf.bytes(), &want)?;
            case = case.imp(
                Imp::new(format!("{b:?}"), Kind::Mdu, move || {
                    x.batched(Direction::Encrypt, 4096, iv, buf.bytes_mut())
                })
                .same_code(code(256, Direction::Encrypt, b, 4096, "batched")),
            );
        }
        Ok(case)
    })
}

/// The AES-ECB bound of backend `b`'s own vector width, if this CPU runs
/// it.
///
/// ```
/// assert_eq!(mdu_bench::registry::xts::own_bound(mdu_xts::Backend::Generic), None);
/// ```
pub fn own_bound(b: Backend) -> Option<(AesBound, &'static str)> {
    width_bound(match b {
        Backend::Vaes512 => AesBound::Vaes512,
        Backend::Vaes256 => AesBound::Vaes256,
        Backend::AesNi => AesBound::AesNi,
        _ => AesBound::None,
    })
}

/// The row of backend `b` on one message of the whole request, in the
/// width tables.
pub fn long_row(b: Backend) -> String {
    format!("{b:?} one 1 MiB message")
}

/// The recent OpenSSL's one long message, in the width tables.
#[cfg(mdu_openssl_peer)]
pub fn recent_long_row() -> String {
    format!("{} one 1 MiB message", super::evp::recent_name())
}

/// Every SIMD backend this CPU runs, one group each (see [`width`]).
///
/// ```no_run
/// for g in mdu_bench::registry::xts::widths() {
///     assert!(g.name.starts_with("xts-width-"));
/// }
/// ```
pub fn widths() -> Vec<Group> {
    Backend::available()
        .iter()
        .filter(|&&b| b != Backend::Generic)
        .map(|&b| width(b))
        .collect()
}

/// Backend `b`, forced, against the AES bound of its own vector width, and
/// on one message of the whole request (the rate the units should reach),
/// with the recent OpenSSL's one message where its XTS code has this
/// width. Group `xts-width-<backend>`.
///
/// ```no_run
/// let g = mdu_bench::registry::xts::width(mdu_xts::Backend::AesNi);
/// assert_eq!(g.name, "xts-width-aesni");
/// ```
pub fn width(b: Backend) -> Group {
    let mut group = Group::new(
        format!("xts-width-{}", format!("{b:?}").to_lowercase()),
        false,
    );
    for (key_len, dir, unit) in [
        (64, Direction::Encrypt, 512),
        (64, Direction::Decrypt, 512),
        (64, Direction::Encrypt, 4096),
        (64, Direction::Decrypt, 4096),
        (32, Direction::Encrypt, 512),
        (32, Direction::Encrypt, 4096),
    ] {
        group = group.case(move || width_case(b, key_len, dir, unit));
    }
    group
}

fn width_case(b: Backend, key_len: usize, dir: Direction, unit: usize) -> Result<Case, String> {
    let k = key(key_len);
    let xts = Xts::new(&k, b);
    let iv = Iv::plain64(FIRST);
    let input = Rc::new(Buf::random(REQUEST, unit as u64 ^ 0x5a));
    let mut want = input.bytes().to_vec();
    xts_mode(&k, dir, unit, iv)(&mut want);
    let mut a = copy_of(&input, 1);
    xts.batched(dir, unit, iv, a.bytes_mut());
    check(&format!("{b:?} batched {unit}"), a.bytes(), &want)?;
    let mut o = copy_of(&input, 2);
    xts.per_unit(dir, unit, iv, o.bytes_mut());
    check(&format!("{b:?} one at a time {unit}"), o.bytes(), &want)?;
    let (xa, xb) = (xts.clone(), xts.clone());
    let bits = key_len * 4;
    let name = format!("AES-{bits} {}, {unit}-byte units", verb(dir));
    let mut case = Case::new(name, REQUEST, None)
        .imp(
            Imp::new(format!("{b:?} batched"), Kind::Mdu, move || {
                xa.batched(dir, unit, iv, a.bytes_mut())
            })
            .same_code(code(bits, dir, b, unit, "batched")),
        )
        .imp(
            Imp::new(format!("{b:?} one unit at a time"), Kind::Mdu, move || {
                xb.per_unit(dir, unit, iv, o.bytes_mut())
            })
            .same_code(code(bits, dir, b, unit, "one unit at a time")),
        );
    if let Some((how, width)) = own_bound(b) {
        case = case.imp(ecb_bound_row(how, width, &k[..key_len / 2], REQUEST));
    }
    // The same backend on one message of the whole request: the rate the
    // units should reach (the kernel's long-message loop).
    let mut long_want = input.bytes().to_vec();
    xts_mode(&k, dir, REQUEST, iv)(&mut long_want);
    let mut l = copy_of(&input, 3);
    xts.batched(dir, REQUEST, iv, l.bytes_mut());
    check(&long_row(b), l.bytes(), &long_want)?;
    case = case.imp(Imp::new(long_row(b), Kind::Mdu, move || {
        xts.batched(dir, REQUEST, iv, l.bytes_mut())
    }));
    // The recent OpenSSL's one long message where its XTS code has this
    // width: zmm when its AVX-512 path is eligible, else xmm.
    #[cfg(mdu_openssl_peer)]
    if same_width_as_openssl(b) {
        let mut recent = recent_openssl(&k, dir, REQUEST, iv);
        let mut r = Buf::random(REQUEST, 4);
        recent(input.bytes(), r.bytes_mut());
        check("recent OpenSSL one message", r.bytes(), &long_want)?;
        case = case.imp(Imp::new(recent_long_row(), Kind::Peer, move || {
            recent(input.bytes(), r.bytes_mut())
        }));
    }
    Ok(case)
}

/// A one-unit request through `DataUnits` against the direct call: the
/// batched API must not slow down the common case. Group
/// `xts-single-unit`.
///
/// ```
/// let mut g = mdu_bench::registry::xts::single_unit();
/// let case = g.cases.remove(0)().expect("checked");
/// assert_eq!(case.name, "one 512-byte unit");
/// ```
pub fn single_unit() -> Group {
    let mut group = Group::new("xts-single-unit", false);
    for unit in [512usize, 4096] {
        group = group.case(move || {
            let c = XtsAes256::new(&key(64)).map_err(|e| e.to_string())?;
            let units = DataUnits::new(c.clone(), unit).map_err(|e| e.to_string())?;
            let mut a = Buf::random(unit, 9);
            let mut b = Buf::random(unit, 9);
            units
                .encrypt(Iv::plain64(5), a.bytes_mut())
                .map_err(|e| e.to_string())?;
            c.encrypt(Iv::plain64(5), b.bytes_mut())
                .map_err(|e| e.to_string())?;
            check("single unit", a.bytes(), b.bytes())?;
            Ok(Case::new(format!("one {unit}-byte unit"), unit, None)
                .imp(Imp::new("DataUnits::encrypt", Kind::Mdu, move || {
                    units.encrypt(Iv::plain64(5), a.bytes_mut()).expect("valid")
                }))
                .imp(Imp::new(
                    "XtsAes256::encrypt (direct)",
                    Kind::Mdu,
                    move || c.encrypt(Iv::plain64(5), b.bytes_mut()).expect("valid"),
                )))
        });
    }
    group
}

/// The thread counts of [`parallel`]: 1, 2, 4, ... up to `threads`, and
/// `threads`.
///
/// ```
/// assert_eq!(mdu_bench::registry::xts::thread_counts(6), [1, 2, 4, 6]);
/// ```
pub fn thread_counts(threads: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = (0..)
        .map(|i| 1usize << i)
        .take_while(|&n| n < threads)
        .collect();
    counts.push(threads);
    counts
}

/// `par_encrypt` of `len` bytes of 4096-byte units on each of
/// [`thread_counts`]: one case per count. Group `xts-parallel`.
///
/// ```no_run
/// assert_eq!(mdu_bench::registry::xts::parallel(64 << 20, 2).cases.len(), 2);
/// ```
pub fn parallel(len: usize, threads: usize) -> Group {
    let want = Rc::new(std::cell::OnceCell::new());
    let mut group = Group::new("xts-parallel", true);
    for n in thread_counts(threads) {
        let want = Rc::clone(&want);
        group = group.case(move || {
            let units = DataUnits::new(XtsAes256::new(&key(64)).map_err(|e| e.to_string())?, 4096)
                .map_err(|e| e.to_string())?;
            if want.get().is_none() {
                let mut w = Buf::random(len, 11);
                units
                    .encrypt(Iv::ZERO, w.bytes_mut())
                    .map_err(|e| e.to_string())?;
                want.get_or_init(|| w);
            }
            let want: &Buf = want.get().expect("set above");
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
            let threads = if n == 1 { "thread" } else { "threads" };
            Ok(
                Case::new(format!("{n} {threads}"), len, Some(n as f64)).imp(Imp::new(
                    "par_encrypt",
                    Kind::Mdu,
                    move || {
                        pool.install(|| units.par_encrypt(Iv::ZERO, b.bytes_mut()))
                            .expect("valid")
                    },
                )),
            )
        });
    }
    group
}

/// XTS over the other block ciphers of dm-crypt (`BlockXts`), encrypt,
/// 1 MiB of 4096-byte units: batched, one unit at a time, and the
/// xts-mode crate over the same RustCrypto cipher. Group
/// `xts-block-ciphers`.
///
/// ```no_run
/// assert_eq!(mdu_bench::registry::xts::block_ciphers().cases.len(), 4);
/// ```
pub fn block_ciphers() -> Group {
    fn one<C>(name: &str, key: &[u8]) -> Result<Case, String>
    where
        C: mdu_aes::BlockAes + zeroize::ZeroizeOnDrop + 'static,
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
        let units = DataUnits::new(BlockXts::<C>::new(key).map_err(|e| e.to_string())?, 4096)
            .map_err(|e| e.to_string())?;
        let mut a = copy_of(&input, 1);
        units
            .encrypt(iv, a.bytes_mut())
            .map_err(|e| e.to_string())?;
        check(&format!("{name} BlockXts"), a.bytes(), &want)?;
        let mut b = Buf::random(REQUEST, 2);
        let mut c = Buf::random(REQUEST, 3);
        Ok(Case::new(format!("{name}, 4096-byte units"), REQUEST, None)
            .imp(Imp::new("mdu BlockXts batched", Kind::Mdu, move || {
                units.encrypt(iv, a.bytes_mut()).expect("valid")
            }))
            .imp(Imp::new(
                "mdu BlockXts one unit at a time",
                Kind::Mdu,
                move || {
                    for (i, u) in b.bytes_mut().chunks_mut(4096).enumerate() {
                        xts.encrypt(iv.advance(i as u128), u).expect("valid");
                    }
                },
            ))
            .imp(Imp::new("xts-mode", Kind::Peer, move || {
                for (i, u) in c.bytes_mut().chunks_mut(4096).enumerate() {
                    oracle.encrypt_sector(u, iv.advance(i as u128).0.into());
                }
            })))
    }
    Group::new("xts-block-ciphers", false)
        .case(|| one::<serpent::Serpent>("serpent-xts-plain64, 512-bit key", &key(64)))
        .case(|| one::<twofish::Twofish>("twofish-xts-plain64, 512-bit key", &key(64)))
        .case(|| one::<camellia::Camellia256>("camellia-xts-plain64, 512-bit key", &key(64)))
        .case(|| one::<sm4::Sm4>("sm4-xts-plain64, 256-bit key", &key(64)[..32]))
}

/// Every XTS group, in the report's order, `par_encrypt` over 64 MiB on
/// up to every core.
///
/// ```no_run
/// assert!(mdu_bench::registry::xts::groups().len() >= 8);
/// ```
pub fn groups() -> Vec<Group> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut groups = vec![
        requests(64, Direction::Encrypt),
        requests(64, Direction::Decrypt),
        requests(32, Direction::Encrypt),
        requests(32, Direction::Decrypt),
        backends(),
    ];
    groups.extend(widths());
    groups.extend([single_unit(), block_ciphers(), parallel(64 << 20, threads)]);
    groups
}
