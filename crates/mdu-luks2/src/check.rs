//! The checks a careful opener makes of a LUKS2 header before trusting it
//! with data, beyond what [`Image::load`] refuses outright.
//!
//! LUKS2 metadata are not authenticated: whoever can write the disk can
//! rewrite them, and a header that loads and opens may still not protect
//! anything. The known attack shapes (the October 2025 confidential-VM
//! attacks, CVE-2025-59054 and CVE-2025-58356; the 2021 reencryption
//! recovery attack, CVE-2021-4122) replace the header with one whose
//! keyslot area is not encrypted (`cipher_null`: any passphrase opens it
//! and the volume key is known), whose segment is not encrypted (the data
//! are written in the clear), or that claims a reencryption in progress.
//! [`check`] looks for every such shape and reports each as a [`Finding`];
//! an optional [`Policy`] adds what an attestation expects (cipher, key
//! size, sector size, data layout, KDF strength) and reports what differs.
//!
//! What [`Image::load`] already refuses is not repeated here: malformed
//! JSON, keyslot areas outside the keyslots area or overlapping each
//! other, a segment inside the header or keyslots area, digests naming
//! missing keyslots or segments, a keyslot listed by no digest or by two,
//! a crypt segment bound to no digest, a reencryption record without its
//! requirement, damaged checksums. A reencryption in progress loads (it
//! must, to be resumed) and is reported here as a
//! [`Kind::Requirements`] finding, its linear segments as
//! [`Kind::NotEncrypting`].
//!
//! ```
//! use mdu_luks2::{FormatParams, Hash, KdfParams, check, check::Policy};
//!
//! let params = FormatParams {
//!     kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
//!     data_offset: 1 << 20,
//!     ..FormatParams::default()
//! };
//! let mut image = mdu_luks2::format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
//! image.resize((1 << 20) + 4096, 0);
//! assert!(check::check(&image[..], None)?.findings.is_empty());
//!
//! // An attestation that wants 100,000 PBKDF2 iterations at least.
//! let policy = Policy::from_json(r#"{"pbkdf2_min_iterations": 100000}"#)?;
//! let report = check::check(&image[..], Some(&policy))?;
//! assert_eq!(report.findings[0].field, "keyslots.0.kdf.iterations");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use serde_json::{Map, Value};

use crate::image::{ReadAt, load_copy};
use crate::{BinaryHeader, Error, Image, Kdf, Metadata, Segment};
use mdu_dmcrypt::{CipherSpec, IvMode};

/// What kind of problem a [`Finding`] is.
///
/// ```
/// use mdu_luks2::check::Kind;
/// assert_eq!(Kind::NotEncrypting.name(), "not-encrypting");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// A segment or keyslot area whose cipher does not encrypt
    /// (`cipher_null`): data in the clear, or a keyslot any passphrase
    /// opens.
    NotEncrypting,
    /// A cipher that encrypts but hides little: a constant IV (`null`, so
    /// equal sectors show as equal ciphertext), or ECB.
    WeakCipher,
    /// A cipher spec this crate does not run, so it cannot be checked.
    UnknownCipher,
    /// The data segments do not lie as a single header claims them: more
    /// than one regular segment, backup segments, segments that overlap,
    /// or a segment past the end of the image.
    SegmentLayout,
    /// A keyslot no data segment is bound to: its key opens nothing (as
    /// `luksAddKey --unbound` makes), which a check reports.
    UnboundKeyslot,
    /// The two header copies are both valid but say different things, or
    /// one of them is damaged.
    HeaderCopies,
    /// A value differs from what the [`Policy`] expects.
    Policy,
    /// `config.requirements`: a reencryption in progress (the data are
    /// partly under another key, or in the clear) or a feature unknown to
    /// this crate.
    Requirements,
}

impl Kind {
    /// The kind's name, as `--json` prints it.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::check::Kind::Policy.name(), "policy");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Kind::NotEncrypting => "not-encrypting",
            Kind::WeakCipher => "weak-cipher",
            Kind::UnknownCipher => "unknown-cipher",
            Kind::SegmentLayout => "segment-layout",
            Kind::UnboundKeyslot => "unbound-keyslot",
            Kind::HeaderCopies => "header-copies",
            Kind::Policy => "policy",
            Kind::Requirements => "requirements",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One problem: the field it is in, its kind, and what is wrong.
///
/// ```
/// use mdu_luks2::check::{Finding, Kind};
/// let f = Finding { field: "segments.0.encryption".into(), kind: Kind::NotEncrypting,
///     message: "cipher_null-ecb does not encrypt".into() };
/// assert_eq!(f.to_string(), "segments.0.encryption: not-encrypting: cipher_null-ecb does not encrypt");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The JSON path of the field (`segments.0.encryption`), or
    /// `header` for the binary headers.
    pub field: String,
    /// The kind of problem.
    pub kind: Kind,
    /// What is wrong, and what was expected.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.field, self.kind, self.message)
    }
}

/// The result of [`check`]: the loaded header and every finding.
///
/// ```
/// # use mdu_luks2::*;
/// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
/// # let mut image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// # image.resize((1 << 20) + 4096, 0);
/// let report = mdu_luks2::check::check(&image[..], None)?;
/// assert!(report.is_clean());
/// assert_eq!(report.image.metadata.segments.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Report {
    /// The header as [`Image::load`] read it.
    pub image: Image,
    /// Every problem found, in the order of the checks.
    pub findings: Vec<Finding>,
    /// The ranges of the keyslots area that nothing names and that hold
    /// neither random fill nor a wipe pattern (see [`leftovers`]): warnings,
    /// not findings, since the header itself is sound.
    pub leftovers: Vec<Leftover>,
}

impl Report {
    /// Whether nothing was found.
    ///
    /// See [`Report`].
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }
}

/// What an attestation expects of a header; every field is optional.
///
/// Read from JSON ([`Policy::from_json`]): `cipher` (`"aes-xts-plain64"`),
/// `key_size` (volume-key bytes), `sector_size`, `data_offset` (bytes),
/// `data_size` (bytes, or `"dynamic"`), `max_keyslots`,
/// `pbkdf2_min_iterations`, `argon2_min_time`, `argon2_min_memory_kib`,
/// `argon2_min_parallel`, `allow_unbound_keyslots` (default false).
///
/// ```
/// use mdu_luks2::check::Policy;
/// let p = Policy::from_json(r#"{"cipher": "aes-xts-plain64", "key_size": 64, "sector_size": 4096}"#)?;
/// assert_eq!(p.key_size, Some(64));
/// assert!(Policy::from_json(r#"{"ciphr": "aes"}"#).is_err());
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    /// The segment cipher, as the header spells it (compared without
    /// regard to case).
    pub cipher: Option<String>,
    /// The volume-key size in bytes.
    pub key_size: Option<u32>,
    /// The encryption sector size in bytes.
    pub sector_size: Option<u32>,
    /// The data segment's offset in bytes.
    pub data_offset: Option<u64>,
    /// The data segment's size: `Some(None)` for `dynamic`.
    pub data_size: Option<Option<u64>>,
    /// The most keyslots the header may have.
    pub max_keyslots: Option<u32>,
    /// The fewest PBKDF2 iterations a keyslot may have.
    pub pbkdf2_min_iterations: Option<u32>,
    /// The fewest Argon2 passes.
    pub argon2_min_time: Option<u32>,
    /// The least Argon2 memory, KiB.
    pub argon2_min_memory_kib: Option<u32>,
    /// The fewest Argon2 lanes.
    pub argon2_min_parallel: Option<u32>,
    /// Whether keyslots bound to no segment are accepted.
    pub allow_unbound_keyslots: bool,
}

impl Policy {
    /// Reads a policy from JSON text.
    ///
    /// # Errors
    ///
    /// [`Error::PolicySyntax`] for text that is not JSON,
    /// [`Error::Schema`] for an unknown field or a value of the wrong
    /// type (a misspelt field must not silently check nothing).
    ///
    /// See [`Policy`].
    pub fn from_json(text: &str) -> Result<Policy, Error> {
        let v: Value = serde_json::from_str(text).map_err(|e| Error::PolicySyntax {
            message: e.to_string(),
        })?;
        let o = v
            .as_object()
            .ok_or_else(|| Error::schema("policy", "a JSON object"))?;
        let mut p = Policy::default();
        for (k, val) in o {
            let field = format!("policy.{k}");
            let num = |max: u64| {
                val.as_u64()
                    .filter(|&n| n <= max)
                    .ok_or_else(|| Error::schema(field.clone(), "a non-negative integer"))
            };
            match k.as_str() {
                "cipher" => {
                    p.cipher = Some(
                        val.as_str()
                            .ok_or_else(|| Error::schema(field.clone(), "a string"))?
                            .to_owned(),
                    );
                }
                "key_size" => p.key_size = Some(num(u32::MAX.into())? as u32),
                "sector_size" => p.sector_size = Some(num(u32::MAX.into())? as u32),
                "data_offset" => p.data_offset = Some(num(u64::MAX)?),
                "data_size" => {
                    p.data_size = Some(if val.as_str() == Some("dynamic") {
                        None
                    } else {
                        Some(val.as_u64().ok_or_else(|| {
                            Error::schema(field.clone(), "a byte count or \"dynamic\"")
                        })?)
                    });
                }
                "max_keyslots" => p.max_keyslots = Some(num(u32::MAX.into())? as u32),
                "pbkdf2_min_iterations" => {
                    p.pbkdf2_min_iterations = Some(num(u32::MAX.into())? as u32);
                }
                "argon2_min_time" => p.argon2_min_time = Some(num(u32::MAX.into())? as u32),
                "argon2_min_memory_kib" => {
                    p.argon2_min_memory_kib = Some(num(u32::MAX.into())? as u32);
                }
                "argon2_min_parallel" => {
                    p.argon2_min_parallel = Some(num(u32::MAX.into())? as u32);
                }
                "allow_unbound_keyslots" => {
                    p.allow_unbound_keyslots = val
                        .as_bool()
                        .ok_or_else(|| Error::schema(field.clone(), "true or false"))?;
                }
                _ => {
                    return Err(Error::schema(
                        field,
                        "one of cipher, key_size, sector_size, data_offset, data_size, \
                         max_keyslots, pbkdf2_min_iterations, argon2_min_time, \
                         argon2_min_memory_kib, argon2_min_parallel, allow_unbound_keyslots",
                    ));
                }
            }
        }
        Ok(p)
    }
}

/// Loads the header of `r` and checks it (and it against `policy`).
///
/// # Errors
///
/// What [`Image::load`] refuses (no valid header, malformed metadata):
/// those headers are not checked further. A reencryption in progress loads
/// and is a [`Kind::Requirements`] finding.
///
/// See the [module](self) documentation.
pub fn check<R: ReadAt + ?Sized>(r: &R, policy: Option<&Policy>) -> Result<Report, Error> {
    let image = Image::load(r)?;
    let mut findings = Vec::new();
    copies(r, &image, &mut findings);
    for req in image.metadata.config.requirements.iter().flatten() {
        let message = if req.starts_with("online-reencrypt") {
            format!(
                "{req}: a reencryption is in progress; part of the data is under another key or \
                 in the clear until it is finished"
            )
        } else {
            format!("{req}: a requirement this tool does not know; the data cannot be used")
        };
        finding(
            &mut findings,
            "config.requirements",
            Kind::Requirements,
            message,
        );
    }
    ciphers(&image.metadata, &mut findings);
    layout(&image, &mut findings);
    unbound(&image.metadata, policy, &mut findings);
    if let Some(p) = policy {
        against(&image.metadata, p, &mut findings);
    }
    let leftovers = leftovers(r, &image)?;
    Ok(Report {
        image,
        findings,
        leftovers,
    })
}

/// A range of the keyslots area that no keyslot and no reencryption
/// record names and whose bytes are neither random nor one repeated byte:
/// data a killed command left behind (a journal's copy of plaintext,
/// metadata, a foreign tool's bytes), which the header no longer accounts
/// for.
///
/// ```
/// use mdu_luks2::check::Leftover;
/// let l = Leftover { offset: 1 << 20, len: 4096 };
/// assert_eq!(l.to_string(), "4096 bytes at offset 1048576");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leftover {
    /// Where the range starts, in bytes from the start of the header.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
}

impl fmt::Display for Leftover {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes at offset {}", self.len, self.offset)
    }
}

/// The block leftovers are judged in.
const JUDGED_BLOCK: u64 = 4096;

/// The least length judged: a shorter range has too few bytes for a
/// randomness test.
const LEAST_JUDGED: u64 = 1024;

/// The chi-square statistic (255 degrees of freedom) above which a block
/// is not random fill. Random blocks average 255; the chance that one
/// exceeds 600 is below 1e-25, so no image cryptsetup or mdu makes is
/// reported in practice. A block that is a tenth one byte value, or text,
/// or a file system's metadata, is far above it.
const CHI_SQUARE_LIMIT: f64 = 600.0;

/// Whether `block` holds bytes a writer of the header keeps on purpose:
/// one repeated byte (zeros, a wipe pattern's last pass) or random bytes
/// (cryptsetup and mdu fill the keyslots area, and every area they free,
/// with random bytes).
fn is_fill(block: &[u8]) -> bool {
    let Some(&first) = block.first() else {
        return true;
    };
    if block.iter().all(|&b| b == first) {
        return true;
    }
    let mut counts = [0u64; 256];
    for &b in block {
        counts[usize::from(b)] += 1;
    }
    let expected = block.len() as f64 / 256.0;
    let chi: f64 = counts
        .iter()
        .map(|&c| {
            let d = c as f64 - expected;
            d * d / expected
        })
        .sum();
    chi <= CHI_SQUARE_LIMIT
}

/// The leftovers of `image`'s keyslots area in `r`, merged into ranges.
///
/// Every range that no keyslot and no reencryption record names
/// ([`Metadata::free_areas`]) is read in 4096-byte blocks; a block that is
/// neither one repeated byte nor random (a chi-square test of its byte
/// counts) is a leftover. Encrypted key material is random by design and
/// cannot be told from the random fill cryptsetup writes, so it is never
/// reported: [`wipe_free_areas`] refills every free range whatever it
/// holds. Ranges shorter than 1024 bytes are not judged.
///
/// # Errors
///
/// [`Error::ReadAt`] when a free range cannot be read (an image that
/// shrank since it was loaded).
///
/// ```
/// # use mdu_luks2::*;
/// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
/// # let mut image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// # image.resize((1 << 20) + 4096, 0);
/// let loaded = Image::load(&image[..])?;
/// assert!(check::leftovers(&image[..], &loaded)?.is_empty());
/// let (free, _) = loaded.metadata.free_areas(loaded.hdr_size())[0];
/// image[free as usize..][..5000].fill(b'x');
/// image[free as usize..][..11].copy_from_slice(b"hello world");
/// let found = check::leftovers(&image[..], &loaded)?;
/// assert_eq!(found, [check::Leftover { offset: free, len: 8192 }]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn leftovers<R: ReadAt + ?Sized>(r: &R, image: &Image) -> Result<Vec<Leftover>, Error> {
    let mut found: Vec<Leftover> = Vec::new();
    let mut buf = vec![0u8; JUDGED_BLOCK as usize];
    for (offset, len) in image.free_areas() {
        let end = offset + len;
        let mut at = offset;
        while at < end && end - at >= LEAST_JUDGED {
            // Blocks on 4096-byte boundaries; a short last one joins the
            // block before it when it is too short to judge alone.
            let mut next = (at / JUDGED_BLOCK + 1) * JUDGED_BLOCK;
            if end.saturating_sub(next) < LEAST_JUDGED {
                next = end;
            }
            let n = (next.min(end) - at) as usize;
            if buf.len() < n {
                buf.resize(n, 0);
            }
            r.read_exact_at(&mut buf[..n], at)
                .map_err(|error| Error::ReadAt {
                    what: "free keyslots area",
                    offset: at,
                    len: n as u64,
                    error: error.into(),
                })?;
            if !is_fill(&buf[..n]) {
                match found.last_mut() {
                    Some(l) if l.offset + l.len == at => l.len += n as u64,
                    _ => found.push(Leftover {
                        offset: at,
                        len: n as u64,
                    }),
                }
            }
            at += n as u64;
        }
    }
    Ok(found)
}

/// Fills every range of `image`'s keyslots area that no keyslot and no
/// reencryption record names with random bytes (as cryptsetup fills a new
/// keyslots area), then syncs `dev`: whatever a killed command left there,
/// key material included, is gone. Returns the bytes written.
///
/// The caller holds the device's locks: the header must not change
/// between its load and this call.
///
/// # Errors
///
/// A failed write or sync ([`Error::Io`]), or no random bytes.
///
/// ```no_run
/// let dev = std::fs::OpenOptions::new().read(true).write(true).open("luks.img")?;
/// let image = mdu_luks2::Image::load(&dev)?;
/// mdu_luks2::check::wipe_free_areas(&dev, &image)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn wipe_free_areas(dev: &std::fs::File, image: &Image) -> Result<u64, Error> {
    let mut total = 0;
    for (offset, len) in image.free_areas() {
        crate::reencrypt::wipe(dev, offset, len)?;
        total += len;
    }
    if total > 0 {
        dev.sync_data().map_err(Error::Io)?;
    }
    Ok(total)
}

fn finding(findings: &mut Vec<Finding>, field: impl Into<String>, kind: Kind, message: String) {
    findings.push(Finding {
        field: field.into(),
        kind,
        message,
    });
}

/// Both copies valid and equal (apart from where each lies and its
/// checksum), or the damaged one named.
fn copies<R: ReadAt + ?Sized>(r: &R, image: &Image, findings: &mut Vec<Finding>) {
    if let Some(e) = &image.primary_error {
        finding(
            findings,
            "header",
            Kind::HeaderCopies,
            format!("the primary header copy is not valid ({e}); the secondary is in use"),
        );
    }
    if let Some(e) = &image.secondary_error {
        finding(
            findings,
            "header",
            Kind::HeaderCopies,
            format!("the secondary header copy is not valid ({e})"),
        );
    }
    if image.primary_error.is_some() || image.secondary_error.is_some() {
        return;
    }
    let (Ok(p), Ok(s)) = (
        load_copy(r, image.image_len, 0),
        load_copy(r, image.image_len, image.header.hdr_size),
    ) else {
        return;
    };
    let differs = |a: &BinaryHeader, b: &BinaryHeader| -> Vec<&'static str> {
        let mut d = Vec::new();
        if a.seqid != b.seqid {
            d.push("seqid");
        }
        if a.uuid != b.uuid {
            d.push("uuid");
        }
        if a.label != b.label {
            d.push("label");
        }
        if a.subsystem != b.subsystem {
            d.push("subsystem");
        }
        if a.hdr_size != b.hdr_size {
            d.push("hdr_size");
        }
        d
    };
    let mut what: Vec<String> = differs(&p.0, &s.0).into_iter().map(String::from).collect();
    what.extend(metadata_differences(&p.1, &s.1));
    if !what.is_empty() {
        finding(
            findings,
            "header",
            Kind::HeaderCopies,
            format!(
                "both header copies are valid but differ in {} (the {} copy, with the higher \
                 seqid, is in use); cryptsetup would rewrite the other one from it",
                what.join(", "),
                image.copy.name()
            ),
        );
    }
}

/// The top-level metadata members (and keyslot, segment, digest ids) in
/// which two copies differ.
fn metadata_differences(a: &Metadata, b: &Metadata) -> Vec<String> {
    let mut d = Vec::new();
    let ids = |x: Vec<u32>, y: Vec<u32>, name: &str, d: &mut Vec<String>| {
        if x != y {
            d.push(format!("the {name} ids"));
        }
    };
    ids(
        a.keyslots.keys().copied().collect(),
        b.keyslots.keys().copied().collect(),
        "keyslot",
        &mut d,
    );
    for (id, k) in &a.keyslots {
        if b.keyslots.get(id).is_some_and(|o| o != k) {
            d.push(format!("keyslots.{id}"));
        }
    }
    ids(
        a.segments.keys().copied().collect(),
        b.segments.keys().copied().collect(),
        "segment",
        &mut d,
    );
    for (id, s) in &a.segments {
        if b.segments.get(id).is_some_and(|o| o != s) {
            d.push(format!("segments.{id}"));
        }
    }
    if a.digests != b.digests {
        d.push("digests".into());
    }
    if a.tokens != b.tokens {
        d.push("tokens".into());
    }
    if a.config != b.config {
        d.push("config".into());
    }
    d
}

/// `cipher_null` anywhere, constant IVs, ECB, specs that cannot be checked.
fn ciphers(m: &Metadata, findings: &mut Vec<Finding>) {
    for (id, s) in m.segments.iter().filter(|(_, s)| !s.is_crypt()) {
        finding(
            findings,
            format!("segments.{id}.type"),
            Kind::NotEncrypting,
            format!(
                "segment {id} is linear: the data it maps are plaintext{}",
                if s.is_backup() {
                    " (a layout a reencryption records)"
                } else {
                    ""
                }
            ),
        );
    }
    let mut one = |field: String, text: &str, spec: Option<CipherSpec>, what: &str| {
        let lower = text.to_ascii_lowercase();
        if lower.starts_with("cipher_null") || lower == "null" || lower.starts_with("null-") {
            finding(
                findings,
                field,
                Kind::NotEncrypting,
                format!(
                    "{text} does not encrypt: {what} (the shape of the confidential-VM header \
                     attacks, CVE-2025-59054 and CVE-2025-58356)"
                ),
            );
        } else if lower.split('-').nth(1) == Some("ecb") {
            finding(
                findings,
                field,
                Kind::WeakCipher,
                format!("{text}: ECB shows equal blocks as equal ciphertext"),
            );
        } else if let Some(spec) = spec {
            if spec.iv_mode() == IvMode::Null {
                finding(
                    findings,
                    field,
                    Kind::WeakCipher,
                    format!("{text}: a constant (null) IV shows equal sectors as equal ciphertext"),
                );
            }
        } else {
            finding(
                findings,
                field,
                Kind::UnknownCipher,
                format!("{text} is a cipher mdu does not run, so it cannot be checked"),
            );
        }
    };
    for (id, k) in &m.keyslots {
        let e = &k.area.encryption;
        one(
            format!("keyslots.{id}.area.encryption"),
            e.as_str(),
            e.spec().ok(),
            "the keyslot's material is stored in the clear, so any passphrase opens it and \
             the volume key is known to whoever wrote the header",
        );
    }
    for (id, s) in &m.segments {
        if !s.is_crypt() {
            continue;
        }
        let e = &s.encryption;
        one(
            format!("segments.{id}.encryption"),
            e.as_str(),
            e.spec().ok(),
            "the data are written and read in the clear",
        );
    }
}

/// One regular segment, no backups, inside the image.
fn layout(image: &Image, findings: &mut Vec<Finding>) {
    let m = &image.metadata;
    let regular: Vec<(u32, &Segment)> = m
        .segments
        .iter()
        .filter(|(_, s)| !s.is_backup())
        .map(|(&id, s)| (id, s))
        .collect();
    if m.segments.is_empty() {
        finding(
            findings,
            "segments",
            Kind::SegmentLayout,
            "no data segment: the header describes no encrypted data".into(),
        );
    }
    if regular.len() > 1 {
        finding(
            findings,
            "segments",
            Kind::SegmentLayout,
            format!(
                "{} regular segments: only an unfinished reencryption has more than one, and \
                 this header claims none",
                regular.len()
            ),
        );
    }
    for (&id, s) in m.segments.iter().filter(|(_, s)| s.is_backup()) {
        finding(
            findings,
            format!("segments.{id}.flags"),
            Kind::SegmentLayout,
            format!(
                "a backup segment ({}) outside a reencryption",
                s.flags.join(", ")
            ),
        );
    }
    // Pairwise overlap of the segments' byte ranges (a dynamic one runs to
    // the end of the image).
    let end = |s: &Segment| match s.size {
        Some(n) => s.offset.saturating_add(n),
        None => image.image_len.max(s.offset),
    };
    let all: Vec<(u32, &Segment)> = m.segments.iter().map(|(&id, s)| (id, s)).collect();
    for (i, &(a, sa)) in all.iter().enumerate() {
        for &(b, sb) in &all[i + 1..] {
            if sa.offset < end(sb) && sb.offset < end(sa) && sa.offset != 0 && sb.offset != 0 {
                finding(
                    findings,
                    format!("segments.{b}"),
                    Kind::SegmentLayout,
                    format!("segment {b} overlaps segment {a}"),
                );
            }
        }
    }
    for &(id, s) in &regular {
        if s.offset == 0 {
            continue; // a detached header: the data are elsewhere
        }
        if let Err(e) = image.payload_range(s) {
            finding(
                findings,
                format!("segments.{id}"),
                Kind::SegmentLayout,
                format!("the segment does not fit the image: {e}"),
            );
        }
    }
}

/// Keyslots whose key opens no segment.
fn unbound(m: &Metadata, policy: Option<&Policy>, findings: &mut Vec<Finding>) {
    if policy.is_some_and(|p| p.allow_unbound_keyslots) {
        return;
    }
    for &id in m.keyslots.keys() {
        if m.keyslot_is_unbound(id) {
            finding(
                findings,
                format!("keyslots.{id}"),
                Kind::UnboundKeyslot,
                "bound to no data segment: its key opens nothing here (a policy may allow \
                 this with allow_unbound_keyslots)"
                    .into(),
            );
        }
    }
}

/// Every value the policy names, against the header.
fn against(m: &Metadata, p: &Policy, findings: &mut Vec<Finding>) {
    let mut differ = |field: String, expected: String, found: String| {
        finding(
            findings,
            field,
            Kind::Policy,
            format!("{found}, the policy expects {expected}"),
        );
    };
    if let Some(max) = p.max_keyslots
        && m.keyslots.len() as u64 > u64::from(max)
    {
        differ(
            "keyslots".into(),
            format!("at most {max}"),
            format!("{} keyslots", m.keyslots.len()),
        );
    }
    for (&id, s) in m.segments.iter().filter(|(_, s)| !s.is_backup()) {
        let f = |name: &str| format!("segments.{id}.{name}");
        if let Some(c) = &p.cipher
            && !c.eq_ignore_ascii_case(s.encryption.as_str())
        {
            differ(f("encryption"), c.clone(), s.encryption.as_str().into());
        }
        if let Some(ss) = p.sector_size
            && ss != s.sector_size
        {
            differ(f("sector_size"), ss.to_string(), s.sector_size.to_string());
        }
        if let Some(off) = p.data_offset
            && off != s.offset
        {
            differ(f("offset"), off.to_string(), s.offset.to_string());
        }
        if let Some(size) = p.data_size
            && size != s.size
        {
            let show = |v: Option<u64>| v.map_or("dynamic".to_string(), |n| n.to_string());
            differ(f("size"), show(size), show(s.size));
        }
    }
    for (&id, k) in &m.keyslots {
        let f = |name: &str| format!("keyslots.{id}.{name}");
        if let Some(ks) = p.key_size
            && ks != k.key_size
        {
            differ(f("key_size"), ks.to_string(), k.key_size.to_string());
        }
        match &k.kdf {
            Kdf::Pbkdf2 { iterations, .. } => {
                if let Some(min) = p.pbkdf2_min_iterations
                    && *iterations < min
                {
                    differ(
                        f("kdf.iterations"),
                        format!("at least {min}"),
                        iterations.to_string(),
                    );
                }
            }
            Kdf::Argon2 {
                time, memory, cpus, ..
            } => {
                for (name, have, min) in [
                    ("kdf.time", *time, p.argon2_min_time),
                    ("kdf.memory", *memory, p.argon2_min_memory_kib),
                    ("kdf.cpus", *cpus, p.argon2_min_parallel),
                ] {
                    if let Some(min) = min
                        && have < min
                    {
                        differ(f(name), format!("at least {min}"), have.to_string());
                    }
                }
            }
        }
    }
}

/// The report as JSON: `{"copy": ..., "clean": bool, "findings": [...],
/// "leftovers": [{"offset", "len"}]}`.
///
/// ```
/// # use mdu_luks2::*;
/// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
/// # let mut image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// # image.resize((1 << 20) + 4096, 0);
/// let report = mdu_luks2::check::check(&image[..], None)?;
/// let v = mdu_luks2::check::to_json(&report);
/// assert_eq!(v["clean"], true);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_json(report: &Report) -> Value {
    let findings: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let mut o = Map::new();
            o.insert("field".into(), f.field.clone().into());
            o.insert("kind".into(), f.kind.name().into());
            o.insert("message".into(), f.message.clone().into());
            Value::Object(o)
        })
        .collect();
    let mut o = Map::new();
    o.insert("copy".into(), report.image.copy.name().into());
    o.insert("seqid".into(), report.image.header.seqid.into());
    o.insert("clean".into(), report.is_clean().into());
    o.insert("findings".into(), Value::Array(findings));
    let leftovers: Vec<Value> = report
        .leftovers
        .iter()
        .map(|l| serde_json::json!({"offset": l.offset, "len": l.len}))
        .collect();
    o.insert("leftovers".into(), Value::Array(leftovers));
    Value::Object(o)
}
