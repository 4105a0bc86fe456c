//! dm-verity hash areas as written by `veritysetup format`, their
//! superblock, and verification.
//!
//! Every block is hashed as `H(salt || block)` (format 1) or
//! `H(block || salt)` (format 0, the original Chrome OS format), with the raw
//! salt (0..=256 bytes). Only whole data blocks are hashed; a trailing
//! partial block of the data is ignored, as `veritysetup` does without
//! `--data-blocks`. Levels are stored root level first, starting at hash
//! block [`Params::hash_start_block`] of the hash device; with a superblock
//! (the default) the 512-byte superblock sits at [`Params::hash_offset`] and
//! the tree starts at the next hash block boundary after it.
//!
//! The hash device is any [`Write`](std::io::Write) +
//! [`Seek`](std::io::Seek): a [`std::fs::File`], or a [`std::io::Cursor`]
//! over a `Vec<u8>` to build the area in memory. As
//! `veritysetup` does on a regular file, a device that ends inside the block
//! holding the superblock (of the hash block size, at most 4 KiB) is extended
//! with zeros to the end of that block; bytes already on the device outside
//! the superblock and the tree are never overwritten.
//!
//! ```
//! use std::io::Cursor;
//! use mdu_verity::dmverity;
//!
//! let data = vec![0u8; 3 * 4096];
//! let params = dmverity::Params { superblock: false, ..Default::default() };
//! let mut hash = Cursor::new(Vec::new());
//! let out = dmverity::format(&data[..], &mut hash, &params)?;
//! assert_eq!(out.hash_blocks(), 1);
//! dmverity::verify(Cursor::new(&data), &mut hash, &params, &out.root_hash())?;
//! # Ok::<(), mdu_verity::Error>(())
//! ```
//!
//! # Trust model
//!
//! The root hash is the only input that verification trusts. The hash
//! device, its superblock and the data device are untrusted: whoever could
//! change the data could change them too. What [`verify`] and its variants
//! report as success is implied by the root hash and by the parameters the
//! caller passes, and by nothing else:
//!
//! * **Zero is never success.** A count of zero data blocks, whether from
//!   [`Params::data_blocks`], a superblock, an empty data device or a verify
//!   range, is [`Error::ZeroDataBlocks`] or [`Error::NoDataBlocks`]; every
//!   block the tree covers is read and compared, and a data device that ends
//!   early is [`Error::MissingDataBlock`], naming the first block not there.
//! * **Every offset is checked.** Block counts, level sizes and the hash
//!   offset come from untrusted fields; every position computed from them
//!   is checked arithmetic, and a value that does not fit is a typed error
//!   ([`Error::TreeTooLarge`], [`Error::HashOffsetTooLarge`]) in debug and
//!   release builds alike. The tree must lie inside the hash device before
//!   a single hash block is read.
//! * **[`verify`] never reads the superblock.** Its [`Params`] are the
//!   caller's: the superblock flag only says where the tree starts.
//! * **[`verify_with_superblock`] lets the superblock choose the tree shape**
//!   (the number of data blocks, the block sizes, the hash, the format and
//!   the salt), as `veritysetup verify` does. The caller can pin any of them
//!   with [`Pins`]; a pinned value that disagrees with the superblock is
//!   [`Error::PinMismatch`], naming both values.
//!
//! Without pins, success means "*some* data of the shape the superblock
//! names hashes up to the root", and the superblock is written by whoever
//! controls the hash device. Such a party can describe a smaller tree
//! whose data is the original tree's hash blocks: for example a superblock
//! that claims one data block, over a data device whose first block is a
//! copy of the original top-level hash block, verifies against the
//! original root hash, because that block does hash to the root. The data
//! then checked is not the data the root hash was made for. The same holds
//! without a superblock when the number of data blocks is taken from the
//! size of an untrusted data device. Whoever needs "this device holds the
//! N blocks the root was made for" must pin `data_blocks` (and the other
//! shape parameters), as the kernel's dm-verity table does: it always names
//! the number of data blocks, the block sizes, the algorithm and the salt
//! next to the root hash.

pub mod fec;
mod format;
mod options;
mod reader;
mod superblock;
mod verifier;
mod verify;

pub use fec::{FecOutcome, verify_with_fec, verify_with_fec_after};
pub use format::{Formatted, Hasher, format};
pub use options::{parse_uuid, random_uuid, uuid_string};
pub use reader::{CACHE_BYTES, Reader};
pub use superblock::{Pins, Superblock};
pub use verifier::Verifier;
pub use verify::{verify, verify_range, verify_with_superblock};

use crate::hash::{BlockHasher, SaltAt};
use crate::{Error, HashAlg, sha256};

/// Largest dm-verity salt in bytes.
pub const MAX_SALT_LEN: usize = 256;
/// Smallest data or hash block size.
pub const MIN_BLOCK_SIZE: u32 = 512;
/// Largest data or hash block size.
pub const MAX_BLOCK_SIZE: u32 = 65536;
/// Size of the on-disk superblock.
pub const SUPERBLOCK_LEN: usize = 512;
/// Largest accepted hash offset: the superblock and one more hash block of
/// the largest size still have 64-bit byte offsets.
pub const MAX_HASH_OFFSET: u64 =
    (u64::MAX - SUPERBLOCK_LEN as u64 - 2 * MAX_BLOCK_SIZE as u64) & !511;

/// dm-verity parameters (the options of `veritysetup format`).
///
/// Unlike `veritysetup`, nothing is random: the default salt is empty (as
/// `--salt=-`) and the default UUID all zeros; pass your own.
///
/// ```
/// use mdu_verity::dmverity::Params;
/// let p = Params::default();
/// assert_eq!((p.data_block_size, p.hash_block_size, p.format), (4096, 4096, 1));
/// assert!(p.superblock);
/// assert_eq!(p.hash_start_block(), 1); // the superblock takes block 0
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// Hash algorithm.
    pub hash: HashAlg,
    /// Data block size in bytes (power of two, 512..=65536).
    pub data_block_size: u32,
    /// Hash block size in bytes (power of two, 512..=65536).
    pub hash_block_size: u32,
    /// Salt, 0..=256 bytes (empty = no salt, `--salt=-`).
    pub salt: Vec<u8>,
    /// Hash type: 1 (normal, salt first) or 0 (Chrome OS, salt last).
    pub format: u32,
    /// Write (and expect) the 512-byte superblock at `hash_offset`.
    pub superblock: bool,
    /// UUID stored in the superblock (raw 16 bytes).
    pub uuid: [u8; 16],
    /// Byte offset of the hash area on the hash device (multiple of 512).
    pub hash_offset: u64,
    /// Number of data blocks to hash; `None` = every whole block of the data.
    pub data_blocks: Option<u64>,
    /// The SHA-256 backend to hash with; `None` (the default) takes the
    /// best this CPU runs. Not part of the format: the bytes out are the
    /// same with every backend.
    pub backend: Option<sha256::Backend>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            hash: HashAlg::Sha256,
            data_block_size: 4096,
            hash_block_size: 4096,
            salt: Vec::new(),
            format: 1,
            superblock: true,
            uuid: [0; 16],
            hash_offset: 0,
            data_blocks: None,
            backend: None,
        }
    }
}

pub(super) fn check_block_size(what: &'static str, size: u32) -> Result<(), Error> {
    if size.is_power_of_two() && (MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&size) {
        Ok(())
    } else {
        Err(Error::BlockSize {
            what,
            size: size.into(),
            min: MIN_BLOCK_SIZE.into(),
            max: MAX_BLOCK_SIZE.into(),
        })
    }
}

impl Params {
    /// Check block sizes, salt length, format, hash offset and a pinned
    /// number of data blocks (which must not be zero).
    ///
    /// ```
    /// use mdu_verity::{dmverity::Params, Error};
    /// let p = Params { format: 2, ..Params::default() };
    /// assert!(matches!(p.validate(), Err(Error::UnknownHashType { hash_type: 2 })));
    /// let p = Params { data_blocks: Some(0), ..Params::default() };
    /// assert!(matches!(p.validate(), Err(Error::ZeroDataBlocks { .. })));
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        check_block_size("data block", self.data_block_size)?;
        check_block_size("hash block", self.hash_block_size)?;
        if self.salt.len() > MAX_SALT_LEN {
            return Err(Error::SaltTooLong {
                len: self.salt.len(),
                max: MAX_SALT_LEN,
            });
        }
        if self.format > 1 {
            return Err(Error::UnknownHashType {
                hash_type: self.format,
            });
        }
        if !self.hash_offset.is_multiple_of(512) {
            return Err(Error::HashOffset {
                offset: self.hash_offset,
            });
        }
        if self.hash_offset > MAX_HASH_OFFSET {
            return Err(Error::HashOffsetTooLarge {
                offset: self.hash_offset,
                max: MAX_HASH_OFFSET,
            });
        }
        if self.data_blocks == Some(0) {
            return Err(Error::ZeroDataBlocks {
                source: "Params::data_blocks",
            });
        }
        crate::hash::fresh_state(self.backend)?;
        Ok(())
    }

    /// Hash blocks of the tree over `data_blocks` blocks (without the
    /// superblock): what `veritysetup dump` prints as "Hash blocks".
    ///
    /// ```
    /// use mdu_verity::dmverity::Params;
    /// assert_eq!(Params::default().tree_blocks(256)?, 3);
    /// assert_eq!(Params::default().tree_blocks(1)?, 0);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn tree_blocks(&self, data_blocks: u64) -> Result<u64, Error> {
        self.validate()?;
        if data_blocks == 0 {
            return Err(Error::ZeroDataBlocks {
                source: "the block count",
            });
        }
        crate::merkle::level_blocks(data_blocks, self.per_block())
            .into_iter()
            .try_fold(0u64, u64::checked_add)
            .ok_or(Error::TreeTooLarge { data_blocks })
    }

    /// Bytes from the start of the hash device to the end of the tree over
    /// `data_blocks` blocks: `veritysetup`'s "Hash device size" when
    /// `hash_offset` is 0, and what [`format()`] reports as
    /// [`Formatted::hash_device_size`].
    ///
    /// ```
    /// use mdu_verity::dmverity::Params;
    /// // The superblock, then 3 tree blocks.
    /// assert_eq!(Params::default().hash_device_size(256)?, 4 * 4096);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn hash_device_size(&self, data_blocks: u64) -> Result<u64, Error> {
        let tree = self.tree_blocks(data_blocks)?;
        self.hash_start_block()
            .checked_add(tree)
            .and_then(|b| b.checked_mul(u64::from(self.hash_block_size)))
            .ok_or(Error::TreeTooLarge { data_blocks })
    }

    /// The hash block where the tree (its root level) starts: after the
    /// superblock, or at `hash_offset` rounded down without one.
    ///
    /// ```
    /// use mdu_verity::dmverity::Params;
    /// let p = Params { hash_offset: 8 << 20, ..Params::default() };
    /// assert_eq!(p.hash_start_block(), 2049);
    /// let p = Params { superblock: false, ..p };
    /// assert_eq!(p.hash_start_block(), 2048);
    /// ```
    pub fn hash_start_block(&self) -> u64 {
        let hbs = u64::from(self.hash_block_size.max(1));
        if self.superblock {
            // Saturating for a hash offset that `validate` refuses.
            (self.hash_offset.saturating_add(SUPERBLOCK_LEN as u64)).div_ceil(hbs)
        } else {
            self.hash_offset / hbs
        }
    }

    /// How digests sit in a hash block: format 1 pads each to a power of
    /// two, format 0 packs them; either way a block holds the largest power
    /// of two of digests that fit.
    pub(super) fn packing(&self) -> crate::merkle::Packing {
        crate::merkle::Packing::new(
            self.hash_block_size as usize,
            self.hash.digest_len(),
            self.format == 1,
        )
    }

    /// Digests per hash block.
    pub(super) fn per_block(&self) -> u64 {
        self.packing().per_block as u64
    }

    /// The salted block hasher on the pinned or the best backend.
    pub(super) fn hasher(&self) -> Result<BlockHasher, Error> {
        let at = if self.format == 0 {
            SaltAt::Suffix
        } else {
            SaltAt::Prefix
        };
        let fresh = crate::hash::fresh_state(self.backend)?;
        Ok(BlockHasher::with_sha256(self.hash, &self.salt, at, fresh))
    }

    /// The superblock these parameters describe for `data_blocks` blocks.
    ///
    /// ```
    /// use mdu_verity::dmverity::Params;
    /// let sb = Params::default().superblock_for(2048);
    /// assert_eq!(&sb.to_bytes()[..8], b"verity\0\0");
    /// ```
    pub fn superblock_for(&self, data_blocks: u64) -> Superblock {
        Superblock {
            hash_type: self.format,
            uuid: self.uuid,
            hash: self.hash,
            hash_name: self.hash.name().to_owned(),
            data_block_size: self.data_block_size,
            hash_block_size: self.hash_block_size,
            data_blocks,
            salt: self.salt.clone(),
        }
    }
}
