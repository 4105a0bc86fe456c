//! The conformance harness: any [`DataUnitCipher`] against its own one-unit
//! path.
//!
//! [`check_cipher`] encrypts random data as one batched request and as N
//! single-unit requests with derived IVs, over unit sizes 16, 17, 31, 512,
//! 4096 and 4112, unit counts 1 to 33, IVs next to the 2^64 and 2^128 carries,
//! IV steps 1, 8 and random, in place, out of place with misaligned buffers,
//! over random segment splits (different for source and destination), and
//! as explicit-IV batches (one unrelated IV per unit, some repeated, some
//! next to the carries). It asserts byte equality, that decryption inverts
//! encryption on every path, and that invalid requests (ragged, empty,
//! mismatched, too few IVs, units the cipher refuses) fail with the right
//! error and leave the buffers unchanged. Sizes the cipher does not accept
//! (below its [`MIN_UNIT_BYTES`], or not a multiple of its [`UNIT_ALIGN`])
//! are skipped and counted.
//!
//! It panics, naming the cipher, the path and the request, on the first
//! mismatch: call it from a `#[test]`.
//!
//! Under a user-mode emulator (`MDU_EMULATED=1`) the 4096- and 4112-byte
//! units, nine tenths of the bytes, take the counts 1 to 12 (every
//! combination of the IV and step choices) and 31 to 33, and the harness
//! prints a `sampled:` line; `MDU_EXHAUSTIVE=1` runs every count
//! ([`sample`] says how the exhaustive tests sample).
//!
//! [`MIN_UNIT_BYTES`]: DataUnitCipher::MIN_UNIT_BYTES
//! [`UNIT_ALIGN`]: DataUnitCipher::UNIT_ALIGN
//!
//! ```
//! use mdu_core::{testing, DataUnitCipher, Error, Iv};
//!
//! struct AddIv;
//! impl DataUnitCipher for AddIv {
//!     type Iv = Iv;
//!     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
//!         self.check_unit_len(u.len())?;
//!         u.iter_mut().for_each(|b| *b = b.wrapping_add(iv.0[0]));
//!         Ok(())
//!     }
//!     fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
//!         self.check_unit_len(u.len())?;
//!         u.iter_mut().for_each(|b| *b = b.wrapping_sub(iv.0[0]));
//!         Ok(())
//!     }
//! }
//!
//! let report = testing::check_cipher(&AddIv);
//! assert_eq!(report.skipped_sizes, 0);
//! assert!(report.bytes > 0);
//! ```

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt::Write as _;

use crate::{DataUnitCipher, DataUnitSize, DataUnits, Direction, Error, Tweak};

pub mod sample;

/// The bytes of the hex string `s` (test data: published vectors).
///
/// # Panics
///
/// On an odd length or a character that is not a hex digit.
///
/// ```
/// assert_eq!(mdu_core::testing::unhex("00ff10"), [0, 255, 16]);
/// ```
pub fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length {}", s.len());
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digits"))
        .collect()
}

/// One published vector of a cipher with a 16-byte IV (the kernel's
/// `cipher_testvec`): read from a [`vector_blocks`] file by
/// [`cipher_vectors`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CipherVector {
    /// The algorithm as the source names it (`xts(serpent)`).
    pub alg: String,
    /// Its place in the source's list.
    pub index: String,
    /// The key (both halves for XTS).
    pub key: Vec<u8>,
    /// The IV or tweak.
    pub iv: [u8; 16],
    /// The plaintext.
    pub ptext: Vec<u8>,
    /// The ciphertext, as long as the plaintext.
    pub ctext: Vec<u8>,
}

/// The vectors of a [`vector_blocks`] file whose blocks have the fields
/// `alg`, `index`, `klen`, `len`, `key`, `iv`, `ptext` and `ctext` (hex),
/// each checked against its stated lengths.
///
/// # Panics
///
/// On a missing field, bad hex, an IV that is not 16 bytes, or a length
/// that disagrees with `klen` or `len`.
///
/// ```
/// let text = "alg = cbc(x)\nindex = 0\nklen = 1\nlen = 2\nkey = 01\n\
///             iv = 000102030405060708090a0b0c0d0e0f\nptext = 0000\nctext = ffff\n";
/// let v = &mdu_core::testing::cipher_vectors(text)[0];
/// assert_eq!((v.alg.as_str(), v.key.as_slice(), v.ctext.as_slice()), ("cbc(x)", &[1u8][..], &[255u8, 255][..]));
/// ```
pub fn cipher_vectors(text: &str) -> Vec<CipherVector> {
    vector_blocks(text)
        .into_iter()
        .map(|b| {
            let field = |name: &str| {
                b.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| *v)
                    .unwrap_or_else(|| panic!("a vector without {name}"))
            };
            let v = CipherVector {
                alg: field("alg").into(),
                index: field("index").into(),
                key: unhex(field("key")),
                iv: unhex(field("iv")).try_into().expect("a 16-byte iv"),
                ptext: unhex(field("ptext")),
                ctext: unhex(field("ctext")),
            };
            let what = alloc::format!("{} vector {}", v.alg, v.index);
            assert_eq!(
                alloc::format!("{}", v.key.len()),
                field("klen"),
                "{what}: klen"
            );
            assert_eq!(
                alloc::format!("{}", v.ptext.len()),
                field("len"),
                "{what}: len"
            );
            assert_eq!(v.ptext.len(), v.ctext.len(), "{what}: ctext");
            v
        })
        .collect()
}

/// The blocks of a test-vector file: blocks are separated by blank
/// lines, each line of a block is `name = value`, and lines starting with
/// `#` are comments. Each block is its `(name, value)` pairs in order;
/// blocks with no pair are left out.
///
/// ```
/// let text = "# vectors\n\nalg = xts(sm4)\nkey = 00\n\nalg = cbc(sm4)\n";
/// let blocks = mdu_core::testing::vector_blocks(text);
/// assert_eq!(blocks.len(), 2);
/// assert_eq!(blocks[0], [("alg", "xts(sm4)"), ("key", "00")]);
/// ```
pub fn vector_blocks(text: &str) -> Vec<Vec<(&str, &str)>> {
    text.split("\n\n")
        .map(|block| {
            block
                .lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| l.split_once(" = "))
                .map(|(k, v)| (k.trim(), v.trim()))
                .collect::<Vec<_>>()
        })
        .filter(|b| !b.is_empty())
        .collect()
}

/// The data-unit sizes the harness covers (those the cipher accepts).
pub const UNIT_SIZES: [usize; 6] = [16, 17, 31, 512, 4096, 4096 + 16];

/// The largest number of units in one harness request.
pub const MAX_UNITS: usize = 33;

/// Under emulation ([`sample::sampling`]), units of at least this many
/// bytes skip the counts in [`EMULATED_SKIPPED_COUNTS`].
const EMULATED_LARGE_UNIT: usize = 4096;
/// The counts of large units that emulated runs skip: 1 to 12 take every
/// combination of the IV choice (`count % 3`) and the step (`count % 4`),
/// and the largest counts stay.
const EMULATED_SKIPPED_COUNTS: core::ops::RangeInclusive<usize> = 13..=30;

/// Under Miri the harness keeps its shape but shrinks its volume: counts up
/// to 3 and units up to 512 bytes.
#[cfg(miri)]
const MIRI_LIMITS: (usize, usize) = (3, 512);

/// What a harness run covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Requests issued (batched, split, segmented, error cases).
    pub requests: usize,
    /// Bytes encrypted or decrypted.
    pub bytes: u64,
    /// Unit sizes of [`UNIT_SIZES`] that were skipped because the cipher
    /// does not accept them.
    pub skipped_sizes: usize,
}

/// A small deterministic generator (SplitMix64) for test inputs: the
/// harness must not depend on an RNG crate and must replay exactly for a
/// given seed, and the cipher crates' tests draw their inputs from it too.
///
/// ```
/// use mdu_core::testing::Rng;
///
/// let mut a = Rng::new(7);
/// let mut b = Rng::new(7);
/// assert_eq!(a.bytes(20), b.bytes(20));
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The generator of `seed`.
    ///
    /// ```
    /// let mut r = mdu_core::testing::Rng::new(1);
    /// assert_ne!(r.next_u64(), r.next_u64());
    /// ```
    pub const fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    ///
    /// ```
    /// let mut r = mdu_core::testing::Rng::new(0);
    /// assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
    /// ```
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 for `n` of 0).
    ///
    /// ```
    /// let mut r = mdu_core::testing::Rng::new(3);
    /// assert!((0..100).all(|_| r.below(5) < 5));
    /// ```
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Fills `buf` with random bytes.
    ///
    /// ```
    /// let mut buf = [0u8; 19];
    /// mdu_core::testing::Rng::new(5).fill(&mut buf);
    /// assert!(buf.iter().any(|&b| b != 0));
    /// ```
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    /// `n` random bytes.
    ///
    /// ```
    /// assert_eq!(mdu_core::testing::Rng::new(9).bytes(33).len(), 33);
    /// ```
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.fill(&mut v);
        v
    }

    /// Sorted cut points in `0..=len`, sometimes repeated (empty segments).
    fn cuts(&mut self, len: usize) -> Vec<usize> {
        let n = self.below(9);
        let mut cuts: Vec<usize> = (0..n).map(|_| self.below(len + 1)).collect();
        cuts.sort_unstable();
        cuts
    }
}

/// Splits `buf` into segments at the sorted cut points `cuts` (each at most
/// `buf.len()`; repeated cuts give empty segments), for scatter-gather
/// tests.
///
/// ```
/// let mut buf = [0u8; 10];
/// let segs = mdu_core::testing::split_mut(&mut buf, &[3, 3, 7]);
/// let lens: Vec<usize> = segs.iter().map(|s| s.len()).collect();
/// assert_eq!(lens, [3, 0, 4, 3]);
/// ```
///
/// # Panics
///
/// If the cuts are not sorted or exceed the length.
pub fn split_mut<'a>(mut buf: &'a mut [u8], cuts: &[usize]) -> Vec<&'a mut [u8]> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut prev = 0;
    for &cut in cuts {
        let (head, tail) = core::mem::take(&mut buf).split_at_mut(cut - prev);
        out.push(head);
        buf = tail;
        prev = cut;
    }
    out.push(buf);
    out
}

/// The shared-slice twin of [`split_mut`].
///
/// ```
/// let segs = mdu_core::testing::split(b"abcdef", &[2]);
/// assert_eq!(segs, [&b"ab"[..], &b"cdef"[..]]);
/// ```
///
/// # Panics
///
/// If the cuts are not sorted or exceed the length.
pub fn split<'a>(mut buf: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut prev = 0;
    for &cut in cuts {
        let (head, tail) = buf.split_at(cut - prev);
        out.push(head);
        buf = tail;
        prev = cut;
    }
    out.push(buf);
    out
}

struct Ctx<I> {
    cipher: &'static str,
    seed: u64,
    unit: usize,
    count: usize,
    iv: I,
    step: u64,
}

/// An IV of the cipher's width whose low 16 bytes (all of them, for a
/// 16-byte IV) are `low` and whose bytes above are random: a `low` next to
/// 2^64 or 2^128 puts a carry across byte 8 or byte 16 within the request.
fn iv_with_low<I: Tweak>(rng: &mut Rng, low: u128) -> I {
    let mut iv = I::ZERO;
    let bytes = iv.as_mut();
    rng.fill(bytes);
    let n = bytes.len().min(16);
    bytes[..n].copy_from_slice(&low.to_le_bytes()[..n]);
    iv
}

/// A random IV of the cipher's width.
fn random_iv<I: Tweak>(rng: &mut Rng) -> I {
    let mut iv = I::ZERO;
    rng.fill(iv.as_mut());
    iv
}

impl<I: Tweak> Ctx<I> {
    fn describe(&self, path: &str) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            "conformance failure for {}: {path} (unit {} bytes, {} units, first IV {:?}, \
             step {}, seed {:#x})",
            self.cipher, self.unit, self.count, self.iv, self.step, self.seed
        );
        s
    }

    fn same(&self, path: &str, got: &[u8], want: &[u8]) {
        if got != want {
            let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "{}: first difference at byte {at} (unit {})",
                self.describe(path),
                at / self.unit.max(1)
            );
        }
    }

    fn ok(&self, path: &str, r: Result<(), Error>) {
        if let Err(e) = r {
            panic!("{}: unexpected error: {e}", self.describe(path));
        }
    }

    fn err(&self, path: &str, r: Result<(), Error>, want: Error) {
        match r {
            Err(e) if e == want => {}
            other => panic!(
                "{}: expected Err({want:?}), got {other:?}",
                self.describe(path)
            ),
        }
    }
}

/// Runs the harness with a fixed seed. See the [module docs](self).
///
/// # Panics
///
/// On the first mismatch or unexpected result, with a message naming the
/// cipher, the path and the request.
pub fn check_cipher<C: DataUnitCipher>(cipher: &C) -> Report {
    check_cipher_seeded(cipher, 0x6d64_7521_c0ff_ee00)
}

/// Runs the harness with the given seed. See the [module docs](self).
///
/// # Panics
///
/// On the first mismatch or unexpected result, with a message naming the
/// cipher, the path, the request and the seed.
pub fn check_cipher_seeded<C: DataUnitCipher>(cipher: &C, seed: u64) -> Report {
    let mut rng = Rng::new(seed);
    let mut report = Report::default();
    let sampled = !cfg!(miri) && sample::sampling();
    let (mut ran, mut of) = (0, 0);
    for &unit in &UNIT_SIZES {
        if cipher.check_unit_len(unit).is_err() {
            report.skipped_sizes += 1;
            continue;
        }
        #[cfg(miri)]
        if unit > MIRI_LIMITS.1 {
            continue;
        }
        #[cfg(miri)]
        let max_units = MIRI_LIMITS.0;
        #[cfg(not(miri))]
        let max_units = MAX_UNITS;
        for count in 1..=max_units {
            if unit >= EMULATED_LARGE_UNIT {
                of += 1;
                if sampled && EMULATED_SKIPPED_COUNTS.contains(&count) {
                    continue;
                }
                ran += 1;
            }
            let r = (1 + rng.below(count)) as u128;
            let iv: C::Iv = match count % 3 {
                0 => random_iv(&mut rng),
                1 => iv_with_low(&mut rng, (1u128 << 64) - r),
                _ => iv_with_low(&mut rng, 0u128.wrapping_sub(r)),
            };
            let step = match count % 4 {
                0 | 2 => 1,
                1 => 8,
                _ => rng.next_u64(),
            };
            let ctx = Ctx {
                cipher: core::any::type_name::<C>(),
                seed,
                unit,
                count,
                iv,
                step,
            };
            check_request(cipher, &ctx, &mut rng, &mut report);
        }
        check_errors(cipher, unit, &mut rng, &mut report);
    }
    if sampled && ran < of {
        sample::note(
            core::any::type_name::<C>(),
            ran,
            of,
            "harness requests of 4096- and 4112-byte units",
            "MDU_EMULATED=1: counts 1 to 12 and 31 to 33",
        );
    }
    report
}

fn check_request<C: DataUnitCipher>(
    cipher: &C,
    ctx: &Ctx<C::Iv>,
    rng: &mut Rng,
    report: &mut Report,
) {
    let (unit, count, step) = (ctx.unit, ctx.count, ctx.step);
    let len = unit * count;
    let mut plain = vec![0u8; len];
    rng.fill(&mut plain);

    // The reference: one single-unit request per unit, IVs derived by hand.
    let mut want = plain.clone();
    for (i, chunk) in want.chunks_mut(unit).enumerate() {
        let iv = ctx.iv.advance(i as u128 * u128::from(step));
        ctx.ok("encrypt_unit", cipher.encrypt_unit(iv, chunk));
        let mut back = chunk.to_vec();
        ctx.ok("decrypt_unit", cipher.decrypt_unit(iv, &mut back));
        ctx.same(
            "decrypt_unit inverts encrypt_unit",
            &back,
            &plain[i * unit..][..unit],
        );
    }
    let units = DataUnits::new(cipher, unit)
        .unwrap_or_else(|e| panic!("{}: {e}", ctx.describe("DataUnits::new")))
        .with_iv_step(step);
    let size = units.unit_size();

    // Batched, in place, through DataUnits and through the trait.
    let mut buf = plain.clone();
    ctx.ok("DataUnits::encrypt", units.encrypt(ctx.iv, &mut buf));
    ctx.same("DataUnits::encrypt vs per-unit", &buf, &want);
    ctx.ok("DataUnits::decrypt", units.decrypt(ctx.iv, &mut buf));
    ctx.same("DataUnits::decrypt", &buf, &plain);
    ctx.ok(
        "encrypt_units",
        cipher.encrypt_units(ctx.iv, step, size, &mut buf),
    );
    ctx.same("encrypt_units vs per-unit", &buf, &want);
    ctx.ok(
        "decrypt_units",
        cipher.decrypt_units(ctx.iv, step, size, &mut buf),
    );
    ctx.same("decrypt_units", &buf, &plain);

    // Out of place, source and destination misaligned independently.
    let (so, d_off) = (rng.below(16), rng.below(16));
    let mut src_store = vec![0u8; len + 16];
    let mut dst_store = vec![0u8; len + 16];
    src_store[so..so + len].copy_from_slice(&plain);
    ctx.ok(
        "DataUnits::encrypt_to",
        units.encrypt_to(
            ctx.iv,
            &src_store[so..so + len],
            &mut dst_store[d_off..d_off + len],
        ),
    );
    ctx.same(
        "DataUnits::encrypt_to (misaligned)",
        &dst_store[d_off..d_off + len],
        &want,
    );
    src_store[so..so + len].copy_from_slice(&want);
    ctx.ok(
        "DataUnits::decrypt_to",
        units.decrypt_to(
            ctx.iv,
            &src_store[so..so + len],
            &mut dst_store[d_off..d_off + len],
        ),
    );
    ctx.same(
        "DataUnits::decrypt_to (misaligned)",
        &dst_store[d_off..d_off + len],
        &plain,
    );

    // Scatter-gather in place.
    let mut buf = plain.clone();
    let cuts = rng.cuts(len);
    ctx.ok(
        "encrypt_segments",
        units.encrypt_segments(ctx.iv, &mut split_mut(&mut buf, &cuts)),
    );
    ctx.same("encrypt_segments vs per-unit", &buf, &want);
    let cuts = rng.cuts(len);
    ctx.ok(
        "decrypt_segments",
        units.decrypt_segments(ctx.iv, &mut split_mut(&mut buf, &cuts)),
    );
    ctx.same("decrypt_segments", &buf, &plain);

    // Scatter-gather out of place, split differently on each side.
    let mut out = vec![0u8; len];
    let (sc, dc) = (rng.cuts(len), rng.cuts(len));
    ctx.ok(
        "encrypt_segments_to",
        units.encrypt_segments_to(ctx.iv, &split(&plain, &sc), &mut split_mut(&mut out, &dc)),
    );
    ctx.same("encrypt_segments_to vs per-unit", &out, &want);
    let (sc, dc) = (rng.cuts(len), rng.cuts(len));
    ctx.ok(
        "decrypt_segments_to",
        units.decrypt_segments_to(ctx.iv, &split(&want, &sc), &mut split_mut(&mut out, &dc)),
    );
    ctx.same("decrypt_segments_to", &out, &plain);

    // An explicit-IV batch: unrelated IVs (some equal, some next to the
    // carries), against one single-unit request per unit.
    let mut ivs: Vec<C::Iv> = Vec::with_capacity(count);
    for i in 0..count {
        let iv = match rng.below(4) {
            0 if i > 0 => ivs[rng.below(i)],
            1 => {
                let low = 0u128.wrapping_sub(rng.below(3) as u128);
                iv_with_low(rng, low)
            }
            2 => {
                let low = (1u128 << 64) - 1 - rng.below(2) as u128;
                iv_with_low(rng, low)
            }
            _ => random_iv(rng),
        };
        ivs.push(iv);
    }
    let mut want_ivs = plain.clone();
    for (chunk, iv) in want_ivs.chunks_mut(unit).zip(&ivs) {
        ctx.ok(
            "encrypt_unit (explicit IVs)",
            cipher.encrypt_unit(*iv, chunk),
        );
    }
    let mut buf = plain.clone();
    ctx.ok(
        "crypt_units_with_ivs",
        cipher.crypt_units_with_ivs(Direction::Encrypt, &ivs, size, &mut buf),
    );
    ctx.same("crypt_units_with_ivs vs per-unit", &buf, &want_ivs);
    ctx.ok(
        "DataUnits::decrypt_with_ivs",
        units.decrypt_with_ivs(&ivs, &mut buf),
    );
    ctx.same("DataUnits::decrypt_with_ivs", &buf, &plain);
    ctx.ok(
        "DataUnits::encrypt_with_ivs",
        units.encrypt_with_ivs(&ivs, &mut buf),
    );
    ctx.same("DataUnits::encrypt_with_ivs vs per-unit", &buf, &want_ivs);
    ctx.ok(
        "crypt_units_with_ivs (decrypt)",
        cipher.crypt_units_with_ivs(Direction::Decrypt, &ivs, size, &mut buf),
    );
    ctx.same("crypt_units_with_ivs (decrypt)", &buf, &plain);

    report.requests += 14 + 3 * count;
    report.bytes += 16 * len as u64;
}

fn check_errors<C: DataUnitCipher>(cipher: &C, unit: usize, rng: &mut Rng, report: &mut Report) {
    let ctx = Ctx {
        cipher: core::any::type_name::<C>(),
        seed: 0,
        unit,
        count: 2,
        iv: C::Iv::ZERO,
        step: 1,
    };
    let units = DataUnits::new(cipher, unit).expect("unit size accepted above");
    let mut buf = vec![0u8; 2 * unit + 1];
    rng.fill(&mut buf);
    let orig = buf.clone();

    let not_multiple = Error::LengthNotMultiple {
        len: buf.len(),
        unit,
    };
    ctx.err(
        "encrypt of a ragged request",
        units.encrypt(C::Iv::ZERO, &mut buf),
        not_multiple,
    );
    ctx.err(
        "decrypt of a ragged request",
        units.decrypt(C::Iv::ZERO, &mut buf),
        not_multiple,
    );
    ctx.same("ragged request left unchanged", &buf, &orig);
    ctx.err(
        "encrypt of nothing",
        units.encrypt(C::Iv::ZERO, &mut []),
        Error::EmptyRequest,
    );
    ctx.err(
        "encrypt_segments of nothing",
        units.encrypt_segments(C::Iv::ZERO, &mut [&mut [][..], &mut [][..]]),
        Error::EmptyRequest,
    );

    let mut dst = orig.clone();
    let mismatch = Error::LengthMismatch {
        src: 2 * unit,
        dst: 2 * unit + 1,
    };
    ctx.err(
        "encrypt_to, lengths differ",
        units.encrypt_to(C::Iv::ZERO, &orig[..2 * unit], &mut dst),
        mismatch,
    );
    ctx.err(
        "decrypt_to, lengths differ",
        units.decrypt_to(C::Iv::ZERO, &orig[..2 * unit], &mut dst),
        mismatch,
    );
    ctx.same("mismatched destination left unchanged", &dst, &orig);

    let (a, b) = orig.split_at(unit);
    let totals = Error::SegmentTotalMismatch {
        src: 2 * unit,
        dst: 2 * unit + 1,
    };
    ctx.err(
        "encrypt_segments_to, totals differ",
        units.encrypt_segments_to(
            C::Iv::ZERO,
            &[a, &b[..unit]],
            &mut split_mut(&mut dst, &[3]),
        ),
        totals,
    );
    ctx.same("segment destination left unchanged", &dst, &orig);

    let ragged = &mut buf[..unit + 1];
    ctx.err(
        "encrypt_segments of a ragged request",
        units.encrypt_segments(C::Iv::ZERO, &mut [ragged]),
        Error::LengthNotMultiple {
            len: unit + 1,
            unit,
        },
    );
    ctx.same("ragged segments left unchanged", &buf, &orig);

    // An explicit-IV batch with one IV too few or too many.
    let size = units.unit_size();
    let mut two = orig[..2 * unit].to_vec();
    for n in [1, 3] {
        ctx.err(
            "crypt_units_with_ivs, wrong IV count",
            cipher.crypt_units_with_ivs(Direction::Encrypt, &vec![C::Iv::ZERO; n], size, &mut two),
            Error::IvCountMismatch { ivs: n, units: 2 },
        );
        ctx.err(
            "DataUnits::decrypt_with_ivs, wrong IV count",
            units.decrypt_with_ivs(&vec![C::Iv::ZERO; n], &mut two),
            Error::IvCountMismatch { ivs: n, units: 2 },
        );
    }
    ctx.same("explicit-IV batch left unchanged", &two, &orig[..2 * unit]);

    // A unit length the cipher's alignment refuses.
    let align = C::UNIT_ALIGN;
    if align > 1 {
        let odd = unit + 1;
        let want = Error::UnitSizeMisaligned { size: odd, align };
        let mut big = orig.clone();
        big.resize(2 * odd, 0);
        let before = big.clone();
        ctx.err(
            "encrypt_unit of a misaligned unit",
            cipher.encrypt_unit(C::Iv::ZERO, &mut big[..odd]),
            want,
        );
        ctx.err(
            "decrypt_unit of a misaligned unit",
            cipher.decrypt_unit(C::Iv::ZERO, &mut big[..odd]),
            want,
        );
        if let Ok(odd_size) = DataUnitSize::new(odd) {
            ctx.err(
                "crypt_units with a misaligned unit size",
                cipher.crypt_units(Direction::Encrypt, C::Iv::ZERO, 1, odd_size, &mut big),
                want,
            );
        }
        ctx.same("misaligned units left unchanged", &big, &before);
        match DataUnits::new(cipher, odd) {
            Err(e) if e == want => {}
            other => panic!(
                "{}: expected Err({want:?}), got {:?}",
                ctx.describe("DataUnits::new with a misaligned unit size"),
                other.map(|_| ())
            ),
        }
    }

    // One unit shorter than the cipher's minimum.
    let short = cipher.check_unit_len(DataUnitSize::MIN - 1);
    if let Err(e) = short {
        ctx.err(
            "encrypt_unit below the minimum",
            cipher.encrypt_unit(C::Iv::ZERO, &mut buf[..15]),
            e,
        );
        ctx.err(
            "decrypt_unit below the minimum",
            cipher.decrypt_unit(C::Iv::ZERO, &mut buf[..15]),
            e,
        );
        ctx.same("short unit left unchanged", &buf, &orig);
    } else {
        panic!(
            "{}: a 15-byte unit was accepted",
            ctx.describe("check_unit_len")
        );
    }
    report.requests += 14;
}
