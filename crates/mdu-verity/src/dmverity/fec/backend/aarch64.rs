//! The FEC encoder's LFSR steps on arm64: the feedback bytes of 16
//! codewords at a time multiplied by each generator coefficient with two
//! `tbl` nibble lookups (NEON), run by the driver in `simd`.

use core::arch::aarch64::*;

use mdu_core::cpu::Witness;

use super::simd::{Lanes, run_roots};
use super::{Blocks, needs};
use crate::dmverity::fec::gf::Code;

/// The steps of a run of blocks with nibble lookups (NEON, which every
/// arm64 CPU that runs Linux has).
pub(crate) fn run_neon(
    _: Witness<needs::Neon>,
    code: &Code,
    state: &mut [u8],
    blocks: &Blocks<'_>,
) {
    // SAFETY: the witness proves NEON, the feature `steps_neon` is compiled
    // for.
    unsafe { steps_neon(code, state, blocks) }
}

struct Neon {
    lo: [uint8x16_t; 24],
    hi: [uint8x16_t; 24],
    nibble: uint8x16_t,
}

impl Lanes for Neon {
    type V = uint8x16_t;
    const W: usize = 16;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> uint8x16_t {
        // SAFETY: the caller's contract; NEON is on (see the trait).
        unsafe { vld1q_u8(p) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: uint8x16_t) {
        // SAFETY: as for `load`.
        unsafe { vst1q_u8(p, v) }
    }
    #[inline(always)]
    fn xor(a: uint8x16_t, b: uint8x16_t) -> uint8x16_t {
        // SAFETY: NEON is on wherever a `Neon` exists.
        unsafe { veorq_u8(a, b) }
    }
    #[inline(always)]
    fn mul(&self, j: usize, f: uint8x16_t) -> uint8x16_t {
        // SAFETY: as for `xor`.
        unsafe {
            let l = vqtbl1q_u8(self.lo[j], vandq_u8(f, self.nibble));
            let h = vqtbl1q_u8(self.hi[j], vshrq_n_u8::<4>(f));
            veorq_u8(l, h)
        }
    }
}

/// The steps of a run of blocks with nibble lookups.
///
/// # Safety
///
/// The CPU has NEON (a `Witness<needs::Neon>`).
#[target_feature(enable = "neon")]
unsafe fn steps_neon(code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
    let mut lanes = Neon {
        lo: [vdupq_n_u8(0); 24],
        hi: [vdupq_n_u8(0); 24],
        nibble: vdupq_n_u8(0x0f),
    };
    for (j, m) in code.mul.iter().enumerate() {
        // SAFETY: each table is 16 readable bytes.
        unsafe {
            lanes.lo[j] = vld1q_u8(m.lo.as_ptr());
            lanes.hi[j] = vld1q_u8(m.hi.as_ptr());
        }
    }
    run_roots(&lanes, code, state, blocks)
}
