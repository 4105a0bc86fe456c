//! AVX2 kernels: 24 bytes <-> 32 symbols per step, scalar tails.
//!
//! Only for alphabets whose symbols 0..=61 are `A-Z a-z 0-9` in RFC 4648
//! order (symbols 62 and 63 are free), which the callers check.
//!
//! Encode: the 24 input bytes go to the two 128-bit lanes (12 each), an
//! in-lane shuffle spreads each 3-byte group over a 32-bit lane as
//! `[b1, b0, b2, b1]`, two 16-bit multiplies move the four 6-bit fields into
//! the four bytes, and the value -> symbol step adds a per-range offset looked
//! up with `vpshufb` (ranges `A-Z`, `a-z`, `0-9`, and one entry each for
//! symbols 62 and 63, taken from the alphabet).
//!
//! Decode: three unsigned range tests (`A-Z`, `a-z`, `0-9`) and two equality
//! tests (symbols 62, 63) give the validity mask and the offset to subtract;
//! two multiply-adds merge four 6-bit values into a 24-bit lane, and a
//! shuffle plus a lane permute pack 8 lanes into 24 bytes.

use core::arch::x86_64::*;

use super::{BodyError, scalar};

/// Per 128-bit lane: bytes `[3i+1, 3i, 3i+2, 3i+1]` for lanes i = 0..4.
const ENC_SPREAD: [i8; 16] = [1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10];

/// Per 128-bit lane: the 3 output bytes of each 24-bit lane, big-endian.
const DEC_PACK: [i8; 16] = [2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1];

/// Encodes all of `src` without padding into `dst`.
///
/// # Safety
/// The CPU supports AVX2; `enc[..62]` is `A-Z a-z 0-9`; `dst.len()` is the
/// unpadded encoded length of `src`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn encode(enc: &[u8; 64], src: &[u8], dst: &mut [u8]) {
    // SAFETY: `ENC_SPREAD` has 16 bytes.
    let spread =
        unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(ENC_SPREAD.as_ptr().cast())) };
    let mask_hi6 = _mm256_set1_epi32(0x0fc0_fc00);
    let mul_hi6 = _mm256_set1_epi32(0x0400_0040);
    let mask_lo6 = _mm256_set1_epi32(0x003f_03f0);
    let mul_lo6 = _mm256_set1_epi32(0x0100_0010);
    // Offset table indexed by: 0 for 26..=51, 1..=10 for 52..=61, 11 for
    // 62, 12 for 63, 13 for 0..=25.
    let off62 = enc[62].wrapping_sub(62) as i8;
    let off63 = enc[63].wrapping_sub(63) as i8;
    let offsets = _mm256_setr_epi8(
        71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, off62, off63, 65, 0, 0, //
        71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, off62, off63, 65, 0, 0,
    );
    let n = src.len();
    let mut si = 0;
    let mut di = 0;
    // Loads read `si..si + 28`; the remaining output is then >= 32 symbols.
    while n - si >= 28 {
        // SAFETY: bytes `si..si + 16` and `si + 12..si + 28` are in bounds.
        let x = unsafe {
            let p = src.as_ptr().add(si);
            _mm256_loadu2_m128i(p.add(12).cast(), p.cast())
        };
        let lanes = _mm256_shuffle_epi8(x, spread);
        let hi = _mm256_mulhi_epu16(_mm256_and_si256(lanes, mask_hi6), mul_hi6);
        let lo = _mm256_mullo_epi16(_mm256_and_si256(lanes, mask_lo6), mul_lo6);
        let values = _mm256_or_si256(hi, lo);
        let mut idx = _mm256_subs_epu8(values, _mm256_set1_epi8(51));
        let upper = _mm256_cmpgt_epi8(_mm256_set1_epi8(26), values);
        idx = _mm256_or_si256(idx, _mm256_and_si256(upper, _mm256_set1_epi8(13)));
        let out = _mm256_add_epi8(values, _mm256_shuffle_epi8(offsets, idx));
        // SAFETY: `n - si >= 28` leaves at least 38 output symbols from `di`.
        unsafe { _mm256_storeu_si256(dst.as_mut_ptr().add(di).cast(), out) };
        si += 24;
        di += 32;
    }
    let (s, d) = (
        src.get(si..).unwrap_or_default(),
        dst.get_mut(di..).unwrap_or_default(),
    );
    scalar::encode(enc, s, d);
}

/// In-range mask for bytes `lo..lo + len` (len < 128), by a signed compare
/// after moving `lo` to -128.
#[target_feature(enable = "avx2")]
#[inline]
fn in_range(x: __m256i, lo: u8, len: u8) -> __m256i {
    let shifted = _mm256_add_epi8(x, _mm256_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
    _mm256_cmpgt_epi8(_mm256_set1_epi8((len as i8).wrapping_sub(-128i8)), shifted)
}

/// Decodes a body (see the contract in `backend/mod.rs`); the tail and any
/// step holding an invalid byte go to the scalar kernel.
///
/// # Safety
/// The CPU supports AVX2; `enc[..62]` is `A-Z a-z 0-9`; `src.len() % 4 != 1`
/// and `dst.len()` is the decoded length of `src`.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn decode_body(
    enc: &[u8; 64],
    dec: &[u8; 256],
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    let s62 = _mm256_set1_epi8(enc[62] as i8);
    let s63 = _mm256_set1_epi8(enc[63] as i8);
    let o62 = _mm256_set1_epi8(62u8.wrapping_sub(enc[62]) as i8);
    let o63 = _mm256_set1_epi8(63u8.wrapping_sub(enc[63]) as i8);
    // SAFETY: `DEC_PACK` has 16 bytes.
    let pack = unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(DEC_PACK.as_ptr().cast())) };
    let merge6 = _mm256_set1_epi32(0x0140_0140);
    let merge12 = _mm256_set1_epi32(0x0001_1000);
    let gather = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
    let n = src.len();
    let mut si = 0;
    let mut di = 0;
    while n - si >= 32 {
        // SAFETY: `si + 32 <= n`.
        let x = unsafe { _mm256_loadu_si256(src.as_ptr().add(si).cast()) };
        let upper = in_range(x, b'A', 26);
        let lower = in_range(x, b'a', 26);
        let digit = in_range(x, b'0', 10);
        let is62 = _mm256_cmpeq_epi8(x, s62);
        let is63 = _mm256_cmpeq_epi8(x, s63);
        let valid = _mm256_or_si256(
            _mm256_or_si256(upper, lower),
            _mm256_or_si256(digit, _mm256_or_si256(is62, is63)),
        );
        if _mm256_movemask_epi8(valid) != -1 {
            return scalar::decode_body_from(dec, src, dst, si, di);
        }
        let off = _mm256_or_si256(
            _mm256_or_si256(
                _mm256_and_si256(upper, _mm256_set1_epi8(-65)),
                _mm256_and_si256(lower, _mm256_set1_epi8(-71)),
            ),
            _mm256_or_si256(
                _mm256_and_si256(digit, _mm256_set1_epi8(4)),
                _mm256_or_si256(_mm256_and_si256(is62, o62), _mm256_and_si256(is63, o63)),
            ),
        );
        let values = _mm256_add_epi8(x, off);
        let pairs = _mm256_maddubs_epi16(values, merge6);
        let lanes = _mm256_madd_epi16(pairs, merge12);
        let packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(lanes, pack), gather);
        // SAFETY: `n - si >= 32` symbols left means `dst.len() - di >= 24`; the two
        // stores write exactly bytes `di..di + 24`.
        unsafe {
            let p = dst.as_mut_ptr().add(di);
            _mm_storeu_si128(p.cast(), _mm256_castsi256_si128(packed));
            _mm_storel_epi64(p.add(16).cast(), _mm256_extracti128_si256::<1>(packed));
        }
        si += 32;
        di += 24;
    }
    scalar::decode_body_from(dec, src, dst, si, di)
}
