//! Keyslots added, replaced and removed in an existing image, as
//! cryptsetup's `luksAddKey`, `luksChangeKey`, `luksConvertKey`,
//! `luksKillSlot` and `luksRemoveKey` do, every header write crash-safe
//! (the [`write`](crate::write) rule):
//!
//! | change            | writes, in order                                          |
//! |-------------------|-----------------------------------------------------------|
//! | add a keyslot     | material into a free area; the header naming it           |
//! | replace a keyslot | material into a free area; the header naming it under the old id; the old area wiped |
//! | remove a keyslot  | the header without it; its area wiped                     |
//!
//! Each header write is one [`Image::commit`], so a kill at any write
//! leaves the old keyslots or the new ones, never neither. A keyslot is
//! never rewritten in place (cryptsetup 2.6 does that for `luksChangeKey
//! --key-slot`, and for any change when the keyslots area is full): with
//! no free area large enough the change is refused
//! ([`Error::NoKeyslotRoom`]).
//!
//! A new area is placed as cryptsetup places it (`LUKS2_find_area_gap`):
//! the first free range, from the start of the keyslots area, that holds
//! the key material rounded up to 4096 bytes (258048 bytes for a 512-bit
//! key); a new keyslot takes the lowest free id unless one is asked for.

use std::fs::File;

use mdu_dmcrypt::CipherSpec;

use crate::format::{AreaCrypt, header_copies, new_keyslot};
use crate::{
    AF_STRIPES, Digest, Error, FormatChoices, Hash, Image, KdfParams, MAX_KEYSLOTS, Metadata,
    ReadAt, VolumeKey, os_random,
};

/// How a new keyslot is made: cryptsetup's `--pbkdf*`, `--hash`,
/// `--keyslot-cipher` and `--keyslot-key-size`.
///
/// ```
/// use mdu_luks2::{FormatChoices, Hash, KdfParams, KeyslotParams, Pbkdf};
/// let c = FormatChoices { pbkdf: Pbkdf::Pbkdf2, iterations: Some(1000), ..FormatChoices::default() };
/// let p = KeyslotParams::from_choices(&c)?;
/// assert_eq!(p.kdf, KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 });
/// assert_eq!((p.af_hash, p.area, p.digest_iterations), (Hash::Sha256, None, 1000));
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyslotParams {
    /// The key derivation (a new salt is drawn for each keyslot).
    pub kdf: KdfParams,
    /// The hash of the anti-forensic splitter: cryptsetup takes the
    /// `--hash` of the PBKDF settings, whatever the KDF.
    pub af_hash: Hash,
    /// The cipher of the keyslot area and its key size in bytes; `None`:
    /// the data segment's cipher and volume key size, or aes-xts-plain64
    /// with a 512-bit key where the segment's cipher cannot encrypt a
    /// keyslot (as cryptsetup).
    pub area: Option<(CipherSpec, usize)>,
    /// Iterations of a new volume-key digest (an unbound keyslot's).
    pub digest_iterations: u32,
}

impl KeyslotParams {
    /// The parameters of a new keyslot from the KDF choices of `c` (its
    /// `pbkdf`, `iterations`, `memory_kib`, `parallel` and `hash`), with
    /// cryptsetup's defaults for what they leave out, checked as
    /// [`FormatChoices::params`] checks them.
    ///
    /// ```
    /// use mdu_luks2::{FormatChoices, KeyslotParams, Pbkdf};
    /// let c = FormatChoices { pbkdf: Pbkdf::Argon2id, memory_kib: Some(16), ..FormatChoices::default() };
    /// assert!(KeyslotParams::from_choices(&c).is_err());
    /// ```
    pub fn from_choices(c: &FormatChoices) -> Result<KeyslotParams, Error> {
        let p = c.params()?;
        let af_hash = match c.hash {
            Some(h) => h,
            None => Hash::parse(FormatChoices::HASH).unwrap_or(Hash::Sha256),
        };
        Ok(KeyslotParams {
            kdf: p.kdf,
            af_hash,
            area: None,
            digest_iterations: p.digest_iterations,
        })
    }
}

/// Where a new keyslot goes: its id and its area.
///
/// ```
/// # use mdu_luks2::*;
/// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
/// #     data_offset: 16 << 20, ..FormatParams::default() };
/// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// let img = Image::load(&image[..])?;
/// let place = img.keyslot_place(None, 64)?;
/// assert_eq!((place.slot, place.offset, place.size), (1, 32768 + 258048, 258048));
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyslotPlace {
    /// The keyslot id.
    pub slot: u32,
    /// The area's offset in bytes.
    pub offset: u64,
    /// The area's size in bytes.
    pub size: u64,
}

/// The cipher of a keyslot area when the data segment's cannot be used
/// (cryptsetup's `DEFAULT_LUKS2_KEYSLOT_CIPHER`), and its key size.
const DEFAULT_AREA_CIPHER: &str = "aes-xts-plain64";
const DEFAULT_AREA_KEY_SIZE: usize = 64;

/// The area size of a keyslot keeping a key of `key_len` bytes: its AF
/// material rounded up to 4096 bytes.
fn area_size(key_len: usize) -> u64 {
    (key_len as u64 * u64::from(AF_STRIPES)).div_ceil(4096) * 4096
}

/// The lowest id not in `used`.
fn lowest_free(used: impl Iterator<Item = u32> + Clone) -> Option<u32> {
    (0..MAX_KEYSLOTS).find(|id| !used.clone().any(|u| u == *id))
}

impl Image {
    /// Where a new keyslot keeping a key of `key_len` bytes would go: the
    /// id `slot` (refused if taken or out of range) or the lowest free
    /// one, and the first free range of the keyslots area that holds its
    /// area (as cryptsetup's `LUKS2_find_area_gap`). Cheap: callers check
    /// it before any key derivation.
    ///
    /// # Errors
    ///
    /// [`Error::KeyslotTaken`], [`Error::KeyslotsFull`],
    /// [`Error::NoKeyslotRoom`].
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    /// #     data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// assert!(matches!(img.keyslot_place(Some(0), 64), Err(Error::KeyslotTaken { slot: 0 })));
    /// assert_eq!(img.keyslot_place(Some(7), 64)?.slot, 7);
    /// // No room in a 1 MiB image for the area of an 8192-bit key.
    /// assert!(matches!(img.keyslot_place(None, 1024), Err(Error::NoKeyslotRoom { needed: 4096000 })));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn keyslot_place(&self, slot: Option<u32>, key_len: usize) -> Result<KeyslotPlace, Error> {
        let m = &self.metadata;
        let used = m
            .keyslots
            .keys()
            .copied()
            .chain(m.reencrypt.as_ref().map(|r| r.id));
        let slot = match slot {
            Some(s) if s >= MAX_KEYSLOTS || used.clone().any(|u| u == s) => {
                return Err(Error::KeyslotTaken { slot: s });
            }
            Some(s) => s,
            None => lowest_free(used).ok_or(Error::KeyslotsFull)?,
        };
        let (offset, size) = self.keyslot_area(key_len)?;
        Ok(KeyslotPlace { slot, offset, size })
    }

    /// The area a new keyslot keeping a key of `key_len` bytes would
    /// get, as `(offset, size)`: the first free range that holds it
    /// ([`Error::NoKeyslotRoom`] if none does). What a change of keyslot
    /// needs, cheap to check before any key derivation.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    /// #     data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// assert_eq!(img.keyslot_area(32)?, (32768 + 258048, 131072));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn keyslot_area(&self, key_len: usize) -> Result<(u64, u64), Error> {
        let needed = area_size(key_len);
        self.metadata
            .free_areas(self.hdr_size())
            .into_iter()
            .find(|&(_, len)| len >= needed)
            .map(|(offset, _)| (offset, needed))
            .ok_or(Error::NoKeyslotRoom { needed })
    }

    /// How the area of a new keyslot is encrypted: `params.area`, else
    /// the data segment's cipher with the volume key size (the key size
    /// of a keyslot bound to it), else aes-xts-plain64 with a 512-bit key
    /// (cryptsetup's `crypt_keyslot_get_encryption`).
    fn area_crypt(&self, params: &KeyslotParams) -> Result<AreaCrypt, Error> {
        let (cipher, key_size) = match params.area {
            Some(area) => area,
            None => match self.segment_area() {
                Some(area) => area,
                None => (
                    CipherSpec::parse(DEFAULT_AREA_CIPHER)?,
                    DEFAULT_AREA_KEY_SIZE,
                ),
            },
        };
        cipher.check_key_len(key_size)?;
        Ok(AreaCrypt {
            cipher,
            key_size,
            af_hash: params.af_hash,
        })
    }

    /// The data segment's cipher and volume key size, if a keyslot can
    /// use them.
    fn segment_area(&self) -> Option<(CipherSpec, usize)> {
        let spec = self.metadata.segments.get(&0)?.encryption.spec().ok()?;
        let key_size = self.volume_key_size()?;
        spec.check_key_len(key_size).ok()?;
        Some((spec, key_size))
    }

    /// The volume key size of the data segment in bytes, as the keyslots
    /// bound to it say (`None` when none is), as cryptsetup's
    /// `crypt_get_volume_key_size`.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    /// #     data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// assert_eq!(Image::load(&image[..])?.volume_key_size(), Some(64));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn volume_key_size(&self) -> Option<usize> {
        let m = &self.metadata;
        let digest = m.digests.values().find(|d| d.segments.contains(&0))?;
        let key_size = digest
            .keyslots
            .iter()
            .find_map(|k| m.keyslots.get(k))?
            .key_size;
        Some(key_size as usize)
    }

    /// Refuses a new keyslot while the header carries requirements (a
    /// reencryption in progress, a feature this crate does not know), as
    /// cryptsetup refuses to add or change keyslots then.
    fn no_requirements(&self) -> Result<(), Error> {
        match &self.metadata.config.requirements {
            Some(r) if !r.is_empty() => Err(Error::Requirements {
                requirements: r.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// Opens a keyslot with `passphrase` whatever its binding, as the
    /// keyslot verbs need it: keyslot `slot` only if given (bound or
    /// unbound), else the keyslots of the data segment in unlock order,
    /// then the unbound ones. The key's [`VolumeKey::digest`] says which
    /// digest checked it.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    /// #     data_offset: 1 << 20, ..FormatParams::default() };
    /// # let image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// let img = Image::load(&image[..])?;
    /// assert_eq!(img.unlock_any(&image[..], None, b"pw")?.slot, 0);
    /// assert!(img.unlock_any(&image[..], Some(0), b"px").unwrap_err().is_wrong_passphrase());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn unlock_any<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        slot: Option<u32>,
        passphrase: &[u8],
    ) -> Result<VolumeKey, Error> {
        match slot {
            Some(s) if self.metadata.keyslot_is_unbound(s) => self.unlock_unbound(r, s, passphrase),
            Some(s) => self.unlock_slot(r, s, passphrase),
            None => match self.unlock(r, passphrase) {
                Err(Error::UnboundKeyslot { slot, .. }) => self.unlock_unbound(r, slot, passphrase),
                other => other,
            },
        }
    }

    /// Adds a keyslot keeping the volume key `key` of the data segment
    /// under `passphrase`, at `slot` or the lowest free id, as
    /// `cryptsetup luksAddKey` (the key comes from an unlock or a
    /// `--volume-key-file`; it is checked against the segment's digest
    /// first). Returns the new keyslot's id.
    ///
    /// # Errors
    ///
    /// [`Error::WrongVolumeKey`] for a key that is not the volume's, and
    /// what [`keyslot_place`](Self::keyslot_place) refuses; nothing is
    /// written then.
    ///
    /// ```
    /// use mdu_luks2::*;
    /// use std::io::Write;
    /// let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    ///     data_offset: 1 << 20, ..FormatParams::default() };
    /// let mut file = tempfile::tempfile()?;
    /// file.write_all(&format(&params, b"old", &(0..64).collect::<Vec<u8>>(), &mut os_random)?)?;
    ///
    /// let mut img = Image::load(&file)?;
    /// let key = img.unlock(&file, b"old")?;
    /// let choices = FormatChoices { pbkdf: Pbkdf::Pbkdf2, iterations: Some(1000), ..FormatChoices::default() };
    /// let slot = img.add_keyslot(&file, &key.key, None, b"new", &KeyslotParams::from_choices(&choices)?)?;
    /// assert_eq!(slot, 1);
    /// assert_eq!(Image::load(&file)?.unlock(&file, b"new")?.slot, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_keyslot(
        &mut self,
        dev: &File,
        key: &[u8],
        slot: Option<u32>,
        passphrase: &[u8],
        params: &KeyslotParams,
    ) -> Result<u32, Error> {
        self.no_requirements()?;
        let (seg, _) = self.segment()?;
        let (digest, d) = self.segment_digest(seg)?;
        if !d.matches(key) {
            return Err(Error::WrongVolumeKey);
        }
        let place = self.keyslot_place(slot, key.len())?;
        let mut m = self.metadata.clone();
        bind(&mut m, digest, place.slot);
        self.store(dev, m, place, key, passphrase, params)?;
        Ok(place.slot)
    }

    /// Adds an unbound keyslot (bound to no segment, as `cryptsetup
    /// luksAddKey --unbound`) keeping `key` (any bytes; a random key of
    /// the size wanted, or a `--volume-key-file`) under `passphrase`, with
    /// a new volume-key digest of it. A `key` that is the data segment's
    /// volume key makes a bound keyslot, as in cryptsetup. Returns the
    /// new keyslot's id.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # use std::io::Write;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    /// #     data_offset: 1 << 20, ..FormatParams::default() };
    /// # let mut file = tempfile::tempfile()?;
    /// # file.write_all(&format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?)?;
    /// let mut img = Image::load(&file)?;
    /// let choices = FormatChoices { pbkdf: Pbkdf::Pbkdf2, iterations: Some(1000), ..FormatChoices::default() };
    /// let slot = img.add_unbound_keyslot(&file, &[9u8; 32], None, b"u", &KeyslotParams::from_choices(&choices)?)?;
    /// let img = Image::load(&file)?;
    /// assert!(img.metadata.keyslot_is_unbound(slot));
    /// assert_eq!(&img.unlock_unbound(&file, slot, b"u")?.key[..], &[9u8; 32]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_unbound_keyslot(
        &mut self,
        dev: &File,
        key: &[u8],
        slot: Option<u32>,
        passphrase: &[u8],
        params: &KeyslotParams,
    ) -> Result<u32, Error> {
        self.no_requirements()?;
        if key.is_empty() {
            return Err(Error::Params {
                problem: "an unbound keyslot needs a key of at least one byte".into(),
            });
        }
        if let Ok((seg, _)) = self.segment()
            && self.segment_digest(seg).is_ok_and(|(_, d)| d.matches(key))
        {
            return self.add_keyslot(dev, key, slot, passphrase, params);
        }
        let place = self.keyslot_place(slot, key.len())?;
        let mut m = self.metadata.clone();
        let id = lowest_free(m.digests.keys().copied()).ok_or(Error::Params {
            problem: "every digest id is in use".into(),
        })?;
        let mut salt = vec![0u8; 32];
        os_random(&mut salt)?;
        let digest = Digest::of_key(
            key,
            params.af_hash,
            params.digest_iterations,
            salt,
            vec![place.slot],
            Vec::new(),
        );
        m.digests.insert(id, digest);
        self.store(dev, m, place, key, passphrase, params)?;
        Ok(place.slot)
    }

    /// Replaces keyslot `slot`, which keeps `key`, by a new keyslot
    /// keeping it under `passphrase` with `params`, under the same id and
    /// priority, in a new area: `cryptsetup luksChangeKey` (a new
    /// passphrase) and `luksConvertKey` (the same passphrase, new KDF
    /// parameters). The old area is wiped once the header no longer names
    /// it.
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchKeyslot`]; [`Error::WrongVolumeKey`] if `key` is not
    /// the keyslot's; [`Error::NoKeyslotRoom`] when no free range holds
    /// the new area (the old keyslot is never overwritten in place).
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # use std::io::Write;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    /// #     data_offset: 1 << 20, ..FormatParams::default() };
    /// # let mut file = tempfile::tempfile()?;
    /// # file.write_all(&format(&params, b"old", &(0..64).collect::<Vec<u8>>(), &mut os_random)?)?;
    /// let mut img = Image::load(&file)?;
    /// let key = img.unlock(&file, b"old")?;
    /// let choices = FormatChoices { pbkdf: Pbkdf::Pbkdf2, iterations: Some(2000), ..FormatChoices::default() };
    /// img.change_keyslot(&file, key.slot, &key.key, b"new", &KeyslotParams::from_choices(&choices)?)?;
    /// let img = Image::load(&file)?;
    /// assert_eq!(img.unlock(&file, b"new")?.slot, 0);
    /// assert!(img.unlock(&file, b"old").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn change_keyslot(
        &mut self,
        dev: &File,
        slot: u32,
        key: &[u8],
        passphrase: &[u8],
        params: &KeyslotParams,
    ) -> Result<(), Error> {
        self.no_requirements()?;
        let old = self
            .metadata
            .keyslots
            .get(&slot)
            .ok_or(Error::NoSuchKeyslot { slot })?
            .clone();
        let digest = self
            .metadata
            .keyslot_digest(slot)
            .and_then(|d| self.metadata.digests.get(&d))
            .ok_or(Error::NoKeyslot)?;
        if !digest.matches(key) {
            return Err(Error::WrongVolumeKey);
        }
        let (offset, size) = self.keyslot_area(key.len())?;
        let place = KeyslotPlace { slot, offset, size };
        let m = self.metadata.clone();
        self.store(dev, m, place, key, passphrase, params)?;
        self.wipe_area(dev, old.area.offset, old.area.size)
    }

    /// Removes keyslot `slot`, as `cryptsetup luksKillSlot` (and
    /// `luksRemoveKey` once the passphrase has found it): the header
    /// without it, its id taken out of digests and tokens (a digest left
    /// with no keyslot and no segment is removed), then its area wiped.
    /// No passphrase is checked here: the caller decides who may.
    ///
    /// ```
    /// # use mdu_luks2::*;
    /// # use std::io::Write;
    /// # let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    /// #     data_offset: 1 << 20, ..FormatParams::default() };
    /// # let mut file = tempfile::tempfile()?;
    /// # file.write_all(&format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?)?;
    /// let mut img = Image::load(&file)?;
    /// img.remove_keyslot(&file, 0)?;
    /// let img = Image::load(&file)?;
    /// assert!(img.metadata.keyslots.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove_keyslot(&mut self, dev: &File, slot: u32) -> Result<(), Error> {
        let old = self
            .metadata
            .keyslots
            .get(&slot)
            .cloned()
            .ok_or(Error::NoSuchKeyslot { slot })?;
        let mut m = self.metadata.clone();
        crate::edit::drop_keyslots(&mut m, &[slot]);
        self.commit(dev, m)?;
        self.wipe_area(dev, old.area.offset, old.area.size)
    }

    /// Writes keyslot `place.slot` keeping `key` into `m` and the image:
    /// `m` checked whole (it must fit the header) before anything is
    /// written, the material into the free area, then the header. A
    /// keyslot that `m` has under that id is replaced, its priority kept.
    fn store(
        &mut self,
        dev: &File,
        mut m: Metadata,
        place: KeyslotPlace,
        key: &[u8],
        passphrase: &[u8],
        params: &KeyslotParams,
    ) -> Result<(), Error> {
        let priority = m.keyslots.get(&place.slot).and_then(|k| k.priority);
        let crypt = self.area_crypt(params)?;
        let mut salt = vec![0u8; 32];
        os_random(&mut salt)?;
        let (mut keyslot, material) = new_keyslot(
            params.kdf.salted(salt),
            crypt,
            passphrase,
            key,
            (place.offset, place.size),
            place.slot,
            &mut os_random,
        )?;
        keyslot.priority = priority;
        m.keyslots.insert(place.slot, keyslot);
        // A dry run of the header: a keyslot that would not fit the JSON
        // area leaves no material behind.
        header_copies(&self.header, self.header.seqid, &m)?;
        self.write_area(dev, place.offset, &material)?;
        self.commit(dev, m)
    }
}

/// Lists keyslot `slot` in digest `digest` of `m`.
fn bind(m: &mut Metadata, digest: u32, slot: u32) {
    if let Some(d) = m.digests.get_mut(&digest)
        && !d.keyslots.contains(&slot)
    {
        d.keyslots.push(slot);
        d.keyslots.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FormatParams, Pbkdf, format};
    use std::io::Write;

    fn image() -> (File, Image, KeyslotParams) {
        let params = FormatParams {
            kdf: KdfParams::Pbkdf2 {
                hash: Hash::Sha256,
                iterations: 1000,
            },
            digest_iterations: 1000,
            data_offset: 2 << 20,
            ..FormatParams::default()
        };
        let vk: Vec<u8> = (0..64).collect();
        let region = format(&params, b"pw", &vk, &mut os_random).unwrap();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&region).unwrap();
        let img = Image::load(&f).unwrap();
        let choices = FormatChoices {
            pbkdf: Pbkdf::Pbkdf2,
            iterations: Some(1000),
            ..FormatChoices::default()
        };
        (f, img, KeyslotParams::from_choices(&choices).unwrap())
    }

    /// A removed keyslot leaves no reference: its digest goes when nothing
    /// else uses it, tokens forget it; a change keeps id and priority and
    /// frees the old area.
    #[test]
    #[cfg_attr(miri, ignore = "PBKDF2 in the interpreter")]
    fn removals_and_changes_keep_the_references_whole() {
        let (f, mut img, p) = image();
        let vk: Vec<u8> = (0..64).collect();
        let u = img
            .add_unbound_keyslot(&f, &[5u8; 16], Some(3), b"u", &p)
            .unwrap();
        assert_eq!((u, img.metadata.digests.len()), (3, 2));
        let mut m = img.metadata.clone();
        m.tokens.insert(
            "0".into(),
            serde_json::json!({"type": "t", "keyslots": ["0", "3"]}),
        );
        m.keyslots.get_mut(&0).unwrap().priority = Some(2);
        img.commit(&f, m).unwrap();
        let old_area = img.metadata.keyslots[&0].area.offset;
        img.change_keyslot(&f, 0, &vk, b"new", &p).unwrap();
        let k = &img.metadata.keyslots[&0];
        assert_eq!(k.priority, Some(2));
        assert_ne!(k.area.offset, old_area);
        assert!(img.free_areas().iter().any(|&(o, _)| o <= old_area));
        img.remove_keyslot(&f, 3).unwrap();
        let again = Image::load(&f).unwrap();
        assert_eq!(again.metadata.digests.len(), 1);
        assert_eq!(
            again.metadata.tokens["0"]["keyslots"],
            serde_json::json!(["0"])
        );
        assert_eq!(again.unlock(&f, b"new").unwrap().slot, 0);
        assert!(matches!(
            img.change_keyslot(&f, 0, &[1u8; 64], b"x", &p),
            Err(Error::WrongVolumeKey)
        ));
        assert!(matches!(
            img.add_keyslot(&f, &[1u8; 64], None, b"x", &p),
            Err(Error::WrongVolumeKey)
        ));
    }

    /// While the header carries requirements no keyslot is added or
    /// changed (a removal stays possible, as in cryptsetup).
    #[test]
    #[cfg_attr(miri, ignore = "PBKDF2 in the interpreter")]
    fn requirements_refuse_new_keyslots() {
        let (f, mut img, p) = image();
        let mut m = img.metadata.clone();
        m.config.requirements = Some(vec!["mdu-test-feature".into()]);
        img.commit(&f, m).unwrap();
        let vk: Vec<u8> = (0..64).collect();
        let refused = |r: Result<u32, Error>| matches!(r, Err(Error::Requirements { .. }));
        assert!(refused(img.add_keyslot(&f, &vk, None, b"x", &p)));
        assert!(refused(
            img.add_unbound_keyslot(&f, &[1; 16], None, b"x", &p)
        ));
        assert!(refused(
            img.change_keyslot(&f, 0, &vk, b"x", &p).map(|()| 0)
        ));
        img.remove_keyslot(&f, 0).unwrap();
    }

    /// A keyslot whose JSON would not fit the header is refused before its
    /// material is written.
    #[test]
    #[cfg_attr(miri, ignore = "PBKDF2 in the interpreter")]
    fn a_header_too_full_for_the_keyslot_writes_nothing() {
        let (f, mut img, p) = image();
        let mut m = img.metadata.clone();
        m.tokens.insert(
            "0".into(),
            serde_json::json!({"type": "t", "keyslots": [], "pad": "x".repeat(11_400)}),
        );
        img.commit(&f, m).unwrap();
        let read = || {
            let mut b = vec![0u8; f.metadata().unwrap().len() as usize];
            std::os::unix::fs::FileExt::read_exact_at(&f, &mut b, 0).unwrap();
            b
        };
        let before = read();
        let vk: Vec<u8> = (0..64).collect();
        let e = img.add_keyslot(&f, &vk, None, b"x", &p).unwrap_err();
        assert!(e.to_string().contains("do not fit"), "{e}");
        assert!(before == read(), "bytes were written");
    }
}
