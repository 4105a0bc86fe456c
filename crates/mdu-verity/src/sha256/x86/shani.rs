//! SHA-NI backend: x86_64 SHA extensions with SSSE3 and SSE4.1.
//!
//! Two kernels share one round structure. The one-way kernel runs the usual
//! chain of `sha256rnds2` (two rounds each) with the message schedule built
//! by `sha256msg1` / `sha256msg2`. The two-way kernel runs two independent
//! messages with the instructions of chain A and chain B strictly alternated,
//! so a core that executes several SHA instructions at once (AMD Zen) keeps
//! both chains in flight and hashes two blocks in about the time of one.
//!
//! The state lives in two registers in the layout the instructions want:
//! `abef` = (a, b, e, f) and `cdgh` = (c, d, g, h), highest lane first.

use core::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_alignr_epi8, _mm_blend_epi16, _mm_loadu_si128, _mm_set_epi64x,
    _mm_sha256msg1_epu32, _mm_sha256msg2_epu32, _mm_sha256rnds2_epu32, _mm_shuffle_epi8,
    _mm_shuffle_epi32, _mm_storeu_si128,
};

use mdu_platform::cpu::Witness;

use super::super::{BLOCK_LEN, K, needs};

/// Compress whole blocks into `h` (one-way kernel).
pub(in crate::sha256) fn compress(
    _: Witness<needs::ShaNi>,
    h: &mut [u32; 8],
    blocks: &[[u8; BLOCK_LEN]],
) {
    if blocks.is_empty() {
        return;
    }
    // SAFETY: the witness proves sha, sse2, ssse3 and sse4.1, the features
    // `compress_1x` is compiled for.
    unsafe { compress_1x(h, blocks) }
}

/// Compress `a` into `ha` and `b` into `hb` (two-way interleaved kernel).
/// Both slices should have the same number of blocks; any excess of the
/// longer one is compressed by the one-way kernel.
pub(in crate::sha256) fn compress2x(
    w: Witness<needs::ShaNi>,
    ha: &mut [u32; 8],
    hb: &mut [u32; 8],
    a: &[[u8; BLOCK_LEN]],
    b: &[[u8; BLOCK_LEN]],
) {
    let n = a.len().min(b.len());
    if n > 0 {
        // SAFETY: the witness proves sha, sse2, ssse3 and sse4.1, the
        // features `compress_2x` is compiled for.
        unsafe { compress_2x(ha, hb, &a[..n], &b[..n]) }
    }
    compress(w, ha, &a[n..]);
    compress(w, hb, &b[n..]);
}

/// Byte-swap mask for loading big-endian message words.
#[inline(always)]
fn bswap_mask() -> __m128i {
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { _mm_set_epi64x(0x0c0d0e0f08090a0b, 0x0405060700010203) }
}

/// Load `h` into the (abef, cdgh) register pair.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn load_state(h: &[u32; 8]) -> (__m128i, __m128i) {
    // SAFETY: `h` is 32 readable bytes; unaligned loads.
    let (dcba, hgfe) = unsafe {
        (
            _mm_loadu_si128(h.as_ptr().cast()),
            _mm_loadu_si128(h.as_ptr().add(4).cast()),
        )
    };
    let cdab = _mm_shuffle_epi32(dcba, 0xb1);
    let efgh = _mm_shuffle_epi32(hgfe, 0x1b);
    let abef = _mm_alignr_epi8(cdab, efgh, 8);
    let cdgh = _mm_blend_epi16(efgh, cdab, 0xf0);
    (abef, cdgh)
}

/// Store the (abef, cdgh) register pair back into `h`.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn store_state(h: &mut [u32; 8], abef: __m128i, cdgh: __m128i) {
    let feba = _mm_shuffle_epi32(abef, 0x1b);
    let dchg = _mm_shuffle_epi32(cdgh, 0xb1);
    let dcba = _mm_blend_epi16(feba, dchg, 0xf0);
    let hgfe = _mm_alignr_epi8(dchg, feba, 8);
    // SAFETY: `h` is 32 writable bytes; unaligned stores.
    unsafe {
        _mm_storeu_si128(h.as_mut_ptr().cast(), dcba);
        _mm_storeu_si128(h.as_mut_ptr().add(4).cast(), hgfe);
    }
}

/// Load message words `4 * q .. 4 * q + 4` of `block`, byte-swapped.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn load_words(block: &[u8; BLOCK_LEN], q: usize, mask: __m128i) -> __m128i {
    debug_assert!(q < 4);
    // SAFETY: q < 4, so bytes 16q..16q+16 lie inside the 64-byte block.
    let raw = unsafe { _mm_loadu_si128(block.as_ptr().add(16 * q).cast()) };
    _mm_shuffle_epi8(raw, mask)
}

/// Round constants `4 * q .. 4 * q + 4`.
#[inline(always)]
fn k4(q: usize) -> __m128i {
    debug_assert!(q < 16);
    // SAFETY: q < 16 so the 16 bytes at K[4q] are inside the 256-byte table;
    // SSE2 is part of the x86_64 baseline.
    unsafe { _mm_loadu_si128(K.as_ptr().add(4 * q).cast()) }
}

/// Next four schedule words from the previous sixteen (w0 oldest).
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn schedule(w0: __m128i, w1: __m128i, w2: __m128i, w3: __m128i) -> __m128i {
    let t = _mm_add_epi32(_mm_sha256msg1_epu32(w0, w1), _mm_alignr_epi8(w3, w2, 4));
    _mm_sha256msg2_epu32(t, w3)
}

/// Four rounds of one chain with schedule words `w` and constants `k`.
#[inline]
#[target_feature(enable = "sha,sse2,ssse3,sse4.1")]
fn rounds4(abef: &mut __m128i, cdgh: &mut __m128i, w: __m128i, k: __m128i) {
    let wk = _mm_add_epi32(w, k);
    *cdgh = _mm_sha256rnds2_epu32(*cdgh, *abef, wk);
    *abef = _mm_sha256rnds2_epu32(*abef, *cdgh, _mm_shuffle_epi32(wk, 0x0e));
}

/// Rounds `4q .. 4q + 4` of one chain. For q >= 4 the schedule words are
/// first advanced in place: `$w0` (holding words 4q-16..) becomes words 4q..
macro_rules! quad_1x {
    ($abef:ident, $cdgh:ident, $q:literal, $w0:ident) => {
        rounds4(&mut $abef, &mut $cdgh, $w0, k4($q));
    };
    ($abef:ident, $cdgh:ident, $q:literal, $w0:ident, $w1:ident, $w2:ident, $w3:ident) => {
        $w0 = schedule($w0, $w1, $w2, $w3);
        rounds4(&mut $abef, &mut $cdgh, $w0, k4($q));
    };
}

needs::target_features!(ShaNi =>
    fn compress_1x(h: &mut [u32; 8], blocks: &[[u8; BLOCK_LEN]]) {
        let mask = bswap_mask();
        let (mut abef, mut cdgh) = load_state(h);
        for block in blocks {
            let (abef0, cdgh0) = (abef, cdgh);
            let mut w0 = load_words(block, 0, mask);
            let mut w1 = load_words(block, 1, mask);
            let mut w2 = load_words(block, 2, mask);
            let mut w3 = load_words(block, 3, mask);
            quad_1x!(abef, cdgh, 0, w0);
            quad_1x!(abef, cdgh, 1, w1);
            quad_1x!(abef, cdgh, 2, w2);
            quad_1x!(abef, cdgh, 3, w3);
            quad_1x!(abef, cdgh, 4, w0, w1, w2, w3);
            quad_1x!(abef, cdgh, 5, w1, w2, w3, w0);
            quad_1x!(abef, cdgh, 6, w2, w3, w0, w1);
            quad_1x!(abef, cdgh, 7, w3, w0, w1, w2);
            quad_1x!(abef, cdgh, 8, w0, w1, w2, w3);
            quad_1x!(abef, cdgh, 9, w1, w2, w3, w0);
            quad_1x!(abef, cdgh, 10, w2, w3, w0, w1);
            quad_1x!(abef, cdgh, 11, w3, w0, w1, w2);
            quad_1x!(abef, cdgh, 12, w0, w1, w2, w3);
            quad_1x!(abef, cdgh, 13, w1, w2, w3, w0);
            quad_1x!(abef, cdgh, 14, w2, w3, w0, w1);
            quad_1x!(abef, cdgh, 15, w3, w0, w1, w2);
            abef = _mm_add_epi32(abef, abef0);
            cdgh = _mm_add_epi32(cdgh, cdgh0);
        }
        store_state(h, abef, cdgh);
    }
);

/// Rounds `4q .. 4q + 4` of chains A and B, their instructions alternated:
/// one constant load feeds both, then A, B, A, B round pairs.
macro_rules! quad_2x {
    ($s:ident, $q:literal, $a0:ident, $b0:ident) => {{
        let k = k4($q);
        let wka = _mm_add_epi32($a0, k);
        let wkb = _mm_add_epi32($b0, k);
        $s.cdgh_a = _mm_sha256rnds2_epu32($s.cdgh_a, $s.abef_a, wka);
        $s.cdgh_b = _mm_sha256rnds2_epu32($s.cdgh_b, $s.abef_b, wkb);
        $s.abef_a = _mm_sha256rnds2_epu32($s.abef_a, $s.cdgh_a, _mm_shuffle_epi32(wka, 0x0e));
        $s.abef_b = _mm_sha256rnds2_epu32($s.abef_b, $s.cdgh_b, _mm_shuffle_epi32(wkb, 0x0e));
    }};
    ($s:ident, $q:literal, $a0:ident, $a1:ident, $a2:ident, $a3:ident,
     $b0:ident, $b1:ident, $b2:ident, $b3:ident) => {{
        $a0 = schedule($a0, $a1, $a2, $a3);
        $b0 = schedule($b0, $b1, $b2, $b3);
        quad_2x!($s, $q, $a0, $b0);
    }};
}

/// The two chains' working state.
struct Pair {
    abef_a: __m128i,
    cdgh_a: __m128i,
    abef_b: __m128i,
    cdgh_b: __m128i,
}

needs::target_features!(ShaNi =>
    fn compress_2x(ha: &mut [u32; 8], hb: &mut [u32; 8], a: &[[u8; BLOCK_LEN]], b: &[[u8; BLOCK_LEN]]) {
        let mask = bswap_mask();
        let (abef_a, cdgh_a) = load_state(ha);
        let (abef_b, cdgh_b) = load_state(hb);
        let mut s = Pair {
            abef_a,
            cdgh_a,
            abef_b,
            cdgh_b,
        };
        for (block_a, block_b) in a.iter().zip(b) {
            let (abef_a0, cdgh_a0, abef_b0, cdgh_b0) = (s.abef_a, s.cdgh_a, s.abef_b, s.cdgh_b);
            let mut a0 = load_words(block_a, 0, mask);
            let mut b0 = load_words(block_b, 0, mask);
            let mut a1 = load_words(block_a, 1, mask);
            let mut b1 = load_words(block_b, 1, mask);
            let mut a2 = load_words(block_a, 2, mask);
            let mut b2 = load_words(block_b, 2, mask);
            let mut a3 = load_words(block_a, 3, mask);
            let mut b3 = load_words(block_b, 3, mask);
            quad_2x!(s, 0, a0, b0);
            quad_2x!(s, 1, a1, b1);
            quad_2x!(s, 2, a2, b2);
            quad_2x!(s, 3, a3, b3);
            quad_2x!(s, 4, a0, a1, a2, a3, b0, b1, b2, b3);
            quad_2x!(s, 5, a1, a2, a3, a0, b1, b2, b3, b0);
            quad_2x!(s, 6, a2, a3, a0, a1, b2, b3, b0, b1);
            quad_2x!(s, 7, a3, a0, a1, a2, b3, b0, b1, b2);
            quad_2x!(s, 8, a0, a1, a2, a3, b0, b1, b2, b3);
            quad_2x!(s, 9, a1, a2, a3, a0, b1, b2, b3, b0);
            quad_2x!(s, 10, a2, a3, a0, a1, b2, b3, b0, b1);
            quad_2x!(s, 11, a3, a0, a1, a2, b3, b0, b1, b2);
            quad_2x!(s, 12, a0, a1, a2, a3, b0, b1, b2, b3);
            quad_2x!(s, 13, a1, a2, a3, a0, b1, b2, b3, b0);
            quad_2x!(s, 14, a2, a3, a0, a1, b2, b3, b0, b1);
            quad_2x!(s, 15, a3, a0, a1, a2, b3, b0, b1, b2);
            s.abef_a = _mm_add_epi32(s.abef_a, abef_a0);
            s.cdgh_a = _mm_add_epi32(s.cdgh_a, cdgh_a0);
            s.abef_b = _mm_add_epi32(s.abef_b, abef_b0);
            s.cdgh_b = _mm_add_epi32(s.cdgh_b, cdgh_b0);
        }
        store_state(ha, s.abef_a, s.cdgh_a);
        store_state(hb, s.abef_b, s.cdgh_b);
    }
);
