//! The FEC encoder's LFSR steps on x86_64: the feedback bytes of 32 or 64
//! codewords at a time multiplied by each generator coefficient, with two
//! `vpshufb` nibble lookups (AVX2) or one GFNI affine transform (ymm, or
//! zmm with AVX-512), run by the driver in `driver` on the registers of
//! `mdu_platform::simd`.

use core::arch::x86_64::*;

use mdu_platform::cpu::Witness;
use mdu_platform::simd::{Ymm, Zmm};

use super::driver::{Lanes, run_roots};
use super::{Blocks, needs};
use crate::dmverity::fec::gf::Code;

/// The steps of a run of blocks with nibble lookups (AVX2).
pub(crate) fn run_avx2(
    _: Witness<needs::Avx2>,
    code: &Code,
    state: &mut [u8],
    blocks: &Blocks<'_>,
) {
    // SAFETY: the witness proves AVX2, the feature `steps_avx2` is
    // compiled for.
    unsafe { steps_avx2(code, state, blocks) }
}

/// The steps of a run of blocks with the GFNI affine transform on ymm.
pub(crate) fn run_gfni(
    _: Witness<needs::Gfni>,
    code: &Code,
    state: &mut [u8],
    blocks: &Blocks<'_>,
) {
    // SAFETY: the witness proves GFNI and AVX2, the features `steps_gfni`
    // is compiled for.
    unsafe { steps_gfni(code, state, blocks) }
}

/// The steps of a run of blocks with the GFNI affine transform on zmm.
pub(crate) fn run_gfni512(
    _: Witness<needs::Gfni512>,
    code: &Code,
    state: &mut [u8],
    blocks: &Blocks<'_>,
) {
    // SAFETY: the witness proves GFNI and AVX-512F, the features
    // `steps_gfni512` is compiled for.
    unsafe { steps_gfni512(code, state, blocks) }
}

struct Avx2 {
    lo: [__m256i; 24],
    hi: [__m256i; 24],
    nibble: __m256i,
}

impl Lanes for Avx2 {
    type V = Ymm;
    #[inline(always)]
    fn mul(&self, j: usize, f: Ymm) -> Ymm {
        let f = f.raw();
        // SAFETY: AVX2 is on wherever an `Avx2` exists.
        unsafe {
            let l = _mm256_shuffle_epi8(self.lo[j], _mm256_and_si256(f, self.nibble));
            let h = _mm256_shuffle_epi8(
                self.hi[j],
                _mm256_and_si256(_mm256_srli_epi16::<4>(f), self.nibble),
            );
            Ymm::from_raw(_mm256_xor_si256(l, h))
        }
    }
}

struct Gfni256 {
    a: [__m256i; 24],
}

impl Lanes for Gfni256 {
    type V = Ymm;
    #[inline(always)]
    fn mul(&self, j: usize, f: Ymm) -> Ymm {
        // SAFETY: GFNI and AVX2 are on wherever a `Gfni256` exists.
        unsafe { Ymm::from_raw(_mm256_gf2p8affine_epi64_epi8::<0>(f.raw(), self.a[j])) }
    }
}

struct Gfni512 {
    a: [__m512i; 24],
}

impl Lanes for Gfni512 {
    type V = Zmm;
    #[inline(always)]
    fn mul(&self, j: usize, f: Zmm) -> Zmm {
        // SAFETY: GFNI and AVX-512F are on wherever a `Gfni512` exists.
        unsafe { Zmm::from_raw(_mm512_gf2p8affine_epi64_epi8::<0>(f.raw(), self.a[j])) }
    }
}

needs::target_features!(Avx2 =>
    /// The steps of a run of blocks with nibble lookups.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2 (a `Witness<needs::Avx2>`).
    unsafe fn steps_avx2(code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
        let mut lanes = Avx2 {
            lo: [_mm256_setzero_si256(); 24],
            hi: [_mm256_setzero_si256(); 24],
            nibble: _mm256_set1_epi8(0x0f),
        };
        for (j, m) in code.mul.iter().enumerate() {
            // SAFETY: each table is 16 readable bytes.
            unsafe {
                lanes.lo[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128(m.lo.as_ptr().cast()));
                lanes.hi[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128(m.hi.as_ptr().cast()));
            }
        }
        run_roots(&lanes, code, state, blocks)
    }
);

needs::target_features!(Gfni =>
    /// The steps of a run of blocks with the GFNI affine transform on ymm
    /// (multiplication by a constant is linear over GF(2), whatever the field
    /// polynomial).
    ///
    /// # Safety
    ///
    /// The CPU has GFNI and AVX2 (a `Witness<needs::Gfni>`).
    unsafe fn steps_gfni(code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
        let mut lanes = Gfni256 {
            a: [_mm256_setzero_si256(); 24],
        };
        for (j, m) in code.mul.iter().enumerate() {
            lanes.a[j] = _mm256_set1_epi64x(m.matrix as i64);
        }
        run_roots(&lanes, code, state, blocks)
    }
);

needs::target_features!(Gfni512 =>
    /// The steps of a run of blocks with the GFNI affine transform on zmm.
    ///
    /// # Safety
    ///
    /// The CPU has GFNI and AVX-512F (a `Witness<needs::Gfni512>`).
    unsafe fn steps_gfni512(code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
        let mut lanes = Gfni512 {
            a: [_mm512_setzero_si512(); 24],
        };
        for (j, m) in code.mul.iter().enumerate() {
            lanes.a[j] = _mm512_set1_epi64(m.matrix as i64);
        }
        run_roots(&lanes, code, state, blocks)
    }
);
