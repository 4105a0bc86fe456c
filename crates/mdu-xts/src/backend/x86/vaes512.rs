//! VAES + VPCLMULQDQ on zmm registers (AVX-512): four blocks per vector,
//! four vectors (sixteen blocks) in flight per iteration.
//!
//! * The first tweaks of sixteen upcoming data units are encrypted together:
//!   four independent zmm AES chains instead of one latency-bound chain per
//!   unit, so a unit's setup never waits on AES latency and overlaps the
//!   previous unit's tail.
//! * A unit's first four tweaks `[T, Tx, Tx^2, Tx^3]` come from one
//!   broadcast, per-qword variable shifts and one carry-less multiply; the
//!   next twelve are `* x^4`, `* x^8`, `* x^12` of those, and every tweak
//!   vector advances by `x^16` per iteration (a two-byte lane shift plus a
//!   carry-less multiply of the two bytes shifted out by 0x87).
//! * "data ^ tweak ^ round key 0" is one `vpternlogq`, and the final tweak
//!   XOR is folded into the last round key (`vaesenclast` with `rk ^ T`).
//! * Fewer than four blocks at the end of a unit go through one masked zmm
//!   operation; a ragged end uses ciphertext stealing on xmm.

use core::arch::x86_64::*;

use super::{RoundKeys, bulk_blocks, finish_unit, iv_batch, load_schedule};

/// Data units whose first tweaks are computed together.
const BATCH: usize = 16;

/// `t * x^4` in each 128-bit lane (per-qword shift; bits out of the high
/// qword reduce by a carry-less multiply with 0x87, bits out of the low
/// qword carry into the high one).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn mul_x4(t: __m512i, poly: __m512i) -> __m512i {
    let top = _mm512_srli_epi64::<60>(t);
    let reduced = _mm512_clmulepi64_epi128::<0x01>(top, poly);
    let carried = _mm512_bslli_epi128::<8>(top);
    _mm512_ternarylogic_epi64::<0x96>(_mm512_slli_epi64::<4>(t), reduced, carried)
}

/// `t * x^8` in each 128-bit lane: a one-byte lane shift plus the reduction
/// of the byte shifted out.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn mul_x8(t: __m512i, poly: __m512i) -> __m512i {
    let top = _mm512_bsrli_epi128::<15>(t);
    let reduced = _mm512_clmulepi64_epi128::<0x00>(top, poly);
    _mm512_xor_si512(_mm512_bslli_epi128::<1>(t), reduced)
}

/// `t * x^16` in each 128-bit lane, by per-qword shifts as in [`mul_x4`]
/// (one shuffle instead of two: measurably cheaper than the byte-shift
/// form next to the AES rounds).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn mul_x16(t: __m512i, poly: __m512i) -> __m512i {
    let top = _mm512_srli_epi64::<48>(t);
    let reduced = _mm512_clmulepi64_epi128::<0x01>(top, poly);
    let carried = _mm512_bslli_epi128::<8>(top);
    _mm512_ternarylogic_epi64::<0x96>(_mm512_slli_epi64::<16>(t), reduced, carried)
}

/// `[t, t*x, t*x^2, t*x^3]`: lane `j` shifts each qword left by `j` (a shift
/// by 64 gives zero), the bits shifted out reduce or carry as in [`mul_x4`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn spread(t: __m128i, poly: __m512i) -> __m512i {
    let tb = _mm512_broadcast_i32x4(t);
    let right = _mm512_set_epi64(61, 61, 62, 62, 63, 63, 64, 64);
    let left = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
    let top = _mm512_srlv_epi64(tb, right);
    let reduced = _mm512_clmulepi64_epi128::<0x01>(top, poly);
    let carried = _mm512_bslli_epi128::<8>(top);
    _mm512_ternarylogic_epi64::<0x96>(_mm512_sllv_epi64(tb, left), reduced, carried)
}

/// `E_K2(iv)` for sixteen IVs, four zmm vectors at once.
#[inline]
#[target_feature(enable = "aes,avx512f,vaes")]
fn first_tweaks<const NR: usize>(k2: &[__m512i; 15], ivs: &[u128; BATCH]) -> [u128; BATCH] {
    let mut s = [_mm512_setzero_si512(); BATCH / 4];
    for (i, s) in s.iter_mut().enumerate() {
        // SAFETY: `ivs` holds 16 * 16 bytes; vector `i` reads 64 of them.
        let v = unsafe { _mm512_loadu_si512(ivs.as_ptr().add(4 * i).cast()) };
        *s = _mm512_xor_si512(v, k2[0]);
    }
    for k in &k2[1..NR] {
        for s in s.iter_mut() {
            *s = _mm512_aesenc_epi128(*s, *k);
        }
    }
    let mut out = [0u128; BATCH];
    for (i, s) in s.iter().enumerate() {
        let v = _mm512_aesenclast_epi128(*s, k2[NR]);
        // SAFETY: `out` holds 16 * 16 bytes; vector `i` writes 64 of them.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(4 * i).cast(), v) };
    }
    out
}

/// Broadcasts each round key to the four lanes of a zmm register.
#[inline]
#[target_feature(enable = "avx512f")]
fn broadcast(rk: &[__m128i; 15]) -> [__m512i; 15] {
    let mut out = [_mm512_setzero_si512(); 15];
    for (dst, src) in out.iter_mut().zip(rk) {
        *dst = _mm512_broadcast_i32x4(*src);
    }
    out
}

/// Four vectors (sixteen blocks) under four tweak vectors.
#[inline]
#[target_feature(enable = "aes,avx512f,vaes")]
fn rounds4<const NR: usize, const ENC: bool>(
    rk: &[__m512i; 15],
    mut s: [__m512i; 4],
    tw: &[__m512i; 4],
) -> [__m512i; 4] {
    for (s, t) in s.iter_mut().zip(tw) {
        *s = _mm512_ternarylogic_epi64::<0x96>(*s, *t, rk[0]);
    }
    for k in &rk[1..NR] {
        for s in s.iter_mut() {
            *s = if ENC {
                _mm512_aesenc_epi128(*s, *k)
            } else {
                _mm512_aesdec_epi128(*s, *k)
            };
        }
    }
    for (s, t) in s.iter_mut().zip(tw) {
        let last = _mm512_xor_si512(rk[NR], *t);
        *s = if ENC {
            _mm512_aesenclast_epi128(*s, last)
        } else {
            _mm512_aesdeclast_epi128(*s, last)
        };
    }
    s
}

/// One vector (four blocks) under one tweak vector.
#[inline]
#[target_feature(enable = "aes,avx512f,vaes")]
fn rounds1<const NR: usize, const ENC: bool>(
    rk: &[__m512i; 15],
    s: __m512i,
    t: __m512i,
) -> __m512i {
    let mut s = _mm512_ternarylogic_epi64::<0x96>(s, t, rk[0]);
    for k in &rk[1..NR] {
        s = if ENC {
            _mm512_aesenc_epi128(s, *k)
        } else {
            _mm512_aesdec_epi128(s, *k)
        };
    }
    let last = _mm512_xor_si512(rk[NR], t);
    if ENC {
        _mm512_aesenclast_epi128(s, last)
    } else {
        _mm512_aesdeclast_epi128(s, last)
    }
}

/// The tweaks of a unit's first sixteen blocks, from its first tweak `t`:
/// `[t, t*x, t*x^2, t*x^3]`, then that times x^4, x^8 and x^12.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn setup(t: __m128i, poly: __m512i) -> [__m512i; 4] {
    let tw0 = spread(t, poly);
    let tw2 = mul_x8(tw0, poly);
    [tw0, mul_x4(tw0, poly), tw2, mul_x4(tw2, poly)]
}

/// Lane `lane` (0..=3) of a zmm register.
#[inline]
#[target_feature(enable = "avx512f")]
fn lane(v: __m512i, lane: usize) -> __m128i {
    match lane {
        0 => _mm512_castsi512_si128(v),
        1 => _mm512_extracti32x4_epi32::<1>(v),
        2 => _mm512_extracti32x4_epi32::<2>(v),
        _ => _mm512_extracti32x4_epi32::<3>(v),
    }
}

/// One data unit of `len >= 16` bytes whose first sixteen tweaks are `tw`
/// (see [`setup`]).
///
/// # Safety
///
/// `src` and `dst` are valid for `len` bytes and are equal or disjoint; the
/// CPU has everything [`crypt`] enables.
#[inline]
#[target_feature(enable = "aes,avx2,avx512f,avx512bw,avx512vl,vaes,vpclmulqdq")]
unsafe fn unit<const NR: usize, const ENC: bool>(
    rk: &[__m512i; 15],
    rk_x: &[__m128i; 15],
    poly: __m512i,
    mut tw: [__m512i; 4],
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let mut left = bulk_blocks::<ENC>(len);
    let mut off = 0;
    while left >= 16 {
        let mut s = [_mm512_setzero_si512(); 4];
        for (i, s) in s.iter_mut().enumerate() {
            // SAFETY: `off + 256 <= 16 * bulk <= len`.
            *s = unsafe { _mm512_loadu_si512(src.add(off + 64 * i).cast()) };
        }
        let out = rounds4::<NR, ENC>(rk, s, &tw);
        for (i, v) in out.iter().enumerate() {
            // SAFETY: as for the loads; all four were loaded first.
            unsafe { _mm512_storeu_si512(dst.add(off + 64 * i).cast(), *v) };
        }
        off += 256;
        left -= 16;
        if left == 0 && len.is_multiple_of(16) {
            // Done: skip advancing tweaks nobody would use (a quarter of
            // the CLMULs of a 512-byte unit).
            return;
        }
        for t in tw.iter_mut() {
            *t = mul_x16(*t, poly);
        }
    }
    // Fewer than sixteen blocks left: at most three whole vectors, then one
    // masked vector of one to three blocks. The tweak vectors move down
    // (fixed indices keep them in registers).
    while left >= 4 {
        // SAFETY: `off + 64 <= 16 * bulk <= len`.
        unsafe {
            let s = _mm512_loadu_si512(src.add(off).cast());
            let v = rounds1::<NR, ENC>(rk, s, tw[0]);
            _mm512_storeu_si512(dst.add(off).cast(), v);
        }
        tw = [tw[1], tw[2], tw[3], tw[3]];
        off += 64;
        left -= 4;
    }
    let cur = tw[0];
    if left > 0 {
        let mask: __mmask64 = (1u64 << (16 * left)) - 1;
        // SAFETY: the mask covers `16 * left` bytes and
        // `off + 16 * left == 16 * bulk <= len`; masked-off bytes are
        // neither read nor written.
        unsafe {
            let s = _mm512_maskz_loadu_epi8(mask, src.add(off).cast());
            let v = rounds1::<NR, ENC>(rk, s, cur);
            _mm512_mask_storeu_epi8(dst.add(off).cast(), mask, v);
        }
        off += 16 * left;
    }
    if !len.is_multiple_of(16) {
        let next = lane(cur, left);
        // SAFETY: `off` is the end of the bulk blocks of a `len`-byte unit.
        unsafe { finish_unit::<NR, ENC>(rk_x, next, src, dst, off, len % 16) };
    }
}

/// Encrypts (`ENC`) or decrypts `count` data units of `unit` bytes from
/// `src` to `dst`; unit `i` uses IV `first_iv + i * step`.
///
/// # Safety
///
/// The CPU has AES-NI, AVX2, AVX-512 F/BW/VL, VAES and VPCLMULQDQ; `src` and
/// `dst` are valid for `count * unit` bytes and are equal or disjoint;
/// `unit >= 16`; `NR` is 10 or 14 and matches the schedules in `keys`.
#[target_feature(enable = "aes,avx2,avx512f,avx512bw,avx512vl,vaes,vpclmulqdq")]
pub(crate) unsafe fn crypt<const NR: usize, const ENC: bool>(
    keys: &RoundKeys,
    first_iv: u128,
    step: u64,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let rk_x = load_schedule(if ENC { &keys.enc } else { &keys.dec });
    let rk = broadcast(&rk_x);
    let k2_x = load_schedule(&keys.tweak);
    let poly = _mm512_set_epi64(1, 0x87, 1, 0x87, 1, 0x87, 1, 0x87);
    if count == 1 {
        // One message: one AES chain for its tweak, no batch.
        let t = super::encrypt_iv::<NR>(&k2_x, first_iv);
        // SAFETY: the request is exactly this one unit.
        unsafe { unit::<NR, ENC>(&rk, &rk_x, poly, setup(t, poly), src, dst, unit_len) };
        return;
    }
    let k2 = broadcast(&k2_x);
    let first = |start: usize| first_tweaks::<NR>(&k2, &iv_batch::<BATCH>(first_iv, step, start));
    let lane_of = |tweaks: &[u128; BATCH], j: usize| super::load(&tweaks[j].to_le_bytes());
    // Software pipeline: the next batch's first tweaks are encrypted while
    // this batch runs, and each unit's tweak vectors are set up before the
    // previous unit's blocks, so no unit waits on AES or CLMUL latency.
    let mut tweaks = first(0);
    let mut done = 0;
    while done < count {
        let n = BATCH.min(count - done);
        let batch = tweaks;
        if count - done > BATCH {
            tweaks = first(done + BATCH);
        }
        let mut next = setup(lane_of(&batch, 0), poly);
        for j in 0..n {
            let tw = next;
            if j + 1 < n {
                next = setup(lane_of(&batch, j + 1), poly);
            }
            let at = (done + j) * unit_len;
            // SAFETY: unit `done + j < count` lies inside the request.
            unsafe { unit::<NR, ENC>(&rk, &rk_x, poly, tw, src.add(at), dst.add(at), unit_len) };
        }
        done += n;
    }
}
