//! VAES + VPCLMULQDQ on zmm registers (AVX-512): four blocks per vector,
//! four vectors (sixteen blocks) in flight per iteration.
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

use super::mul_x;
use mdu_aes::__private::vector::{Xmm, Zmm};

use crate::backend::driver::Tweaks;

/// Units whose first tweaks are encrypted together.
const UNITS: usize = 16;
/// Vectors in flight in the main loop.
const WIDTH: usize = 4;

/// `0x87` and `1` in the qwords of each lane (the reduction and carry).
#[inline(always)]
fn poly() -> __m512i {
    // SAFETY: AVX-512 F is among the features of the entry point this is
    // inlined into (every caller is).
    unsafe { _mm512_set_epi64(1, 0x87, 1, 0x87, 1, 0x87, 1, 0x87) }
}

/// `t * x^4` in each 128-bit lane (per-qword shift; bits out of the high
/// qword reduce by a carry-less multiply with 0x87, bits out of the low
/// qword carry into the high one).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn mul_x4(t: __m512i) -> __m512i {
    let top = _mm512_srli_epi64::<60>(t);
    let reduced = _mm512_clmulepi64_epi128::<0x01>(top, poly());
    let carried = _mm512_bslli_epi128::<8>(top);
    _mm512_ternarylogic_epi64::<0x96>(_mm512_slli_epi64::<4>(t), reduced, carried)
}

/// `t * x^(8 * B)` in each 128-bit lane for `B` of 1 or 2: a `B`-byte
/// lane shift and the reduction of the bytes shifted out (byte shifts and
/// the carry-less multiply run on the shuffle port, away from the AES
/// unit).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn mul_x8b<const B: i32, const OUT: i32>(t: __m512i) -> __m512i {
    let top = _mm512_bsrli_epi128::<OUT>(t);
    let reduced = _mm512_clmulepi64_epi128::<0x00>(top, poly());
    _mm512_xor_si512(_mm512_bslli_epi128::<B>(t), reduced)
}

/// `[t, t*x, t*x^2, t*x^3]`: lane `j` shifts each qword left by `j` (a shift
/// by 64 gives zero), the bits shifted out reduce or carry as in [`mul_x4`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq")]
fn spread(t: __m128i) -> __m512i {
    let tb = _mm512_broadcast_i32x4(t);
    let right = _mm512_set_epi64(61, 61, 62, 62, 63, 63, 64, 64);
    let left = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
    let top = _mm512_srlv_epi64(tb, right);
    let reduced = _mm512_clmulepi64_epi128::<0x01>(top, poly());
    let carried = _mm512_bslli_epi128::<8>(top);
    _mm512_ternarylogic_epi64::<0x96>(_mm512_sllv_epi64(tb, left), reduced, carried)
}

impl Tweaks for Zmm {
    /// Four states, four tweak vectors and the round keys fit in the 32 zmm
    /// registers: without the tails' dynamic indexing the tweaks stay there
    /// (AES-128 512-byte units 1-7% faster on Zen 4; a tweak array on the
    /// stack costs four zmm stores and loads per unit).
    const WHOLE_GROUPS: bool = true;

    #[inline(always)]
    unsafe fn setup<const W: usize>(t: Xmm) -> [Zmm; W] {
        const { assert!(W == 4, "sixteen tweaks in four vectors") };
        // SAFETY: AVX-512 F/BW and VPCLMULQDQ (the caller).
        unsafe {
            let tw0 = spread(t.raw());
            let tw2 = mul_x8b::<1, 15>(tw0);
            let all = [tw0, mul_x4(tw0), tw2, mul_x4(tw2)];
            core::array::from_fn(|i| Zmm::from_raw(all[i]))
        }
    }

    #[inline(always)]
    unsafe fn advance<const W: usize>(t: Zmm) -> Zmm {
        const { assert!(W == 4, "a step of x^16 is four vectors of four") };
        // SAFETY: AVX-512 F/BW and VPCLMULQDQ (the caller).
        unsafe { Zmm::from_raw(mul_x8b::<2, 14>(t.raw())) }
    }

    #[inline(always)]
    fn mul_x(t: Xmm) -> Xmm {
        mul_x(t)
    }
}

crate::backend::driver::entry_point!(Zmm, WIDTH, UNITS, Vaes512);
