//! The 4096-byte binary header at the start of each header copy.
//!
//! Integers are big-endian. Layout: magic (6), version (2), hdr_size (8),
//! seqid (8), label (48), checksum_alg (32), salt (64), uuid (40),
//! subsystem (48), hdr_offset (8), 184 zero bytes, csum (64), 3584 zero
//! bytes. The checksum is SHA-256 over the whole copy (binary header and
//! JSON area, `hdr_size` bytes) with the csum field zeroed.

use crate::Error;
use crate::kdf::sha256;

/// The length of the binary header.
///
/// ```
/// assert_eq!(mdu_luks2::BINARY_HEADER_LEN, 4096);
/// ```
pub const BINARY_HEADER_LEN: usize = 4096;

/// The header sizes (binary header + JSON area) LUKS2 allows: 16 KiB to
/// 4 MiB, powers of two. A secondary header lies at one of these offsets.
///
/// ```
/// assert_eq!(mdu_luks2::HEADER_SIZES[0], 16384);
/// ```
pub const HEADER_SIZES: [u64; 9] = [
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
    2 << 20,
    4 << 20,
];

/// Magic of the primary header.
pub(crate) const MAGIC_PRIMARY: [u8; 6] = *b"LUKS\xba\xbe";
/// Magic of the secondary header.
pub(crate) const MAGIC_SECONDARY: [u8; 6] = *b"SKUL\xba\xbe";

const OFF_VERSION: usize = 6;
const OFF_HDR_SIZE: usize = 8;
const OFF_SEQID: usize = 16;
const OFF_LABEL: usize = 24;
const OFF_CSUM_ALG: usize = 72;
const OFF_SALT: usize = 104;
const OFF_UUID: usize = 168;
const OFF_SUBSYSTEM: usize = 208;
const OFF_HDR_OFFSET: usize = 256;
pub(crate) const OFF_CSUM: usize = 448;
const LABEL_LEN: usize = 48;
const CSUM_ALG_LEN: usize = 32;
const UUID_LEN: usize = 40;
const SUBSYSTEM_LEN: usize = 48;

/// The fields of one binary header.
///
/// ```
/// use mdu_luks2::BinaryHeader;
/// let mut h = BinaryHeader::new(16384, "1b4e28ba-2fa1-11d2-883f-0016d3cca427");
/// h.label = "backup".into();
/// let bytes = h.to_bytes()?;
/// let back = BinaryHeader::parse(&bytes, 0)?;
/// assert_eq!(back, h);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryHeader {
    /// Whether this is the secondary copy (magic `SKUL\xba\xbe`).
    pub secondary: bool,
    /// Binary header + JSON area, bytes.
    pub hdr_size: u64,
    /// Sequence id, incremented on every metadata write (`Epoch`).
    pub seqid: u64,
    /// The label (at most 47 bytes).
    pub label: String,
    /// The checksum algorithm (`sha256`).
    pub checksum_alg: String,
    /// A random salt, different in each copy.
    pub salt: [u8; 64],
    /// The textual UUID (at most 39 bytes).
    pub uuid: String,
    /// The subsystem (at most 47 bytes).
    pub subsystem: String,
    /// Where this copy lies: 0 for the primary, `hdr_size` for the secondary.
    pub hdr_offset: u64,
    /// The stored checksum (SHA-256 in the first 32 bytes).
    pub csum: [u8; 64],
}

impl BinaryHeader {
    /// A primary header of `hdr_size` bytes with `uuid`, seqid 1, no label
    /// or subsystem, zero salt and checksum.
    ///
    /// ```
    /// let h = mdu_luks2::BinaryHeader::new(16384, "u");
    /// assert_eq!((h.seqid, h.hdr_offset, h.secondary), (1, 0, false));
    /// ```
    pub fn new(hdr_size: u64, uuid: &str) -> BinaryHeader {
        BinaryHeader {
            secondary: false,
            hdr_size,
            seqid: 1,
            label: String::new(),
            checksum_alg: "sha256".into(),
            salt: [0; 64],
            uuid: uuid.into(),
            subsystem: String::new(),
            hdr_offset: 0,
            csum: [0; 64],
        }
    }

    /// Parses the binary header `bytes` (at least 4096 bytes) found at
    /// image offset `offset`: magic, version 2, a valid `hdr_size`, text
    /// fields. The checksum is not checked here (it covers the JSON area
    /// too; [`Image::load`](crate::Image::load) checks it).
    ///
    /// ```
    /// use mdu_luks2::{BinaryHeader, Error};
    /// let err = BinaryHeader::parse(&[0u8; 4096], 0).unwrap_err();
    /// assert!(matches!(err, Error::BadMagic { offset: 0 }));
    /// ```
    pub fn parse(bytes: &[u8], offset: u64) -> Result<BinaryHeader, Error> {
        if bytes.len() < BINARY_HEADER_LEN {
            return Err(Error::Truncated {
                what: "binary header",
                offset,
                len: BINARY_HEADER_LEN as u64,
                image_len: offset + bytes.len() as u64,
            });
        }
        let secondary = match &bytes[..6] {
            m if m == MAGIC_PRIMARY => false,
            m if m == MAGIC_SECONDARY => true,
            _ => return Err(Error::BadMagic { offset }),
        };
        let version = u16::from_be_bytes([bytes[OFF_VERSION], bytes[OFF_VERSION + 1]]);
        if version != 2 {
            return Err(Error::UnsupportedVersion { offset, version });
        }
        let be64 = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[at..at + 8]);
            u64::from_be_bytes(b)
        };
        let hdr_size = be64(OFF_HDR_SIZE);
        if !HEADER_SIZES.contains(&hdr_size) {
            return Err(Error::HeaderSize {
                offset,
                size: hdr_size,
            });
        }
        let hdr_offset = be64(OFF_HDR_OFFSET);
        if hdr_offset != offset {
            return Err(Error::HeaderOffset {
                offset,
                found: hdr_offset,
            });
        }
        let text = |at: usize, len: usize, field: &'static str| -> Result<String, Error> {
            let raw = &bytes[at..at + len];
            let end = raw
                .iter()
                .position(|&b| b == 0)
                .ok_or(Error::HeaderText { offset, field })?;
            std::str::from_utf8(&raw[..end])
                .map(str::to_owned)
                .map_err(|_| Error::HeaderText { offset, field })
        };
        let mut salt = [0u8; 64];
        salt.copy_from_slice(&bytes[OFF_SALT..OFF_SALT + 64]);
        let mut csum = [0u8; 64];
        csum.copy_from_slice(&bytes[OFF_CSUM..OFF_CSUM + 64]);
        Ok(BinaryHeader {
            secondary,
            hdr_size,
            seqid: be64(OFF_SEQID),
            label: text(OFF_LABEL, LABEL_LEN, "label")?,
            checksum_alg: text(OFF_CSUM_ALG, CSUM_ALG_LEN, "checksum_alg")?,
            salt,
            uuid: text(OFF_UUID, UUID_LEN, "uuid")?,
            subsystem: text(OFF_SUBSYSTEM, SUBSYSTEM_LEN, "subsystem")?,
            hdr_offset,
            csum,
        })
    }

    /// The 4096 bytes of this header (with its `csum` field as it is).
    /// A text field too long for its slot (it needs a NUL) is a
    /// [`Error::Params`].
    ///
    /// ```
    /// let mut h = mdu_luks2::BinaryHeader::new(16384, "u");
    /// h.label = "x".repeat(48);
    /// assert!(h.to_bytes().is_err());
    /// ```
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut b = vec![0u8; BINARY_HEADER_LEN];
        b[..6].copy_from_slice(if self.secondary {
            &MAGIC_SECONDARY
        } else {
            &MAGIC_PRIMARY
        });
        b[OFF_VERSION..OFF_VERSION + 2].copy_from_slice(&2u16.to_be_bytes());
        b[OFF_HDR_SIZE..OFF_HDR_SIZE + 8].copy_from_slice(&self.hdr_size.to_be_bytes());
        b[OFF_SEQID..OFF_SEQID + 8].copy_from_slice(&self.seqid.to_be_bytes());
        let mut put = |at: usize, len: usize, s: &str, field: &str| {
            if s.len() >= len || s.as_bytes().contains(&0) {
                return Err(Error::Params {
                    problem: format!(
                        "the {field} {s:?} does not fit: at most {} bytes, no NUL",
                        len - 1
                    ),
                });
            }
            b[at..at + s.len()].copy_from_slice(s.as_bytes());
            Ok(())
        };
        put(OFF_LABEL, LABEL_LEN, &self.label, "label")?;
        put(
            OFF_CSUM_ALG,
            CSUM_ALG_LEN,
            &self.checksum_alg,
            "checksum algorithm",
        )?;
        put(OFF_UUID, UUID_LEN, &self.uuid, "UUID")?;
        put(OFF_SUBSYSTEM, SUBSYSTEM_LEN, &self.subsystem, "subsystem")?;
        b[OFF_SALT..OFF_SALT + 64].copy_from_slice(&self.salt);
        b[OFF_HDR_OFFSET..OFF_HDR_OFFSET + 8].copy_from_slice(&self.hdr_offset.to_be_bytes());
        b[OFF_CSUM..OFF_CSUM + 64].copy_from_slice(&self.csum);
        Ok(b)
    }
}

/// The SHA-256 checksum of a whole header copy (`hdr_size` bytes), computed
/// with the csum field taken as zeros.
///
/// ```
/// let copy = vec![0u8; 16384];
/// let a = mdu_luks2::header_checksum(&copy);
/// let mut other = copy.clone();
/// other[448] = 0xff; // inside the csum field: ignored
/// assert_eq!(mdu_luks2::header_checksum(&other), a);
/// ```
pub fn header_checksum(copy: &[u8]) -> [u8; 32] {
    if copy.len() < OFF_CSUM + 64 {
        return sha256(&[copy]);
    }
    sha256(&[&copy[..OFF_CSUM], &[0u8; 64], &copy[OFF_CSUM + 64..]])
}

/// Writes the checksum of `copy` into its csum field.
pub(crate) fn seal(copy: &mut [u8]) {
    let sum = header_checksum(copy);
    copy[OFF_CSUM..OFF_CSUM + 64].fill(0);
    copy[OFF_CSUM..OFF_CSUM + 32].copy_from_slice(&sum);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bad_field_is_its_own_error() {
        let good = BinaryHeader::new(16384, "abc").to_bytes().unwrap();
        assert!(BinaryHeader::parse(&good, 0).is_ok());
        let mut b = good.clone();
        b[6..8].copy_from_slice(&1u16.to_be_bytes());
        assert!(matches!(
            BinaryHeader::parse(&b, 0),
            Err(Error::UnsupportedVersion { version: 1, .. })
        ));
        let mut b = good.clone();
        b[8..16].copy_from_slice(&20000u64.to_be_bytes());
        assert!(matches!(
            BinaryHeader::parse(&b, 0),
            Err(Error::HeaderSize { size: 20000, .. })
        ));
        assert!(matches!(
            BinaryHeader::parse(&good, 16384),
            Err(Error::HeaderOffset { found: 0, .. })
        ));
        let mut b = good.clone();
        b[OFF_UUID..OFF_UUID + UUID_LEN].fill(b'a');
        assert!(matches!(
            BinaryHeader::parse(&b, 0),
            Err(Error::HeaderText { field: "uuid", .. })
        ));
        let mut b = good.clone();
        b[OFF_LABEL] = 0xff;
        assert!(matches!(
            BinaryHeader::parse(&b, 0),
            Err(Error::HeaderText { field: "label", .. })
        ));
        assert!(matches!(
            BinaryHeader::parse(&good[..4095], 0),
            Err(Error::Truncated { .. })
        ));
        let mut b = good;
        b[0] = b'X';
        assert!(matches!(
            BinaryHeader::parse(&b, 0),
            Err(Error::BadMagic { offset: 0 })
        ));
    }

    #[test]
    fn the_checksum_covers_everything_but_its_field() {
        let mut copy = vec![0u8; 16384];
        copy[..4096].copy_from_slice(&BinaryHeader::new(16384, "u").to_bytes().unwrap());
        copy[4096] = b'{';
        seal(&mut copy);
        let stored = copy[OFF_CSUM..OFF_CSUM + 32].to_vec();
        assert_eq!(header_checksum(&copy)[..], stored[..]);
        assert!(copy[OFF_CSUM + 32..OFF_CSUM + 64].iter().all(|&b| b == 0));
        for at in [0, 100, 447, 512, 4096, 16383] {
            let mut c = copy.clone();
            c[at] ^= 1;
            assert_ne!(header_checksum(&c)[..], stored[..], "byte {at}");
        }
    }
}
