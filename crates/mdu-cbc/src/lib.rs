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
//! [`CtsCbc`] ([`AesCtsCbc128`], [`AesCtsCbc256`]) is CBC with ciphertext
//! stealing (CS3, the kernel's `cts(cbc(aes))`): units of any length from
//! 16 bytes, as fscrypt encrypts file names.
//!
//! The constructors fail with [`SetupError`] (a key of the wrong length, a
//! backend this CPU cannot run); the requests with [`Error`], the request
//! errors of `mdu-core` that every cipher shares.
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
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # RustCrypto's key traits
//!
//! Every cipher type of this crate is `KeySizeUser`, `KeyInit` (CBC has
//! no weak keys, so the infallible construction refuses nothing the
//! type's `new` would take) and `TryKeyInit` (re-exported as
//! [`crypto_common`]), and `zeroize::ZeroizeOnDrop`.
//!
//! ```
//! use mdu_cbc::crypto_common::KeyInit;
//! use mdu_cbc::{AesCbc256, BlockCbc, DataUnitCipher, DataUnits, Iv};
//!
//! // Code generic over the RustCrypto construction takes every CBC type.
//! fn first_sector<C: KeyInit + DataUnitCipher<Iv = Iv>>(key: &[u8]) -> Option<Vec<u8>> {
//!     let units = DataUnits::new(C::new_from_slice(key).ok()?, 512).ok()?;
//!     let mut sector = vec![0u8; 512];
//!     units.encrypt(Iv::plain64(0), &mut sector).ok()?;
//!     Some(sector)
//! }
//! let key = [7u8; 32];
//! assert!(first_sector::<AesCbc256>(&key).is_some());
//! assert!(first_sector::<BlockCbc<sm4::Sm4>>(&key[..16]).is_some());
//! assert!(first_sector::<AesCbc256>(&key[..16]).is_none());
//! ```
//!
//! # Features
//!
//! * `std` (default): `std::error::Error` for [`Error`] and
//!   [`SetupError`], and CPU detection through the standard library.
//!   Without it the crate is `no_std` (it needs `alloc`: round keys live
//!   on the heap).
//! * `rayon`: `DataUnits::par_encrypt` / `par_decrypt` (from `mdu-core`).
#![no_std]

extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

mod backend;
mod block;
mod cts;

pub use backend::{Backend, CbcMode};
pub use block::BlockCbc;
pub use cts::{AesCtsCbc128, AesCtsCbc256, CtsCbc};
pub use mdu_aes::{Aes128, Aes256, KeySize, SetupError, crypto_common};
pub use mdu_core::{DataUnitCipher, DataUnitSize, DataUnits, Direction, Error, Iv};

/// AES-CBC with AES key size `K` ([`Aes128`] or [`Aes256`]): the type
/// behind [`AesCbc128`] and [`AesCbc256`].
///
/// The key is expanded once for the chosen [`Backend`]; data units are
/// whole 16-byte blocks, each an independent CBC message under its own IV,
/// without padding. Its methods are those of the AES-mode skeleton's
/// cipher type.
///
/// ```
/// use mdu_cbc::{Aes128, Cbc, Iv};
///
/// let cbc = Cbc::<Aes128>::new(&[5; 16])?;
/// let mut sector = [0u8; 512];
/// cbc.encrypt(Iv::plain64(9), &mut sector)?;
/// cbc.decrypt(Iv::plain64(9), &mut sector)?;
/// assert_eq!(sector, [0u8; 512]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type Cbc<K> = mdu_aes::Cipher<CbcMode, K>;

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
/// # Ok::<(), Box<dyn std::error::Error>>(())
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
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type AesCbc256 = Cbc<Aes256>;

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
