//! The dm-verity superblock and the parameters a caller pins against it.

use std::io::{Read, Seek, SeekFrom};

use super::{MAX_SALT_LEN, Params, SUPERBLOCK_LEN, check_block_size};
use crate::source::fill;
use crate::{Error, HashAlg};

const SIGNATURE: &[u8; 8] = b"verity\0\0";

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
    /// The algorithm's name as the superblock spells it (up to its first
    /// NUL): `veritysetup` stores the name it was given (`blake2b512`,
    /// `SHA256`) and prints it back as stored. [`Superblock::to_bytes`]
    /// writes it where it names `hash`, and `hash`'s own name otherwise.
    pub hash_name: String,
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
    /// [`format()`](super::format()) never produce) is cut to its first 256 bytes.
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
        let given = HashAlg::from_name(&self.hash_name).ok() == Some(self.hash)
            && self.hash_name.len() < 32;
        let name = if given {
            self.hash_name.as_bytes()
        } else {
            self.hash.name().as_bytes()
        };
        b[32..32 + name.len()].copy_from_slice(name);
        b[64..68].copy_from_slice(&self.data_block_size.to_le_bytes());
        b[68..72].copy_from_slice(&self.hash_block_size.to_le_bytes());
        b[72..80].copy_from_slice(&self.data_blocks.to_le_bytes());
        let salt = &self.salt[..self.salt.len().min(MAX_SALT_LEN)];
        b[80..82].copy_from_slice(&(salt.len() as u16).to_le_bytes());
        b[88..88 + salt.len()].copy_from_slice(salt);
        b
    }

    /// The algorithm name of the superblock at the start of `bytes` as it
    /// is spelt there (up to its first NUL), before
    /// [`HashAlg::from_name`] reads it: `veritysetup` stores the name it
    /// was given (`blake2b512`, `SHA256`) and prints it back as stored.
    /// `None` if `bytes` is shorter than a superblock.
    ///
    /// ```
    /// use mdu_verity::dmverity::{Params, Superblock};
    /// let mut b = Params::default().superblock_for(8).to_bytes();
    /// b[32..38].copy_from_slice(b"SHA256");
    /// assert_eq!(Superblock::algorithm_name(&b).as_deref(), Some("SHA256"));
    /// let sb = Superblock::parse(&b)?;
    /// assert_eq!((sb.hash.name(), sb.hash_name.as_str()), ("sha256", "SHA256"));
    /// assert_eq!(sb.to_bytes(), b);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn algorithm_name(bytes: &[u8]) -> Option<String> {
        let field = bytes.get(..SUPERBLOCK_LEN)?.get(32..64)?;
        let len = field.iter().position(|&c| c == 0).unwrap_or(field.len());
        Some(String::from_utf8_lossy(&field[..len]).into_owned())
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
        let hash_name = Superblock::algorithm_name(bytes).unwrap_or_default();
        let hash = HashAlg::from_name(&hash_name)?;
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
            hash_name,
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
    /// the caller's pinned values first (see the [trust model](super#trust-model)).
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
            backend: None,
        }
    }
}

/// Parameters the caller trusts when the superblock describes the tree:
/// each `Some` is pinned and must agree with the superblock; each `None` is
/// taken from it (see the [trust model](super#trust-model)).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_as_spelt_survives_a_parse_and_a_write() {
        let mut b = Params::default().superblock_for(8).to_bytes();
        for name in ["sha256", "SHA256", "Sha256"] {
            b[32..64].fill(0);
            b[32..32 + name.len()].copy_from_slice(name.as_bytes());
            let sb = Superblock::parse(&b).unwrap();
            assert_eq!(sb.hash_name, name);
            assert_eq!(sb.to_bytes(), b, "{name}");
        }
    }

    #[test]
    fn a_name_of_another_algorithm_is_not_written() {
        let mut sb = Params::default().superblock_for(8);
        sb.hash_name = "sha512".into();
        assert_eq!(
            Superblock::parse(&sb.to_bytes()).unwrap().hash_name,
            "sha256"
        );
    }

    #[test]
    fn the_hash_device_size_is_what_format_writes() {
        for (data_blocks, hbs, superblock, hash_offset) in [
            (1, 4096, true, 0),
            (256, 4096, true, 0),
            (257, 512, true, 0),
            (1000, 1024, false, 0),
            (1000, 4096, true, 8192),
        ] {
            let p = Params {
                data_block_size: 512,
                hash_block_size: hbs,
                superblock,
                hash_offset,
                ..Params::default()
            };
            let data = vec![0u8; data_blocks as usize * 512];
            let mut dev = std::io::Cursor::new(Vec::new());
            let out = super::super::format(&data[..], &mut dev, &p).unwrap();
            assert_eq!(
                p.hash_device_size(data_blocks).unwrap(),
                out.hash_device_size()
            );
        }
        let p = Params::default();
        assert!(p.hash_device_size(0).is_err());
        assert!(p.hash_device_size(u64::MAX).is_err());
    }
}
