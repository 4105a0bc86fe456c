//! AES-CBC-128 and AES-CBC-256 for disk encryption (dm-crypt
//! `aes-cbc-essiv:sha256`, the cipher of LUKS1 and of cryptsetup's old
//! plain mode), with a native multi-data-unit path.
//!
//! [`AesCbc128`] and [`AesCbc256`] encrypt one data unit (a sector) of any
//! whole number of 16-byte blocks, from 16 bytes to 16 MiB, each unit an
//! independent CBC message under its own IV, without padding. They
//! implement [`DataUnitCipher`] with a native multi-unit path:
//!
//! * **Encryption** is one serial AES chain per unit (each block waits for
//!   the one before it), so one unit at a time leaves most of the AES unit
//!   idle. A request of many units runs their chains side by side, one
//!   unit per 128-bit lane: 16 units on VAES (ymm or zmm), 8 on AES-NI and
//!   the Armv8 Crypto Extensions.
//! * **Decryption** is parallel within a unit already and runs at the ECB
//!   rate of the widest AES instructions.
//!
//! A request may give its units consecutive IVs (`first_iv + i * step`, a
//! 128-bit little-endian counter: dm-crypt `plain64`) or one IV each
//! ([`DataUnitCipher::crypt_units_with_ivs`]: `essiv`, `benbi`, scattered
//! sectors); both take the native path, and the bytes are exactly those of
//! one call per unit. Units must be whole blocks
//! ([`DataUnitCipher::UNIT_ALIGN`] is 16).
//!
//! The implementation is chosen once per key from what the CPU offers
//! ([`Backend`]); the round keys are zeroized on drop, and `Debug` prints
//! only the backend. dm-crypt's IV generators (`essiv:sha256`, ...) and
//! cipher specs are the `mdu-dmcrypt` crate's.
//!
//! # Example: `aes-cbc-plain64`, 512-byte sectors
//!
//! ```
//! use mdu_cbc::{AesCbc256, DataUnits, Iv};
//!
//! let sectors = DataUnits::new(AesCbc256::new(&[0x42; 32])?, 512)?;
//!
//! // Sectors 1000..1064 in one request: 64 chains, 16 at a time.
//! let mut disk = vec![0u8; 64 * 512];
//! sectors.encrypt(Iv::plain64(1000), &mut disk)?;
//!
//! // The same bytes as one request per sector.
//! let mut one_by_one = vec![0u8; 64 * 512];
//! for (i, sector) in one_by_one.chunks_mut(512).enumerate() {
//!     sectors.cipher().encrypt(Iv::plain64(1000 + i as u64), sector)?;
//! }
//! assert_eq!(disk, one_by_one);
//!
//! sectors.decrypt(Iv::plain64(1000), &mut disk)?;
//! assert!(disk.iter().all(|&b| b == 0));
//! # Ok::<(), mdu_cbc::Error>(())
//! ```
//!
//! # Features
//!
//! * `std` (default): `std::error::Error` for [`Error`] and CPU detection
//!   through the standard library. Without it the crate is `no_std` (it
//!   needs `alloc`: round keys live on the heap).
//! * `rayon`: `DataUnits::par_encrypt` / `par_decrypt` (from `mdu-core`).
#![no_std]

extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

use core::fmt;
use core::marker::PhantomData;

mod backend;

pub use backend::{Backend, CbcMode};
pub use mdu_aes::{Aes128, Aes256, KeySize};
pub use mdu_core::{DataUnitCipher, DataUnitSize, DataUnits, Direction, Error, Iv};

use mdu_aes::{Engine, Io};

/// AES-CBC with AES key size `K` ([`Aes128`] or [`Aes256`]): the type
/// behind [`AesCbc128`] and [`AesCbc256`].
///
/// The key is expanded once for the chosen [`Backend`]. Every method
/// validates its arguments before touching a byte.
pub struct Cbc<K: KeySize> {
    engine: Engine<CbcMode, K>,
    size: PhantomData<K>,
}

/// AES-128-CBC: a 16-byte key.
///
/// ```
/// use mdu_cbc::{AesCbc128, Iv};
///
/// // NIST SP 800-38A F.2.1, the first block.
/// let key = [
///     0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf,
///     0x4f, 0x3c,
/// ];
/// let iv = Iv(core::array::from_fn(|i| i as u8));
/// let mut block = [
///     0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93,
///     0x17, 0x2a,
/// ];
/// AesCbc128::new(&key)?.encrypt(iv, &mut block)?;
/// assert_eq!(block[..4], [0x76, 0x49, 0xab, 0xac]);
/// # Ok::<(), mdu_cbc::Error>(())
/// ```
pub type AesCbc128 = Cbc<Aes128>;

/// AES-256-CBC: a 32-byte key (dm-crypt `aes-cbc-essiv:sha256` with
/// `--key-size 256`).
///
/// ```
/// use mdu_cbc::{AesCbc256, DataUnits, Iv};
///
/// let cbc = AesCbc256::new(&[0x11; 32])?;
/// // LUKS2 layout: 4096-byte sectors, plain64 IVs counting 512-byte sectors.
/// let sectors = DataUnits::new(cbc, 4096)?.with_iv_step(8);
/// let mut buf = vec![0u8; 4 * 4096];
/// sectors.encrypt(Iv::plain64(64), &mut buf)?;
/// sectors.decrypt(Iv::plain64(64), &mut buf)?;
/// assert!(buf.iter().all(|&b| b == 0));
/// # Ok::<(), mdu_cbc::Error>(())
/// ```
pub type AesCbc256 = Cbc<Aes256>;

impl<K: KeySize> Cbc<K> {
    /// Length of the key in bytes: 16 for [`AesCbc128`], 32 for
    /// [`AesCbc256`].
    ///
    /// ```
    /// assert_eq!(mdu_cbc::AesCbc128::KEY_LEN, 16);
    /// ```
    pub const KEY_LEN: usize = Engine::<CbcMode, K>::KEY_LEN;

    /// Expands `key` for the best backend of this CPU.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidKeyLength`] unless `key` is [`KEY_LEN`](Self::KEY_LEN)
    /// bytes.
    ///
    /// ```
    /// use mdu_cbc::{AesCbc256, Error};
    ///
    /// assert!(AesCbc256::new(&[7; 32]).is_ok());
    /// assert_eq!(
    ///     AesCbc256::new(&[7; 24]).unwrap_err(),
    ///     Error::InvalidKeyLength { len: 24, expected: 32 }
    /// );
    /// ```
    pub fn new(key: &[u8]) -> Result<Self, Error> {
        Self::with_backend(key, Backend::detect())
    }

    /// Expands `key` for a given backend (to pin one in tests and
    /// benchmarks).
    ///
    /// # Errors
    ///
    /// As for [`new`](Self::new), then [`Error::BackendUnavailable`] if this
    /// CPU cannot run `backend` (or it is not compiled for this target).
    ///
    /// ```
    /// use mdu_cbc::{AesCbc128, Backend};
    ///
    /// let key: Vec<u8> = (0..16).collect();
    /// for &backend in Backend::available() {
    ///     let cbc = AesCbc128::with_backend(&key, backend)?;
    ///     assert_eq!(cbc.backend(), backend);
    /// }
    /// # Ok::<(), mdu_cbc::Error>(())
    /// ```
    pub fn with_backend(key: &[u8], backend: Backend) -> Result<Self, Error> {
        Ok(Cbc {
            engine: Engine::new(key, backend, false)?,
            size: PhantomData,
        })
    }

    /// The backend this key was expanded for.
    ///
    /// ```
    /// use mdu_cbc::{AesCbc256, Backend};
    ///
    /// assert_eq!(AesCbc256::new(&[1u8; 32])?.backend(), Backend::detect());
    /// # Ok::<(), mdu_cbc::Error>(())
    /// ```
    pub fn backend(&self) -> Backend {
        self.engine.backend()
    }

    /// Encrypts one data unit in place under `iv`: CBC with the IV as the
    /// block before the first, no padding (dm-crypt `plain64`:
    /// [`Iv::plain64`] of the sector number). Any whole number of blocks
    /// from 16 bytes to [`DataUnitSize::MAX`].
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeMisaligned`] for a length that is not a multiple of
    /// 16, [`Error::UnitSizeOutOfRange`] for one outside 16..=16 MiB; `buf`
    /// is then unchanged.
    ///
    /// ```
    /// use mdu_cbc::{AesCbc256, Iv};
    ///
    /// let cbc = AesCbc256::new(&[9; 32])?;
    /// let mut msg = *b"thirty-two bytes, two AES blocks";
    /// cbc.encrypt(Iv::plain64(5), &mut msg)?;
    /// assert_ne!(&msg, b"thirty-two bytes, two AES blocks");
    /// cbc.decrypt(Iv::plain64(5), &mut msg)?;
    /// assert_eq!(&msg, b"thirty-two bytes, two AES blocks");
    /// assert!(cbc.encrypt(Iv::ZERO, &mut [0u8; 20]).is_err());
    /// # Ok::<(), mdu_cbc::Error>(())
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
    /// # Ok::<(), mdu_cbc::Error>(())
    /// ```
    #[inline]
    pub fn decrypt(&self, iv: Iv, buf: &mut [u8]) -> Result<(), Error> {
        self.engine.one(self, Direction::Decrypt, iv, buf)
    }
}

impl<K: KeySize> Clone for Cbc<K> {
    fn clone(&self) -> Self {
        Cbc {
            engine: self.engine.clone(),
            size: PhantomData,
        }
    }
}

impl<K: KeySize> DataUnitCipher for Cbc<K> {
    type Iv = Iv;
    const NATIVE_MULTI_UNIT: bool = true;
    const UNIT_ALIGN: usize = 16;

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

impl<K: KeySize> fmt::Debug for Cbc<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = if K::BITS == 128 {
            "AesCbc128"
        } else {
            "AesCbc256"
        };
        f.debug_struct(name)
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}
