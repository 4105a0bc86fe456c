//! LUKS2 images as plain files (and LUKS1 ones: [`luks1`]): read and write the binary headers and JSON
//! metadata, open and create `luks2` keyslots (PBKDF2, Argon2i/Argon2id,
//! the anti-forensic splitter), and encrypt or decrypt the data segment,
//! byte for byte as cryptsetup 2.6 does, without root, loop devices or
//! device-mapper.
//!
//! An image is untrusted input: [`Image::load`] checks both header copies'
//! SHA-256 checksums, parses the JSON with a typed error for every bad
//! field, and validates every size and offset against the header and the
//! image before anything is used. A damaged primary header falls back to
//! the secondary copy, and [`Image::primary_error`] says why.
//!
//! ```
//! use mdu_luks2::{format, os_random, Direction, FormatParams, Geometry, Hash, Image, KdfParams, SectorCipher, WeakKeys};
//!
//! // A new image: header region, then two 4096-byte sectors of data.
//! let params = FormatParams {
//!     sector_size: 4096,
//!     kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
//!     digest_iterations: 1000,
//!     data_offset: 1 << 20,
//!     ..FormatParams::default()
//! };
//! let mut volume_key = [0u8; 64];
//! os_random(&mut volume_key)?;
//! let mut image = format(&params, b"passphrase", &volume_key, &mut os_random)?;
//! let mut data = vec![0x42u8; 8192];
//! let geometry = Geometry::new(4096, 0, false)?;
//! SectorCipher::new(params.cipher, &volume_key, geometry, WeakKeys::Refuse)?
//!     .crypt(Direction::Encrypt, 0, &mut data)?;
//! image.extend_from_slice(&data);
//!
//! // Open it again.
//! let img = Image::load(&image[..])?;
//! let key = img.unlock(&image[..], b"passphrase")?;
//! let (_, seg) = img.segment()?;
//! let (offset, len) = img.payload_range(seg)?;
//! let mut plain = image[offset as usize..(offset + len) as usize].to_vec();
//! img.segment_cipher(&key, WeakKeys::Refuse)?.crypt(Direction::Decrypt, 0, &mut plain)?;
//! assert!(plain.iter().all(|&b| b == 0x42));
//! # Ok::<(), mdu_luks2::Error>(())
//! ```
//!
//! The sector cipher is dm-crypt's [`SectorCipher`] (re-exported from
//! `mdu-dmcrypt` with [`CipherSpec`], [`Geometry`] and [`WeakKeys`]): the
//! metadata hold each `encryption` as a parsed spec ([`Encryption`]), and
//! an XTS volume key with equal halves is refused unless the caller
//! passes [`WeakKeys::Allow`] ([`Image::segment_cipher`],
//! [`FormatParams::weak_keys`]).
//!
//! # Features
//!
//! * `rayon`: `SectorCipher::par_crypt` splits a request across the rayon
//!   pool (same bytes).
#![forbid(unsafe_code)]

pub mod af;
pub mod backup;
pub mod benchmark;
pub mod check;
mod choices;
mod cost;
pub mod dump;
pub mod edit;
mod error;
mod format;
mod header;
mod image;
mod kdf;
mod keyfile;
mod keyslots;
pub mod luks1;
mod metadata;
pub mod reencrypt;
#[cfg(test)]
mod test_image;
pub mod token;
mod volume;
pub mod write;

pub use choices::{FormatChoices, Pbkdf};
pub use cost::{KdfBenchmark, luks1_iterations};
pub use error::Error;
pub use format::{FormatParams, KdfParams, MAX_DATA_OFFSET, format, format_detached, os_random};
pub use header::{BINARY_HEADER_LEN, BinaryHeader, HEADER_SIZES, header_checksum};
pub use image::{AF_STRIPES, HeaderCopy, Image, ReadAt, VolumeKey};
pub use kdf::{ARGON2_MAX_MEMORY_KIB, Argon2Variant, Hash, Kdf};
pub use keyfile::{
    KeyFileError, KeyFileRules, MAX_KEY_FILE, read_key_file, read_key_file_with, read_passphrase,
    read_volume_key_file,
};
pub use keyslots::{KeyslotParams, KeyslotPlace};
pub use mdu_dmcrypt::{
    CipherSpec, Direction, Geometry, SectorCipher, Volume, VolumeError, WeakKeys,
};
pub use metadata::{
    Config, Digest, Encryption, Keyslot, KeyslotArea, MAX_KEYSLOTS, MAX_KEYSLOTS_SIZE, Metadata,
    ReencryptArea, ReencryptDirection, ReencryptKeyslot, ReencryptMode, Resilience, Segment,
    SegmentKind, UnusableDigest, UnusableKeyslot,
};
pub use volume::open;

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
