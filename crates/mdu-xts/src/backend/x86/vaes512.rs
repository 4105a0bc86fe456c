//! VAES + VPCLMULQDQ on zmm registers (AVX-512): four blocks per vector,
//! four vectors (sixteen blocks) in flight per iteration.
//!
//! The primitives of the XTS driver at 512 bits:
//!
//! * Four independent AES chains of four blocks; the fifteen round keys,
//!   broadcast to all lanes once per request, four states and four tweak
//!   vectors fit in the 32 zmm registers.
//! * A unit's first four tweaks `[T, Tx, Tx^2, Tx^3]` come from one
//!   broadcast, per-qword variable shifts and one carry-less multiply; the
//!   next twelve are `* x^4`, `* x^8`, `* x^12` of those, and every tweak
//!   vector advances by `x^16` per iteration: a two-byte lane shift and a
//!   carry-less multiply, both on the shuffle port of Intel cores, where
//!   per-qword shifts would compete with `vaesenc` for port 0 (measured:
//!   86% of the zmm AES bound with shifts, 99% with byte shifts, AES-256
//!   on 4 KiB units).
//! * "data ^ tweak ^ round key 0" is one `vpternlogq`, and the final tweak
//!   XOR is folded into the last round key (`vaesenclast` with `rk ^ T`).
//! * The first tweaks of sixteen units are encrypted together, four zmm
//!   chains.

use core::arch::x86_64::*;

use super::{RoundKeys, encrypt_iv, mul_x, xts_block};
use mdu_aes::Ivs;
use mdu_aes::x86::{broadcast512, load_schedule};
use mdu_core::Iv;

use crate::backend::driver::{self, Lanes};

/// Units whose first tweaks are encrypted together.
const UNITS: usize = 16;
/// Vectors in flight in the main loop.
const WIDTH: usize = 4;

/// The expanded keys, broadcast to zmm; made only by [`crypt`].
struct Zmm {
    /// K1 in the order of the direction being run, in all four lanes.
    rk: [__m512i; 15],
    /// K1 as xmm, for single blocks.
    rk_x: [__m128i; 15],
    /// K2 in all four lanes.
    k2: [__m512i; 15],
    /// K2 as xmm.
    k2_x: [__m128i; 15],
    /// `0x87` and `1` in the qwords of each lane (the reduction and carry).
    poly: __m512i,
}

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

/// `t * x^16` in each 128-bit lane: a two-byte lane shift and the
/// reduction of the two bytes shifted out (byte shifts and the carry-less
/// multiply run on the shuffle port, away from the AES unit).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn mul_x16(t: __m512i, poly: __m512i) -> __m512i {
    let top = _mm512_bsrli_epi128::<14>(t);
    let reduced = _mm512_clmulepi64_epi128::<0x00>(top, poly);
    _mm512_xor_si512(_mm512_bslli_epi128::<2>(t), reduced)
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

impl Lanes for Zmm {
    type V = __m512i;
    type B = __m128i;
    const BLOCKS: usize = 4;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> __m512i {
        // SAFETY: 64 readable bytes (the caller); AVX-512 F is enabled in
        // `crypt`, the only place a `Zmm` exists.
        unsafe { _mm512_loadu_si512(src.cast()) }
    }

    #[inline(always)]
    unsafe fn store(dst: *mut u8, v: __m512i) {
        // SAFETY: 64 writable bytes (the caller); AVX-512 F as above.
        unsafe { _mm512_storeu_si512(dst.cast(), v) }
    }

    #[inline(always)]
    fn xts<const NR: usize, const ENC: bool, const N: usize>(
        &self,
        mut s: [__m512i; N],
        tw: &[__m512i; N],
    ) -> [__m512i; N] {
        let rk = &self.rk;
        // SAFETY: a `Zmm` exists only inside `crypt`, which runs with
        // AVX-512 F/BW/VL, VAES and VPCLMULQDQ enabled.
        unsafe {
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
        }
        s
    }

    #[inline(always)]
    fn setup<const W: usize>(&self, t: __m128i) -> [__m512i; W] {
        const { assert!(W == 4, "sixteen tweaks in four vectors") };
        let poly = self.poly;
        // SAFETY: as in `xts`.
        unsafe {
            let tw0 = spread(t, poly);
            let tw2 = mul_x8(tw0, poly);
            let all = [tw0, mul_x4(tw0, poly), tw2, mul_x4(tw2, poly)];
            core::array::from_fn(|i| all[i])
        }
    }

    #[inline(always)]
    fn advance<const W: usize>(&self, tw: &mut [__m512i; W]) {
        for t in tw.iter_mut() {
            // SAFETY: as in `xts`.
            *t = unsafe { mul_x16(*t, self.poly) };
        }
    }

    #[inline(always)]
    fn lane(&self, v: __m512i, i: usize) -> __m128i {
        // SAFETY: as in `xts`.
        unsafe {
            match i {
                0 => _mm512_castsi512_si128(v),
                1 => _mm512_extracti32x4_epi32::<1>(v),
                2 => _mm512_extracti32x4_epi32::<2>(v),
                _ => _mm512_extracti32x4_epi32::<3>(v),
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
        const { assert!(U == 4 * 4, "four zmm chains of four IVs") };
        let k2 = &self.k2;
        // SAFETY: SSE2 is the x86_64 baseline.
        let mut out = [unsafe { _mm_setzero_si128() }; U];
        // SAFETY: as in `xts`; `ivs` and `out` hold `U * 16` bytes, vector
        // `i < 4` covers bytes `64 * i .. 64 * i + 64` of them.
        unsafe {
            let mut s = [_mm512_setzero_si512(); 4];
            for (i, s) in s.iter_mut().enumerate() {
                let v = _mm512_loadu_si512(ivs.as_ptr().add(4 * i).cast());
                *s = _mm512_xor_si512(v, k2[0]);
            }
            for k in &k2[1..NR] {
                for s in s.iter_mut() {
                    *s = _mm512_aesenc_epi128(*s, *k);
                }
            }
            for (i, s) in s.iter().enumerate() {
                let v = _mm512_aesenclast_epi128(*s, k2[NR]);
                _mm512_storeu_si512(out.as_mut_ptr().add(4 * i).cast(), v);
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
/// The CPU has AES-NI, AVX2, AVX-512 F/BW/VL, VAES and VPCLMULQDQ; `src` and
/// `dst` are valid for `count * unit_len` bytes and are equal or disjoint;
/// `unit_len >= 16`; `NR` is 10 or 14 and matches the schedules in `keys`;
/// a `list` holds `count` IVs.
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,avx2,avx512f,avx512bw,avx512vl,vaes,vpclmulqdq")]
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
    let l = Zmm {
        rk: broadcast512(&rk_x),
        rk_x,
        k2: broadcast512(&k2_x),
        k2_x,
        poly: _mm512_set_epi64(1, 0x87, 1, 0x87, 1, 0x87, 1, 0x87),
    };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `l` holds the matching schedules.
    unsafe { driver::crypt::<Zmm, NR, ENC, WIDTH, UNITS>(&l, &ivs, unit_len, count, src, dst) }
}
