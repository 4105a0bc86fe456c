//! AES-NI on xmm registers: eight blocks in flight per iteration.
//!
//! The primitives of the XTS driver for one block per register: eight AES
//! chains interleaved round by round, the round keys as 16-byte-aligned
//! memory operands, the tweak folded into the whitening and into the last
//! round key. A unit's eight tweaks come from serial doublings (shifts and
//! masks: no carry-less multiply, so AES-NI alone is enough), the first
//! tweaks of eight units are encrypted together.

use core::arch::x86_64::*;

use super::{RoundKeys, encrypt_iv, mul_x, xts_block};
use mdu_aes::Ivs;
use mdu_aes::x86::{load, load_schedule};
use mdu_core::Iv;

use crate::backend::driver::{self, Lanes};

/// `t * x^8`: a one-byte shift of the whole tweak, and the byte shifted
/// out reduced by a carry-less multiply with 0x87.
#[inline]
#[target_feature(enable = "sse2,pclmulqdq")]
fn mul_x8(t: __m128i) -> __m128i {
    let top = _mm_srli_si128::<15>(t);
    let reduced = _mm_clmulepi64_si128::<0x00>(top, _mm_cvtsi32_si128(0x87));
    _mm_xor_si128(_mm_slli_si128::<1>(t), reduced)
}

/// Units whose first tweaks are encrypted together.
const UNITS: usize = 8;
/// Vectors (here blocks) in flight in the main loop.
const WIDTH: usize = 8;

/// The expanded keys as xmm registers; made only by [`crypt`].
struct Xmm {
    /// K1, in the order of the direction being run.
    rk: [__m128i; 15],
    /// K2, encryption order.
    k2: [__m128i; 15],
}

impl Lanes for Xmm {
    type V = __m128i;
    type B = __m128i;
    const BLOCKS: usize = 1;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> __m128i {
        // SAFETY: the caller guarantees 16 readable bytes; no alignment need.
        unsafe { _mm_loadu_si128(src.cast()) }
    }

    #[inline(always)]
    unsafe fn store(dst: *mut u8, v: __m128i) {
        // SAFETY: the caller guarantees 16 writable bytes; no alignment need.
        unsafe { _mm_storeu_si128(dst.cast(), v) }
    }

    #[inline(always)]
    fn xts<const NR: usize, const ENC: bool, const N: usize>(
        &self,
        mut s: [__m128i; N],
        tw: &[__m128i; N],
    ) -> [__m128i; N] {
        let rk = &self.rk;
        // SAFETY: an `Xmm` exists only inside `crypt`, which runs with
        // AES-NI (and the SSE2 baseline) enabled.
        unsafe {
            for (s, t) in s.iter_mut().zip(tw) {
                *s = _mm_xor_si128(_mm_xor_si128(*s, *t), rk[0]);
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
            for (s, t) in s.iter_mut().zip(tw) {
                let last = _mm_xor_si128(rk[NR], *t);
                *s = if ENC {
                    _mm_aesenclast_si128(*s, last)
                } else {
                    _mm_aesdeclast_si128(*s, last)
                };
            }
        }
        s
    }

    #[inline(always)]
    fn setup<const W: usize>(&self, t: __m128i) -> [__m128i; W] {
        let mut tw = [t; W];
        for i in 1..W {
            // SAFETY: as in `xts`.
            tw[i] = unsafe { mul_x(tw[i - 1]) };
        }
        tw
    }

    #[inline(always)]
    fn advance<const W: usize>(&self, tw: &mut [__m128i; W]) {
        const { assert!(W == 8, "a step of x^8 is eight blocks") };
        for t in tw.iter_mut() {
            // SAFETY: as in `xts`.
            *t = unsafe { mul_x8(*t) };
        }
    }

    #[inline(always)]
    fn lane(&self, v: __m128i, _: usize) -> __m128i {
        v
    }

    #[inline(always)]
    unsafe fn load1(src: *const u8) -> __m128i {
        // SAFETY: forwarded from the caller.
        unsafe { Self::load(src) }
    }

    #[inline(always)]
    unsafe fn store1(dst: *mut u8, b: __m128i) {
        // SAFETY: forwarded from the caller.
        unsafe { Self::store(dst, b) }
    }

    #[inline(always)]
    fn xts1<const NR: usize, const ENC: bool>(&self, b: __m128i, t: __m128i) -> __m128i {
        // SAFETY: an `Xmm` exists only inside `crypt` (AES-NI enabled).
        unsafe { xts_block::<NR, ENC>(&self.rk, b, t) }
    }

    #[inline(always)]
    fn mul_x(&self, t: __m128i) -> __m128i {
        // SAFETY: as in `xts`.
        unsafe { mul_x(t) }
    }

    #[inline(always)]
    fn first_tweak<const NR: usize>(&self, iv: u128) -> __m128i {
        // SAFETY: an `Xmm` exists only inside `crypt` (AES-NI enabled).
        unsafe { encrypt_iv::<NR>(&self.k2, iv) }
    }

    #[inline(always)]
    fn first_tweaks<const NR: usize, const U: usize>(&self, ivs: &[u128; U]) -> [__m128i; U] {
        let k2 = &self.k2;
        // SAFETY: as in `xts`.
        unsafe {
            let mut s = [_mm_setzero_si128(); U];
            for (s, iv) in s.iter_mut().zip(ivs) {
                *s = _mm_xor_si128(load(&iv.to_le_bytes()), k2[0]);
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
    }
}

/// Encrypts (`ENC`) or decrypts `count` data units of `unit_len` bytes from
/// `src` to `dst`; unit `i` uses IV `i` of `Ivs::from_parts(first, step,
/// list)`.
///
/// # Safety
///
/// The CPU has AES-NI; `src` and `dst` are valid for `count * unit_len`
/// bytes and are equal or disjoint; `unit_len >= 16`; `NR` is 10 or 14 and
/// matches the schedules in `keys`; a `list` holds `count` IVs.
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,pclmulqdq")]
pub(crate) unsafe fn crypt<const NR: usize, const ENC: bool>(
    keys: &RoundKeys,
    first: u128,
    step: u64,
    list: Option<&[Iv]>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let l = Xmm {
        rk: load_schedule(if ENC { &keys.k1.enc } else { &keys.k1.dec }),
        k2: load_schedule(&keys.tweak),
    };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `l` holds the matching schedules.
    unsafe { driver::crypt::<Xmm, NR, ENC, WIDTH, UNITS>(&l, &ivs, unit_len, count, src, dst) }
}
