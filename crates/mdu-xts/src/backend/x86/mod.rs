//! x86_64 backends: per width, the XTS tweak steps ([`Tweaks`]) and the
//! `#[target_feature]` entry point; the vectors and AES rounds are
//! `mdu_aes::vector`'s, the XTS algorithm itself is `backend::driver`.
//!
//! Conventions: a tweak is a 128-bit little-endian integer in an xmm
//! register (or in each 128-bit lane of a ymm/zmm register); multiplying by
//! x shifts it left by one and folds bit 127 back as 0x87.
//!
//! [`Tweaks`]: super::driver::Tweaks

use core::arch::x86_64::*;

use mdu_aes::vector::Xmm;

pub(crate) mod aesni;
pub(crate) mod vaes256;
pub(crate) mod vaes512;

pub(crate) use super::simd::RoundKeys;

/// `t * x` in GF(2^128), one tweak per xmm register.
///
/// Both 64-bit halves are doubled; bit 63 carries into bit 64 and bit 127
/// reduces to 0x87, selected by sign-extended masks of those two bits.
#[inline(always)]
pub(crate) fn mul_x(t: Xmm) -> Xmm {
    // SAFETY: SSE2 is the x86_64 baseline; the result is a register like
    // the input.
    unsafe {
        let t = t.raw();
        let poly = _mm_set_epi64x(1, 0x87);
        let doubled = _mm_add_epi64(t, t);
        let carries = _mm_srai_epi32::<31>(_mm_shuffle_epi32::<0x13>(t));
        Xmm::from_raw(_mm_xor_si128(doubled, _mm_and_si128(carries, poly)))
    }
}
