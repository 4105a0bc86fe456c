//! The JSON metadata: keyslots, tokens, segments, digests and config, read
//! with a typed error for every bad field and written exactly as
//! cryptsetup 2.6 writes it (key order, 64-bit numbers as strings, compact).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mdu_dmcrypt::CipherSpec;
use serde_json::{Map, Value};

use crate::Error;
use crate::header::BINARY_HEADER_LEN;
use crate::image::AF_STRIPES;
use crate::kdf::{ARGON2_MAX_MEMORY_KIB, Argon2Variant, Hash, Kdf};

mod parse;
mod to_json;
mod validate;

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
/// let text = r#"{"keyslots":{},"tokens":{},"segments":{"0":{"type":"linear","offset":"16777216","size":"dynamic"}},"digests":{},"config":{"json_size":"12288","keyslots_size":"16744448"}}"#;
/// let m = Metadata::parse(text, 16384)?;
/// assert_eq!(m.config.keyslots_size, 16744448);
/// assert_eq!(m.to_json(), text);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    /// The `luks2` keyslots this crate opens, by id.
    pub keyslots: BTreeMap<u32, Keyslot>,
    /// The keyslots it loads, keeps and shows but cannot open (an unknown
    /// type, a KDF or hash it does not have, parameters out of its range),
    /// by id: never a reason to refuse the header, skipped at unlock.
    pub unusable_keyslots: BTreeMap<u32, UnusableKeyslot>,
    /// The `reencrypt` keyslot of a reencryption in progress, if any (at
    /// most one; its id is not among [`keyslots`](Self::keyslots)).
    pub reencrypt: Option<ReencryptKeyslot>,
    /// Tokens, kept as JSON (mdu does not use them).
    pub tokens: Map<String, Value>,
    /// Data segments by id.
    pub segments: BTreeMap<u32, Segment>,
    /// Volume-key digests by id.
    pub digests: BTreeMap<u32, Digest>,
    /// The digests it loads and keeps but cannot check a key with (another
    /// type than `pbkdf2`, a hash it lacks, a digest too short), by id:
    /// the keyslots and segments they bind cannot be opened.
    pub unusable_digests: BTreeMap<u32, UnusableDigest>,
    /// The `config` object.
    pub config: Config,
}

/// A keyslot of type `luks2`: a KDF, the AF splitter and an encrypted area.
///
/// ```
/// # let text = include_str!("../../tests/data/pbkdf2.json");
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// let ks = &m.keyslots[&0];
/// assert_eq!((ks.key_size, ks.af_stripes, ks.area.offset), (64, 4000, 32768));
/// # Ok::<(), mdu_luks2::Error>(())
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
/// # let text = include_str!("../../tests/data/pbkdf2.json");
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// assert_eq!(m.keyslots[&0].area.encryption.as_str(), "aes-xts-plain64");
/// assert_eq!(m.keyslots[&0].area.encryption.spec()?.to_string(), "aes-xts-plain64");
/// # Ok::<(), mdu_luks2::Error>(())
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

/// A keyslot kept as its JSON object, with why this crate cannot open it.
/// cryptsetup loads such a keyslot (of an unknown type, with the early
/// LUKS2 KDF name `argon2`, a hash or parameters it cannot use) and shows
/// it in `luksDump`; so does this crate, and an unlock skips it. Its area
/// is checked against the others as every keyslot's is.
///
/// ```
/// # let text = include_str!("../../tests/data/pbkdf2.json");
/// let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
/// v["keyslots"]["0"]["kdf"]["type"] = "argon2".into();
/// let m = mdu_luks2::Metadata::from_value(&v)?;
/// let k = &m.unusable_keyslots[&0];
/// assert_eq!((k.type_name(), k.area()), ("luks2", (32768, 258048)));
/// assert!(k.why.contains("argon2"), "{}", k.why);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnusableKeyslot {
    /// The keyslot's JSON object, as written.
    pub json: Map<String, Value>,
    /// Why it cannot be opened.
    pub why: String,
}

impl UnusableKeyslot {
    /// Its `type`.
    ///
    /// ```
    /// let k = mdu_luks2::UnusableKeyslot { json: serde_json::json!({"type": "tpm"}).as_object().unwrap().clone(), why: String::new() };
    /// assert_eq!(k.type_name(), "tpm");
    /// ```
    pub fn type_name(&self) -> &str {
        self.json.get("type").and_then(Value::as_str).unwrap_or("")
    }

    /// Its area `(offset, size)` (checked when it was read).
    ///
    /// ```
    /// let j = serde_json::json!({"area": {"offset": "32768", "size": "4096"}});
    /// let k = mdu_luks2::UnusableKeyslot { json: j.as_object().unwrap().clone(), why: String::new() };
    /// assert_eq!(k.area(), (32768, 4096));
    /// ```
    pub fn area(&self) -> (u64, u64) {
        let area = self.json.get("area");
        let n = |k: &str| {
            area.and_then(|a| a.get(k))
                .and_then(Value::as_str)
                .and_then(parse::parse_u64)
                .unwrap_or(0)
        };
        (n("offset"), n("size"))
    }
}

/// A digest kept as its JSON object, with the keyslots and segments it
/// binds and why this crate cannot check a key with it. cryptsetup loads
/// such a digest (it looks into a digest only when it verifies a key).
///
/// ```
/// # let text = include_str!("../../tests/data/pbkdf2.json");
/// let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
/// v["digests"]["0"]["hash"] = "sha3-256".into();
/// let m = mdu_luks2::Metadata::from_value(&v)?;
/// let d = &m.unusable_digests[&0];
/// assert_eq!((&d.keyslots[..], &d.segments[..]), (&[0][..], &[0][..]));
/// assert!(d.why.contains("sha3-256"), "{}", d.why);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnusableDigest {
    /// The digest's JSON object, as written.
    pub json: Map<String, Value>,
    /// The keyslots it lists.
    pub keyslots: Vec<u32>,
    /// The segments it lists.
    pub segments: Vec<u32>,
    /// Why it cannot be used.
    pub why: String,
}

/// The `encryption` of a keyslot area or a segment: the cipher spec as the
/// JSON text names it, parsed once when the metadata are read.
///
/// A spec this crate does not run (`blowfish-cbc-plain64`,
/// `aes-xts-random`) does not stop the metadata from loading, as
/// cryptsetup loads and dumps such a header: the parse error is kept and
/// becomes [`Error::UnsupportedCipher`], naming the field, when the
/// keyslot or segment is used. The text is kept as written (case included),
/// so [`Metadata::to_json`] gives back the same bytes.
///
/// ```
/// use mdu_luks2::{CipherSpec, Encryption};
/// let e = Encryption::parse("aes-xts-plain64");
/// assert_eq!(e.spec()?, "aes-xts-plain64".parse::<CipherSpec>()?);
/// let odd = Encryption::parse("blowfish-cbc-plain64");
/// assert_eq!(odd.as_str(), "blowfish-cbc-plain64");
/// assert!(odd.spec().is_err());
/// assert_eq!(Encryption::from("aes-cbc-essiv:sha256".parse::<CipherSpec>()?).as_str(), "aes-cbc-essiv:sha256");
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encryption {
    text: String,
    spec: Result<CipherSpec, mdu_dmcrypt::Error>,
}

impl Encryption {
    /// The spec `text` as a header holds it, parsed ([`CipherSpec::parse`]);
    /// a refusal is kept for [`spec`](Self::spec).
    ///
    /// ```
    /// let e = mdu_luks2::Encryption::parse("AES-xts-plain64");
    /// assert_eq!(e.as_str(), "AES-xts-plain64");
    /// assert_eq!(e.spec()?.to_string(), "aes-xts-plain64");
    /// # Ok::<(), mdu_luks2::Error>(())
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
    /// Why the spec is not one this crate runs ([`mdu_dmcrypt::Error::UnsupportedCipher`]
    /// or [`mdu_dmcrypt::Error::UnknownIvMode`], listing what is supported).
    ///
    /// ```
    /// use mdu_luks2::Encryption;
    /// assert!(Encryption::parse("aes-xts-plain64").spec().is_ok());
    /// let err = Encryption::parse("aes-xts-elephant").spec().unwrap_err();
    /// assert!(err.to_string().contains("plain64"), "{err}");
    /// ```
    pub fn spec(&self) -> Result<CipherSpec, mdu_dmcrypt::Error> {
        self.spec.clone()
    }

    /// The parsed spec, or [`Error::UnsupportedCipher`] naming `field`
    /// (`segments.0.encryption`).
    pub(crate) fn spec_of(&self, field: impl FnOnce() -> String) -> Result<CipherSpec, Error> {
        self.spec.clone().map_err(|error| Error::UnsupportedCipher {
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
/// # let text = include_str!("../../tests/data/pbkdf2.json");
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// let s = &m.segments[&0];
/// assert_eq!((s.offset, s.size, s.sector_size), (16777216, None, 4096));
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// `crypt`, `linear` or a type this crate does not map.
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
    /// The members this crate does not interpret, kept as written: a crypt
    /// segment's `integrity`, every member of a segment of another type
    /// but `type`, `offset`, `size` and `flags`.
    pub extra: Map<String, Value>,
}

/// What a segment maps.
///
/// ```
/// use mdu_luks2::SegmentKind;
/// assert_eq!(SegmentKind::Linear.name(), "linear");
/// assert_eq!(SegmentKind::Other("hw-opal".into()).name(), "hw-opal");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// `crypt`: ciphertext under the segment's `encryption`, `sector_size`
    /// and `iv_tweak`.
    Crypt,
    /// `linear`: plaintext mapped as it is: the part not yet encrypted (or
    /// already decrypted) of a conversion in place, or a whole volume after
    /// a decryption. Its `encryption` is empty, its `iv_tweak` 0 and its
    /// `sector_size` 512; none of them is written.
    Linear,
    /// A type this crate loads and shows but does not map (cryptsetup
    /// 2.8's `hw-opal`, or one from a later version): its members are in
    /// [`Segment::extra`].
    Other(String),
}

impl SegmentKind {
    /// The JSON `type`.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::SegmentKind::Crypt.name(), "crypt");
    /// ```
    pub fn name(&self) -> &str {
        match self {
            SegmentKind::Crypt => "crypt",
            SegmentKind::Linear => "linear",
            SegmentKind::Other(name) => name,
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
            extra: Map::new(),
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
            extra: Map::new(),
        }
    }

    /// Whether it is a `crypt` segment.
    ///
    /// ```
    /// # let text = include_str!("../../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert!(m.segments[&0].is_crypt());
    /// # Ok::<(), mdu_luks2::Error>(())
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
    /// # let text = include_str!("../../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// let mut s = m.segments[&0].clone();
    /// assert!(!s.is_backup());
    /// s.flags.push("backup-previous".into());
    /// assert!(s.is_backup());
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn is_backup(&self) -> bool {
        self.flags.iter().any(|f| f.starts_with("backup-"))
    }
}

/// A `pbkdf2` digest of the volume key.
///
/// ```
/// # let text = include_str!("../../tests/data/pbkdf2.json");
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// assert_eq!(m.digests[&0].keyslots, vec![0]);
/// # Ok::<(), mdu_luks2::Error>(())
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
/// # let text = include_str!("../../tests/data/pbkdf2.json");
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// assert_eq!(m.config.json_size, 12288);
/// # Ok::<(), mdu_luks2::Error>(())
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
    /// # let text = include_str!("../../tests/data/pbkdf2.json");
    /// let mut m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert_eq!(m.config.reencrypt_requirement(), None);
    /// m.config.requirements = Some(vec!["online-reencrypt-v2".into()]);
    /// assert_eq!(m.config.reencrypt_requirement(), Some("online-reencrypt-v2"));
    /// # Ok::<(), mdu_luks2::Error>(())
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
/// # let text = include_str!("../../tests/data/reencrypt-keychange.json");
/// use mdu_luks2::{ReencryptMode, Resilience};
/// let m = mdu_luks2::Metadata::parse(text, 16384)?;
/// let r = m.reencrypt.as_ref().unwrap();
/// assert_eq!((r.id, r.mode, r.area.offset), (2, ReencryptMode::Reencrypt, 548864));
/// assert!(matches!(r.area.resilience, Resilience::Checksum { sector_size: 4096, .. }));
/// # Ok::<(), mdu_luks2::Error>(())
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

impl Metadata {
    /// The start and end (exclusive) of the keyslots area for headers of
    /// `hdr_size` bytes.
    ///
    /// ```
    /// # let text = include_str!("../../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert_eq!(m.keyslots_area(16384), (32768, 16777216));
    /// # Ok::<(), mdu_luks2::Error>(())
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
    /// # let text = include_str!("../../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// let k = &m.keyslots[&0].area;
    /// assert_eq!(m.free_areas(16384)[0], (k.offset + k.size, 16777216 - k.offset - k.size));
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn free_areas(&self, hdr_size: u64) -> Vec<(u64, u64)> {
        let (start, end) = self.keyslots_area(hdr_size);
        let mut used: Vec<(u64, u64)> = self
            .keyslots
            .values()
            .map(|k| (k.area.offset, k.area.offset.saturating_add(k.area.size)))
            .chain(self.unusable_keyslots.values().map(|k| {
                let (offset, size) = k.area();
                (offset, offset.saturating_add(size))
            }))
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

    /// The digest that lists keyslot `slot` (after validation, exactly one
    /// does), or `None`.
    ///
    /// ```
    /// # let text = include_str!("../../tests/data/pbkdf2.json");
    /// let m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert_eq!((m.keyslot_digest(0), m.keyslot_digest(1)), (Some(0), None));
    /// # Ok::<(), mdu_luks2::Error>(())
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
    /// # let text = include_str!("../../tests/data/pbkdf2.json");
    /// let mut m = mdu_luks2::Metadata::parse(text, 16384)?;
    /// assert!(!m.keyslot_is_unbound(0));
    /// m.digests.get_mut(&0).unwrap().segments.clear();
    /// assert!(m.keyslot_is_unbound(0));
    /// # Ok::<(), mdu_luks2::Error>(())
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
}
