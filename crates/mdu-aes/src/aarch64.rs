//! arm64: the key schedule for the Armv8 Crypto Extensions, stored round
//! keys loaded into vector registers, and the round functions.
//!
//! The instructions split an AES round differently from the x86 ones:
//! `AESE` is AddRoundKey, SubBytes, ShiftRows (the key comes first) and
//! `AESMC` is MixColumns, so a cipher is `AESE`+`AESMC` with round keys 0 to
//! NR-2, `AESE` with round key NR-1 and a plain XOR with round key NR.
//! Decryption runs the equivalent inverse cipher the same way with `AESD`
//! and `AESIMC`.
//!
//! ```
//! # #[cfg(target_arch = "aarch64")] {
//! if std::arch::is_aarch64_feature_detected!("aes") {
//!     let mut enc = [[0u8; 16]; 15];
//!     // SAFETY: the AES instructions were detected just above.
//!     unsafe { mdu_aes::__private::aarch64::expand(&[0u8; 16], &mut enc, None) };
//!     // FIPS 197: the last round key of the all-zero AES-128 key.
//!     assert_eq!(enc[10][0], 0xb4);
//! }
//! # }
//! ```

use core::arch::aarch64::*;

use crate::Schedule;

/// SubWord: the S-box on each byte of `w`, in constant time.
///
/// The word is broadcast to the four columns of a state and put through one
/// `AESE` with a zero round key: SubBytes substitutes every byte, and
/// ShiftRows only exchanges bytes between columns that are all equal, so
/// column 0 is the substituted word. No table is indexed by key bytes.
#[inline]
#[target_feature(enable = "aes")]
fn sub_word(w: u32) -> u32 {
    let state = vreinterpretq_u8_u32(vdupq_n_u32(w));
    let out = vaeseq_u8(state, vdupq_n_u8(0));
    vgetq_lane_u32::<0>(vreinterpretq_u32_u8(out))
}

/// Word `i` of a stored schedule (four little-endian words per round key).
#[inline]
fn word(s: &Schedule, i: usize) -> u32 {
    let (round, at) = (&s[i / 4], 4 * (i % 4));
    u32::from_le_bytes([round[at], round[at + 1], round[at + 2], round[at + 3]])
}

/// Writes the FIPS-197 encryption schedule of a 16- or 32-byte AES key
/// (rounds 0..=10 or 0..=14) into `out`, word by word in place: the
/// schedule is computed in its final slots, with no working copy.
#[inline]
#[target_feature(enable = "aes")]
fn expand_enc(key: &[u8], out: &mut Schedule) {
    let nk = key.len() / 4;
    let words = 4 * (nk + 7);
    let set = |out: &mut Schedule, i: usize, w: u32| {
        let at = 4 * (i % 4);
        out[i / 4][at..at + 4].copy_from_slice(&w.to_le_bytes());
    };
    for (i, src) in key.chunks_exact(4).enumerate() {
        set(out, i, u32::from_le_bytes([src[0], src[1], src[2], src[3]]));
    }
    // Words are little-endian (byte 0 of the word in bits 0..8), so RotWord
    // is a right rotation by one byte and Rcon goes into the low byte.
    let mut rcon = 1u32;
    for i in nk..words {
        let mut t = word(out, i - 1);
        if i % nk == 0 {
            t = sub_word(t).rotate_right(8) ^ rcon;
            // Rcon doubles in GF(2^8): 01, 02, .., 80, 1b, 36 (no key data).
            rcon = (rcon << 1) ^ if rcon & 0x80 != 0 { 0x11b } else { 0 };
        } else if nk == 8 && i % nk == 4 {
            t = sub_word(t);
        }
        set(out, i, word(out, i - nk) ^ t);
    }
}

/// Writes the encryption schedule of the 16- or 32-byte AES key `key` into
/// `enc` and, if asked, the equivalent inverse cipher's into `dec`; see
/// [`crate::__private::expand`], the arch-independent entry point. Other key lengths
/// leave the schedules as they are (the callers check the length first).
///
/// # Safety
///
/// The CPU has the features of its `#[target_feature]` list (callers
/// compiled for them call it safely).
#[inline]
#[target_feature(enable = "aes")]
pub fn expand(key: &[u8], enc: &mut Schedule, dec: Option<&mut Schedule>) {
    if key.len() != 16 && key.len() != 32 {
        return;
    }
    expand_enc(key, enc);
    if let Some(dec) = dec {
        let nr = crate::rounds(key.len());
        dec[0] = enc[nr];
        for i in 1..nr {
            store(&mut dec[i], vaesimcq_u8(load(&enc[nr - i])));
        }
        dec[nr] = enc[0];
    }
}

/// Loads 16 bytes.
#[inline]
pub fn load(bytes: &[u8; 16]) -> uint8x16_t {
    // SAFETY: `bytes` is 16 readable bytes; `ld1` has no alignment need.
    unsafe { vld1q_u8(bytes.as_ptr()) }
}

/// Stores a vector register into 16 bytes.
#[inline]
pub fn store(dst: &mut [u8; 16], v: uint8x16_t) {
    // SAFETY: `dst` is 16 writable bytes; `st1` has no alignment need.
    unsafe { vst1q_u8(dst.as_mut_ptr(), v) };
}

/// The 16 bytes of a vector register.
#[inline]
pub fn bytes(v: uint8x16_t) -> [u8; 16] {
    let mut out = [0u8; 16];
    store(&mut out, v);
    out
}

/// Loads a stored schedule into vector registers.
///
/// # Safety
///
/// The CPU has the features of its `#[target_feature]` list (callers
/// compiled for them call it safely).
#[inline]
#[target_feature(enable = "neon")]
pub fn load_schedule(s: &Schedule) -> [uint8x16_t; 15] {
    let mut rk = [vdupq_n_u8(0); 15];
    for (dst, src) in rk.iter_mut().zip(s) {
        *dst = load(src);
    }
    rk
}

/// An IV (a little-endian integer) in a vector register.
///
/// # Safety
///
/// The CPU has the features of its `#[target_feature]` list (callers
/// compiled for them call it safely).
#[inline]
#[target_feature(enable = "neon")]
pub fn iv_vector(iv: u128) -> uint8x16_t {
    load(&iv.to_le_bytes())
}

/// One AES round of the cipher (`ENC`) or of the equivalent inverse cipher:
/// AddRoundKey `k`, then (Inv)SubBytes, (Inv)ShiftRows, (Inv)MixColumns.
///
/// # Safety
///
/// The CPU has the features of its `#[target_feature]` list (callers
/// compiled for them call it safely).
#[inline]
#[target_feature(enable = "aes")]
pub fn round<const ENC: bool>(s: uint8x16_t, k: uint8x16_t) -> uint8x16_t {
    if ENC {
        vaesmcq_u8(vaeseq_u8(s, k))
    } else {
        vaesimcq_u8(vaesdq_u8(s, k))
    }
}

/// The last AES round without its final AddRoundKey (the caller XORs the
/// last round key, which a mode may fold with its own whitening).
///
/// # Safety
///
/// The CPU has the features of its `#[target_feature]` list (callers
/// compiled for them call it safely).
#[inline]
#[target_feature(enable = "aes")]
pub fn last_round<const ENC: bool>(s: uint8x16_t, k: uint8x16_t) -> uint8x16_t {
    if ENC {
        vaeseq_u8(s, k)
    } else {
        vaesdq_u8(s, k)
    }
}

/// One whole block through the cipher (`ENC`) or the equivalent inverse
/// cipher with the schedule `rk` (in the order of the direction).
///
/// # Safety
///
/// The CPU has the features of its `#[target_feature]` list (callers
/// compiled for them call it safely).
#[inline]
#[target_feature(enable = "aes")]
pub fn block<const NR: usize, const ENC: bool>(rk: &[uint8x16_t; 15], b: uint8x16_t) -> uint8x16_t {
    let mut s = b;
    for k in &rk[..NR - 1] {
        s = round::<ENC>(s, *k);
    }
    veorq_u8(last_round::<ENC>(s, rk[NR - 1]), rk[NR])
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
    use std::vec::Vec;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn blk(s: &str) -> [u8; 16] {
        hex(s).try_into().unwrap()
    }

    fn detected() -> bool {
        std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull")
    }

    /// The encryption and decryption schedules of `key`.
    struct Keys {
        enc: Schedule,
        dec: Schedule,
    }

    /// One block through the schedules of `key`: encryption with `enc`,
    /// decryption of the result with `dec`.
    #[target_feature(enable = "aes")]
    fn crypt_both_inner<const NR: usize>(keys: &Keys, pt: [u8; 16]) -> ([u8; 16], [u8; 16]) {
        let enc = load_schedule(&keys.enc);
        let dec = load_schedule(&keys.dec);
        let ct = block::<NR, true>(&enc, load(&pt));
        (bytes(ct), bytes(block::<NR, false>(&dec, ct)))
    }

    /// The schedules of `key`, expanded in place.
    ///
    /// # Safety
    ///
    /// The CPU has the AES instructions.
    unsafe fn expanded(key: &[u8]) -> Keys {
        let mut keys = Keys {
            enc: [[0; 16]; 15],
            dec: [[0; 16]; 15],
        };
        // SAFETY: forwarded from the caller.
        unsafe { crate::__private::expand(key, &mut keys.enc, Some(&mut keys.dec)) };
        keys
    }

    fn crypt_both(key: &[u8], pt: [u8; 16]) -> ([u8; 16], [u8; 16]) {
        assert!(detected());
        // SAFETY: the AES instructions were detected just above.
        unsafe {
            let keys = expanded(key);
            if key.len() == 32 {
                crypt_both_inner::<14>(&keys, pt)
            } else {
                crypt_both_inner::<10>(&keys, pt)
            }
        }
    }

    #[test]
    fn fips_197_appendix_a_schedules() {
        if !detected() {
            return;
        }
        // A.1: the last round key of 2b7e1516 28aed2a6 abf71588 09cf4f3c.
        // SAFETY: the AES instructions were detected just above.
        let keys = unsafe { expanded(&hex("2b7e151628aed2a6abf7158809cf4f3c")) };
        assert_eq!(keys.enc[10], blk("d014f9a8c9ee2589e13f0cc8b6630ca6"));
        assert_eq!(keys.enc[1], blk("a0fafe1788542cb123a339392a6c7605"));
        // A.3: AES-256 round keys 2 and 14.
        let k256 = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
        // SAFETY: as above.
        let keys = unsafe { expanded(&k256) };
        assert_eq!(keys.enc[2], blk("9ba354118e6925afa51a8b5f2067fcde"));
        assert_eq!(keys.enc[14], blk("fe4890d1e6188d0b046df344706c631e"));
        assert_eq!(keys.dec[0], keys.enc[14]);
        assert_eq!(keys.dec[14], keys.enc[0]);
    }

    #[test]
    fn fips_197_appendix_c_blocks() {
        if !detected() {
            return;
        }
        let pt = blk("00112233445566778899aabbccddeeff");
        let cases = [
            (
                "000102030405060708090a0b0c0d0e0f",
                "69c4e0d86a7b0430d8cdb78070b4c55a",
            ),
            (
                "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "8ea2b7ca516745bfeafc49904b496089",
            ),
        ];
        for (key, ct) in cases {
            let (got, back) = crypt_both(&hex(key), pt);
            assert_eq!(got, blk(ct), "key {key}");
            assert_eq!(back, pt, "key {key}");
        }
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
            let (got, back) = crypt_both(&key, pt);
            let mut want = aes::Block::from(pt);
            let mut inv = aes::Block::from(pt);
            if len == 16 {
                let c = aes::Aes128::new_from_slice(&key).unwrap();
                c.encrypt_block(&mut want);
                c.decrypt_block(&mut inv);
            } else {
                let c = aes::Aes256::new_from_slice(&key).unwrap();
                c.encrypt_block(&mut want);
                c.decrypt_block(&mut inv);
            }
            assert_eq!(got, want.0, "{key:02x?}");
            assert_eq!(back, pt);
            // The decryption schedule also inverts the cipher the other way.
            let (enc_of_inv, _) = crypt_both(&key, inv.0);
            assert_eq!(enc_of_inv, pt);
        }
    }
}
