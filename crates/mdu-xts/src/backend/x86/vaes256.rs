//! VAES + VPCLMULQDQ on ymm registers (AVX2, no AVX-512 needed): two blocks
//! per vector, eight vectors (sixteen blocks) in flight per iteration.
//!
//! * Eight independent AES chains: enough for an AES latency of 4 at two
//!   instructions per cycle. Eight states take half of the sixteen ymm
//!   registers; the round keys (broadcast to both lanes once per request)
//!   are loaded once per round, and the eight tweak vectors live on the
//!   stack, read as operands and written back when they advance (see
//!   `WHOLE_GROUPS` below).
//! * A unit's sixteen tweaks are `[T, Tx]` times `x^2`, `x^4`, `x^6` (a
//!   per-qword shift whose carries reduce by one carry-less multiply), then
//!   those four times `x^8`; each vector then advances by `x^16` per
//!   iteration. Steps of whole bytes are lane byte shifts and one
//!   carry-less multiply of the bytes shifted out by 0x87: on Intel cores
//!   they run on the shuffle port, not on the ports the AES rounds use.
//! * The first tweaks of sixteen units are encrypted together, eight ymm
//!   chains.

use core::arch::x86_64::*;

use super::mul_x;
use mdu_aes::__private::vector::{Register, Xmm, Ymm};

use crate::backend::driver::Tweaks;

/// Units whose first tweaks are encrypted together.
const UNITS: usize = 16;
/// Vectors in flight in the main loop.
const WIDTH: usize = 8;

/// `0x87` and `1` in the qwords of each lane (the reduction and carry).
#[inline(always)]
fn poly() -> __m256i {
    // SAFETY: AVX is among the features of the entry point this is
    // inlined into (every caller is).
    unsafe { _mm256_set_epi64x(1, 0x87, 1, 0x87) }
}

/// `t * x^k` in each 128-bit lane for `0 < k < 57`: each qword shifted
/// left by `k`; the `k` bits out of the high qword reduce by a carry-less
/// multiply with 0x87, those out of the low qword carry into the high one.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_xk(t: __m256i, k: i32) -> __m256i {
    let top = _mm256_srl_epi64(t, _mm_cvtsi32_si128(64 - k));
    let reduced = _mm256_clmulepi64_epi128::<0x01>(top, poly());
    let carried = _mm256_bslli_epi128::<8>(top);
    let shifted = _mm256_sll_epi64(t, _mm_cvtsi32_si128(k));
    _mm256_xor_si256(_mm256_xor_si256(shifted, reduced), carried)
}

/// `t * x^(8 * B)` in each 128-bit lane for `B` of 1 or 2: a `B`-byte
/// lane shift and the reduction of the bytes shifted out.
#[inline]
#[target_feature(enable = "avx2,vpclmulqdq")]
fn mul_x8b<const B: i32, const OUT: i32>(t: __m256i) -> __m256i {
    let top = _mm256_bsrli_epi128::<OUT>(t);
    let reduced = _mm256_clmulepi64_epi128::<0x00>(top, poly());
    _mm256_xor_si256(_mm256_bslli_epi128::<B>(t), reduced)
}

impl Tweaks for Ymm {
    /// Eight states and eight tweak vectors already fill the sixteen ymm
    /// registers, so the tweaks are spilled either way. Kept in memory and
    /// read as operands they cost less than the spills and register moves
    /// of the tail-free path: on Zen 4, AES-128 units ran at 0.94-0.97 of
    /// one long message that way, at every unit size from 4 KiB to 64 KiB,
    /// and at 0.98-1.01 on the general path (4 KiB).
    const WHOLE_GROUPS: bool = false;

    #[inline(always)]
    unsafe fn setup<const W: usize>(t: Xmm) -> [Ymm; W] {
        const { assert!(W == 8, "sixteen tweaks in eight vectors") };
        // SAFETY: AVX2 and VPCLMULQDQ (the caller).
        unsafe {
            let tw0 = Ymm::from_lanes(|i| if i == 0 { t } else { mul_x(t) }).raw();
            let low = [tw0, mul_xk(tw0, 2), mul_xk(tw0, 4), mul_xk(tw0, 6)];
            // The upper eight are the lower eight times x^8: byte shifts,
            // which leave the vector shift units to the AES rounds.
            mdu_platform::simd::array(|i| {
                Ymm::from_raw(if i < 4 {
                    low[i]
                } else {
                    mul_x8b::<1, 15>(low[i - 4])
                })
            })
        }
    }

    #[inline(always)]
    unsafe fn advance<const W: usize>(t: Ymm) -> Ymm {
        const { assert!(W == 8, "a step of x^16 is eight vectors of two") };
        // SAFETY: AVX2 and VPCLMULQDQ (the caller).
        unsafe { Ymm::from_raw(mul_x8b::<2, 14>(t.raw())) }
    }

    #[inline(always)]
    fn mul_x(t: Xmm) -> Xmm {
        mul_x(t)
    }
}

crate::backend::driver::entry_point!(Ymm, WIDTH, UNITS, Vaes256);
