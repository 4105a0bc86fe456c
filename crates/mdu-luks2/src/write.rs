//! Header-only writes: the new metadata in both header copies, and the
//! keyslot areas they name, in an order that survives a crash at any write.
//!
//! The rule: a header copy is replaced only by a whole, sealed copy with a
//! higher sequence id, the **secondary copy first**, each write synced
//! before the next. A kill at any point leaves at least one valid copy,
//! and the loader (mdu's and cryptsetup's) takes the valid copy with the
//! highest sequence id:
//!
//! | killed during            | primary | secondary | opens as |
//! |--------------------------|---------|-----------|----------|
//! | the secondary's write    | old     | torn      | old      |
//! | the primary's write      | torn    | new       | new      |
//! | after both               | new     | new       | new      |
//!
//! Keyslot material is written (and synced) into an area no keyslot names
//! *before* the header that names it, and an area is wiped only *after* a
//! header that no longer names it is on disk: a kill between the two
//! leaves an unused area, never a keyslot without its material.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::format::{header_copies, os_random};
use crate::{BinaryHeader, Error, HeaderCopy, Image, Metadata};

/// Writes both copies of the header `template` holding `m` with sequence
/// id `seqid` into `dev`: the secondary copy first, synced, then the
/// primary, synced (see the [module](self) rule).
pub(crate) fn write_copies(
    dev: &File,
    template: &BinaryHeader,
    seqid: u64,
    m: &Metadata,
) -> Result<(), Error> {
    let copies = header_copies(template, seqid, m)?;
    let (primary, secondary) = copies.split_at(copies.len() / 2);
    for (bytes, at) in [(secondary, template.hdr_size), (primary, 0)] {
        dev.write_all_at(bytes, at).map_err(Error::Io)?;
        dev.sync_data().map_err(Error::Io)?;
    }
    Ok(())
}

impl Image {
    /// Replaces the header of the image (or detached header) in `dev` with
    /// `metadata`, and this `Image` with what was written: both copies,
    /// sealed, with the sequence id one above the highest valid one, the
    /// secondary first (crash-safe as the [module](crate::write) says).
    /// The text fields of [`header`](Image::header) (label, subsystem,
    /// UUID) are written as they are, so a caller changes them there
    /// first. A damaged copy is rewritten whole, which is how a header is
    /// repaired.
    ///
    /// The metadata are validated as a loaded header's are, and refused
    /// whole (nothing written) if they break a rule or do not fit the
    /// JSON area.
    ///
    /// ```
    /// use mdu_luks2::{format, os_random, FormatParams, Hash, Image, KdfParams};
    /// use std::io::Write;
    /// let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    ///     data_offset: 1 << 20, ..FormatParams::default() };
    /// let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let mut file = tempfile::tempfile()?;
    /// file.write_all(&region)?;
    ///
    /// let mut img = Image::load(&file)?;
    /// let seqid = img.header.seqid;
    /// img.header.label = "root".into();
    /// let m = img.metadata.clone();
    /// img.commit(&file, m)?;
    ///
    /// let again = Image::load(&file)?;
    /// assert_eq!((again.header.seqid, again.header.label.as_str()), (seqid + 1, "root"));
    /// assert!(again.secondary_error.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn commit(&mut self, dev: &File, metadata: Metadata) -> Result<(), Error> {
        let seqid = self.header.seqid.checked_add(1).ok_or(Error::Params {
            problem: "the header's sequence id is at its maximum".into(),
        })?;
        let mut template = self.header.clone();
        template.secondary = false;
        template.hdr_offset = 0;
        write_copies(dev, &template, seqid, &metadata)?;
        template.seqid = seqid;
        self.header = template;
        self.metadata = metadata;
        self.copy = HeaderCopy::Primary;
        self.primary_error = None;
        self.secondary_error = None;
        Ok(())
    }

    /// Writes `bytes` (keyslot material) at `offset` of `dev`, synced,
    /// after checking that the range lies inside the keyslots area and
    /// overlaps no area the current header names. Call it before the
    /// [`commit`](Image::commit) that names the area.
    ///
    /// ```
    /// # use mdu_luks2::{format, os_random, FormatParams, Hash, Image, KdfParams};
    /// # use std::io::Write;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    /// #     data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # file.write_all(&region)?;
    /// let img = Image::load(&file)?;
    /// let (free, _) = img.free_areas()[0];
    /// img.write_area(&file, free, &[0u8; 512])?;
    /// let used = img.metadata.keyslots[&0].area.offset;
    /// assert!(img.write_area(&file, used, &[0u8; 512]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_area(&self, dev: &File, offset: u64, bytes: &[u8]) -> Result<(), Error> {
        self.check_free(offset, bytes.len() as u64)?;
        dev.write_all_at(bytes, offset).map_err(Error::Io)?;
        dev.sync_data().map_err(Error::Io)
    }

    /// Fills `len` bytes at `offset` of `dev` with random bytes, synced,
    /// after the same checks as [`write_area`](Image::write_area): what a
    /// keyslot held, once a [`commit`](Image::commit)ted header no longer
    /// names it.
    ///
    /// ```
    /// # use mdu_luks2::{format, os_random, FormatParams, Hash, Image, KdfParams};
    /// # use std::io::Write;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    /// #     data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # file.write_all(&region)?;
    /// let img = Image::load(&file)?;
    /// let (free, len) = img.free_areas()[0];
    /// img.wipe_area(&file, free, len)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wipe_area(&self, dev: &File, offset: u64, len: u64) -> Result<(), Error> {
        self.check_free(offset, len)?;
        let mut buf = vec![0u8; len.min(1 << 20) as usize];
        let mut at = 0;
        while at < len {
            let n = (len - at).min(buf.len() as u64) as usize;
            os_random(&mut buf[..n])?;
            dev.write_all_at(&buf[..n], offset + at)
                .map_err(Error::Io)?;
            at += n as u64;
        }
        dev.sync_data().map_err(Error::Io)
    }

    /// Refuses a range outside the keyslots area or over an area that the
    /// header names.
    fn check_free(&self, offset: u64, len: u64) -> Result<(), Error> {
        let end = offset.checked_add(len).ok_or(Error::Params {
            problem: format!("the range at {offset} of {len} bytes overflows"),
        })?;
        let inside = self
            .free_areas()
            .into_iter()
            .any(|(o, l)| o <= offset && end <= o + l);
        if inside {
            Ok(())
        } else {
            Err(Error::Params {
                problem: format!(
                    "bytes {offset}..{end} are not a free part of the keyslots area: a keyslot, a journal or a header is there"
                ),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_image::image;

    /// A torn or missing write of either copy opens as the old or the new
    /// header, never neither: each state of the sequence, rebuilt.
    #[test]
    #[cfg_attr(miri, ignore = "PBKDF2 in the interpreter")]
    fn every_partial_commit_opens_old_or_new() {
        let (f, mut img) = image();
        let hdr = img.header.hdr_size;
        let mut old = vec![0u8; 2 * hdr as usize];
        f.read_exact_at(&mut old, 0).unwrap();
        img.header.label = "new".into();
        let mut m = img.metadata.clone();
        let token = serde_json::json!({"type": "mdu-test", "keyslots": []});
        m.tokens.insert("0".into(), token);
        img.commit(&f, m).unwrap();
        let mut new = vec![0u8; 2 * hdr as usize];
        f.read_exact_at(&mut new, 0).unwrap();
        let h = hdr as usize;
        // (primary, secondary) as a kill leaves them, with the label seen;
        // a torn copy has its new binary header over its old JSON.
        let torn = |copy: &[u8]| {
            let mut t = copy.to_vec();
            t[4096..].copy_from_slice(&old[4096..h]);
            t
        };
        let cases: [(Vec<u8>, Vec<u8>, &str); 4] = [
            (old[..h].to_vec(), torn(&new[h..]), ""),
            (old[..h].to_vec(), new[h..].to_vec(), "new"),
            (torn(&new[..h]), new[h..].to_vec(), "new"),
            (new[..h].to_vec(), new[h..].to_vec(), "new"),
        ];
        for (i, (p, s, label)) in cases.into_iter().enumerate() {
            f.write_all_at(&p, 0).unwrap();
            f.write_all_at(&s, hdr).unwrap();
            let got = Image::load(&f).unwrap_or_else(|e| panic!("state {i}: {e}"));
            assert_eq!(got.header.label, label, "state {i}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "PBKDF2 in the interpreter")]
    fn commit_repairs_a_damaged_copy_and_refuses_bad_metadata() {
        let (f, _) = image();
        f.write_all_at(&[0xffu8; 64], 1000).unwrap();
        let mut img = Image::load(&f).unwrap();
        assert!(img.primary_error.is_some());
        let mut bad = img.metadata.clone();
        bad.digests.clear();
        let before = img.header.seqid;
        assert!(img.commit(&f, bad).is_err());
        assert_eq!(Image::load(&f).unwrap().header.seqid, before);
        let m = img.metadata.clone();
        img.commit(&f, m).unwrap();
        let again = Image::load(&f).unwrap();
        assert!(again.primary_error.is_none() && again.secondary_error.is_none());
        assert_eq!(again.header.seqid, before + 1);
    }
}
