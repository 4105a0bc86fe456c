//! VAES + VPCLMULQDQ on ymm registers (AVX2, no AVX-512 needed): two blocks
//! per vector, four vectors (eight blocks) in flight per iteration.
//!
//! The first tweaks of eight upcoming data units are encrypted together.
//! Within a unit, the four tweak vectors hold eight consecutive tweaks and
//! advance by x^8 per iteration: a whole-byte shift of each 128-bit lane
//! plus one carry-less multiplication of the byte shifted out by 0x87.

use core::arch::x86_64::*;

use super::{RoundKeys, bulk_blocks, finish_unit, iv_batch, load_schedule, mul_x, xts_block};

/// Data units whose first tweaks are computed together.
const BATCH: usize = 8;

/// `t * x^2` in each 128-bit lane (k < 64: per-qword shift, the bits out of
/// the high qword reduce by a carry-less multiply with 0x87, those out of the
/// low qword carry into the high one).
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_x2(t: __m256i, poly: __m256i) -> __m256i {
    let top = _mm256_srli_epi64::<62>(t);
    let reduced = _mm256_clmulepi64_epi128::<0x01>(top, poly);
    let carried = _mm256_bslli_epi128::<8>(top);
    _mm256_xor_si256(
        _mm256_xor_si256(_mm256_slli_epi64::<2>(t), reduced),
        carried,
    )
}

/// `t * x^4` in each 128-bit lane; see [`mul_x2`].
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_x4(t: __m256i, poly: __m256i) -> __m256i {
    let top = _mm256_srli_epi64::<60>(t);
    let reduced = _mm256_clmulepi64_epi128::<0x01>(top, poly);
    let carried = _mm256_bslli_epi128::<8>(top);
    _mm256_xor_si256(
        _mm256_xor_si256(_mm256_slli_epi64::<4>(t), reduced),
        carried,
    )
}

/// `t * x^8` in each 128-bit lane: shift the lane left by one byte and
/// reduce the byte shifted out.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_x8(t: __m256i, poly: __m256i) -> __m256i {
    let top = _mm256_bsrli_epi128::<15>(t);
    let reduced = _mm256_clmulepi64_epi128::<0x00>(top, poly);
    _mm256_xor_si256(_mm256_bslli_epi128::<1>(t), reduced)
}

/// `E_K2(iv)` for eight IVs, four ymm vectors at once.
#[inline]
#[target_feature(enable = "aes,avx2,vaes")]
fn first_tweaks<const NR: usize>(k2: &[__m256i; 15], ivs: &[u128; BATCH]) -> [u128; BATCH] {
    let mut s = [_mm256_setzero_si256(); BATCH / 2];
    for (i, s) in s.iter_mut().enumerate() {
        // SAFETY: `ivs` holds 8 * 16 bytes; vector `i` reads 32 of them.
        let v = unsafe { _mm256_loadu_si256(ivs.as_ptr().add(2 * i).cast()) };
        *s = _mm256_xor_si256(v, k2[0]);
    }
    for k in &k2[1..NR] {
        for s in s.iter_mut() {
            *s = _mm256_aesenc_epi128(*s, *k);
        }
    }
    let mut out = [0u128; BATCH];
    for (i, s) in s.iter().enumerate() {
        let v = _mm256_aesenclast_epi128(*s, k2[NR]);
        // SAFETY: `out` holds 8 * 16 bytes; vector `i` writes 32 of them.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(2 * i).cast(), v) };
    }
    out
}

/// Broadcasts each round key to both lanes of a ymm register.
#[inline]
#[target_feature(enable = "avx2")]
fn broadcast(rk: &[__m128i; 15]) -> [__m256i; 15] {
    let mut out = [_mm256_setzero_si256(); 15];
    for (dst, src) in out.iter_mut().zip(rk) {
        *dst = _mm256_broadcastsi128_si256(*src);
    }
    out
}

/// Four vectors (eight blocks) under four tweak vectors.
#[inline]
#[target_feature(enable = "aes,avx2,vaes")]
fn rounds4<const NR: usize, const ENC: bool>(
    rk: &[__m256i; 15],
    mut s: [__m256i; 4],
    tw: &[__m256i; 4],
) -> [__m256i; 4] {
    for (s, t) in s.iter_mut().zip(tw) {
        *s = _mm256_xor_si256(_mm256_xor_si256(*s, *t), rk[0]);
    }
    for k in &rk[1..NR] {
        for s in s.iter_mut() {
            *s = if ENC {
                _mm256_aesenc_epi128(*s, *k)
            } else {
                _mm256_aesdec_epi128(*s, *k)
            };
        }
    }
    for (s, t) in s.iter_mut().zip(tw) {
        let last = _mm256_xor_si256(rk[NR], *t);
        *s = if ENC {
            _mm256_aesenclast_epi128(*s, last)
        } else {
            _mm256_aesdeclast_epi128(*s, last)
        };
    }
    s
}

/// One vector (two blocks) under one tweak vector.
#[inline]
#[target_feature(enable = "aes,avx2,vaes")]
fn rounds1<const NR: usize, const ENC: bool>(
    rk: &[__m256i; 15],
    s: __m256i,
    t: __m256i,
) -> __m256i {
    let mut s = _mm256_xor_si256(_mm256_xor_si256(s, t), rk[0]);
    for k in &rk[1..NR] {
        s = if ENC {
            _mm256_aesenc_epi128(s, *k)
        } else {
            _mm256_aesdec_epi128(s, *k)
        };
    }
    let last = _mm256_xor_si256(rk[NR], t);
    if ENC {
        _mm256_aesenclast_epi128(s, last)
    } else {
        _mm256_aesdeclast_epi128(s, last)
    }
}

/// The tweaks of a unit's first eight blocks, from its first tweak `t`:
/// `[t, t*x]`, then that times x^2, x^4 and x^6.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn setup(t: __m128i, poly: __m256i) -> [__m256i; 4] {
    let tw0 = _mm256_set_m128i(mul_x(t), t);
    let tw2 = mul_x4(tw0, poly);
    [tw0, mul_x2(tw0, poly), tw2, mul_x2(tw2, poly)]
}

/// One data unit of `len >= 16` bytes whose first eight tweaks are `tw`
/// (see [`setup`]).
///
/// # Safety
///
/// `src` and `dst` are valid for `len` bytes and are equal or disjoint; the
/// CPU has AES-NI, AVX2, VAES and VPCLMULQDQ.
#[inline]
#[target_feature(enable = "aes,avx2,vaes,vpclmulqdq")]
unsafe fn unit<const NR: usize, const ENC: bool>(
    rk: &[__m256i; 15],
    rk_x: &[__m128i; 15],
    poly: __m256i,
    mut tw: [__m256i; 4],
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let mut left = bulk_blocks::<ENC>(len);
    let mut off = 0;
    while left >= 8 {
        let mut s = [_mm256_setzero_si256(); 4];
        for (i, s) in s.iter_mut().enumerate() {
            // SAFETY: `off + 128 <= 16 * bulk <= len`.
            *s = unsafe { _mm256_loadu_si256(src.add(off + 32 * i).cast()) };
        }
        let out = rounds4::<NR, ENC>(rk, s, &tw);
        for (i, v) in out.iter().enumerate() {
            // SAFETY: as for the loads; all four were loaded first.
            unsafe { _mm256_storeu_si256(dst.add(off + 32 * i).cast(), *v) };
        }
        off += 128;
        left -= 8;
        if left == 0 && len.is_multiple_of(16) {
            // Done: skip advancing tweaks nobody would use.
            return;
        }
        for t in tw.iter_mut() {
            *t = mul_x8(*t, poly);
        }
    }
    // Fewer than eight blocks left: at most three vectors, then one block.
    // The tweak vectors move down (fixed indices keep them in registers).
    while left >= 2 {
        // SAFETY: `off + 32 <= 16 * bulk <= len`.
        unsafe {
            let s = _mm256_loadu_si256(src.add(off).cast());
            let v = rounds1::<NR, ENC>(rk, s, tw[0]);
            _mm256_storeu_si256(dst.add(off).cast(), v);
        }
        tw = [tw[1], tw[2], tw[3], tw[3]];
        off += 32;
        left -= 2;
    }
    let cur = tw[0];
    let mut next = _mm256_castsi256_si128(cur);
    if left == 1 {
        // SAFETY: `off + 16 <= 16 * bulk <= len`.
        unsafe {
            let b = _mm_loadu_si128(src.add(off).cast());
            _mm_storeu_si128(dst.add(off).cast(), xts_block::<NR, ENC>(rk_x, b, next));
        }
        next = _mm256_extracti128_si256::<1>(cur);
        off += 16;
    }
    // SAFETY: `off` is the end of the bulk blocks of a `len`-byte unit.
    unsafe { finish_unit::<NR, ENC>(rk_x, next, src, dst, off, len % 16) };
}

/// Encrypts (`ENC`) or decrypts `count` data units of `unit` bytes from
/// `src` to `dst`; unit `i` uses IV `first_iv + i * step`.
///
/// # Safety
///
/// The CPU has AES-NI, AVX2, VAES and VPCLMULQDQ; `src` and `dst` are valid
/// for `count * unit` bytes and are equal or disjoint; `unit >= 16`; `NR` is
/// 10 or 14 and matches the schedules in `keys`.
#[target_feature(enable = "aes,avx2,vaes,vpclmulqdq")]
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
    let poly = _mm256_set_epi64x(1, 0x87, 1, 0x87);
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
    // Software pipeline, as in the zmm backend: the next batch's first
    // tweaks and the next unit's tweak vectors are issued ahead of the
    // blocks that would otherwise wait for them.
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
