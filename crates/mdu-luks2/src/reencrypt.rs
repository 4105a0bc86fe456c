//! Reencryption in place: a new volume key (and cipher) for the data of a
//! LUKS2 volume, or encryption and decryption of a data device with a
//! detached header, hotzone by hotzone, with the progress recorded in the
//! header exactly as cryptsetup 2.6 records it, so that either tool
//! finishes what the other started.
//!
//! # The record
//!
//! A reencryption in progress is a header with the `online-reencrypt-v2`
//! requirement, a `reencrypt` keyslot (mode, direction, resilience) bound to
//! a digest of its own, and the data as a row of segments: the converted
//! part (new key, or `linear` after a decryption), the hotzone being
//! converted (flagged `in-reencryption`) and the rest, then two backup
//! segments with the old and the final layout. The digest covers the
//! keyslot, the backups and both volume keys ([`digest_input`]), so a
//! changed record is refused before any byte moves.
//!
//! # One hotzone
//!
//! The hotzones walk forward from the start of the data (backward with a
//! data shift, below). For each:
//!
//! 1. read the old bytes; write what lets a crash be repaired (the hash of
//!    every block for `checksum`, the bytes themselves for `journal`) into
//!    the keyslot's area, and commit the header with the hotzone flagged;
//! 2. convert the bytes, write them in place and sync them;
//! 3. commit the header with the hotzone counted as converted.
//!
//! A crash between 1 and 3 leaves the flag, and [`Reencryption::resume`]
//! repairs the hotzone first: `journal` rewrites it from the copy;
//! `checksum` converts every block whose hash still equals the old one.
//! The last hotzone's step 3 is the final header itself (one segment, no
//! backups, no requirement, the old keyslots gone), and the areas that held
//! old keys, checksums or journal copies are wiped only after it, so no
//! crash can leave a header that restarts the conversion over converted
//! data or that no keyslot opens (the windows in which cryptsetup 2.6.1
//! loses data or gets stuck).
//!
//! ```
//! use mdu_luks2::{reencrypt, FormatParams, Hash, Image, KdfParams};
//! # let dir = std::env::temp_dir().join(format!("mdu-reenc-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let path = dir.join("image");
//! // A small volume whose key is changed in place.
//! let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
//!     digest_iterations: 1000, data_offset: 1 << 20, sector_size: 4096, ..FormatParams::default() };
//! let mut image = mdu_luks2::format(&params, b"pw", &[7u8; 64][..].iter().enumerate().map(|(i, b)| b ^ i as u8).collect::<Vec<_>>(), &mut mdu_luks2::os_random)?;
//! image.resize((1 << 20) + (256 << 10), 0);
//! std::fs::write(&path, &image)?;
//! let file = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
//! let plan = reencrypt::Plan::new_key(&Image::load(&file)?, None)?;
//! let mut r = reencrypt::Reencryption::init(file.try_clone()?, file, b"pw", &plan, &reencrypt::Options::default())?;
//! r.run(&mut |_, _| {}, &|| false)?;
//! let file = std::fs::File::open(&path)?;
//! let img = Image::load(&file)?;
//! assert!(img.metadata.reencrypt.is_none() && img.unlock(&file, b"pw").is_ok());
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # A data shift
//!
//! [`Plan::EncryptShift`] encrypts a device with the header at its start
//! (cryptsetup's `--encrypt --reduce-device-size`): the first `s` bytes
//! are copied to the end of the device, the header goes over them, and
//! the hotzones walk backward, each read at `o` and written at `s + o`,
//! the last one from the copy. The copy is wiped once the only segment is
//! the final one. A crash repeats the hotzone from its source, which no
//! hotzone overwrites before its own conversion is recorded.
//! [`Plan::DecryptShift`] is the way back (`--decrypt --header NEW`): the
//! header is exported to a new file, the first `s` bytes of ciphertext are
//! copied over the old header, the hotzones walk forward, each read at
//! `s + o` and written at `o`, and the copied segment is decrypted in place
//! last, under checksums (`online-reencrypt-v3`).
//!
//! ```
//! use mdu_luks2::{reencrypt, FormatParams, Hash, Image, KdfParams};
//! # let dir = std::env::temp_dir().join(format!("mdu-reenc-shift-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! # let path = dir.join("device");
//! // 3 MiB of data, and the 2 MiB the file system gave up at the end.
//! let plain: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
//! let mut device = plain.clone();
//! device.resize(5 << 20, 0);
//! std::fs::write(&path, &device)?;
//! let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
//!     digest_iterations: 1000, data_offset: 1 << 20, sector_size: 4096, ..FormatParams::default() };
//! let file = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
//! let plan = reencrypt::Plan::EncryptShift(params);
//! let mut r = reencrypt::Reencryption::init(file.try_clone()?, file, b"pw", &plan, &reencrypt::Options::default())?;
//! r.run(&mut |_, _| {}, &|| false)?;
//! // The data now start at 1 MiB, encrypted.
//! let file = std::fs::File::open(&path)?;
//! let img = Image::load(&file)?;
//! assert_eq!(img.segment()?.1.offset, 1 << 20);
//! let mut data = std::fs::read(&path)?[1 << 20..].to_vec();
//! let key = img.unlock(&file, b"pw")?;
//! let cipher = img.segment_cipher(&key, mdu_dmcrypt::WeakKeys::Refuse)?;
//! cipher.crypt(mdu_dmcrypt::Direction::Decrypt, 0, &mut data)?;
//! assert!(data[..3 << 20] == plain[..]);
//!
//! // And back: the header goes to a file of its own, the data down to 0.
//! let header = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(dir.join("exported"))?;
//! let file = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
//! let plan = reencrypt::Plan::DecryptShift { key_slot: None };
//! let mut r = reencrypt::Reencryption::init(header, file, b"pw", &plan, &reencrypt::Options::default())?;
//! r.run(&mut |_, _| {}, &|| false)?;
//! assert!(std::fs::read(&path)?[..3 << 20] == plain[..]);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;

use mdu_dmcrypt::{CipherSpec, Direction, Geometry, SectorCipher, WeakKeys};
use zeroize::Zeroizing;

use crate::format::new_keyslot;
use crate::image::ReadAt;
use crate::kdf::{Hash, Kdf};
use crate::metadata::{
    Digest, Metadata, ReencryptArea, ReencryptDirection, ReencryptKeyslot, ReencryptMode,
    Resilience, Segment,
};
use crate::{BinaryHeader, FormatParams, Image, Luks2Error, os_random};

/// The requirement a reencryption sets, but a decryption that moves the
/// data.
///
/// ```
/// assert_eq!(mdu_luks2::reencrypt::REQUIREMENT_V2, "online-reencrypt-v2");
/// ```
pub const REQUIREMENT_V2: &str = "online-reencrypt-v2";
/// The requirement of a decryption that moves the data down (its moved
/// segment is converted in place last).
///
/// ```
/// assert_eq!(mdu_luks2::reencrypt::REQUIREMENT_V3, "online-reencrypt-v3");
/// ```
pub const REQUIREMENT_V3: &str = "online-reencrypt-v3";

const PREVIOUS: &str = "backup-previous";
const FINAL: &str = "backup-final";
const MOVED: &str = "backup-moved-segment";
const HOT: &str = "in-reencryption";

/// The largest shift of the data this crate starts or resumes: every
/// hotzone of a shift is that long, and two are held in memory.
///
/// ```
/// assert_eq!(mdu_luks2::reencrypt::MAX_SHIFT, 1 << 30);
/// ```
pub const MAX_SHIFT: u64 = 1 << 30;

/// Iterations of the digest of the reencrypt keyslot (its input holds the
/// volume keys, so it needs no stretching; cryptsetup reads any count).
const RECORD_DIGEST_ITERATIONS: u32 = 1000;

fn bad(problem: impl Into<String>) -> Luks2Error {
    Luks2Error::Reencrypt {
        problem: problem.into(),
    }
}

/// The backup segment flagged `flag`, with its id.
fn backup<'a>(m: &'a Metadata, flag: &str) -> Option<(u32, &'a Segment)> {
    m.segments
        .iter()
        .find(|(_, s)| s.has_flag(flag))
        .map(|(&id, s)| (id, s))
}

/// Whether digest `d` is bound to segment `id`.
fn bound(m: &Metadata, d: Option<u32>, id: u32) -> bool {
    d.and_then(|d| m.digests.get(&d))
        .is_some_and(|d| d.segments.contains(&id))
}

/// Whether active segment `id` is a converted one: of the final kind,
/// and for `crypt` bound to the new key's digest and not to the old one's.
fn new_side(
    m: &Metadata,
    s: &Segment,
    id: u32,
    fin_kind: crate::SegmentKind,
    old_digest: Option<u32>,
    new_digest: Option<u32>,
) -> bool {
    s.kind == fin_kind
        && !s.has_flag(HOT)
        && (!s.is_crypt()
            || (bound(m, new_digest, id)
                && (old_digest == new_digest || !bound(m, old_digest, id))))
}

/// The digest bound to segment `id`.
fn digest_of(m: &Metadata, id: u32) -> Option<u32> {
    m.digests
        .iter()
        .find(|(_, d)| d.segments.contains(&id))
        .map(|(&d, _)| d)
}

/// The bytes cryptsetup's digest of the `reencrypt` keyslot covers (used as
/// the PBKDF2 password of that digest): the requirement version, the old
/// volume key (not for an encryption), the new one (not for a decryption,
/// nor when both sides share a digest), the keyslot's mode, direction and
/// area, and the backup segments.
///
/// ```
/// let m = mdu_luks2::Metadata::parse(include_str!("../tests/data/reencrypt-encrypt-datashift.json"), 16384)?;
/// let key: Vec<u8> = (0x40..0x80).collect();
/// let input = mdu_luks2::reencrypt::digest_input(&m, None, Some(&key))?;
/// assert_eq!(input.len(), 205);
/// assert!(m.digests[&1].matches(&input));
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
pub fn digest_input(
    m: &Metadata,
    old_key: Option<&[u8]>,
    new_key: Option<&[u8]>,
) -> Result<Zeroizing<Vec<u8>>, Luks2Error> {
    let r = m
        .reencrypt
        .as_ref()
        .ok_or_else(|| bad("the header records no reencryption"))?;
    let version = match m.config.reencrypt_requirement() {
        Some("online-reencrypt-v2") => b'2',
        Some("online-reencrypt-v3") => b'3',
        other => {
            return Err(Luks2Error::ReencryptDigest {
                problem: format!("requirement {other:?} has no digest version"),
            });
        }
    };
    let (prev_id, prev) = backup(m, PREVIOUS).ok_or_else(|| bad("no backup-previous segment"))?;
    let (fin_id, fin) = backup(m, FINAL).ok_or_else(|| bad("no backup-final segment"))?;
    let same_digest =
        digest_of(m, prev_id).is_some() && digest_of(m, prev_id) == digest_of(m, fin_id);
    let mut v = Zeroizing::new(Vec::with_capacity(256));
    v.extend_from_slice(&[b'v', version]);
    fn need<'k>(k: Option<&'k [u8]>, which: &str) -> Result<&'k [u8], Luks2Error> {
        k.ok_or_else(|| Luks2Error::ReencryptDigest {
            problem: format!("the {which} volume key is needed"),
        })
    }
    if r.mode != ReencryptMode::Encrypt {
        v.extend_from_slice(need(old_key, "old")?);
    }
    if r.mode != ReencryptMode::Decrypt && !same_digest {
        v.extend_from_slice(need(new_key, "new")?);
    }
    v.extend_from_slice(r.mode.name().as_bytes());
    v.extend_from_slice(r.direction.name().as_bytes());
    v.extend_from_slice(r.area.resilience.name().as_bytes());
    v.extend_from_slice(&r.area.offset.to_be_bytes());
    v.extend_from_slice(&r.area.size.to_be_bytes());
    match r.area.resilience {
        Resilience::Checksum { hash, sector_size }
        | Resilience::DatashiftChecksum {
            hash, sector_size, ..
        } => {
            v.extend_from_slice(hash.name().as_bytes());
            v.extend_from_slice(&sector_size.to_be_bytes());
        }
        _ => {}
    }
    if let Some(shift) = r.area.resilience.shift() {
        v.extend_from_slice(&shift.to_be_bytes());
    }
    let moved = backup(m, MOVED).map(|(_, s)| s);
    for s in [Some(prev), Some(fin), moved].into_iter().flatten() {
        v.extend_from_slice(s.kind.name().as_bytes());
        v.extend_from_slice(&s.offset.to_be_bytes());
        match s.size {
            Some(n) => v.extend_from_slice(&n.to_be_bytes()),
            None => v.extend_from_slice(b"dynamic"),
        }
        if s.is_crypt() {
            v.extend_from_slice(&s.iv_tweak.to_be_bytes());
            v.extend_from_slice(s.encryption.as_str().as_bytes());
            v.extend_from_slice(&s.sector_size.to_be_bytes());
        }
    }
    Ok(v)
}

/// Checks the digest of the `reencrypt` keyslot against the metadata and
/// the volume keys ([`digest_input`]).
///
/// ```
/// let m = mdu_luks2::Metadata::parse(include_str!("../tests/data/reencrypt-encrypt-datashift.json"), 16384)?;
/// let key: Vec<u8> = (0x40..0x80).collect();
/// assert!(mdu_luks2::reencrypt::verify_digest(&m, None, Some(&key)).is_ok());
/// assert!(mdu_luks2::reencrypt::verify_digest(&m, None, Some(&[0u8; 64])).is_err());
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
pub fn verify_digest(
    m: &Metadata,
    old_key: Option<&[u8]>,
    new_key: Option<&[u8]>,
) -> Result<(), Luks2Error> {
    let r = m
        .reencrypt
        .as_ref()
        .ok_or_else(|| bad("the header records no reencryption"))?;
    let input = digest_input(m, old_key, new_key)?;
    let digest = m
        .digests
        .values()
        .find(|d| d.keyslots.contains(&r.id))
        .ok_or_else(|| Luks2Error::ReencryptDigest {
            problem: format!("no digest lists reencrypt keyslot {}", r.id),
        })?;
    if digest.matches(&input) {
        Ok(())
    } else {
        Err(Luks2Error::ReencryptDigest {
            problem: format!(
                "the digest of reencrypt keyslot {} does not match its metadata and volume keys",
                r.id
            ),
        })
    }
}

/// What [`Reencryption::init`] converts to.
///
/// ```
/// use mdu_luks2::reencrypt::Plan;
/// # use mdu_luks2::*;
/// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
/// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// let plan = Plan::new_key(&Image::load(&image[..])?, None)?;
/// assert!(matches!(plan, Plan::Reencrypt { key_size: 64, sector_size: 512, .. }));
/// # Ok::<(), Luks2Error>(())
/// ```
#[derive(Clone, Debug)]
pub enum Plan {
    /// A new random volume key, with this cipher, key size and sector size,
    /// through the keyslot the passphrase opens (`key_slot`: only that
    /// one); the other keyslots of the old key are removed at the end.
    Reencrypt {
        /// The new cipher.
        cipher: CipherSpec,
        /// The new volume key size, bytes.
        key_size: usize,
        /// The new sector size.
        sector_size: u32,
        /// The keyslot to open and replace (`None`: the one the passphrase
        /// opens; the volume must then have one keyslot).
        key_slot: Option<u32>,
    },
    /// Encrypt a plaintext data device in place under a new detached
    /// header (written to the header file, which must be empty), with a
    /// new random volume key: the cipher, key size, sector size and keyslot
    /// KDF of these parameters (their data offset sets the keyslots area).
    Encrypt(FormatParams),
    /// Encrypt a plaintext device in place with its header at the start
    /// (`cryptsetup reencrypt --encrypt --reduce-device-size 2·s`): the
    /// data move up by `s` = `params.data_offset` to make room for the
    /// header, so the device must end in `2·s` bytes the data do not need
    /// (a file system shrunk by that much first). The first `s` bytes are
    /// copied to the last `s` before the header goes over them; the
    /// hotzones (`s` bytes each) then walk backward from the end of the
    /// data, each written `s` bytes above where it was read, so no hotzone
    /// overwrites bytes not yet converted (`datashift` resilience: a crash
    /// repeats the hotzone from its source). The copy is wiped at the end.
    EncryptShift(FormatParams),
    /// Decrypt the data device of a detached header in place; the header
    /// ends with one `linear` segment and no keyslots.
    Decrypt {
        /// The keyslot to open (`None`: any).
        key_slot: Option<u32>,
    },
    /// Decrypt a volume whose header is in the image, moving the data down
    /// to offset 0 (`cryptsetup reencrypt --decrypt --header NEW`): the
    /// header is first exported to the header file (empty), which keeps
    /// the record; the image's LUKS signatures are wiped and the first
    /// `s` bytes of ciphertext (`s` = the data offset) are copied over the
    /// old header. The hotzones then walk forward, each read at `s + o`
    /// and written at `o`; the copied segment is decrypted in place last,
    /// under checksums (`datashift-checksum`, `online-reencrypt-v3`). The
    /// last `s` bytes of the image are wiped at the end.
    DecryptShift {
        /// The keyslot to open (`None`: any).
        key_slot: Option<u32>,
    },
}

impl Plan {
    /// A new key for `img`'s data with its cipher, key size and sector
    /// size.
    ///
    /// # Errors
    ///
    /// [`Luks2Error::Requirements`] when a reencryption is already in
    /// progress; a cipher this crate does not run.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let plan = mdu_luks2::reencrypt::Plan::new_key(&Image::load(&image[..])?, Some(0))?;
    /// # Ok::<(), Luks2Error>(())
    /// ```
    pub fn new_key(img: &Image, key_slot: Option<u32>) -> Result<Plan, Luks2Error> {
        let (id, seg) = img.segment()?;
        let cipher = seg
            .encryption
            .spec_of(|| format!("segments.{id}.encryption"))?;
        let key_size = img
            .metadata
            .keyslots
            .values()
            .next()
            .map_or(64, |k| k.key_size as usize);
        Ok(Plan::Reencrypt {
            cipher,
            key_size,
            sector_size: seg.sector_size,
            key_slot,
        })
    }
}

/// How [`Reencryption::init`] protects each hotzone.
///
/// ```
/// let o = mdu_luks2::reencrypt::Options::default();
/// assert_eq!((o.resilience, o.hotzone_size), (mdu_luks2::reencrypt::ResilienceChoice::Checksum, None));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// What the keyslot area keeps of each hotzone.
    pub resilience: ResilienceChoice,
    /// The hash of `checksum` resilience.
    pub hash: Hash,
    /// The largest hotzone, bytes (`None`: 64 MiB, or what the area holds
    /// for `journal`).
    pub hotzone_size: Option<u64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            resilience: ResilienceChoice::Checksum,
            hash: Hash::Sha256,
            hotzone_size: None,
        }
    }
}

/// The resilience of a reencryption without a data shift.
///
/// ```
/// assert_eq!(mdu_luks2::reencrypt::ResilienceChoice::Journal.name(), "journal");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResilienceChoice {
    /// Hashes of the old blocks: a crash costs nothing, the area is small.
    Checksum,
    /// A copy of the old bytes: every byte is written twice.
    Journal,
    /// Nothing: a crash in the middle loses data, and nothing on disk says
    /// how far the run got.
    None,
}

impl ResilienceChoice {
    /// The name of the `reencrypt` area type.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::reencrypt::ResilienceChoice::None.name(), "none");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            ResilienceChoice::Checksum => "checksum",
            ResilienceChoice::Journal => "journal",
            ResilienceChoice::None => "none",
        }
    }
}

/// How [`Reencryption::run`] ended: the in-place engine's outcome.
///
/// ```
/// let o = mdu_luks2::reencrypt::Outcome::Interrupted { done: 4096, total: 8192 };
/// assert_ne!(o, mdu_luks2::reencrypt::Outcome::Finished);
/// ```
pub use mdu_inplace::Outcome;

/// One side of the conversion: ciphertext under a key, or plaintext.
struct Side {
    /// The backup segment describing it (its layout over the whole data).
    segment: Segment,
    /// Its volume key, for a `crypt` side.
    key: Option<Zeroizing<Vec<u8>>>,
    /// Its cipher, for a `crypt` side.
    cipher: Option<SectorCipher>,
    /// The digest of its key, for a `crypt` side.
    digest: Option<u32>,
}

impl Side {
    /// A `crypt` side under `key`, whose digest is `digest`.
    fn keyed(segment: Segment, key: Zeroizing<Vec<u8>>, digest: u32) -> Result<Side, Luks2Error> {
        let cipher = segment_cipher(&segment, &key)?;
        Ok(Side {
            segment,
            key: Some(key),
            cipher: Some(cipher),
            digest: Some(digest),
        })
    }

    /// A plaintext side laid out as `segment`.
    fn plain(segment: Segment) -> Side {
        Side {
            segment,
            key: None,
            cipher: None,
            digest: None,
        }
    }

    fn sector(&self) -> u64 {
        if self.segment.is_crypt() {
            u64::from(self.segment.sector_size)
        } else {
            512
        }
    }
}

/// A reencryption in progress over a header device and a data device (the
/// same file for a header inside the image). See the [module
/// documentation](self).
pub struct Reencryption {
    header_dev: File,
    data_dev: File,
    header: BinaryHeader,
    /// The metadata last committed, with the keyslots and digests.
    meta: Metadata,
    mode: ReencryptMode,
    area: ReencryptArea,
    old: Side,
    new: Side,
    /// Bytes of data (from the data offset of each side).
    size: u64,
    /// Converted bytes.
    done: u64,
    /// The hotzone length.
    hotzone: u64,
    /// The checksum or alignment block.
    block: u64,
    /// Keyslots of the old key, removed at the end.
    old_keyslots: Vec<u32>,
    /// With a data shift: the copy of the first `shift` bytes at the end
    /// of the device (`backup-moved-segment`); the hotzones then walk
    /// backward and `size` is the data kept.
    moved: Option<Segment>,
    /// Whether the record's digest was verified (false only for a
    /// clean-up whose old keyslots are gone: it then wipes nothing on the
    /// data device).
    verified: bool,
    /// Ranges of the keyslots area that the loaded header named to no one
    /// (what a killed command may have left there): refilled with random
    /// bytes just before the next header write, so a refused run writes
    /// nothing and the refill adds no sync point of its own.
    refill: Vec<(u64, u64)>,
    /// With a data shift: a hotzone converted whose conversion only the
    /// next commit records (its source stays intact until then).
    unrecorded: bool,
    /// Whether the final header is written.
    finished: bool,
}

impl std::fmt::Debug for Reencryption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reencryption")
            .field("mode", &self.mode)
            .field("area", &self.area)
            .field("size", &self.size)
            .field("done", &self.done)
            .field("hotzone", &self.hotzone)
            .finish_non_exhaustive()
    }
}

/// The lowest id free among `used`.
fn free_id(used: impl Iterator<Item = u32>) -> u32 {
    let used: Vec<u32> = used.collect();
    (0..).find(|i| !used.contains(i)).unwrap_or(0)
}

/// Reads exactly `buf.len()` bytes at `offset` of the `what` (named in
/// the error with the offset and length, a file that ends early too).
fn read_at(f: &File, what: &'static str, buf: &mut [u8], offset: u64) -> Result<(), Luks2Error> {
    FileExt::read_exact_at(f, buf, offset).map_err(|error| Luks2Error::ReadAt {
        what,
        offset,
        len: buf.len() as u64,
        error,
    })
}

fn write_at(f: &File, buf: &[u8], offset: u64) -> Result<(), Luks2Error> {
    f.write_all_at(buf, offset).map_err(Luks2Error::Io)
}

/// Writes both header copies with `seqid`, each synced before the next,
/// primary first.
fn write_header(
    dev: &File,
    template: &BinaryHeader,
    seqid: u64,
    m: &Metadata,
) -> Result<(), Luks2Error> {
    let copies = crate::format::header_copies(template, seqid, m)?;
    let (primary, secondary) = copies.split_at(copies.len() / 2);
    for (bytes, at) in [(primary, 0), (secondary, template.hdr_size)] {
        write_at(dev, bytes, at)?;
        dev.sync_data().map_err(Luks2Error::Io)?;
    }
    Ok(())
}

/// Fills `len` bytes at `offset` with random bytes.
pub(crate) fn wipe(dev: &File, offset: u64, len: u64) -> Result<(), Luks2Error> {
    let mut buf = vec![0u8; (len.min(1 << 20)) as usize];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(buf.len() as u64) as usize;
        os_random(&mut buf[..n])?;
        write_at(dev, &buf[..n], offset + at)?;
        at += n as u64;
    }
    Ok(())
}

/// Refuses a header that lies in the same file as its data when the data
/// would start inside the header or keyslots area (a detached header given
/// as the image: converting it would overwrite the header itself).
fn data_clear_of_header(
    header: &File,
    data: &File,
    hdr_size: u64,
    m: &Metadata,
    data_offset: u64,
) -> Result<(), Luks2Error> {
    use std::os::unix::fs::MetadataExt;
    let (h, d) = (header.metadata()?, data.metadata()?);
    let (_, area_end) = m.keyslots_area(hdr_size);
    if (h.dev(), h.ino()) == (d.dev(), d.ino()) && data_offset < area_end {
        return Err(bad(format!(
            "the data start at offset {data_offset}, inside the header and keyslots area of the same file (which ends at {area_end}): a detached header needs its data device given separately"
        )));
    }
    Ok(())
}

/// Refuses a device that carries a LUKS magic where either header copy
/// would be (a LUKS volume, or one whose encryption already began).
fn refuse_luks_signature(dev: &File) -> Result<(), Luks2Error> {
    use crate::header::{MAGIC_PRIMARY, MAGIC_SECONDARY};
    let len = data_len(dev)?;
    let mut magic = [0u8; 6];
    for at in std::iter::once(0).chain(crate::HEADER_SIZES) {
        if at + 6 <= len {
            read_at(dev, "data device", &mut magic, at)?;
            if magic == MAGIC_PRIMARY || magic == MAGIC_SECONDARY {
                return Err(bad(format!(
                    "the device carries a LUKS signature at offset {at}: it is a LUKS volume already (an encryption in progress is resumed, not started again)"
                )));
            }
        }
    }
    Ok(())
}

/// Whether `data`, which no longer loads as LUKS2, is the image whose
/// header `header` holds, in the middle of an export: its binary header
/// at 0, but for the magic, is the exported one (the same seqid and
/// checksum: a stale backup of the header differs), or its first `m`
/// bytes are already the copy of the ciphertext at `s`.
fn export_interrupted(data: &File, header: &File, s: u64, m: u64) -> Result<bool, Luks2Error> {
    let (mut a, mut b) = (
        vec![0u8; crate::BINARY_HEADER_LEN],
        vec![0u8; crate::BINARY_HEADER_LEN],
    );
    read_at(data, "data device", &mut a, 0)?;
    read_at(header, "header file", &mut b, 0)?;
    if a[6..] == b[6..] {
        return Ok(true);
    }
    same_bytes(data, 0, data, s, m)
}

/// Whether `len` bytes at `a_at` of `a` equal those at `b_at` of `b`.
fn same_bytes(a: &File, a_at: u64, b: &File, b_at: u64, len: u64) -> Result<bool, Luks2Error> {
    let (mut x, mut y) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    let mut at = 0;
    while at < len {
        let n = (len - at).min(1 << 20) as usize;
        read_at(a, "device", &mut x[..n], a_at + at)?;
        read_at(b, "data device", &mut y[..n], b_at + at)?;
        if x[..n] != y[..n] {
            return Ok(false);
        }
        at += n as u64;
    }
    Ok(true)
}

/// The bytes of checksums of `len` bytes in `block`-byte blocks, with the
/// longest hash (64 bytes).
fn checksum_len(len: u64, block: u64) -> u64 {
    len.div_ceil(block).saturating_mul(64)
}

/// Copies the first `len` bytes of `from` to the start of `to`.
fn copy_between(from: &File, to: &File, len: u64) -> Result<(), Luks2Error> {
    let mut buf = vec![0u8; len.min(16 << 20) as usize];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(buf.len() as u64) as usize;
        read_at(from, "data device", &mut buf[..n], at)?;
        write_at(to, &buf[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

/// Copies `len` bytes at `from` to `to` on `dev`, in pieces of 16 MiB.
fn copy_range(dev: &File, from: u64, to: u64, len: u64) -> Result<(), Luks2Error> {
    let mut buf = vec![0u8; len.min(16 << 20) as usize];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(buf.len() as u64) as usize;
        read_at(dev, "data device", &mut buf[..n], from + at)?;
        write_at(dev, &buf[..n], to + at)?;
        at += n as u64;
    }
    Ok(())
}

fn data_len(f: &File) -> Result<u64, Luks2Error> {
    Ok(ReadAt::image_len(f)?)
}

/// The cipher of a `crypt` segment under `key`.
fn segment_cipher(seg: &Segment, key: &[u8]) -> Result<SectorCipher, Luks2Error> {
    let spec = seg
        .encryption
        .spec_of(|| "a backup segment's encryption".into())?;
    let geometry = Geometry::new(seg.sector_size, 0, false)?;
    Ok(SectorCipher::new(spec, key, geometry, WeakKeys::Allow)?)
}

impl Reencryption {
    /// Starts a reencryption: writes the header of its first state (for
    /// [`Plan::Reencrypt`], first the new keyslot, unbound, then the record;
    /// for [`Plan::Encrypt`], the new header in one write) and returns it
    /// ready to [`run`](Self::run). The passphrase opens the old key and
    /// keeps the new one. `header` and `data` are the same file for a
    /// header inside the image (two handles); for [`Plan::Encrypt`],
    /// `header` is the empty file the detached header goes to.
    ///
    /// # Errors
    ///
    /// A wrong passphrase, a volume already in reencryption
    /// ([`Luks2Error::Requirements`]), no room in the keyslots area, a
    /// data size that is not a whole number of sectors: all before anything
    /// is written.
    pub fn init(
        header: File,
        data: File,
        passphrase: &[u8],
        plan: &Plan,
        options: &Options,
    ) -> Result<Reencryption, Luks2Error> {
        match plan {
            Plan::Encrypt(params) => Self::init_encrypt(header, data, passphrase, params, options),
            Plan::EncryptShift(params) => Self::init_shift(header, data, passphrase, params),
            Plan::DecryptShift { key_slot } => {
                Self::init_decrypt_shift(header, data, passphrase, *key_slot, options)
            }
            Plan::Reencrypt { .. } | Plan::Decrypt { .. } => {
                Self::init_in_header(header, data, passphrase, plan, options)
            }
        }
    }

    fn init_in_header(
        header: File,
        data: File,
        passphrase: &[u8],
        plan: &Plan,
        options: &Options,
    ) -> Result<Reencryption, Luks2Error> {
        let img = Image::load(&header)?;
        let mut refill = img.free_areas();
        let (_, seg) = img.segment()?;
        let seg = seg.clone();
        data_clear_of_header(&header, &data, img.hdr_size(), &img.metadata, seg.offset)?;
        let detached = seg.offset == 0;
        if matches!(plan, Plan::Decrypt { .. }) && !detached {
            return Err(bad(
                "decryption in place of a header inside the image moves the data (datashift); only a detached header (data offset 0) is decrypted in place",
            ));
        }
        let key_slot = match plan {
            Plan::Reencrypt { key_slot, .. }
            | Plan::Decrypt { key_slot }
            | Plan::DecryptShift { key_slot } => *key_slot,
            Plan::Encrypt(_) | Plan::EncryptShift(_) => None,
        };
        let key = match key_slot {
            Some(s) => img.unlock_slot(&header, s, passphrase)?,
            None => img.unlock(&header, passphrase)?,
        };
        let old_digest = key.digest;
        let old_keyslots = img.metadata.digests[&old_digest].keyslots.clone();
        if key_slot.is_none() && old_keyslots.len() > 1 {
            return Err(bad(format!(
                "the old key is kept by keyslots {old_keyslots:?}: name the one to keep with a key slot (the others are removed at the end)"
            )));
        }
        // (the old key opens the data: checked before anything is written)
        segment_cipher(&seg, &key.key)?;
        let mut meta = img.metadata.clone();
        let mut seqid = img.header.seqid;
        let mut prev = seg.clone();
        prev.flags = vec![PREVIOUS.into()];
        let (mode, fin, new_cipher, new_digest) = match plan {
            Plan::Reencrypt {
                cipher,
                key_size,
                sector_size,
                ..
            } => {
                let mut new_key = Zeroizing::new(vec![0u8; *key_size]);
                os_random(&mut new_key)?;
                cipher.check_key(&new_key, WeakKeys::Refuse)?;
                // The new keyslot: the opened one's KDF with a new salt, in
                // the first free gap that holds its material.
                let old_ks = &meta.keyslots[&key.slot];
                let mut salt = vec![0u8; 32];
                os_random(&mut salt)?;
                let kdf = match &old_ks.kdf {
                    Kdf::Pbkdf2 {
                        hash, iterations, ..
                    } => Kdf::Pbkdf2 {
                        hash: *hash,
                        iterations: *iterations,
                        salt,
                    },
                    Kdf::Argon2 {
                        variant,
                        time,
                        memory,
                        cpus,
                        ..
                    } => Kdf::Argon2 {
                        variant: *variant,
                        time: *time,
                        memory: *memory,
                        cpus: *cpus,
                        salt,
                    },
                };
                let area_size =
                    ((*key_size as u64) * u64::from(crate::AF_STRIPES)).div_ceil(4096) * 4096;
                let (area_offset, _) = meta
                    .free_areas(img.hdr_size())
                    .into_iter()
                    .find(|&(o, n)| o.is_multiple_of(4096) && n >= area_size)
                    .ok_or_else(|| bad("no room in the keyslots area for the new keyslot"))?;
                let slot = free_id(meta.keyslots.keys().copied());
                let (keyslot, material) = new_keyslot(
                    kdf,
                    *cipher,
                    passphrase,
                    &new_key,
                    (area_offset, area_size),
                    slot,
                    &mut os_random,
                )?;
                let digest_id = free_id(meta.digests.keys().copied());
                let old_iter = meta.digests[&old_digest].iterations;
                let mut dsalt = vec![0u8; 32];
                os_random(&mut dsalt)?;
                let digest =
                    Digest::of_key(&new_key, Hash::Sha256, old_iter, dsalt, vec![slot], vec![]);
                meta.keyslots.insert(slot, keyslot);
                meta.digests.insert(digest_id, digest);
                // What a killed command left unnamed goes before the first
                // header write (which syncs it).
                for (offset, len) in std::mem::take(&mut refill) {
                    wipe(&header, offset, len)?;
                }
                // Commit 1: the new keyslot, unbound (opens no data yet).
                wipe(&header, area_offset, area_size)?;
                write_at(&header, &material, area_offset)?;
                seqid += 1;
                write_header(&header, &img.header, seqid, &meta)?;
                let mut fin = Segment::crypt(seg.offset, None, 0, *cipher, *sector_size);
                fin.flags = vec![FINAL.into()];
                let c = segment_cipher(&fin, &new_key)?;
                (
                    ReencryptMode::Reencrypt,
                    fin,
                    Some((new_key, c)),
                    Some(digest_id),
                )
            }
            Plan::Decrypt { .. } => {
                let mut fin = Segment::linear(seg.offset, None);
                fin.flags = vec![FINAL.into()];
                (ReencryptMode::Decrypt, fin, None, None)
            }
            Plan::Encrypt(_) | Plan::EncryptShift(_) | Plan::DecryptShift { .. } => {
                return Err(bad("not a conversion of the data in place"));
            }
        };
        let old = Side::keyed(prev, key.key, old_digest)?;
        let (new_key, new_cipher) = new_cipher.unzip();
        let new = Side {
            segment: fin,
            key: new_key,
            cipher: new_cipher,
            digest: new_digest,
        };
        let mut r = Self::start(
            header,
            data,
            img.header,
            meta,
            mode,
            old,
            new,
            old_keyslots,
            None,
            options,
        )?;
        r.refill = refill;
        r.commit(0, 0, seqid + 1)?;
        Ok(r)
    }

    fn init_encrypt(
        header: File,
        data: File,
        passphrase: &[u8],
        params: &FormatParams,
        options: &Options,
    ) -> Result<Reencryption, Luks2Error> {
        if data_len(&header)? != 0 {
            return Err(bad("the detached header file must be empty"));
        }
        let mut key = Zeroizing::new(vec![0u8; params.key_size]);
        os_random(&mut key)?;
        let region = crate::format_detached(params, passphrase, &key, &mut os_random)?;
        let img = Image::load(&region[..])?;
        let mut meta = img.metadata.clone();
        let cipher = params.cipher;
        let mut fin = Segment::crypt(0, None, 0, cipher, params.sector_size);
        fin.flags = vec![FINAL.into()];
        let mut prev = Segment::linear(0, None);
        prev.flags = vec![PREVIOUS.into()];
        // The region as formatted (keyslot material, random fill); its
        // header copies are rewritten by the first commit below.
        meta.segments.clear();
        meta.segments.insert(0, Segment::linear(0, None));
        meta.digests
            .get_mut(&0)
            .expect("format makes digest 0")
            .segments = vec![0];
        let (old, new) = (Side::plain(prev), Side::keyed(fin, key, 0)?);
        // The keyslots area first, with both header copies left zero: the
        // formatted copies describe the data as encrypted already, and a
        // crash before `start` commits the record must not leave a header
        // that opens plaintext as ciphertext.
        let mut region = region;
        let copies = (2 * img.header.hdr_size) as usize;
        region[..copies].fill(0);
        write_at(&header, &region, 0)?;
        let mut r = Self::start(
            header,
            data,
            img.header,
            meta,
            ReencryptMode::Encrypt,
            old,
            new,
            Vec::new(),
            None,
            options,
        )?;
        r.commit(0, 0, 1)?;
        Ok(r)
    }

    fn init_decrypt_shift(
        header: File,
        data: File,
        passphrase: &[u8],
        key_slot: Option<u32>,
        options: &Options,
    ) -> Result<Reencryption, Luks2Error> {
        use std::os::unix::fs::MetadataExt;
        let (h, d) = (header.metadata()?, data.metadata()?);
        if (h.dev(), h.ino()) == (d.dev(), d.ino()) {
            return Err(bad(
                "a decryption that moves the data exports the header: the header file must be another file",
            ));
        }
        // A new export, or one interrupted before its record was written.
        // While IMAGE still has its header, it is the one exported (the
        // header file may only hold a part of it, from an interrupted
        // copy); once its magics are gone, the header file is taken only
        // if it is this image's header (see `export_interrupted`).
        let in_image = Image::load(&data).ok();
        let exported = data_len(&header)? != 0 && in_image.is_none();
        if let Some(img) = &in_image
            && data_len(&header)? != 0
        {
            // Ours, cut short; or an export of this very header (the same
            // metadata, as cryptsetup's export is): written again. A stale
            // backup (other keyslots or digests) is refused.
            let region_len = img.metadata.keyslots_area(img.hdr_size()).1;
            let n = data_len(&header)?.min(region_len);
            let same_header = Image::load(&header)
                .is_ok_and(|h| h.header.uuid == img.header.uuid && h.metadata == img.metadata);
            if !same_header && !same_bytes(&header, 0, &data, 0, n)? {
                return Err(bad(
                    "the header file exists and is not a copy of this image's header: give a new file (it receives the exported header)",
                ));
            }
        }
        let img = match in_image {
            Some(img) => img,
            None => Image::load(&header)?,
        };
        if img.metadata.reencrypt.is_some() {
            return Err(Luks2Error::Requirements {
                requirements: img.metadata.config.requirements.clone().unwrap_or_default(),
            });
        }
        let (_, seg) = img.segment()?;
        let seg = seg.clone();
        let s = seg.offset;
        let hdr = img.hdr_size();
        let region_len = img.metadata.keyslots_area(hdr).1;
        if s == 0 || s < region_len {
            return Err(bad(format!(
                "the data start at {s}: only a header inside the image, before the data, is exported and the data moved down"
            )));
        }
        let key = match key_slot {
            Some(k) => img.unlock_slot(if exported { &header } else { &data }, k, passphrase)?,
            None => img.unlock(if exported { &header } else { &data }, passphrase)?,
        };
        let total = data_len(&data)?;
        let block = u64::from(seg.sector_size).max(4096);
        let size = total
            .checked_sub(s)
            .filter(|&n| n > s && n.is_multiple_of(block) && s.is_multiple_of(block))
            .ok_or_else(|| {
                bad(format!(
                    "the image ({total} bytes) holds less than twice the data offset ({s}), or not whole {block}-byte blocks"
                ))
            })?;
        // The whole shift is moved: a resume by cryptsetup 2.6 then takes
        // the same hotzones.
        let m = s;
        if s > MAX_SHIFT {
            return Err(bad(format!(
                "the data offset ({s} bytes) is above {MAX_SHIFT}, the largest shift (each hotzone is held in memory twice)"
            )));
        }
        let sums = checksum_len(m, block);
        let area_room = img
            .metadata
            .free_areas(hdr)
            .into_iter()
            .filter(|&(o, _)| o.is_multiple_of(4096))
            .map(|(_, n)| n)
            .max()
            .unwrap_or(0);
        if sums > area_room {
            return Err(bad(format!(
                "the keyslots area has {area_room} bytes free, too few for the {sums} bytes of checksums of the {m}-byte moved segment"
            )));
        }
        if exported && !export_interrupted(&data, &header, s, m)? {
            return Err(bad(
                "the header file exists and is not an interrupted export of this image's header: give a new file (a detached header's data are decrypted with it as --header, in place); if this image's header was exported to it and its signature wiped, `cryptsetup luksHeaderRestore` puts it back",
            ));
        }
        // The sides of the run (its cipher checked) before any write.
        let old_digest = key.digest;
        let old_keyslots = img.metadata.digests[&old_digest].keyslots.clone();
        let mut prev = seg.clone();
        prev.flags = vec![PREVIOUS.into()];
        let mut fin = Segment::linear(0, None);
        fin.flags = vec![FINAL.into()];
        let mut moved = Segment {
            offset: 0,
            size: Some(m),
            iv_tweak: 0,
            ..seg.clone()
        };
        moved.flags = vec![MOVED.into()];
        let old = Side::keyed(prev, key.key, old_digest)?;
        if !exported {
            // 1. The header region, verbatim, to the header file.
            copy_between(&data, &header, region_len)?;
            header.sync_all().map_err(Luks2Error::Io)?;
        }
        // What a killed command left unnamed does not travel with the
        // exported header.
        for (offset, len) in img.free_areas() {
            wipe(&header, offset, len)?;
        }
        // 2. The image stops being a LUKS volume: its magics go (the rest
        // of the binary header, with its UUID, stays until step 3).
        for at in [0, hdr] {
            write_at(&data, &[0u8; 6], at)?;
        }
        data.sync_data().map_err(Luks2Error::Io)?;
        // 3. The first `m` bytes of ciphertext over the old header, the
        // block holding the binary header last.
        copy_range(&data, s + 4096, 4096, m - 4096)?;
        data.sync_data().map_err(Luks2Error::Io)?;
        copy_range(&data, s, 0, 4096)?;
        data.sync_data().map_err(Luks2Error::Io)?;
        // 4. The record, in the exported header.
        let mut meta = img.metadata.clone();
        meta.segments.clear();
        let mut r = Self::start(
            header,
            data,
            img.header.clone(),
            meta,
            ReencryptMode::Decrypt,
            old,
            Side::plain(fin),
            old_keyslots,
            Some(moved),
            options,
        )?;
        debug_assert_eq!(r.size, size);
        r.commit(m, 0, img.header.seqid + 1)?;
        Ok(r)
    }

    fn init_shift(
        header: File,
        data: File,
        passphrase: &[u8],
        params: &FormatParams,
    ) -> Result<Reencryption, Luks2Error> {
        use std::os::unix::fs::MetadataExt;
        let (h, d) = (header.metadata()?, data.metadata()?);
        if (h.dev(), h.ino()) != (d.dev(), d.ino()) {
            return Err(bad(
                "an encryption with a data shift puts the header at the start of the data device: give the device as both",
            ));
        }
        params.validate()?;
        refuse_luks_signature(&data)?;
        let s = params.data_offset;
        if s > MAX_SHIFT {
            return Err(bad(format!(
                "a shift of {s} bytes is above {MAX_SHIFT}, the largest (each hotzone is held in memory twice)"
            )));
        }
        let total = data_len(&data)?;
        let block = u64::from(params.sector_size).max(4096);
        let kept = total
            .checked_sub(2 * s)
            .filter(|&k| k >= s)
            .ok_or_else(|| {
                bad(format!(
                    "the device ({total} bytes) is smaller than three times the shift of {s} bytes: it must hold the header, the data and a copy of their first {s} bytes"
                ))
            })?;
        if !kept.is_multiple_of(block) {
            return Err(bad(format!(
                "the data kept ({kept} bytes: the device less twice the shift) are not a whole number of {block}-byte blocks"
            )));
        }
        Self::shift_header(header, data, passphrase, params, total, kept, true)
    }

    /// Writes the first state of an encryption with a data shift under a
    /// new key; with `copy`, first the copy of the first `s` bytes (not
    /// when an interrupted start is redone: the copy then holds them).
    fn shift_header(
        header: File,
        data: File,
        passphrase: &[u8],
        params: &FormatParams,
        total: u64,
        kept: u64,
        copy: bool,
    ) -> Result<Reencryption, Luks2Error> {
        let s = params.data_offset;
        let mut key = Zeroizing::new(vec![0u8; params.key_size]);
        os_random(&mut key)?;
        let mut region = crate::format(params, passphrase, &key, &mut os_random)?;
        // A shift beyond the largest keyslots area: the bytes between the
        // area and the data are zeroed (they held plaintext).
        region.resize(s as usize, 0);
        let img = Image::load(&region[..])?;
        let mut meta = img.metadata.clone();
        let mut fin = Segment::crypt(s, None, 0, params.cipher, params.sector_size);
        fin.flags = vec![FINAL.into()];
        let mut prev = Segment::linear(0, Some(kept));
        prev.flags = vec![PREVIOUS.into()];
        let mut moved = Segment::linear(total - s, Some(s));
        moved.flags = vec![MOVED.into()];
        meta.segments.clear();
        meta.digests
            .get_mut(&0)
            .expect("format makes digest 0")
            .segments
            .clear();
        let (old, new) = (Side::plain(prev), Side::keyed(fin, key, 0)?);
        let mut r = Self::start(
            header,
            data,
            img.header,
            meta,
            ReencryptMode::Encrypt,
            old,
            new,
            Vec::new(),
            Some(moved),
            &Options::default(),
        )?;
        r.write_shift_init(&region, 1, copy)?;
        Ok(r)
    }

    /// Redoes the start of an encryption with a data shift that was
    /// interrupted before its primary header copy was written: the keyslot
    /// material behind the secondary copy may be incomplete, so no
    /// passphrase can be trusted to open it, but nothing is encrypted yet
    /// and the first `s` bytes are in the moved copy. A new key and header
    /// are written with the parameters the secondary copy records.
    fn redo_shift_start(
        header: File,
        data: File,
        passphrase: &[u8],
        img: &Image,
        s: u64,
        kept: u64,
        total: u64,
    ) -> Result<Reencryption, Luks2Error> {
        let m = &img.metadata;
        let (_, fin) = backup(m, FINAL).ok_or_else(|| bad("no backup-final segment"))?;
        let ks = m
            .keyslots
            .values()
            .next()
            .ok_or_else(|| bad("the interrupted start has no keyslot"))?;
        let kdf = match &ks.kdf {
            Kdf::Pbkdf2 {
                hash, iterations, ..
            } => crate::KdfParams::Pbkdf2 {
                hash: *hash,
                iterations: *iterations,
            },
            Kdf::Argon2 {
                variant,
                time,
                memory,
                cpus,
                ..
            } => crate::KdfParams::Argon2 {
                variant: *variant,
                time: *time,
                memory: *memory,
                cpus: *cpus,
            },
        };
        let params = FormatParams {
            cipher: fin
                .encryption
                .spec_of(|| "the backup-final segment's encryption".into())?,
            key_size: ks.key_size as usize,
            sector_size: fin.sector_size,
            kdf,
            digest_iterations: m
                .digests
                .values()
                .map(|d| d.iterations)
                .max()
                .unwrap_or(1000)
                .max(1000),
            uuid: Some(img.header.uuid.clone()),
            label: img.header.label.clone(),
            subsystem: img.header.subsystem.clone(),
            hdr_size: img.hdr_size(),
            data_offset: s,
            ..FormatParams::default()
        };
        Self::shift_header(header, data, passphrase, &params, total, kept, false)
    }

    /// The first state of an encryption with a data shift, in an order in
    /// which every kill leaves the first `s` bytes somewhere a header
    /// names, or untouched: (1) the copy of the first `s` bytes to the end
    /// of the device, synced; (2) the secondary header copy, which
    /// describes the data where they are (its first `s` bytes in the copy):
    /// from here on the device is a LUKS2 volume in reencryption and a new
    /// start is refused; (3) the keyslots area; (4) the primary copy.
    fn write_shift_init(
        &mut self,
        region: &[u8],
        seqid: u64,
        copy: bool,
    ) -> Result<(), Luks2Error> {
        let moved = self.moved.clone().expect("a shift run");
        let s = self.new.segment.offset;
        if copy {
            copy_range(&self.data_dev, 0, moved.offset, s)?;
            self.data_dev.sync_data().map_err(Luks2Error::Io)?;
        }
        let m = self.metadata_at(self.size, 0);
        let copies = crate::format::header_copies(&self.header, seqid, &m)?;
        let hdr = self.header.hdr_size as usize;
        let dev = &self.header_dev;
        for (bytes, at) in [
            (&copies[hdr..], hdr),
            (&region[2 * hdr..], 2 * hdr),
            (&copies[..hdr], 0),
        ] {
            write_at(dev, bytes, at as u64)?;
            dev.sync_data().map_err(Luks2Error::Io)?;
        }
        self.header.seqid = seqid;
        Ok(())
    }

    /// Adds the record (reencrypt keyslot, its digest, the backups, the
    /// requirement) to `meta` and commits it.
    #[allow(clippy::too_many_arguments)]
    fn start(
        header_dev: File,
        data_dev: File,
        header: BinaryHeader,
        mut meta: Metadata,
        mode: ReencryptMode,
        old: Side,
        new: Side,
        old_keyslots: Vec<u32>,
        moved: Option<Segment>,
        options: &Options,
    ) -> Result<Reencryption, Luks2Error> {
        let block = old.sector().max(new.sector()).max(4096);
        let gaps = meta
            .free_areas(header.hdr_size)
            .into_iter()
            .filter(|&(o, _)| o.is_multiple_of(4096));
        // A data shift needs no copy of the old bytes: one block of area,
        // as cryptsetup allots; otherwise the largest gap.
        let up = moved.is_some() && mode == ReencryptMode::Encrypt;
        let (area_offset, area_size) = if up {
            gaps.filter(|&(_, n)| n >= 4096)
                .map(|(o, _)| (o, 4096))
                .next()
        } else {
            gaps.max_by_key(|&(_, n)| n)
        }
        .ok_or_else(|| bad("no room in the keyslots area for the reencryption record"))?;
        let (resilience, direction) = match (&moved, options.resilience) {
            (Some(_), _) if up => (
                Resilience::Datashift {
                    shift: new.segment.offset,
                },
                ReencryptDirection::Backward,
            ),
            (Some(_), _) => (
                Resilience::DatashiftChecksum {
                    hash: options.hash,
                    sector_size: block as u32,
                    shift: old.segment.offset,
                },
                ReencryptDirection::Forward,
            ),
            (None, ResilienceChoice::Checksum) => (
                Resilience::Checksum {
                    hash: options.hash,
                    sector_size: block as u32,
                },
                ReencryptDirection::Forward,
            ),
            (None, ResilienceChoice::Journal) => (Resilience::Journal, ReencryptDirection::Forward),
            (None, ResilienceChoice::None) => (Resilience::None, ReencryptDirection::Forward),
        };
        let area = ReencryptArea {
            offset: area_offset,
            size: area_size,
            resilience,
        };
        let id = free_id(meta.keyslots.keys().copied());
        let reenc = ReencryptKeyslot {
            id,
            area: area.clone(),
            mode,
            direction,
            priority: Some(0),
        };
        meta.reencrypt = Some(reenc);
        let mut requirements = meta.config.requirements.clone().unwrap_or_default();
        requirements.push(if moved.is_some() && !up {
            REQUIREMENT_V3.into()
        } else {
            REQUIREMENT_V2.into()
        });
        meta.config.requirements = Some(requirements);
        let data_offset = new.segment.offset;
        let total = data_len(&data_dev)?;
        let size = match old.segment.size {
            // A shift up: the data kept, before the moved copy.
            Some(kept) => kept,
            // A shift down: the data after the old header.
            None if moved.is_some() => total.saturating_sub(old.segment.offset),
            None => total
                .checked_sub(data_offset)
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    bad(format!(
                        "the data device ({total} bytes) holds no data past offset {data_offset}"
                    ))
                })?,
        };
        if !size.is_multiple_of(block) {
            return Err(bad(format!(
                "the data ({size} bytes) are not a whole number of {block}-byte blocks"
            )));
        }
        let mut r = Reencryption {
            header_dev,
            data_dev,
            header,
            meta,
            mode,
            area,
            old,
            new,
            size,
            done: 0,
            hotzone: 0,
            block,
            old_keyslots,
            moved,
            verified: true,
            refill: Vec::new(),
            unrecorded: false,
            finished: false,
        };
        r.hotzone = r.hotzone_len(options.hotzone_size)?;
        // The record's digest over the keys and the backups.
        let m = r.metadata_at(0, 0);
        let input = digest_input(&m, r.key(&r.old), r.key(&r.new))?;
        let digest_id = free_id(r.meta.digests.keys().copied());
        let mut salt = vec![0u8; 32];
        os_random(&mut salt)?;
        let d = Digest::of_key(
            &input,
            Hash::Sha256,
            RECORD_DIGEST_ITERATIONS,
            salt,
            vec![id],
            vec![],
        );
        r.meta.digests.insert(digest_id, d);
        Ok(r)
    }

    /// Opens a reencryption in progress, whoever started it (this crate or
    /// cryptsetup), checks its record against the keys the passphrase
    /// opens, and repairs the hotzone a crash left (`in-reencryption`):
    /// from the journal copy, or block by block where the checksum says
    /// the old bytes are still there. It is then ready to
    /// [`run`](Self::run) from where the record says.
    ///
    /// A run with `none` resilience records no progress: resuming it is
    /// refused unless `allow_none` (it restarts from the last recorded
    /// position, and converts again what a killed run converted after it).
    ///
    /// # Errors
    ///
    /// No reencryption in progress; a record whose digest does not match
    /// ([`Luks2Error::ReencryptDigest`]); segments that are not exactly a
    /// state of the run the record describes (forward, backward as
    /// cryptsetup decrypts with a detached header, or moving the data).
    pub fn resume(
        header: File,
        data: File,
        passphrase: &[u8],
        hotzone_size: Option<u64>,
        allow_none: bool,
    ) -> Result<Reencryption, Luks2Error> {
        let img = Image::load(&header)?;
        let m = img.metadata.clone();
        let r = m
            .reencrypt
            .clone()
            .ok_or_else(|| bad("the header records no reencryption in progress"))?;
        let shift_run = backup(&m, MOVED).is_some();
        let want = if shift_run && r.mode == ReencryptMode::Decrypt {
            REQUIREMENT_V3
        } else {
            REQUIREMENT_V2
        };
        if m.config.reencrypt_requirement() != Some(want) {
            return Err(bad(format!(
                "requirement {:?}: a {} run is resumed under {want}",
                m.config.reencrypt_requirement(),
                r.mode.name()
            )));
        }
        match (r.direction, r.area.resilience, r.mode, shift_run) {
            (
                ReencryptDirection::Forward,
                Resilience::Checksum { .. } | Resilience::Journal | Resilience::None,
                _,
                false,
            )
            | (
                ReencryptDirection::Backward,
                Resilience::Datashift { .. },
                ReencryptMode::Encrypt,
                true,
            )
            | (
                ReencryptDirection::Forward,
                Resilience::DatashiftChecksum { .. },
                ReencryptMode::Decrypt,
                true,
            )
            | (
                ReencryptDirection::Backward,
                Resilience::Checksum { .. } | Resilience::Journal | Resilience::None,
                ReencryptMode::Decrypt,
                false,
            ) => {}
            (d, res, _, _) => {
                return Err(bad(format!(
                    "a {} run with {} resilience is not resumed by this version (cryptsetup reencrypt --resume-only finishes it)",
                    d.name(),
                    res.name()
                )));
            }
        }
        if r.area.resilience == Resilience::None && !allow_none {
            return Err(bad(
                "the run uses resilience none, which records no progress: a resume restarts at the recorded position and converts again what was converted after it, destroying that data if the run was killed; resume only if it was stopped cleanly",
            ));
        }
        let (prev_id, prev) =
            backup(&m, PREVIOUS).ok_or_else(|| bad("no backup-previous segment"))?;
        let (fin_id, fin) = backup(&m, FINAL).ok_or_else(|| bad("no backup-final segment"))?;
        let (prev, fin) = (prev.clone(), fin.clone());
        let total = data_len(&data)?;
        let moved = match backup(&m, MOVED) {
            None if prev.offset != fin.offset || prev.size.is_some() || fin.size.is_some() => {
                return Err(bad(
                    "the backup segments describe a data shift or a fixed size",
                ));
            }
            None => None,
            Some((_, moved)) if r.mode == ReencryptMode::Decrypt => {
                // cryptsetup's in-place decryption: the data at `s` move
                // down to 0; the first `m` bytes of ciphertext were copied
                // to 0 (over the old header) and are converted last.
                let s = r.area.resilience.shift().unwrap_or(0);
                let m_len = moved.size.unwrap_or(0);
                if s == 0
                    || !prev.is_crypt()
                    || prev.offset != s
                    || prev.size.is_some()
                    || prev.iv_tweak != 0
                    || fin.is_crypt()
                    || fin.offset != 0
                    || fin.size.is_some()
                    || !moved.is_crypt()
                    || moved.offset != 0
                    || moved.iv_tweak != 0
                    || m_len == 0
                    || m_len > s
                    || moved.encryption != prev.encryption
                    || moved.sector_size != prev.sector_size
                    || s.checked_add(m_len).is_none_or(|e| total <= e)
                {
                    return Err(bad(format!(
                        "the backup segments are not the layout of a decryption that moves the data over this device ({total} bytes)"
                    )));
                }
                Some(moved.clone())
            }
            Some((_, moved)) => {
                // cryptsetup's layout of `--reduce-device-size`: the data
                // kept at 0, moving up by the shift `s`, their first `s`
                // bytes copied to the last `s` of the device.
                let s = r.area.resilience.shift().unwrap_or(0);
                let kept = prev.size.unwrap_or(0);
                if s == 0
                    || prev.offset != 0
                    || fin.offset != s
                    || fin.size.is_some()
                    || moved.is_crypt()
                    || moved.size != Some(s)
                    || kept.checked_add(s) != Some(moved.offset)
                    || moved.offset.checked_add(s) != Some(total)
                    || kept < s
                {
                    return Err(bad(format!(
                        "the backup segments are not the layout of an encryption with a data shift over this device ({total} bytes)"
                    )));
                }
                // Started but its primary copy never written: redo the
                // start when nothing else has happened.
                let first = [
                    Segment::linear(moved.offset, Some(s)),
                    Segment::linear(s, Some(kept - s)),
                ];
                let active: Vec<&Segment> =
                    m.segments.values().filter(|x| !x.is_backup()).collect();
                // (its start still the plaintext the copy holds)
                if matches!(img.primary_error, Some(Luks2Error::BadMagic { offset: 0 }))
                    && active.len() == 2
                    && active.iter().zip(&first).all(|(a, b)| *a == b)
                    && same_bytes(&data, 0, &data, moved.offset, img.hdr_size().min(s))?
                {
                    return Self::redo_shift_start(header, data, passphrase, &img, s, kept, total);
                }
                Some(moved.clone())
            }
        };
        let want_kinds = match r.mode {
            ReencryptMode::Encrypt => (false, true),
            ReencryptMode::Decrypt => (true, false),
            ReencryptMode::Reencrypt => (true, true),
        };
        if (prev.is_crypt(), fin.is_crypt()) != want_kinds {
            return Err(bad(format!(
                "the backup segments do not fit mode {}",
                r.mode.name()
            )));
        }
        let old_digest = digest_of(&m, prev_id).filter(|_| prev.is_crypt());
        let new_digest = digest_of(&m, fin_id).filter(|_| fin.is_crypt());
        let open = |d: Option<u32>| -> Result<Option<Zeroizing<Vec<u8>>>, Luks2Error> {
            d.map(|d| {
                img.unlock_digest(&header, d, None, passphrase)
                    .map(|k| k.key)
            })
            .transpose()
        };
        // Converted to the end but not torn down (cryptsetup's post-final
        // state, where its clean-up may already have removed the old
        // keyslots): only the new key is needed, and no data move.
        let active_ids: Vec<u32> = m
            .segments
            .iter()
            .filter(|(_, s)| !s.is_backup())
            .map(|(&i, _)| i)
            .collect();
        let teardown_only = match active_ids[..] {
            [id] => {
                let s = &m.segments[&id];
                s.offset == fin.offset
                    && s.size.is_none()
                    && new_side(&m, s, id, fin.kind, old_digest, new_digest)
            }
            _ => false,
        };
        // Whether the record's digest was checked (a clean-up whose old
        // keyslots are gone cannot be: it then writes nothing outside the
        // header).
        let mut verified = true;
        let (old_key, new_key) = if teardown_only {
            let new_key = open(new_digest)?;
            let old_kept = old_digest
                .and_then(|d| m.digests.get(&d))
                .is_some_and(|d| !d.keyslots.is_empty());
            // (cryptsetup's clean-up may have wiped the old keyslots'
            // areas already: then the old key no longer opens)
            let old_key = if old_kept {
                open(old_digest).ok().flatten()
            } else {
                None
            };
            if old_digest.is_none() || old_key.is_some() {
                verify_digest(
                    &m,
                    old_key.as_deref().map(|k| &k[..]),
                    new_key.as_deref().map(|k| &k[..]),
                )?;
            } else {
                verified = false;
            }
            (None, new_key)
        } else {
            let old_key = open(old_digest)?;
            let new_key = if new_digest == old_digest {
                None
            } else {
                open(new_digest)?
            };
            verify_digest(
                &m,
                old_key.as_deref().map(|k| &k[..]),
                new_key.as_deref().map(|k| &k[..]),
            )?;
            (old_key, new_key)
        };
        let side = |segment: Segment,
                    key: Option<Zeroizing<Vec<u8>>>,
                    digest|
         -> Result<Side, Luks2Error> {
            let key = key.filter(|_| segment.is_crypt());
            let cipher = key
                .as_ref()
                .map(|k| segment_cipher(&segment, k))
                .transpose()?;
            Ok(Side {
                segment,
                key,
                cipher,
                digest,
            })
        };
        if let Some(moved) = &moved {
            let shift = r.area.resilience.shift().unwrap_or(0);
            if shift > MAX_SHIFT {
                return Err(bad(format!(
                    "a shift of {shift} bytes is above {MAX_SHIFT}, the largest this version resumes"
                )));
            }
            if let Resilience::DatashiftChecksum {
                hash, sector_size, ..
            } = r.area.resilience
            {
                let m_len = moved.size.unwrap_or(0);
                let bs = u64::from(sector_size);
                if bs == 0
                    || !m_len.is_multiple_of(bs)
                    || (m_len / bs).saturating_mul(hash.output_len() as u64) > r.area.size
                {
                    return Err(bad(format!(
                        "the moved segment ({m_len} bytes) is not a whole number of {bs}-byte checksum blocks that the {}-byte area holds",
                        r.area.size
                    )));
                }
            }
        }
        let new_key = new_key.or_else(|| old_key.clone());
        let old = side(prev, old_key, old_digest)?;
        let new = side(fin, new_key, new_digest)?;
        let old_keyslots = old_digest
            .filter(|d| Some(*d) != new_digest)
            .map(|d| m.digests[&d].keyslots.clone())
            .unwrap_or_default();
        let mut block = old.sector().max(new.sector()).max(4096);
        if let Resilience::Checksum { sector_size, .. }
        | Resilience::DatashiftChecksum { sector_size, .. } = r.area.resilience
        {
            block = block.max(u64::from(sector_size));
        }
        let d = new.segment.offset;
        data_clear_of_header(&header, &data, img.hdr_size(), &m, d)?;
        let size = match &moved {
            Some(_) if r.mode == ReencryptMode::Encrypt => old.segment.size,
            Some(_) => total.checked_sub(old.segment.offset),
            None => total.checked_sub(d),
        }
        .filter(|n| *n > 0 && n.is_multiple_of(block) && d.is_multiple_of(block))
        .ok_or_else(|| bad(format!("the data device ({total} bytes) does not match the record (data at {d}, {block}-byte blocks)")))?;
        // Base (pre-record) metadata: the record's keyslot and digest stay;
        // the segments are rebuilt at every commit.
        let mut base = m.clone();
        base.segments.clear();
        let mut rr = Reencryption {
            header_dev: header,
            data_dev: data,
            header: img.header.clone(),
            meta: base,
            mode: r.mode,
            area: r.area.clone(),
            old,
            new,
            size,
            done: 0,
            hotzone: 0,
            block,
            old_keyslots,
            moved,
            verified,
            refill: img.free_areas(),
            unrecorded: false,
            finished: false,
        };
        // Where the active segments say the run is.
        let active: Vec<&Segment> = m.segments.values().filter(|s| !s.is_backup()).collect();
        let fin_kind = rr.new.segment.kind;
        let new_like = |s: &Segment, id: u32| new_side(&m, s, id, fin_kind, old_digest, new_digest);
        let ids: Vec<u32> = m
            .segments
            .iter()
            .filter(|(_, s)| !s.is_backup())
            .map(|(&i, _)| i)
            .collect();
        let hot = active.iter().position(|s| s.has_flag(HOT));
        rr.hotzone = rr.hotzone_len(hotzone_size)?;
        if rr.moved.is_some() || rr.backward() {
            rr.resume_shift(&active, hot)?;
            return Ok(rr);
        }
        match hot {
            Some(h) => {
                let s = active[h];
                let l = s.size.ok_or_else(|| bad("the hotzone has no fixed size"))?;
                let o = s
                    .offset
                    .checked_sub(d)
                    .ok_or_else(|| bad("the hotzone lies before the data"))?;
                if h != usize::from(o > 0)
                    || o + l > size
                    || !o.is_multiple_of(block)
                    || !l.is_multiple_of(block)
                {
                    return Err(bad("the hotzone is not where a forward run puts it"));
                }
                rr.recover(o, l)?;
                rr.done = o + l;
                if rr.done == size {
                    rr.finish()?;
                } else {
                    rr.commit(rr.done, 0, rr.header.seqid + 1)?;
                }
            }
            None => match active.len() {
                1 if new_like(active[0], ids[0]) => {
                    // Converted to the end but not torn down (cryptsetup's
                    // post-final state): finish the header only.
                    rr.done = size;
                    rr.finish()?;
                }
                1 => rr.done = 0,
                2 => {
                    let o = active[0]
                        .size
                        .ok_or_else(|| bad("the converted segment has no fixed size"))?;
                    if !new_like(active[0], ids[0])
                        || active[1].offset != d + o
                        || !o.is_multiple_of(block)
                        || o >= size
                    {
                        return Err(bad("the segments are not a state of a forward run"));
                    }
                    rr.done = o;
                }
                n => {
                    return Err(bad(format!(
                        "{n} active segments: not a state of a forward run"
                    )));
                }
            },
        }
        Ok(rr)
    }

    /// Takes up a run that moves the data from its active segments: they
    /// must be exactly the state this module writes for the hotzone they
    /// flag (or for the progress their linear segments show), and a
    /// hotzone never overlaps the place it is written to, nor reads where
    /// the header or the moved segment is but from the moved copy.
    fn resume_shift(&mut self, active: &[&Segment], hot: Option<usize>) -> Result<(), Luks2Error> {
        let s = self.shift();
        let d = self.new.segment.offset;
        let down = self.mode == ReencryptMode::Decrypt;
        let m = self.moved.as_ref().and_then(|x| x.size).unwrap_or(0);
        let on_disk: Vec<Segment> = active.iter().map(|&x| x.clone()).collect();
        let layout = |o: u64, l: u64| -> Vec<Segment> {
            self.metadata_at(o, l)
                .segments
                .into_values()
                .filter(|x| !x.is_backup())
                .collect()
        };
        let refuse = || bad("the segments are not a state of the run the record describes");
        if self.backward() {
            // cryptsetup's decryption with a detached header: [0, o) old,
            // [o, o + l) hot, the rest converted; in place.
            let o = match hot {
                Some(h) => {
                    let x = active[h];
                    let l = x.size.ok_or_else(refuse)?;
                    let o = x.offset.checked_sub(d).ok_or_else(refuse)?;
                    if l == 0
                        || !o.is_multiple_of(self.block)
                        || !l.is_multiple_of(self.block)
                        || o.checked_add(l).is_none_or(|r| r > self.size)
                        || layout(o, l) != on_disk
                    {
                        return Err(refuse());
                    }
                    self.recover(o, l)?;
                    o
                }
                None => [0, self.size, active[0].size.unwrap_or(0)]
                    .into_iter()
                    .find(|&o| {
                        o <= self.size && o.is_multiple_of(self.block) && layout(o, 0) == on_disk
                    })
                    .ok_or_else(refuse)?,
            };
            self.done = self.size - o;
            if o == 0 {
                self.finish()?;
            } else if hot.is_some() {
                self.commit(o, 0, self.header.seqid + 1)?;
            }
            return Ok(());
        }
        match hot {
            Some(h) => {
                let x = active[h];
                let l = x.size.ok_or_else(refuse)?;
                let o = x.offset.checked_sub(d).ok_or_else(refuse)?;
                let placed = if down {
                    (o == 0 && l == m) || (o >= m && l <= s)
                } else {
                    l <= s && (o == 0 || o >= s)
                };
                if l == 0
                    || !placed
                    || !o.is_multiple_of(self.block)
                    || !l.is_multiple_of(self.block)
                    || o.checked_add(l).is_none_or(|r| r > self.size)
                    || layout(o, l) != on_disk
                {
                    return Err(refuse());
                }
                self.recover(o, l)?;
                self.done = match (down, o) {
                    (true, 0) => self.size,
                    (true, _) => o + l - m,
                    (false, _) => self.size - o,
                };
                if self.done == self.size {
                    self.finish()?;
                } else {
                    self.commit(self.clean_o(), 0, self.header.seqid + 1)?;
                }
            }
            None => {
                let o = if down {
                    // No linear segment: nothing done; one at 0: all;
                    // one at `m`: that much after the moved segment.
                    match active.iter().find(|x| !x.is_crypt()) {
                        None => m,
                        Some(x) if x.offset == 0 => 0,
                        Some(x) => x.size.map_or(self.size, |n| m.saturating_add(n)),
                    }
                } else {
                    active
                        .iter()
                        .filter(|x| !x.is_crypt())
                        .map(|x| x.size.unwrap_or(u64::MAX))
                        .fold(0u64, u64::saturating_add)
                };
                if o > self.size
                    || !o.is_multiple_of(self.block)
                    || (down && o != 0 && o < m)
                    || layout(o, 0) != on_disk
                {
                    return Err(refuse());
                }
                self.done = match (down, o) {
                    (true, 0) => self.size,
                    (true, _) => o - m,
                    (false, _) => self.size - o,
                };
                if self.done == self.size {
                    // Converted to the end: only the clean-up is left.
                    self.finish()?;
                }
            }
        }
        Ok(())
    }

    /// Repairs the hotzone `[o, o + l)` after a crash and syncs it.
    fn recover(&mut self, o: u64, l: u64) -> Result<(), Luks2Error> {
        let d = self.new.segment.offset;
        const CHUNK: u64 = 16 << 20;
        match self.area.resilience {
            Resilience::Checksum { hash, sector_size }
            | Resilience::DatashiftChecksum {
                hash, sector_size, ..
            } if o == 0 || self.moved.is_none() => {
                let bs = u64::from(sector_size);
                let n = hash.output_len();
                let blocks = l / bs;
                if blocks * n as u64 > self.area.size {
                    return Err(bad("the hotzone is larger than its checksums"));
                }
                let mut sums = vec![0u8; blocks as usize * n];
                read_at(
                    &self.header_dev,
                    "checksums in the keyslots area",
                    &mut sums,
                    self.area.offset,
                )?;
                let mut buf = vec![0u8; CHUNK.min(l) as usize];
                let mut sum = vec![0u8; n];
                let mut at = 0;
                while at < l {
                    let len = (l - at).min(CHUNK) as usize;
                    let chunk = &mut buf[..len];
                    read_at(&self.data_dev, "data device", chunk, d + o + at)?;
                    for (i, blk) in chunk.chunks_exact_mut(bs as usize).enumerate() {
                        let b = (at / bs) as usize + i;
                        hash.hash_into(&[blk], &mut sum);
                        if sum[..] == sums[b * n..(b + 1) * n] {
                            let pos = o + at + i as u64 * bs;
                            self.convert(pos, blk)?;
                            write_at(&self.data_dev, blk, d + pos)?;
                        }
                    }
                    at += len as u64;
                }
            }
            Resilience::Journal => {
                if l > self.area.size {
                    return Err(bad("the hotzone is larger than its journal"));
                }
                // The journal is trusted only if it is this hotzone's: every
                // 512-byte unit on the device must still hold its old bytes
                // (the journal's) or already its new ones, checked for the
                // whole hotzone before anything is written.
                let mut buf = vec![0u8; CHUNK.min(l) as usize];
                let mut on_disk = vec![0u8; CHUNK.min(l) as usize];
                let mut new = vec![0u8; CHUNK.min(l) as usize];
                let mut at = 0;
                while at < l {
                    let len = (l - at).min(CHUNK) as usize;
                    read_at(
                        &self.header_dev,
                        "journal in the keyslots area",
                        &mut buf[..len],
                        self.area.offset + at,
                    )?;
                    read_at(
                        &self.data_dev,
                        "data device",
                        &mut on_disk[..len],
                        d + o + at,
                    )?;
                    new[..len].copy_from_slice(&buf[..len]);
                    self.convert(o + at, &mut new[..len])?;
                    let torn = on_disk[..len]
                        .chunks(512)
                        .zip(buf[..len].chunks(512).zip(new[..len].chunks(512)))
                        .position(|(disk, (old, new))| disk != old && disk != new);
                    if let Some(i) = torn {
                        return Err(bad(format!(
                            "the journal does not match the hotzone: the device's bytes at {} are neither the journal's nor their conversion (a damaged journal, or a header of another device); nothing was written",
                            d + o + at + i as u64 * 512
                        )));
                    }
                    at += len as u64;
                }
                let mut at = 0;
                while at < l {
                    let len = (l - at).min(CHUNK) as usize;
                    let chunk = &mut buf[..len];
                    read_at(
                        &self.header_dev,
                        "journal in the keyslots area",
                        chunk,
                        self.area.offset + at,
                    )?;
                    self.convert(o + at, chunk)?;
                    write_at(&self.data_dev, chunk, d + o + at)?;
                    at += len as u64;
                }
            }
            Resilience::Datashift { .. } | Resilience::DatashiftChecksum { .. }
                if self.moved.is_some() =>
            {
                // The source is untouched (the hotzone is written `s`
                // bytes away from it): convert it again.
                let mut buf = vec![0u8; CHUNK.min(l) as usize];
                let mut at = 0;
                while at < l {
                    let len = (l - at).min(CHUNK) as usize;
                    let chunk = &mut buf[..len];
                    read_at(&self.data_dev, "data device", chunk, self.source(o) + at)?;
                    self.convert(o + at, chunk)?;
                    write_at(&self.data_dev, chunk, d + o + at)?;
                    at += len as u64;
                }
            }
            other => {
                return Err(bad(format!(
                    "a hotzone in conversion under {} resilience cannot be repaired",
                    other.name()
                )));
            }
        }
        self.data_dev.sync_data().map_err(Luks2Error::Io)
    }

    /// The hotzone after `done` bytes are converted, `(offset, length)`:
    /// forward, the `hotzone` bytes
    /// after the converted ones; with a shift, backward in steps of the
    /// shift `s` while at least `2·s` bytes are left, then the rest above
    /// `s`, and last the first `s` bytes (read from the moved copy), so
    /// that no hotzone but the last reads below `s`, where the header is.
    /// A decryption that moves the data down walks forward from the end
    /// of the moved segment (`m` bytes at 0), each hotzone read at `s + o`
    /// and written at `o`, and converts the moved segment in place last.
    fn hotzone_at(&self, done: u64) -> (u64, u64) {
        let Some(moved) = &self.moved else {
            let left = self.size - done;
            let l = self.hotzone.min(left);
            return if self.backward() {
                (left - l, l)
            } else {
                (done, l)
            };
        };
        let s = self.shift();
        if self.mode == ReencryptMode::Decrypt {
            // Forward from the end of the moved segment, then the moved
            // segment itself, in place.
            let m = moved.size.unwrap_or(0);
            return if done < self.size - m {
                let o = m + done;
                (o, s.min(self.size - o))
            } else {
                (0, m)
            };
        }
        let r = self.size - done;
        if r >= 2 * s {
            (r - s, s)
        } else if r > s {
            (s, r - s)
        } else {
            (0, r)
        }
    }

    /// The offset of the clean state: the converted bytes forward, the
    /// bytes left with a shift.
    fn clean_o(&self) -> u64 {
        match (&self.moved, self.mode) {
            (None, _) if self.backward() => self.size - self.done,
            (None, _) => self.done,
            (Some(_), ReencryptMode::Decrypt) if self.done == self.size => 0,
            (Some(m), ReencryptMode::Decrypt) => m.size.unwrap_or(0) + self.done,
            (Some(_), _) => self.size - self.done,
        }
    }

    /// Whether the hotzones walk backward without moving the data (as
    /// cryptsetup decrypts with a detached header; resumed only).
    fn backward(&self) -> bool {
        self.moved.is_none()
            && self
                .meta
                .reencrypt
                .as_ref()
                .is_some_and(|r| r.direction == ReencryptDirection::Backward)
    }

    /// The shift of a run that moves the data (0 without).
    fn shift(&self) -> u64 {
        self.area.resilience.shift().unwrap_or(0)
    }

    /// Where the old bytes of the hotzone at `o` are read.
    fn source(&self, o: u64) -> u64 {
        match &self.moved {
            Some(m) if o == 0 => m.offset,
            _ => self.old.segment.offset + o,
        }
    }

    /// The key of a side, for the record's digest.
    fn key<'a>(&self, side: &'a Side) -> Option<&'a [u8]> {
        side.key.as_deref().map(|k| &k[..])
    }

    /// The hotzone length: at most `limit` (64 MiB by default), what the
    /// area can protect, and a whole number of blocks.
    fn hotzone_len(&self, limit: Option<u64>) -> Result<u64, Luks2Error> {
        if self.moved.is_some() {
            return Ok(self.shift());
        }
        let want = limit.unwrap_or(64 << 20);
        let cap = match self.area.resilience {
            Resilience::Checksum { hash, sector_size } => {
                (self.area.size / hash.output_len() as u64) * u64::from(sector_size)
            }
            Resilience::Journal => self.area.size,
            _ => u64::MAX,
        };
        let l = want.min(cap).min(self.size) / self.block * self.block;
        if l == 0 {
            return Err(bad(format!(
                "a hotzone of {want} bytes holds no whole {}-byte block",
                self.block
            )));
        }
        Ok(l)
    }

    /// The metadata of the state with `o` bytes converted and the hotzone
    /// `[o, o + l)` in conversion (`l` = 0: a clean state): the active
    /// segments, then the backups, each crypt segment bound to its key's
    /// digest (the hotzone to both).
    fn metadata_at(&self, o: u64, l: u64) -> Metadata {
        let mut m = self.meta.clone();
        let piece = |side: &Side, at: u64, len: Option<u64>| {
            let s = &side.segment;
            let mut p = if s.is_crypt() {
                Segment {
                    offset: s.offset + at,
                    size: len,
                    iv_tweak: at / 512,
                    flags: Vec::new(),
                    ..s.clone()
                }
            } else {
                Segment::linear(s.offset + at, len)
            };
            p.flags.clear();
            p
        };
        // (segment, bound to the old digest, bound to the new digest)
        let mut active: Vec<(Segment, bool, bool)> = Vec::new();
        if let Some(moved) = self
            .moved
            .as_ref()
            .filter(|_| self.mode == ReencryptMode::Decrypt)
        {
            // Forward, moving down: the moved segment [0, m) (converted
            // last, in place), [m, o) converted, [o, o + l) hot, the rest
            // old (read `s` bytes above).
            let m = moved.size.unwrap_or(0);
            let r = o + l;
            if o == 0 {
                if l > 0 {
                    let mut hot = piece(&self.new, 0, Some(l));
                    hot.flags.push(HOT.into());
                    active.push((hot, true, true));
                }
                active.push((piece(&self.new, l, None), false, true));
            } else {
                active.push((
                    piece(&Side::plain(moved.clone()), 0, moved.size),
                    true,
                    false,
                ));
                if o > m {
                    let len = (l > 0 || o < self.size).then_some(o - m);
                    active.push((piece(&self.new, m, len), false, true));
                }
                if l > 0 {
                    let mut hot = piece(&self.new, o, Some(l));
                    hot.flags.push(HOT.into());
                    active.push((hot, true, true));
                }
                if r < self.size {
                    active.push((piece(&self.old, r, None), true, false));
                }
            }
        } else if let Some(moved) = &self.moved {
            // Backward with a shift: [0, o) old (its first `s` bytes in
            // the moved copy), [o, o + l) hot, [o + l, size) converted.
            let s = self.shift();
            let r = o + l;
            if r == 0 {
                active.push((piece(&self.new, 0, None), false, true));
            }
            if o > 0 {
                active.push((
                    piece(&Side::plain(moved.clone()), 0, moved.size),
                    true,
                    false,
                ));
                if o > s {
                    active.push((piece(&self.old, s, Some(o - s)), true, false));
                }
            }
            if l > 0 {
                let mut hot = piece(&self.new, o, Some(l));
                hot.flags.push(HOT.into());
                active.push((hot, true, true));
            }
            if r > 0 && r < self.size {
                active.push((piece(&self.new, r, Some(self.size - r)), false, true));
            }
        } else if self.backward() {
            // [0, o) old, [o, o + l) hot, the rest converted.
            if o == 0 && l == 0 {
                active.push((piece(&self.new, 0, None), false, true));
            } else {
                if o > 0 {
                    let len = (o < self.size).then_some(o);
                    active.push((piece(&self.old, 0, len), true, false));
                }
                if l > 0 {
                    let mut hot = piece(&self.new, o, Some(l));
                    hot.flags.push(HOT.into());
                    active.push((hot, true, true));
                }
                if o + l < self.size {
                    active.push((piece(&self.new, o + l, None), false, true));
                }
            }
        } else if o + l >= self.size && l == 0 {
            active.push((piece(&self.new, 0, None), false, true));
        } else {
            if o > 0 {
                active.push((piece(&self.new, 0, Some(o)), false, true));
            }
            if l > 0 {
                let mut hot = piece(&self.new, o, Some(l));
                hot.flags.push(HOT.into());
                active.push((hot, true, true));
            }
            if o + l < self.size {
                active.push((piece(&self.old, o + l, None), true, false));
            }
        }
        m.segments.clear();
        for d in m.digests.values_mut() {
            d.segments.clear();
        }
        let bind = |m: &mut Metadata, id: u32, digest: Option<u32>| {
            if let Some(d) = digest.and_then(|d| m.digests.get_mut(&d)) {
                d.segments.push(id);
            }
        };
        let mut next = 0u32;
        for (seg, old, new) in active {
            let crypt = seg.is_crypt();
            m.segments.insert(next, seg);
            if crypt && old {
                bind(&mut m, next, self.old.digest);
            }
            if crypt && new {
                bind(&mut m, next, self.new.digest);
            }
            next += 1;
        }
        for side in [&self.old, &self.new] {
            m.segments.insert(next, side.segment.clone());
            if side.segment.is_crypt() {
                bind(&mut m, next, side.digest);
            }
            next += 1;
        }
        if let Some(moved) = &self.moved {
            m.segments.insert(next, moved.clone());
            if moved.is_crypt() {
                bind(&mut m, next, self.old.digest);
            }
        }
        for d in m.digests.values_mut() {
            d.segments.sort_unstable();
            d.segments.dedup();
        }
        m
    }

    /// Commits the state `(o, l)` with `seqid`.
    fn commit(&mut self, o: u64, l: u64, seqid: u64) -> Result<(), Luks2Error> {
        self.refill_unnamed()?;
        let m = self.metadata_at(o, l);
        write_header(&self.header_dev, &self.header, seqid, &m)?;
        self.header.seqid = seqid;
        Ok(())
    }

    /// Refills the ranges the loaded header named to no one (once; the
    /// header write that follows syncs them).
    fn refill_unnamed(&mut self) -> Result<(), Luks2Error> {
        for (offset, len) in std::mem::take(&mut self.refill) {
            wipe(&self.header_dev, offset, len)?;
        }
        Ok(())
    }

    /// Converts `buf`, the bytes at logical offset `at`, from the old side
    /// to the new.
    fn convert(&self, at: u64, buf: &mut [u8]) -> Result<(), Luks2Error> {
        if let Some(c) = &self.old.cipher {
            crypt(c, Direction::Decrypt, at / u64::from(c.sector_size()), buf)?;
        }
        if let Some(c) = &self.new.cipher {
            crypt(c, Direction::Encrypt, at / u64::from(c.sector_size()), buf)?;
        }
        Ok(())
    }

    /// Bytes of data converted so far, and in all.
    ///
    /// ```
    /// # let _ = |r: &mdu_luks2::reencrypt::Reencryption| r.progress();
    /// ```
    pub fn progress(&self) -> (u64, u64) {
        (self.done, self.size)
    }

    /// The hotzone length in use.
    ///
    /// ```
    /// # let _ = |r: &mdu_luks2::reencrypt::Reencryption| r.hotzone_size();
    /// ```
    pub fn hotzone_size(&self) -> u64 {
        self.hotzone
    }

    /// The resilience recorded in the header.
    ///
    /// ```
    /// # let _ = |r: &mdu_luks2::reencrypt::Reencryption| r.resilience().name();
    /// ```
    pub fn resilience(&self) -> Resilience {
        self.area.resilience
    }

    /// What is converted.
    ///
    /// ```
    /// # let _ = |r: &mdu_luks2::reencrypt::Reencryption| r.mode();
    /// ```
    pub fn mode(&self) -> ReencryptMode {
        self.mode
    }

    /// Converts hotzone after hotzone until the data are done, then writes
    /// the final header and wipes the areas that held old keys and copies.
    /// `progress(done, total)` is called after each hotzone; when `stop()`
    /// turns true between hotzones the run ends with the progress recorded
    /// ([`Outcome::Interrupted`]).
    ///
    /// # Errors
    ///
    /// I/O errors; the header then still describes a state a resume
    /// repairs.
    pub fn run(
        &mut self,
        progress: &mut dyn FnMut(u64, u64),
        stop: &dyn Fn() -> bool,
    ) -> Result<Outcome, Luks2Error> {
        mdu_inplace::run(self, progress, stop)
    }

    /// Writes the final header (one segment, no record, the old keyslots
    /// and digests gone), then wipes the areas of the old keyslots and of
    /// the record. With a shift, the copy of the first bytes is wiped
    /// first, once a header no longer names it (only the final segment
    /// active): a kill then leaves a state the next resume finishes, never
    /// plaintext behind a final header.
    fn finish(&mut self) -> Result<(), Luks2Error> {
        let moved = self.moved.clone();
        if let Some(moved) = moved
            .as_ref()
            .filter(|_| self.mode == ReencryptMode::Encrypt)
        {
            self.commit(0, 0, self.header.seqid + 1)?;
            wipe(&self.data_dev, moved.offset, moved.size.unwrap_or(0))?;
            self.data_dev.sync_data().map_err(Luks2Error::Io)?;
        }
        let mut m = self.meta.clone();
        let mut seg = self.new.segment.clone();
        seg.flags.clear();
        m.segments = BTreeMap::from([(0, seg)]);
        let mut wipes: Vec<(u64, u64)> = Vec::new();
        if let Some(r) = m.reencrypt.take() {
            wipes.push((r.area.offset, r.area.size));
            m.digests.retain(|_, d| !d.keyslots.contains(&r.id));
        }
        if self.mode != ReencryptMode::Encrypt {
            for id in &self.old_keyslots {
                if let Some(k) = m.keyslots.remove(id) {
                    wipes.push((k.area.offset, k.area.size));
                }
            }
            if let Some(d) = self.old.digest {
                m.digests.remove(&d);
            }
        }
        if let Some(d) = self.new.digest.and_then(|d| m.digests.get_mut(&d)) {
            d.segments = vec![0];
        }
        if !self.new.segment.is_crypt() {
            m.digests.clear();
            m.keyslots.clear();
        }
        if let Some(r) = &mut m.config.requirements {
            r.retain(|x| !x.starts_with("online-reencrypt"));
        }
        if m.config.requirements.as_ref().is_some_and(Vec::is_empty) {
            m.config.requirements = None;
        }
        let seqid = self.header.seqid + 1;
        self.refill_unnamed()?;
        write_header(&self.header_dev, &self.header, seqid, &m)?;
        self.header.seqid = seqid;
        self.meta = m;
        for (offset, len) in wipes {
            wipe(&self.header_dev, offset, len)?;
        }
        self.header_dev.sync_data().map_err(Luks2Error::Io)?;
        if moved.is_some() && self.mode == ReencryptMode::Decrypt && self.verified {
            // The old ciphertext of the last `s` bytes, past the data.
            wipe(&self.data_dev, self.size, self.shift())?;
            self.data_dev.sync_data().map_err(Luks2Error::Io)?;
        }
        self.finished = true;
        Ok(())
    }
}

/// The hotzone loop is the in-place engine's; this is what the LUKS2
/// record does at each of its steps.
impl mdu_inplace::Journal for Reencryption {
    type Error = Luks2Error;
    const PROTECTS_NEXT: bool = false;

    fn device(&self) -> &File {
        &self.data_dev
    }

    /// A run with `none` resilience records no progress, so it does not
    /// sync either.
    fn sync_each(&self) -> bool {
        self.area.resilience != Resilience::None
    }

    fn progress(&self) -> (u64, u64) {
        (self.done, self.size)
    }

    fn hotzone(&self, done: u64) -> Option<mdu_inplace::Hotzone> {
        (done < self.size).then(|| {
            let (o, l) = self.hotzone_at(done);
            mdu_inplace::Hotzone {
                seq: 0,
                pos: o,
                len: l,
                from: self.source(o),
                to: self.new.segment.offset + o,
                done: done + l,
            }
        })
    }

    /// Writes what repairs the hotzone (the hash of every block for
    /// `checksum`, the bytes themselves for `journal`; with a shift, only
    /// for the moved segment, converted in place) into the keyslot area,
    /// then commits the header with the hotzone flagged.
    fn protect(
        &mut self,
        hz: &mdu_inplace::Hotzone,
        old: &[u8],
        _next: Option<&[u8]>,
    ) -> Result<(), Luks2Error> {
        let (o, l) = (hz.pos, hz.len);
        match self.area.resilience {
            Resilience::Checksum { hash, sector_size }
            | Resilience::DatashiftChecksum {
                hash, sector_size, ..
            } if o == 0 || self.moved.is_none() => {
                let bs = sector_size as usize;
                let n = hash.output_len();
                let mut sums = vec![0u8; old.len() / bs * n];
                if sums.len() as u64 > self.area.size {
                    return Err(bad("the hotzone has more checksums than its area holds"));
                }
                block_hashes(hash, bs, old, &mut sums);
                write_at(&self.header_dev, &sums, self.area.offset)?;
            }
            Resilience::Journal => write_at(&self.header_dev, old, self.area.offset)?,
            _ => {}
        }
        if self.area.resilience != Resilience::None {
            self.commit(o, l, self.header.seqid + 1)?;
            self.unrecorded = false;
        }
        Ok(())
    }

    fn convert(&self, hz: &mdu_inplace::Hotzone, buf: &mut [u8]) -> Result<(), Luks2Error> {
        Reencryption::convert(self, hz.pos, buf)
    }

    /// Counts the hotzone converted: with a shift, the next hotzone's
    /// commit records it (no header write in between); the last one's
    /// record is the final header.
    fn converted(&mut self, hz: &mdu_inplace::Hotzone, _written: &[u8]) -> Result<(), Luks2Error> {
        self.done = hz.done;
        if self.done < self.size {
            if self.moved.is_some() {
                self.unrecorded = true;
            } else if self.area.resilience != Resilience::None {
                self.commit(self.clean_o(), 0, self.header.seqid + 1)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), Luks2Error> {
        if self.finished {
            return Ok(());
        }
        Reencryption::finish(self)
    }

    fn interrupted(&mut self) -> Result<(), Luks2Error> {
        if self.area.resilience == Resilience::None || self.unrecorded {
            self.commit(self.clean_o(), 0, self.header.seqid + 1)?;
        }
        Ok(())
    }
}

/// The hash of every `bs`-byte block of `data` into `out`, across the
/// rayon pool when the crate has it.
fn block_hashes(hash: Hash, bs: usize, data: &[u8], out: &mut [u8]) {
    let n = hash.output_len();
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        data.par_chunks_exact(bs)
            .zip(out.par_chunks_exact_mut(n))
            .with_min_len(64)
            .for_each(|(blk, o)| hash.hash_into(&[blk], o));
    }
    #[cfg(not(feature = "rayon"))]
    for (blk, o) in data.chunks_exact(bs).zip(out.chunks_exact_mut(n)) {
        hash.hash_into(&[blk], o);
    }
}

/// One batched call, split over the rayon pool when the crate has it.
fn crypt(c: &SectorCipher, dir: Direction, first: u64, buf: &mut [u8]) -> Result<(), Luks2Error> {
    #[cfg(feature = "rayon")]
    {
        Ok(c.par_crypt(dir, first, buf)?)
    }
    #[cfg(not(feature = "rayon"))]
    {
        Ok(c.crypt(dir, first, buf)?)
    }
}
