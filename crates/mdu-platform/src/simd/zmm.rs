//! Four lanes per zmm register: AVX-512 F. Three-way XORs are one
//! `vpternlogq`.

use core::arch::x86_64::*;

use super::{Register, Sealed, Xmm};

/// 64 bytes in a zmm register; see the [module](super) docs.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Zmm(__m512i);

impl Zmm {
    /// The register.
    #[inline(always)]
    pub fn raw(self) -> __m512i {
        self.0
    }

    /// A register as a value of this type.
    ///
    /// # Safety
    ///
    /// The CPU has AVX-512 F.
    #[inline(always)]
    pub unsafe fn from_raw(v: __m512i) -> Zmm {
        Zmm(v)
    }
}

impl Sealed for Zmm {}

impl Register for Zmm {
    const LANES: usize = 4;
    type Lane = Xmm;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Zmm {
        // SAFETY: 64 readable bytes and AVX-512 F (the caller).
        Zmm(unsafe { _mm512_loadu_si512(src.cast()) })
    }

    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: 64 writable bytes (the caller); a `Zmm` proves AVX-512 F.
        unsafe { _mm512_storeu_si512(dst.cast(), self.0) }
    }

    #[inline(always)]
    unsafe fn gather(src: *const u8, stride: usize) -> Zmm {
        // SAFETY: 16 readable bytes at `src + k * stride` for k < 4, and
        // AVX-512 F (the caller), which implies the AVX2 of the ymm halves.
        // Two ymm halves joined once: one 512-bit shuffle instead of three
        // `vinserti32x4` (zmm shuffles share the AES pipes on Zen 4).
        unsafe {
            let at = |k: usize| _mm_loadu_si128(src.add(k * stride).cast());
            let lo = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(at(0)), at(1));
            let hi = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(at(2)), at(3));
            Zmm(_mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi))
        }
    }

    #[inline(always)]
    unsafe fn scatter(self, dst: *mut u8, stride: usize) {
        // SAFETY: 16 writable bytes at `dst + k * stride` for k < 4 (the
        // caller); a `Zmm` proves AVX-512 F, which implies the AVX2 of the
        // ymm halves (split once: one 512-bit shuffle, as in `gather`).
        unsafe {
            let at = |k: usize| dst.add(k * stride).cast::<__m128i>();
            let lo = _mm512_castsi512_si256(self.0);
            let hi = _mm512_extracti64x4_epi64::<1>(self.0);
            _mm_storeu_si128(at(0), _mm256_castsi256_si128(lo));
            _mm_storeu_si128(at(1), _mm256_extracti128_si256::<1>(lo));
            _mm_storeu_si128(at(2), _mm256_castsi256_si128(hi));
            _mm_storeu_si128(at(3), _mm256_extracti128_si256::<1>(hi));
        }
    }

    #[inline(always)]
    unsafe fn splat(b: Xmm) -> Zmm {
        // SAFETY: AVX-512 F (the caller).
        Zmm(unsafe { _mm512_broadcast_i32x4(b.raw()) })
    }

    #[inline(always)]
    unsafe fn from_lanes(mut lanes: impl FnMut(usize) -> Xmm) -> Zmm {
        let (a, b, c, d) = (lanes(0), lanes(1), lanes(2), lanes(3));
        // SAFETY: AVX-512 F (the caller).
        unsafe {
            let v = _mm512_castsi128_si512(a.raw());
            let v = _mm512_inserti32x4::<1>(v, b.raw());
            let v = _mm512_inserti32x4::<2>(v, c.raw());
            Zmm(_mm512_inserti32x4::<3>(v, d.raw()))
        }
    }

    #[inline(always)]
    fn lane_from_u128(x: u128) -> Xmm {
        Xmm::lane_from_u128(x)
    }

    #[inline(always)]
    fn lane(self, i: usize) -> Xmm {
        // SAFETY: a `Zmm` proves AVX-512 F; the result is an xmm register.
        unsafe {
            Xmm::from_raw(match i {
                0 => _mm512_castsi512_si128(self.0),
                1 => _mm512_extracti32x4_epi32::<1>(self.0),
                2 => _mm512_extracti32x4_epi32::<2>(self.0),
                _ => _mm512_extracti32x4_epi32::<3>(self.0),
            })
        }
    }

    #[inline(always)]
    fn xor(self, b: Zmm) -> Zmm {
        // SAFETY: a `Zmm` proves AVX-512 F.
        Zmm(unsafe { _mm512_xor_si512(self.0, b.0) })
    }

    #[inline(always)]
    fn xor3(self, b: Zmm, c: Zmm) -> Zmm {
        // SAFETY: a `Zmm` proves AVX-512 F.
        Zmm(unsafe { _mm512_ternarylogic_epi64::<0x96>(self.0, b.0, c.0) })
    }

    #[inline(always)]
    fn shift_in(carry: Zmm, v: Zmm) -> Zmm {
        // (v : carry) shifted down by six qwords: [carry.3, v.0, v.1, v.2].
        // SAFETY: a `Zmm` proves AVX-512 F.
        Zmm(unsafe { _mm512_alignr_epi64::<6>(v.0, carry.0) })
    }
}
