//! dm-crypt for any [`DataUnitCipher`]: cipher specs, IV generators, sector
//! geometry, and the batching that gives every IV mode the cipher's native
//! multi-unit path.
//!
//! dm-crypt encrypts each sector (512 to 4096 bytes) as one data unit whose
//! IV comes from an *IV generator* applied to the sector's `iv_sector`:
//!
//! * `cc_sector` = the sector's position in 512-byte units from the start of
//!   the mapping, plus the table's `iv_offset` (also in 512-byte units),
//!   modulo 2^64;
//! * `iv_sector` = `cc_sector`, shifted right by log2(sector_size / 512)
//!   **only** with `iv_large_sectors`. Without the flag, consecutive 4096-byte
//!   sectors get `iv_sector` 0, 8, 16, ... (every LUKS volume), with it 0, 1,
//!   2, ...
//!
//! [`CipherSpec`] parses `aes-xts-plain64`, `aes-cbc-essiv:sha256`,
//! `aes-hctr2-plain64`, `xchacha12,aes-adiantum-plain64`,
//! `serpent-xts-plain64`, `twofish-cbc-essiv:sha256`, ... against one
//! table, [`SUPPORTED`] (cipher, chaining mode, IV width, IV modes, key
//! lengths): the [`Cipher`], the chaining mode ([`ChainMode`])
//! and the [`IvMode`]: `plain`, `plain64`, `plain64be`, `essiv:sha256`,
//! `benbi`, `null` and `eboiv`. [`Geometry`] holds the sector size,
//! `iv_offset` and the flag. [`SectorCipher`] makes a spec, a key and a
//! geometry into a running cipher (mdu's AES-XTS, AES-CBC, HCTR2 or
//! Adiantum; the portable XTS or CBC over Serpent, Twofish, Camellia or
//! SM4), with the one
//! weak-key policy ([`WeakKeys`]: an XTS key with equal halves is refused
//! unless the caller opts in). Underneath, [`IvGenerator`] combines an IV
//! mode and a geometry with the volume key, computes IVs one at a time or a
//! batch at a time over the cipher's IV width, and encrypts whole sectors
//! with any [`DataUnitCipher`] (from `mdu-xts`, `mdu-cbc`, `mdu-hctr2`,
//! `mdu-adiantum`, or your own):
//!
//! * affine runs (`plain64`, and `plain` between its 2^32 wraps) go to the
//!   cipher as one request with one starting IV and the geometry's IV step;
//! * the other modes go as explicit-IV batches (one IV per sector, computed
//!   together: one ECB pass for all `essiv` IVs of a batch), which the
//!   cipher runs on its native multi-unit path too.
//!
//! The bytes are always those of one sector at a time.
//!
//! ```
//! use mdu_dmcrypt::{CipherSpec, Direction, Geometry, SectorCipher, WeakKeys};
//!
//! // cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 512
//! let spec: CipherSpec = "aes-xts-plain64".parse()?;
//! let key: Vec<u8> = (0..64).collect();
//! let c = SectorCipher::new(spec, &key, Geometry::new(512, 0, false)?, WeakKeys::Refuse)?;
//! let mut disk = vec![0u8; 8 * 512];
//! c.crypt(Direction::Encrypt, 0, &mut disk)?;
//! // Equal halves are a weak XTS key: refused unless allowed.
//! assert!(SectorCipher::new(spec, &[7u8; 64], c.geometry(), WeakKeys::Refuse).is_err());
//! # Ok::<(), mdu_dmcrypt::Error>(())
//! ```
//!
//! The same with a cipher of your own choosing, through the IV generator:
//!
//! ```
//! use mdu_cbc::AesCbc256;
//! use mdu_dmcrypt::{ChainMode, CipherSpec, Geometry, IvGenerator};
//!
//! // cryptsetup open --type plain --cipher aes-cbc-essiv:sha256 --key-size 256
//! let spec: CipherSpec = "aes-cbc-essiv:sha256".parse()?;
//! assert_eq!(spec.chain(), ChainMode::Cbc);
//! let key = [0x42u8; 32];
//! spec.check_key_len(key.len())?;
//! let cbc = AesCbc256::new(&key)?;
//! let ivgen = IvGenerator::new(spec.iv_mode(), Geometry::new(512, 0, false)?, &key)?;
//!
//! let mut disk = vec![0u8; 64 * 512];
//! ivgen.encrypt(&cbc, 0, &mut disk)?;
//! // Sector 5 alone gives the same bytes.
//! let mut five = vec![0u8; 512];
//! ivgen.encrypt(&cbc, 5, &mut five)?;
//! assert_eq!(disk[5 * 512..6 * 512], five[..]);
//! ivgen.decrypt(&cbc, 0, &mut disk)?;
//! assert!(disk.iter().all(|&b| b == 0));
//! # Ok::<(), mdu_dmcrypt::Error>(())
//! ```
//!
//! # Features
//!
//! * `std` (default): `std::error::Error` for [`Error`]. Without it
//!   the crate is `no_std` (with `alloc`).
//! * `rayon`: `IvGenerator::par_crypt` (and `par_encrypt`, `par_decrypt`)
//!   and `SectorCipher::par_crypt` split a large request across the rayon
//!   pool; same bytes.
#![no_std]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod error;
mod geometry;
mod iv_mode;
mod ivgen;
mod sector;
mod spec;
mod volume;

pub use error::Error;
pub use geometry::{Geometry, SECTOR_SIZES};
pub use iv_mode::IvMode;
pub use ivgen::IvGenerator;
pub use mdu_core::{DataUnitCipher, Direction, Iv};
pub use sector::SectorCipher;
pub use spec::{ChainMode, Cipher, CipherSpec, MAX_KEY_LEN, SUPPORTED, SupportedCipher, WeakKeys};
pub use volume::{Volume, VolumeError};

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
