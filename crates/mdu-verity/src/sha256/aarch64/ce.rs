//! Arm Crypto Extensions backend: the aarch64 SHA-256 instructions.
//!
//! Two kernels share one round structure. The one-way kernel runs the usual
//! chain of `sha256h` / `sha256h2` (four rounds per pair) with the message
//! schedule built by `sha256su0` / `sha256su1`. The two-way kernel runs two
//! independent messages with the instructions of chain A and chain B
//! strictly alternated, so a core whose SHA unit is pipelined keeps both
//! chains in flight and hashes two blocks in about the time of one.
//!
//! The state lives in two registers in the order the instructions want and
//! the order it has in memory: `abcd` = (a, b, c, d) and `efgh` =
//! (e, f, g, h), lane 0 first.

use core::arch::aarch64::{
    uint32x4_t, vaddq_u32, vld1q_u8, vld1q_u32, vreinterpretq_u32_u8, vrev32q_u8, vsha256h2q_u32,
    vsha256hq_u32, vsha256su0q_u32, vsha256su1q_u32, vst1q_u32,
};

use mdu_platform::cpu::Witness;

use super::super::{BLOCK_LEN, K, needs};

/// Compress whole blocks into `h` (one-way kernel).
pub(in crate::sha256) fn compress(
    _: Witness<needs::ArmCe>,
    h: &mut [u32; 8],
    blocks: &[[u8; BLOCK_LEN]],
) {
    if blocks.is_empty() {
        return;
    }
    // SAFETY: the witness proves neon and sha2, the features `compress_1x`
    // is compiled for.
    unsafe { compress_1x(h, blocks) }
}

/// Compress `a` into `ha` and `b` into `hb` (two-way interleaved kernel).
/// Both slices should have the same number of blocks; any excess of the
/// longer one is compressed by the one-way kernel.
pub(in crate::sha256) fn compress2x(
    w: Witness<needs::ArmCe>,
    ha: &mut [u32; 8],
    hb: &mut [u32; 8],
    a: &[[u8; BLOCK_LEN]],
    b: &[[u8; BLOCK_LEN]],
) {
    let n = a.len().min(b.len());
    if n > 0 {
        // SAFETY: the witness proves neon and sha2, the features
        // `compress_2x` is compiled for.
        unsafe { compress_2x(ha, hb, &a[..n], &b[..n]) }
    }
    compress(w, ha, &a[n..]);
    compress(w, hb, &b[n..]);
}

/// Load `h` into the (abcd, efgh) register pair.
#[inline]
#[target_feature(enable = "neon,sha2")]
fn load_state(h: &[u32; 8]) -> (uint32x4_t, uint32x4_t) {
    // SAFETY: `h` is 32 readable bytes; `vld1q_u32` needs only 4-byte
    // alignment, which `[u32; 8]` has.
    unsafe { (vld1q_u32(h.as_ptr()), vld1q_u32(h.as_ptr().add(4))) }
}

/// Store the (abcd, efgh) register pair back into `h`.
#[inline]
#[target_feature(enable = "neon,sha2")]
fn store_state(h: &mut [u32; 8], abcd: uint32x4_t, efgh: uint32x4_t) {
    // SAFETY: `h` is 32 writable bytes with the 4-byte alignment of `u32`.
    unsafe {
        vst1q_u32(h.as_mut_ptr(), abcd);
        vst1q_u32(h.as_mut_ptr().add(4), efgh);
    }
}

/// Load message words `4 * q .. 4 * q + 4` of `block`, byte-swapped from
/// big-endian.
#[inline]
#[target_feature(enable = "neon,sha2")]
fn load_words(block: &[u8; BLOCK_LEN], q: usize) -> uint32x4_t {
    debug_assert!(q < 4);
    // SAFETY: q < 4, so bytes 16q..16q+16 lie inside the 64-byte block;
    // `vld1q_u8` has no alignment requirement.
    let raw = unsafe { vld1q_u8(block.as_ptr().add(16 * q)) };
    vreinterpretq_u32_u8(vrev32q_u8(raw))
}

/// Round constants `4 * q .. 4 * q + 4`.
#[inline]
#[target_feature(enable = "neon,sha2")]
fn k4(q: usize) -> uint32x4_t {
    debug_assert!(q < 16);
    // SAFETY: q < 16 so the 16 bytes at K[4q] are inside the 256-byte
    // table, which has the 4-byte alignment `vld1q_u32` needs.
    unsafe { vld1q_u32(K.as_ptr().add(4 * q)) }
}

/// Next four schedule words from the previous sixteen (w0 oldest).
#[inline]
#[target_feature(enable = "neon,sha2")]
fn schedule(w0: uint32x4_t, w1: uint32x4_t, w2: uint32x4_t, w3: uint32x4_t) -> uint32x4_t {
    vsha256su1q_u32(vsha256su0q_u32(w0, w1), w2, w3)
}

/// Four rounds of one chain with schedule words `w` and constants `k`.
/// `sha256h2` takes the `abcd` from before the rounds.
#[inline]
#[target_feature(enable = "neon,sha2")]
fn rounds4(abcd: &mut uint32x4_t, efgh: &mut uint32x4_t, w: uint32x4_t, k: uint32x4_t) {
    let wk = vaddq_u32(w, k);
    let abcd0 = *abcd;
    *abcd = vsha256hq_u32(abcd0, *efgh, wk);
    *efgh = vsha256h2q_u32(*efgh, abcd0, wk);
}

/// Rounds `4q .. 4q + 4` of one chain. For q >= 4 the schedule words are
/// first advanced in place: `$w0` (holding words 4q-16..) becomes words 4q..
macro_rules! quad_1x {
    ($abcd:ident, $efgh:ident, $q:literal, $w0:ident) => {
        rounds4(&mut $abcd, &mut $efgh, $w0, k4($q));
    };
    ($abcd:ident, $efgh:ident, $q:literal, $w0:ident, $w1:ident, $w2:ident, $w3:ident) => {
        $w0 = schedule($w0, $w1, $w2, $w3);
        rounds4(&mut $abcd, &mut $efgh, $w0, k4($q));
    };
}

needs::target_features!(ArmCe =>
    fn compress_1x(h: &mut [u32; 8], blocks: &[[u8; BLOCK_LEN]]) {
        let (mut abcd, mut efgh) = load_state(h);
        for block in blocks {
            let (abcd0, efgh0) = (abcd, efgh);
            let mut w0 = load_words(block, 0);
            let mut w1 = load_words(block, 1);
            let mut w2 = load_words(block, 2);
            let mut w3 = load_words(block, 3);
            quad_1x!(abcd, efgh, 0, w0);
            quad_1x!(abcd, efgh, 1, w1);
            quad_1x!(abcd, efgh, 2, w2);
            quad_1x!(abcd, efgh, 3, w3);
            quad_1x!(abcd, efgh, 4, w0, w1, w2, w3);
            quad_1x!(abcd, efgh, 5, w1, w2, w3, w0);
            quad_1x!(abcd, efgh, 6, w2, w3, w0, w1);
            quad_1x!(abcd, efgh, 7, w3, w0, w1, w2);
            quad_1x!(abcd, efgh, 8, w0, w1, w2, w3);
            quad_1x!(abcd, efgh, 9, w1, w2, w3, w0);
            quad_1x!(abcd, efgh, 10, w2, w3, w0, w1);
            quad_1x!(abcd, efgh, 11, w3, w0, w1, w2);
            quad_1x!(abcd, efgh, 12, w0, w1, w2, w3);
            quad_1x!(abcd, efgh, 13, w1, w2, w3, w0);
            quad_1x!(abcd, efgh, 14, w2, w3, w0, w1);
            quad_1x!(abcd, efgh, 15, w3, w0, w1, w2);
            abcd = vaddq_u32(abcd, abcd0);
            efgh = vaddq_u32(efgh, efgh0);
        }
        store_state(h, abcd, efgh);
    }
);

/// Rounds `4q .. 4q + 4` of chains A and B, their instructions alternated:
/// one constant load feeds both, then A, B, A, B.
macro_rules! quad_2x {
    ($s:ident, $q:literal, $a0:ident, $b0:ident) => {{
        let k = k4($q);
        let wka = vaddq_u32($a0, k);
        let wkb = vaddq_u32($b0, k);
        let abcd_a = $s.abcd_a;
        let abcd_b = $s.abcd_b;
        $s.abcd_a = vsha256hq_u32(abcd_a, $s.efgh_a, wka);
        $s.abcd_b = vsha256hq_u32(abcd_b, $s.efgh_b, wkb);
        $s.efgh_a = vsha256h2q_u32($s.efgh_a, abcd_a, wka);
        $s.efgh_b = vsha256h2q_u32($s.efgh_b, abcd_b, wkb);
    }};
    ($s:ident, $q:literal, $a0:ident, $a1:ident, $a2:ident, $a3:ident,
     $b0:ident, $b1:ident, $b2:ident, $b3:ident) => {{
        $a0 = vsha256su0q_u32($a0, $a1);
        $b0 = vsha256su0q_u32($b0, $b1);
        $a0 = vsha256su1q_u32($a0, $a2, $a3);
        $b0 = vsha256su1q_u32($b0, $b2, $b3);
        quad_2x!($s, $q, $a0, $b0);
    }};
}

/// The two chains' working state.
struct Pair {
    abcd_a: uint32x4_t,
    efgh_a: uint32x4_t,
    abcd_b: uint32x4_t,
    efgh_b: uint32x4_t,
}

needs::target_features!(ArmCe =>
    fn compress_2x(ha: &mut [u32; 8], hb: &mut [u32; 8], a: &[[u8; BLOCK_LEN]], b: &[[u8; BLOCK_LEN]]) {
        let (abcd_a, efgh_a) = load_state(ha);
        let (abcd_b, efgh_b) = load_state(hb);
        let mut s = Pair {
            abcd_a,
            efgh_a,
            abcd_b,
            efgh_b,
        };
        for (block_a, block_b) in a.iter().zip(b) {
            let (abcd_a0, efgh_a0, abcd_b0, efgh_b0) = (s.abcd_a, s.efgh_a, s.abcd_b, s.efgh_b);
            let mut a0 = load_words(block_a, 0);
            let mut b0 = load_words(block_b, 0);
            let mut a1 = load_words(block_a, 1);
            let mut b1 = load_words(block_b, 1);
            let mut a2 = load_words(block_a, 2);
            let mut b2 = load_words(block_b, 2);
            let mut a3 = load_words(block_a, 3);
            let mut b3 = load_words(block_b, 3);
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
            s.abcd_a = vaddq_u32(s.abcd_a, abcd_a0);
            s.efgh_a = vaddq_u32(s.efgh_a, efgh_a0);
            s.abcd_b = vaddq_u32(s.abcd_b, abcd_b0);
            s.efgh_b = vaddq_u32(s.efgh_b, efgh_b0);
        }
        store_state(ha, s.abcd_a, s.efgh_a);
        store_state(hb, s.abcd_b, s.efgh_b);
    }
);
