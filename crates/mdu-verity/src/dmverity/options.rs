//! What `veritysetup format` and `verify` take as options, as this crate's
//! values: the UUID as text, the parameters from the pinned values and the
//! defaults, the algorithm's name as the caller spelt it, and the rule that
//! keeps the data area off the hash area of one device.

use super::{Formatted, Params, Pins};
use crate::Error;
use crate::dmverity::fec::WriteAt;
use crate::hash::{parse_hex, to_hex};

/// The UUID written as `veritysetup` takes and prints it, 32 hex digits in
/// groups of 8-4-4-4-12 (either case); `None` for anything else.
///
/// ```
/// use mdu_verity::dmverity::{parse_uuid, uuid_string};
/// let u = parse_uuid("0123ABCD-4567-89ab-cdef-0123456789ab").unwrap();
/// assert_eq!(u[..2], [0x01, 0x23]);
/// assert_eq!(uuid_string(&u), "0123abcd-4567-89ab-cdef-0123456789ab");
/// assert!(parse_uuid("0123abcd456789abcdef0123456789ab").is_none());
/// ```
pub fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let groups: Vec<&str> = text.split('-').collect();
    if groups.iter().map(|g| g.len()).ne([8, 4, 4, 4, 12]) {
        return None;
    }
    parse_hex(&groups.concat())?.try_into().ok()
}

/// The UUID in lower-case hex, 8-4-4-4-12, as `veritysetup` prints it.
///
/// ```
/// use mdu_verity::dmverity::uuid_string;
/// assert_eq!(uuid_string(&[0xab; 16]), "abababab-abab-abab-abab-abababababab");
/// ```
pub fn uuid_string(uuid: &[u8; 16]) -> String {
    let h = to_hex(uuid);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// A random UUID (RFC 9562 version 4, as `veritysetup` makes one) from 16
/// random bytes: their version and variant bits set.
///
/// ```
/// use mdu_verity::dmverity::{random_uuid, uuid_string};
/// assert_eq!(uuid_string(&random_uuid([0xff; 16])), "ffffffff-ffff-4fff-bfff-ffffffffffff");
/// ```
pub fn random_uuid(mut random: [u8; 16]) -> [u8; 16] {
    random[6] = (random[6] & 0x0f) | 0x40;
    random[8] = (random[8] & 0x3f) | 0x80;
    random
}

impl Pins {
    /// The parameters of a tree with every pinned value, and `defaults`'
    /// value where none is pinned (the superblock flag, UUID, hash offset
    /// and backend are always `defaults`'), checked with
    /// [`Params::validate`]: what `veritysetup format` builds from its
    /// options, or `verify` without a superblock.
    ///
    /// ```
    /// use mdu_verity::{dmverity::{Params, Pins}, Error, HashAlg};
    /// let pins = Pins { hash: Some(HashAlg::Sha512), data_blocks: Some(8), ..Pins::default() };
    /// let p = pins.params(Params { salt: vec![7; 32], ..Params::default() })?;
    /// assert_eq!((p.hash, p.data_blocks, p.salt.len()), (HashAlg::Sha512, Some(8), 32));
    /// let bad = Pins { data_block_size: Some(1000), ..Pins::default() };
    /// assert!(matches!(bad.params(Params::default()), Err(Error::BlockSize { size: 1000, .. })));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn params(self, defaults: Params) -> Result<Params, Error> {
        let p = Params {
            hash: self.hash.unwrap_or(defaults.hash),
            data_block_size: self.data_block_size.unwrap_or(defaults.data_block_size),
            hash_block_size: self.hash_block_size.unwrap_or(defaults.hash_block_size),
            salt: self.salt.unwrap_or(defaults.salt),
            format: self.format.unwrap_or(defaults.format),
            data_blocks: self.data_blocks.or(defaults.data_blocks),
            ..defaults
        };
        p.validate()?;
        Ok(p)
    }
}

impl Params {
    /// Checks that the data area does not run into the hash area, for data
    /// and hash on one device (`veritysetup`'s "Data area overlaps with
    /// hash area"): the data area is the pinned data blocks, or every whole
    /// block of the `data_len` bytes of the device, and the hash area
    /// starts at [`hash_offset`](Params::hash_offset).
    ///
    /// ```
    /// use mdu_verity::{dmverity::Params, Error};
    /// let p = Params { hash_offset: 1 << 20, ..Params::default() };
    /// assert!(p.check_shared_device(4 << 20).is_err());
    /// let p = Params { data_blocks: Some(256), ..p };
    /// assert!(p.check_shared_device(4 << 20).is_ok());
    /// let p = Params { data_blocks: Some(257), ..p };
    /// let err = p.check_shared_device(0).unwrap_err();
    /// assert!(matches!(err, Error::DataOverlapsHash { data_end: 1052672, hash_offset: 1048576 }));
    /// ```
    pub fn check_shared_device(&self, data_len: u64) -> Result<(), Error> {
        let dbs = u64::from(self.data_block_size.max(1));
        let blocks = self.data_blocks.unwrap_or(data_len / dbs);
        let data_end = blocks.saturating_mul(dbs);
        if data_end > self.hash_offset {
            return Err(Error::DataOverlapsHash {
                data_end,
                hash_offset: self.hash_offset,
            });
        }
        Ok(())
    }
}

impl Formatted {
    /// Writes the algorithm's name as the caller spelt it, in lower case,
    /// into the superblock [`format()`](super::format()) wrote at
    /// `hash_offset` of `hash_out`, where it names the same algorithm but
    /// differs from the algorithm's own name (`ripemd160` for `rmd160`):
    /// the name `veritysetup` stores. Nothing is written without a
    /// superblock, for another spelling of nothing, or for a name that
    /// names another algorithm.
    ///
    /// ```
    /// use std::cell::RefCell;
    /// use std::io::Cursor;
    /// use mdu_verity::{dmverity::{self, Superblock}, HashAlg};
    /// let p = dmverity::Params { hash: HashAlg::Rmd160, ..Default::default() };
    /// let mut dev = Cursor::new(Vec::new());
    /// let out = dmverity::format(&[0u8; 4096][..], &mut dev, &p)?;
    /// let dev = RefCell::new(dev.into_inner());
    /// out.spell_hash_name(&dev, 0, "RIPEMD160")?;
    /// assert_eq!(Superblock::algorithm_name(&dev.borrow()).as_deref(), Some("ripemd160"));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn spell_hash_name<W: WriteAt + ?Sized>(
        &self,
        hash_out: &W,
        hash_offset: u64,
        name: &str,
    ) -> Result<(), Error> {
        let Some(sb) = self.superblock() else {
            return Ok(());
        };
        let name = name.to_ascii_lowercase();
        if name == sb.hash.name() {
            return Ok(());
        }
        let spelt = super::Superblock {
            hash_name: name,
            ..sb.clone()
        };
        if spelt.to_bytes() == sb.to_bytes() {
            return Ok(());
        }
        // The name field: bytes 32..64 of the superblock, NUL-padded.
        hash_out.write_all_at(&spelt.to_bytes()[32..64], hash_offset + 32)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::io::Cursor;

    use super::*;
    use crate::HashAlg;
    use crate::dmverity::{Superblock, format};

    #[test]
    fn uuids_round_trip_and_bad_shapes_are_refused() {
        let u: [u8; 16] = core::array::from_fn(|i| (i * 17) as u8);
        assert_eq!(parse_uuid(&uuid_string(&u)), Some(u));
        for bad in [
            "",
            "00112233-4455-6677-8899-aabbccddeef",
            "00112233-4455-6677-8899-aabbccddeeff-",
            "0011223-34455-6677-8899-aabbccddeeff",
            "00112233-4455-6677-8899-aabbccddeegg",
        ] {
            assert_eq!(parse_uuid(bad), None, "{bad}");
        }
        let v4 = random_uuid([0; 16]);
        assert_eq!((v4[6], v4[8]), (0x40, 0x80));
    }

    #[test]
    fn pins_win_over_defaults_and_the_rest_is_the_defaults() {
        let defaults = Params {
            salt: vec![1; 32],
            superblock: false,
            uuid: [9; 16],
            hash_offset: 4096,
            ..Params::default()
        };
        let p = Pins::default().params(defaults.clone()).unwrap();
        assert_eq!(p, defaults);
        let pins = Pins {
            salt: Some(Vec::new()),
            format: Some(0),
            hash_block_size: Some(512),
            ..Pins::default()
        };
        let p = pins.params(defaults.clone()).unwrap();
        assert_eq!((p.salt.len(), p.format, p.hash_block_size), (0, 0, 512));
        assert_eq!(
            (p.uuid, p.hash_offset, p.superblock),
            ([9; 16], 4096, false)
        );
        let zero = Pins {
            data_blocks: Some(0),
            ..Pins::default()
        };
        assert!(matches!(
            zero.params(defaults),
            Err(Error::ZeroDataBlocks { .. })
        ));
    }

    #[test]
    fn the_data_area_may_end_exactly_where_the_hash_area_starts() {
        let p = Params {
            hash_offset: 8192,
            ..Params::default()
        };
        assert!(p.check_shared_device(8192 + 4095).is_ok());
        assert!(p.check_shared_device(12288).is_err());
        let huge = Params {
            data_blocks: Some(u64::MAX),
            ..p
        };
        assert!(matches!(
            huge.check_shared_device(0),
            Err(Error::DataOverlapsHash {
                data_end: u64::MAX,
                ..
            })
        ));
    }

    #[test]
    fn the_name_is_spelt_only_where_it_differs_and_a_superblock_exists() {
        let written = |p: &Params, name: &str| {
            let mut dev = Cursor::new(vec![0xeeu8; 4096]);
            let out = format(&[0u8; 4096][..], &mut dev, p).unwrap();
            let dev = RefCell::new(dev.into_inner());
            let before = dev.borrow().clone();
            out.spell_hash_name(&dev, p.hash_offset, name).unwrap();
            (before, dev.into_inner())
        };
        let rmd = Params {
            hash: HashAlg::Rmd160,
            ..Params::default()
        };
        let (before, after) = written(&rmd, "RIPEMD160");
        let name = |b: &[u8]| Superblock::algorithm_name(b);
        assert_eq!(name(&before).as_deref(), Some("rmd160"));
        assert_eq!(name(&after).as_deref(), Some("ripemd160"));
        assert_eq!((&before[..32], &before[64..]), (&after[..32], &after[64..]));
        // The algorithm's own name, and no superblock: nothing written.
        let (before, after) = written(&rmd, "RMD160");
        assert_eq!(before, after);
        let bare = Params {
            superblock: false,
            ..rmd
        };
        let (before, after) = written(&bare, "ripemd160");
        assert_eq!(before, after);
    }
}
