//! x86_64 backends: the single-block pieces (tweak doubling, one XTS block,
//! a unit's first tweak) that all three widths share; the key schedule and
//! the round-key loading are `mdu-aes`'s, the XTS algorithm itself is
//! `backend::driver`.
//!
//! Conventions: a tweak is a 128-bit little-endian integer in an xmm
//! register (or in each 128-bit lane of a ymm/zmm register); multiplying by
//! x shifts it left by one and folds bit 127 back as 0x87.

use core::arch::x86_64::*;

pub(crate) mod aesni;
pub(crate) mod vaes256;
pub(crate) mod vaes512;

pub(crate) use super::simd::RoundKeys;
use mdu_aes::x86::iv_vector;

/// `t * x` in GF(2^128), one tweak per xmm register.
///
/// Both 64-bit halves are doubled; bit 63 carries into bit 64 and bit 127
/// reduces to 0x87, selected by sign-extended masks of those two bits.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn mul_x(t: __m128i) -> __m128i {
    let poly = _mm_set_epi64x(1, 0x87);
    let doubled = _mm_add_epi64(t, t);
    let carries = _mm_srai_epi32::<31>(_mm_shuffle_epi32::<0x13>(t));
    _mm_xor_si128(doubled, _mm_and_si128(carries, poly))
}

/// XTS on one block: `E(b ^ t) ^ t` (or D), with the final tweak XOR folded
/// into the last round key.
#[inline]
#[target_feature(enable = "aes")]
pub(crate) fn xts_block<const NR: usize, const ENC: bool>(
    rk: &[__m128i; 15],
    b: __m128i,
    t: __m128i,
) -> __m128i {
    let mut s = _mm_xor_si128(_mm_xor_si128(b, t), rk[0]);
    for k in &rk[1..NR] {
        s = if ENC {
            _mm_aesenc_si128(s, *k)
        } else {
            _mm_aesdec_si128(s, *k)
        };
    }
    let last = _mm_xor_si128(rk[NR], t);
    if ENC {
        _mm_aesenclast_si128(s, last)
    } else {
        _mm_aesdeclast_si128(s, last)
    }
}

/// The first tweak of a unit: `E_K2(iv)` with the tweak key's schedule.
#[inline]
#[target_feature(enable = "aes")]
pub(crate) fn encrypt_iv<const NR: usize>(k2: &[__m128i; 15], iv: u128) -> __m128i {
    xts_block::<NR, true>(k2, iv_vector(iv), _mm_setzero_si128())
}
