//! A LUKS2 volume opened as a value: the header loaded and checked, a
//! keyslot opened with the passphrase, and the data segment mapped as a
//! [`Volume`] read and written at byte offsets of the decrypted data,
//! without device-mapper.

use mdu_dmcrypt::{Volume, WeakKeys};

use crate::{Error, Image, ReadAt, VolumeKey};

impl Image {
    /// The decrypted volume of the data segment on `dev` (the image
    /// itself, or the data device of a detached header) under `key`.
    ///
    /// # Errors
    ///
    /// A header whose segment cannot be opened (a reencryption in
    /// progress, an unsupported cipher), a key the weak-key policy
    /// refuses, a data segment that does not fit the device.
    ///
    /// ```
    /// use mdu_luks2::{format, os_random, FormatParams, Hash, Image, KdfParams, WeakKeys};
    /// let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
    ///     digest_iterations: 1000, data_offset: 1 << 20, sector_size: 4096, ..FormatParams::default() };
    /// let mut image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
    /// image.resize((1 << 20) + 8192, 0);
    /// let img = Image::load(&image[..])?;
    /// let key = img.unlock(&image[..], b"pw")?;
    /// let vol = img.volume(&image[..], &key, WeakKeys::Refuse)?;
    /// let mut sector = [0u8; 4096];
    /// vol.read_at(&mut sector, 4096)?;
    /// assert_eq!(vol.len(), 8192);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn volume<D: ReadAt>(
        &self,
        dev: D,
        key: &VolumeKey,
        weak: WeakKeys,
    ) -> Result<Volume<D>, Error> {
        let (_, seg) = self.segment()?;
        let cipher = self.segment_cipher(key, weak)?;
        Ok(Volume::new(dev, cipher, seg.offset, seg.size)?)
    }
}

/// Opens the LUKS2 volume whose header is on `header` and whose data are
/// on `data` (the same device for a header inside the image): the header
/// loaded (both copies checked), the first keyslot the passphrase opens,
/// the data segment mapped. Weak XTS keys are refused, as the kernel
/// refuses them.
///
/// # Errors
///
/// A damaged or hostile header, [`Error::WrongPassphrase`], and what
/// [`Image::volume`] refuses.
///
/// ```
/// use mdu_luks2::{format, os_random, FormatParams, Hash, KdfParams};
/// let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
///     digest_iterations: 1000, data_offset: 1 << 20, ..FormatParams::default() };
/// let mut image = format(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// image.resize((1 << 20) + 4096, 0);
/// let vol = mdu_luks2::open(&image[..], &image[..], b"pw")?;
/// assert_eq!(vol.len(), 4096);
/// assert!(mdu_luks2::open(&image[..], &image[..], b"wrong").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open<H: ReadAt + ?Sized, D: ReadAt>(
    header: &H,
    data: D,
    passphrase: &[u8],
) -> Result<Volume<D>, Error> {
    let img = Image::load(header)?;
    let key = img.unlock(header, passphrase)?;
    img.volume(data, &key, WeakKeys::Refuse)
}
