//! fscrypt no-key file names.
//!
//! Without the key, fscrypt shows each encrypted directory entry as the
//! base64url (no padding, [`mdu_base64::URL_SAFE_NO_PAD`]) encoding of a
//! `struct fscrypt_nokey_name`:
//!
//! ```text
//! offset  size  field
//!      0     4  dirhash     (little-endian u32; zero when unused)
//!      4     4  minor_hash  (little-endian u32; zero when unused)
//!      8   149  bytes       first min(L, 149) bytes of the ciphertext name
//!    157    32  sha256      SHA-256 of ciphertext bytes 149.. (only if L > 149)
//! ```
//!
//! Only a prefix is encoded: `8 + L` bytes when the ciphertext length `L` is
//! at most 149, otherwise all [`NOKEY_NAME_MAX`] = 189 bytes, which encode to
//! at most [`NOKEY_NAME_MAX_ENCODED`] = 252 symbols (within `NAME_MAX`, 255).
//! A lookup accepts a name of at most 252 bytes whose decoded length is
//! 9..=157 or exactly 189. (The kernel stores the hashes in CPU byte order;
//! this module uses little-endian, the order on x86 and arm64.)
//!
//! The ciphertext tail of a long name is hashed with SHA-256 (RustCrypto's
//! `sha2`).
//!
//! ```
//! use mdu_fscrypt::nokey::{self, NoKeyName};
//!
//! let ciphertext = [0x5au8; 32];
//! let name = NoKeyName::new(0x1234_5678, 0, &ciphertext)?;
//! let text = name.encode();
//! assert_eq!(text.len(), 54); // ceil(4 * (8 + 32) / 3)
//! let back = nokey::decode(text.as_bytes())?;
//! assert_eq!(back, name);
//! assert_eq!(back.ciphertext_prefix(), &ciphertext);
//! # Ok::<(), nokey::NoKeyError>(())
//! ```

use alloc::string::String;
use core::fmt;

use mdu_base64::{DecodeError, EncodeError, URL_SAFE_NO_PAD};
use sha2::{Digest, Sha256};

/// Size of the whole `struct fscrypt_nokey_name` (`FSCRYPT_NOKEY_NAME_MAX`).
pub const NOKEY_NAME_MAX: usize = 189;
/// Longest encoded no-key name, `ceil(4 * 189 / 3)`.
pub const NOKEY_NAME_MAX_ENCODED: usize = 252;
/// Ciphertext bytes kept verbatim in a no-key name.
pub const BYTES_MAX: usize = 149;
/// Longest file name (`NAME_MAX`), so the longest ciphertext name.
pub const NAME_MAX: usize = 255;
/// Offset of `bytes` (after the two hashes).
const HASHES: usize = 8;
/// Offset of `sha256`, one past the end of `bytes`.
const SHA_OFFSET: usize = HASHES + BYTES_MAX;

/// Why a no-key name could not be built, encoded or decoded.
///
/// ```
/// use mdu_fscrypt::nokey::{self, NoKeyError};
///
/// assert_eq!(nokey::decode(&[b'A'; 253]), Err(NoKeyError::NameTooLong { len: 253 }));
/// assert_eq!(nokey::decode(b"AAAAAAAAAAA"), Err(NoKeyError::DecodedLength { len: 8 }));
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NoKeyError {
    /// The encoded name is longer than [`NOKEY_NAME_MAX_ENCODED`] (252).
    NameTooLong {
        /// Length of the name in bytes.
        len: usize,
    },
    /// The name is not strict unpadded base64url.
    Decode(DecodeError),
    /// The name decodes to a length no no-key name has: it must be 9..=157
    /// (hashes plus 1..=149 ciphertext bytes) or exactly 189.
    DecodedLength {
        /// The decoded length.
        len: usize,
    },
    /// A ciphertext name of this length cannot exist: it must be
    /// 1..=[`NAME_MAX`] (255) bytes.
    CiphertextLength {
        /// The ciphertext length.
        len: usize,
    },
}

impl fmt::Display for NoKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            NoKeyError::NameTooLong { len } => write!(
                f,
                "no-key name of {len} bytes is too long: at most {NOKEY_NAME_MAX_ENCODED}"
            ),
            NoKeyError::Decode(e) => write!(f, "no-key name is not unpadded base64url: {e}"),
            NoKeyError::DecodedLength { len } => write!(
                f,
                "no-key name decodes to {len} bytes: must be 9..=157 or exactly {NOKEY_NAME_MAX}"
            ),
            NoKeyError::CiphertextLength { len } => write!(
                f,
                "ciphertext name of {len} bytes: must be 1..={NAME_MAX} bytes"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for NoKeyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NoKeyError::Decode(e) => Some(e),
            _ => None,
        }
    }
}

impl From<DecodeError> for NoKeyError {
    fn from(e: DecodeError) -> NoKeyError {
        NoKeyError::Decode(e)
    }
}

/// Whether `n` is the decoded length of some no-key name.
///
/// ```
/// use mdu_fscrypt::nokey::is_valid_decoded_len;
/// assert!(!is_valid_decoded_len(8));
/// assert!(is_valid_decoded_len(9) && is_valid_decoded_len(157) && is_valid_decoded_len(189));
/// assert!(!is_valid_decoded_len(158) && !is_valid_decoded_len(188));
/// ```
pub const fn is_valid_decoded_len(n: usize) -> bool {
    (n > HASHES && n <= SHA_OFFSET) || n == NOKEY_NAME_MAX
}

/// A parsed `struct fscrypt_nokey_name` (the encoded prefix of it).
///
/// ```
/// use mdu_fscrypt::nokey::NoKeyName;
///
/// // A 152-byte ciphertext name: 149 bytes kept, the last 3 hashed.
/// let mut ct = [7u8; 152];
/// ct[149..].copy_from_slice(b"abc");
/// let name = NoKeyName::new(1, 2, &ct)?;
/// assert_eq!(name.encode().len(), 252);
/// // SHA-256("abc") = ba7816bf...
/// assert_eq!(name.sha256().map(|d| &d[..4]), Some(&[0xba, 0x78, 0x16, 0xbf][..]));
/// assert!(name.matches(&ct));
/// assert!(!name.matches(&ct[..151]));
/// # Ok::<(), mdu_fscrypt::nokey::NoKeyError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct NoKeyName {
    raw: [u8; NOKEY_NAME_MAX],
    /// Encoded prefix length: 9..=157 or 189.
    len: u8,
}

impl fmt::Debug for NoKeyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NoKeyName")
            .field("dirhash", &self.dirhash())
            .field("minor_hash", &self.minor_hash())
            .field("ciphertext_prefix", &self.ciphertext_prefix())
            .field("sha256", &self.sha256())
            .finish()
    }
}

impl NoKeyName {
    /// The no-key name of `ciphertext` (1..=255 bytes) with the given hashes
    /// (zeros when the filesystem does not use them). For a name longer than
    /// 149 bytes, SHA-256 of `ciphertext[149..]` takes the place of the rest.
    ///
    /// ```
    /// use mdu_fscrypt::nokey::{NoKeyError, NoKeyName};
    ///
    /// let n = NoKeyName::new(0, 0, b"0123456789abcdef")?;
    /// assert_eq!(n.as_bytes().len(), 24);
    /// assert_eq!(NoKeyName::new(0, 0, b""), Err(NoKeyError::CiphertextLength { len: 0 }));
    /// # Ok::<(), NoKeyError>(())
    /// ```
    pub fn new(dirhash: u32, minor_hash: u32, ciphertext: &[u8]) -> Result<NoKeyName, NoKeyError> {
        let l = ciphertext.len();
        if l == 0 || l > NAME_MAX {
            return Err(NoKeyError::CiphertextLength { len: l });
        }
        Ok(NoKeyName::build(dirhash, minor_hash, ciphertext))
    }

    /// The no-key form of an encrypted symlink's target (`readlink`
    /// without the key): zero hashes, and a ciphertext of any length up to
    /// the block size (not only a name's 255 bytes).
    ///
    /// ```
    /// use mdu_fscrypt::nokey::{NoKeyError, NoKeyName};
    ///
    /// let target = [0x42u8; 4093];
    /// assert_eq!(NoKeyName::symlink(&target)?.encode().len(), 252);
    /// assert_eq!(NoKeyName::symlink(b""), Err(NoKeyError::CiphertextLength { len: 0 }));
    /// # Ok::<(), NoKeyError>(())
    /// ```
    pub fn symlink(ciphertext: &[u8]) -> Result<NoKeyName, NoKeyError> {
        if ciphertext.is_empty() {
            return Err(NoKeyError::CiphertextLength { len: 0 });
        }
        Ok(NoKeyName::build(0, 0, ciphertext))
    }

    fn build(dirhash: u32, minor_hash: u32, ciphertext: &[u8]) -> NoKeyName {
        let l = ciphertext.len();
        let mut raw = [0u8; NOKEY_NAME_MAX];
        raw[..4].copy_from_slice(&dirhash.to_le_bytes());
        raw[4..HASHES].copy_from_slice(&minor_hash.to_le_bytes());
        let kept = l.min(BYTES_MAX);
        raw[HASHES..HASHES + kept].copy_from_slice(&ciphertext[..kept]);
        let len = if l > BYTES_MAX {
            raw[SHA_OFFSET..].copy_from_slice(&sha256(&ciphertext[BYTES_MAX..]));
            NOKEY_NAME_MAX
        } else {
            HASHES + l
        };
        NoKeyName {
            raw,
            len: len as u8,
        }
    }

    /// Parses the decoded bytes of a no-key name (length 9..=157 or 189).
    ///
    /// ```
    /// use mdu_fscrypt::nokey::{NoKeyError, NoKeyName};
    ///
    /// let n = NoKeyName::from_bytes(&[1, 0, 0, 0, 2, 0, 0, 0, 0xee])?;
    /// assert_eq!((n.dirhash(), n.minor_hash(), n.ciphertext_prefix()), (1, 2, &[0xee][..]));
    /// assert_eq!(NoKeyName::from_bytes(&[0; 160]), Err(NoKeyError::DecodedLength { len: 160 }));
    /// # Ok::<(), NoKeyError>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<NoKeyName, NoKeyError> {
        let len = bytes.len();
        if !is_valid_decoded_len(len) {
            return Err(NoKeyError::DecodedLength { len });
        }
        let mut raw = [0u8; NOKEY_NAME_MAX];
        raw[..len].copy_from_slice(bytes);
        Ok(NoKeyName {
            raw,
            len: len as u8,
        })
    }

    /// The bytes that are encoded: the struct prefix of 9..=157 or 189 bytes.
    ///
    /// ```
    /// let n = mdu_fscrypt::nokey::NoKeyName::new(0, 0, &[9; 20]).unwrap();
    /// assert_eq!(n.as_bytes().len(), 28);
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        &self.raw[..usize::from(self.len)]
    }

    /// The directory hash (first `u32`).
    ///
    /// ```
    /// let n = mdu_fscrypt::nokey::NoKeyName::new(7, 0, &[1]).unwrap();
    /// assert_eq!(n.dirhash(), 7);
    /// ```
    pub fn dirhash(&self) -> u32 {
        u32::from_le_bytes([self.raw[0], self.raw[1], self.raw[2], self.raw[3]])
    }

    /// The minor hash (second `u32`).
    ///
    /// ```
    /// let n = mdu_fscrypt::nokey::NoKeyName::new(0, 9, &[1]).unwrap();
    /// assert_eq!(n.minor_hash(), 9);
    /// ```
    pub fn minor_hash(&self) -> u32 {
        u32::from_le_bytes([self.raw[4], self.raw[5], self.raw[6], self.raw[7]])
    }

    /// The ciphertext bytes kept verbatim: the whole ciphertext name if it
    /// is at most 149 bytes, else its first 149 bytes.
    ///
    /// ```
    /// let n = mdu_fscrypt::nokey::NoKeyName::new(0, 0, &[3; 150]).unwrap();
    /// assert_eq!(n.ciphertext_prefix(), &[3; 149]);
    /// ```
    pub fn ciphertext_prefix(&self) -> &[u8] {
        let end = usize::from(self.len).min(SHA_OFFSET);
        &self.raw[HASHES..end]
    }

    /// SHA-256 of the ciphertext past byte 149, for long names only.
    ///
    /// ```
    /// let n = mdu_fscrypt::nokey::NoKeyName::new(0, 0, &[3; 149]).unwrap();
    /// assert_eq!(n.sha256(), None);
    /// ```
    pub fn sha256(&self) -> Option<&[u8; 32]> {
        if usize::from(self.len) == NOKEY_NAME_MAX {
            self.raw[SHA_OFFSET..].first_chunk::<32>()
        } else {
            None
        }
    }

    /// Whether a directory entry's ciphertext name is the one this no-key
    /// name stands for (the hashes are not compared). For a long name the
    /// entry must be longer than 149 bytes, agree on the first 149, and
    /// SHA-256 of its remaining bytes must equal [`sha256`](Self::sha256).
    ///
    /// ```
    /// let n = mdu_fscrypt::nokey::NoKeyName::new(0, 0, b"0123456789abcdef").unwrap();
    /// assert!(n.matches(b"0123456789abcdef"));
    /// assert!(!n.matches(b"0123456789abcdeF"));
    /// ```
    pub fn matches(&self, ciphertext: &[u8]) -> bool {
        match self.sha256() {
            None => ciphertext == self.ciphertext_prefix(),
            Some(digest) => {
                ciphertext.len() > BYTES_MAX
                    && ciphertext[..BYTES_MAX] == *self.ciphertext_prefix()
                    && sha256(&ciphertext[BYTES_MAX..]) == *digest
            }
        }
    }

    /// The no-key name as shown without the key (base64url, no padding; at
    /// most 252 symbols).
    ///
    /// ```
    /// let n = mdu_fscrypt::nokey::NoKeyName::new(0, 0, &[0xff; 4]).unwrap();
    /// assert_eq!(n.encode(), "AAAAAAAAAAD_____");
    /// ```
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode_to_string(self.as_bytes())
    }

    /// Writes the no-key name into `dst` (room for [`NOKEY_NAME_MAX_ENCODED`]
    /// is always enough) and returns its length; on error nothing is written.
    ///
    /// ```
    /// let n = mdu_fscrypt::nokey::NoKeyName::new(0, 0, &[0xff; 4]).unwrap();
    /// let mut buf = [0u8; 252];
    /// let len = n.encode_slice(&mut buf).unwrap();
    /// assert_eq!(&buf[..len], b"AAAAAAAAAAD_____");
    /// ```
    pub fn encode_slice(&self, dst: &mut [u8]) -> Result<usize, EncodeError> {
        URL_SAFE_NO_PAD.encode_slice(self.as_bytes(), dst)
    }
}

/// Encodes the raw bytes of a no-key name (9..=157 or 189 bytes), checking
/// the length rule first.
///
/// ```
/// use mdu_fscrypt::nokey::{self, NoKeyError};
///
/// assert_eq!(nokey::encode(&[0; 9])?, "AAAAAAAAAAAA");
/// assert_eq!(nokey::encode(&[0; 8]), Err(NoKeyError::DecodedLength { len: 8 }));
/// # Ok::<(), NoKeyError>(())
/// ```
pub fn encode(raw: &[u8]) -> Result<String, NoKeyError> {
    Ok(NoKeyName::from_bytes(raw)?.encode())
}

/// Decodes a no-key name as a lookup without the key does: at most 252
/// bytes, strict unpadded base64url, decoded length 9..=157 or 189.
///
/// The fscrypt decoder of 2021-2025 also accepted a lone trailing `A` (a
/// symbol count of 1 mod 4); this one, like the kernel's generic decoder,
/// rejects it.
///
/// ```
/// use mdu_fscrypt::DecodeError;
/// use mdu_fscrypt::nokey::{self, NoKeyError};
///
/// let n = nokey::decode(b"AQAAAAIAAADu")?;
/// assert_eq!(n.as_bytes(), &[1, 0, 0, 0, 2, 0, 0, 0, 0xee]);
/// assert_eq!(
///     nokey::decode(b"AQAAAAIAAADuA"),
///     Err(NoKeyError::Decode(DecodeError::InvalidLength { len: 13 }))
/// );
/// # Ok::<(), NoKeyError>(())
/// ```
pub fn decode(name: &[u8]) -> Result<NoKeyName, NoKeyError> {
    if name.len() > NOKEY_NAME_MAX_ENCODED {
        return Err(NoKeyError::NameTooLong { len: name.len() });
    }
    let mut raw = [0u8; NOKEY_NAME_MAX];
    let len = URL_SAFE_NO_PAD.decode_slice(name, &mut raw)?;
    if !is_valid_decoded_len(len) {
        return Err(NoKeyError::DecodedLength { len });
    }
    Ok(NoKeyName {
        raw,
        len: len as u8,
    })
}

/// SHA-256 of the ciphertext past byte 149.
fn sha256(tail: &[u8]) -> [u8; 32] {
    Sha256::digest(tail).into()
}
