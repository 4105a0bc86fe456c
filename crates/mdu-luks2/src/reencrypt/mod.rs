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

use crate::format::{AreaCrypt, new_keyslot};
use crate::image::ReadAt;
use crate::kdf::Hash;
use crate::metadata::{
    Digest, Metadata, ReencryptArea, ReencryptDirection, ReencryptKeyslot, ReencryptMode,
    Resilience, Segment,
};
use crate::{BinaryHeader, Error, FormatParams, Image, os_random};

mod classify;
mod layout;
mod open;
mod record;
mod resume;
mod start;
mod step;
#[cfg(test)]
mod tests;

pub use open::{Began, Goal, Header, Request};
pub use record::{digest_input, verify_digest};

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

fn bad(problem: impl Into<String>) -> Error {
    Error::Reencrypt {
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
    fin_kind: &crate::SegmentKind,
    old_digest: Option<u32>,
    new_digest: Option<u32>,
) -> bool {
    s.kind == *fin_kind
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

/// What [`Reencryption::init`] converts to.
///
/// ```
/// use mdu_luks2::reencrypt::Plan;
/// # use mdu_luks2::*;
/// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
/// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// let plan = Plan::new_key(&Image::load(&image[..])?, None)?;
/// assert!(matches!(plan, Plan::Reencrypt { key_size: 64, sector_size: 512, .. }));
/// # Ok::<(), Error>(())
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
    /// [`Error::Requirements`] when a reencryption is already in
    /// progress; a cipher this crate does not run.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let plan = mdu_luks2::reencrypt::Plan::new_key(&Image::load(&image[..])?, Some(0))?;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new_key(img: &Image, key_slot: Option<u32>) -> Result<Plan, Error> {
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
    /// The new keyslot of a key change: its KDF cost benchmarked to this
    /// many milliseconds ([`KdfBenchmark`](crate::KdfBenchmark), the
    /// opened keyslot's KDF and hash), as cryptsetup does; `None`: the
    /// opened keyslot's cost.
    pub iter_time_ms: Option<u32>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            resilience: ResilienceChoice::Checksum,
            hash: Hash::Sha256,
            hotzone_size: None,
            iter_time_ms: None,
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
    fn keyed(segment: Segment, key: Zeroizing<Vec<u8>>, digest: u32) -> Result<Side, Error> {
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
fn read_at(f: &File, what: &'static str, buf: &mut [u8], offset: u64) -> Result<(), Error> {
    FileExt::read_exact_at(f, buf, offset).map_err(|error| Error::ReadAt {
        what,
        offset,
        len: buf.len() as u64,
        error,
    })
}

fn write_at(f: &File, buf: &[u8], offset: u64) -> Result<(), Error> {
    f.write_all_at(buf, offset).map_err(Error::Io)
}

/// Writes both header copies with `seqid`, each synced before the next
/// (the crash-safe order of [`crate::write`]).
fn write_header(
    dev: &File,
    template: &BinaryHeader,
    seqid: u64,
    m: &Metadata,
) -> Result<(), Error> {
    crate::write::write_copies(dev, template, seqid, m)
}

/// Fills `len` bytes at `offset` with random bytes.
pub(crate) fn wipe(dev: &File, offset: u64, len: u64) -> Result<(), Error> {
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
) -> Result<(), Error> {
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
fn refuse_luks_signature(dev: &File) -> Result<(), Error> {
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
fn export_interrupted(data: &File, header: &File, s: u64, m: u64) -> Result<bool, Error> {
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
fn same_bytes(a: &File, a_at: u64, b: &File, b_at: u64, len: u64) -> Result<bool, Error> {
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
fn copy_between(from: &File, to: &File, len: u64) -> Result<(), Error> {
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
fn copy_range(dev: &File, from: u64, to: u64, len: u64) -> Result<(), Error> {
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

fn data_len(f: &File) -> Result<u64, Error> {
    Ok(ReadAt::size(f)?)
}

/// The cipher of a `crypt` segment under `key`.
fn segment_cipher(seg: &Segment, key: &[u8]) -> Result<SectorCipher, Error> {
    let spec = seg
        .encryption
        .spec_of(|| "a backup segment's encryption".into())?;
    let geometry = Geometry::new(seg.sector_size, 0, false)?;
    Ok(SectorCipher::new(spec, key, geometry, WeakKeys::Allow)?)
}

impl Reencryption {
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
    ) -> Result<Outcome, Error> {
        mdu_inplace::run(self, progress, stop)
    }
}
