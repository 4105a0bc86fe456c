//! Whole-header writes: a header backup (`cryptsetup luksHeaderBackup`),
//! its restore (`luksHeaderRestore`), and the repair of a damaged header
//! copy from the good one (`cryptsetup repair`), each in an order that
//! survives a kill at any write.
//!
//! The header region is both header copies and the keyslots area,
//! `2 × hdr_size + keyslots_size` bytes from offset 0 (the data offset of
//! every header cryptsetup makes).
//!
//! A restore writes, each step synced before the next:
//!
//! 1. the parts of the backup's keyslots area that differ from the image
//!    and lie where the current header names nothing: the current header
//!    still opens, and every keyslot of the backup that needs nothing more
//!    is complete;
//! 2. only where the backup's keyslot material must go where the current
//!    header keeps keyslots of its own: a header write of the current
//!    metadata without those keyslots, then that material;
//! 3. the backup's secondary copy, then its primary copy;
//! 4. the parts that only the current header named (the backup's random
//!    fill over keyslots added since the backup).
//!
//! A kill before 3 leaves the current header (minus the keyslots step 2
//! took off), during 3 the current one or the backup (the loader takes the
//! valid copy with the higher sequence id, the primary on a tie), after it
//! the backup. Only when every keyslot of the current header lies where
//! the backup's keyslots go does a kill in step 2 leave a header that
//! loads with no keyslot; keeping one alive there would need a journal. A repair writes one copy, the damaged or outdated one, from
//! the good one: a kill leaves the good copy as it was.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::header::{BINARY_HEADER_LEN, BinaryHeader, seal};
use crate::image::load_copy;
use crate::{Error, HeaderCopy, Image, ReadAt, os_random};

impl Image {
    /// The length of the header region: both copies and the keyslots area
    /// (what a backup holds).
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// assert_eq!(Image::load(&image[..])?.region_len(), 1 << 20);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn region_len(&self) -> u64 {
        self.metadata.keyslots_area(self.hdr_size()).1
    }

    /// The header region of `r` (which this header was loaded from), as
    /// `cryptsetup luksHeaderBackup` stores it: padded with zeros to a
    /// multiple of 4096 bytes.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// let backup = img.backup(&image[..])?;
    /// assert_eq!(backup[..], image[..1 << 20]);
    /// assert_eq!(Image::load(&backup[..])?.header.uuid, img.header.uuid);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn backup<R: ReadAt + ?Sized>(&self, r: &R) -> Result<Vec<u8>, Error> {
        let len = self.region_len();
        let too_short = Error::Truncated {
            what: "header region",
            offset: 0,
            len,
            image_len: self.image_len,
        };
        if len > self.image_len {
            return Err(too_short);
        }
        let n = usize::try_from(len.next_multiple_of(4096)).map_err(|_| too_short)?;
        let mut buf = vec![0u8; n];
        r.read_exact_at(&mut buf[..len as usize], 0)
            .map_err(|error| Error::ReadAt {
                what: "header region",
                offset: 0,
                len,
                error: error.into(),
            })?;
        Ok(buf)
    }
}

/// A header backup checked against the image it is to be restored to
/// (`cryptsetup luksHeaderRestore`'s rules), ready to [`write`](Self::write).
///
/// ```
/// # use mdu_luks2::*;
/// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
/// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// # let mut file = tempfile::tempfile()?;
/// # std::io::Write::write_all(&mut file, &region)?;
/// use mdu_luks2::backup::Restore;
/// let backup = Image::load(&file)?.backup(&file)?;
/// let mut img = Image::load(&file)?;
/// img.erase(&file)?;
/// let restore = Restore::check(&file, backup)?;
/// assert!(restore.other_uuid.is_none() && restore.current.is_some());
/// restore.write(&file)?;
/// assert!(Image::load(&file)?.unlock(&file, b"pw").is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Restore {
    /// The backup's header.
    pub backup: Image,
    /// The header region to write.
    region: Vec<u8>,
    /// The image's current header, if it has a valid one.
    pub current: Option<Image>,
    /// `(image, backup)` UUIDs when they differ: the backup is of another
    /// volume (cryptsetup warns and asks).
    pub other_uuid: Option<(String, String)>,
    /// The image's header records a reencryption in progress (cryptsetup
    /// then skips the layout checks and warns).
    pub reencrypt_in_progress: bool,
}

impl Restore {
    /// Reads the backup `bytes` and checks it as cryptsetup does before it
    /// asks: a valid LUKS2 header (either copy), no reencryption in
    /// progress recorded in it, the whole region present; and if the image
    /// in `dev` has a valid header without a reencryption in progress, the
    /// same data offset and region length.
    ///
    /// ```
    /// use mdu_luks2::backup::Restore;
    /// let file = tempfile::tempfile()?;
    /// file.set_len(1 << 20)?;
    /// assert!(Restore::check(&file, vec![0u8; 1 << 20]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check(dev: &File, bytes: Vec<u8>) -> Result<Restore, Error> {
        let backup = Image::load(&bytes[..])?;
        if let Some(req) = backup.metadata.config.reencrypt_requirement() {
            return Err(Error::Params {
                problem: format!(
                    "the backup records a reencryption in progress ({req}): restoring it could corrupt the data"
                ),
            });
        }
        let len = backup.region_len();
        if len > bytes.len() as u64 {
            return Err(Error::Truncated {
                what: "header backup",
                offset: 0,
                len,
                image_len: bytes.len() as u64,
            });
        }
        let mut region = bytes;
        region.truncate(len as usize);
        let current = Image::load(dev).ok();
        let mut other_uuid = None;
        let mut reencrypt_in_progress = false;
        if let Some(cur) = &current {
            if cur.header.uuid != backup.header.uuid {
                other_uuid = Some((cur.header.uuid.clone(), backup.header.uuid.clone()));
            }
            reencrypt_in_progress = cur.metadata.config.reencrypt_requirement().is_some();
            if !reencrypt_in_progress {
                let offset = |i: &Image| i.segment().map(|(_, s)| s.offset).ok();
                if offset(cur) != offset(&backup) {
                    return Err(Error::Params {
                        problem: "the data offsets of the image and of the backup differ".into(),
                    });
                }
                if cur.region_len() != len {
                    return Err(Error::Params {
                        problem: format!(
                            "the header and keyslots areas of the image ({} bytes) and of the backup ({len} bytes) differ in size",
                            cur.region_len()
                        ),
                    });
                }
            }
        } else if dev.size()? < len {
            return Err(Error::Truncated {
                what: "image for the header backup",
                offset: 0,
                len,
                image_len: dev.size()?,
            });
        }
        Ok(Restore {
            backup,
            region,
            current,
            other_uuid,
            reencrypt_in_progress,
        })
    }

    /// Writes the backup into `dev` in the order of the
    /// [module](self) documentation, each step synced.
    ///
    /// See [`Restore`] for an example.
    pub fn write(self, dev: &File) -> Result<(), Error> {
        let hdr = self.backup.hdr_size();
        let end = self.region.len() as u64;
        let old_named = self.current.as_ref().map_or_else(Vec::new, named_areas);
        let new_named = named_areas(&self.backup);
        let hits = |areas: &[(u64, u64)], at: u64, n: u64| {
            areas.iter().any(|&(s, e)| s < at + n && at < e)
        };
        // The ranges of 4096-byte blocks of the keyslots area that change:
        // where the current header names nothing (written first), where
        // both name keyslots (the conflicts), where only the current header
        // names one (written last, once the backup's header drops it).
        let (mut first, mut conflicts, mut last) = (Vec::new(), Vec::new(), Vec::new());
        let mut old = vec![0u8; 4096];
        let mut at = 2 * hdr;
        while at < end {
            let n = (end - at).min(4096) as usize;
            let new = &self.region[at as usize..at as usize + n];
            let same = FileExt::read_exact_at(dev, &mut old[..n], at).is_ok() && old[..n] == *new;
            if !same {
                let list = match (
                    hits(&old_named, at, n as u64),
                    hits(&new_named, at, n as u64),
                ) {
                    (false, _) => &mut first,
                    (true, true) => &mut conflicts,
                    (true, false) => &mut last,
                };
                // Adjacent blocks are written as one range.
                match list.last_mut() {
                    Some((s, len)) if *s + *len as u64 == at => *len += n,
                    _ => list.push((at, n)),
                }
            }
            at += n as u64;
        }
        let put = |blocks: &[(u64, usize)]| -> Result<(), Error> {
            if blocks.is_empty() {
                return Ok(());
            }
            for &(at, n) in blocks {
                dev.write_all_at(&self.region[at as usize..at as usize + n], at)
                    .map_err(Error::Io)?;
            }
            dev.sync_data().map_err(Error::Io)
        };
        put(&first)?;
        if let (Some(mut cur), false) = (self.current, conflicts.is_empty()) {
            let gone: Vec<u32> = cur
                .metadata
                .keyslots
                .iter()
                .filter(|(_, k)| {
                    let (s, e) = (k.area.offset, k.area.offset.saturating_add(k.area.size));
                    conflicts.iter().any(|&(at, n)| s < at + n as u64 && at < e)
                })
                .map(|(&id, _)| id)
                .collect();
            let mut m = cur.metadata.clone();
            crate::edit::drop_keyslots(&mut m, &gone);
            // A current header that cannot be rewritten (it breaks a rule
            // the writer keeps) is simply overwritten below.
            if let Err(e @ Error::Io(_)) = cur.commit(dev, m) {
                return Err(e);
            }
        }
        put(&conflicts)?;
        let h = hdr as usize;
        put(&[(hdr, h)])?;
        put(&[(0, h)])?;
        put(&last)
    }
}

/// The areas of the keyslots area that `img` names (keyslots and the
/// reencryption record), as `(start, end)`.
fn named_areas(img: &Image) -> Vec<(u64, u64)> {
    let m = &img.metadata;
    m.keyslots
        .values()
        .map(|k| (k.area.offset, k.area.size))
        .chain(m.reencrypt.iter().map(|r| (r.area.offset, r.area.size)))
        .map(|(o, n)| (o, o.saturating_add(n)))
        .collect()
}

/// What [`repair`] did.
///
/// ```
/// use mdu_luks2::{backup::Repaired, HeaderCopy};
/// let r = Repaired::Rewrote { copy: HeaderCopy::Secondary, why: "damaged".into() };
/// assert_ne!(r, Repaired::Nothing);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Repaired {
    /// Both copies are valid and equal: nothing written.
    Nothing,
    /// `copy` was rewritten from the other one.
    Rewrote {
        /// The copy written.
        copy: HeaderCopy,
        /// What was wrong with it.
        why: String,
    },
}

/// Repairs the header of `dev` as cryptsetup's header recovery does: a
/// copy that is damaged, or valid with a lower sequence id, is rewritten
/// from the good one (the same metadata and sequence id, a new salt),
/// leaving the good copy untouched. Neither copy valid is an error.
///
/// ```
/// # use mdu_luks2::*;
/// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
/// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// # let mut file = tempfile::tempfile()?;
/// # std::io::Write::write_all(&mut file, &region)?;
/// use mdu_luks2::backup::{repair, Repaired};
/// use std::os::unix::fs::FileExt;
/// file.write_all_at(&[0xff; 16], 5000)?; // damage the primary's JSON
/// assert!(matches!(repair(&file)?, Repaired::Rewrote { copy: HeaderCopy::Primary, .. }));
/// let img = Image::load(&file)?;
/// assert!(img.primary_error.is_none() && img.secondary_error.is_none());
/// assert_eq!(repair(&file)?, Repaired::Nothing);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn repair(dev: &File) -> Result<Repaired, Error> {
    let img = Image::load(dev)?;
    let hdr = img.hdr_size();
    let (good_at, bad_at, bad) = match img.copy {
        HeaderCopy::Primary => (0, hdr, HeaderCopy::Secondary),
        HeaderCopy::Secondary => (hdr, 0, HeaderCopy::Primary),
    };
    let why = match load_copy(dev, img.image_len, bad_at) {
        Err(e) => e.to_string(),
        Ok((h, _)) if h.seqid < img.header.seqid => format!(
            "its sequence id {} is older than the other copy's {}",
            h.seqid, img.header.seqid
        ),
        Ok(_) => return Ok(Repaired::Nothing),
    };
    let mut copy = vec![0u8; hdr as usize];
    FileExt::read_exact_at(dev, &mut copy, good_at).map_err(Error::Io)?;
    let mut bh = BinaryHeader::parse(&copy, good_at)?;
    bh.secondary = bad == HeaderCopy::Secondary;
    bh.hdr_offset = bad_at;
    os_random(&mut bh.salt)?;
    copy[..BINARY_HEADER_LEN].copy_from_slice(&bh.to_bytes()?);
    seal(&mut copy);
    dev.write_all_at(&copy, bad_at).map_err(Error::Io)?;
    dev.sync_data().map_err(Error::Io)?;
    Ok(Repaired::Rewrote { copy: bad, why })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FormatParams, Hash, KdfParams, format};
    use std::io::Write;

    fn file(uuid: Option<&str>) -> File {
        let params = FormatParams {
            kdf: KdfParams::Pbkdf2 {
                hash: Hash::Sha256,
                iterations: 1000,
            },
            digest_iterations: 1000,
            data_offset: 1 << 20,
            uuid: uuid.map(str::to_owned),
            ..FormatParams::default()
        };
        let region = format(
            &params,
            b"pw",
            &(0..64).collect::<Vec<u8>>(),
            &mut os_random,
        )
        .unwrap();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&region).unwrap();
        f
    }

    #[test]
    #[cfg_attr(miri, ignore = "PBKDF2 in the interpreter")]
    fn an_outdated_secondary_is_rewritten_from_the_primary() {
        let f = file(None);
        let hdr = Image::load(&f).unwrap().hdr_size();
        let mut old = vec![0u8; hdr as usize];
        FileExt::read_exact_at(&f, &mut old, hdr).unwrap();
        let mut img = Image::load(&f).unwrap();
        img.set_labels(&f, Some("new"), None).unwrap();
        f.write_all_at(&old, hdr).unwrap();
        let got = repair(&f).unwrap();
        assert!(
            matches!(&got, Repaired::Rewrote { copy: HeaderCopy::Secondary, why } if why.contains("older")),
            "{got:?}"
        );
        let (h, _) = load_copy(&f, img.image_len, hdr).unwrap();
        assert_eq!((h.seqid, h.label.as_str()), (img.header.seqid, "new"));
    }

    #[test]
    #[cfg_attr(miri, ignore = "PBKDF2 in the interpreter")]
    fn restore_refuses_another_layout_and_flags_another_volume() {
        let f = file(Some("11111111-1111-1111-1111-111111111111"));
        let other = file(Some("22222222-2222-2222-2222-222222222222"));
        let backup = Image::load(&other).unwrap().backup(&other).unwrap();
        let r = Restore::check(&f, backup.clone()).unwrap();
        assert_eq!(
            r.other_uuid.as_ref().map(|(a, _)| a.as_str()),
            Some("11111111-1111-1111-1111-111111111111")
        );
        // The backup's keyslot lies where the image's is: step 2.
        r.write(&f).unwrap();
        let img = Image::load(&f).unwrap();
        assert_eq!(img.header.uuid, "22222222-2222-2222-2222-222222222222");
        assert!(img.unlock(&f, b"pw").is_ok());
        let mut short = backup;
        short.truncate(1 << 19);
        assert!(Restore::check(&f, short).is_err());
    }
}
