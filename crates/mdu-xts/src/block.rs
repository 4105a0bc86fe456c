//! XTS over any 128-bit block cipher of the RustCrypto traits (Serpent,
//! Twofish, SM4, Camellia, ...): the portable XTS of this crate, written
//! once over the block cipher, one data unit per call, with batched
//! requests split by the [`DataUnitCipher`] auto-splitter.

use alloc::boxed::Box;
use core::fmt;

use core::ops::Add;

use aes::cipher::array::ArraySize;
use aes::cipher::typenum::{Sum, Unsigned};
use mdu_aes::crypto_common::{InvalidKey, Key, KeySizeUser, TryKeyInit};
use mdu_aes::{BlockAes, SetupError};
use mdu_core::{DataUnitCipher, Error, Iv};

use crate::backend::generic;

/// XTS (IEEE 1619, the kernel's `xts(...)`) over the 128-bit block cipher
/// `C` of the RustCrypto traits: `BlockXts<serpent::Serpent>` is dm-crypt's
/// `serpent-xts-plain64`, `BlockXts<twofish::Twofish>` its
/// `twofish-xts-plain64`, and so on for SM4 and Camellia.
///
/// The key is the data key K1 followed by the tweak key K2, each a key of
/// `C` (`C`'s key size, so [`KEY_LEN`](Self::KEY_LEN) is twice it). As
/// for XTS-AES, a key whose halves are equal is refused
/// ([`SetupError::WeakKey`]) unless built with
/// [`new_allow_weak_key`](Self::new_allow_weak_key).
///
/// The code is the portable XTS that every AES backend is checked
/// against, on `C`'s blocks: one unit per call, each unit's blocks handed
/// to `C` sixteen at a time. Batched requests ([`DataUnits`]) are split
/// into one call per unit by the [`DataUnitCipher`] auto-splitter (there is
/// no multi-unit kernel for a generic cipher). `C` must zeroize its key
/// schedule on drop ([`zeroize::ZeroizeOnDrop`]: the RustCrypto ciphers'
/// `zeroize` feature); the schedules live on the heap, and `Debug` prints
/// no key material.
///
/// [`DataUnits`]: mdu_core::DataUnits
///
/// ```
/// use mdu_xts::{BlockXts, DataUnits, Iv};
///
/// // serpent-xts-plain64 with a 512-bit key (two Serpent-256 keys).
/// let key: Vec<u8> = (0..64).collect();
/// let xts = BlockXts::<serpent::Serpent>::new(&key)?;
/// let sectors = DataUnits::new(&xts, 512)?;
/// let mut disk = vec![0u8; 4 * 512];
/// sectors.encrypt(Iv::plain64(8), &mut disk)?;
/// sectors.decrypt(Iv::plain64(8), &mut disk)?;
/// assert!(disk.iter().all(|&b| b == 0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BlockXts<C: BlockAes + zeroize::ZeroizeOnDrop> {
    keys: Box<generic::Keys<C>>,
}

impl<C: BlockAes + zeroize::ZeroizeOnDrop> BlockXts<C> {
    /// Length of the key in bytes for `C`'s nominal key size
    /// (`KeySizeUser`): K1 then K2. Ciphers that take other key lengths
    /// too (Serpent: 16 to 32 bytes, nominally 16; Twofish: 16, 24 or 32,
    /// nominally 32) take keys of twice those lengths
    /// ([`new`](Self::new)).
    ///
    /// ```
    /// use mdu_xts::BlockXts;
    /// assert_eq!(BlockXts::<serpent::Serpent>::KEY_LEN, 32);
    /// assert_eq!(BlockXts::<twofish::Twofish>::KEY_LEN, 64);
    /// assert_eq!(BlockXts::<sm4::Sm4>::KEY_LEN, 32);
    /// ```
    pub const KEY_LEN: usize = 2 * <C as KeySizeUser>::KeySize::USIZE;

    /// Expands `key` (K1 || K2): two keys of a length `C` accepts
    /// (`KeyInit::new_from_slice`), so dm-crypt's `serpent-xts-plain64`
    /// with a 256-bit key is two Serpent-128 keys.
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] (naming
    /// [`KEY_LEN`](Self::KEY_LEN)) for an odd length or halves `C`
    /// refuses; [`SetupError::WeakKey`] when the two halves are equal.
    ///
    /// ```
    /// use mdu_xts::{BlockXts, SetupError};
    ///
    /// let mut key = [1u8; 32];
    /// key[16..].fill(2);
    /// assert!(BlockXts::<sm4::Sm4>::new(&key).is_ok());
    /// assert!(matches!(BlockXts::<sm4::Sm4>::new(&[1; 32]), Err(SetupError::WeakKey { .. })));
    /// assert_eq!(
    ///     BlockXts::<sm4::Sm4>::new(&key[1..]).unwrap_err(),
    ///     SetupError::InvalidKeyLength { len: 31, expected: 32 }
    /// );
    /// ```
    pub fn new(key: &[u8]) -> Result<Self, SetupError> {
        Self::with_policy(key, false)
    }

    /// As [`new`](Self::new), but accepts a key whose halves are equal:
    /// for published test vectors, or a caller with a weak-key policy of
    /// its own. Such keys void XTS's security argument.
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] as for [`new`](Self::new).
    ///
    /// ```
    /// use mdu_xts::BlockXts;
    /// assert!(BlockXts::<twofish::Twofish>::new_allow_weak_key(&[0; 64]).is_ok());
    /// ```
    pub fn new_allow_weak_key(key: &[u8]) -> Result<Self, SetupError> {
        Self::with_policy(key, true)
    }

    fn with_policy(key: &[u8], allow_weak: bool) -> Result<Self, SetupError> {
        let refused = SetupError::InvalidKeyLength {
            len: key.len(),
            expected: Self::KEY_LEN,
        };
        if !key.len().is_multiple_of(2) {
            return Err(refused);
        }
        let (k1, k2) = key.split_at(key.len() / 2);
        let keys = generic::Keys::boxed_from_slices(k1, k2);
        // The schedules may have passed through the stack on their way to
        // the heap.
        mdu_aes::__private::wipe::after_key_setup();
        let keys = keys.ok_or(refused)?;
        // A length `C` refuses is named first; the weak-key rule is for
        // keys that would work.
        if !allow_weak {
            crate::verify_key(key)?;
        }
        Ok(BlockXts { keys })
    }

    /// Encrypts one data unit of at least 16 bytes in place under `iv`
    /// (a unit that is not a whole number of blocks uses ciphertext
    /// stealing).
    ///
    /// # Errors
    ///
    /// [`Error`] for a unit shorter than 16 bytes or longer than a data
    /// unit may be; nothing is written then.
    ///
    /// ```
    /// use mdu_xts::{BlockXts, Iv};
    ///
    /// let key: Vec<u8> = (0..64).collect();
    /// let xts = BlockXts::<camellia::Camellia256>::new(&key)?;
    /// let mut unit = [7u8; 33];
    /// xts.encrypt(Iv::plain64(1), &mut unit)?;
    /// xts.decrypt(Iv::plain64(1), &mut unit)?;
    /// assert_eq!(unit, [7u8; 33]);
    /// assert!(xts.encrypt(Iv::plain64(1), &mut [0u8; 15]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.encrypt_unit(iv, unit)
    }

    /// Decrypts one data unit in place under `iv`; see
    /// [`encrypt`](Self::encrypt).
    ///
    /// # Errors
    ///
    /// As [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_xts::{BlockXts, Iv};
    ///
    /// let key: Vec<u8> = (0..32).collect();
    /// let xts = BlockXts::<sm4::Sm4>::new(&key)?;
    /// let mut unit = [0u8; 512];
    /// xts.decrypt(Iv::plain64(0), &mut unit)?;
    /// assert_ne!(unit, [0u8; 512]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decrypt(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.decrypt_unit(iv, unit)
    }
}

impl<C: BlockAes + zeroize::ZeroizeOnDrop> DataUnitCipher for BlockXts<C> {
    type Iv = Iv;

    const MIN_UNIT_BYTES: usize = 16;

    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(unit.len())?;
        generic::crypt_unit(&self.keys, true, iv, unit);
        Ok(())
    }

    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(unit.len())?;
        generic::crypt_unit(&self.keys, false, iv, unit);
        Ok(())
    }
}

impl<C: BlockAes + zeroize::ZeroizeOnDrop> Clone for BlockXts<C> {
    fn clone(&self) -> Self {
        let keys = self.keys.boxed_clone();
        mdu_aes::__private::wipe::after_key_setup();
        BlockXts { keys }
    }
}

impl<C: BlockAes + zeroize::ZeroizeOnDrop> fmt::Debug for BlockXts<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockXts")
            .field("cipher", &core::any::type_name::<C>())
            .finish_non_exhaustive()
    }
}

/// Dropping the cipher drops `C`'s two key schedules, which zeroize
/// themselves.
impl<C: BlockAes + zeroize::ZeroizeOnDrop> zeroize::ZeroizeOnDrop for BlockXts<C> {}

/// RustCrypto's key size: two keys of `C`'s nominal size, K1 then K2
/// ([`KEY_LEN`](BlockXts::KEY_LEN)).
///
/// ```
/// use mdu_xts::BlockXts;
/// use mdu_xts::crypto_common::KeySizeUser;
/// assert_eq!(BlockXts::<twofish::Twofish>::key_size(), 64);
/// ```
impl<C> KeySizeUser for BlockXts<C>
where
    C: BlockAes + zeroize::ZeroizeOnDrop,
    C::KeySize: Add<C::KeySize>,
    Sum<C::KeySize, C::KeySize>: ArraySize,
{
    type KeySize = Sum<C::KeySize, C::KeySize>;
}

/// RustCrypto's fallible construction: [`new`](BlockXts::new), with its
/// refusals (equal halves, a length `C` does not take) as `InvalidKey`;
/// `new_from_slice` takes every length [`new`](BlockXts::new) takes.
/// There is no `KeyInit`: it cannot fail, and XTS must refuse keys whose
/// halves are equal ([`new_allow_weak_key`](BlockXts::new_allow_weak_key)
/// is the explicit way to accept one).
///
/// ```
/// use mdu_xts::crypto_common::TryKeyInit;
/// use mdu_xts::{BlockXts, Iv};
///
/// let key: Vec<u8> = (0..32).collect();
/// let xts = BlockXts::<sm4::Sm4>::new_from_slice(&key).expect("a strong key");
/// let mut a = [0u8; 48];
/// let mut b = [0u8; 48];
/// xts.encrypt(Iv::plain64(2), &mut a)?;
/// BlockXts::<sm4::Sm4>::new(&key)?.encrypt(Iv::plain64(2), &mut b)?;
/// assert_eq!(a, b);
/// assert!(BlockXts::<sm4::Sm4>::new_from_slice(&[5; 32]).is_err());
/// assert!(BlockXts::<sm4::Sm4>::new_from_slice(&key[..31]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<C> TryKeyInit for BlockXts<C>
where
    C: BlockAes + zeroize::ZeroizeOnDrop,
    C::KeySize: Add<C::KeySize>,
    Sum<C::KeySize, C::KeySize>: ArraySize,
{
    fn new(key: &Key<Self>) -> Result<Self, InvalidKey> {
        BlockXts::new(key.as_slice()).map_err(|_| InvalidKey)
    }

    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidKey> {
        BlockXts::new(key).map_err(|_| InvalidKey)
    }
}
