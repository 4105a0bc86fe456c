//! LUKS1 header edits beside the key slots, as cryptsetup 2.6 makes them:
//! a new UUID, every slot erased, the header backup and its restore.
//!
//! The header is one copy at offset 0: each change is one write there,
//! then a sync ([`write_header`]).

use mdu_core::io::WriteAt;

use super::header::{HEADER_LEN, Header};
use super::keyslot::{kill_keyslot, write_header};
use crate::image::read_checked;
use crate::{Error, ReadAt};

/// The first key slot's place in cryptsetup's layout (4096 bytes): the
/// bytes between the header and it are zero in a backup.
const KEYSLOTS_ALIGN: u64 = 4096;

/// A backup is rounded up to this many bytes (cryptsetup's page size).
const BACKUP_ROUND: u64 = 4096;

impl Header {
    /// The bytes the header and its key material take from offset 0: up
    /// to the end of the last slot's material (cryptsetup's
    /// `LUKS_device_sectors`, in bytes). The payload may start later.
    ///
    /// ```
    /// # use mdu_luks2::luks1::{self, FormatParams, Header};
    /// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
    /// // Slot 7 of a 512-bit key: at sector 8 + 7 * 504, 500 sectors long.
    /// assert_eq!(Header::load(&image[..])?.keyslots_end(), (8 + 7 * 504 + 500) * 512);
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn keyslots_end(&self) -> u64 {
        (0..self.slots.len())
            .map(|i| {
                let (offset, len) = self.material_range(i);
                offset + len
            })
            .max()
            .unwrap_or(HEADER_LEN as u64)
            .max(HEADER_LEN as u64)
    }
}

/// Sets the UUID of the image `dev` whose header is `hdr` to `uuid` (8-4-4-4-12
/// hexadecimal digits, stored in lower case): one header write, then a
/// sync. Returns the new header.
///
/// # Errors
///
/// [`Error::Params`] for a text that is not a UUID (nothing is written);
/// a failed write ([`Error::Io`]).
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
/// let path = std::env::temp_dir().join(format!("mdu-luks1-uuid-{}", std::process::id()));
/// std::fs::write(&path, &image)?;
/// let f = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
/// let hdr = luks1::set_uuid(&f, &Header::load(&f)?, "12345678-ABCD-1234-1234-123456789ABC")?;
/// assert_eq!(Header::load(&f)?.uuid, "12345678-abcd-1234-1234-123456789abc");
/// assert_eq!(Header::load(&f)?, hdr);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn set_uuid<W: WriteAt + ?Sized>(dev: &W, hdr: &Header, uuid: &str) -> Result<Header, Error> {
    let mut new = hdr.clone();
    new.uuid = crate::edit::parse_uuid(uuid)?.to_ascii_lowercase();
    write_header(dev, &new.to_bytes()?)?;
    Ok(new)
}

/// Kills every enabled slot of the image `dev` whose header is `hdr`, in
/// slot order, each as [`kill_keyslot`] does (its header write, then its
/// material wiped): cryptsetup's `luksErase`. Returns the new header.
///
/// # Errors
///
/// A failed write ([`Error::Io`]); the slots killed before it stay
/// killed.
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// let key: Vec<u8> = (0..64).collect();
/// let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &key, &mut mdu_luks2::os_random)?;
/// let path = std::env::temp_dir().join(format!("mdu-luks1-erase-{}", std::process::id()));
/// std::fs::write(&path, &image)?;
/// let f = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
/// let (hdr, _) = luks1::add_keyslot(&f, &Header::load(&f)?, Some(5), &key, b"new", 1000, &mut mdu_luks2::os_random)?;
/// let hdr = luks1::erase(&f, &hdr, &mut mdu_luks2::os_random)?;
/// assert!(hdr.slots.iter().all(|s| !s.enabled));
/// assert_eq!(Header::load(&f)?, hdr);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn erase<W: WriteAt + ?Sized>(
    dev: &W,
    hdr: &Header,
    random: &mut dyn FnMut(&mut [u8]) -> Result<(), Error>,
) -> Result<Header, Error> {
    let mut new = hdr.clone();
    for slot in 0..new.slots.len() as u32 {
        if new.slots[slot as usize].enabled {
            new = kill_keyslot(dev, &new, slot, random)?;
        }
    }
    Ok(new)
}

/// cryptsetup's LUKS1 header backup of the image `r` whose header is
/// `hdr`: the bytes from offset 0 to [`Header::keyslots_end`], the gap
/// between the header and a first slot at 4096 zeroed, rounded up to
/// 4096 bytes with zeros. Byte for byte what `cryptsetup
/// luksHeaderBackup` writes.
///
/// # Errors
///
/// A read that fails or falls short ([`Error::Io`], [`Error::Truncated`]).
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
/// let hdr = Header::load(&image[..])?;
/// let backup = luks1::backup(&image[..], &hdr)?;
/// assert_eq!(backup.len(), 4040 * 512);
/// assert_eq!(Header::load_detached(&backup[..])?, hdr);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn backup<R: ReadAt + ?Sized>(r: &R, hdr: &Header) -> Result<Vec<u8>, Error> {
    let end = hdr.keyslots_end();
    let mut bytes = read_checked(r, r.size()?, "LUKS1 header and key material", 0, end)?;
    if u64::from(hdr.slots[0].key_material_offset) * 512 == KEYSLOTS_ALIGN {
        bytes[HEADER_LEN..KEYSLOTS_ALIGN as usize].fill(0);
    }
    bytes.resize(
        end.div_ceil(BACKUP_ROUND) as usize * BACKUP_ROUND as usize,
        0,
    );
    Ok(bytes)
}

/// A LUKS1 header backup checked against the image it is to be written
/// to, as cryptsetup's `luksHeaderRestore` checks it: then
/// [`write`](Self::write).
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header, Restore};
/// let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
/// let backup = luks1::backup(&image[..], &Header::load(&image[..])?)?;
/// let restore = Restore::check(&image[..], backup)?;
/// assert!(restore.current.is_some() && !restore.other_uuid);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Debug)]
pub struct Restore {
    /// The backup's header.
    pub backup: Header,
    /// The image's LUKS1 header, if it has a valid one.
    pub current: Option<Header>,
    /// Whether the image's header has another UUID than the backup's.
    pub other_uuid: bool,
    /// The bytes to write at offset 0: the backup up to its
    /// [`Header::keyslots_end`].
    bytes: Vec<u8>,
}

impl Restore {
    /// Checks the backup `bytes` (a LUKS1 header and its key material)
    /// against the image `r`.
    ///
    /// # Errors
    ///
    /// What [`Header::load_detached`] refuses in the backup;
    /// [`Error::Params`] when the image holds a LUKS1 header of another
    /// payload offset or key size (cryptsetup's "data offset or key size
    /// differs"), or when the image is shorter than the backup's header
    /// and key material.
    ///
    /// ```
    /// use mdu_luks2::luks1::{self, FormatParams, Header, Restore};
    /// let p = FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() };
    /// let a = luks1::format(&p, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
    /// let b = luks1::format(&FormatParams { key_size: 32, ..p }, b"pw", &(0..32).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
    /// let backup = luks1::backup(&a[..], &Header::load(&a[..])?)?;
    /// assert!(Restore::check(&b[..], backup).is_err());
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn check<R: ReadAt + ?Sized>(r: &R, mut bytes: Vec<u8>) -> Result<Restore, Error> {
        let backup = Header::load_detached(&bytes[..])?;
        let end = backup.keyslots_end();
        bytes.truncate(end as usize);
        let current = Header::load_detached(r).ok();
        if let Some(c) = &current
            && (c.payload_offset != backup.payload_offset || c.key_bytes != backup.key_bytes)
        {
            return Err(Error::Params {
                problem: format!(
                    "the payload offset or key size differs on the image ({} sectors, {} bits) \
                     and in the backup ({} sectors, {} bits): nothing was restored",
                    c.payload_offset,
                    c.key_bytes * 8,
                    backup.payload_offset,
                    backup.key_bytes * 8
                ),
            });
        }
        let len = r.size()?;
        if len < end {
            return Err(Error::Params {
                problem: format!(
                    "the image ({len} bytes) is shorter than the backup's header and key \
                     material ({end} bytes)"
                ),
            });
        }
        let other_uuid = current.as_ref().is_some_and(|c| c.uuid != backup.uuid);
        Ok(Restore {
            backup,
            current,
            other_uuid,
            bytes,
        })
    }

    /// Writes the backup over the image `dev` at offset 0, key material
    /// and header in one write, then a sync.
    ///
    /// # Errors
    ///
    /// A failed write ([`Error::Io`]).
    ///
    /// ```
    /// use mdu_luks2::luks1::{self, FormatParams, Header, Restore};
    /// let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
    /// let path = std::env::temp_dir().join(format!("mdu-luks1-restore-{}", std::process::id()));
    /// std::fs::write(&path, vec![0u8; image.len()])?;
    /// let f = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
    /// let backup = luks1::backup(&image[..], &Header::load(&image[..])?)?;
    /// Restore::check(&f, backup)?.write(&f)?;
    /// assert!(Header::load(&f)?.unlock(&f, b"pw").is_ok());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write<W: WriteAt + ?Sized>(&self, dev: &W) -> Result<(), Error> {
        dev.write_all_at(&self.bytes, 0)?;
        Ok(dev.sync()?)
    }
}
