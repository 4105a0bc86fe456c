//! mdu: storage-crypto primitives.
//!
//! This facade re-exports the member crates, each behind a feature of its
//! name (all on by default), so that a user builds only what they import:
//!
//! * [`Iv`], [`DataUnitSize`], [`DataUnitCipher`], [`DataUnits`],
//!   [`Direction`], [`Error`] from `mdu-core` (always): batched data units
//!   for any cipher, with consecutive IVs or one IV per unit;
//! * [`io`] from `mdu-core` (always): the one positioned-I/O pair
//!   ([`io::ReadAt`], [`io::WriteAt`], [`io::IoError`]) every module reads
//!   images and devices through (the ext4 reader, LUKS2 headers, FEC);
//! * `xts`: XTS-AES-128/256 with a native multi-unit path;
//! * `cbc`: AES-CBC-128/256 with interleaved multi-unit encryption;
//! * `hctr2`, `adiantum`: the wide-block ciphers of fscrypt's file names
//!   and of CPUs without AES instructions;
//! * `dmcrypt`: dm-crypt cipher specs, IV generators and sector geometry
//!   for any [`DataUnitCipher`];
//! * `verity` (needs `std`): two-way interleaved SHA-256, fs-verity and
//!   dm-verity trees;
//! * `luks2` (needs `std`): LUKS2 images as plain files (headers,
//!   keyslots, segments), interoperable with cryptsetup;
//! * `base64`: a block-wise base64 engine with SIMD backends;
//! * `fscrypt`: fscrypt offline: policies, keys, file contents, names
//!   and no-key names, byte-identical to the kernel.
//!
//! `mdu = { version = "0.1", default-features = false, features = ["xts"] }`
//! builds mdu-core, mdu-aes and mdu-xts, as mdu-xts alone does. Without the
//! `std` feature the facade is `no_std` (with `alloc`).
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
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use mdu_core::{
    DataUnitCipher, DataUnitSize, DataUnits, Direction, Error, Iv, check_request,
    check_request_with_ivs, split_units, split_units_with_ivs,
};

/// Positioned I/O: mdu-core's `io` module, the one [`ReadAt`](io::ReadAt) /
/// [`WriteAt`](io::WriteAt) pair of every module.
///
/// ```
/// use mdu::io::{IoError, ReadAt};
/// let image = vec![0u8; 4096];
/// let mut sector = [1u8; 512];
/// image.read_exact_at(&mut sector, 3584)?;
/// assert_eq!((sector, image.size()?), ([0; 512], 4096));
/// assert!(matches!(image.read_exact_at(&mut sector, 4000), Err(IoError::OutOfRange { .. })));
/// # Ok::<(), IoError>(())
/// ```
pub use mdu_core::io;

#[cfg(feature = "adiantum")]
#[cfg_attr(docsrs, doc(cfg(feature = "adiantum")))]
pub use mdu_adiantum as adiantum;
#[cfg(feature = "base64")]
#[cfg_attr(docsrs, doc(cfg(feature = "base64")))]
pub use mdu_base64 as base64;
#[cfg(feature = "cbc")]
#[cfg_attr(docsrs, doc(cfg(feature = "cbc")))]
pub use mdu_cbc as cbc;
#[cfg(feature = "dmcrypt")]
#[cfg_attr(docsrs, doc(cfg(feature = "dmcrypt")))]
pub use mdu_dmcrypt as dmcrypt;
#[cfg(feature = "fscrypt")]
#[cfg_attr(docsrs, doc(cfg(feature = "fscrypt")))]
pub use mdu_fscrypt as fscrypt;
#[cfg(feature = "hctr2")]
#[cfg_attr(docsrs, doc(cfg(feature = "hctr2")))]
pub use mdu_hctr2 as hctr2;
#[cfg(feature = "luks2")]
#[cfg_attr(docsrs, doc(cfg(feature = "luks2")))]
pub use mdu_luks2 as luks2;
#[cfg(feature = "verity")]
#[cfg_attr(docsrs, doc(cfg(feature = "verity")))]
pub use mdu_verity as verity;
#[cfg(feature = "xts")]
#[cfg_attr(docsrs, doc(cfg(feature = "xts")))]
pub use mdu_xts as xts;

/// The README's examples, compiled and run as doctests.
#[cfg(all(
    doctest,
    feature = "xts",
    feature = "cbc",
    feature = "dmcrypt",
    feature = "fscrypt"
))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
