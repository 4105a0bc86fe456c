//! LUKS1 key slots: opening one with a passphrase, adding one for a
//! volume key, killing one, moving one under a new passphrase.
//!
//! Writes follow one order, so that a crash leaves either the old or the
//! new state: new key material is written and synced before the header
//! that names it; a killed slot's header is written and synced before its
//! material is wiped. The header (one copy, no checksum) is written with
//! one write at offset 0, then synced.

use mdu_core::io::WriteAt;
use mdu_dmcrypt::Direction;
use zeroize::Zeroizing;

use super::header::{
    DIGEST_LEN, HEADER_LEN, Header, MAX_ITERATIONS, MIN_ITERATIONS, SALT_LEN, SLOTS, STRIPES,
};
use crate::image::{area_cipher, read_checked};
use crate::{Error, ReadAt, VolumeKey, af};

/// The slot index `slot` as a `usize` below [`SLOTS`].
fn index(slot: u32) -> Result<usize, Error> {
    usize::try_from(slot)
        .ok()
        .filter(|&i| i < SLOTS)
        .ok_or(Error::NoSuchKeyslot { slot })
}

impl Header {
    /// Whether `key` is the volume key: PBKDF2 of it with the digest salt
    /// and iterations starts with the header's 20-byte digest.
    ///
    /// ```
    /// # use mdu_luks2::luks1::{self, FormatParams, Header};
    /// let key: Vec<u8> = (0..64).collect();
    /// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &key, &mut mdu_luks2::os_random)?;
    /// let hdr = Header::load(&image[..])?;
    /// assert!(hdr.verify_key(&key));
    /// assert!(!hdr.verify_key(&[0u8; 64]));
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn verify_key(&self, key: &[u8]) -> bool {
        if key.len() != self.key_bytes as usize {
            return false;
        }
        let mut d = Zeroizing::new([0u8; DIGEST_LEN]);
        self.hash.pbkdf2(
            key,
            &self.mk_digest_salt,
            self.mk_digest_iterations,
            &mut d[..],
        );
        // Not secret: the digest is in the header.
        d[..] == self.mk_digest
    }

    /// Opens the volume key through the first enabled slot (in slot order,
    /// as cryptsetup) that `passphrase` opens.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedCipherMode`] before any key derivation for a
    /// cipher this crate does not run; [`Error::NoKeyslot`] when no slot is
    /// enabled; [`Error::WrongPassphrase`]; a read that fails.
    ///
    /// ```
    /// # use mdu_luks2::luks1::{self, FormatParams, Header};
    /// let key: Vec<u8> = (0..64).collect();
    /// let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &key, &mut mdu_luks2::os_random)?;
    /// let hdr = Header::load(&image[..])?;
    /// assert_eq!(&hdr.unlock(&image[..], b"pw")?.key[..], &key[..]);
    /// assert!(hdr.unlock(&image[..], b"wrong").unwrap_err().is_wrong_passphrase());
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn unlock<R: ReadAt + ?Sized>(&self, r: &R, passphrase: &[u8]) -> Result<VolumeKey, Error> {
        self.cipher_spec()?;
        let mut any = false;
        for slot in 0..SLOTS as u32 {
            if !self.slots[slot as usize].enabled {
                continue;
            }
            any = true;
            match self.open_slot(r, slot, passphrase) {
                Err(Error::WrongPassphrase) => {}
                other => return other,
            }
        }
        Err(if any {
            Error::WrongPassphrase
        } else {
            Error::NoKeyslot
        })
    }

    /// Opens the volume key through slot `slot` alone.
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchKeyslot`] for a slot above 7 or a disabled one, and
    /// what [`unlock`](Self::unlock) refuses.
    ///
    /// ```
    /// # use mdu_luks2::luks1::{self, FormatParams, Header};
    /// # let key: Vec<u8> = (0..64).collect();
    /// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &key, &mut mdu_luks2::os_random)?;
    /// let hdr = Header::load(&image[..])?;
    /// assert_eq!(hdr.unlock_slot(&image[..], 0, b"pw")?.slot, 0);
    /// assert!(matches!(hdr.unlock_slot(&image[..], 1, b"pw"), Err(mdu_luks2::Error::NoSuchKeyslot { slot: 1 })));
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn unlock_slot<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        slot: u32,
        passphrase: &[u8],
    ) -> Result<VolumeKey, Error> {
        let i = index(slot)?;
        if !self.slots[i].enabled {
            return Err(Error::NoSuchKeyslot { slot });
        }
        self.cipher_spec()?;
        self.open_slot(r, slot, passphrase)
    }

    fn open_slot<R: ReadAt + ?Sized>(
        &self,
        r: &R,
        slot: u32,
        passphrase: &[u8],
    ) -> Result<VolumeKey, Error> {
        let s = &self.slots[slot as usize];
        let key_len = self.key_bytes as usize;
        let (offset, len) = self.material_range(slot as usize);
        let mut material = Zeroizing::new(read_checked(
            r,
            r.size()?,
            "LUKS1 key slot material",
            offset,
            len,
        )?);
        let mut derived = Zeroizing::new(vec![0u8; key_len]);
        self.hash
            .pbkdf2(passphrase, &s.salt, s.iterations, &mut derived);
        area_cipher(self.cipher_spec()?, &derived)?.crypt(Direction::Decrypt, 0, &mut material)?;
        let key = af::merge(&material, key_len, STRIPES, self.hash)?;
        if self.verify_key(&key) {
            Ok(VolumeKey::new(slot, 0, Some(0), key))
        } else {
            Err(Error::WrongPassphrase)
        }
    }
}

/// Adds a key slot for `volume_key` opened by `passphrase` (PBKDF2 with
/// the header's hash and `iterations`) to the image `dev` whose header is
/// `hdr`: in slot `slot`, or the first disabled one. The new key material
/// is written and synced, then the header naming it (one write at offset 0,
/// then a sync). Returns the new header and the slot used.
///
/// # Errors
///
/// [`Error::Params`] for a volume key that is not this header's (its
/// digest does not match), iterations below [`MIN_ITERATIONS`] or above
/// [`MAX_ITERATIONS`](super::MAX_ITERATIONS), or no free slot;
/// [`Error::NoSuchKeyslot`] for a slot above 7; [`Error::Luks1Header`] for
/// a slot that is enabled; [`Error::UnsupportedCipherMode`]; a failed
/// write ([`Error::Io`]). Nothing is written when any check fails.
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// let key: Vec<u8> = (0..64).collect();
/// let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"old", &key, &mut mdu_luks2::os_random)?;
/// let path = std::env::temp_dir().join(format!("mdu-luks1-add-{}", std::process::id()));
/// std::fs::write(&path, &image)?;
/// let f = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
/// let hdr = Header::load(&f)?;
/// let (hdr, slot) = luks1::add_keyslot(&f, &hdr, None, &key, b"new", 1000, &mut mdu_luks2::os_random)?;
/// assert_eq!(slot, 1);
/// assert_eq!(Header::load(&f)?, hdr);
/// assert_eq!(hdr.unlock(&f, b"new")?.slot, 1);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn add_keyslot<W: WriteAt + ?Sized>(
    dev: &W,
    hdr: &Header,
    slot: Option<u32>,
    volume_key: &[u8],
    passphrase: &[u8],
    iterations: u32,
    random: &mut dyn FnMut(&mut [u8]) -> Result<(), Error>,
) -> Result<(Header, u32), Error> {
    let spec = add_checks(hdr, volume_key, iterations)?;
    let i = match slot {
        Some(s) => index(s)?,
        None => hdr
            .slots
            .iter()
            .position(|s| !s.enabled)
            .ok_or_else(|| Error::Params {
                problem: "all 8 LUKS1 key slots are in use".into(),
            })?,
    };
    if hdr.slots[i].enabled {
        return Err(Error::Luks1Header {
            field: format!("key slot {i}"),
            problem: "is in use: kill it first".into(),
        });
    }
    let mut new = hdr.clone();
    let mut salt = [0u8; SALT_LEN];
    random(&mut salt)?;
    new.slots[i].enabled = true;
    new.slots[i].iterations = iterations;
    new.slots[i].salt = salt;
    let bytes = new.to_bytes()?;
    let (offset, len) = hdr.material_range(i);
    let material = split_material(&new, i, volume_key, passphrase, spec, random)?;
    debug_assert_eq!(material.len() as u64, len);
    dev.write_all_at(&material, offset)?;
    dev.sync()?;
    write_header(dev, &bytes)?;
    Ok((new, i as u32))
}

/// What [`add_keyslot`] checks of the volume key, the iterations and the
/// cipher before it chooses a slot; the cipher spec.
fn add_checks(
    hdr: &Header,
    volume_key: &[u8],
    iterations: u32,
) -> Result<mdu_dmcrypt::CipherSpec, Error> {
    if !hdr.verify_key(volume_key) {
        return Err(Error::Params {
            problem: "the volume key given is not this header's (its digest does not match)".into(),
        });
    }
    if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
        return Err(Error::Params {
            problem: format!(
                "a LUKS1 key slot needs {MIN_ITERATIONS} to {MAX_ITERATIONS} PBKDF2 iterations, \
                 not {iterations}"
            ),
        });
    }
    hdr.cipher_spec()
}

/// The encrypted, split material of slot `i` of `hdr` (its salt and
/// iterations set) for `volume_key` under `passphrase`: the slot's
/// sectors, the split key padded with random bytes.
pub(super) fn split_material(
    hdr: &Header,
    i: usize,
    volume_key: &[u8],
    passphrase: &[u8],
    spec: mdu_dmcrypt::CipherSpec,
    random: &mut dyn FnMut(&mut [u8]) -> Result<(), Error>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let s = &hdr.slots[i];
    let mut derived = Zeroizing::new(vec![0u8; volume_key.len()]);
    hdr.hash
        .pbkdf2(passphrase, &s.salt, s.iterations, &mut derived);
    let split = af::split(volume_key, STRIPES, hdr.hash, random)?;
    let (_, len) = hdr.material_range(i);
    let mut material = Zeroizing::new(vec![0u8; len as usize]);
    material[..split.len()].copy_from_slice(&split);
    random(&mut material[split.len()..])?;
    area_cipher(spec, &derived)?.crypt(Direction::Encrypt, 0, &mut material)?;
    Ok(material)
}

/// Disables slot `slot` of the image `dev` whose header is `hdr` (its salt
/// and iterations zeroed, as cryptsetup leaves a killed slot) and wipes
/// its key material with random bytes: the header is written and synced
/// first, then the material is overwritten and synced. Returns the new
/// header. Killing the last enabled slot is allowed: the data are then
/// lost unless the volume key is kept elsewhere.
///
/// # Errors
///
/// [`Error::NoSuchKeyslot`] for a slot above 7 or one already disabled; a
/// failed write ([`Error::Io`]).
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// let key: Vec<u8> = (0..64).collect();
/// let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &key, &mut mdu_luks2::os_random)?;
/// let path = std::env::temp_dir().join(format!("mdu-luks1-kill-{}", std::process::id()));
/// std::fs::write(&path, &image)?;
/// let f = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
/// let hdr = luks1::kill_keyslot(&f, &Header::load(&f)?, 0, &mut mdu_luks2::os_random)?;
/// assert!(!hdr.slots[0].enabled);
/// assert!(matches!(hdr.unlock(&f, b"pw"), Err(mdu_luks2::Error::NoKeyslot)));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn kill_keyslot<W: WriteAt + ?Sized>(
    dev: &W,
    hdr: &Header,
    slot: u32,
    random: &mut dyn FnMut(&mut [u8]) -> Result<(), Error>,
) -> Result<Header, Error> {
    let i = index(slot)?;
    if !hdr.slots[i].enabled {
        return Err(Error::NoSuchKeyslot { slot });
    }
    let mut new = hdr.clone();
    new.slots[i].enabled = false;
    new.slots[i].iterations = 0;
    new.slots[i].salt = [0; SALT_LEN];
    let bytes = new.to_bytes()?;
    let (offset, len) = hdr.material_range(i);
    let mut fill = vec![0u8; len as usize];
    random(&mut fill)?;
    write_header(dev, &bytes)?;
    dev.write_all_at(&fill, offset)?;
    dev.sync()?;
    Ok(new)
}

/// The header's one write at offset 0, then a sync.
pub(super) fn write_header<W: WriteAt + ?Sized>(
    dev: &W,
    bytes: &[u8; HEADER_LEN],
) -> Result<(), Error> {
    dev.write_all_at(bytes, 0)?;
    Ok(dev.sync()?)
}

/// Moves the volume key `volume_key` of slot `old` (opened already) under
/// the new `passphrase`, as cryptsetup's LUKS1 `luksChangeKey`: into slot
/// `new`, or the first disabled slot, or, with none free, slot `old`
/// itself. Into another slot: added there ([`add_keyslot`]), then `old`
/// killed ([`kill_keyslot`]), so that a crash leaves the old or both
/// passphrases. Into `old` itself: `old` is killed, then added anew (a
/// crash between the two leaves the slot disabled, as in cryptsetup).
/// Returns the new header and the slot now holding the passphrase.
///
/// # Errors
///
/// [`Error::NoSuchKeyslot`] for an `old` that is disabled or above 7,
/// and what [`add_keyslot`] refuses (nothing is written then).
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// let key: Vec<u8> = (0..64).collect();
/// let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"old", &key, &mut mdu_luks2::os_random)?;
/// let path = std::env::temp_dir().join(format!("mdu-luks1-change-{}", std::process::id()));
/// std::fs::write(&path, &image)?;
/// let f = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
/// let (hdr, slot) = luks1::change_keyslot(&f, &Header::load(&f)?, 0, None, &key, b"new", 1000, &mut mdu_luks2::os_random)?;
/// assert_eq!(slot, 1);
/// assert!(!hdr.slots[0].enabled);
/// assert_eq!(hdr.unlock(&f, b"new")?.slot, 1);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn change_keyslot<W: WriteAt + ?Sized>(
    dev: &W,
    hdr: &Header,
    old: u32,
    new: Option<u32>,
    volume_key: &[u8],
    passphrase: &[u8],
    iterations: u32,
    random: &mut dyn FnMut(&mut [u8]) -> Result<(), Error>,
) -> Result<(Header, u32), Error> {
    let o = index(old)?;
    if !hdr.slots[o].enabled {
        return Err(Error::NoSuchKeyslot { slot: old });
    }
    let target = match new {
        Some(n) => n,
        None => hdr
            .slots
            .iter()
            .position(|s| !s.enabled)
            .map_or(old, |i| i as u32),
    };
    if target != old {
        let (added, slot) = add_keyslot(
            dev,
            hdr,
            Some(target),
            volume_key,
            passphrase,
            iterations,
            random,
        )?;
        return Ok((kill_keyslot(dev, &added, old, random)?, slot));
    }
    // Checked before the slot is killed: nothing is written on a refusal.
    add_checks(hdr, volume_key, iterations)?;
    let killed = kill_keyslot(dev, hdr, old, random)?;
    add_keyslot(
        dev,
        &killed,
        Some(old),
        volume_key,
        passphrase,
        iterations,
        random,
    )
}
