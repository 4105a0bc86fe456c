//! One lane per xmm register: SSE2, the x86_64 baseline.

use core::arch::x86_64::*;

use super::{Register, Sealed};

/// 16 bytes in an xmm register; see the [module](super) docs.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Xmm(__m128i);

impl Xmm {
    /// The register.
    #[inline(always)]
    pub fn raw(self) -> __m128i {
        self.0
    }

    /// A register as a value of this type.
    ///
    /// # Safety
    ///
    /// None beyond the baseline: kept `unsafe` like every constructor of
    /// the module, so a value made here proves no more than one loaded.
    #[inline(always)]
    pub unsafe fn from_raw(v: __m128i) -> Xmm {
        Xmm(v)
    }
}

impl Sealed for Xmm {}

impl Register for Xmm {
    const LANES: usize = 1;
    type Lane = Xmm;

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
    fn lane_from_u128(x: u128) -> Xmm {
        // SAFETY: SSE2 is the x86_64 baseline.
        Xmm(unsafe { _mm_set_epi64x((x >> 64) as i64, x as i64) })
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
}
