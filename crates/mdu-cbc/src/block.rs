//! CBC over any 128-bit block cipher of the RustCrypto traits (Serpent,
//! Twofish, SM4, Camellia, ...): the portable CBC of this crate, written
//! once over the block cipher, one data unit per call, with batched
//! requests split by the [`DataUnitCipher`] auto-splitter.

use alloc::boxed::Box;
use core::fmt;

use aes::cipher::typenum::Unsigned;
use mdu_aes::crypto_common::{InvalidKey, InvalidLength, Key, KeyInit, KeySizeUser, TryKeyInit};
use mdu_aes::{BlockAes, SetupError};
use mdu_core::{DataUnitCipher, Direction, Error, Iv};

use crate::backend::generic;

/// CBC (the kernel's `cbc(...)`, no padding) over the 128-bit block cipher
/// `C` of the RustCrypto traits: with dm-crypt's IV generators it is
/// `serpent-cbc-plain64`, `twofish-cbc-essiv:sha256` and so on.
///
/// Data units are whole blocks (a multiple of 16 bytes), each chained from
/// its own IV. The code is the portable CBC that every AES backend is
/// checked against, on `C`'s blocks; batched requests ([`DataUnits`]) are
/// split into one call per unit by the [`DataUnitCipher`] auto-splitter.
/// `C` must zeroize its key schedule on drop ([`zeroize::ZeroizeOnDrop`]:
/// the RustCrypto ciphers' `zeroize` feature); the schedule lives on the
/// heap, and `Debug` prints no key material.
///
/// [`DataUnits`]: mdu_core::DataUnits
///
/// ```
/// use mdu_cbc::{BlockCbc, DataUnits, Iv};
///
/// let key: Vec<u8> = (0..32).collect();
/// let cbc = BlockCbc::<twofish::Twofish>::new(&key)?;
/// let sectors = DataUnits::new(&cbc, 512)?;
/// let mut disk = vec![0u8; 4 * 512];
/// sectors.encrypt(Iv::plain64(0), &mut disk)?;
/// sectors.decrypt(Iv::plain64(0), &mut disk)?;
/// assert!(disk.iter().all(|&b| b == 0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct BlockCbc<C: BlockAes + zeroize::ZeroizeOnDrop> {
    cipher: Box<C>,
}

impl<C: BlockAes + zeroize::ZeroizeOnDrop> BlockCbc<C> {
    /// `C`'s nominal key length in bytes (`KeySizeUser`). Ciphers that
    /// take other lengths too (Serpent: 16 to 32 bytes; Twofish: 16, 24 or
    /// 32) take those as well ([`new`](Self::new)).
    ///
    /// ```
    /// use mdu_cbc::BlockCbc;
    /// assert_eq!(BlockCbc::<serpent::Serpent>::KEY_LEN, 16);
    /// assert_eq!(BlockCbc::<twofish::Twofish>::KEY_LEN, 32);
    /// assert_eq!(BlockCbc::<sm4::Sm4>::KEY_LEN, 16);
    /// ```
    pub const KEY_LEN: usize = <C as KeySizeUser>::KeySize::USIZE;

    /// Expands `key`, of any length `C` accepts
    /// (`KeyInit::new_from_slice`).
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] (naming [`KEY_LEN`](Self::KEY_LEN))
    /// for a length `C` refuses.
    ///
    /// ```
    /// use mdu_cbc::{BlockCbc, SetupError};
    ///
    /// assert!(BlockCbc::<serpent::Serpent>::new(&[1; 16]).is_ok());
    /// assert_eq!(
    ///     BlockCbc::<sm4::Sm4>::new(&[1; 15]).unwrap_err(),
    ///     SetupError::InvalidKeyLength { len: 15, expected: 16 }
    /// );
    /// ```
    pub fn new(key: &[u8]) -> Result<Self, SetupError> {
        let cipher = generic::boxed_from_slice::<C>(key);
        // The schedule may have passed through the stack on its way to the
        // heap.
        mdu_aes::__private::wipe::after_key_setup();
        Ok(BlockCbc {
            cipher: cipher.ok_or(SetupError::InvalidKeyLength {
                len: key.len(),
                expected: Self::KEY_LEN,
            })?,
        })
    }

    /// Encrypts one data unit (a multiple of 16 bytes) in place, chained
    /// from `iv`.
    ///
    /// # Errors
    ///
    /// [`Error`] for a unit that is empty, not whole blocks or longer than
    /// a data unit may be; nothing is written then.
    ///
    /// ```
    /// use mdu_cbc::{BlockCbc, Iv};
    ///
    /// let cbc = BlockCbc::<camellia::Camellia128>::new(&[7; 16])?;
    /// let mut unit = [0u8; 32];
    /// cbc.encrypt(Iv::plain64(1), &mut unit)?;
    /// cbc.decrypt(Iv::plain64(1), &mut unit)?;
    /// assert_eq!(unit, [0u8; 32]);
    /// assert!(cbc.encrypt(Iv::plain64(1), &mut [0u8; 17]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.encrypt_unit(iv, unit)
    }

    /// Decrypts one data unit in place; see [`encrypt`](Self::encrypt).
    ///
    /// # Errors
    ///
    /// As [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_cbc::{BlockCbc, Iv};
    ///
    /// let cbc = BlockCbc::<sm4::Sm4>::new(&[9; 16])?;
    /// let mut unit = [0u8; 16];
    /// cbc.decrypt(Iv::ZERO, &mut unit)?;
    /// assert_ne!(unit, [0u8; 16]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decrypt(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.decrypt_unit(iv, unit)
    }
}

impl<C: BlockAes + zeroize::ZeroizeOnDrop> DataUnitCipher for BlockCbc<C> {
    type Iv = Iv;

    const MIN_UNIT_BYTES: usize = 16;
    const UNIT_ALIGN: usize = 16;

    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(unit.len())?;
        generic::crypt_unit(&*self.cipher, Direction::Encrypt, iv.0, unit);
        Ok(())
    }

    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(unit.len())?;
        generic::crypt_unit(&*self.cipher, Direction::Decrypt, iv.0, unit);
        Ok(())
    }
}

impl<C: BlockAes + zeroize::ZeroizeOnDrop> Clone for BlockCbc<C> {
    fn clone(&self) -> Self {
        let cipher = generic::boxed_clone(&*self.cipher);
        mdu_aes::__private::wipe::after_key_setup();
        BlockCbc { cipher }
    }
}

impl<C: BlockAes + zeroize::ZeroizeOnDrop> fmt::Debug for BlockCbc<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockCbc")
            .field("cipher", &core::any::type_name::<C>())
            .finish_non_exhaustive()
    }
}

/// Dropping the cipher drops `C`'s key schedule, which zeroizes itself.
impl<C: BlockAes + zeroize::ZeroizeOnDrop> zeroize::ZeroizeOnDrop for BlockCbc<C> {}

/// RustCrypto's key size: `C`'s ([`KEY_LEN`](BlockCbc::KEY_LEN)).
///
/// ```
/// use mdu_cbc::BlockCbc;
/// use mdu_cbc::crypto_common::KeySizeUser;
/// assert_eq!(BlockCbc::<sm4::Sm4>::key_size(), 16);
/// ```
impl<C: BlockAes + zeroize::ZeroizeOnDrop> KeySizeUser for BlockCbc<C> {
    type KeySize = C::KeySize;
}

/// RustCrypto's infallible construction: `C`'s key schedule of `key`, as
/// [`new`](BlockCbc::new) makes it (CBC has no weak keys).
/// `new_from_slice` takes every length `C` takes (Serpent: 16 to 32
/// bytes), as [`new`](BlockCbc::new) does, and refuses the others with
/// `InvalidLength`.
///
/// ```
/// use mdu_cbc::crypto_common::KeyInit;
/// use mdu_cbc::{BlockCbc, Iv};
///
/// let key: Vec<u8> = (0..32).collect();
/// let cbc = BlockCbc::<serpent::Serpent>::new_from_slice(&key).unwrap();
/// let mut a = [0u8; 32];
/// let mut b = [0u8; 32];
/// cbc.encrypt(Iv::plain64(1), &mut a)?;
/// BlockCbc::<serpent::Serpent>::new(&key)?.encrypt(Iv::plain64(1), &mut b)?;
/// assert_eq!(a, b);
/// assert!(BlockCbc::<serpent::Serpent>::new_from_slice(&key[..15]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<C: BlockAes + zeroize::ZeroizeOnDrop> KeyInit for BlockCbc<C> {
    fn new(key: &Key<Self>) -> Self {
        let cipher = generic::boxed::<C>(key.as_slice());
        // The schedule may have passed through the stack on its way to the
        // heap.
        mdu_aes::__private::wipe::after_key_setup();
        BlockCbc { cipher }
    }

    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
        BlockCbc::new(key).map_err(|_| InvalidLength)
    }
}

/// RustCrypto's fallible construction, as every cipher type of mdu has
/// it: [`new`](BlockCbc::new), whose only refusal (a length `C` does not
/// take) is `InvalidKey` here.
///
/// ```
/// use mdu_cbc::BlockCbc;
/// use mdu_cbc::crypto_common::TryKeyInit;
///
/// assert!(BlockCbc::<twofish::Twofish>::new_from_slice(&[1; 24]).is_ok());
/// assert!(BlockCbc::<twofish::Twofish>::new_from_slice(&[1; 20]).is_err());
/// ```
impl<C: BlockAes + zeroize::ZeroizeOnDrop> TryKeyInit for BlockCbc<C> {
    fn new(key: &Key<Self>) -> Result<Self, InvalidKey> {
        Ok(<Self as KeyInit>::new(key))
    }

    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidKey> {
        BlockCbc::new(key).map_err(|_| InvalidKey)
    }
}
