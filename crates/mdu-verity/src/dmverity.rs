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
//! The hash device is any [`Write`] + [`Seek`]: a [`std::fs::File`], or a
//! [`std::io::Cursor`] over a `Vec<u8>` to build the area in memory. As
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

use std::io::{Read, Seek, SeekFrom, Write};

use crate::hash::{BlockHasher, SaltAt};
use crate::merkle::{self, Spec, fill};
use crate::{Digest, Error, HashAlg, sha256};

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

const SIGNATURE: &[u8; 8] = b"verity\0\0";

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
        }
    }
}

fn check_block_size(what: &'static str, size: u32) -> Result<(), Error> {
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
        Ok(())
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

    /// Digests per hash block.
    fn per_block(&self) -> u64 {
        u64::from(self.hash_block_size) / self.hash.digest_len() as u64
    }

    fn hasher(&self, fresh: sha256::State) -> BlockHasher {
        let at = if self.format == 0 {
            SaltAt::Suffix
        } else {
            SaltAt::Prefix
        };
        BlockHasher::with_sha256(self.hash, &self.salt, at, fresh)
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
            data_block_size: self.data_block_size,
            hash_block_size: self.hash_block_size,
            data_blocks,
            salt: self.salt.clone(),
        }
    }
}

/// The 512-byte dm-verity superblock (`struct verity_sb`, version 1).
///
/// ```
/// use mdu_verity::dmverity::{Params, Superblock};
/// let sb = Params { salt: vec![1, 2, 3], ..Params::default() }.superblock_for(10);
/// let bytes = sb.to_bytes();
/// assert_eq!(Superblock::parse(&bytes)?, sb);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superblock {
    /// Hash type (format): 0 or 1.
    pub hash_type: u32,
    /// Raw UUID bytes.
    pub uuid: [u8; 16],
    /// Hash algorithm.
    pub hash: HashAlg,
    /// Data block size in bytes.
    pub data_block_size: u32,
    /// Hash block size in bytes.
    pub hash_block_size: u32,
    /// Number of data blocks.
    pub data_blocks: u64,
    /// Salt (0..=256 bytes).
    pub salt: Vec<u8>,
}

impl Superblock {
    /// The on-disk bytes (little-endian fields, algorithm name lowercase).
    /// A salt longer than 256 bytes (which [`Superblock::parse`] and
    /// [`format()`] never produce) is cut to its first 256 bytes.
    ///
    /// ```
    /// use mdu_verity::dmverity::Params;
    /// let b = Params::default().superblock_for(2048).to_bytes();
    /// assert_eq!(&b[32..39], b"sha256\0");
    /// assert_eq!(b[72..80], 2048u64.to_le_bytes());
    /// ```
    pub fn to_bytes(&self) -> [u8; SUPERBLOCK_LEN] {
        let mut b = [0u8; SUPERBLOCK_LEN];
        b[..8].copy_from_slice(SIGNATURE);
        b[8..12].copy_from_slice(&1u32.to_le_bytes());
        b[12..16].copy_from_slice(&self.hash_type.to_le_bytes());
        b[16..32].copy_from_slice(&self.uuid);
        let name = self.hash.name().as_bytes();
        b[32..32 + name.len()].copy_from_slice(name);
        b[64..68].copy_from_slice(&self.data_block_size.to_le_bytes());
        b[68..72].copy_from_slice(&self.hash_block_size.to_le_bytes());
        b[72..80].copy_from_slice(&self.data_blocks.to_le_bytes());
        let salt = &self.salt[..self.salt.len().min(MAX_SALT_LEN)];
        b[80..82].copy_from_slice(&(salt.len() as u16).to_le_bytes());
        b[88..88 + salt.len()].copy_from_slice(salt);
        b
    }

    /// Parse and check a superblock: signature, version 1, hash type 0 or
    /// 1, a known algorithm, block sizes (powers of two, 512..=65536), a
    /// salt of at most 256 bytes, and a number of data blocks that is not
    /// zero and whose bytes have 64-bit offsets. The superblock is untrusted
    /// input: every field that fails is a typed error.
    ///
    /// ```
    /// use mdu_verity::{dmverity::{Params, Superblock}, Error};
    /// assert!(matches!(Superblock::parse(&[0u8; 512]), Err(Error::BadSignature)));
    /// let mut b = Params::default().superblock_for(8).to_bytes();
    /// b[72..80].copy_from_slice(&0u64.to_le_bytes());
    /// assert!(matches!(Superblock::parse(&b), Err(Error::ZeroDataBlocks { .. })));
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Superblock, Error> {
        if bytes.len() < SUPERBLOCK_LEN {
            return Err(Error::HashAreaTooSmall {
                needed: SUPERBLOCK_LEN as u64,
                available: bytes.len() as u64,
            });
        }
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap_or([0; 4]));
        if &bytes[..8] != SIGNATURE {
            return Err(Error::BadSignature);
        }
        let version = u32_at(8);
        if version != 1 {
            return Err(Error::UnknownVersion { version });
        }
        let hash_type = u32_at(12);
        if hash_type > 1 {
            return Err(Error::UnknownHashType { hash_type });
        }
        let name_field = &bytes[32..64];
        let name_len = name_field.iter().position(|&c| c == 0).unwrap_or(32);
        let name = String::from_utf8_lossy(&name_field[..name_len]).into_owned();
        let hash = HashAlg::from_name(&name)?;
        let data_block_size = u32_at(64);
        let hash_block_size = u32_at(68);
        check_block_size("data block", data_block_size)?;
        check_block_size("hash block", hash_block_size)?;
        let mut db = [0u8; 8];
        db.copy_from_slice(&bytes[72..80]);
        let data_blocks = u64::from_le_bytes(db);
        if data_blocks == 0 {
            return Err(Error::ZeroDataBlocks {
                source: "the superblock's data_blocks",
            });
        }
        if data_blocks
            .checked_mul(u64::from(data_block_size))
            .is_none()
        {
            return Err(Error::TreeTooLarge { data_blocks });
        }
        let salt_len = usize::from(u16::from_le_bytes([bytes[80], bytes[81]]));
        if salt_len > MAX_SALT_LEN {
            return Err(Error::SaltTooLong {
                len: salt_len,
                max: MAX_SALT_LEN,
            });
        }
        let mut uuid = [0u8; 16];
        uuid.copy_from_slice(&bytes[16..32]);
        Ok(Superblock {
            hash_type,
            uuid,
            hash,
            data_block_size,
            hash_block_size,
            data_blocks,
            salt: bytes[88..88 + salt_len].to_vec(),
        })
    }

    /// Read and parse the superblock at byte `hash_offset` of a hash device.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity::{self, Superblock};
    /// let p = dmverity::Params::default();
    /// let mut dev = Cursor::new(Vec::new());
    /// dmverity::format(&[0u8; 8192][..], &mut dev, &p)?;
    /// assert_eq!(Superblock::read_from(&mut dev, 0)?.data_blocks, 2);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn read_from<R: Read + Seek>(mut dev: R, hash_offset: u64) -> Result<Superblock, Error> {
        dev.seek(SeekFrom::Start(hash_offset))?;
        let mut b = [0u8; SUPERBLOCK_LEN];
        let got = fill(&mut dev, &mut b)?;
        Superblock::parse(&b[..got])
    }

    /// Parameters to verify with this superblock at `hash_offset`, taken
    /// from it as they are. Verification with them succeeds for any data of
    /// the shape the superblock names; [`Superblock::params_pinned`] checks
    /// the caller's pinned values first (see the [trust model](self#trust-model)).
    ///
    /// ```
    /// use mdu_verity::dmverity::Params;
    /// let p = Params { salt: vec![9; 32], data_blocks: Some(7), ..Params::default() };
    /// assert_eq!(p.superblock_for(7).params(0), p);
    /// ```
    pub fn params(&self, hash_offset: u64) -> Params {
        self.params_unchecked(hash_offset)
    }

    /// Parameters to verify with this superblock at `hash_offset`, after
    /// checking every pinned value against it ([`Error::PinMismatch`] names
    /// the first that disagrees) and the result with [`Params::validate`].
    ///
    /// ```
    /// use mdu_verity::dmverity::{Params, Pins};
    /// let sb = Params::default().superblock_for(7);
    /// let p = sb.params_pinned(0, &Pins { data_block_size: Some(4096), ..Pins::default() })?;
    /// assert_eq!(p.data_blocks, Some(7));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn params_pinned(&self, hash_offset: u64, pins: &Pins) -> Result<Params, Error> {
        pins.check(self)?;
        let p = self.params_unchecked(hash_offset);
        p.validate()?;
        Ok(p)
    }

    fn params_unchecked(&self, hash_offset: u64) -> Params {
        Params {
            hash: self.hash,
            data_block_size: self.data_block_size,
            hash_block_size: self.hash_block_size,
            salt: self.salt.clone(),
            format: self.hash_type,
            superblock: true,
            uuid: self.uuid,
            hash_offset,
            data_blocks: Some(self.data_blocks),
        }
    }
}

/// Parameters the caller trusts when the superblock describes the tree:
/// each `Some` is pinned and must agree with the superblock; each `None` is
/// taken from it (see the [trust model](self#trust-model)).
///
/// ```
/// use mdu_verity::{dmverity::{Params, Pins}, Error, HashAlg};
///
/// let sb = Params::default().superblock_for(1);
/// let pins = Pins { data_blocks: Some(16), ..Pins::default() };
/// let err = sb.params_pinned(0, &pins).unwrap_err();
/// assert!(matches!(err, Error::PinMismatch { field: "data_blocks", .. }));
/// assert_eq!(
///     err.to_string(),
///     "the superblock says data_blocks = 1, but 16 was pinned by the caller"
/// );
/// let all = Pins::from_params(&Params { data_blocks: Some(1), ..Params::default() });
/// assert!(sb.params_pinned(0, &all).is_ok());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pins {
    /// Hash algorithm.
    pub hash: Option<HashAlg>,
    /// Data block size in bytes.
    pub data_block_size: Option<u32>,
    /// Hash block size in bytes.
    pub hash_block_size: Option<u32>,
    /// Salt (`Some(vec![])` pins "no salt").
    pub salt: Option<Vec<u8>>,
    /// Hash type (format): 0 or 1.
    pub format: Option<u32>,
    /// Number of data blocks.
    pub data_blocks: Option<u64>,
}

impl Pins {
    /// Pin every shape parameter of `params` (its `data_blocks` only if it
    /// is `Some`).
    ///
    /// ```
    /// use mdu_verity::dmverity::{Params, Pins};
    /// let pins = Pins::from_params(&Params::default());
    /// assert_eq!(pins.data_block_size, Some(4096));
    /// assert_eq!(pins.data_blocks, None);
    /// ```
    pub fn from_params(params: &Params) -> Pins {
        Pins {
            hash: Some(params.hash),
            data_block_size: Some(params.data_block_size),
            hash_block_size: Some(params.hash_block_size),
            salt: Some(params.salt.clone()),
            format: Some(params.format),
            data_blocks: params.data_blocks,
        }
    }

    /// Whether every parameter that shapes the tree is pinned, so that the
    /// superblock can only confirm them.
    ///
    /// ```
    /// use mdu_verity::dmverity::{Params, Pins};
    /// assert!(!Pins::default().all_pinned());
    /// let p = Params { data_blocks: Some(8), ..Params::default() };
    /// assert!(Pins::from_params(&p).all_pinned());
    /// ```
    pub fn all_pinned(&self) -> bool {
        self.hash.is_some()
            && self.data_block_size.is_some()
            && self.hash_block_size.is_some()
            && self.salt.is_some()
            && self.format.is_some()
            && self.data_blocks.is_some()
    }

    /// The first pinned value that disagrees with `sb`.
    fn check(&self, sb: &Superblock) -> Result<(), Error> {
        fn pin<T: PartialEq + ToString>(
            field: &'static str,
            pinned: Option<T>,
            found: T,
        ) -> Result<(), Error> {
            match pinned {
                Some(p) if p != found => Err(Error::PinMismatch {
                    field,
                    pinned: p.to_string(),
                    superblock: found.to_string(),
                }),
                _ => Ok(()),
            }
        }
        let hex = |s: &[u8]| {
            if s.is_empty() {
                "- (no salt)".to_owned()
            } else {
                s.iter().map(|b| format!("{b:02x}")).collect()
            }
        };
        pin("hash", self.hash.map(|h| h.name()), sb.hash.name())?;
        pin("data_block_size", self.data_block_size, sb.data_block_size)?;
        pin("hash_block_size", self.hash_block_size, sb.hash_block_size)?;
        pin("format", self.format, sb.hash_type)?;
        pin("data_blocks", self.data_blocks, sb.data_blocks)?;
        pin("salt", self.salt.as_deref().map(hex), hex(&sb.salt))
    }
}

/// What [`format()`] wrote.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity;
/// let out = dmverity::format(&[0u8; 8 << 20][..], &mut Cursor::new(Vec::new()), &dmverity::Params::default())?;
/// assert_eq!((out.data_blocks(), out.hash_blocks()), (2048, 17));
/// assert_eq!(out.hash_device_size(), 18 * 4096);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Formatted {
    root_hash: Digest,
    superblock: Option<Superblock>,
    data_blocks: u64,
    hash_blocks: u64,
    hash_start_block: u64,
    hash_block_size: u32,
}

impl Formatted {
    /// The root hash (what `veritysetup format` prints as `Root hash:`).
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let out = dmverity::format(&[0u8; 4096][..], &mut Cursor::new(Vec::new()), &dmverity::Params::default())?;
    /// assert_eq!(out.root_hash().to_hex(), "ad7facb2586fc6e966c004d7d1d16b024f5805ff7cb47c7a85dabd8b48892ca7");
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn root_hash(&self) -> Digest {
        self.root_hash
    }

    /// The superblock that was written, if any.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let p = dmverity::Params { superblock: false, ..Default::default() };
    /// let out = dmverity::format(&[0u8; 4096][..], &mut Cursor::new(Vec::new()), &p)?;
    /// assert!(out.superblock().is_none());
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn superblock(&self) -> Option<&Superblock> {
        self.superblock.as_ref()
    }

    /// Number of data blocks hashed.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let out = dmverity::format(&[0u8; 5000][..], &mut Cursor::new(Vec::new()), &Default::default())?;
    /// assert_eq!(out.data_blocks(), 1); // the partial block is ignored
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn data_blocks(&self) -> u64 {
        self.data_blocks
    }

    /// Number of hash blocks of the tree (without the superblock).
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let out = dmverity::format(&[0u8; 4096][..], &mut Cursor::new(Vec::new()), &Default::default())?;
    /// assert_eq!(out.hash_blocks(), 0);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn hash_blocks(&self) -> u64 {
        self.hash_blocks
    }

    /// The hash block where the tree starts on the hash device.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let out = dmverity::format(&[0u8; 4096][..], &mut Cursor::new(Vec::new()), &Default::default())?;
    /// assert_eq!(out.hash_start_block(), 1);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn hash_start_block(&self) -> u64 {
        self.hash_start_block
    }

    /// Bytes from the start of the hash device to the end of the tree
    /// (`veritysetup`'s "Hash device size" when the offset is 0).
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let out = dmverity::format(&[0u8; 8192][..], &mut Cursor::new(Vec::new()), &Default::default())?;
    /// assert_eq!(out.hash_device_size(), 2 * 4096);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn hash_device_size(&self) -> u64 {
        (self.hash_start_block + self.hash_blocks) * u64::from(self.hash_block_size)
    }
}

/// Hash the data blocks read from `data` and write the hash area (and the
/// superblock, if enabled) to `hash_out`, like `veritysetup format`.
///
/// All reading and hashing happens before the first write, so a parameter
/// error or a short data device leaves `hash_out` untouched; an I/O error
/// while writing may leave it partly written.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity;
///
/// let salt = (0..32u8).collect::<Vec<u8>>();
/// let p = dmverity::Params { salt, data_block_size: 1024, hash_block_size: 1024, ..Default::default() };
/// let mut dev = Cursor::new(Vec::new());
/// let out = dmverity::format(&vec![7u8; 300 * 1024][..], &mut dev, &p)?;
/// assert_eq!(out.hash_blocks(), 10 + 1);
/// assert_eq!(dev.get_ref().len() as u64, out.hash_device_size());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn format<R: Read, W: Write + Seek>(
    data: R,
    hash_out: W,
    params: &Params,
) -> Result<Formatted, Error> {
    format_with(data, hash_out, params, sha256::State::new())
}

/// As [`format()`], with SHA-256 on the given fresh state's backend.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity, sha256::{Backend, State}};
/// let p = dmverity::Params::default();
/// let g = State::with_backend(Backend::Generic).unwrap();
/// let a = dmverity::format_with(&[1u8; 8192][..], &mut Cursor::new(Vec::new()), &p, g)?;
/// let b = dmverity::format(&[1u8; 8192][..], &mut Cursor::new(Vec::new()), &p)?;
/// assert_eq!(a.root_hash(), b.root_hash());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn format_with<R: Read, W: Write + Seek>(
    data: R,
    hash_out: W,
    params: &Params,
    fresh: sha256::State,
) -> Result<Formatted, Error> {
    format_tree(hash_out, params, fresh, |spec| merkle::build(data, spec))
}

/// As [`format()`], for a data device already in memory (or mapped into
/// it): the blocks are hashed where they lie, without the copy a reader
/// needs, and with the `rayon` feature the whole device is shared among the
/// pool's threads. The result is the same as `format(data, hash_out,
/// params)`.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity;
///
/// let data = vec![4u8; 64 * 4096];
/// let p = dmverity::Params::default();
/// let a = dmverity::format_bytes(&data, &mut Cursor::new(Vec::new()), &p)?;
/// let b = dmverity::format(&data[..], &mut Cursor::new(Vec::new()), &p)?;
/// assert_eq!(a.root_hash(), b.root_hash());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn format_bytes<W: Write + Seek>(
    data: &[u8],
    hash_out: W,
    params: &Params,
) -> Result<Formatted, Error> {
    format_chunks(core::iter::once(Ok(data)), hash_out, params)
}

/// As [`format_bytes`], for a data device that arrives in pieces already in
/// memory, in order: for example successive windows of a mapped image, each
/// of which can be unmapped as soon as it has been hashed, so that memory
/// stays bounded by the window and the tree. Chunks may have any lengths; a
/// block split between two chunks is joined. With `params.data_blocks`
/// set, chunks past those blocks are not taken from the iterator. An `Err`
/// item stops the work and is returned as [`Error::Io`]; like every error
/// before the first write, it leaves `hash_out` untouched.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity;
///
/// let data = vec![4u8; 64 * 4096];
/// let p = dmverity::Params::default();
/// let pieces = data.chunks(5000).map(Ok::<_, std::io::Error>);
/// let a = dmverity::format_chunks(pieces, &mut Cursor::new(Vec::new()), &p)?;
/// let b = dmverity::format_bytes(&data, &mut Cursor::new(Vec::new()), &p)?;
/// assert_eq!(a.root_hash(), b.root_hash());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn format_chunks<C: AsRef<[u8]>, W: Write + Seek>(
    chunks: impl IntoIterator<Item = std::io::Result<C>>,
    hash_out: W,
    params: &Params,
) -> Result<Formatted, Error> {
    format_tree(hash_out, params, sha256::State::new(), |spec| {
        merkle::build_chunks(chunks, spec)
    })
}

/// Checks `params`, builds the tree with `build` and writes the hash area.
fn format_tree<W: Write + Seek>(
    mut hash_out: W,
    params: &Params,
    fresh: sha256::State,
    build: impl FnOnce(&Spec<'_>) -> Result<crate::merkle::Tree, Error>,
) -> Result<Formatted, Error> {
    params.validate()?;
    let hasher = params.hasher(fresh);
    let tree = build(&Spec {
        hasher: &hasher,
        data_block_size: params.data_block_size as usize,
        hash_block_size: params.hash_block_size as usize,
        pad_partial: false,
        data_blocks: params.data_blocks,
    })?;
    if tree.data_blocks() == 0 {
        return Err(Error::NoDataBlocks {
            data_bytes: tree.data_bytes(),
            data_block_size: params.data_block_size,
        });
    }
    let hbs = u64::from(params.hash_block_size);
    let start = params.hash_start_block();
    let superblock = params
        .superblock
        .then(|| params.superblock_for(tree.data_blocks()));
    if let Some(sb) = &superblock {
        hash_out.seek(SeekFrom::Start(params.hash_offset))?;
        hash_out.write_all(&sb.to_bytes())?;
        // veritysetup writes the superblock with a read-modify-write of the
        // block holding it (the hash block size, at most 4 KiB, on a regular
        // file): bytes already there are kept, a shorter device is extended
        // with zeros to the end of that block.
        let sb_end = params.hash_offset + SUPERBLOCK_LEN as u64;
        let block_end = sb_end.next_multiple_of(hbs.min(4096));
        let len = hash_out.seek(SeekFrom::End(0))?;
        if len < block_end {
            std::io::copy(&mut std::io::repeat(0).take(block_end - len), &mut hash_out)?;
        }
    }
    hash_out.seek(SeekFrom::Start(start * hbs))?;
    tree.write_root_first(&mut hash_out)?;
    hash_out.flush()?;
    Ok(Formatted {
        root_hash: tree.root_hash(),
        superblock,
        data_blocks: tree.data_blocks(),
        hash_blocks: tree.size() as u64 / hbs,
        hash_start_block: start,
        hash_block_size: params.hash_block_size,
    })
}

/// Verify every data block of `data` against the hash area on `hash` and
/// `root_hash`; the first bad block is named in the error
/// ([`Error::CorruptHashBlock`], [`Error::CorruptDataBlock`] or
/// [`Error::MissingDataBlock`]).
///
/// `params` are the caller's and are trusted: the superblock on `hash`, if
/// any, is not read (see [`verify_with_superblock`] and the
/// [trust model](self#trust-model)). The number of data blocks is
/// `params.data_blocks`, or every whole block of `data`; zero blocks is an
/// error, never success. Hash blocks are checked from the root down, then
/// the data blocks in order, hashing two blocks at a time.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity, Error};
///
/// let mut data = vec![3u8; 64 * 4096];
/// let p = dmverity::Params::default();
/// let mut hash = Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
/// dmverity::verify(Cursor::new(&data), &mut hash, &p, &root)?;
/// data[40 * 4096 + 17] ^= 1;
/// let err = dmverity::verify(Cursor::new(&data), &mut hash, &p, &root).unwrap_err();
/// assert!(matches!(err, Error::CorruptDataBlock { block: 40 }));
/// let err = dmverity::verify(Cursor::new(&[]), &mut hash, &p, &root).unwrap_err();
/// assert!(matches!(err, Error::NoDataBlocks { .. }));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn verify<D: Read + Seek, H: Read + Seek>(
    mut data: D,
    hash: H,
    params: &Params,
    root_hash: &Digest,
) -> Result<(), Error> {
    params.validate()?;
    let n = data_blocks(&mut data, params)?;
    verify_range(data, hash, params, root_hash, 0, n)
}

/// Read the superblock at `hash_offset` of `hash`, check it against the
/// caller's `pins`, and verify every data block it describes; returns the
/// parameters that were used (so the caller sees the shape the superblock
/// chose), like `veritysetup verify`.
///
/// The superblock is untrusted: a malformed one is an error, a pinned
/// value it contradicts is [`Error::PinMismatch`], and the parameters it
/// does not contradict are taken from it. Pin at least `data_blocks` to
/// know that the data is the data the root hash was made for (see the
/// [trust model](self#trust-model)).
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity::{self, Pins}, Error};
///
/// let data = vec![5u8; 16 * 4096];
/// let mut hash = Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &Default::default())?.root_hash();
/// let pins = Pins { data_blocks: Some(16), ..Pins::default() };
/// let used = dmverity::verify_with_superblock(Cursor::new(&data), &mut hash, 0, &pins, &root)?;
/// assert_eq!(used.data_blocks, Some(16));
///
/// // The hash device claims one data block: the pin refuses it.
/// hash.get_mut()[72..80].copy_from_slice(&1u64.to_le_bytes());
/// let err = dmverity::verify_with_superblock(Cursor::new(&data), &mut hash, 0, &pins, &root);
/// assert!(matches!(err, Err(Error::PinMismatch { field: "data_blocks", .. })));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn verify_with_superblock<D: Read + Seek, H: Read + Seek>(
    data: D,
    mut hash: H,
    hash_offset: u64,
    pins: &Pins,
    root_hash: &Digest,
) -> Result<Params, Error> {
    if !hash_offset.is_multiple_of(512) {
        return Err(Error::HashOffset {
            offset: hash_offset,
        });
    }
    if hash_offset > MAX_HASH_OFFSET {
        return Err(Error::HashOffsetTooLarge {
            offset: hash_offset,
            max: MAX_HASH_OFFSET,
        });
    }
    let sb = Superblock::read_from(&mut hash, hash_offset)?;
    let params = sb.params_pinned(hash_offset, pins)?;
    verify_range(data, hash, &params, root_hash, 0, sb.data_blocks)?;
    Ok(params)
}

/// The number of data blocks: pinned, or every whole block of `data`.
fn data_blocks<D: Seek>(data: &mut D, params: &Params) -> Result<u64, Error> {
    let n = match params.data_blocks {
        Some(n) => n,
        None => {
            let data_bytes = data.seek(SeekFrom::End(0))?;
            let n = data_bytes / u64::from(params.data_block_size);
            if n == 0 {
                return Err(Error::NoDataBlocks {
                    data_bytes,
                    data_block_size: params.data_block_size,
                });
            }
            n
        }
    };
    if n == 0 {
        return Err(Error::ZeroDataBlocks {
            source: "Params::data_blocks",
        });
    }
    Ok(n)
}

/// Verify data blocks `start .. start + count` (and the hash blocks on
/// their paths to the root), naming the first bad block in the error.
///
/// The device has `params.data_blocks` blocks, or every whole block of
/// `data` when that is `None`. An empty range is [`Error::ZeroDataBlocks`]:
/// it would check nothing.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity, Error};
///
/// let mut data = vec![0u8; 300 * 512];
/// let p = dmverity::Params { data_block_size: 512, hash_block_size: 512, ..Default::default() };
/// let mut hash = Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
/// data[0] = 1;
/// // Blocks 1..300 are still good; block 0 is not.
/// dmverity::verify_range(Cursor::new(&data), &mut hash, &p, &root, 1, 299)?;
/// let err = dmverity::verify_range(Cursor::new(&data), &mut hash, &p, &root, 0, 1).unwrap_err();
/// assert!(matches!(err, Error::CorruptDataBlock { block: 0 }));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn verify_range<D: Read + Seek, H: Read + Seek>(
    data: D,
    hash: H,
    params: &Params,
    root_hash: &Digest,
    start: u64,
    count: u64,
) -> Result<(), Error> {
    verify_range_with(
        data,
        hash,
        params,
        root_hash,
        start,
        count,
        sha256::State::new(),
    )
}

/// Where the levels of a tree over `data_blocks` blocks lie on the hash
/// device. Every count comes from untrusted input (a superblock, a device
/// size), so every position is computed with checked arithmetic.
struct Layout {
    /// Blocks in each level, level 0 (just above the data) first.
    levels: Vec<u64>,
    /// Absolute hash-device block where each level starts.
    level_start: Vec<u64>,
    /// Byte just past the tree on the hash device (0 without levels).
    tree_end: u64,
}

impl Layout {
    fn new(params: &Params, data_blocks: u64) -> Result<Layout, Error> {
        let too_large = || Error::TreeTooLarge { data_blocks };
        // Every data byte offset must fit, not only the tree's.
        data_blocks
            .checked_mul(u64::from(params.data_block_size))
            .ok_or_else(too_large)?;
        let levels = merkle::level_blocks(data_blocks, params.per_block());
        let mut level_start = vec![0u64; levels.len()];
        let mut pos = params.hash_start_block();
        for i in (0..levels.len()).rev() {
            level_start[i] = pos;
            pos = pos.checked_add(levels[i]).ok_or_else(too_large)?;
        }
        let tree_end = if levels.is_empty() {
            0
        } else {
            pos.checked_mul(u64::from(params.hash_block_size))
                .ok_or_else(too_large)?
        };
        Ok(Layout {
            levels,
            level_start,
            tree_end,
        })
    }
}

/// As [`verify_range`], with SHA-256 on the given fresh state's backend.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity, sha256::{Backend, State}};
/// let p = dmverity::Params::default();
/// let data = vec![0u8; 4 * 4096];
/// let mut hash = Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
/// let g = State::with_backend(Backend::Generic).unwrap();
/// dmverity::verify_range_with(Cursor::new(&data), &mut hash, &p, &root, 0, 4, g)?;
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn verify_range_with<D: Read + Seek, H: Read + Seek>(
    mut data: D,
    mut hash: H,
    params: &Params,
    root_hash: &Digest,
    start: u64,
    count: u64,
    fresh: sha256::State,
) -> Result<(), Error> {
    params.validate()?;
    let dl = params.hash.digest_len();
    if root_hash.as_bytes().len() != dl {
        return Err(Error::RootHash {
            reason: format!(
                "{} bytes given, {} needs {dl}",
                root_hash.as_bytes().len(),
                params.hash
            ),
        });
    }
    if count == 0 {
        return Err(Error::ZeroDataBlocks {
            source: "the verify range",
        });
    }
    let dbs = params.data_block_size as usize;
    let hbs = params.hash_block_size as usize;
    let n = data_blocks(&mut data, params)?;
    let end = start.checked_add(count).filter(|&e| e <= n);
    let Some(end) = end else {
        return Err(Error::BlockRange {
            start,
            count,
            data_blocks: n,
        });
    };
    let hasher = params.hasher(fresh);
    let per_block = params.per_block();
    let Layout {
        levels,
        level_start,
        tree_end,
    } = Layout::new(params, n)?;

    // The whole tree must be on the hash device; checking this first also
    // bounds every buffer below by the device size.
    let available = hash.seek(SeekFrom::End(0))?;
    if tree_end > available {
        return Err(Error::HashAreaTooSmall {
            needed: tree_end,
            available,
        });
    }

    // `expected` holds the digests of the blocks `lo..=hi` of the level being
    // checked (starting with the root hash for the top block), `base` the
    // index whose digest sits at offset 0 of `expected`.
    let mut expected = root_hash.as_bytes().to_vec();
    let mut base = 0u64;
    // Data blocks covered by one entry of `expected`; saturating is exact
    // here: the top level's span only needs to exceed `n`.
    let mut span = 1u64;
    for _ in 0..levels.len() {
        span = span.saturating_mul(per_block);
    }
    for i in (0..levels.len()).rev() {
        // Blocks of level i covering the range; each covers `span` data blocks.
        let lo = start / span;
        let hi = (end - 1) / span;
        let nblocks = (hi - lo + 1) as usize;
        let mut blocks = vec![0u8; nblocks * hbs];
        // In bounds: lo..=hi lies inside level i, which ends before tree_end.
        let at = (level_start[i] + lo) * hbs as u64;
        hash.seek(SeekFrom::Start(at))?;
        let got = fill(&mut hash, &mut blocks)?;
        if got < blocks.len() {
            return Err(Error::HashAreaTooSmall {
                needed: at + blocks.len() as u64,
                available: at + got as u64,
            });
        }
        let mut digests = vec![0u8; nblocks * dl];
        hasher.hash_blocks_par(&blocks, hbs, &mut digests);
        for j in 0..nblocks {
            let idx = lo + j as u64;
            let off = ((idx - base) as usize) * dl;
            if digests[j * dl..(j + 1) * dl] != expected[off..off + dl] {
                return Err(Error::CorruptHashBlock {
                    level: i,
                    index: idx,
                    hash_block: level_start[i] + idx,
                });
            }
        }
        // The last block of a level holds the digests of the last blocks
        // below it and zeros after them (as `format` writes it and as
        // `veritysetup verify` checks): otherwise the tree is one over more
        // blocks than `n`, and a prefix of its data would verify.
        if hi + 1 == levels[i] {
            let below = if i == 0 { n } else { levels[i - 1] };
            let used = ((below - hi * per_block) as usize) * dl;
            let last = &blocks[(nblocks - 1) * hbs..];
            if let Some(at) = last[used..].iter().position(|&b| b != 0) {
                return Err(Error::HashBlockSpare {
                    hash_block: level_start[i] + hi,
                    offset: used + at,
                });
            }
        }
        // The entries of these blocks are the digests one level down.
        expected = blocks;
        if dl * per_block as usize != hbs {
            // Digest slots fill each block exactly for SHA-256 and SHA-512
            // with power-of-two blocks; keep only the used part otherwise.
            expected = expected
                .chunks_exact(hbs)
                .flat_map(|b| b[..dl * per_block as usize].iter().copied())
                .collect();
        }
        base = lo * per_block;
        span /= per_block;
    }

    // Data blocks, in chunks, two at a time. Offsets fit: n * dbs was
    // checked by the layout.
    let chunk_blocks = ((1usize << 20) / dbs).max(2);
    let mut buf = vec![0u8; chunk_blocks * dbs];
    let mut digests = vec![0u8; chunk_blocks * dl];
    data.seek(SeekFrom::Start(start * dbs as u64))?;
    let mut b = start;
    while b < end {
        let want = ((end - b) as usize).min(chunk_blocks);
        let got = fill(&mut data, &mut buf[..want * dbs])?;
        // Compare the whole blocks that arrived before naming a missing
        // one, so the first bad block is the one reported.
        let k = got / dbs;
        hasher.hash_blocks_par(&buf[..k * dbs], dbs, &mut digests[..k * dl]);
        for j in 0..k {
            let off = ((b + j as u64 - base) as usize) * dl;
            if digests[j * dl..(j + 1) * dl] != expected[off..off + dl] {
                return Err(Error::CorruptDataBlock {
                    block: b + j as u64,
                });
            }
        }
        if k < want {
            return Err(Error::MissingDataBlock {
                block: b + k as u64,
                data_blocks: n,
            });
        }
        b += k as u64;
    }
    Ok(())
}
