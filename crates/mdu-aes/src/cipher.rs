//! The one cipher type of every AES mode: a key of mode `M` and AES key
//! size `K`, with the one-unit methods and the native multi-unit path of
//! [`DataUnitCipher`]. A mode crate names it (`Xts<K>`, `Cbc<K>`) and
//! aliases its sizes (`XtsAes256`). Its constructors fail with
//! [`SetupError`], its requests with [`mdu_core::Error`].

use core::fmt;
use core::marker::PhantomData;

use crypto_common::{InvalidKey, Key, KeyInit, KeySizeUser, TryKeyInit};
use mdu_core::{DataUnitCipher, DataUnitSize, Direction, Error, Iv};
use zeroize::ZeroizeOnDrop;

use crate::mode::{EveryKey, Mode};
use crate::{Backend, Engine, Io, Kernels, KeySize, SetupError};

/// A key of AES mode `M` (XTS, CBC) and AES key size `K` ([`Aes128`] or
/// [`Aes256`]), expanded once for the chosen backend: `mdu_xts::Xts<K>`
/// and `mdu_cbc::Cbc<K>` are this type.
///
/// Every method validates its arguments before touching a byte; round
/// keys are zeroized on drop and `Debug` prints only the name and the
/// backend. The constructors return [`SetupError`] (a key or a backend
/// refused), the requests [`mdu_core::Error`].
///
/// [`Aes128`]: crate::Aes128
/// [`Aes256`]: crate::Aes256
///
/// ```
/// use mdu_xts::{Iv, XtsAes256};
///
/// let key: Vec<u8> = (0..64).collect();
/// let xts = XtsAes256::new(&key)?;
/// let mut sector = [0u8; 512];
/// xts.encrypt(Iv::plain64(7), &mut sector)?;
/// assert_ne!(sector, [0u8; 512]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Cipher<M: Kernels, K: KeySize> {
    engine: Engine<M, K>,
    size: PhantomData<K>,
}

impl<M: Kernels, K: KeySize> Cipher<M, K> {
    /// Length of the key in bytes: every AES key of the mode, one after the
    /// other (XTS: the data key K1, then the tweak key K2).
    ///
    /// ```
    /// assert_eq!(mdu_xts::XtsAes256::KEY_LEN, 64);
    /// assert_eq!(mdu_cbc::AesCbc128::KEY_LEN, 16);
    /// ```
    pub const KEY_LEN: usize = Engine::<M, K>::KEY_LEN;

    /// Expands `key` for the best backend of this CPU.
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] unless `key` is
    /// [`KEY_LEN`](Self::KEY_LEN) bytes; [`SetupError::WeakKey`] for a key
    /// the mode refuses (XTS: equal halves).
    ///
    /// ```
    /// use mdu_xts::{SetupError, XtsAes256};
    ///
    /// let mut key = [7u8; 64];
    /// key[32..].fill(9);
    /// assert!(XtsAes256::new(&key).is_ok());
    /// assert!(matches!(XtsAes256::new(&[7; 64]), Err(SetupError::WeakKey { .. })));
    /// assert_eq!(
    ///     XtsAes256::new(&key[1..]).unwrap_err(),
    ///     SetupError::InvalidKeyLength { len: 63, expected: 64 }
    /// );
    /// ```
    pub fn new(key: &[u8]) -> Result<Self, SetupError> {
        Self::with_backend(key, Backend::detect())
    }

    /// As [`new`](Self::new), but accepts a key the mode's weak-key rule
    /// refuses. For XTS that is a key whose two halves are equal: such keys
    /// void XTS's security argument, and this exists for published test
    /// vectors (IEEE 1619 vector 1) and for callers that apply a policy of
    /// their own (dm-crypt's `SectorCipher`). A mode without such a rule
    /// (CBC) refuses nothing more in [`new`](Self::new).
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] unless `key` is
    /// [`KEY_LEN`](Self::KEY_LEN) bytes.
    ///
    /// ```
    /// use mdu_xts::XtsAes128;
    ///
    /// assert!(XtsAes128::new_allow_weak_key(&[0; 32]).is_ok());
    /// ```
    pub fn new_allow_weak_key(key: &[u8]) -> Result<Self, SetupError> {
        Self::with_backend_allow_weak_key(key, Backend::detect())
    }

    /// Expands `key` for a given backend (to pin one in tests and
    /// benchmarks).
    ///
    /// # Errors
    ///
    /// As for [`new`](Self::new), then [`SetupError::BackendUnavailable`] if
    /// this CPU cannot run `backend` (or it is not compiled for this
    /// target).
    ///
    /// ```
    /// use mdu_xts::{Backend, SetupError, XtsAes256};
    ///
    /// let key: Vec<u8> = (0..64).collect();
    /// for &backend in Backend::available() {
    ///     let xts = XtsAes256::with_backend(&key, backend)?;
    ///     assert_eq!(xts.backend(), backend);
    /// }
    /// // A backend this CPU (or this target) lacks is refused, not replaced.
    /// let all = [Backend::Vaes512, Backend::Vaes256, Backend::AesNi, Backend::ArmCe];
    /// if let Some(&missing) = all.iter().find(|b| !b.is_available()) {
    ///     assert_eq!(
    ///         XtsAes256::with_backend(&key, missing).unwrap_err(),
    ///         SetupError::BackendUnavailable { cipher: "mdu-xts", backend: missing.name() }
    ///     );
    /// }
    /// # Ok::<(), SetupError>(())
    /// ```
    pub fn with_backend(key: &[u8], backend: Backend<M>) -> Result<Self, SetupError> {
        Self::build(key, backend, false)
    }

    /// As [`with_backend`](Self::with_backend), accepting a key the mode
    /// calls weak (see [`new_allow_weak_key`](Self::new_allow_weak_key)).
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] or
    /// [`SetupError::BackendUnavailable`].
    ///
    /// ```
    /// use mdu_xts::{Backend, XtsAes128};
    ///
    /// let xts = XtsAes128::with_backend_allow_weak_key(&[0; 32], Backend::Generic)?;
    /// assert_eq!(xts.backend(), Backend::Generic);
    /// # Ok::<(), mdu_xts::SetupError>(())
    /// ```
    pub fn with_backend_allow_weak_key(
        key: &[u8],
        backend: Backend<M>,
    ) -> Result<Self, SetupError> {
        Self::build(key, backend, true)
    }

    fn build(key: &[u8], backend: Backend<M>, allow_weak: bool) -> Result<Self, SetupError> {
        Ok(Cipher {
            engine: Engine::new(key, backend, allow_weak)?,
            size: PhantomData,
        })
    }

    /// The backend this key was expanded for.
    ///
    /// ```
    /// use mdu_cbc::{AesCbc256, Backend};
    ///
    /// assert_eq!(AesCbc256::new(&[1u8; 32])?.backend(), Backend::detect());
    /// # Ok::<(), mdu_cbc::SetupError>(())
    /// ```
    pub fn backend(&self) -> Backend<M> {
        self.engine.backend()
    }

    /// Encrypts one data unit (a sector, a file block) in place under `iv`
    /// (for dm-crypt `plain64`: the sector number, [`Iv::plain64`]): any
    /// length from the mode's minimum to [`DataUnitSize::MAX`] that the mode
    /// accepts (XTS: 16 bytes or more, with ciphertext stealing when not a
    /// multiple of 16; CBC: whole 16-byte blocks, no padding).
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeOutOfRange`] or [`Error::UnitSizeMisaligned`] for a
    /// length the mode refuses; `buf` is then unchanged.
    ///
    /// ```
    /// use mdu_xts::{Iv, XtsAes256};
    ///
    /// let key: Vec<u8> = (0..64).collect();
    /// let xts = XtsAes256::new(&key)?;
    /// let mut msg = *b"nineteen byte text";
    /// xts.encrypt(Iv::plain64(5), &mut msg)?;
    /// assert_ne!(&msg, b"nineteen byte text");
    /// xts.decrypt(Iv::plain64(5), &mut msg)?;
    /// assert_eq!(&msg, b"nineteen byte text");
    /// assert!(xts.encrypt(Iv::ZERO, &mut [0u8; 15]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn encrypt(&self, iv: Iv, buf: &mut [u8]) -> Result<(), Error> {
        self.engine.one(self, Direction::Encrypt, iv, buf)
    }

    /// Decrypts one data unit in place under `iv`; the inverse of
    /// [`encrypt`](Self::encrypt).
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_cbc::{AesCbc128, Iv};
    ///
    /// let cbc = AesCbc128::new(&[3; 16])?;
    /// let mut sector = [0u8; 512];
    /// cbc.encrypt(Iv::plain64(1), &mut sector)?;
    /// cbc.decrypt(Iv::plain64(1), &mut sector)?;
    /// assert_eq!(sector, [0u8; 512]);
    /// assert!(cbc.encrypt(Iv::ZERO, &mut [0u8; 20]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn decrypt(&self, iv: Iv, buf: &mut [u8]) -> Result<(), Error> {
        self.engine.one(self, Direction::Decrypt, iv, buf)
    }
}

impl<M: Kernels, K: KeySize> Clone for Cipher<M, K> {
    fn clone(&self) -> Self {
        Cipher {
            engine: self.engine.clone(),
            size: PhantomData,
        }
    }
}

/// RustCrypto's key size: the whole key of the mode,
/// [`KEY_LEN`](Cipher::KEY_LEN) bytes (XTS: both AES keys, twice the AES
/// key size).
///
/// ```
/// use mdu_xts::crypto_common::KeySizeUser;
///
/// assert_eq!(mdu_xts::XtsAes128::key_size(), 32);
/// assert_eq!(mdu_xts::XtsAes256::key_size(), 64);
/// assert_eq!(mdu_cbc::AesCbc256::key_size(), 32);
/// ```
impl<M: Kernels, K: KeySize> KeySizeUser for Cipher<M, K> {
    type KeySize = M::KeyLen<K>;
}

/// RustCrypto's infallible construction, for the modes that refuse no key
/// of the right length (CBC): the key expanded for the best backend of
/// this CPU, as [`new`](Cipher::new) does. `new_from_slice` refuses a key
/// of another length with `InvalidLength`.
///
/// XTS does not implement it: `KeyInit::new` cannot fail, and accepting a
/// key with equal halves there would let through what
/// [`new`](Cipher::new) refuses. XTS implements [`TryKeyInit`] instead.
///
/// ```
/// use mdu_cbc::crypto_common::KeyInit;
/// use mdu_cbc::{AesCbc256, Iv};
///
/// let key = [7u8; 32];
/// let cbc = <AesCbc256 as KeyInit>::new(&key.into());
/// let mut a = [0u8; 64];
/// let mut b = [0u8; 64];
/// cbc.encrypt(Iv::plain64(3), &mut a)?;
/// AesCbc256::new(&key)?.encrypt(Iv::plain64(3), &mut b)?;
/// assert_eq!(a, b);
/// assert!(<AesCbc256 as KeyInit>::new_from_slice(&key[..16]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<M: Kernels + Mode<KeyRule = EveryKey>, K: KeySize> KeyInit for Cipher<M, K> {
    fn new(key: &Key<Self>) -> Self {
        Cipher {
            engine: Engine::best(key.as_slice()),
            size: PhantomData,
        }
    }
}

/// RustCrypto's fallible construction, for every mode: the checked
/// constructor [`new`](Cipher::new) (the best backend of this CPU, the
/// mode's weak-key rule applied). A key the mode calls weak (XTS: equal
/// halves) is refused with `InvalidKey`, and so is a key of another length
/// given to `new_from_slice` (RustCrypto's one error for both).
/// [`new_allow_weak_key`](Cipher::new_allow_weak_key) stays the explicit
/// way to accept a weak key.
///
/// ```
/// use mdu_xts::crypto_common::TryKeyInit;
/// use mdu_xts::{Iv, XtsAes256};
///
/// let key: Vec<u8> = (0..64).collect();
/// let xts = XtsAes256::new_from_slice(&key).expect("a strong 64-byte key");
/// let mut a = [0u8; 512];
/// let mut b = [0u8; 512];
/// xts.encrypt(Iv::plain64(9), &mut a)?;
/// XtsAes256::new(&key)?.encrypt(Iv::plain64(9), &mut b)?;
/// assert_eq!(a, b);
/// // Equal halves, and a wrong length, are refused.
/// assert!(XtsAes256::new_from_slice(&[7; 64]).is_err());
/// assert!(XtsAes256::new_from_slice(&key[..32]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<M: Kernels, K: KeySize> TryKeyInit for Cipher<M, K> {
    fn new(key: &Key<Self>) -> Result<Self, InvalidKey> {
        Self::build(key.as_slice(), Backend::detect(), false).map_err(|_| InvalidKey)
    }
}

/// The round keys live on the heap and are zeroized when the cipher is
/// dropped (the SIMD schedules by their own `Drop`, the portable backend's
/// by the `aes` crate's `zeroize` feature: [`Mode`]'s key types are
/// `ZeroizeOnDrop` themselves); the stack of every key setup is wiped.
///
/// ```
/// fn wipes<T: zeroize::ZeroizeOnDrop>(_: &T) {}
/// wipes(&mdu_xts::XtsAes256::new(&(0..64).collect::<Vec<u8>>())?);
/// wipes(&mdu_cbc::AesCbc128::new(&[1; 16])?);
/// # Ok::<(), mdu_xts::SetupError>(())
/// ```
impl<M: Kernels, K: KeySize> ZeroizeOnDrop for Cipher<M, K> {}

impl<M: Kernels, K: KeySize> DataUnitCipher for Cipher<M, K> {
    type Iv = Iv;
    const NATIVE_MULTI_UNIT: bool = true;
    const UNIT_ALIGN: usize = M::UNIT_ALIGN;

    #[inline]
    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.encrypt(iv, unit)
    }

    #[inline]
    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.decrypt(iv, unit)
    }

    fn crypt_units(
        &self,
        dir: Direction,
        first_iv: Iv,
        iv_step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        let io = Io::InPlace(buf);
        self.engine.units::<Self>(dir, first_iv, iv_step, unit, io)
    }

    fn crypt_units_to(
        &self,
        dir: Direction,
        first_iv: Iv,
        iv_step: u64,
        unit: DataUnitSize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        let io = Io::To(src, dst);
        self.engine.units::<Self>(dir, first_iv, iv_step, unit, io)
    }

    fn crypt_units_with_ivs(
        &self,
        dir: Direction,
        ivs: &[Iv],
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.engine.units_with_ivs::<Self>(dir, ivs, unit, buf)
    }
}

impl<M: Kernels, K: KeySize> fmt::Debug for Cipher<M, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = M::NAMES[usize::from(K::BITS == 256)];
        f.debug_struct(name)
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}
