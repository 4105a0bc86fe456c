//! One lane per 128-bit NEON register: NEON, the arm64 baseline.

use core::arch::aarch64::*;

use super::{Register, Sealed};

/// 16 bytes in a NEON register; see the [module](super) docs.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Neon(uint8x16_t);

impl Neon {
    /// The register.
    #[inline(always)]
    pub fn raw(self) -> uint8x16_t {
        self.0
    }

    /// A register as a value of this type.
    ///
    /// # Safety
    ///
    /// None beyond the baseline: kept `unsafe` like every constructor of
    /// the module.
    #[inline(always)]
    pub unsafe fn from_raw(v: uint8x16_t) -> Neon {
        Neon(v)
    }
}

impl Sealed for Neon {}

impl Register for Neon {
    const LANES: usize = 1;
    type Lane = Neon;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Neon {
        // SAFETY: 16 readable bytes (the caller); no alignment need.
        Neon(unsafe { vld1q_u8(src) })
    }

    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: 16 writable bytes (the caller); no alignment need.
        unsafe { vst1q_u8(dst, self.0) }
    }

    #[inline(always)]
    unsafe fn gather(src: *const u8, _: usize) -> Neon {
        // SAFETY: forwarded from the caller.
        unsafe { Neon::load(src) }
    }

    #[inline(always)]
    unsafe fn scatter(self, dst: *mut u8, _: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { self.store(dst) }
    }

    #[inline(always)]
    unsafe fn splat(b: Neon) -> Neon {
        b
    }

    #[inline(always)]
    unsafe fn from_lanes(mut lanes: impl FnMut(usize) -> Neon) -> Neon {
        lanes(0)
    }

    #[inline(always)]
    fn lane_from_u128(x: u128) -> Neon {
        // SAFETY: 16 readable bytes; NEON is the arm64 baseline.
        Neon(unsafe { vld1q_u8(x.to_le_bytes().as_ptr()) })
    }

    #[inline(always)]
    fn lane(self, _: usize) -> Neon {
        self
    }

    #[inline(always)]
    fn xor(self, b: Neon) -> Neon {
        // SAFETY: NEON is the arm64 baseline.
        Neon(unsafe { veorq_u8(self.0, b.0) })
    }

    #[inline(always)]
    fn xor3(self, b: Neon, c: Neon) -> Neon {
        self.xor(b).xor(c)
    }

    #[inline(always)]
    fn shift_in(carry: Neon, _: Neon) -> Neon {
        carry
    }
}
