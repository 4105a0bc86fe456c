//! AES-NI on xmm registers: eight blocks in flight per iteration.
//!
//! The first tweaks of eight upcoming data units are encrypted together
//! (eight independent AES chains instead of one latency-bound chain), then
//! each unit runs eight blocks per iteration with its tweaks doubled
//! serially, one block at a time at the end, and ciphertext stealing.

use core::arch::x86_64::*;

use super::{RoundKeys, bulk_blocks, finish_unit, iv_batch, load_schedule, mul_x, xts_block};

/// Data units whose first tweaks are computed together.
const BATCH: usize = 8;

/// Blocks per main-loop iteration.
const LANES: usize = 8;

/// `E_K2(iv)` for eight IVs at once.
#[inline]
#[target_feature(enable = "aes")]
fn first_tweaks<const NR: usize>(k2: &[__m128i; 15], ivs: &[u128; BATCH]) -> [__m128i; BATCH] {
    let mut s = [_mm_setzero_si128(); BATCH];
    for (s, iv) in s.iter_mut().zip(ivs) {
        *s = _mm_xor_si128(super::load(&iv.to_le_bytes()), k2[0]);
    }
    for k in &k2[1..NR] {
        for s in s.iter_mut() {
            *s = _mm_aesenc_si128(*s, *k);
        }
    }
    for s in s.iter_mut() {
        *s = _mm_aesenclast_si128(*s, k2[NR]);
    }
    s
}

/// One data unit of `len >= 16` bytes whose first tweak is `t`.
///
/// # Safety
///
/// `src` and `dst` are valid for `len` bytes and are equal or disjoint;
/// AES-NI is available.
#[inline]
#[target_feature(enable = "aes")]
unsafe fn unit<const NR: usize, const ENC: bool>(
    rk: &[__m128i; 15],
    mut t: __m128i,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let mut left = bulk_blocks::<ENC>(len);
    let mut off = 0;
    while left >= LANES {
        let mut tw = [t; LANES];
        for i in 1..LANES {
            tw[i] = mul_x(tw[i - 1]);
        }
        t = mul_x(tw[LANES - 1]);
        let mut s = [_mm_setzero_si128(); LANES];
        for i in 0..LANES {
            // SAFETY: `off + 16 * LANES <= 16 * bulk <= len`.
            let b = unsafe { _mm_loadu_si128(src.add(off + 16 * i).cast()) };
            s[i] = _mm_xor_si128(_mm_xor_si128(b, tw[i]), rk[0]);
        }
        for k in &rk[1..NR] {
            for s in s.iter_mut() {
                *s = if ENC {
                    _mm_aesenc_si128(*s, *k)
                } else {
                    _mm_aesdec_si128(*s, *k)
                };
            }
        }
        for i in 0..LANES {
            let last = _mm_xor_si128(rk[NR], tw[i]);
            s[i] = if ENC {
                _mm_aesenclast_si128(s[i], last)
            } else {
                _mm_aesdeclast_si128(s[i], last)
            };
            // SAFETY: as for the load; the whole group was loaded first.
            unsafe { _mm_storeu_si128(dst.add(off + 16 * i).cast(), s[i]) };
        }
        off += 16 * LANES;
        left -= LANES;
    }
    while left > 0 {
        // SAFETY: `off + 16 <= 16 * bulk <= len`.
        unsafe {
            let b = _mm_loadu_si128(src.add(off).cast());
            _mm_storeu_si128(dst.add(off).cast(), xts_block::<NR, ENC>(rk, b, t));
        }
        t = mul_x(t);
        off += 16;
        left -= 1;
    }
    // SAFETY: `off` is the end of the bulk blocks of a `len`-byte unit.
    unsafe { finish_unit::<NR, ENC>(rk, t, src, dst, off, len % 16) };
}

/// Encrypts (`ENC`) or decrypts `count` data units of `unit` bytes from
/// `src` to `dst`; unit `i` uses IV `first_iv + i * step`.
///
/// # Safety
///
/// The CPU has AES-NI; `src` and `dst` are valid for `count * unit` bytes
/// and are equal or disjoint; `unit >= 16`; `NR` is 10 or 14 and matches the
/// schedules in `keys`.
#[target_feature(enable = "aes")]
pub(crate) unsafe fn crypt<const NR: usize, const ENC: bool>(
    keys: &RoundKeys,
    first_iv: u128,
    step: u64,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let rk = load_schedule(if ENC { &keys.enc } else { &keys.dec });
    let k2 = load_schedule(&keys.tweak);
    if count == 1 {
        // One message: one AES chain for its tweak, no batch.
        let t = super::encrypt_iv::<NR>(&k2, first_iv);
        // SAFETY: the request is exactly this one unit.
        unsafe { unit::<NR, ENC>(&rk, t, src, dst, unit_len) };
        return;
    }
    let mut done = 0;
    while done < count {
        let tweaks = first_tweaks::<NR>(&k2, &iv_batch::<BATCH>(first_iv, step, done));
        let n = BATCH.min(count - done);
        for (j, t) in tweaks.iter().take(n).enumerate() {
            let at = (done + j) * unit_len;
            // SAFETY: unit `done + j < count` lies inside the request.
            unsafe { unit::<NR, ENC>(&rk, *t, src.add(at), dst.add(at), unit_len) };
        }
        done += n;
    }
}
