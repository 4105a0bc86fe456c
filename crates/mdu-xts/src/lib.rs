//! XTS-AES-128 and XTS-AES-256 (IEEE 1619) for disk and file encryption,
//! with a native multi-data-unit path.
//!
//! [`XtsAes128`] and [`XtsAes256`] encrypt one message (a sector, a file
//! block) of any length from 16 bytes to 16 MiB, with ciphertext stealing
//! when the length is not a multiple of 16. They implement
//! [`DataUnitCipher`] with a native multi-unit path: a request of many
//! consecutive data units under one starting IV (unit `i` uses IV
//! `first_iv + i * step`, a 128-bit little-endian counter: XTS's IV is
//! [`Iv`], 16 bytes) runs in one call,
//! with the first tweaks of upcoming units computed together and enough
//! blocks in flight to keep the AES units busy. The bytes are exactly those
//! of one call per unit.
//!
//! The implementation is chosen once per key from what the CPU offers
//! ([`Backend`]): on x86_64 VAES on zmm (AVX-512), VAES on ymm (AVX2) or
//! AES-NI; on arm64 the Armv8 Crypto Extensions (AES and PMULL); anywhere
//! else, or without those instructions, the portable RustCrypto `aes`.
//! Round keys are zeroized on drop, and `Debug` prints only the backend.
//!
//! The constructors fail with [`SetupError`] (a key of the wrong length, a
//! weak key, a backend this CPU cannot run); the requests with [`Error`],
//! the request errors of `mdu-core` that every cipher shares.
//!
//! # Example: dm-crypt `aes-xts-plain64`, 512-byte sectors
//!
//! ```
//! use mdu_xts::{DataUnits, Iv, XtsAes256};
//!
//! let key = [0x5au8; 32].iter().chain(&[0xa5u8; 32]).copied().collect::<Vec<u8>>();
//! let sectors = DataUnits::new(XtsAes256::new(&key)?, 512)?;
//!
//! // Sectors 1000..1008 in one request.
//! let mut disk = vec![0u8; 8 * 512];
//! sectors.encrypt(Iv::plain64(1000), &mut disk)?;
//!
//! // The same bytes as one request per sector.
//! let mut one_by_one = vec![0u8; 8 * 512];
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
//! For LUKS2 volumes with 4096-byte sectors, dm-crypt still counts 512-byte
//! sectors in the IV: use `DataUnits::new(cipher, 4096)?.with_iv_step(8)`.
//! dm-crypt's IV generators, cipher specs and geometry are the `mdu-dmcrypt`
//! crate's, for this cipher and any other [`DataUnitCipher`].
//!
//! # Units with IVs of their own
//!
//! A batch of equal units whose IVs are not consecutive (an IV scheme that
//! is not a counter, scattered sectors) takes the same native path through
//! [`DataUnitCipher::crypt_units_with_ivs`]: the first tweaks of the batch
//! are still encrypted together.
//!
//! ```
//! use mdu_xts::{DataUnits, Iv, XtsAes128};
//!
//! let key: Vec<u8> = (0..32).collect();
//! let units = DataUnits::new(XtsAes128::new(&key)?, 512)?;
//! let ivs = [Iv::plain64(77), Iv::plain64(3), Iv::plain64(1 << 40)];
//! let mut buf = vec![0u8; 3 * 512];
//! units.encrypt_with_ivs(&ivs, &mut buf)?;
//! let mut one = vec![0u8; 512];
//! units.cipher().encrypt(Iv::plain64(3), &mut one)?;
//! assert_eq!(buf[512..1024], one[..]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # RustCrypto's key traits
//!
//! Every cipher type of this crate is `KeySizeUser` (the whole key: twice
//! the AES key) and `TryKeyInit` (re-exported as [`crypto_common`]), and
//! `zeroize::ZeroizeOnDrop`. `TryKeyInit` is the checked constructor: it
//! refuses a key whose halves are equal, as `new` does. The infallible
//! `KeyInit` is not implemented, as it could only accept such a key or
//! panic; [`Xts::new_allow_weak_key`](mdu_aes::Cipher::new_allow_weak_key)
//! remains the explicit way to accept one.
//!
//! ```
//! use mdu_xts::crypto_common::TryKeyInit;
//! use mdu_xts::{BlockXts, DataUnitCipher, DataUnits, Iv, XtsAes256};
//!
//! // Code generic over the RustCrypto construction takes every XTS type.
//! fn first_sector<C: TryKeyInit + DataUnitCipher<Iv = Iv>>(key: &[u8]) -> Option<Vec<u8>> {
//!     let units = DataUnits::new(C::new_from_slice(key).ok()?, 512).ok()?;
//!     let mut sector = vec![0u8; 512];
//!     units.encrypt(Iv::plain64(0), &mut sector).ok()?;
//!     Some(sector)
//! }
//! let key: Vec<u8> = (0..64).collect();
//! assert!(first_sector::<XtsAes256>(&key).is_some());
//! assert!(first_sector::<BlockXts<twofish::Twofish>>(&key).is_some());
//! assert!(first_sector::<XtsAes256>(&[9; 64]).is_none()); // equal halves
//! ```
//!
//! ```compile_fail
//! // No infallible construction for XTS: it would accept weak keys.
//! use mdu_xts::crypto_common::KeyInit;
//! let _ = <mdu_xts::XtsAes256 as KeyInit>::new(&[9; 64].into());
//! ```
//!
//! # Features
//!
//! * `std` (default): `std::error::Error` for [`Error`] and
//!   [`SetupError`], and CPU detection through the standard library.
//!   Without it the crate is `no_std` (it needs `alloc`: round keys live
//!   on the heap) and detects the x86_64 instructions with CPUID, the arm64
//!   ones from the compile-time target features.
//! * `rayon`: `DataUnits::par_encrypt` / `par_decrypt` (from `mdu-core`)
//!   split a large request across threads on unit boundaries; the bytes are
//!   those of one `encrypt` call.
#![no_std]

extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

mod backend;
mod block;
mod weak;

pub use backend::{Backend, XtsMode};
pub use block::BlockXts;
pub use mdu_aes::{Aes128, Aes256, KeySize, SetupError, crypto_common};
pub use mdu_core::{DataUnitCipher, DataUnitSize, DataUnits, Direction, Error, Iv};
pub use weak::verify_key;

/// XTS-AES with AES key size `K` ([`Aes128`] or [`Aes256`]): the type
/// behind [`XtsAes128`] and [`XtsAes256`].
///
/// The key is the data key K1 followed by the tweak key K2, each an AES key
/// of size `K`, expanded once for the chosen [`Backend`]. A key whose two
/// halves are equal is refused ([`SetupError::WeakKey`], the rule of
/// [`verify_key`]) unless built with
/// `new_allow_weak_key` (for test vectors, or a caller with a policy of its
/// own). Its methods are those of the AES-mode skeleton's cipher type.
///
/// ```
/// use mdu_xts::{Aes256, Iv, Xts};
///
/// let key: Vec<u8> = (0..64).collect();
/// let xts = Xts::<Aes256>::new(&key)?;
/// let mut msg = [0u8; 32];
/// xts.encrypt(Iv::plain64(3), &mut msg)?;
/// xts.decrypt(Iv::plain64(3), &mut msg)?;
/// assert_eq!(msg, [0u8; 32]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type Xts<K> = mdu_aes::Cipher<XtsMode, K>;

/// XTS-AES-128: a 32-byte key, K1 (data) || K2 (tweak), each an AES-128
/// key.
///
/// ```
/// use mdu_xts::{DataUnits, Iv, XtsAes128};
///
/// // IEEE 1619 vector 2.
/// let mut key = [0x11u8; 32];
/// key[16..].fill(0x22);
/// let xts = XtsAes128::new(&key)?;
/// let mut data = [0x44u8; 32];
/// xts.encrypt(Iv::from_u128(0x3333333333), &mut data)?;
/// assert_eq!(data[..4], [0xc4, 0x54, 0x18, 0x5e]);
///
/// // Three 16-byte data units with consecutive tweaks, in one request.
/// let units = DataUnits::new(&xts, 16)?;
/// let mut three = [0x44u8; 48];
/// units.encrypt(Iv::from_u128(0x3333333333), &mut three)?;
/// assert_eq!(three[..16], data[..16]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type XtsAes128 = Xts<Aes128>;

/// XTS-AES-256: a 64-byte key, K1 (data) || K2 (tweak), each an AES-256
/// key (dm-crypt `aes-xts-plain64` with a 512-bit key).
///
/// ```
/// use mdu_xts::{DataUnits, Iv, XtsAes256};
///
/// let key: Vec<u8> = (0..64).collect();
/// let xts = XtsAes256::new(&key)?;
/// let sectors = DataUnits::new(xts, 4096)?.with_iv_step(8);
/// let mut buf = vec![0u8; 4 * 4096];
/// sectors.encrypt(Iv::plain64(64), &mut buf)?;
/// sectors.decrypt(Iv::plain64(64), &mut buf)?;
/// assert!(buf.iter().all(|&b| b == 0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type XtsAes256 = Xts<Aes256>;

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
