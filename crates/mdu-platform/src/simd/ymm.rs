//! Two lanes per ymm register: AVX2.

use core::arch::x86_64::*;

use super::{Register, Sealed, Xmm};

/// 32 bytes in a ymm register; see the [module](super) docs.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Ymm(__m256i);

impl Ymm {
    /// The register.
    #[inline(always)]
    pub fn raw(self) -> __m256i {
        self.0
    }

    /// A register as a value of this type.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2.
    #[inline(always)]
    pub unsafe fn from_raw(v: __m256i) -> Ymm {
        Ymm(v)
    }
}

impl Sealed for Ymm {}

impl Register for Ymm {
    const LANES: usize = 2;
    type Lane = Xmm;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Ymm {
        // SAFETY: 32 readable bytes and AVX (the caller).
        Ymm(unsafe { _mm256_loadu_si256(src.cast()) })
    }

    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: 32 writable bytes (the caller); a `Ymm` proves AVX2.
        unsafe { _mm256_storeu_si256(dst.cast(), self.0) }
    }

    #[inline(always)]
    unsafe fn gather(src: *const u8, stride: usize) -> Ymm {
        // SAFETY: 16 readable bytes at `src` and `src + stride`, and AVX2
        // (the caller).
        unsafe {
            let lo = _mm_loadu_si128(src.cast());
            let hi = _mm_loadu_si128(src.add(stride).cast());
            Ymm(_mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi))
        }
    }

    #[inline(always)]
    unsafe fn scatter(self, dst: *mut u8, stride: usize) {
        // SAFETY: 16 writable bytes at `dst` and `dst + stride` (the
        // caller); a `Ymm` proves AVX2.
        unsafe {
            _mm_storeu_si128(dst.cast(), _mm256_castsi256_si128(self.0));
            _mm_storeu_si128(
                dst.add(stride).cast(),
                _mm256_extracti128_si256::<1>(self.0),
            );
        }
    }

    #[inline(always)]
    unsafe fn splat(b: Xmm) -> Ymm {
        // SAFETY: AVX2 (the caller).
        Ymm(unsafe { _mm256_broadcastsi128_si256(b.raw()) })
    }

    #[inline(always)]
    unsafe fn from_lanes(mut lanes: impl FnMut(usize) -> Xmm) -> Ymm {
        let (lo, hi) = (lanes(0), lanes(1));
        // SAFETY: AVX2 (the caller).
        Ymm(unsafe { _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo.raw()), hi.raw()) })
    }

    #[inline(always)]
    fn lane_from_u128(x: u128) -> Xmm {
        Xmm::lane_from_u128(x)
    }

    #[inline(always)]
    fn lane(self, i: usize) -> Xmm {
        // SAFETY: a `Ymm` proves AVX2; the result is an xmm register.
        unsafe {
            Xmm::from_raw(if i == 0 {
                _mm256_castsi256_si128(self.0)
            } else {
                _mm256_extracti128_si256::<1>(self.0)
            })
        }
    }

    #[inline(always)]
    fn xor(self, b: Ymm) -> Ymm {
        // SAFETY: a `Ymm` proves AVX2.
        Ymm(unsafe { _mm256_xor_si256(self.0, b.0) })
    }

    #[inline(always)]
    fn xor3(self, b: Ymm, c: Ymm) -> Ymm {
        self.xor(b).xor(c)
    }

    #[inline(always)]
    fn shift_in(carry: Ymm, v: Ymm) -> Ymm {
        // [carry.hi, v.lo].
        // SAFETY: a `Ymm` proves AVX2.
        Ymm(unsafe { _mm256_permute2x128_si256::<0x21>(carry.0, v.0) })
    }
}
