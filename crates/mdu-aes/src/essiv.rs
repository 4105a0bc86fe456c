//! ESSIV ("encrypted salt-sector IV"), written once for every user: the
//! dm-crypt `essiv:sha256` IV generator and fscrypt's AES-128-CBC-ESSIV
//! contents mode both encrypt their plain IVs here.
//!
//! The IV cipher is AES-256 keyed with `salt = SHA-256(key)`, whatever the
//! data cipher and its key length; an IV is `AES-256_salt(plain IV)`. A
//! batch of IVs is one [`Ecb`] call, which runs 16 blocks in flight on
//! VAES (8 on AES-NI).

use mdu_core::Iv;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::{Aes256, Ecb, SetupError};

/// IVs encrypted in one [`Ecb`] call: the stack buffer of
/// [`Essiv::encrypt_ivs`] holds this many (1 KiB).
const BATCH: usize = 64;

/// The ESSIV IV cipher of a key: AES-256 keyed with `SHA-256(key)`.
///
/// The salt is hashed into a `Zeroizing` buffer and the AES key read from
/// there without a copy; the SHA-256 state zeroizes itself on drop, the
/// round keys live on the heap and are wiped on drop, and what the setup
/// leaves on the stack is wiped before [`Essiv::new`] returns.
///
/// ```
/// use mdu_aes::Essiv;
/// use mdu_core::Iv;
///
/// let essiv = Essiv::new(&[0x42; 32])?;
/// let mut ivs = [Iv::plain64(7), Iv::plain64(8), Iv::plain64(7)];
/// essiv.encrypt_ivs(&mut ivs);
/// assert_eq!(ivs[0], ivs[2]);
/// assert_ne!(ivs[0], Iv::plain64(7));
/// # Ok::<(), mdu_aes::SetupError>(())
/// ```
#[derive(Clone)]
pub struct Essiv {
    aes: Ecb<Aes256>,
}

impl core::fmt::Debug for Essiv {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Essiv").finish_non_exhaustive()
    }
}

impl Essiv {
    /// The IV cipher of `key` (any length: the whole key of the data
    /// cipher, both XTS halves included), on the best AES backend of this
    /// CPU.
    ///
    /// # Errors
    ///
    /// None in practice (the salt is always an AES-256 key); the `Result`
    /// is the one of every AES key setup.
    ///
    /// ```
    /// let essiv = mdu_aes::Essiv::new(b"any length")?;
    /// # let _ = essiv;
    /// # Ok::<(), mdu_aes::SetupError>(())
    /// ```
    pub fn new(key: &[u8]) -> Result<Essiv, SetupError> {
        let aes = Self::setup(key);
        // The hash state and the AES-256 expansion ran in the stack below
        // this frame: wipe it.
        crate::wipe::after_key_setup();
        Ok(Essiv { aes: aes? })
    }

    /// The hashing and the key expansion, not inlined so that
    /// [`new`](Self::new) can wipe the stack they used.
    #[inline(never)]
    fn setup(key: &[u8]) -> Result<Ecb<Aes256>, SetupError> {
        let mut salt = Zeroizing::new([0u8; 32]);
        let mut hash = Sha256::new();
        Digest::update(&mut hash, key);
        hash.finalize_into((&mut *salt).into());
        Ecb::new(&*salt)
    }

    /// Replaces every IV of `ivs` by its AES-256 encryption under the salt,
    /// 64 IVs per [`Ecb`] call.
    ///
    /// ```
    /// use mdu_aes::Essiv;
    /// use mdu_core::Iv;
    ///
    /// let essiv = Essiv::new(&[1; 64])?;
    /// let mut many: Vec<Iv> = (0..100).map(Iv::plain64).collect();
    /// essiv.encrypt_ivs(&mut many);
    /// let mut one = [Iv::plain64(99)];
    /// essiv.encrypt_ivs(&mut one);
    /// assert_eq!(many[99], one[0]);
    /// # Ok::<(), mdu_aes::SetupError>(())
    /// ```
    pub fn encrypt_ivs(&self, ivs: &mut [Iv]) {
        let mut blocks = [0u8; 16 * BATCH];
        for chunk in ivs.chunks_mut(BATCH) {
            let blocks = &mut blocks[..16 * chunk.len()];
            for (b, iv) in blocks.chunks_exact_mut(16).zip(chunk.iter()) {
                b.copy_from_slice(&iv.0);
            }
            self.aes.encrypt_blocks(blocks);
            for (iv, b) in chunk.iter_mut().zip(blocks.chunks_exact(16)) {
                iv.0.copy_from_slice(b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn essiv_is_aes256_of_the_sha256_of_the_key() {
        use aes::cipher::{BlockCipherEncrypt, KeyInit};

        let volume_key: alloc::vec::Vec<u8> = (0..64).collect();
        let salt: [u8; 32] = Sha256::digest(&volume_key).into();
        let want = aes::Aes256::new(&salt.into());
        let mut ivs: alloc::vec::Vec<Iv> = (0..BATCH as u64 + 3).map(Iv::plain64).collect();
        let plain = ivs.clone();
        Essiv::new(&volume_key).unwrap().encrypt_ivs(&mut ivs);
        for (got, p) in ivs.iter().zip(&plain) {
            let mut a = aes::Block::from(p.0);
            want.encrypt_block(&mut a);
            assert_eq!(got.0, a.0, "{p:?}");
        }
    }

    /// The salt and its AES key are wiped like the keys of the cipher
    /// crates: no 16-byte piece of the salt is left on the stack after the
    /// setup or a clone.
    #[test]
    #[cfg(x86_simd)]
    fn essiv_setup_leaves_no_salt_on_the_stack() {
        use crate::wipe::{PROBE_DEPTH, contains, dead_stack};

        let key: alloc::vec::Vec<u8> = (0..64u32).map(|i| (i * 37 + 11) as u8).collect();
        let salt: alloc::vec::Vec<u8> = Sha256::digest(&key).to_vec();
        let mut seen = alloc::vec![0u8; PROBE_DEPTH];
        zeroize::zeroize_stack::<PROBE_DEPTH>();
        let essiv = Essiv::new(&key).unwrap();
        dead_stack(&mut seen);
        for (i, piece) in salt.chunks(16).enumerate() {
            assert!(!contains(&seen, piece), "essiv salt piece {i}");
        }
        let copy = essiv.clone();
        dead_stack(&mut seen);
        for (i, piece) in salt.chunks(16).enumerate() {
            assert!(!contains(&seen, piece), "clone: essiv salt piece {i}");
        }
        drop((essiv, copy));
    }
}
