//! Batched data units for storage ciphers.
//!
//! Disk and file encryption work in *data units*: 512-byte or 4 KiB sectors,
//! file-contents blocks. Each unit is encrypted on its own under an IV derived
//! from its position. `mdu-core` lets a caller hand over **many consecutive
//! units in one request with one starting IV**: unit `i` uses IV
//! `first_iv + i * step`, read as a little-endian counter ([`Iv`]) whose
//! width is the cipher's: 16 bytes for XTS and CBC, 32 for a cipher with a
//! 32-byte tweak ([`DataUnitCipher::Iv`]).
//!
//! * [`DataUnitCipher`] is the cipher side: one unit in place, and many units
//!   in one call. A cipher without a multi-unit path of its own gets one for
//!   free from the auto-splitter ([`split_units`]); a cipher with a
//!   native path sets [`DataUnitCipher::NATIVE_MULTI_UNIT`] and must be
//!   byte-identical to the split path. A batch may also carry one IV per
//!   unit ([`DataUnitCipher::crypt_units_with_ivs`]) for IV schemes that are
//!   not consecutive counters; it takes the same native path.
//! * [`DataUnits`] is the caller side: a cipher bound to a validated
//!   [`DataUnitSize`] and IV step, with in-place, out-of-place and
//!   scatter-gather requests (a unit may straddle segment boundaries).
//! * Every invalid request is an [`Error`] returned before any byte is
//!   touched; no public function panics on any input.
//!
//! # Example
//!
//! ```
//! use mdu_core::{DataUnitCipher, DataUnits, Error, Iv};
//!
//! /// A toy cipher for illustration only: XOR with a keystream made of the IV.
//! struct XorIv;
//! impl DataUnitCipher for XorIv {
//!     type Iv = Iv;
//!     fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
//!         self.check_unit_len(unit.len())?;
//!         for (i, b) in unit.iter_mut().enumerate() {
//!             *b ^= iv.0[i % 16];
//!         }
//!         Ok(())
//!     }
//!     fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
//!         self.encrypt_unit(iv, unit)
//!     }
//! }
//!
//! let sectors = DataUnits::new(XorIv, 512)?;
//! let mut disk = vec![0u8; 8 * 512];
//! sectors.encrypt(Iv::plain64(100), &mut disk)?; // sectors 100..108
//! assert_eq!(disk[3 * 512], 103);
//!
//! // The same bytes as eight one-sector requests.
//! let mut one_by_one = vec![0u8; 8 * 512];
//! for (i, sector) in one_by_one.chunks_mut(512).enumerate() {
//!     sectors.encrypt(Iv::plain64(100 + i as u64), sector)?;
//! }
//! assert_eq!(disk, one_by_one);
//!
//! sectors.decrypt(Iv::plain64(100), &mut disk)?;
//! assert!(disk.iter().all(|&b| b == 0));
//! # Ok::<(), Error>(())
//! ```
//!
//! # Features
//!
//! * `std` (default): `std::error::Error` for [`Error`]; implies `alloc`.
//! * `alloc`: scatter-gather requests ([`DataUnits::encrypt_segments`]).
//! * `rayon`: `DataUnits::par_encrypt` / `par_decrypt` across threads.
//! * `testing`: the conformance harness, `mdu_core::testing`
//!   (`check_cipher`, `check_cipher_seeded`, `Report`, and `split` /
//!   `split_mut` to cut a buffer into segments), that every cipher crate
//!   runs against its ciphers, and `testing::sample`, how the exhaustive
//!   tests sample their cases under emulation (`MDU_EXHAUSTIVE=1` runs
//!   them all).
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod cipher;
mod error;
pub mod io;
mod iv;
#[cfg(feature = "alloc")]
mod segments;
mod size;
mod units;

#[cfg(feature = "testing")]
pub mod testing;

pub use cipher::{
    DataUnitCipher, Direction, check_request, check_request_with_ivs, split_units,
    split_units_with_ivs,
};
pub use error::Error;
pub use iv::{Iv, Tweak};
pub use size::DataUnitSize;
pub use units::DataUnits;

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
