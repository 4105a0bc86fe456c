//! Loading an image (both header copies, checksums, validation) and
//! unlocking the volume key through a keyslot; formatting a new header
//! region is in `format.rs`.

use mdu_dmcrypt::{CipherSpec, Geometry, SectorCipher, WeakKeys};
use zeroize::Zeroizing;

use crate::header::{BINARY_HEADER_LEN, BinaryHeader, HEADER_SIZES, header_checksum};
use crate::metadata::{Digest, Metadata, Segment};
use crate::{Direction, Error, af};

/// Random access to an image: mdu-core's one positioned-read trait
/// (`mdu_core::io::ReadAt`), re-exported here. Byte slices, vectors and
/// [`std::fs::File`] (files and block devices) are images.
///
/// Every read the crate makes is checked against the image's
/// [`size`](ReadAt::size) (taken once per load) first; a read that fails
/// anyway is [`Error::ReadAt`], naming what was being read.
///
/// ```
/// use mdu_luks2::ReadAt;
/// let image = [1u8, 2, 3, 4];
/// let mut buf = [0u8; 2];
/// image[..].read_exact_at(&mut buf, 2)?;
/// assert_eq!((buf, image[..].size()?), ([3, 4], 4));
/// # Ok::<(), mdu_core::io::IoError>(())
/// ```
pub use mdu_core::io::ReadAt;

/// Reads `len` bytes at `offset` after checking they lie inside the image.
fn read_checked<R: ReadAt + ?Sized>(
    r: &R,
    image_len: u64,
    what: &'static str,
    offset: u64,
    len: u64,
) -> Result<Vec<u8>, Error> {
    let truncated = Error::Truncated {
        what,
        offset,
        len,
        image_len,
    };
    match offset.checked_add(len) {
        Some(end) if end <= image_len => {}
        _ => return Err(truncated),
    }
    let n = usize::try_from(len).map_err(|_| truncated)?;
    let mut buf = vec![0u8; n];
    r.read_exact_at(&mut buf, offset)
        .map_err(|error| Error::ReadAt {
            what,
            offset,
            len,
            error: error.into(),
        })?;
    Ok(buf)
}

/// Which header copy an image was read from.
///
/// ```
/// use mdu_luks2::HeaderCopy;
/// assert_eq!(HeaderCopy::Secondary.name(), "secondary");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderCopy {
    /// The copy at offset 0.
    Primary,
    /// The copy at offset `hdr_size`.
    Secondary,
}

impl HeaderCopy {
    /// `primary` or `secondary`.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::HeaderCopy::Primary.name(), "primary");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            HeaderCopy::Primary => "primary",
            HeaderCopy::Secondary => "secondary",
        }
    }
}

/// A loaded, validated LUKS2 header: the copy in use, its metadata, and
/// what was wrong with the other copy, if anything.
///
/// ```
/// use mdu_luks2::{FormatParams, Image, KdfParams, HeaderCopy};
/// let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: mdu_luks2::Hash::Sha256, iterations: 1000 },
///     data_offset: 1 << 20, ..FormatParams::default() };
/// let mut image = mdu_luks2::format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
/// image[100] ^= 1; // damage the primary header
/// let img = Image::load(&image[..])?;
/// assert_eq!(img.copy, HeaderCopy::Secondary);
/// assert!(img.primary_error.is_some());
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Debug)]
pub struct Image {
    /// The binary header of the copy in use.
    pub header: BinaryHeader,
    /// Its validated metadata.
    pub metadata: Metadata,
    /// Which copy is in use.
    pub copy: HeaderCopy,
    /// Why the primary copy was not used, if it was not valid.
    pub primary_error: Option<Error>,
    /// Why the secondary copy is not valid, if it is not.
    pub secondary_error: Option<Error>,
    /// The image length the header was validated against.
    pub image_len: u64,
}

/// A volume key opened through a keyslot.
///
/// ```
/// use mdu_luks2::{FormatParams, Image, KdfParams};
/// let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: mdu_luks2::Hash::Sha1, iterations: 1000 },
///     data_offset: 1 << 20, ..FormatParams::default() };
/// let image = mdu_luks2::format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
/// let img = Image::load(&image[..])?;
/// let key = img.unlock(&image[..], b"pw")?;
/// assert_eq!((key.slot, key.segment, &key.key[..]), (0, Some(0), &(0..64).collect::<Vec<u8>>()[..]));
/// assert!(img.unlock(&image[..], b"nope").unwrap_err().is_wrong_passphrase());
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Debug)]
pub struct VolumeKey {
    /// The keyslot that opened it.
    pub slot: u32,
    /// The digest that confirmed it.
    pub digest: u32,
    /// The segment whose data it decrypts: `Some` from
    /// [`Image::unlock`] and [`Image::unlock_slot`], `None` for the key of
    /// an unbound keyslot ([`Image::unlock_unbound`]), which decrypts no
    /// data.
    pub segment: Option<u32>,
    /// The key (wiped when dropped).
    pub key: Zeroizing<Vec<u8>>,
}

impl VolumeKey {
    fn new(slot: u32, digest: u32, segment: Option<u32>, key: Zeroizing<Vec<u8>>) -> VolumeKey {
        VolumeKey {
            slot,
            digest,
            segment,
            key,
        }
    }
}

/// Loads and validates one header copy at `offset`.
pub(crate) fn load_copy<R: ReadAt + ?Sized>(
    r: &R,
    image_len: u64,
    offset: u64,
) -> Result<(BinaryHeader, Metadata), Error> {
    let bin = read_checked(
        r,
        image_len,
        "binary header",
        offset,
        BINARY_HEADER_LEN as u64,
    )?;
    let header = BinaryHeader::parse(&bin, offset)?;
    if header.secondary != (offset != 0) {
        return Err(Error::BadMagic { offset });
    }
    if header.secondary && header.hdr_size != offset {
        return Err(Error::HeaderSize {
            offset,
            size: header.hdr_size,
        });
    }
    if header.checksum_alg != "sha256" {
        return Err(Error::ChecksumAlgorithm {
            offset,
            name: header.checksum_alg,
        });
    }
    let copy = read_checked(r, image_len, "header copy", offset, header.hdr_size)?;
    if header_checksum(&copy)[..] != header.csum[..32] {
        return Err(Error::ChecksumMismatch { offset });
    }
    let area = &copy[BINARY_HEADER_LEN..];
    let area_err = |problem| Error::JsonArea { offset, problem };
    if area.first() != Some(&b'{') {
        return Err(area_err("the JSON text does not start with '{'"));
    }
    let end = area
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| area_err("the JSON text has no NUL terminator"))?;
    if area[end..].iter().any(|&b| b != 0) {
        return Err(area_err("bytes after the JSON text are not all NUL"));
    }
    let text =
        std::str::from_utf8(&area[..end]).map_err(|_| area_err("the JSON text is not UTF-8"))?;
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| Error::JsonSyntax {
        offset,
        message: e.to_string(),
    })?;
    let metadata = Metadata::from_value(&value)?;
    metadata.validate(header.hdr_size, Some(image_len))?;
    Ok((header, metadata))
}

impl Image {
    /// Reads both header copies and keeps the valid one with the higher
    /// sequence id (the primary on a tie). A damaged primary falls back to
    /// the secondary, found at the primary's `hdr_size` or, if the primary
    /// is damaged, at each of [`HEADER_SIZES`]; the reason is kept in
    /// [`primary_error`](Image::primary_error). Neither valid is
    /// [`Error::NoValidHeader`].
    ///
    /// ```
    /// let err = mdu_luks2::Image::load(&vec![0u8; 1 << 20][..]).unwrap_err();
    /// assert!(err.to_string().contains("no LUKS magic at offset 0"));
    /// ```
    pub fn load<R: ReadAt + ?Sized>(r: &R) -> Result<Image, Error> {
        let image_len = r.size()?;
        let primary = load_copy(r, image_len, 0);
        // Where to look for the secondary: at the hdr_size of a valid
        // primary only (the bytes at the other sizes are keyslot material
        // and data, never to be taken for a header); with a damaged primary,
        // first at its hdr_size if its binary header is readable, then at
        // every allowed size.
        let hint = read_checked(r, image_len, "binary header", 0, BINARY_HEADER_LEN as u64)
            .ok()
            .and_then(|b| BinaryHeader::parse(&b, 0).ok())
            .map(|h| h.hdr_size);
        let mut secondary = Err(Error::BadMagic {
            offset: HEADER_SIZES[0],
        });
        let offsets: Vec<u64> = match (&primary, hint) {
            (Ok((p, _)), _) => vec![p.hdr_size],
            (Err(_), Some(h)) => std::iter::once(h)
                .chain(HEADER_SIZES.into_iter().filter(|&s| s != h))
                .collect(),
            (Err(_), None) => HEADER_SIZES.to_vec(),
        };
        for (i, off) in offsets.into_iter().enumerate() {
            match load_copy(r, image_len, off) {
                Ok(c) => {
                    secondary = Ok(c);
                    break;
                }
                // Keep the first meaningful error (a magic that is there
                // but a copy that fails), or the one at the hinted offset.
                Err(e) => {
                    let keep = i == 0
                        || matches!(
                            secondary,
                            Err(Error::BadMagic { .. } | Error::Truncated { .. })
                        ) && !matches!(e, Error::BadMagic { .. } | Error::Truncated { .. });
                    if keep {
                        secondary = Err(e);
                    }
                }
            }
        }
        let image = |(header, metadata), copy, primary_error, secondary_error| Image {
            header,
            metadata,
            copy,
            primary_error,
            secondary_error,
            image_len,
        };
        match (primary, secondary) {
            (Ok(p), Ok(s)) => {
                if s.0.seqid > p.0.seqid {
                    Ok(image(s, HeaderCopy::Secondary, None, None))
                } else {
                    Ok(image(p, HeaderCopy::Primary, None, None))
                }
            }
            (Ok(p), Err(e)) => Ok(image(p, HeaderCopy::Primary, None, Some(e))),
            (Err(e), Ok(s)) => Ok(image(s, HeaderCopy::Secondary, Some(e), None)),
            (Err(p), Err(s)) => Err(Error::NoValidHeader {
                primary: Box::new(p),
                secondary: Box::new(s),
            }),
        }
    }

    /// The header size.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// assert_eq!(Image::load(&image[..])?.hdr_size(), 16384);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn hdr_size(&self) -> u64 {
        self.header.hdr_size
    }

    /// The ranges of the keyslots area that no keyslot and no reencryption
    /// record names ([`Metadata::free_areas`]), as `(offset, length)`, cut
    /// to the image (a detached header file may end before its area does).
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// let (offset, len) = img.free_areas()[0];
    /// assert_eq!(offset + len, 1 << 20);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn free_areas(&self) -> Vec<(u64, u64)> {
        self.metadata
            .free_areas(self.hdr_size())
            .into_iter()
            .map(|(o, l)| (o, o.saturating_add(l).min(self.image_len).saturating_sub(o)))
            .filter(|&(_, l)| l > 0)
            .collect()
    }

    /// The data segment to read: the one regular segment (the `backup-*`
    /// segments of a reencryption are never it). Several regular segments
    /// (an unfinished reencryption) are [`Error::Unsupported`].
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// let (id, seg) = img.segment()?;
    /// assert_eq!((id, seg.offset), (0, 1 << 20));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn segment(&self) -> Result<(u32, &Segment), Error> {
        if let Some(r) = &self.metadata.config.requirements
            && !r.is_empty()
        {
            return Err(Error::Requirements {
                requirements: r.clone(),
            });
        }
        let mut regular = self
            .metadata
            .segments
            .iter()
            .filter(|(_, s)| !s.is_backup());
        match (regular.next(), regular.count()) {
            (None, _) => Err(Error::schema("segments", "a regular crypt segment")),
            (Some((&id, s)), 0) if !s.is_crypt() => Err(Error::Unsupported {
                field: format!("segments.{id}.type"),
                value: "linear (the data are not encrypted: a decrypted volume)".into(),
            }),
            (Some((&id, s)), 0) => Ok((id, s)),
            (Some(_), more) => Err(Error::Unsupported {
                field: "segments".into(),
                value: format!("{} regular segments (an unfinished reencryption)", more + 1),
            }),
        }
    }

    /// The one digest bound to segment `seg`. None is
    /// [`Error::NoKeyslot`]; several are refused: a segment has one
    /// volume key (cryptsetup takes the first in the JSON text).
    pub(crate) fn segment_digest(&self, seg: u32) -> Result<(u32, &Digest), Error> {
        let mut bound = self
            .metadata
            .digests
            .iter()
            .filter(|(_, d)| d.segments.contains(&seg));
        let first = bound.next().ok_or(Error::NoKeyslot)?;
        let others: Vec<u32> = bound.map(|(&id, _)| id).collect();
        if others.is_empty() {
            return Ok((*first.0, first.1));
        }
        let mut all = vec![*first.0];
        all.extend(others);
        Err(Error::layout(
            "digests",
            format!(
                "segment {seg} is bound to {} digests {all:?}: a segment has one volume key (cryptsetup 2.6 takes the first digest in the JSON text and ignores the others)",
                all.len()
            ),
        ))
    }

    /// The keyslots of `digest` in the order an unlock tries them: high
    /// priority (2) first, then normal (1 or absent), by id; with the
    /// keyslots left out (priority 0, ignore, or a value cryptsetup does
    /// not know) and why.
    fn unlock_order(&self, digest: &Digest) -> (Vec<u32>, Vec<String>) {
        let mut ids: Vec<(i64, u32)> = Vec::new();
        let mut skipped = Vec::new();
        for (&id, k) in &self.metadata.keyslots {
            if !digest.keyslots.contains(&id) {
                continue;
            }
            match k.priority.unwrap_or(1) {
                p @ (1 | 2) => ids.push((p, id)),
                0 => skipped.push(format!("keyslot {id} has priority 0 (ignore)")),
                p => skipped.push(format!(
                    "keyslot {id} has priority {p}, which cryptsetup never tries (it tries 2, then 1)"
                )),
            }
        }
        ids.sort_by_key(|&(p, id)| (std::cmp::Reverse(p), id));
        (ids.into_iter().map(|(_, id)| id).collect(), skipped)
    }

    /// Opens the volume key of the data segment ([`segment`](Self::segment))
    /// with `passphrase`, through the keyslots whose digest is bound to
    /// that segment only: the one way a passphrase unlocks data. Keyslots
    /// of priority 0 (ignore) or an unknown priority are not tried.
    ///
    /// [`Error::WrongPassphrase`] when no keyslot opens;
    /// [`Error::UnboundKeyslot`] when only an unbound keyslot
    /// (`cryptsetup luksAddKey --unbound`) does, whose key is not the
    /// segment's (see [`unlock_unbound`](Self::unlock_unbound)).
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha512, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// let key = img.unlock(&image[..], b"pw")?;
    /// assert_eq!((&key.key[..], key.segment), (&(0..64).collect::<Vec<u8>>()[..], Some(0)));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn unlock<R: ReadAt + ?Sized>(&self, r: &R, passphrase: &[u8]) -> Result<VolumeKey, Error> {
        let (seg, _) = self.segment()?;
        let (digest_id, digest) = self.segment_digest(seg)?;
        let (order, skipped) = self.unlock_order(digest);
        if order.is_empty() {
            return Err(if !skipped.is_empty() {
                Error::NoUsableKeyslot {
                    segment: seg,
                    why: skipped.join("; "),
                }
            } else {
                match self.explain_wrong_passphrase(r, seg, passphrase) {
                    Error::WrongPassphrase => Error::NoKeyslot,
                    e => e,
                }
            });
        }
        let mut first_error = None;
        let mut tried = false;
        for slot in order {
            match self.open_keyslot(r, slot, digest, passphrase) {
                Ok(key) => return Ok(VolumeKey::new(slot, digest_id, Some(seg), key)),
                Err(Error::WrongPassphrase) => tried = true,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) if !tried => Err(e),
            _ => Err(self.explain_wrong_passphrase(r, seg, passphrase)),
        }
    }

    /// After no bound keyslot opened: [`Error::UnboundKeyslot`] if the
    /// passphrase opens an unbound keyslot (of priority 1 or 2), else
    /// [`Error::WrongPassphrase`].
    fn explain_wrong_passphrase<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        segment: u32,
        passphrase: &[u8],
    ) -> Error {
        for (&slot, k) in &self.metadata.keyslots {
            if !matches!(k.priority.unwrap_or(1), 1 | 2) || !self.metadata.keyslot_is_unbound(slot)
            {
                continue;
            }
            if self.unlock_unbound(r, slot, passphrase).is_ok() {
                return Error::UnboundKeyslot { slot, segment };
            }
        }
        Error::WrongPassphrase
    }

    /// Opens the volume key of the data segment with `passphrase` through
    /// keyslot `slot` only, whatever its priority (as `cryptsetup open
    /// --key-slot`). A keyslot whose digest is not bound to the data
    /// segment is [`Error::KeyslotNotBound`], before any key
    /// derivation.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// assert_eq!(img.unlock_slot(&image[..], 0, b"pw")?.slot, 0);
    /// assert!(matches!(img.unlock_slot(&image[..], 3, b"pw"), Err(Error::NoSuchKeyslot { slot: 3 })));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn unlock_slot<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        slot: u32,
        passphrase: &[u8],
    ) -> Result<VolumeKey, Error> {
        if !self.metadata.keyslots.contains_key(&slot) {
            return Err(Error::NoSuchKeyslot { slot });
        }
        let (seg, _) = self.segment()?;
        let (digest_id, digest) = self.segment_digest(seg)?;
        if !digest.keyslots.contains(&slot) {
            return Err(Error::KeyslotNotBound { slot, segment: seg });
        }
        let key = self.open_keyslot(r, slot, digest, passphrase)?;
        Ok(VolumeKey::new(slot, digest_id, Some(seg), key))
    }

    /// Opens the key of the unbound keyslot `slot` (one whose digest is
    /// bound to no segment, made by `cryptsetup luksAddKey --unbound`), as
    /// `cryptsetup luksDump --unbound --key-slot`. The key opens no data:
    /// [`VolumeKey::segment`] is `None`. A bound keyslot is
    /// [`Error::NotUnbound`].
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// let err = img.unlock_unbound(&image[..], 0, b"pw").unwrap_err();
    /// assert!(matches!(err, Error::NotUnbound { slot: 0 }));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn unlock_unbound<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        slot: u32,
        passphrase: &[u8],
    ) -> Result<VolumeKey, Error> {
        if !self.metadata.keyslots.contains_key(&slot) {
            return Err(Error::NoSuchKeyslot { slot });
        }
        if !self.metadata.keyslot_is_unbound(slot) {
            return Err(Error::NotUnbound { slot });
        }
        let (digest_id, digest) = self
            .metadata
            .keyslot_digest(slot)
            .and_then(|id| Some((id, self.metadata.digests.get(&id)?)))
            .ok_or(Error::NoKeyslot)?;
        let key = self.open_keyslot(r, slot, digest, passphrase)?;
        Ok(VolumeKey::new(slot, digest_id, None, key))
    }

    /// Derives the area key of keyslot `slot`, decrypts and merges its
    /// material ([`AF_STRIPES`] stripes, whatever `af.stripes` says, as
    /// cryptsetup) and checks the key against `digest`.
    /// Opens the volume key of digest `digest_id` with `passphrase`
    /// through its keyslots, in unlock order; with `only`, through that
    /// keyslot alone. For a reencryption, whose old and new keys belong to
    /// two digests.
    pub(crate) fn unlock_digest<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        digest_id: u32,
        only: Option<u32>,
        passphrase: &[u8],
    ) -> Result<VolumeKey, Error> {
        let digest = self
            .metadata
            .digests
            .get(&digest_id)
            .ok_or(Error::NoKeyslot)?;
        let (mut order, _) = self.unlock_order(digest);
        if let Some(slot) = only {
            if !digest.keyslots.contains(&slot) {
                return Err(Error::NoSuchKeyslot { slot });
            }
            order = vec![slot];
        }
        if order.is_empty() {
            return Err(Error::NoKeyslot);
        }
        let mut first_error = None;
        for slot in order {
            match self.open_keyslot(r, slot, digest, passphrase) {
                Ok(key) => return Ok(VolumeKey::new(slot, digest_id, None, key)),
                Err(Error::WrongPassphrase) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.unwrap_or(Error::WrongPassphrase))
    }

    fn open_keyslot<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        slot: u32,
        digest: &Digest,
        passphrase: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, Error> {
        let ks = self
            .metadata
            .keyslots
            .get(&slot)
            .ok_or(Error::NoSuchKeyslot { slot })?;
        let key_len = ks.key_size as usize;
        let material_len = (key_len * AF_STRIPES as usize).div_ceil(512) * 512;
        let mut material = Zeroizing::new(read_checked(
            r,
            self.image_len,
            "keyslot area",
            ks.area.offset,
            material_len as u64,
        )?);
        let spec = ks
            .area
            .encryption
            .spec_of(|| format!("keyslots.{slot}.area.encryption"))?;
        let derived = ks.kdf.derive(passphrase, ks.area.key_size as usize, slot)?;
        area_cipher(spec, &derived)?.crypt(Direction::Decrypt, 0, &mut material)?;
        let key = af::merge(&material, key_len, AF_STRIPES, ks.af_hash)?;
        if digest.matches(&key) {
            Ok(key)
        } else {
            Err(Error::WrongPassphrase)
        }
    }

    /// The cipher of the data segment ([`segment`](Self::segment)) with the
    /// volume key `key`: its spec, sector size, and IV sector numbers in
    /// 512-byte units from the segment start (LUKS2 never sets
    /// `iv_large_sectors`; cryptsetup 2.6 ignores `iv_tweak` for one
    /// segment). `weak` is the weak-key policy: a volume key whose XTS
    /// halves are equal is refused unless it is [`WeakKeys::Allow`].
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedCipher`] (naming `segments.<id>.encryption`)
    /// for a spec this crate does not run; [`Error::Cipher`] for a key
    /// that does not fit it or a weak key
    /// ([`mdu_dmcrypt::Error::is_weak_key`](mdu_dmcrypt::Error::is_weak_key)).
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    ///     data_offset: 1 << 20, weak_keys: WeakKeys::Allow, ..FormatParams::default() };
    /// let image = format(&params, b"pw", &[7u8; 64], &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// let key = img.unlock(&image[..], b"pw")?;
    /// // Equal halves: refused unless allowed.
    /// assert!(matches!(img.segment_cipher(&key, WeakKeys::Refuse), Err(Error::Cipher(_))));
    /// assert_eq!(img.segment_cipher(&key, WeakKeys::Allow)?.sector_size(), 512);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn segment_cipher(&self, key: &VolumeKey, weak: WeakKeys) -> Result<SectorCipher, Error> {
        let (id, seg) = self.segment()?;
        let spec = seg
            .encryption
            .spec_of(|| format!("segments.{id}.encryption"))?;
        let geometry = Geometry::new(seg.sector_size, 0, false)?;
        Ok(SectorCipher::new(spec, &key.key, geometry, weak)?)
    }

    /// The byte range `(offset, len)` of segment `seg` in this image: its
    /// offset must lie inside the image, a fixed size must fit, and a
    /// `dynamic` one extends to the end, which must be a whole number of
    /// sectors.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let mut image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// image.resize((1 << 20) + 8192, 0);
    /// let img = Image::load(&image[..])?;
    /// let (_, seg) = img.segment()?;
    /// assert_eq!(img.payload_range(seg)?, (1 << 20, 8192));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn payload_range(&self, seg: &Segment) -> Result<(u64, u64), Error> {
        if seg.offset == 0 {
            return Err(Error::Unsupported {
                field: "segments.offset".into(),
                value: "0 (a detached header: the data are in another file)".into(),
            });
        }
        self.data_range(seg, self.image_len)
    }

    /// The byte range `(offset, len)` of segment `seg` on a data device of
    /// `data_len` bytes whose header is detached (kept in another file, as
    /// `cryptsetup --header`): the same rules as
    /// [`payload_range`](Self::payload_range), an offset of 0 included.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// let (_, seg) = img.segment()?;
    /// assert_eq!(img.data_range(seg, (1 << 20) + 4096)?, (1 << 20, 4096));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn data_range(&self, seg: &Segment, data_len: u64) -> Result<(u64, u64), Error> {
        let len = data_len;
        if seg.offset > len {
            return Err(Error::Truncated {
                what: "data segment",
                offset: seg.offset,
                len: seg.size.unwrap_or(0),
                image_len: len,
            });
        }
        match seg.size {
            Some(n) => {
                if seg.offset.checked_add(n).is_none_or(|e| e > len) {
                    return Err(Error::Truncated {
                        what: "data segment",
                        offset: seg.offset,
                        len: n,
                        image_len: len,
                    });
                }
                Ok((seg.offset, n))
            }
            None => {
                let n = len - seg.offset;
                if !n.is_multiple_of(u64::from(seg.sector_size)) {
                    return Err(Error::layout(
                        "segments.size",
                        format!(
                            "the data area ({n} bytes to the end of the image) is not a whole number of {}-byte sectors",
                            seg.sector_size
                        ),
                    ));
                }
                Ok((seg.offset, n))
            }
        }
    }
}

/// The cipher of a keyslot area: 512-byte sectors numbered from the area
/// start. Its key is a KDF output, checked by the same weak-key policy
/// with no opt-in: equal XTS halves there come only from a broken KDF.
pub(crate) fn area_cipher(spec: CipherSpec, derived: &[u8]) -> Result<SectorCipher, Error> {
    let geometry = Geometry::new(512, 0, false)?;
    Ok(SectorCipher::new(
        spec,
        derived,
        geometry,
        WeakKeys::Refuse,
    )?)
}

/// The AF stripes of every keyslot mdu writes (as cryptsetup).
///
/// ```
/// assert_eq!(mdu_luks2::AF_STRIPES, 4000);
/// ```
pub const AF_STRIPES: u32 = 4000;
