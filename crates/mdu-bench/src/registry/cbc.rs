//! AES-CBC: mdu batched (many units' chains side by side) against mdu one
//! unit at a time, OpenSSL's EVP interface and the AES-ECB bound of each
//! width; dm-crypt IV modes through mdu-dmcrypt; and batches of units with
//! unrelated IVs for CBC and XTS.
//!
//! ```no_run
//! for group in mdu_bench::registry::cbc::groups() {
//!     println!("{}: {} cases", group.name, group.cases.len());
//! }
//! ```

use std::rc::Rc;

use mdu_cbc::{AesCbc128, AesCbc256, Backend, DataUnitCipher, DataUnitSize, Direction, Iv};
use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
use mdu_xts::XtsAes256;

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

/// The reference: OpenSSL, one unit at a time, consecutive IVs from `iv`.
fn reference(key: &[u8], dir: Direction, unit: usize, iv: Iv, input: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; input.len() + 16];
    Evp::cbc(key, dir).run(unit, iv, input, &mut out);
    out.truncate(input.len());
    out
}

/// A buffer of `REQUEST` bytes (`seed`'s alignment) holding `input`.
fn copy_of(input: &Buf, seed: u64) -> Buf {
    let mut b = Buf::random(REQUEST, seed);
    b.bytes_mut().copy_from_slice(input.bytes());
    b
}

/// AES-256-CBC in one direction over the unit sizes of the XTS tables,
/// 1 MiB requests on the best backend: mdu batched, mdu one unit at a
/// time (a peer, so that the ratio shows what batching gains), the
/// OpenSSLs and the widest AES bound. Group `cbc256-<verb>`.
///
/// ```no_run
/// let g = mdu_bench::registry::cbc::requests(mdu_core::Direction::Decrypt);
/// assert_eq!(g.name, "cbc256-decrypt");
/// ```
pub fn requests(dir: Direction) -> Group {
    let mut group = Group::new(format!("cbc256-{}", verb(dir)), false);
    for unit in UNITS {
        group = group.case(move || request(dir, unit));
    }
    group
}

fn request(dir: Direction, unit: usize) -> Result<Case, String> {
    let k = key(32);
    let cbc = Cbc::new(&k, Backend::detect());
    let iv = Iv::plain64(FIRST);
    let input = Rc::new(Buf::random(REQUEST, unit as u64 ^ 0xcbc));
    let want = reference(&k, dir, unit, iv, input.bytes());
    let mut a = copy_of(&input, 1);
    cbc.batched(dir, unit, iv, a.bytes_mut());
    check(&format!("mdu batched {unit}"), a.bytes(), &want)?;
    let mut b = copy_of(&input, 2);
    cbc.per_unit(dir, unit, iv, b.bytes_mut());
    check(&format!("mdu per unit {unit}"), b.bytes(), &want)?;
    let mut ossl = Evp::cbc(&k, dir);
    let mut c = Buf::random(REQUEST + 16, 3);
    let (xa, xb) = (cbc.clone(), cbc);
    let src = Rc::clone(&input);
    #[allow(unused_mut)] // the recent OpenSSL's row only where it is built
    let mut case = Case::new(format!("{unit}-byte units"), REQUEST, Some(unit as f64))
        .imp(Imp::new("mdu batched", Kind::Mdu, move || {
            xa.batched(dir, unit, iv, a.bytes_mut())
        }))
        .imp(Imp::new("mdu one unit at a time", Kind::Peer, move || {
            xb.per_unit(dir, unit, iv, b.bytes_mut())
        }))
        .imp(Imp::new(system_label(), Kind::Peer, move || {
            ossl.run(unit, iv, src.bytes(), c.bytes_mut())
        }));
    #[cfg(mdu_openssl_peer)]
    {
        let mut recent =
            crate::openssl_peer::Cipher::cbc(&k, dir == Direction::Encrypt).expect("a CBC key");
        let mut run = move |dst: &mut [u8]| recent.crypt_units(unit, iv, input.bytes(), dst);
        let mut r = Buf::random(REQUEST, 6);
        run(r.bytes_mut());
        check(&format!("recent OpenSSL {unit}"), r.bytes(), &want)?;
        let name = super::evp::recent_name();
        case = case.imp(Imp::new(format!("{name} EVP"), Kind::Peer, move || {
            run(r.bytes_mut())
        }));
    }
    case.imps.extend(aes_bound_row(&k, REQUEST));
    Ok(case)
}

/// The CBC chains backend `b` encrypts side by side (units per batch).
///
/// ```
/// assert_eq!(mdu_bench::registry::cbc::chains(mdu_cbc::Backend::AesNi), 8);
/// ```
pub fn chains(b: Backend) -> usize {
    match b {
        Backend::AesNi | Backend::ArmCe => 8,
        _ => 16,
    }
}

/// The AES-ECB bound of backend `b`'s own vector width, if this CPU runs
/// it.
///
/// ```
/// assert_eq!(mdu_bench::registry::cbc::own_bound(mdu_cbc::Backend::Generic), None);
/// ```
pub fn own_bound(b: Backend) -> Option<(AesBound, &'static str)> {
    width_bound(match b {
        Backend::Vaes512 => AesBound::Vaes512,
        Backend::Vaes256 => AesBound::Vaes256,
        Backend::AesNi => AesBound::AesNi,
        _ => AesBound::None,
    })
}

/// The row of encryption's ceiling on backend `b` in the width tables.
///
/// ```
/// let row = mdu_bench::registry::cbc::ceiling_row(mdu_cbc::Backend::AesNi);
/// assert_eq!(row, "AesNi 8 chains of one long message");
/// ```
pub fn ceiling_row(b: Backend) -> String {
    format!("{b:?} {} chains of one long message", chains(b))
}

/// Every SIMD backend this CPU runs, one group each (see [`width`]).
///
/// ```no_run
/// for g in mdu_bench::registry::cbc::widths() {
///     assert!(g.name.starts_with("cbc-width-"));
/// }
/// ```
pub fn widths() -> Vec<Group> {
    Backend::available()
        .iter()
        .filter(|&&b| b != Backend::Generic)
        .map(|&b| width(b))
        .collect()
}

/// Backend `b`, forced, against the AES bound of its own vector width;
/// encryption also against its ceiling ([`ceiling_row`]: as many chains
/// as it runs side by side, each one long message). Group
/// `cbc-width-<backend>`.
///
/// ```no_run
/// let g = mdu_bench::registry::cbc::width(mdu_cbc::Backend::AesNi);
/// assert_eq!(g.name, "cbc-width-aesni");
/// ```
pub fn width(b: Backend) -> Group {
    let mut group = Group::new(
        format!("cbc-width-{}", format!("{b:?}").to_lowercase()),
        false,
    );
    for (key_len, dir, unit) in [
        (32, Direction::Encrypt, 512),
        (32, Direction::Decrypt, 512),
        (32, Direction::Encrypt, 4096),
        (32, Direction::Decrypt, 4096),
        (16, Direction::Encrypt, 4096),
    ] {
        group = group.case(move || width_case(b, key_len, dir, unit));
    }
    group
}

fn width_case(b: Backend, key_len: usize, dir: Direction, unit: usize) -> Result<Case, String> {
    let k = key(key_len);
    let cbc = Cbc::new(&k, b);
    let iv = Iv::plain64(FIRST);
    let input = Buf::random(REQUEST, unit as u64 ^ 0x5a);
    let want = reference(&k, dir, unit, iv, input.bytes());
    let mut a = copy_of(&input, 1);
    cbc.batched(dir, unit, iv, a.bytes_mut());
    check(&format!("{b:?} batched {unit}"), a.bytes(), &want)?;
    let mut o = copy_of(&input, 2);
    cbc.per_unit(dir, unit, iv, o.bytes_mut());
    check(&format!("{b:?} one at a time {unit}"), o.bytes(), &want)?;
    let (xa, xb) = (cbc.clone(), cbc.clone());
    let name = format!("AES-{} {}, {unit}-byte units", key_len * 8, verb(dir));
    let mut case = Case::new(name, REQUEST, None)
        .imp(Imp::new(format!("{b:?} batched"), Kind::Mdu, move || {
            xa.batched(dir, unit, iv, a.bytes_mut())
        }))
        .imp(Imp::new(
            format!("{b:?} one unit at a time"),
            Kind::Peer,
            move || xb.per_unit(dir, unit, iv, o.bytes_mut()),
        ));
    if let Some((how, width)) = own_bound(b) {
        case = case.imp(ecb_bound_row(how, width, &k, REQUEST));
    }
    // Encryption's ceiling on this backend: as many chains as it runs side
    // by side, each one long message (the request cut into that many
    // units).
    if dir == Direction::Encrypt {
        let long = REQUEST / chains(b);
        let long_want = reference(&k, dir, long, iv, input.bytes());
        let mut l = copy_of(&input, 3);
        cbc.batched(dir, long, iv, l.bytes_mut());
        check(&ceiling_row(b), l.bytes(), &long_want)?;
        case = case.imp(Imp::new(ceiling_row(b), Kind::Mdu, move || {
            cbc.batched(dir, long, iv, l.bytes_mut())
        }));
    }
    Ok(case)
}

/// dm-crypt through mdu-dmcrypt, AES-256, 1 MiB of 512- and 4096-byte
/// sectors: plain64 (one batched request per affine run) against
/// essiv:sha256 (explicit-IV batches), both one sector at a time, and
/// AES-XTS under both. Group `cbc-dmcrypt`.
///
/// ```no_run
/// assert_eq!(mdu_bench::registry::cbc::dmcrypt().cases.len(), 2);
/// ```
pub fn dmcrypt() -> Group {
    let mut group = Group::new("cbc-dmcrypt", false);
    for ss in [512u32, 4096] {
        group = group.case(move || dmcrypt_case(ss));
    }
    group
}

fn dmcrypt_case(ss: u32) -> Result<Case, String> {
    let k = key(32);
    let cbc = Rc::new(AesCbc256::new(&k).map_err(|e| e.to_string())?);
    let xk = key(64);
    let xts = XtsAes256::new(&xk).map_err(|e| e.to_string())?;
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
    let one_by_one = move |g: &IvGenerator, c: &AesCbc256, buf: &mut [u8]| {
        for (i, s) in buf.chunks_mut(ss as usize).enumerate() {
            let iv = g.iv(c, first + i as u64).expect("iv");
            (c as &dyn Erased).one(Direction::Encrypt, iv, s);
        }
    };
    let mut want = input.bytes().to_vec();
    one_by_one(&essiv, &cbc, &mut want);
    let mut got = input.bytes().to_vec();
    essiv
        .encrypt(&*cbc, first, &mut got)
        .map_err(|e| e.to_string())?;
    check("essiv batched", &got, &want)?;
    let mut want = input.bytes().to_vec();
    for (i, s) in want.chunks_mut(ss as usize).enumerate() {
        let iv = plain64.iv(&*cbc, first + i as u64).expect("iv");
        cbc.encrypt(iv, s).expect("unit");
    }
    let mut got = input.bytes().to_vec();
    plain64
        .encrypt(&*cbc, first, &mut got)
        .map_err(|e| e.to_string())?;
    check("plain64 batched", &got, &want)?;

    let [mut a, mut b, mut c, mut d, mut e, mut f] =
        [0, 1, 2, 3, 4, 5].map(|i| Buf::random(REQUEST, i));
    let (c1, c2, c3, c4) = (
        Rc::clone(&cbc),
        Rc::clone(&cbc),
        Rc::clone(&cbc),
        Rc::clone(&cbc),
    );
    let (essiv2, xts2) = (essiv.clone(), xts.clone());
    Ok(Case::new(
        format!("1 MiB of {ss}-byte sectors, encrypt"),
        REQUEST,
        None,
    )
    .imp(Imp::new(
        "aes-cbc-essiv:sha256 batched",
        Kind::Mdu,
        move || essiv.encrypt(&*c1, first, a.bytes_mut()).expect("valid"),
    ))
    .imp(Imp::new("aes-cbc-plain64 batched", Kind::Peer, move || {
        plain64.encrypt(&*c2, first, b.bytes_mut()).expect("valid")
    }))
    .imp(Imp::new(
        "aes-cbc-essiv:sha256 one sector at a time",
        Kind::Peer,
        move || one_by_one(&essiv2, &c3, c.bytes_mut()),
    ))
    .imp(Imp::new(
        "aes-cbc-plain64 one sector at a time",
        Kind::Peer,
        move || {
            for (i, s) in d.bytes_mut().chunks_mut(ss as usize).enumerate() {
                c4.encrypt(Iv::plain64(first + i as u64), s).expect("unit");
            }
        },
    ))
    .imp(Imp::new(
        "aes-xts-essiv:sha256 batched",
        Kind::Peer,
        move || xessiv.encrypt(&xts2, first, e.bytes_mut()).expect("valid"),
    ))
    .imp(Imp::new("aes-xts-plain64 batched", Kind::Peer, move || {
        xplain64.encrypt(&xts, first, f.bytes_mut()).expect("valid")
    })))
}

/// Units with unrelated IVs (a flat list, as a cache writing back
/// scattered sectors or an offload descriptor batch), 1 MiB of 512-byte
/// units, AES-256-CBC and XTS-AES-256 in both directions: one explicit-IV
/// call against one call per unit. Group `explicit-ivs`.
///
/// ```no_run
/// assert_eq!(mdu_bench::registry::cbc::explicit_ivs().cases.len(), 4);
/// ```
pub fn explicit_ivs() -> Group {
    let mut group = Group::new("explicit-ivs", false);
    for xts in [false, true] {
        for dir in Direction::BOTH {
            group = group.case(move || explicit_ivs_case(xts, dir));
        }
    }
    group
}

fn explicit_ivs_case(xts: bool, dir: Direction) -> Result<Case, String> {
    let unit = 512;
    let count = REQUEST / unit;
    let ivs: Rc<Vec<Iv>> = Rc::new(
        (0..count as u128)
            .map(|i| Iv::from_u128(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)))
            .collect(),
    );
    let size = DataUnitSize::new(unit).map_err(|e| e.to_string())?;
    let (name, c): (&str, Rc<dyn Erased>) = if xts {
        let c = XtsAes256::new(&key(64)).map_err(|e| e.to_string())?;
        ("XTS-AES-256", Rc::new(c))
    } else {
        let c = AesCbc256::new(&key(32)).map_err(|e| e.to_string())?;
        ("AES-256-CBC", Rc::new(c))
    };
    let input = Buf::random(REQUEST, 0x1f);
    let mut want = input.bytes().to_vec();
    for (u, iv) in want.chunks_mut(unit).zip(ivs.iter()) {
        c.one(dir, *iv, u);
    }
    let mut got = input.bytes().to_vec();
    c.listed(dir, &ivs, size, &mut got);
    check(&format!("{name} explicit IVs"), &got, &want)?;
    let (mut a, mut b) = (Buf::random(REQUEST, 1), Buf::random(REQUEST, 2));
    let (c2, ivs2) = (Rc::clone(&c), Rc::clone(&ivs));
    Ok(Case::new(
        format!("{name} {}, 2048 units of 512 bytes", verb(dir)),
        REQUEST,
        None,
    )
    .imp(Imp::new(
        "one call, one IV per unit",
        Kind::Mdu,
        move || c.listed(dir, &ivs, size, a.bytes_mut()),
    ))
    .imp(Imp::new("one call per unit", Kind::Peer, move || {
        for (u, iv) in b.bytes_mut().chunks_mut(unit).zip(ivs2.iter()) {
            c2.one(dir, *iv, u);
        }
    })))
}

/// Every CBC group, in the report's order.
///
/// ```no_run
/// assert!(mdu_bench::registry::cbc::groups().len() >= 4);
/// ```
pub fn groups() -> Vec<Group> {
    let mut groups = vec![requests(Direction::Encrypt), requests(Direction::Decrypt)];
    groups.extend(widths());
    groups.extend([dmcrypt(), explicit_ivs()]);
    groups
}
