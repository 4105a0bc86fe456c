//! mdu: storage-crypto primitives.
//!
//! This facade re-exports the member crates:
//!
//! * [`Iv`], [`DataUnitSize`], [`DataUnitCipher`], [`DataUnits`],
//!   [`Direction`], [`Error`] from `mdu-core`: batched data units for any
//!   cipher, with consecutive IVs or one IV per unit;
//! * [`xts`]: XTS-AES-128/256 with a native multi-unit path;
//! * [`cbc`]: AES-CBC-128/256 with interleaved multi-unit encryption;
//! * [`dmcrypt`]: dm-crypt cipher specs, IV generators and sector geometry
//!   for any [`DataUnitCipher`];
//! * [`verity`] (with `std`): two-way interleaved SHA-256, fs-verity and
//!   dm-verity trees;
//! * [`luks2`] (with `std`): LUKS2 images as plain files (headers,
//!   keyslots, segments), interoperable with cryptsetup;
//! * [`base64`]: a block-wise base64 engine with SIMD backends;
//! * [`fscrypt`]: fscrypt offline: policies, keys, file contents, names
//!   and no-key names, byte-identical to the kernel.
//!
//! Without the default `std` feature the facade is `no_std` (with `alloc`):
//! everything but [`verity`] and [`luks2`] is available.
//!
//! ```
//! use mdu::{DataUnitSize, Iv};
//!
//! let sector = DataUnitSize::new(4096)?;
//! assert_eq!(sector.units_in(8 * 4096)?, 8);
//! assert_eq!(Iv::plain64(1).advance(7), Iv::plain64(8));
//! # Ok::<(), mdu::Error>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]

pub use mdu_core::{
    DataUnitCipher, DataUnitSize, DataUnits, Direction, Error, Iv, check_request,
    check_request_with_ivs, split_units, split_units_with_ivs,
};

pub use mdu_base64 as base64;
pub use mdu_cbc as cbc;
pub use mdu_dmcrypt as dmcrypt;
pub use mdu_fscrypt as fscrypt;
#[cfg(feature = "std")]
pub use mdu_luks2 as luks2;
#[cfg(feature = "std")]
pub use mdu_verity as verity;
pub use mdu_xts as xts;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
