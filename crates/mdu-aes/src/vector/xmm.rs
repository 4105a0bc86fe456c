//! One block per xmm register: SSE2 (the x86_64 baseline) for the moves,
//! AES-NI for the rounds.

use core::arch::x86_64::*;

use super::{Sealed, Vector};

/// One AES block in an xmm register; see the [module](super) docs.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Xmm(__m128i);

impl Xmm {
    /// The register.
    #[inline(always)]
    pub fn raw(self) -> __m128i {
        self.0
    }

    /// A register as a vector.
    ///
    /// # Safety
    ///
    /// None beyond the baseline: kept `unsafe` like every constructor of
    /// the layer, so a value made here proves no more than one loaded.
    #[inline(always)]
    pub unsafe fn from_raw(v: __m128i) -> Xmm {
        Xmm(v)
    }
}

impl Sealed for Xmm {}

impl Vector for Xmm {
    const BLOCKS: usize = 1;
    type Block = Xmm;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Xmm {
        // SAFETY: 16 readable bytes (the caller); no alignment need.
        Xmm(unsafe { _mm_loadu_si128(src.cast()) })
    }

    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: 16 writable bytes (the caller); no alignment need.
        unsafe { _mm_storeu_si128(dst.cast(), self.0) }
    }

    #[inline(always)]
    unsafe fn gather(src: *const u8, _: usize) -> Xmm {
        // SAFETY: forwarded from the caller.
        unsafe { Xmm::load(src) }
    }

    #[inline(always)]
    unsafe fn scatter(self, dst: *mut u8, _: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { self.store(dst) }
    }

    #[inline(always)]
    unsafe fn splat(b: Xmm) -> Xmm {
        b
    }

    #[inline(always)]
    unsafe fn from_lanes(mut lanes: impl FnMut(usize) -> Xmm) -> Xmm {
        lanes(0)
    }

    #[inline(always)]
    fn block(x: u128) -> Xmm {
        Xmm(crate::x86::iv_vector(x))
    }

    #[inline(always)]
    fn lane(self, _: usize) -> Xmm {
        self
    }

    #[inline(always)]
    fn xor(self, b: Xmm) -> Xmm {
        // SAFETY: SSE2 is the x86_64 baseline.
        Xmm(unsafe { _mm_xor_si128(self.0, b.0) })
    }

    #[inline(always)]
    fn xor3(self, b: Xmm, c: Xmm) -> Xmm {
        self.xor(b).xor(c)
    }

    #[inline(always)]
    fn shift_in(carry: Xmm, _: Xmm) -> Xmm {
        carry
    }

    #[inline(always)]
    unsafe fn aes<const NR: usize, const ENC: bool, const N: usize>(
        rk: &[Xmm; 15],
        s: [Xmm; N],
        pre: Option<&[Xmm; N]>,
        post: Option<&[Xmm; N]>,
    ) -> [Xmm; N] {
        // SAFETY: the caller's contract.
        unsafe { super::x86::aes::<Xmm, NR, ENC, N>(rk, s, pre, post) }
    }
}

impl super::x86::Rounds for Xmm {
    #[inline(always)]
    unsafe fn round<const ENC: bool>(self, k: Xmm) -> Xmm {
        // SAFETY: the caller's contract: the CPU has this width's AES.
        Xmm(unsafe {
            if ENC {
                _mm_aesenc_si128(self.0, k.0)
            } else {
                _mm_aesdec_si128(self.0, k.0)
            }
        })
    }

    #[inline(always)]
    unsafe fn last<const ENC: bool>(self, k: Xmm) -> Xmm {
        // SAFETY: as in `round`.
        Xmm(unsafe {
            if ENC {
                _mm_aesenclast_si128(self.0, k.0)
            } else {
                _mm_aesdeclast_si128(self.0, k.0)
            }
        })
    }
}
