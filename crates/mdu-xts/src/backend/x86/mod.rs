//! x86_64 backends: the AES-NI key schedule and the single-block pieces
//! (tweak doubling, one XTS block, a unit's first tweak) that all three
//! widths share; the XTS algorithm itself is `backend::driver`.
//!
//! Conventions: a tweak is a 128-bit little-endian integer in an xmm
//! register (or in each 128-bit lane of a ymm/zmm register); multiplying by
//! x shifts it left by one and folds bit 127 back as 0x87.

use core::arch::x86_64::*;

pub(crate) mod aesni;
pub(crate) mod vaes256;
pub(crate) mod vaes512;

pub(crate) use super::simd::{RoundKeys, Schedule};

/// One step of the key schedule: `prev` with its words prefix-XORed, then
/// XORed with the (already shuffled) `aeskeygenassist` output `t`.
#[inline]
#[target_feature(enable = "aes")]
fn expand_step(prev: __m128i, t: __m128i) -> __m128i {
    let mut k = prev;
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    _mm_xor_si128(k, t)
}

macro_rules! assist {
    ($k:expr, $rcon:literal, $word:literal) => {
        _mm_shuffle_epi32::<$word>(_mm_aeskeygenassist_si128::<$rcon>($k))
    };
}

/// Writes the AES-128 encryption schedule of `key` (rounds 0..=10) into
/// `out`, each round key straight from its register to its slot.
#[inline]
#[target_feature(enable = "aes")]
fn expand128(key: __m128i, out: &mut Schedule) {
    let mut k = key;
    store(&mut out[0], k);
    macro_rules! round {
        ($($i:literal: $rcon:literal),+) => {$(
            k = expand_step(k, assist!(k, $rcon, 0xff));
            store(&mut out[$i], k);
        )+};
    }
    round!(1: 0x01, 2: 0x02, 3: 0x04, 4: 0x08, 5: 0x10, 6: 0x20, 7: 0x40, 8: 0x80, 9: 0x1b, 10: 0x36);
}

/// Writes the AES-256 encryption schedule of `lo || hi` (rounds 0..=14)
/// into `out`. Even round keys come from the previous even one and an
/// `aeskeygenassist` (with Rcon) of the odd one before; odd round keys from
/// the previous odd one and a SubWord-only assist of the even one before.
#[inline]
#[target_feature(enable = "aes")]
fn expand256(lo: __m128i, hi: __m128i, out: &mut Schedule) {
    let (mut even, mut odd) = (lo, hi);
    store(&mut out[0], even);
    store(&mut out[1], odd);
    macro_rules! rounds {
        ($($i:literal: $rcon:literal),+) => {$(
            even = expand_step(even, assist!(odd, $rcon, 0xff));
            store(&mut out[$i], even);
            odd = expand_step(odd, assist!(even, 0x00, 0xaa));
            store(&mut out[$i + 1], odd);
        )+};
    }
    rounds!(2: 0x01, 4: 0x02, 6: 0x04, 8: 0x08, 10: 0x10, 12: 0x20);
    even = expand_step(even, assist!(odd, 0x40, 0xff));
    store(&mut out[14], even);
}

/// Writes the encryption schedule of a 16- or 32-byte AES key into `out`.
/// The key is loaded from where the caller holds it, never copied.
#[inline]
#[target_feature(enable = "aes")]
fn expand(key: &[u8], out: &mut Schedule) {
    match (key.len(), key.first_chunk::<16>(), key.last_chunk::<16>()) {
        (32, Some(lo), Some(hi)) => expand256(load(lo), load(hi), out),
        (16, Some(k), _) => expand128(load(k), out),
        // The callers pass the checked halves of a 32- or 64-byte key.
        _ => {}
    }
}

/// Stores an xmm register into a stored round key.
#[inline]
fn store(dst: &mut [u8; 16], v: __m128i) {
    // SAFETY: `dst` is 16 writable bytes; `storeu` has no alignment need.
    unsafe { _mm_storeu_si128(dst.as_mut_ptr().cast(), v) };
}

/// Loads 16 bytes.
#[inline]
pub(crate) fn load(bytes: &[u8; 16]) -> __m128i {
    // SAFETY: `bytes` is 16 readable bytes; `loadu` has no alignment need.
    unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
}

impl RoundKeys {
    /// Expands the halves `k1` (data) and `k2` (tweak), each 16 or 32
    /// bytes, into these (heap-allocated, zeroed) schedules in place.
    ///
    /// No schedule or key copy is made in memory outside `self`: the round
    /// keys go from registers to their slots. What the compiler spills to
    /// the stack meanwhile lies in this function's frame, which the caller
    /// wipes once it has returned (hence `inline(never)`).
    #[inline(never)]
    #[target_feature(enable = "aes")]
    pub(crate) fn expand_into(&mut self, k1: &[u8], k2: &[u8]) {
        let nr = if k1.len() == 32 { 14 } else { 10 };
        expand(k1, &mut self.enc);
        expand(k2, &mut self.tweak);
        // The equivalent inverse cipher: reversed, InvMixColumns on the
        // middle round keys.
        self.dec[0] = self.enc[nr];
        for i in 1..nr {
            store(&mut self.dec[i], _mm_aesimc_si128(load(&self.enc[nr - i])));
        }
        self.dec[nr] = self.enc[0];
    }
}

/// Loads a stored schedule into xmm registers.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn load_schedule(s: &Schedule) -> [__m128i; 15] {
    let mut rk = [_mm_setzero_si128(); 15];
    for (dst, src) in rk.iter_mut().zip(s) {
        *dst = load(src);
    }
    rk
}

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
    xts_block::<NR, true>(k2, load(&iv.to_le_bytes()), _mm_setzero_si128())
}
