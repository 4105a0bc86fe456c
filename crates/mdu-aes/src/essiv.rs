//! ESSIV ("encrypted salt-sector IV"), written once for every user: the
//! dm-crypt `essiv:sha256` IV generator and fscrypt's AES-128-CBC-ESSIV
//! contents mode both encrypt their plain IVs here.
//!
//! The IV cipher is the data cipher's block cipher keyed with
//! `salt = SHA-256(key)`, whatever the data cipher's key length (the
//! kernel's `essiv` template: `essiv(cbc(aes),sha256)` encrypts IVs with
//! AES-256, `essiv(cbc(serpent),sha256)` with Serpent-256); an IV is
//! `E_salt(plain IV)`. For AES a batch of IVs is one [`Ecb`] call, which
//! runs 16 blocks in flight on VAES (8 on AES-NI); any other 128-bit block
//! cipher of the RustCrypto traits runs through its own `encrypt_blocks`.

use alloc::boxed::Box;

use aes::cipher::{KeySizeUser, typenum::Unsigned};
use mdu_core::Iv;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::{Aes256, BlockAes, Ecb, SetupError};

/// IVs encrypted in one [`Ecb`] call: the stack buffer of
/// [`Essiv::encrypt_ivs`] holds this many (1 KiB).
const BATCH: usize = 64;

/// The ESSIV IV cipher of a key: AES-256 keyed with `SHA-256(key)`
/// ([`new`](Self::new)), or another 128-bit block cipher keyed with it
/// ([`with_cipher`](Self::with_cipher)).
///
/// The salt is hashed into a `Zeroizing` buffer and the cipher's key read
/// from there without a copy; the SHA-256 state zeroizes itself on drop,
/// the key schedule lives on the heap and is wiped on drop, and what the
/// setup leaves on the stack is wiped before the constructor returns.
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
    cipher: IvCipher,
}

/// The block cipher that encrypts the IVs.
#[derive(Clone)]
enum IvCipher {
    /// AES-256 on the best backend of this CPU.
    Aes(Ecb<Aes256>),
    /// Any other 128-bit block cipher, behind one vtable.
    Other(Box<dyn BlockEncrypt>),
}

/// A boxed 128-bit block cipher that encrypts whole blocks in place and
/// clones itself (its schedule wiped on drop: `C: ZeroizeOnDrop`).
trait BlockEncrypt: Send + Sync {
    /// Encrypts `blocks` (a whole number of 16-byte blocks) in place.
    fn encrypt_blocks(&self, blocks: &mut [u8]);
    /// A copy on the heap.
    fn boxed_clone(&self) -> Box<dyn BlockEncrypt>;
}

impl<C: BlockAes + zeroize::ZeroizeOnDrop> BlockEncrypt for C {
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        for chunk in blocks.chunks_exact_mut(16) {
            let mut b = aes::Block::try_from(&*chunk).expect("16-byte chunk");
            self.encrypt_block(&mut b);
            chunk.copy_from_slice(&b);
            zeroize::Zeroize::zeroize(&mut b.0);
        }
    }

    fn boxed_clone(&self) -> Box<dyn BlockEncrypt> {
        let copy = Box::new(self.clone());
        crate::wipe::after_key_setup();
        copy
    }
}

impl Clone for Box<dyn BlockEncrypt> {
    fn clone(&self) -> Self {
        self.boxed_clone()
    }
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
        let aes = Self::setup(key, |salt| Ecb::new(salt).map(IvCipher::Aes));
        // The hash state and the AES-256 expansion ran in the stack below
        // this frame: wipe it.
        crate::wipe::after_key_setup();
        Ok(Essiv { cipher: aes? })
    }

    /// The IV cipher of `key` with the block cipher `C` keyed by the
    /// 32-byte salt, as the kernel's `essiv` template runs it for a data
    /// cipher over `C` (dm-crypt's `serpent-cbc-essiv:sha256`: Serpent-256
    /// under `SHA-256(key)`).
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] if `C` takes no 32-byte key (SM4,
    /// Camellia-128): the kernel refuses such an `essiv` instance too.
    ///
    /// ```
    /// use mdu_aes::{Essiv, SetupError};
    /// use mdu_core::Iv;
    ///
    /// let essiv = Essiv::with_cipher::<aes::Aes256>(&[9; 32])?;
    /// let (mut a, mut b) = ([Iv::plain64(5)], [Iv::plain64(5)]);
    /// essiv.encrypt_ivs(&mut a);
    /// Essiv::new(&[9; 32])?.encrypt_ivs(&mut b);
    /// assert_eq!(a, b);
    /// assert!(matches!(
    ///     Essiv::with_cipher::<aes::Aes128>(&[9; 32]),
    ///     Err(SetupError::InvalidKeyLength { len: 32, expected: 16 })
    /// ));
    /// # Ok::<(), SetupError>(())
    /// ```
    pub fn with_cipher<C: BlockAes + zeroize::ZeroizeOnDrop>(
        key: &[u8],
    ) -> Result<Essiv, SetupError> {
        let cipher = Self::setup(key, |salt| {
            C::new_from_slice(salt)
                .map(|c| IvCipher::Other(Box::new(c)))
                .map_err(|_| SetupError::InvalidKeyLength {
                    len: salt.len(),
                    expected: <C as KeySizeUser>::KeySize::USIZE,
                })
        });
        crate::wipe::after_key_setup();
        Ok(Essiv { cipher: cipher? })
    }

    /// The hashing and the key expansion (`expand` of the salt), not
    /// inlined so that the constructors can wipe the stack they used.
    #[inline(never)]
    fn setup(
        key: &[u8],
        expand: impl FnOnce(&[u8]) -> Result<IvCipher, SetupError>,
    ) -> Result<IvCipher, SetupError> {
        let mut salt = Zeroizing::new([0u8; 32]);
        let mut hash = Sha256::new();
        Digest::update(&mut hash, key);
        hash.finalize_into((&mut *salt).into());
        expand(&*salt)
    }

    /// Replaces every IV of `ivs` by its encryption under the salt, 64 IVs
    /// per call of the block cipher ([`Ecb`] for AES).
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
            match &self.cipher {
                IvCipher::Aes(aes) => aes.encrypt_blocks(blocks),
                IvCipher::Other(c) => c.encrypt_blocks(blocks),
            }
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

    /// Another block cipher under the salt: Serpent-256, as the kernel's
    /// `essiv(cbc(serpent),sha256)`; a cipher without 32-byte keys is
    /// refused.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "Serpent's key schedule and 67 blocks take most of a minute in the interpreter; the AES test covers the shared code"
    )]
    fn essiv_with_serpent_is_serpent256_of_the_sha256_of_the_key() {
        use aes::cipher::{BlockCipherEncrypt, KeyInit};

        let volume_key: alloc::vec::Vec<u8> = (0..48).map(|i| i * 3).collect();
        let salt: [u8; 32] = Sha256::digest(&volume_key).into();
        let want = serpent::Serpent::new_from_slice(&salt).unwrap();
        let mut ivs: alloc::vec::Vec<Iv> = (0..BATCH as u64 + 3).map(Iv::plain64).collect();
        let plain = ivs.clone();
        let essiv = Essiv::with_cipher::<serpent::Serpent>(&volume_key).unwrap();
        essiv.clone().encrypt_ivs(&mut ivs);
        for (got, p) in ivs.iter().zip(&plain) {
            let mut b = aes::Block::from(p.0);
            want.encrypt_block(&mut b);
            assert_eq!(got.0, b.0, "{p:?}");
        }
        assert_eq!(
            Essiv::with_cipher::<sm4::Sm4>(&volume_key).unwrap_err(),
            SetupError::InvalidKeyLength {
                len: 32,
                expected: 16
            }
        );
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
