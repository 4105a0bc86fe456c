//! AVX2 kernels: 24 bytes <-> 32 symbols per vector, for every alphabet,
//! through the alphabet's 16-entry lookup tables (`backend/nibble.rs`).
//!
//! Encode: each 128-bit lane takes 12 input bytes (4 groups); an in-lane
//! `vpshufb` spreads every group over a 32-bit lane as `[b1, b0, b2, b1]`,
//! and two 16-bit multiplies (`vpmulhuw`, `vpmullw`) move the four 6-bit
//! fields into the four bytes. Where the lanes' bytes come from is the only
//! thing that changes between steps: the bulk loop loads 32 bytes at
//! `si - 4` (the low lane's groups start at its byte 4, the high lane's at
//! byte 0), so a vector needs one load and no lane crossing; the first and
//! the short steps load the two lanes from `si` and `si + 8`; the last step
//! loads the low lane from the start of the last 8 groups and the high
//! lane from the last 16 input bytes, and ends exactly at the last whole
//! group, overlapping the step before instead of leaving a scalar tail.
//! Only the one or two bytes of a partial group go through scalar code.
//!
//! Decode: `vpshufb` nibble lookups validate and translate 32 symbols (two
//! lookups for validity and one for the offset with most alphabets, six for
//! the rest), two multiply-adds (`vpmaddubsw`, `vpmaddwd`) merge four 6-bit
//! values into a 24-bit lane, and an in-lane `vpshufb` packs each lane's 12
//! bytes, stored lane by lane (no lane permute). The bulk loop decodes four
//! vectors, tests their accumulated error bits once, and only then stores.
//! The last round (one to four vectors) ends exactly at the end of the body,
//! its last vector overlapping the one before: with a 2- or 3-symbol tail,
//! that vector is a window whose high lane comes from the last 16 symbols,
//! moved into place by one `vpshufb`, and the last symbol's unused bits are
//! checked by a `vptest`; bodies of 16..=31 symbols take two overlapping
//! 16-symbol lanes (and a scalar tail). A vector that holds an invalid byte,
//! or a non-canonical last symbol, stores nothing: the kernel returns where
//! it stopped and the caller hands the rest over to the scalar kernel, which
//! reports the first error exactly (the contract of `backend/mod.rs`).
//!
//! Inputs shorter than 16 bytes (encode) or 16 symbols (decode) go to the
//! scalar kernels.

use core::arch::x86_64::*;

use super::scalar;
use crate::backend::nibble::NibbleTables;

/// In-lane `vpshufb` indexes spreading 4 groups of 3 bytes, starting at byte
/// `lo` of the low lane and byte `hi` of the high lane, over 32-bit lanes as
/// `[b1, b0, b2, b1]`.
const fn spread(lo: usize, hi: usize) -> [u8; 32] {
    let mut t = [0u8; 32];
    let mut i = 0;
    while i < 8 {
        let b = if i < 4 { lo } else { hi } + 3 * (i % 4);
        t[4 * i] = (b + 1) as u8;
        t[4 * i + 1] = b as u8;
        t[4 * i + 2] = (b + 2) as u8;
        t[4 * i + 3] = (b + 1) as u8;
        i += 1;
    }
    t
}

/// One 32-byte load at `si - 4`.
const SPREAD_BULK: [u8; 32] = spread(4, 0);

/// Low lane loaded at the start of its groups, high lane loaded 4, 3 or 2
/// bytes before the start of its groups (index: the input length mod 3).
const SPREAD_SPLIT: [[u8; 32]; 3] = [spread(0, 4), spread(0, 3), spread(0, 2)];

/// Per 128-bit lane: the 3 output bytes of each 24-bit lane, big-endian, in
/// bytes 0..12.
const DEC_PACK: [i8; 16] = [2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1];

/// The last vector of a body with a 2- or 3-symbol tail: a 32-symbol window
/// `whole - 28..whole + 4` (`whole`: the symbols of whole groups), its low
/// lane loaded as is, its high lane from the last 16 symbols of the body
/// and moved down by `4 - t` (`t`: the tail's length). The missing `4 - t`
/// symbols repeat the last one: they only feed the bits of the last
/// group's bytes that are not stored, but must be valid symbols if the last
/// one is. `canon` picks the unused low bits of the last symbol; the high
/// lane packs its `8 + t` bytes into its top, to be stored as the last 16
/// bytes of the output.
struct TailShape {
    realign: [u8; 32],
    canon: [u8; 32],
    pack: [u8; 32],
}

const fn tail_shape(t: usize) -> TailShape {
    let mut s = TailShape {
        realign: [0; 32],
        canon: [0; 32],
        pack: [0x80; 32],
    };
    let mut j = 0;
    while j < 16 {
        s.realign[j] = j as u8;
        s.realign[16 + j] = if j < 12 + t { (j + 4 - t) as u8 } else { 15 };
        if j < 12 {
            s.pack[j] = DEC_PACK[j] as u8;
        }
        if j + t >= 8 {
            s.pack[16 + j] = DEC_PACK[j + t - 8] as u8;
        }
        j += 1;
    }
    s.canon[16 + 11 + t] = if t == 2 { 0x0f } else { 0x03 };
    s
}

/// By tail length, 2 and 3 (0 and 1 unused).
const TAIL_SHAPES: [TailShape; 4] = [tail_shape(2), tail_shape(2), tail_shape(2), tail_shape(3)];

/// A 16-byte table in both lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn broadcast(t: &[u8; 16]) -> __m256i {
    // SAFETY: `t` has 16 readable bytes; unaligned load.
    unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr().cast())) }
}

/// A 32-byte constant.
#[target_feature(enable = "avx2")]
#[inline]
fn load32(t: &[u8; 32]) -> __m256i {
    // SAFETY: `t` has 32 readable bytes; unaligned load.
    unsafe { _mm256_loadu_si256(t.as_ptr().cast()) }
}

/// `x`, hidden from the optimizer. Given the multiplier of the encoder's
/// `vpmullw` as a constant, LLVM rewrites the one instruction into two
/// shifts and a blend.
#[target_feature(enable = "avx2")]
#[inline]
fn opaque(mut x: __m256i) -> __m256i {
    // SAFETY: an empty instruction template: nothing is read or written but
    // the register that holds `x`, which it leaves as it is.
    unsafe {
        core::arch::asm!("/* {0} */", inout(ymm_reg) x, options(pure, nomem, nostack, preserves_flags));
    }
    x
}

/// `vpmulhuw`: the high halves of the 16-bit products. Written out because
/// LLVM lowers `_mm256_mulhi_epu16` (a widening multiply in its IR) by
/// constants as widening 32-bit shifts, a pack and a lane permute, and with
/// unknown operands still widens each half to 32 bits first.
#[target_feature(enable = "avx2")]
#[inline]
fn mulhi_epu16(a: __m256i, b: __m256i) -> __m256i {
    let r: __m256i;
    // SAFETY: one AVX2 instruction on registers (this function is compiled
    // with AVX2, which its callers have confirmed); no memory, no flags.
    unsafe {
        core::arch::asm!(
            "vpmulhuw {r}, {a}, {b}",
            r = lateout(ymm_reg) r,
            a = in(ymm_reg) a,
            b = in(ymm_reg) b,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    r
}

/// The encoder's registers. `ANY`: the four-lookup translation
/// ([`EncodeLayout::Any`](crate::backend::nibble::EncodeLayout::Any)), else
/// the one-lookup one.
struct Encoder<const ANY: bool> {
    mask_hi: __m256i,
    mul_hi: __m256i,
    mask_lo: __m256i,
    mul_lo: __m256i,
    c51: __m256i,
    c25: __m256i,
    c16: __m256i,
    offsets: __m256i,
    rows: [__m256i; 4],
}

impl<const ANY: bool> Encoder<ANY> {
    #[target_feature(enable = "avx2")]
    #[inline]
    fn new(t: &NibbleTables) -> Self {
        // Only the tables of the layout in use are loaded.
        let table = |on: bool, t: &[u8; 16]| {
            if on {
                broadcast(t)
            } else {
                _mm256_setzero_si256()
            }
        };
        Encoder {
            mask_hi: _mm256_set1_epi32(0x0fc0_fc00),
            mul_hi: _mm256_set1_epi32(0x0400_0040),
            mask_lo: _mm256_set1_epi32(0x003f_03f0),
            mul_lo: opaque(_mm256_set1_epi32(0x0100_0010)),
            c51: _mm256_set1_epi8(51),
            c25: _mm256_set1_epi8(25),
            c16: _mm256_set1_epi8(16),
            offsets: table(!ANY, &t.encode_offsets),
            rows: [
                table(ANY, &t.encode_rows[0]),
                table(ANY, &t.encode_rows[1]),
                table(ANY, &t.encode_rows[2]),
                table(ANY, &t.encode_rows[3]),
            ],
        }
    }

    /// 8 groups (placed in the lanes as `spread` says) -> 32 symbols.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn symbols(&self, x: __m256i, spread: __m256i) -> __m256i {
        let lanes = _mm256_shuffle_epi8(x, spread);
        // [b1, b0, b2, b1] as two 16-bit halves: the high half's fields
        // (b0 >> 2, then b0 << 4 | b1 >> 4) by a high multiply, the low
        // half's (b1 << 2 | b2 >> 6, then b2) by a low one.
        let hi = mulhi_epu16(_mm256_and_si256(lanes, self.mask_hi), self.mul_hi);
        let lo = _mm256_mullo_epi16(_mm256_and_si256(lanes, self.mask_lo), self.mul_lo);
        let v = _mm256_or_si256(hi, lo);
        if ANY {
            let mut r = _mm256_shuffle_epi8(self.rows[0], v);
            let mut i = v;
            for row in &self.rows[1..] {
                i = _mm256_sub_epi8(i, self.c16);
                r = _mm256_xor_si256(r, _mm256_shuffle_epi8(*row, i));
            }
            r
        } else {
            let idx = _mm256_sub_epi8(
                _mm256_subs_epu8(v, self.c51),
                _mm256_cmpgt_epi8(v, self.c25),
            );
            _mm256_add_epi8(v, _mm256_shuffle_epi8(self.offsets, idx))
        }
    }
}

crate::backend::needs::target_features!(Avx2 =>
    /// Encodes all of `src` without padding into `dst`.
    ///
    /// # Safety
    /// The CPU supports AVX2; `t` and `enc` are the tables of one alphabet,
    /// `ANY` is true unless `t.encode_layout` is `Runs`; `dst.len()` is the
    /// unpadded encoded length of `src`.
    pub(super) unsafe fn encode<const ANY: bool>(
        t: &NibbleTables,
        enc: &[u8; 64],
        src: &[u8],
        dst: &mut [u8],
    ) {
        let n = src.len();
        if n < 16 {
            scalar::encode(enc, src, dst);
            return;
        }
        let e = Encoder::<ANY>::new(t);
        let groups = n / 3;
        let full = 3 * groups;
        let sp = src.as_ptr();
        let dp = dst.as_mut_ptr();
        // Every step writes 32 symbols (8 groups) and leaves more than 8 groups
        // for the last step.
        if full > 24 {
            let split = load32(&SPREAD_SPLIT[0]);
            // SAFETY: `24 < full <= n`: bytes 0..24 are in bounds, and symbols
            // 0..32 of the `4 * groups > 32`.
            unsafe {
                let x = _mm256_loadu2_m128i(sp.add(8).cast(), sp.cast());
                _mm256_storeu_si256(dp.cast(), e.symbols(x, split));
            }
            // `si` input bytes and `di = si / 3 * 4` symbols done.
            let (mut si, mut di) = (24, 32);
            let bulk = load32(&SPREAD_BULK);
            // Four vectors per round, each from one load at `si + 24k - 4`.
            while n - si >= 100 {
                for k in 0..4 {
                    // SAFETY: `4 <= si`, and the last load ends at
                    // `si + 72 + 28 <= n`; the stores end at `di + 128 <=
                    // 4 * groups`, since `groups >= (si + 100) / 3 >= si / 3 + 33`.
                    unsafe {
                        let x = _mm256_loadu_si256(sp.add(si + 24 * k - 4).cast());
                        _mm256_storeu_si256(dp.add(di + 32 * k).cast(), e.symbols(x, bulk));
                    }
                }
                si += 96;
                di += 128;
            }
            while full - si > 24 {
                // SAFETY: the loads read `si..si + 24`, before `full <= n`; the
                // store ends at `di + 32 < 4 * groups`.
                unsafe {
                    let x = _mm256_loadu2_m128i(sp.add(si + 8).cast(), sp.add(si).cast());
                    _mm256_storeu_si256(dp.add(di).cast(), e.symbols(x, split));
                }
                si += 24;
                di += 32;
            }
        }
        // The last 8 whole groups (or groups 0..4 and the last 4, for 5..=7 of
        // them): the low lane from their start, the high lane from the last 16
        // bytes of `src`, where its 4 groups start at byte `4 - n % 3`.
        let r = n - full;
        let p0 = full.saturating_sub(24);
        // SAFETY: `n >= 16`, so `n - 16` is in bounds; `p0 + 16 <= n` (`p0` is
        // 0, or `full - 24`); the stores write symbols `p0 / 3 * 4..+16` and
        // `4 * groups - 16..4 * groups`, all within the `4 * groups` symbols
        // of the whole groups (there are at least 5).
        unsafe {
            let x = _mm256_loadu2_m128i(sp.add(n - 16).cast(), sp.add(p0).cast());
            let s = e.symbols(x, load32(&SPREAD_SPLIT[r]));
            _mm_storeu_si128(dp.add(p0 / 3 * 4).cast(), _mm256_castsi256_si128(s));
            _mm_storeu_si128(
                dp.add(4 * groups - 16).cast(),
                _mm256_extracti128_si256::<1>(s),
            );
        }
        let (tail, out) = (
            src.get(full..).unwrap_or_default(),
            dst.get_mut(4 * groups..).unwrap_or_default(),
        );
        scalar::encode_partial(enc, tail, out);
    }
);

/// Error bits accumulated over the vectors of one test.
#[derive(Clone, Copy)]
struct Errors {
    a: __m256i,
}

/// The decoder's registers. `ANY`: the six-lookup translation
/// ([`DecodeLayout::Any`](crate::backend::nibble::DecodeLayout::Any)), else
/// the nibble-class one.
struct Decoder<const ANY: bool> {
    lo: __m256i,
    hi: __m256i,
    offsets: __m256i,
    rows: [__m256i; 6],
    c0f: __m256i,
    c20: __m256i,
    c16: __m256i,
    cf7: __m256i,
    c80: __m256i,
    merge6: __m256i,
    merge12: __m256i,
    pack: __m256i,
}

impl<const ANY: bool> Decoder<ANY> {
    #[target_feature(enable = "avx2")]
    #[inline]
    fn new(t: &NibbleTables) -> Self {
        // SAFETY: `DEC_PACK` has 16 bytes.
        let pack =
            unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(DEC_PACK.as_ptr().cast())) };
        // Only the tables of the layout in use are loaded.
        let table = |on: bool, t: &[u8; 16]| {
            if on {
                broadcast(t)
            } else {
                _mm256_setzero_si256()
            }
        };
        Decoder {
            // Complemented, so that `values` can index it with the raw
            // byte: a byte from 0x80 on looks up 0, which `andnot` turns
            // into its row's class bits (rows 8..=15: invalid).
            lo: _mm256_xor_si256(table(!ANY, &t.decode_lo), _mm256_set1_epi8(-1)),
            hi: table(!ANY, &t.decode_hi),
            offsets: table(!ANY, &t.decode_offsets),
            rows: [
                table(ANY, &t.decode_rows[0]),
                table(ANY, &t.decode_rows[1]),
                table(ANY, &t.decode_rows[2]),
                table(ANY, &t.decode_rows[3]),
                table(ANY, &t.decode_rows[4]),
                table(ANY, &t.decode_rows[5]),
            ],
            c0f: _mm256_set1_epi8(0x0f),
            c20: _mm256_set1_epi8(0x20),
            c16: _mm256_set1_epi8(16),
            cf7: _mm256_set1_epi8(0xf7u8 as i8),
            c80: _mm256_set1_epi8(-128),
            merge6: _mm256_set1_epi32(0x0140_0140),
            merge12: _mm256_set1_epi32(0x0001_1000),
            pack,
        }
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn no_errors(&self) -> Errors {
        Errors {
            a: _mm256_setzero_si256(),
        }
    }

    /// 32 symbols -> 32 values; error bits go to `err`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn values(&self, x: __m256i, err: &mut Errors) -> __m256i {
        if ANY {
            // Rows 2..=7 by XOR-chained lookups; bytes below 0x20 or from
            // 0x80 on (negative) are caught by the compare.
            let mut i = _mm256_sub_epi8(x, self.c20);
            let mut r = _mm256_shuffle_epi8(self.rows[0], i);
            for row in &self.rows[1..] {
                i = _mm256_sub_epi8(i, self.c16);
                r = _mm256_xor_si256(r, _mm256_shuffle_epi8(*row, i));
            }
            let outside = _mm256_cmpgt_epi8(self.c20, x);
            err.a = _mm256_or_si256(err.a, _mm256_or_si256(r, outside));
            r
        } else {
            // `m = decode_lo[x & 15] & decode_hi[x >> 4]` below 0x80, and
            // `decode_hi[x >> 4]` (invalid) from 0x80 on.
            let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), self.c0f);
            let m = _mm256_andnot_si256(
                _mm256_shuffle_epi8(self.lo, x),
                _mm256_shuffle_epi8(self.hi, hi),
            );
            err.a = _mm256_or_si256(err.a, m);
            _mm256_add_epi8(x, _mm256_shuffle_epi8(self.offsets, _mm256_or_si256(hi, m)))
        }
    }

    /// Whether any vector behind `err` held a byte outside the alphabet.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn invalid(&self, err: Errors) -> bool {
        // Rows: the class bits; any: the high bit of the values.
        let mask = if ANY { self.c80 } else { self.cf7 };
        _mm256_testz_si256(err.a, mask) == 0
    }

    /// 32 values -> 12 bytes in bytes 0..12 of each lane.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn pack(&self, v: __m256i) -> __m256i {
        self.pack_with(v, self.pack)
    }

    /// 32 values -> the 12 bytes of each lane, placed by `shuffle`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn pack_with(&self, v: __m256i, shuffle: __m256i) -> __m256i {
        let pairs = _mm256_maddubs_epi16(v, self.merge6);
        let lanes = _mm256_madd_epi16(pairs, self.merge12);
        _mm256_shuffle_epi8(lanes, shuffle)
    }
}

/// Stores the 12 bytes of a packed lane at `p`, exactly.
///
/// # Safety
/// `p..p + 12` is writable.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn store12(p: *mut u8, lane: __m128i) {
    // SAFETY: the caller's bounds; unaligned stores of 8 and 4 bytes.
    unsafe {
        _mm_storel_epi64(p.cast(), lane);
        p.add(8)
            .cast::<i32>()
            .write_unaligned(_mm_extract_epi32::<2>(lane));
    }
}

/// Stores the 24 bytes of a packed vector at `p`: the low lane as 16
/// bytes, then the high lane as 16 bytes at `p + 12` (`wide`: writes 4
/// bytes past `p + 24`) or as exactly 12.
///
/// # Safety
/// `p..p + 24` is writable, and `p + 24..p + 28` too when `wide`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn store24(p: *mut u8, packed: __m256i, wide: bool) {
    let hi = _mm256_extracti128_si256::<1>(packed);
    // SAFETY: the caller's bounds; the low lane's 4 surplus bytes fall in
    // `p + 12..p + 16`, rewritten by the high lane.
    unsafe {
        _mm_storeu_si128(p.cast(), _mm256_castsi256_si128(packed));
        if wide {
            _mm_storeu_si128(p.add(12).cast(), hi);
        } else {
            store12(p.add(12), hi);
        }
    }
}

/// The last vector of a round that ends with a tail (see [`TailShape`]).
struct TailVector {
    realign: __m256i,
    canon: __m256i,
    pack: __m256i,
    /// Where the high lane comes from: the last 16 symbols.
    from: usize,
    /// Where the high lane's 16 bytes go: the last 16 of the output.
    to: usize,
}

impl TailVector {
    /// For a round without a tail (never read).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn none() -> TailVector {
        let z = _mm256_setzero_si256();
        TailVector {
            realign: z,
            canon: z,
            pack: z,
            from: 0,
            to: 0,
        }
    }

    /// For a body of `n` symbols whose tail has `t` (2 or 3) symbols, and
    /// its output of `out` bytes.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn new(n: usize, t: usize, out: usize) -> TailVector {
        let shape = &TAIL_SHAPES[t & 3];
        TailVector {
            realign: load32(&shape.realign),
            canon: load32(&shape.canon),
            pack: load32(&shape.pack),
            from: n - 16,
            to: out - 16,
        }
    }
}

/// Decodes `K` vectors, at `si`, `si + 32`, .. and the last at `last`
/// (`si + 32 * (K - 1)` or less, overlapping the one before), with one error
/// test; stores their bytes only if all are valid, the last vector's
/// exactly and the others' with a surplus that the next one rewrites.
/// With `TAIL`, the last vector is the window `last..last + 32` that ends
/// with the tail, as `tv` says, and its last symbol must be canonical too
/// (without, `tv` is not read).
/// Returns whether all were valid. Not a `#[target_feature]` function so
/// that it can be inlined into each kernel (which has AVX2) unconditionally.
///
/// # Safety
/// The CPU supports AVX2. Symbols `si..si + 32 * (K - 1)` and
/// `last..last + 32` (with a tail: `last..last + 16` and `tv.from..+16`)
/// are readable at `sp`, and their decoded bytes (`x / 4 * 3` for a symbol
/// position `x`; with a tail, up to `tv.to + 16`) writable at `dp`; `si`
/// and `last` are multiples of 4, and for `K >= 2`,
/// `si + 32 * (K - 2) < last <= si + 32 * (K - 1)`.
#[inline(always)]
unsafe fn round<const ANY: bool, const K: usize, const TAIL: bool>(
    d: &Decoder<ANY>,
    sp: *const u8,
    dp: *mut u8,
    si: usize,
    last: usize,
    tv: &TailVector,
) -> bool {
    let at = |k: usize| if k + 1 == K { last } else { si + 32 * k };
    // SAFETY: the caller's CPU features and bounds. A wide store's 4
    // surplus bytes must fall within the next vector's bytes, which its
    // store rewrites after this one: true unless the next is the last and
    // starts less than 8 symbols on, and then the store is exact. The tail
    // vector's high lane (16 bytes, the first `8 - t` of them not its own)
    // is stored before its low lane (exactly 12), which rewrites them.
    unsafe {
        let mut err = d.no_errors();
        let mut v = [_mm256_setzero_si256(); K];
        for (k, v) in v.iter_mut().enumerate() {
            let x = if TAIL && k + 1 == K {
                let x = _mm256_loadu2_m128i(sp.add(tv.from).cast(), sp.add(last).cast());
                _mm256_shuffle_epi8(x, tv.realign)
            } else {
                _mm256_loadu_si256(sp.add(at(k)).cast())
            };
            *v = d.values(x, &mut err);
        }
        let canonical = !TAIL || _mm256_testz_si256(v[K - 1], tv.canon) != 0;
        if d.invalid(err) || !canonical {
            return false;
        }
        for (k, v) in v.iter().enumerate() {
            if TAIL && k + 1 == K {
                let packed = d.pack_with(*v, tv.pack);
                _mm_storeu_si128(dp.add(tv.to).cast(), _mm256_extracti128_si256::<1>(packed));
                store12(dp.add(last / 4 * 3), _mm256_castsi256_si128(packed));
            } else {
                let wide = k + 2 < K || (k + 2 == K && last >= at(k) + 8);
                store24(dp.add(at(k) / 4 * 3), d.pack(*v), wide);
            }
        }
    }
    true
}

/// Decodes a body (see the contract in `backend/mod.rs`), or the part of it
/// before the first vector that holds an invalid byte, and then returns
/// `Err(si)`: the caller hands the rest from symbol `si` (a multiple of 4,
/// all whole groups before it decoded) over to the scalar kernel, which
/// reports the first error exactly. So does a body of fewer than 16 symbols
/// (`Err(0)`) and a tail with an error. The bulk loop and the last round
/// are two functions, so that the last round, all a short input needs,
/// calls nothing and saves no registers.
///
/// # Safety
/// The CPU supports AVX2; `t` and `dec` are the tables of one alphabet,
/// `ANY` is true unless `t.decode_layout` is `Rows`; `src.len() % 4 != 1`
/// and `dst.len()` is the decoded length of `src`.
#[inline(always)]
pub(super) unsafe fn decode_body<const ANY: bool>(
    t: &NibbleTables,
    dec: &[u8; 256],
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), usize> {
    let si = if src.len() > 128 {
        // SAFETY: the caller's.
        unsafe { decode_bulk::<ANY>(t, src, dst)? }
    } else {
        0
    };
    // SAFETY: the caller's; `si` is where the bulk loop stopped.
    unsafe { decode_last::<ANY>(t, dec, src, dst, si) }
}

crate::backend::needs::target_features!(Avx2 =>
    /// The last round of [`decode_body`]: symbols `si..` of the whole groups
    /// (at most 128 of them) and the tail.
    ///
    /// # Safety
    /// As [`decode_body`]; `si` is 0 or the position [`decode_bulk`] reached.
    unsafe fn decode_last<const ANY: bool>(
        t: &NibbleTables,
        dec: &[u8; 256],
        src: &[u8],
        dst: &mut [u8],
        si: usize,
    ) -> Result<(), usize> {
        let n = src.len();
        let whole = n & !3;
        // With a tail, the last round covers it as a 4-symbol group.
        let end = n.next_multiple_of(4);
        if whole < 16 {
            return Err(0);
        }
        let d = Decoder::<ANY>::new(t);
        let sp = src.as_ptr();
        let dp = dst.as_mut_ptr();
        if end < 32 {
            // SAFETY: 16..=31 symbols of whole groups, or 16..=27 and a tail.
            if !unsafe { short(&d, sp, dp, whole) } {
                return Err(0);
            }
            let (tail, out) = (
                src.get(whole..).unwrap_or_default(),
                dst.get_mut(whole / 4 * 3..).unwrap_or_default(),
            );
            return scalar::decode_partial(dec, tail, out, whole).map_err(|_| whole);
        }
        // The rest, 1..=128 symbols (the bulk loop stops there), in one round
        // whose last vector ends at `end`, overlapping the one before.
        let rest = end - si;
        let last = end - 32;
        // SAFETY: `K = ceil(rest / 32)` vectors lie in `si..end`
        // (`si + 32 * (K - 1) < end`, and `last + 32 == end`), their bytes in
        // `si / 4 * 3..dst.len()`, and `si + 32 * (K - 2) < last` as
        // `rest > 32 * (K - 1)`. With a tail, the window `last..end` reads
        // `last..last + 16` and the last 16 symbols (`n >= 32`), and writes
        // `last / 4 * 3..+12` and the last 16 bytes of `dst` (which has
        // `(end - 4) / 4 * 3 + 1 >= 22`).
        let valid = unsafe {
            if end > whole {
                let tv = TailVector::new(n, n - whole, dst.len());
                match rest {
                    1..=32 => round::<ANY, 1, true>(&d, sp, dp, si, last, &tv),
                    33..=64 => round::<ANY, 2, true>(&d, sp, dp, si, last, &tv),
                    65..=96 => round::<ANY, 3, true>(&d, sp, dp, si, last, &tv),
                    _ => round::<ANY, 4, true>(&d, sp, dp, si, last, &tv),
                }
            } else {
                let tv = TailVector::none();
                match rest {
                    0 => true,
                    1..=32 => round::<ANY, 1, false>(&d, sp, dp, si, last, &tv),
                    33..=64 => round::<ANY, 2, false>(&d, sp, dp, si, last, &tv),
                    65..=96 => round::<ANY, 3, false>(&d, sp, dp, si, last, &tv),
                    _ => round::<ANY, 4, false>(&d, sp, dp, si, last, &tv),
                }
            }
        };
        if valid { Ok(()) } else { Err(si) }
    }
);

/// 16..=31 symbols of whole groups: the first 16 and the last 16 in the two
/// lanes of one vector. Returns whether all are valid (then their bytes are
/// stored).
///
/// # Safety
/// `16 <= whole < 32`, a multiple of 4; symbols `0..whole` are readable at
/// `sp` and their `whole / 4 * 3` bytes writable at `dp`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn short<const ANY: bool>(
    d: &Decoder<ANY>,
    sp: *const u8,
    dp: *mut u8,
    whole: usize,
) -> bool {
    let p1 = whole - 16;
    // SAFETY: both 16-symbol halves are in `0..whole`.
    let x = unsafe { _mm256_loadu2_m128i(sp.add(p1).cast(), sp.cast()) };
    let mut err = d.no_errors();
    let v = d.values(x, &mut err);
    if d.invalid(err) {
        return false;
    }
    let packed = d.pack(v);
    // SAFETY: the lanes decode to `0..12` and `p1 / 4 * 3..whole / 4 * 3`;
    // a 16-byte low-lane store ends at `16 <= whole / 4 * 3` when `whole >=
    // 24`, and its surplus falls in the high lane's bytes, stored after it.
    unsafe {
        let lo = _mm256_castsi256_si128(packed);
        if whole >= 24 {
            _mm_storeu_si128(dp.cast(), lo);
        } else {
            store12(dp, lo);
        }
        store12(dp.add(p1 / 4 * 3), _mm256_extracti128_si256::<1>(packed));
    }
    true
}

crate::backend::needs::target_features!(Avx2 =>
    /// Rounds of four vectors (128 symbols) while more than 128 symbols remain
    /// (a tail counted as 4). Returns the position reached, or `Err(si)` as
    /// [`decode_body`]. Kept out of line so that short inputs do not pay for
    /// its registers.
    ///
    /// # Safety
    /// As [`decode_body`].
    #[inline(never)]
    unsafe fn decode_bulk<const ANY: bool>(
        t: &NibbleTables,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<usize, usize> {
        let d = Decoder::<ANY>::new(t);
        // The last round takes the tail as a group of 4.
        let end = src.len().next_multiple_of(4);
        let sp = src.as_ptr();
        let dp = dst.as_mut_ptr();
        let mut si = 0;
        while end - si > 128 {
            // SAFETY: the round reads symbols `si..si + 128`, of whole groups
            // (`end` is a multiple of 4), and writes their 96 bytes.
            if !unsafe { round::<ANY, 4, false>(&d, sp, dp, si, si + 96, &TailVector::none()) } {
                return Err(si);
            }
            si += 128;
        }
        Ok(si)
    }
);
