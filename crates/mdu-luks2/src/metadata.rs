//! The JSON metadata: keyslots, tokens, segments, digests and config, read
//! with a typed error for every bad field and written exactly as
//! cryptsetup 2.6 writes it (key order, 64-bit numbers as strings, compact).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mdu_dmcrypt::{CipherSpec, DmCryptError};
use serde_json::{Map, Value};

use crate::Luks2Error;
use crate::header::BINARY_HEADER_LEN;
use crate::image::AF_STRIPES;
use crate::kdf::{ARGON2_MAX_MEMORY_KIB, Argon2Variant, Hash, Kdf};

/// Largest keyslots area LUKS2 allows (128 MiB).
///
/// ```
/// assert_eq!(mdu_luks2::MAX_KEYSLOTS_SIZE, 128 << 20);
/// ```
pub const MAX_KEYSLOTS_SIZE: u64 = 128 << 20;

/// Keyslot ids run below this (cryptsetup's limit): a header cannot make an
/// unlock run more key derivations.
///
/// ```
/// assert_eq!(mdu_luks2::MAX_KEYSLOTS, 32);
/// ```
pub const MAX_KEYSLOTS: u32 = 32;

/// Largest key (volume key or keyslot area key) accepted, in bytes.
const MAX_KEY_BYTES: u32 = 512;
/// Shortest volume-key digest accepted (LUKS1's digest size).
const MIN_DIGEST_BYTES: usize = 20;

/// Parsed and validated LUKS2 JSON metadata.
///
/// ```
/// use mdu_luks2::Metadata;
/// let text = r#"{"keyslots":{},"tokens":{},"segments":{},"digests":{},"config":{"json_size":"12288","keyslots_size":"16744448"}}"#;
/// let m = Metadata::parse(text, 16384)?;
/// assert_eq!(m.config.keyslots_size, 16744448);
/// assert_eq!(m.to_json(), text);
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    /// The `luks2` keyslots by id.
    pub keyslots: BTreeMap<u32, Keyslot>,
    /// The `reencrypt` keyslot of a reencryption in progress, if any (at
    /// most one; its id is not among [`keyslots`](Self::keyslots)).
    pub reencrypt: Option<ReencryptKeyslot>,
    /// Tokens, kept as JSON (mdu does not use them).
    pub tokens: Map<String, Value>,
    /// Data segments by id.
    pub segments: BTreeMap<u32, Segment>,
    /// Volume-key digests by id.
    pub digests: BTreeMap<u32, Digest>,
    /// The `config` object.
    pub config: Config,
}

/// A keyslot of type `luks2`: a KDF, the AF splitter and an encrypted area.
///
/// ```
/// # let text = include_str!("../tests/data/pbkdf2.json");
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// let ks = &m.keyslots[&0];
/// assert_eq!((ks.key_size, ks.af_stripes, ks.area.offset), (64, 4000, 32768));
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keyslot {
    /// Volume key size in bytes.
    pub key_size: u32,
    /// `af.stripes` as written: any JSON integer. cryptsetup 2.6 splits and
    /// merges with 4000 stripes ([`AF_STRIPES`](crate::AF_STRIPES))
    /// whatever this says, and so does this crate.
    pub af_stripes: i64,
    /// AF hash.
    pub af_hash: Hash,
    /// The encrypted area.
    pub area: KeyslotArea,
    /// The key derivation.
    pub kdf: Kdf,
    /// `priority`: 0 ignore, 1 normal (absent), 2 high; any other integer
    /// is kept, and such a keyslot, like one of priority 0, is tried only
    /// when it is named (cryptsetup tries priorities 2 and 1 only).
    pub priority: Option<i64>,
}

/// The `raw` area of a keyslot in the keyslots area.
///
/// ```
/// # let text = include_str!("../tests/data/pbkdf2.json");
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// assert_eq!(m.keyslots[&0].area.encryption.as_str(), "aes-xts-plain64");
/// assert_eq!(m.keyslots[&0].area.encryption.spec()?.to_string(), "aes-xts-plain64");
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyslotArea {
    /// Offset from the start of the image, bytes.
    pub offset: u64,
    /// Size, bytes.
    pub size: u64,
    /// Cipher spec of the area, parsed when the JSON was read.
    pub encryption: Encryption,
    /// Key size of the area cipher in bytes (the KDF output length).
    pub key_size: u32,
}

/// The `encryption` of a keyslot area or a segment: the cipher spec as the
/// JSON text names it, parsed once when the metadata are read.
///
/// A spec this crate does not run (`serpent-xts-plain64`,
/// `aes-xts-random`) does not stop the metadata from loading, as
/// cryptsetup loads and dumps such a header: the parse error is kept and
/// becomes [`Luks2Error::UnsupportedCipher`], naming the field, when the
/// keyslot or segment is used. The text is kept as written (case included),
/// so [`Metadata::to_json`] gives back the same bytes.
///
/// ```
/// use mdu_luks2::{CipherSpec, Encryption};
/// let e = Encryption::parse("aes-xts-plain64");
/// assert_eq!(e.spec()?, "aes-xts-plain64".parse::<CipherSpec>()?);
/// let odd = Encryption::parse("serpent-xts-plain64");
/// assert_eq!(odd.as_str(), "serpent-xts-plain64");
/// assert!(odd.spec().is_err());
/// assert_eq!(Encryption::from("aes-cbc-essiv:sha256".parse::<CipherSpec>()?).as_str(), "aes-cbc-essiv:sha256");
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encryption {
    text: String,
    spec: Result<CipherSpec, DmCryptError>,
}

impl Encryption {
    /// The spec `text` as a header holds it, parsed ([`CipherSpec::parse`]);
    /// a refusal is kept for [`spec`](Self::spec).
    ///
    /// ```
    /// let e = mdu_luks2::Encryption::parse("AES-xts-plain64");
    /// assert_eq!(e.as_str(), "AES-xts-plain64");
    /// assert_eq!(e.spec()?.to_string(), "aes-xts-plain64");
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn parse(text: &str) -> Encryption {
        Encryption {
            text: text.to_owned(),
            spec: CipherSpec::parse(text),
        }
    }

    /// The text as written in the JSON.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::Encryption::parse("aes-cbc-plain").as_str(), "aes-cbc-plain");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed spec.
    ///
    /// # Errors
    ///
    /// Why the spec is not one this crate runs ([`DmCryptError::UnsupportedCipher`]
    /// or [`DmCryptError::UnknownIvMode`], listing what is supported).
    ///
    /// ```
    /// use mdu_luks2::Encryption;
    /// assert!(Encryption::parse("aes-xts-plain64").spec().is_ok());
    /// let err = Encryption::parse("aes-xts-elephant").spec().unwrap_err();
    /// assert!(err.to_string().contains("plain64"), "{err}");
    /// ```
    pub fn spec(&self) -> Result<CipherSpec, DmCryptError> {
        self.spec.clone()
    }

    /// The parsed spec, or [`Luks2Error::UnsupportedCipher`] naming `field`
    /// (`segments.0.encryption`).
    pub(crate) fn spec_of(&self, field: impl FnOnce() -> String) -> Result<CipherSpec, Luks2Error> {
        self.spec
            .clone()
            .map_err(|error| Luks2Error::UnsupportedCipher {
                field: field(),
                error,
            })
    }
}

impl From<CipherSpec> for Encryption {
    /// The spec, written as [`CipherSpec`]'s `Display` writes it.
    fn from(spec: CipherSpec) -> Encryption {
        Encryption {
            text: spec.to_string(),
            spec: Ok(spec),
        }
    }
}

impl std::fmt::Display for Encryption {
    /// The text as written.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// A data segment of type `crypt`.
///
/// ```
/// # let text = include_str!("../tests/data/pbkdf2.json");
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// let s = &m.segments[&0];
/// assert_eq!((s.offset, s.size, s.sector_size), (16777216, None, 4096));
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// `crypt` or `linear`.
    pub kind: SegmentKind,
    /// Data start, bytes from the image start.
    pub offset: u64,
    /// Length in bytes, `None` for `dynamic` (to the end of the image).
    pub size: Option<u64>,
    /// IV tweak (written as 0; cryptsetup 2.6 ignores it for one segment).
    pub iv_tweak: u64,
    /// Cipher spec, parsed when the JSON was read.
    pub encryption: Encryption,
    /// Encryption sector size in bytes.
    pub sector_size: u32,
    /// `flags` (`backup-previous`, `backup-final`, ... during a
    /// reencryption), empty when absent.
    pub flags: Vec<String>,
}

/// What a segment maps.
///
/// ```
/// use mdu_luks2::SegmentKind;
/// assert_eq!(SegmentKind::Linear.name(), "linear");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// `crypt`: ciphertext under the segment's `encryption`, `sector_size`
    /// and `iv_tweak`.
    Crypt,
    /// `linear`: plaintext mapped as it is: the part not yet encrypted (or
    /// already decrypted) of a conversion in place, or a whole volume after
    /// a decryption. Its `encryption` is empty, its `iv_tweak` 0 and its
    /// `sector_size` 512; none of them is written.
    Linear,
}

impl SegmentKind {
    /// The JSON `type`.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::SegmentKind::Crypt.name(), "crypt");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            SegmentKind::Crypt => "crypt",
            SegmentKind::Linear => "linear",
        }
    }
}

impl Segment {
    /// A `linear` segment of `size` bytes (`None`: dynamic) at `offset`.
    ///
    /// ```
    /// let s = mdu_luks2::Segment::linear(0, None);
    /// assert!(!s.is_crypt());
    /// ```
    pub fn linear(offset: u64, size: Option<u64>) -> Segment {
        Segment {
            kind: SegmentKind::Linear,
            offset,
            size,
            iv_tweak: 0,
            encryption: Encryption::parse(""),
            sector_size: 512,
            flags: Vec::new(),
        }
    }

    /// A `crypt` segment.
    ///
    /// ```
    /// let spec = "aes-xts-plain64".parse().unwrap();
    /// let s = mdu_luks2::Segment::crypt(1 << 24, None, 0, spec, 4096);
    /// assert!(s.is_crypt());
    /// ```
    pub fn crypt(
        offset: u64,
        size: Option<u64>,
        iv_tweak: u64,
        spec: CipherSpec,
        sector_size: u32,
    ) -> Segment {
        Segment {
            kind: SegmentKind::Crypt,
            offset,
            size,
            iv_tweak,
            encryption: Encryption::from(spec),
            sector_size,
            flags: Vec::new(),
        }
    }

    /// Whether it is a `crypt` segment.
    ///
    /// ```
    /// # let text = include_str!("../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert!(m.segments[&0].is_crypt());
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn is_crypt(&self) -> bool {
        self.kind == SegmentKind::Crypt
    }

    /// Whether it carries `flag` (`in-reencryption`, `backup-final`, ...).
    ///
    /// ```
    /// let mut s = mdu_luks2::Segment::linear(0, None);
    /// s.flags.push("in-reencryption".into());
    /// assert!(s.has_flag("in-reencryption"));
    /// ```
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// Whether a flag marks it a backup segment (`backup-*`): a record of a
    /// reencryption, never the data to read.
    ///
    /// ```
    /// # let text = include_str!("../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// let mut s = m.segments[&0].clone();
    /// assert!(!s.is_backup());
    /// s.flags.push("backup-previous".into());
    /// assert!(s.is_backup());
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn is_backup(&self) -> bool {
        self.flags.iter().any(|f| f.starts_with("backup-"))
    }
}

/// A `pbkdf2` digest of the volume key.
///
/// ```
/// # let text = include_str!("../tests/data/pbkdf2.json");
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// assert_eq!(m.digests[&0].keyslots, vec![0]);
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digest {
    /// The keyslots whose key it checks.
    pub keyslots: Vec<u32>,
    /// The segments that use that key.
    pub segments: Vec<u32>,
    /// The PBKDF2 hash.
    pub hash: Hash,
    /// The PBKDF2 iterations.
    pub iterations: u32,
    /// The salt.
    pub salt: Vec<u8>,
    /// The expected PBKDF2 output.
    pub digest: Vec<u8>,
}

impl Digest {
    /// Whether `key` is the volume key this digest describes (compared in
    /// constant time).
    ///
    /// ```
    /// use mdu_luks2::{Digest, Hash};
    /// let d = Digest::of_key(&[1u8; 32], Hash::Sha256, 1000, vec![2; 32], vec![0], vec![0]);
    /// assert!(d.matches(&[1u8; 32]));
    /// assert!(!d.matches(&[0u8; 32]));
    /// ```
    pub fn matches(&self, key: &[u8]) -> bool {
        let mut out = zeroize::Zeroizing::new(vec![0u8; self.digest.len()]);
        self.hash.pbkdf2(key, &self.salt, self.iterations, &mut out);
        let diff = out
            .iter()
            .zip(&self.digest)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        diff == 0 && !self.digest.is_empty()
    }

    /// The digest of `key` (output as long as the hash, as cryptsetup
    /// writes it).
    ///
    /// ```
    /// use mdu_luks2::{Digest, Hash};
    /// let d = Digest::of_key(&[1u8; 64], Hash::Sha512, 1000, vec![2; 32], vec![0], vec![0]);
    /// assert_eq!(d.digest.len(), 64);
    /// ```
    pub fn of_key(
        key: &[u8],
        hash: Hash,
        iterations: u32,
        salt: Vec<u8>,
        keyslots: Vec<u32>,
        segments: Vec<u32>,
    ) -> Digest {
        let mut digest = vec![0u8; hash.output_len()];
        hash.pbkdf2(key, &salt, iterations, &mut digest);
        Digest {
            keyslots,
            segments,
            hash,
            iterations,
            salt,
            digest,
        }
    }
}

/// The `config` object.
///
/// ```
/// # let text = include_str!("../tests/data/pbkdf2.json");
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// assert_eq!(m.config.json_size, 12288);
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// JSON area size = hdr_size - 4096.
    pub json_size: u64,
    /// Keyslots area size, bytes.
    pub keyslots_size: u64,
    /// Activation flags (`allow-discards`, ...), if any.
    pub flags: Vec<String>,
    /// `requirements.mandatory`: features a reader must have to use the
    /// data (`online-reencrypt-v2` while a reencryption is in progress);
    /// `None` when the object is absent.
    pub requirements: Option<Vec<String>>,
}

impl Config {
    /// The `online-reencrypt*` requirement, if there is one.
    ///
    /// ```
    /// # let text = include_str!("../tests/data/pbkdf2.json");
    /// let mut m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert_eq!(m.config.reencrypt_requirement(), None);
    /// m.config.requirements = Some(vec!["online-reencrypt-v2".into()]);
    /// assert_eq!(m.config.reencrypt_requirement(), Some("online-reencrypt-v2"));
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn reencrypt_requirement(&self) -> Option<&str> {
        self.requirements
            .iter()
            .flatten()
            .find(|r| r.starts_with("online-reencrypt"))
            .map(String::as_str)
    }
}

/// The `reencrypt` keyslot: the record of a reencryption in progress (its
/// mode, direction and resilience), bound to a digest of its own that
/// covers it and the backup segments (see `reencrypt::verify_digest`).
///
/// ```
/// # let text = include_str!("../tests/data/reencrypt-keychange.json");
/// use mdu_luks2::{ReencryptMode, Resilience};
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// let r = m.reencrypt.as_ref().unwrap();
/// assert_eq!((r.id, r.mode, r.area.offset), (2, ReencryptMode::Reencrypt, 548864));
/// assert!(matches!(r.area.resilience, Resilience::Checksum { sector_size: 4096, .. }));
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReencryptKeyslot {
    /// Its id (shared with no `luks2` keyslot).
    pub id: u32,
    /// Its area in the keyslots area: checksums or the journal of the
    /// hotzone, or nothing.
    pub area: ReencryptArea,
    /// What is converted.
    pub mode: ReencryptMode,
    /// Which way the hotzones walk.
    pub direction: ReencryptDirection,
    /// `priority` as written (cryptsetup writes 0).
    pub priority: Option<i64>,
}

/// The area of the `reencrypt` keyslot and how it protects the hotzone.
///
/// ```
/// use mdu_luks2::{Hash, ReencryptArea, Resilience};
/// let a = ReencryptArea { offset: 290816, size: 4096, resilience: Resilience::Datashift { shift: 4 << 20 } };
/// assert_eq!(a.resilience.name(), "datashift");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReencryptArea {
    /// Offset from the start of the header device, bytes.
    pub offset: u64,
    /// Size, bytes.
    pub size: u64,
    /// Its `type` and parameters.
    pub resilience: Resilience,
}

/// How a hotzone survives a crash (the `type` of the `reencrypt` area).
///
/// ```
/// use mdu_luks2::{Hash, Resilience};
/// let r = Resilience::Checksum { hash: Hash::Sha256, sector_size: 4096 };
/// assert_eq!((r.name(), r.shift()), ("checksum", None));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resilience {
    /// Nothing: a crash in the middle loses the hotzone.
    None,
    /// The hash of every old block of the hotzone.
    Checksum {
        /// The hash.
        hash: Hash,
        /// The block size the hashes cover.
        sector_size: u32,
    },
    /// A copy of the old bytes of the hotzone.
    Journal,
    /// The data move by `shift` bytes; the old bytes stay where they were.
    Datashift {
        /// Bytes.
        shift: u64,
    },
    /// A data shift, with the moved segment protected by checksums.
    DatashiftChecksum {
        /// The hash.
        hash: Hash,
        /// The block size the hashes cover.
        sector_size: u32,
        /// Bytes.
        shift: u64,
    },
    /// A data shift, with the moved segment protected by a journal.
    DatashiftJournal {
        /// Bytes.
        shift: u64,
    },
}

impl Resilience {
    /// The JSON `type`.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::Resilience::Journal.name(), "journal");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Resilience::None => "none",
            Resilience::Checksum { .. } => "checksum",
            Resilience::Journal => "journal",
            Resilience::Datashift { .. } => "datashift",
            Resilience::DatashiftChecksum { .. } => "datashift-checksum",
            Resilience::DatashiftJournal { .. } => "datashift-journal",
        }
    }

    /// The data shift, for the `datashift*` types.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::Resilience::DatashiftJournal { shift: 512 }.shift(), Some(512));
    /// ```
    pub const fn shift(self) -> Option<u64> {
        match self {
            Resilience::Datashift { shift }
            | Resilience::DatashiftChecksum { shift, .. }
            | Resilience::DatashiftJournal { shift } => Some(shift),
            _ => None,
        }
    }
}

/// What a reencryption converts.
///
/// ```
/// assert_eq!(mdu_luks2::ReencryptMode::Decrypt.name(), "decrypt");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReencryptMode {
    /// Plaintext to ciphertext.
    Encrypt,
    /// Ciphertext to plaintext.
    Decrypt,
    /// Ciphertext under one key (and cipher) to another.
    Reencrypt,
}

impl ReencryptMode {
    /// The JSON `mode`.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::ReencryptMode::Reencrypt.name(), "reencrypt");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            ReencryptMode::Encrypt => "encrypt",
            ReencryptMode::Decrypt => "decrypt",
            ReencryptMode::Reencrypt => "reencrypt",
        }
    }
}

/// Which way the hotzones of a reencryption walk.
///
/// ```
/// assert_eq!(mdu_luks2::ReencryptDirection::Backward.name(), "backward");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReencryptDirection {
    /// From the start of the data to the end.
    Forward,
    /// From the end to the start.
    Backward,
}

impl ReencryptDirection {
    /// The JSON `direction`.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::ReencryptDirection::Forward.name(), "forward");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            ReencryptDirection::Forward => "forward",
            ReencryptDirection::Backward => "backward",
        }
    }
}

// ---------------------------------------------------------------------------
// Reading

fn obj<'a>(v: &'a Value, field: &str) -> Result<&'a Map<String, Value>, Luks2Error> {
    v.as_object()
        .ok_or_else(|| Luks2Error::schema(field, "a JSON object"))
}

fn get<'a>(o: &'a Map<String, Value>, path: &str, key: &str) -> Result<&'a Value, Luks2Error> {
    o.get(key)
        .ok_or_else(|| Luks2Error::schema(format!("{path}.{key}"), "present"))
}

fn string<'a>(o: &'a Map<String, Value>, path: &str, key: &str) -> Result<&'a str, Luks2Error> {
    get(o, path, key)?
        .as_str()
        .ok_or_else(|| Luks2Error::schema(format!("{path}.{key}"), "a JSON string"))
}

/// A 64-bit number written as a string of decimal digits.
fn u64_str(o: &Map<String, Value>, path: &str, key: &str) -> Result<u64, Luks2Error> {
    let s = string(o, path, key)?;
    parse_u64(s).ok_or_else(|| {
        Luks2Error::schema(
            format!("{path}.{key}"),
            "a string of decimal digits (a 64-bit number)",
        )
    })
}

fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// An id (object key or list entry): decimal digits without a leading
/// zero, below 2^32. cryptsetup looks ids up by that form, so `"00"` is
/// not id 0 to it.
fn parse_id(s: &str) -> Option<u32> {
    if s.len() > 1 && s.starts_with('0') {
        return None;
    }
    parse_u64(s).and_then(|n| u32::try_from(n).ok())
}

/// What an id must look like.
const ID_FORM: &str = "a decimal id without leading zeros (cryptsetup finds ids by that form)";

/// Any JSON integer (as cryptsetup reads `af.stripes` and `priority`).
fn int(o: &Map<String, Value>, path: &str, key: &str) -> Result<i64, Luks2Error> {
    get(o, path, key)?
        .as_i64()
        .ok_or_else(|| Luks2Error::schema(format!("{path}.{key}"), "a JSON integer"))
}

/// A 32-bit number written as a JSON integer.
fn u32_num(o: &Map<String, Value>, path: &str, key: &str) -> Result<u32, Luks2Error> {
    get(o, path, key)?
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| Luks2Error::schema(format!("{path}.{key}"), "a JSON integer in 0..2^32"))
}

fn base64(o: &Map<String, Value>, path: &str, key: &str) -> Result<Vec<u8>, Luks2Error> {
    let s = string(o, path, key)?;
    mdu_base64::STANDARD
        .decode_to_vec(s.as_bytes())
        .ok()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| Luks2Error::schema(format!("{path}.{key}"), "non-empty padded base64"))
}

fn hash(o: &Map<String, Value>, path: &str, key: &str) -> Result<Hash, Luks2Error> {
    let s = string(o, path, key)?;
    Hash::parse(s).ok_or_else(|| Luks2Error::Unsupported {
        field: format!("{path}.{key}"),
        value: s.to_owned(),
    })
}

fn expect_type(o: &Map<String, Value>, path: &str, want: &str) -> Result<(), Luks2Error> {
    let t = string(o, path, "type")?;
    if t != want {
        return Err(Luks2Error::Unsupported {
            field: format!("{path}.type"),
            value: t.to_owned(),
        });
    }
    Ok(())
}

/// One member of an object keyed by id: the id, its path, the object.
type Entry<'a> = (u32, String, &'a Map<String, Value>);

/// An object whose keys are decimal ids.
fn by_id<'a>(root: &'a Map<String, Value>, key: &str) -> Result<Vec<Entry<'a>>, Luks2Error> {
    let o = obj(
        get(root, "", key).map_err(|_| Luks2Error::schema(key, "present"))?,
        key,
    )?;
    let mut out = Vec::with_capacity(o.len());
    for (k, v) in o {
        let path = format!("{key}.{k}");
        let id = parse_id(k).ok_or_else(|| Luks2Error::schema(path.clone(), ID_FORM))?;
        out.push((id, path.clone(), obj(v, &path)?));
    }
    Ok(out)
}

fn id_list(o: &Map<String, Value>, path: &str, key: &str) -> Result<Vec<u32>, Luks2Error> {
    let field = format!("{path}.{key}");
    let a = get(o, path, key)?
        .as_array()
        .ok_or_else(|| Luks2Error::schema(field.clone(), "an array of decimal id strings"))?;
    a.iter()
        .map(|v| {
            v.as_str()
                .and_then(parse_id)
                .ok_or_else(|| Luks2Error::schema(field.clone(), ID_FORM))
        })
        .collect()
}

fn string_list(o: &Map<String, Value>, path: &str, key: &str) -> Result<Vec<String>, Luks2Error> {
    let field = format!("{path}.{key}");
    match o.get(key) {
        None => Ok(Vec::new()),
        Some(v) => v
            .as_array()
            .ok_or_else(|| Luks2Error::schema(field.clone(), "an array of strings"))?
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| Luks2Error::schema(field.clone(), "an array of strings"))
            })
            .collect(),
    }
}

fn parse_kdf(o: &Map<String, Value>, path: &str) -> Result<Kdf, Luks2Error> {
    let t = string(o, path, "type")?;
    let variant = match t {
        "pbkdf2" => {
            return Ok(Kdf::Pbkdf2 {
                hash: hash(o, path, "hash")?,
                iterations: u32_num(o, path, "iterations")?,
                salt: base64(o, path, "salt")?,
            });
        }
        "argon2i" => Argon2Variant::Argon2i,
        "argon2id" => Argon2Variant::Argon2id,
        other => {
            return Err(Luks2Error::Unsupported {
                field: format!("{path}.type"),
                value: other.to_owned(),
            });
        }
    };
    Ok(Kdf::Argon2 {
        variant,
        time: u32_num(o, path, "time")?,
        memory: u32_num(o, path, "memory")?,
        cpus: u32_num(o, path, "cpus")?,
        salt: base64(o, path, "salt")?,
    })
}

fn parse_keyslot(o: &Map<String, Value>, path: &str) -> Result<Keyslot, Luks2Error> {
    expect_type(o, path, "luks2")?;
    let af_path = format!("{path}.af");
    let af = obj(get(o, path, "af")?, &af_path)?;
    expect_type(af, &af_path, "luks1")?;
    let area_path = format!("{path}.area");
    let area = obj(get(o, path, "area")?, &area_path)?;
    expect_type(area, &area_path, "raw")?;
    let kdf_path = format!("{path}.kdf");
    let kdf = obj(get(o, path, "kdf")?, &kdf_path)?;
    let priority = match o.get("priority") {
        None => None,
        Some(_) => Some(int(o, path, "priority")?),
    };
    Ok(Keyslot {
        key_size: u32_num(o, path, "key_size")?,
        af_stripes: int(af, &af_path, "stripes")?,
        af_hash: hash(af, &af_path, "hash")?,
        area: KeyslotArea {
            offset: u64_str(area, &area_path, "offset")?,
            size: u64_str(area, &area_path, "size")?,
            encryption: Encryption::parse(string(area, &area_path, "encryption")?),
            key_size: u32_num(area, &area_path, "key_size")?,
        },
        kdf: parse_kdf(kdf, &kdf_path)?,
        priority,
    })
}

fn parse_reencrypt(
    id: u32,
    o: &Map<String, Value>,
    path: &str,
) -> Result<ReencryptKeyslot, Luks2Error> {
    let area_path = format!("{path}.area");
    let area = obj(get(o, path, "area")?, &area_path)?;
    let key_size = int(o, path, "key_size")?;
    if key_size != 1 {
        return Err(Luks2Error::schema(
            format!("{path}.key_size"),
            "1 (a reencrypt keyslot holds no key)",
        ));
    }
    let mode = match string(o, path, "mode")? {
        "encrypt" => ReencryptMode::Encrypt,
        "decrypt" => ReencryptMode::Decrypt,
        "reencrypt" => ReencryptMode::Reencrypt,
        other => {
            return Err(Luks2Error::Unsupported {
                field: format!("{path}.mode"),
                value: other.to_owned(),
            });
        }
    };
    let direction = match string(o, path, "direction")? {
        "forward" => ReencryptDirection::Forward,
        "backward" => ReencryptDirection::Backward,
        other => {
            return Err(Luks2Error::Unsupported {
                field: format!("{path}.direction"),
                value: other.to_owned(),
            });
        }
    };
    let checksum = || -> Result<(Hash, u32), Luks2Error> {
        Ok((
            hash(area, &area_path, "hash")?,
            u32_num(area, &area_path, "sector_size")?,
        ))
    };
    let shift = || u64_str(area, &area_path, "shift_size");
    let resilience = match string(area, &area_path, "type")? {
        "none" => Resilience::None,
        "checksum" => {
            let (hash, sector_size) = checksum()?;
            Resilience::Checksum { hash, sector_size }
        }
        "journal" => Resilience::Journal,
        "datashift" => Resilience::Datashift { shift: shift()? },
        "datashift-checksum" => {
            let (hash, sector_size) = checksum()?;
            Resilience::DatashiftChecksum {
                hash,
                sector_size,
                shift: shift()?,
            }
        }
        "datashift-journal" => Resilience::DatashiftJournal { shift: shift()? },
        other => {
            return Err(Luks2Error::Unsupported {
                field: format!("{area_path}.type"),
                value: other.to_owned(),
            });
        }
    };
    let priority = match o.get("priority") {
        None => None,
        Some(_) => Some(int(o, path, "priority")?),
    };
    Ok(ReencryptKeyslot {
        id,
        area: ReencryptArea {
            offset: u64_str(area, &area_path, "offset")?,
            size: u64_str(area, &area_path, "size")?,
            resilience,
        },
        mode,
        direction,
        priority,
    })
}

fn parse_segment(o: &Map<String, Value>, path: &str) -> Result<Segment, Luks2Error> {
    let size = || -> Result<Option<u64>, Luks2Error> {
        Ok(match string(o, path, "size")? {
            "dynamic" => None,
            s => Some(parse_u64(s).ok_or_else(|| {
                Luks2Error::schema(format!("{path}.size"), "\"dynamic\" or decimal digits")
            })?),
        })
    };
    if string(o, path, "type")? == "linear" {
        let mut s = Segment::linear(u64_str(o, path, "offset")?, size()?);
        s.flags = string_list(o, path, "flags")?;
        return Ok(s);
    }
    expect_type(o, path, "crypt")?;
    if o.contains_key("integrity") {
        return Err(Luks2Error::Unsupported {
            field: format!("{path}.integrity"),
            value: "integrity protection".into(),
        });
    }
    Ok(Segment {
        kind: SegmentKind::Crypt,
        offset: u64_str(o, path, "offset")?,
        size: size()?,
        iv_tweak: u64_str(o, path, "iv_tweak")?,
        encryption: Encryption::parse(string(o, path, "encryption")?),
        sector_size: u32_num(o, path, "sector_size")?,
        flags: string_list(o, path, "flags")?,
    })
}

fn parse_digest(o: &Map<String, Value>, path: &str) -> Result<Digest, Luks2Error> {
    expect_type(o, path, "pbkdf2")?;
    Ok(Digest {
        keyslots: id_list(o, path, "keyslots")?,
        segments: id_list(o, path, "segments")?,
        hash: hash(o, path, "hash")?,
        iterations: u32_num(o, path, "iterations")?,
        salt: base64(o, path, "salt")?,
        digest: base64(o, path, "digest")?,
    })
}

/// `end`, the end of an area of `size` bytes at `offset`, when the area
/// lies inside the keyslots area `[start, end)`; else the error naming
/// `field`.
fn inside_keyslots_area(
    field: String,
    offset: u64,
    end: Option<u64>,
    size: u64,
    (area_start, area_end): (u64, u64),
) -> Result<u64, Luks2Error> {
    end.filter(|&e| offset >= area_start && e <= area_end)
        .ok_or_else(|| {
            Luks2Error::layout(
                field,
                format!(
                    "{size} bytes at offset {offset} lie outside the keyslots area [{area_start}, {area_end})"
                ),
            )
        })
}

impl Metadata {
    /// Parses and validates the JSON text of a header copy of `hdr_size`
    /// bytes (see [`validate`](Self::validate)).
    ///
    /// ```
    /// use mdu_luks2::{Luks2Error, Metadata};
    /// let err = Metadata::parse(r#"{"keyslots":{}}"#, 16384).unwrap_err();
    /// assert!(matches!(err, Luks2Error::Schema { .. }));
    /// ```
    pub fn parse(text: &str, hdr_size: u64) -> Result<Metadata, Luks2Error> {
        let v: Value = serde_json::from_str(text).map_err(|e| Luks2Error::JsonSyntax {
            offset: 0,
            message: e.to_string(),
        })?;
        let m = Metadata::from_value(&v)?;
        m.validate(hdr_size, None)?;
        Ok(m)
    }

    /// Reads the metadata from a parsed JSON value, checking its schema
    /// only (not its layout).
    ///
    /// ```
    /// let v = serde_json::json!({"keyslots": 5});
    /// assert!(mdu_luks2::Metadata::from_value(&v).is_err());
    /// ```
    pub fn from_value(v: &Value) -> Result<Metadata, Luks2Error> {
        let root = obj(v, "(top level)")?;
        let mut keyslots = BTreeMap::new();
        let mut reencrypt = None;
        for (id, path, o) in by_id(root, "keyslots")? {
            if string(o, &path, "type")? != "reencrypt" {
                keyslots.insert(id, parse_keyslot(o, &path)?);
            } else if reencrypt.is_some() {
                return Err(Luks2Error::layout(
                    path,
                    "a second reencrypt keyslot; a header records one reencryption",
                ));
            } else {
                reencrypt = Some(parse_reencrypt(id, o, &path)?);
            }
        }
        let mut segments = BTreeMap::new();
        for (id, path, o) in by_id(root, "segments")? {
            segments.insert(id, parse_segment(o, &path)?);
        }
        let mut digests = BTreeMap::new();
        for (id, path, o) in by_id(root, "digests")? {
            digests.insert(id, parse_digest(o, &path)?);
        }
        let tokens = obj(
            get(root, "", "tokens").map_err(|_| Luks2Error::schema("tokens", "present"))?,
            "tokens",
        )?
        .clone();
        let c = obj(
            get(root, "", "config").map_err(|_| Luks2Error::schema("config", "present"))?,
            "config",
        )?;
        let requirements = match c.get("requirements") {
            None => None,
            Some(r) => {
                let r = obj(r, "config.requirements")?;
                if let Some(k) = r.keys().find(|k| *k != "mandatory") {
                    return Err(Luks2Error::Unsupported {
                        field: format!("config.requirements.{k}"),
                        value: r[k].to_string(),
                    });
                }
                Some(string_list(r, "config.requirements", "mandatory")?)
            }
        };
        let config = Config {
            json_size: u64_str(c, "config", "json_size")?,
            keyslots_size: u64_str(c, "config", "keyslots_size")?,
            flags: string_list(c, "config", "flags")?,
            requirements,
        };
        Ok(Metadata {
            keyslots,
            reencrypt,
            tokens,
            segments,
            digests,
            config,
        })
    }

    /// The start and end (exclusive) of the keyslots area for headers of
    /// `hdr_size` bytes.
    ///
    /// ```
    /// # let text = include_str!("../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert_eq!(m.keyslots_area(16384), (32768, 16777216));
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn keyslots_area(&self, hdr_size: u64) -> (u64, u64) {
        let start = 2 * hdr_size;
        (start, start.saturating_add(self.config.keyslots_size))
    }

    /// The ranges of the keyslots area that no keyslot and no reencryption
    /// record names, as `(offset, length)` in order: what a writer of this
    /// header keeps for nothing (cryptsetup fills them with random bytes).
    ///
    /// ```
    /// # let text = include_str!("../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// let k = &m.keyslots[&0].area;
    /// assert_eq!(m.free_areas(16384)[0], (k.offset + k.size, 16777216 - k.offset - k.size));
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn free_areas(&self, hdr_size: u64) -> Vec<(u64, u64)> {
        let (start, end) = self.keyslots_area(hdr_size);
        let mut used: Vec<(u64, u64)> = self
            .keyslots
            .values()
            .map(|k| (k.area.offset, k.area.offset.saturating_add(k.area.size)))
            .chain(
                self.reencrypt
                    .iter()
                    .map(|r| (r.area.offset, r.area.offset.saturating_add(r.area.size))),
            )
            .collect();
        used.sort_unstable();
        let mut gaps = Vec::new();
        let mut at = start;
        for (s, e) in used {
            if s > at {
                gaps.push((at, s.min(end) - at));
            }
            at = at.max(e);
            if at >= end {
                break;
            }
        }
        if end > at {
            gaps.push((at, end - at));
        }
        gaps.retain(|&(_, n)| n > 0);
        gaps
    }

    /// Checks every size, offset and reference: `json_size` matches
    /// `hdr_size`; the keyslots area is a multiple of 4096, at most
    /// [`MAX_KEYSLOTS_SIZE`]; each keyslot area lies inside it (and inside
    /// an image of `image_len` bytes when given), is 512-byte aligned, holds
    /// the AF material, and overlaps no other; key sizes and KDF parameters
    /// are in range, keyslot ids below [`MAX_KEYSLOTS`]; segments have a
    /// valid sector size, an offset that is a multiple of it and lies past
    /// the keyslots area (or is 0, a detached header); digests name
    /// existing keyslots and segments.
    ///
    /// ```
    /// # let text = include_str!("../tests/data/pbkdf2.json");
    /// let mut m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// m.segments.get_mut(&0).unwrap().offset = 1000;
    /// assert!(m.validate(16384, None).is_err());
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn validate(&self, hdr_size: u64, image_len: Option<u64>) -> Result<(), Luks2Error> {
        let json_size = hdr_size - BINARY_HEADER_LEN as u64;
        if self.config.json_size != json_size {
            return Err(Luks2Error::layout(
                "config.json_size",
                format!(
                    "{} does not match the header size {hdr_size} (expected {json_size})",
                    self.config.json_size
                ),
            ));
        }
        let ks = self.config.keyslots_size;
        if !ks.is_multiple_of(4096) || ks > MAX_KEYSLOTS_SIZE {
            return Err(Luks2Error::layout(
                "config.keyslots_size",
                format!("{ks} must be a multiple of 4096 and at most {MAX_KEYSLOTS_SIZE}"),
            ));
        }
        let (area_start, area_end) = self.keyslots_area(hdr_size);
        let mut spans: Vec<(u64, u64, u32)> = Vec::new();
        for (&id, k) in &self.keyslots {
            let p = |f: &str| format!("keyslots.{id}.{f}");
            if id >= MAX_KEYSLOTS {
                return Err(Luks2Error::layout(
                    format!("keyslots.{id}"),
                    format!("keyslot ids run from 0 to {}", MAX_KEYSLOTS - 1),
                ));
            }
            for (field, n) in [("key_size", k.key_size), ("area.key_size", k.area.key_size)] {
                if n == 0 || n > MAX_KEY_BYTES {
                    return Err(Luks2Error::layout(
                        p(field),
                        format!("{n} bytes; a key must be 1..={MAX_KEY_BYTES} bytes"),
                    ));
                }
            }
            // The material always has AF_STRIPES stripes, as cryptsetup
            // reads it (af.stripes is not consulted).
            let material = u64::from(k.key_size) * u64::from(AF_STRIPES);
            let need = material.div_ceil(512) * 512;
            let a = &k.area;
            let end = a.offset.checked_add(a.size);
            if !a.offset.is_multiple_of(512) {
                return Err(Luks2Error::layout(
                    p("area.offset"),
                    format!("{} is not a multiple of 512", a.offset),
                ));
            }
            if a.size < need {
                return Err(Luks2Error::layout(
                    p("area.size"),
                    format!(
                        "{} bytes cannot hold {need} bytes of AF material ({AF_STRIPES} stripes of {} bytes)",
                        a.size, k.key_size
                    ),
                ));
            }
            let end =
                inside_keyslots_area(p("area"), a.offset, end, a.size, (area_start, area_end))?;
            if let Some(len) = image_len
                && a.offset + need > len
            {
                return Err(Luks2Error::Truncated {
                    what: "keyslot area",
                    offset: a.offset,
                    len: need,
                    image_len: len,
                });
            }
            if let Some(&(_, _, other)) = spans.iter().find(|&&(s, e, _)| a.offset < e && s < end) {
                return Err(Luks2Error::KeyslotAreasOverlap {
                    first: other,
                    second: id,
                });
            }
            spans.push((a.offset, end, id));
            match &k.kdf {
                Kdf::Pbkdf2 { iterations, .. } => {
                    if *iterations == 0 {
                        return Err(Luks2Error::layout(
                            p("kdf.iterations"),
                            "must be at least 1",
                        ));
                    }
                }
                Kdf::Argon2 {
                    time,
                    memory,
                    cpus,
                    salt,
                    ..
                } => {
                    if *time == 0 {
                        return Err(Luks2Error::layout(p("kdf.time"), "must be at least 1"));
                    }
                    if *cpus == 0 || *cpus > (1 << 24) - 1 {
                        return Err(Luks2Error::layout(p("kdf.cpus"), "must be 1..2^24"));
                    }
                    if *memory > ARGON2_MAX_MEMORY_KIB || *memory < 8 * *cpus {
                        return Err(Luks2Error::layout(
                            p("kdf.memory"),
                            format!(
                                "{memory} KiB; must be 8 KiB per thread up to {ARGON2_MAX_MEMORY_KIB} KiB"
                            ),
                        ));
                    }
                    if salt.len() < 8 {
                        return Err(Luks2Error::layout(
                            p("kdf.salt"),
                            "an Argon2 salt must be at least 8 bytes",
                        ));
                    }
                }
            }
        }
        if let Some(r) = &self.reencrypt {
            let p = |f: &str| format!("keyslots.{}.{f}", r.id);
            if r.id >= MAX_KEYSLOTS {
                return Err(Luks2Error::layout(
                    format!("keyslots.{}", r.id),
                    format!("keyslot ids run from 0 to {}", MAX_KEYSLOTS - 1),
                ));
            }
            let a = &r.area;
            let end = a.offset.checked_add(a.size);
            if !a.offset.is_multiple_of(512) || a.size == 0 || !a.size.is_multiple_of(512) {
                return Err(Luks2Error::layout(
                    p("area"),
                    format!(
                        "{} bytes at offset {}: both must be non-zero multiples of 512",
                        a.size, a.offset
                    ),
                ));
            }
            let end =
                inside_keyslots_area(p("area"), a.offset, end, a.size, (area_start, area_end))?;
            if let Some(len) = image_len
                && end > len
            {
                return Err(Luks2Error::Truncated {
                    what: "reencrypt keyslot area",
                    offset: a.offset,
                    len: a.size,
                    image_len: len,
                });
            }
            if let Some(&(_, _, other)) = spans.iter().find(|&&(s, e, _)| a.offset < e && s < end) {
                return Err(Luks2Error::KeyslotAreasOverlap {
                    first: other,
                    second: r.id,
                });
            }
            match a.resilience {
                Resilience::Checksum { sector_size, .. }
                | Resilience::DatashiftChecksum { sector_size, .. }
                    if !sector_size.is_power_of_two() || !(512..=65536).contains(&sector_size) =>
                {
                    return Err(Luks2Error::layout(
                        p("area.sector_size"),
                        format!("{sector_size} is not a power of two in 512..=65536"),
                    ));
                }
                _ => {}
            }
            if let Some(shift) = a.resilience.shift()
                && (shift == 0 || !shift.is_multiple_of(512))
            {
                return Err(Luks2Error::layout(
                    p("area.shift_size"),
                    format!("{shift} is not a non-zero multiple of 512"),
                ));
            }
        }
        let reencrypt_reqs = self
            .config
            .requirements
            .iter()
            .flatten()
            .filter(|r| r.starts_with("online-reencrypt"))
            .count();
        match (reencrypt_reqs, &self.reencrypt) {
            (0, None) | (1, Some(_)) => {}
            (0, Some(r)) => {
                return Err(Luks2Error::layout(
                    "config.requirements",
                    format!(
                        "keyslot {} records a reencryption but no online-reencrypt requirement is set",
                        r.id
                    ),
                ));
            }
            (1, None) => {
                return Err(Luks2Error::layout(
                    "config.requirements",
                    "an online-reencrypt requirement without a reencrypt keyslot",
                ));
            }
            (n, _) => {
                return Err(Luks2Error::layout(
                    "config.requirements",
                    format!("{n} online-reencrypt requirements; a header has at most one"),
                ));
            }
        }
        // The data start: the lowest offset of any segment. It lies past
        // the keyslots area, or is 0 (a detached header, whose segments
        // address the data device).
        if let Some((&id, s)) = self.segments.iter().min_by_key(|(_, s)| s.offset)
            && s.offset != 0
            && s.offset < area_end
        {
            return Err(Luks2Error::layout(
                format!("segments.{id}.offset"),
                format!(
                    "{} lies inside the header or keyslots area (which ends at {area_end})",
                    s.offset
                ),
            ));
        }
        for (&id, s) in &self.segments {
            let p = |f: &str| format!("segments.{id}.{f}");
            let ss = s.sector_size;
            if !matches!(ss, 512 | 1024 | 2048 | 4096) {
                return Err(Luks2Error::layout(
                    p("sector_size"),
                    format!("{ss} is not 512, 1024, 2048 or 4096"),
                ));
            }
            if !s.offset.is_multiple_of(u64::from(ss)) {
                return Err(Luks2Error::layout(
                    p("offset"),
                    format!("{} is not a multiple of the sector size {ss}", s.offset),
                ));
            }
            if let Some(n) = s.size
                && (n == 0 || !n.is_multiple_of(u64::from(ss)) || s.offset.checked_add(n).is_none())
            {
                return Err(Luks2Error::layout(
                    p("size"),
                    format!("{n} is not a non-zero multiple of the sector size {ss}"),
                ));
            }
        }
        for (&id, d) in &self.digests {
            for &k in &d.keyslots {
                if !self.keyslots.contains_key(&k)
                    && self.reencrypt.as_ref().is_none_or(|r| r.id != k)
                {
                    return Err(Luks2Error::DanglingReference {
                        digest: id,
                        kind: "keyslot",
                        id: k,
                    });
                }
            }
            for &s in &d.segments {
                if !self.segments.contains_key(&s) {
                    return Err(Luks2Error::DanglingReference {
                        digest: id,
                        kind: "segment",
                        id: s,
                    });
                }
            }
            if d.iterations == 0 {
                return Err(Luks2Error::layout(
                    format!("digests.{id}.iterations"),
                    "must be at least 1",
                ));
            }
            // A short digest would let a wrong key pass by chance (one in
            // 256 for one byte): at least LUKS1's 20 bytes, as cryptsetup
            // requires, at most the longest hash.
            if !(MIN_DIGEST_BYTES..=64).contains(&d.digest.len()) {
                return Err(Luks2Error::layout(
                    format!("digests.{id}.digest"),
                    format!(
                        "{} bytes; a volume-key digest must be {MIN_DIGEST_BYTES}..=64 bytes",
                        d.digest.len()
                    ),
                ));
            }
        }
        self.validate_bindings()
    }

    /// cryptsetup's rules binding keyslots, digests and segments: every
    /// keyslot is listed by exactly one digest; every segment is bound to a
    /// digest; the regular segments are 0, 1, ... without a gap and the
    /// backup (`backup-*`) segments come after them; there is a regular
    /// segment if there is any.
    fn validate_bindings(&self) -> Result<(), Luks2Error> {
        for id in self
            .keyslots
            .keys()
            .copied()
            .chain(self.reencrypt.as_ref().map(|r| r.id))
        {
            let digests: Vec<u32> = self
                .digests
                .iter()
                .filter(|(_, d)| d.keyslots.contains(&id))
                .map(|(&d, _)| d)
                .collect();
            if digests.len() != 1 {
                return Err(Luks2Error::layout(
                    format!("keyslots.{id}"),
                    format!(
                        "keyslot {id} is listed by {} digests {digests:?}; cryptsetup requires exactly one",
                        digests.len()
                    ),
                ));
            }
        }
        for (&id, s) in &self.segments {
            if s.is_crypt() && !self.digests.values().any(|d| d.segments.contains(&id)) {
                return Err(Luks2Error::layout(
                    format!("segments.{id}"),
                    format!(
                        "segment {id} is bound to no digest; cryptsetup requires every crypt segment to have its volume-key digest"
                    ),
                ));
            }
        }
        let first_backup = self
            .segments
            .iter()
            .find(|(_, s)| s.is_backup())
            .map(|(&id, _)| id);
        let regular: Vec<u32> = self
            .segments
            .iter()
            .filter(|(_, s)| !s.is_backup())
            .map(|(&id, _)| id)
            .collect();
        if first_backup == Some(0) {
            return Err(Luks2Error::layout(
                "segments",
                "no regular segment: segment 0 is flagged backup-*; cryptsetup requires the data segments first, backups after them",
            ));
        }
        if let (Some(b), Some(&last)) = (first_backup, regular.last())
            && last > b
        {
            return Err(Luks2Error::layout(
                "segments",
                format!(
                    "regular segment {last} comes after backup segment {b}; cryptsetup requires the backups last"
                ),
            ));
        }
        if let Some((want, &found)) = regular
            .iter()
            .enumerate()
            .find(|&(i, &id)| i as u64 != u64::from(id))
        {
            return Err(Luks2Error::layout(
                "segments",
                format!(
                    "no segment {want} before segment {found}; cryptsetup requires the regular segments numbered from 0 without a gap"
                ),
            ));
        }
        Ok(())
    }

    /// The digest that lists keyslot `slot` (after validation, exactly one
    /// does), or `None`.
    ///
    /// ```
    /// # let text = include_str!("../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert_eq!((m.keyslot_digest(0), m.keyslot_digest(1)), (Some(0), None));
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn keyslot_digest(&self, slot: u32) -> Option<u32> {
        self.digests
            .iter()
            .find(|(_, d)| d.keyslots.contains(&slot))
            .map(|(&id, _)| id)
    }

    /// Whether keyslot `slot` is unbound, as cryptsetup calls it: no digest
    /// lists it, or its digest is bound to no segment (`cryptsetup
    /// luksAddKey --unbound`) but backups of a reencryption. Its key opens
    /// no data segment.
    ///
    /// ```
    /// # let text = include_str!("../tests/data/pbkdf2.json");
    /// let mut m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert!(!m.keyslot_is_unbound(0));
    /// m.digests.get_mut(&0).unwrap().segments.clear();
    /// assert!(m.keyslot_is_unbound(0));
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn keyslot_is_unbound(&self, slot: u32) -> bool {
        self.keyslot_digest(slot)
            .and_then(|d| self.digests.get(&d))
            .is_none_or(|d| {
                !d.segments
                    .iter()
                    .any(|s| self.segments.get(s).is_some_and(|s| !s.is_backup()))
            })
    }

    /// The JSON text as cryptsetup 2.6 writes it: compact, keys in its
    /// order, 64-bit numbers as strings, standard padded base64.
    ///
    /// ```
    /// # let text = include_str!("../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert_eq!(m.to_json(), text.trim_end());
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn to_json(&self) -> String {
        let b64 = |b: &[u8]| mdu_base64::STANDARD.encode_to_string(b);
        let q = |s: &str| Value::String(s.to_owned()).to_string();
        let mut j = String::with_capacity(2048);
        j.push_str("{\"keyslots\":{");
        let reencrypt = self.reencrypt.as_ref().map(|r| (r.id, r));
        let mut first = true;
        let mut pending = reencrypt;
        let reencrypt_slot = |j: &mut String, r: &ReencryptKeyslot| {
            let a = &r.area;
            let _ = write!(
                j,
                "\"{}\":{{\"area\":{{\"offset\":\"{}\",\"size\":\"{}\",\"type\":\"{}\"",
                r.id,
                a.offset,
                a.size,
                a.resilience.name()
            );
            match a.resilience {
                Resilience::Checksum { hash, sector_size }
                | Resilience::DatashiftChecksum {
                    hash, sector_size, ..
                } => {
                    let _ = write!(j, ",\"hash\":\"{hash}\",\"sector_size\":{sector_size}");
                }
                _ => {}
            }
            if let Some(shift) = a.resilience.shift() {
                let _ = write!(j, ",\"shift_size\":\"{shift}\"");
            }
            let _ = write!(
                j,
                "}},\"type\":\"reencrypt\",\"key_size\":1,\"mode\":\"{}\",\"direction\":\"{}\"",
                r.mode.name(),
                r.direction.name()
            );
            if let Some(p) = r.priority {
                let _ = write!(j, ",\"priority\":{p}");
            }
            j.push('}');
        };
        for (id, k) in &self.keyslots {
            if let Some((rid, r)) = pending
                && rid < *id
            {
                if !first {
                    j.push(',');
                }
                first = false;
                reencrypt_slot(&mut j, r);
                pending = None;
            }
            if !first {
                j.push(',');
            }
            first = false;
            let _ = write!(
                j,
                "\"{id}\":{{\"type\":\"luks2\",\"key_size\":{},\"af\":{{\"type\":\"luks1\",\"stripes\":{},\"hash\":\"{}\"}},\"area\":{{\"type\":\"raw\",\"offset\":\"{}\",\"size\":\"{}\",\"encryption\":{},\"key_size\":{}}},\"kdf\":",
                k.key_size,
                k.af_stripes,
                k.af_hash,
                k.area.offset,
                k.area.size,
                q(k.area.encryption.as_str()),
                k.area.key_size
            );
            match &k.kdf {
                Kdf::Pbkdf2 {
                    hash,
                    iterations,
                    salt,
                } => {
                    let _ = write!(
                        j,
                        "{{\"type\":\"pbkdf2\",\"hash\":\"{hash}\",\"iterations\":{iterations},\"salt\":\"{}\"}}",
                        b64(salt)
                    );
                }
                Kdf::Argon2 {
                    variant,
                    time,
                    memory,
                    cpus,
                    salt,
                } => {
                    let _ = write!(
                        j,
                        "{{\"type\":\"{}\",\"time\":{time},\"memory\":{memory},\"cpus\":{cpus},\"salt\":\"{}\"}}",
                        variant.name(),
                        b64(salt)
                    );
                }
            }
            if let Some(p) = k.priority {
                let _ = write!(j, ",\"priority\":{p}");
            }
            j.push('}');
        }
        if let Some((_, r)) = pending {
            if !first {
                j.push(',');
            }
            reencrypt_slot(&mut j, r);
        }
        j.push_str("},\"tokens\":");
        j.push_str(&Value::Object(self.tokens.clone()).to_string());
        j.push_str(",\"segments\":{");
        for (n, (id, s)) in self.segments.iter().enumerate() {
            if n > 0 {
                j.push(',');
            }
            let size = s
                .size
                .map_or_else(|| "dynamic".to_owned(), |n| n.to_string());
            match s.kind {
                SegmentKind::Crypt => {
                    let _ = write!(
                        j,
                        "\"{id}\":{{\"type\":\"crypt\",\"offset\":\"{}\",\"size\":\"{size}\",\"iv_tweak\":\"{}\",\"encryption\":{},\"sector_size\":{}",
                        s.offset,
                        s.iv_tweak,
                        q(s.encryption.as_str()),
                        s.sector_size
                    );
                }
                SegmentKind::Linear => {
                    let _ = write!(
                        j,
                        "\"{id}\":{{\"type\":\"linear\",\"offset\":\"{}\",\"size\":\"{size}\"",
                        s.offset
                    );
                }
            }
            if !s.flags.is_empty() {
                let flags: Vec<String> = s.flags.iter().map(|f| q(f)).collect();
                let _ = write!(j, ",\"flags\":[{}]", flags.join(","));
            }
            j.push('}');
        }
        j.push_str("},\"digests\":{");
        let ids = |v: &[u32]| {
            v.iter()
                .map(|i| format!("\"{i}\""))
                .collect::<Vec<_>>()
                .join(",")
        };
        for (n, (id, d)) in self.digests.iter().enumerate() {
            if n > 0 {
                j.push(',');
            }
            let _ = write!(
                j,
                "\"{id}\":{{\"type\":\"pbkdf2\",\"keyslots\":[{}],\"segments\":[{}],\"hash\":\"{}\",\"iterations\":{},\"salt\":\"{}\",\"digest\":\"{}\"}}",
                ids(&d.keyslots),
                ids(&d.segments),
                d.hash,
                d.iterations,
                b64(&d.salt),
                b64(&d.digest)
            );
        }
        let _ = write!(
            j,
            "}},\"config\":{{\"json_size\":\"{}\",\"keyslots_size\":\"{}\"",
            self.config.json_size, self.config.keyslots_size
        );
        if !self.config.flags.is_empty() {
            let flags: Vec<String> = self.config.flags.iter().map(|f| q(f)).collect();
            let _ = write!(j, ",\"flags\":[{}]", flags.join(","));
        }
        if let Some(r) = &self.config.requirements {
            let r: Vec<String> = r.iter().map(|f| q(f)).collect();
            let _ = write!(j, ",\"requirements\":{{\"mandatory\":[{}]}}", r.join(","));
        }
        j.push_str("}}");
        j
    }
}
