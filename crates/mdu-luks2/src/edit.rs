//! Header edits that move no key material, as cryptsetup's `luksUUID
//! --uuid`, `config` and `luksErase` make them: each one header write
//! through [`Image::commit`] (both copies, the next sequence id, the
//! secondary first), so a kill at any write leaves the old header or the
//! new one.

use std::fs::File;

use crate::{Error, Image, MAX_KEYSLOTS, Metadata};

/// The longest label or subsystem, in bytes (the field holds 48 with its
/// NUL).
///
/// ```
/// assert_eq!(mdu_luks2::edit::LABEL_MAX, 47);
/// ```
pub const LABEL_MAX: usize = 47;

/// A textual UUID checked as libuuid's `uuid_parse` checks it (what
/// `cryptsetup luksUUID --uuid` takes): 36 characters, hyphens at 8, 13,
/// 18 and 23, hexadecimal digits elsewhere in either case. Returned in the
/// lower case `uuid_unparse` writes.
///
/// ```
/// use mdu_luks2::edit::parse_uuid;
/// assert_eq!(parse_uuid("12345678-1234-1234-1234-123456789ABC")?, "12345678-1234-1234-1234-123456789abc");
/// assert!(parse_uuid("12345678123412341234123456789abc").is_err());
/// assert!(parse_uuid("g2345678-1234-1234-1234-123456789abc").is_err());
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn parse_uuid(text: &str) -> Result<String, Error> {
    let b = text.as_bytes();
    let ok = b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        });
    if !ok {
        return Err(Error::Params {
            problem: format!(
                "{text:?} is not a UUID: 36 characters, hexadecimal digits in groups of 8-4-4-4-12 joined by hyphens"
            ),
        });
    }
    Ok(text.to_ascii_lowercase())
}

/// A keyslot's priority, as `cryptsetup config --priority` names it.
///
/// ```
/// use mdu_luks2::edit::Priority;
/// assert_eq!(Priority::Prefer.value(), Some(2));
/// assert_eq!(Priority::Normal.value(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priority {
    /// 0: tried only when named (`--key-slot`).
    Ignore,
    /// 1: the default (no `priority` field).
    Normal,
    /// 2: tried before the normal ones.
    Prefer,
}

impl Priority {
    /// The `priority` field written: none for normal, as cryptsetup.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::edit::Priority::Ignore.value(), Some(0));
    /// ```
    pub const fn value(self) -> Option<i64> {
        match self {
            Priority::Ignore => Some(0),
            Priority::Normal => None,
            Priority::Prefer => Some(2),
        }
    }
}

/// The first `LABEL_MAX` bytes of `s` (cut at a character boundary), as
/// cryptsetup's `strncpy` into the 48-byte field.
fn clip(s: &str) -> String {
    let mut end = s.len().min(LABEL_MAX);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// Removes keyslots `slots` from `m`: their entries, their ids from every
/// digest and token, and the digests left with neither keyslots nor
/// segments (what cryptsetup's `LUKS2_digests_erase_unused` drops).
pub(crate) fn drop_keyslots(m: &mut Metadata, slots: &[u32]) {
    for s in slots {
        m.keyslots.remove(s);
        crate::token::unassign_everywhere(&mut m.tokens, *s);
    }
    for d in m.digests.values_mut() {
        d.keyslots.retain(|k| !slots.contains(k));
    }
    m.digests
        .retain(|_, d| !d.keyslots.is_empty() || !d.segments.is_empty());
}

impl Image {
    /// Sets the UUID (`cryptsetup luksUUID --uuid`), checked by
    /// [`parse_uuid`]. Returns `false`, writing nothing, when the image
    /// already has it (as cryptsetup).
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # std::io::Write::write_all(&mut file, &region)?;
    /// let mut img = Image::load(&file)?;
    /// assert!(img.set_uuid(&file, "12345678-1234-1234-1234-123456789abc")?);
    /// assert_eq!(Image::load(&file)?.header.uuid, "12345678-1234-1234-1234-123456789abc");
    /// assert!(!img.set_uuid(&file, "12345678-1234-1234-1234-123456789ABC")?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_uuid(&mut self, dev: &File, uuid: &str) -> Result<bool, Error> {
        let uuid = parse_uuid(uuid)?;
        if uuid == self.header.uuid {
            return Ok(false);
        }
        let old = std::mem::replace(&mut self.header.uuid, uuid);
        let m = self.metadata.clone();
        self.commit(dev, m)
            .inspect_err(|_| self.header.uuid = old)?;
        Ok(true)
    }

    /// Sets the label and the subsystem together, as `cryptsetup config
    /// --label/--subsystem` does: one not given becomes empty, and each is
    /// cut to [`LABEL_MAX`] bytes.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # std::io::Write::write_all(&mut file, &region)?;
    /// let mut img = Image::load(&file)?;
    /// img.set_labels(&file, Some("root"), Some("sys"))?;
    /// img.set_labels(&file, Some(&"x".repeat(60)), None)?;
    /// let h = Image::load(&file)?.header;
    /// assert_eq!((h.label.len(), h.subsystem.as_str()), (47, ""));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_labels(
        &mut self,
        dev: &File,
        label: Option<&str>,
        subsystem: Option<&str>,
    ) -> Result<(), Error> {
        let old = (self.header.label.clone(), self.header.subsystem.clone());
        self.header.label = clip(label.unwrap_or(""));
        self.header.subsystem = clip(subsystem.unwrap_or(""));
        let m = self.metadata.clone();
        self.commit(dev, m).inspect_err(|_| {
            (self.header.label, self.header.subsystem) = old;
        })
    }

    /// Sets the priority of keyslot `slot` (`cryptsetup config --priority
    /// --key-slot`).
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # std::io::Write::write_all(&mut file, &region)?;
    /// use mdu_luks2::edit::Priority;
    /// let mut img = Image::load(&file)?;
    /// img.set_priority(&file, 0, Priority::Prefer)?;
    /// assert_eq!(Image::load(&file)?.metadata.keyslots[&0].priority, Some(2));
    /// assert!(img.set_priority(&file, 5, Priority::Ignore).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_priority(&mut self, dev: &File, slot: u32, priority: Priority) -> Result<(), Error> {
        let mut m = self.metadata.clone();
        let ks = m
            .keyslots
            .get_mut(&slot)
            .filter(|_| slot < MAX_KEYSLOTS)
            .ok_or(Error::NoSuchKeyslot { slot })?;
        ks.priority = priority.value();
        self.commit(dev, m)
    }

    /// Removes every keyslot (`cryptsetup luksErase`): one header write
    /// that names none (digests and tokens kept, their keyslot lists
    /// emptied), then each keyslot area filled with random bytes. Returns
    /// the ids removed. The volume key is then gone for good, unless a
    /// header backup holds it.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }, data_offset: 1 << 20, ..FormatParams::default() };
    /// # let region = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// # let mut file = tempfile::tempfile()?;
    /// # std::io::Write::write_all(&mut file, &region)?;
    /// let mut img = Image::load(&file)?;
    /// assert_eq!(img.erase(&file)?, vec![0]);
    /// let again = Image::load(&file)?;
    /// assert!(again.metadata.keyslots.is_empty());
    /// assert!(again.unlock(&file, b"pw").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn erase(&mut self, dev: &File) -> Result<Vec<u32>, Error> {
        let slots: Vec<u32> = self.metadata.keyslots.keys().copied().collect();
        if slots.is_empty() {
            return Ok(slots);
        }
        let areas: Vec<(u64, u64)> = self
            .metadata
            .keyslots
            .values()
            .map(|k| (k.area.offset, k.area.size))
            .collect();
        let mut m = self.metadata.clone();
        drop_keyslots(&mut m, &slots);
        self.commit(dev, m)?;
        for (offset, len) in areas {
            // An area cut short by the end of a detached header file is
            // wiped as far as the file goes.
            let len = len.min(self.image_len.saturating_sub(offset));
            if len > 0 {
                self.wipe_area(dev, offset, len)?;
            }
        }
        Ok(slots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    use crate::test_image::image;

    #[test]
    fn uuids_are_checked_as_libuuid_checks_them() {
        let good = "0123abcd-ef01-2345-6789-abcdefABCDEF";
        assert_eq!(parse_uuid(good).unwrap(), good.to_ascii_lowercase());
        for bad in [
            "",
            "0123abcd-ef01-2345-6789-abcdefABCDE",
            "0123abcd-ef01-2345-6789-abcdefABCDEF0",
            "0123abcd0ef01-2345-6789-abcdefABCDEF",
            "0123abcd-ef01-2345-6789-abcdefABCDE ",
            "{123abcd-ef01-2345-6789-abcdefABCDEF",
        ] {
            assert!(parse_uuid(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn labels_are_cut_at_a_character_boundary() {
        assert_eq!(clip(&"é".repeat(30)).len(), 46);
        assert_eq!(clip("root"), "root");
    }

    #[test]
    #[cfg_attr(miri, ignore = "PBKDF2 in the interpreter")]
    fn erase_removes_the_keyslots_and_their_material() {
        let (f, mut img) = image();
        let area = img.metadata.keyslots[&0].area.clone();
        let mut m = img.metadata.clone();
        let token = serde_json::json!({"type": "t", "keyslots": ["0"]});
        m.tokens.insert("0".into(), token);
        img.commit(&f, m).unwrap();
        let mut before = vec![0u8; area.size as usize];
        f.read_exact_at(&mut before, area.offset).unwrap();
        assert_eq!(img.erase(&f).unwrap(), [0]);
        let again = Image::load(&f).unwrap();
        assert!(again.metadata.keyslots.is_empty());
        assert_eq!(again.metadata.digests[&0].keyslots, Vec::<u32>::new());
        assert_eq!(
            again.token_export(0).unwrap(),
            r#"{"type":"t","keyslots":[]}"#
        );
        let mut after = vec![0u8; area.size as usize];
        f.read_exact_at(&mut after, area.offset).unwrap();
        assert_ne!(before, after);
        assert_eq!(img.erase(&f).unwrap(), Vec::<u32>::new());
    }
}
