//! The FEC encoder's LFSR steps on arm64: the feedback bytes of 16
//! codewords at a time multiplied by each generator coefficient with two
//! `tbl` nibble lookups (NEON), run by the driver in `driver` on the
//! registers of `mdu_platform::simd`.

use core::arch::aarch64::*;

use mdu_platform::cpu::Witness;
use mdu_platform::simd::Neon;

use super::driver::{Lanes, run_roots};
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

struct Tbl {
    lo: [uint8x16_t; 24],
    hi: [uint8x16_t; 24],
    nibble: uint8x16_t,
}

impl Lanes for Tbl {
    type V = Neon;
    #[inline(always)]
    fn mul(&self, j: usize, f: Neon) -> Neon {
        let f = f.raw();
        // SAFETY: NEON is on wherever a `Tbl` exists.
        unsafe {
            let l = vqtbl1q_u8(self.lo[j], vandq_u8(f, self.nibble));
            let h = vqtbl1q_u8(self.hi[j], vshrq_n_u8::<4>(f));
            Neon::from_raw(veorq_u8(l, h))
        }
    }
}

needs::target_features!(Neon =>
    /// The steps of a run of blocks with nibble lookups.
    ///
    /// # Safety
    ///
    /// The CPU has NEON (a `Witness<needs::Neon>`).
    unsafe fn steps_neon(code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
        let mut lanes = Tbl {
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
);
