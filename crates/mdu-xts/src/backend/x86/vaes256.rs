//! VAES + VPCLMULQDQ on ymm registers (AVX2, no AVX-512 needed): two blocks
//! per vector, eight vectors (sixteen blocks) in flight per iteration.
//!
//! The primitives of the XTS driver at 256 bits:
//!
//! * Eight independent AES chains: enough for an AES latency of 4 at two
//!   instructions per cycle. With eight states and eight tweak vectors in
//!   the sixteen ymm registers, the round keys (broadcast to both lanes
//!   once per request) are memory operands, one fused load per round.
//! * A unit's sixteen tweaks are `[T, Tx]` times `x^2`, `x^4`, `x^6` (a
//!   per-qword shift whose carries reduce by one carry-less multiply), then
//!   those four times `x^8`; each vector then advances by `x^16` per
//!   iteration. Steps of whole bytes are lane byte shifts and one
//!   carry-less multiply of the bytes shifted out by 0x87: on Intel cores
//!   they run on the shuffle port, not on the ports the AES rounds use.
//! * The first tweaks of sixteen units are encrypted together, eight ymm
//!   chains.

use core::arch::x86_64::*;

use super::{RoundKeys, encrypt_iv, mul_x, xts_block};
use mdu_aes::Ivs;
use mdu_aes::x86::{broadcast256, load_schedule};
use mdu_core::Iv;

use crate::backend::driver::{self, Lanes};

/// Units whose first tweaks are encrypted together.
const UNITS: usize = 16;
/// Vectors in flight in the main loop.
const WIDTH: usize = 8;

/// The expanded keys, broadcast to ymm; made only by [`crypt`].
struct Ymm {
    /// K1 in the order of the direction being run, in both lanes.
    rk: [__m256i; 15],
    /// K1 as xmm, for single blocks.
    rk_x: [__m128i; 15],
    /// K2 in both lanes.
    k2: [__m256i; 15],
    /// K2 as xmm.
    k2_x: [__m128i; 15],
    /// `0x87` and `1` in the qwords of each lane (the reduction and carry).
    poly: __m256i,
}

/// `t * x^k` in each 128-bit lane for `0 < k < 57`: each qword shifted
/// left by `k`; the `k` bits out of the high qword reduce by a carry-less
/// multiply with 0x87, those out of the low qword carry into the high one.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_xk(t: __m256i, k: i32, poly: __m256i) -> __m256i {
    let top = _mm256_srl_epi64(t, _mm_cvtsi32_si128(64 - k));
    let reduced = _mm256_clmulepi64_epi128::<0x01>(top, poly);
    let carried = _mm256_bslli_epi128::<8>(top);
    let shifted = _mm256_sll_epi64(t, _mm_cvtsi32_si128(k));
    _mm256_xor_si256(_mm256_xor_si256(shifted, reduced), carried)
}

/// `t * x^8` in each 128-bit lane: a one-byte lane shift and the
/// reduction of the byte shifted out.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_x8(t: __m256i, poly: __m256i) -> __m256i {
    let top = _mm256_bsrli_epi128::<15>(t);
    let reduced = _mm256_clmulepi64_epi128::<0x00>(top, poly);
    _mm256_xor_si256(_mm256_bslli_epi128::<1>(t), reduced)
}

/// `t * x^16` in each 128-bit lane: a two-byte lane shift and the
/// reduction of the two bytes shifted out.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_x16(t: __m256i, poly: __m256i) -> __m256i {
    let top = _mm256_bsrli_epi128::<14>(t);
    let reduced = _mm256_clmulepi64_epi128::<0x00>(top, poly);
    _mm256_xor_si256(_mm256_bslli_epi128::<2>(t), reduced)
}

impl Lanes for Ymm {
    type V = __m256i;
    type B = __m128i;
    const BLOCKS: usize = 2;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> __m256i {
        // SAFETY: 32 readable bytes (the caller); AVX is enabled in `crypt`,
        // the only place a `Ymm` exists.
        unsafe { _mm256_loadu_si256(src.cast()) }
    }

    #[inline(always)]
    unsafe fn store(dst: *mut u8, v: __m256i) {
        // SAFETY: 32 writable bytes (the caller); AVX as above.
        unsafe { _mm256_storeu_si256(dst.cast(), v) }
    }

    #[inline(always)]
    fn xts<const NR: usize, const ENC: bool, const N: usize>(
        &self,
        mut s: [__m256i; N],
        tw: &[__m256i; N],
    ) -> [__m256i; N] {
        let rk = &self.rk;
        // SAFETY: a `Ymm` exists only inside `crypt`, which runs with AVX2,
        // VAES and VPCLMULQDQ enabled.
        unsafe {
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
        }
        s
    }

    #[inline(always)]
    fn setup<const W: usize>(&self, t: __m128i) -> [__m256i; W] {
        // SAFETY: as in `xts`.
        unsafe {
            const { assert!(W == 8, "sixteen tweaks in eight vectors") };
            let poly = self.poly;
            let tw0 = _mm256_set_m128i(mul_x(t), t);
            let low = [
                tw0,
                mul_xk(tw0, 2, poly),
                mul_xk(tw0, 4, poly),
                mul_xk(tw0, 6, poly),
            ];
            // The upper eight are the lower eight times x^8: byte shifts,
            // which leave the vector shift units to the AES rounds.
            core::array::from_fn(|i| {
                if i < 4 {
                    low[i]
                } else {
                    mul_x8(low[i - 4], poly)
                }
            })
        }
    }

    #[inline(always)]
    fn advance<const W: usize>(&self, tw: &mut [__m256i; W]) {
        const { assert!(W == 8, "a step of x^16 is eight vectors of two") };
        for t in tw.iter_mut() {
            // SAFETY: as in `xts`.
            *t = unsafe { mul_x16(*t, self.poly) };
        }
    }

    #[inline(always)]
    fn lane(&self, v: __m256i, i: usize) -> __m128i {
        // SAFETY: as in `xts`.
        unsafe {
            if i == 0 {
                _mm256_castsi256_si128(v)
            } else {
                _mm256_extracti128_si256::<1>(v)
            }
        }
    }

    #[inline(always)]
    unsafe fn load1(src: *const u8) -> __m128i {
        // SAFETY: 16 readable bytes (the caller).
        unsafe { _mm_loadu_si128(src.cast()) }
    }

    #[inline(always)]
    unsafe fn store1(dst: *mut u8, b: __m128i) {
        // SAFETY: 16 writable bytes (the caller).
        unsafe { _mm_storeu_si128(dst.cast(), b) }
    }

    #[inline(always)]
    fn xts1<const NR: usize, const ENC: bool>(&self, b: __m128i, t: __m128i) -> __m128i {
        // SAFETY: as in `xts` (AES-NI is among the features).
        unsafe { xts_block::<NR, ENC>(&self.rk_x, b, t) }
    }

    #[inline(always)]
    fn mul_x(&self, t: __m128i) -> __m128i {
        // SAFETY: as in `xts`.
        unsafe { mul_x(t) }
    }

    #[inline(always)]
    fn first_tweak<const NR: usize>(&self, iv: u128) -> __m128i {
        // SAFETY: as in `xts`.
        unsafe { encrypt_iv::<NR>(&self.k2_x, iv) }
    }

    #[inline(always)]
    fn first_tweaks<const NR: usize, const U: usize>(&self, ivs: &[u128; U]) -> [__m128i; U] {
        const { assert!(U == 2 * 8, "eight ymm chains of two IVs") };
        let k2 = &self.k2;
        // SAFETY: SSE2 is the x86_64 baseline.
        let mut out = [unsafe { _mm_setzero_si128() }; U];
        // SAFETY: as in `xts`; `ivs` and `out` hold `U * 16` bytes, vector
        // `i < 8` covers bytes `32 * i .. 32 * i + 32` of them.
        unsafe {
            let mut s = [_mm256_setzero_si256(); 8];
            for (i, s) in s.iter_mut().enumerate() {
                let v = _mm256_loadu_si256(ivs.as_ptr().add(2 * i).cast());
                *s = _mm256_xor_si256(v, k2[0]);
            }
            for k in &k2[1..NR] {
                for s in s.iter_mut() {
                    *s = _mm256_aesenc_epi128(*s, *k);
                }
            }
            for (i, s) in s.iter().enumerate() {
                let v = _mm256_aesenclast_epi128(*s, k2[NR]);
                _mm256_storeu_si256(out.as_mut_ptr().add(2 * i).cast(), v);
            }
        }
        out
    }
}

/// Encrypts (`ENC`) or decrypts `count` data units of `unit_len` bytes from
/// `src` to `dst`; unit `i` uses IV `i` of `Ivs::from_parts(first, step,
/// list)`.
///
/// # Safety
///
/// The CPU has AES-NI, AVX2, VAES and VPCLMULQDQ; `src` and `dst` are valid
/// for `count * unit_len` bytes and are equal or disjoint; `unit_len >= 16`;
/// `NR` is 10 or 14 and matches the schedules in `keys`; an [`Ivs::List`]
/// holds `count` IVs.
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,avx2,vaes,vpclmulqdq")]
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
    let rk_x = load_schedule(if ENC { &keys.k1.enc } else { &keys.k1.dec });
    let k2_x = load_schedule(&keys.tweak);
    let l = Ymm {
        rk: broadcast256(&rk_x),
        rk_x,
        k2: broadcast256(&k2_x),
        k2_x,
        poly: _mm256_set_epi64x(1, 0x87, 1, 0x87),
    };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `l` holds the matching schedules.
    unsafe { driver::crypt::<Ymm, NR, ENC, WIDTH, UNITS>(&l, &ivs, unit_len, count, src, dst) }
}
