//! x86_64: the AES-NI key schedule and the moves of stored round keys and
//! IVs into xmm registers (the vector layer is `crate::vector`).
//!
//! ```
//! # #[cfg(target_arch = "x86_64")] {
//! if std::arch::is_x86_feature_detected!("aes") {
//!     let mut enc = [[0u8; 16]; 15];
//!     // SAFETY: AES-NI was detected just above.
//!     unsafe { mdu_aes::__private::x86::expand(&[0u8; 16], &mut enc, None) };
//!     // FIPS 197: the last round key of the all-zero AES-128 key.
//!     assert_eq!(enc[10][0], 0xb4);
//! }
//! # }
//! ```

use core::arch::x86_64::*;

use crate::Schedule;

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

/// Writes the encryption schedule of the 16- or 32-byte AES key `key` into
/// `enc` and, if asked, the equivalent inverse cipher's into `dec`; see
/// [`crate::__private::expand`], the arch-independent entry point. The key is loaded
/// from where the caller holds it, never copied. Other key lengths leave
/// the schedules as they are (the callers check the length first).
///
/// # Safety
///
/// The CPU has the features of its `#[target_feature]` list (callers
/// compiled for them call it safely).
#[inline]
#[target_feature(enable = "aes")]
pub fn expand(key: &[u8], enc: &mut Schedule, dec: Option<&mut Schedule>) {
    match (key.len(), key.first_chunk::<16>(), key.last_chunk::<16>()) {
        (32, Some(lo), Some(hi)) => expand256(load(lo), load(hi), enc),
        (16, Some(k), _) => expand128(load(k), enc),
        _ => return,
    }
    if let Some(dec) = dec {
        let nr = crate::rounds(key.len());
        dec[0] = enc[nr];
        for i in 1..nr {
            store(&mut dec[i], _mm_aesimc_si128(load(&enc[nr - i])));
        }
        dec[nr] = enc[0];
    }
}

/// Stores an xmm register into 16 bytes.
#[inline]
pub fn store(dst: &mut [u8; 16], v: __m128i) {
    // SAFETY: `dst` is 16 writable bytes; `storeu` has no alignment need.
    unsafe { _mm_storeu_si128(dst.as_mut_ptr().cast(), v) };
}

/// Loads 16 bytes into an xmm register.
#[inline]
pub fn load(bytes: &[u8; 16]) -> __m128i {
    // SAFETY: `bytes` is 16 readable bytes; `loadu` has no alignment need.
    unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
}

/// An IV (a little-endian integer) in an xmm register, moved there from
/// general-purpose registers: going through memory would store two 8-byte
/// halves and load 16 bytes, which the store buffer cannot forward (a
/// stall of a dozen cycles, per IV).
#[inline]
pub fn iv_vector(iv: u128) -> __m128i {
    // SAFETY: SSE2 is the x86_64 baseline.
    unsafe { _mm_set_epi64x((iv >> 64) as i64, iv as i64) }
}

/// Loads a stored schedule into xmm registers.
///
/// # Safety
///
/// The CPU has the features of its `#[target_feature]` list (callers
/// compiled for them call it safely).
#[inline]
#[target_feature(enable = "sse2")]
pub fn load_schedule(s: &Schedule) -> [__m128i; 15] {
    let mut rk = [_mm_setzero_si128(); 15];
    for (dst, src) in rk.iter_mut().zip(s) {
        *dst = load(src);
    }
    rk
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
    use std::vec::Vec;

    fn detected() -> bool {
        crate::CpuFeatures::get().aes
    }

    /// One block through both schedules with AES-NI.
    #[target_feature(enable = "aes")]
    fn both_ways<const NR: usize>(
        enc: &Schedule,
        dec: &Schedule,
        pt: [u8; 16],
    ) -> ([u8; 16], [u8; 16]) {
        let (e, d) = (load_schedule(enc), load_schedule(dec));
        let mut s = _mm_xor_si128(load(&pt), e[0]);
        for k in &e[1..NR] {
            s = _mm_aesenc_si128(s, *k);
        }
        s = _mm_aesenclast_si128(s, e[NR]);
        let mut ct = [0u8; 16];
        store(&mut ct, s);
        let mut s = _mm_xor_si128(s, d[0]);
        for k in &d[1..NR] {
            s = _mm_aesdec_si128(s, *k);
        }
        s = _mm_aesdeclast_si128(s, d[NR]);
        let mut back = [0u8; 16];
        store(&mut back, s);
        (ct, back)
    }

    #[test]
    fn schedules_match_the_aes_crate() {
        if !detected() {
            return;
        }
        let mut x = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        };
        for i in 0..64 {
            let len = if i % 2 == 0 { 16 } else { 32 };
            let key: Vec<u8> = (0..len).map(|_| next()).collect();
            let pt: [u8; 16] = core::array::from_fn(|_| next());
            let (mut enc, mut dec) = ([[0u8; 16]; 15], [[0u8; 16]; 15]);
            // SAFETY: AES-NI was detected above.
            let (ct, back) = unsafe {
                crate::__private::expand(&key, &mut enc, Some(&mut dec));
                if len == 16 {
                    both_ways::<10>(&enc, &dec, pt)
                } else {
                    both_ways::<14>(&enc, &dec, pt)
                }
            };
            let mut want = aes::Block::from(pt);
            if len == 16 {
                aes::Aes128::new_from_slice(&key)
                    .unwrap()
                    .encrypt_block(&mut want);
            } else {
                aes::Aes256::new_from_slice(&key)
                    .unwrap()
                    .encrypt_block(&mut want);
            }
            assert_eq!(ct, want.0, "{key:02x?}");
            assert_eq!(back, pt);
            let mut inv = aes::Block::from(ct);
            if len == 16 {
                aes::Aes128::new_from_slice(&key)
                    .unwrap()
                    .decrypt_block(&mut inv);
            } else {
                aes::Aes256::new_from_slice(&key)
                    .unwrap()
                    .decrypt_block(&mut inv);
            }
            assert_eq!(inv.0, pt);
        }
    }
}
