//! x86_64 backends: the single-block CBC steps on xmm registers that all
//! three widths share (the whole of `aesni`, the tails of `vaes256` and
//! `vaes512`); the key schedule and the round-key loading are `mdu-aes`'s,
//! the CBC algorithm itself is `backend::driver`.

use core::arch::x86_64::*;

pub(crate) mod aesni;
pub(crate) mod vaes256;
pub(crate) mod vaes512;

/// One CBC encryption step of `N` chains, one block each:
/// `s[i] = E(x[i] ^ s[i])`, round by round across the chains.
#[inline]
#[target_feature(enable = "aes")]
pub(crate) fn chain<const NR: usize, const N: usize>(
    rk: &[__m128i; 15],
    s: &mut [__m128i; N],
    x: &[__m128i; N],
) {
    for (s, x) in s.iter_mut().zip(x) {
        *s = _mm_xor_si128(_mm_xor_si128(*s, *x), rk[0]);
    }
    for k in &rk[1..NR] {
        for s in s.iter_mut() {
            *s = _mm_aesenc_si128(*s, *k);
        }
    }
    for s in s.iter_mut() {
        *s = _mm_aesenclast_si128(*s, rk[NR]);
    }
}

/// CBC decryption of `N` blocks: `D(c[i]) ^ p[i]`, the XOR folded into the
/// last round key. `rk` is the equivalent inverse cipher's schedule.
#[inline]
#[target_feature(enable = "aes")]
pub(crate) fn unchain<const NR: usize, const N: usize>(
    rk: &[__m128i; 15],
    c: &[__m128i; N],
    p: &[__m128i; N],
) -> [__m128i; N] {
    let mut s = *c;
    for s in s.iter_mut() {
        *s = _mm_xor_si128(*s, rk[0]);
    }
    for k in &rk[1..NR] {
        for s in s.iter_mut() {
            *s = _mm_aesdec_si128(*s, *k);
        }
    }
    for (s, p) in s.iter_mut().zip(p) {
        *s = _mm_aesdeclast_si128(*s, _mm_xor_si128(rk[NR], *p));
    }
    s
}
