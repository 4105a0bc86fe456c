//! A dm-crypt mapping over a device, read and written at byte offsets ([`Volume`]).

use alloc::vec;
use core::fmt;

use mdu_core::Direction;
use mdu_core::io::{IoError, ReadAt, WriteAt};
use zeroize::Zeroizing;

use crate::{Error, SectorCipher};

/// Why a volume could not be mapped, read or written.
///
/// ```
/// let e = mdu_dmcrypt::VolumeError::Unaligned { offset: 100, len: 512, sector_size: 512 };
/// assert!(e.to_string().contains("512-byte sectors"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum VolumeError {
    /// A request that is not whole sectors at a sector boundary (or a data
    /// range that is not).
    Unaligned {
        /// Its offset in the volume (in the device for a data range).
        offset: u64,
        /// Its length.
        len: u64,
        /// The sector size.
        sector_size: u32,
    },
    /// A request past the end of the volume (or a data range past the end
    /// of the device).
    OutOfRange {
        /// Its offset.
        offset: u64,
        /// Its length.
        len: u64,
        /// The volume's (or device's) length.
        size: u64,
    },
    /// The device failed.
    Io(IoError),
    /// The cipher refused the request.
    Cipher(Error),
}

impl fmt::Display for VolumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VolumeError::Unaligned {
                offset,
                len,
                sector_size,
            } => write!(
                f,
                "{len} bytes at offset {offset} are not whole {sector_size}-byte sectors at a sector boundary"
            ),
            VolumeError::OutOfRange { offset, len, size } => write!(
                f,
                "{len} bytes at offset {offset} pass the end of the {size}-byte volume"
            ),
            VolumeError::Io(e) => write!(f, "the device failed: {e}"),
            VolumeError::Cipher(e) => e.fmt(f),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for VolumeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            VolumeError::Io(e) => Some(e),
            VolumeError::Cipher(e) => Some(e),
            _ => None,
        }
    }
}

impl From<IoError> for VolumeError {
    fn from(e: IoError) -> VolumeError {
        VolumeError::Io(e)
    }
}

impl From<Error> for VolumeError {
    fn from(e: Error) -> VolumeError {
        VolumeError::Cipher(e)
    }
}

/// A dm-crypt mapping over a device, read and written at byte offsets of
/// the decrypted volume: what `cryptsetup open` makes with device-mapper,
/// as a value.
///
/// A [`Volume`] holds the device, the [`SectorCipher`] (its geometry: sector
/// size, IV offset, IV sector size) and the data range (where the data
/// start on the device, how long they are). [`Volume::read_at`] and
/// [`Volume::write_at`] take any whole number of sectors at a sector-aligned
/// offset and make one batched cipher call for all of them (split across
/// the rayon pool with the `rayon` feature); both take `&self`, so one
/// volume serves many threads.
///
/// ```
/// use mdu_dmcrypt::{CipherSpec, Geometry, SectorCipher, Volume, WeakKeys};
/// # let dir = std::env::temp_dir().join(format!("mdu-volume-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("disk.img");
/// // 1 MiB of header space, then 64 KiB of data.
/// std::fs::write(&path, vec![0u8; (1 << 20) + (64 << 10)])?;
/// let dev = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
/// let key: Vec<u8> = (0..64).collect();
/// let cipher = SectorCipher::new(CipherSpec::parse("aes-xts-plain64")?, &key,
///     Geometry::new(4096, 0, false)?, WeakKeys::Refuse)?;
/// let vol = Volume::new(dev, cipher, 1 << 20, None)?;
/// assert_eq!(vol.len(), 64 << 10);
/// vol.write_at(&[0xab; 8192], 4096)?;
/// let mut back = [0u8; 8192];
/// vol.read_at(&mut back, 4096)?;
/// assert!(back.iter().all(|&b| b == 0xab));
/// // On the device: ciphertext.
/// assert!(std::fs::read(&path)?[(1 << 20) + 4096..][..8192] != back[..]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Volume<D> {
    dev: D,
    cipher: SectorCipher,
    offset: u64,
    len: u64,
}

impl<D> fmt::Debug for Volume<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Volume")
            .field("offset", &self.offset)
            .field("len", &self.len)
            .field("sector_size", &self.cipher.sector_size())
            .finish_non_exhaustive()
    }
}

impl<D: ReadAt> Volume<D> {
    /// Maps `len` bytes of `dev` from byte `offset` (`None`: to the end of
    /// the device) through `cipher`, whose sector 0 is the first sector of
    /// the data.
    ///
    /// # Errors
    ///
    /// [`VolumeError::Unaligned`] for an offset or length that is not whole
    /// sectors, [`VolumeError::OutOfRange`] for a range past the end of the
    /// device (or an empty one), and the device's error.
    ///
    /// (Example: [`Volume`].)
    pub fn new(
        dev: D,
        cipher: SectorCipher,
        offset: u64,
        len: Option<u64>,
    ) -> Result<Volume<D>, VolumeError> {
        let size = dev.size()?;
        let ss = cipher.sector_size();
        let len = match len {
            Some(n) => n,
            None => size.saturating_sub(offset),
        };
        if !offset.is_multiple_of(u64::from(ss)) || !len.is_multiple_of(u64::from(ss)) {
            return Err(VolumeError::Unaligned {
                offset,
                len,
                sector_size: ss,
            });
        }
        if len == 0 || offset.checked_add(len).is_none_or(|end| end > size) {
            return Err(VolumeError::OutOfRange { offset, len, size });
        }
        Ok(Volume {
            dev,
            cipher,
            offset,
            len,
        })
    }

    /// The volume's length in bytes.
    ///
    /// (Example: [`Volume`].)
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the volume is empty (never: a mapping holds a sector).
    ///
    /// ```
    /// # fn f(v: &mdu_dmcrypt::Volume<Vec<u8>>) { assert!(!v.is_empty()); }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The sector size: requests are whole sectors at sector boundaries.
    ///
    /// ```
    /// # fn f(v: &mdu_dmcrypt::Volume<Vec<u8>>) { assert!(v.sector_size() >= 512); }
    /// ```
    pub fn sector_size(&self) -> u32 {
        self.cipher.sector_size()
    }

    /// Where the data start on the device, in bytes.
    ///
    /// ```
    /// # fn f(v: &mdu_dmcrypt::Volume<Vec<u8>>) { let _ = v.data_offset(); }
    /// ```
    pub fn data_offset(&self) -> u64 {
        self.offset
    }

    /// The device.
    ///
    /// ```
    /// # fn f(v: &mdu_dmcrypt::Volume<Vec<u8>>) { let _ = v.device().len(); }
    /// ```
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// The device back.
    ///
    /// ```
    /// # fn f(v: mdu_dmcrypt::Volume<Vec<u8>>) { let _dev: Vec<u8> = v.into_device(); }
    /// ```
    pub fn into_device(self) -> D {
        self.dev
    }

    /// Checks a request and gives its first sector.
    fn sector_of(&self, offset: u64, len: usize) -> Result<u64, VolumeError> {
        let ss = u64::from(self.cipher.sector_size());
        let len = len as u64;
        if !offset.is_multiple_of(ss) || !len.is_multiple_of(ss) {
            return Err(VolumeError::Unaligned {
                offset,
                len,
                sector_size: ss as u32,
            });
        }
        if offset.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(VolumeError::OutOfRange {
                offset,
                len,
                size: self.len,
            });
        }
        Ok(offset / ss)
    }

    /// One batched call over `buf`, across the rayon pool when the crate
    /// has it.
    fn crypt(&self, dir: Direction, first: u64, buf: &mut [u8]) -> Result<(), VolumeError> {
        if buf.is_empty() {
            return Ok(());
        }
        #[cfg(feature = "rayon")]
        let r = self.cipher.par_crypt(dir, first, buf);
        #[cfg(not(feature = "rayon"))]
        let r = self.cipher.crypt(dir, first, buf);
        Ok(r?)
    }

    /// Fills `buf` with the decrypted bytes at `offset` of the volume: whole
    /// sectors at a sector boundary, decrypted in one batched call.
    ///
    /// # Errors
    ///
    /// [`VolumeError::Unaligned`], [`VolumeError::OutOfRange`] (`buf` is
    /// then unchanged), the device's error.
    ///
    /// (Example: [`Volume`].)
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<(), VolumeError> {
        let first = self.sector_of(offset, buf.len())?;
        self.dev.read_exact_at(buf, self.offset + offset)?;
        self.crypt(Direction::Decrypt, first, buf)
    }
}

impl<D: WriteAt> Volume<D> {
    /// Encrypts `buf` (whole sectors) and writes it at `offset` of the
    /// volume, in one batched call; `buf` is left as it was (the ciphertext
    /// goes through a buffer wiped when dropped).
    ///
    /// # Errors
    ///
    /// [`VolumeError::Unaligned`], [`VolumeError::OutOfRange`] (nothing is
    /// written then), the device's error.
    ///
    /// (Example: [`Volume`].)
    pub fn write_at(&self, buf: &[u8], offset: u64) -> Result<(), VolumeError> {
        let first = self.sector_of(offset, buf.len())?;
        let mut out = Zeroizing::new(vec![0u8; buf.len()]);
        out.copy_from_slice(buf);
        self.crypt(Direction::Encrypt, first, &mut out)?;
        Ok(self.dev.write_all_at(&out, self.offset + offset)?)
    }

    /// Makes what was written durable.
    ///
    /// # Errors
    ///
    /// The device's.
    ///
    /// ```no_run
    /// # fn f(v: &mdu_dmcrypt::Volume<std::fs::File>) -> Result<(), mdu_dmcrypt::VolumeError> {
    /// v.sync()?;
    /// # Ok(()) }
    /// ```
    pub fn sync(&self) -> Result<(), VolumeError> {
        Ok(self.dev.sync()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CipherSpec, Geometry, WeakKeys};
    use alloc::vec::Vec;

    fn volume(dev: Vec<u8>, ss: u32, iv_offset: u64) -> Volume<Vec<u8>> {
        let key: Vec<u8> = (0..64u8).map(|b| b ^ 0x5a).collect();
        let g = Geometry::new(ss, iv_offset, false).unwrap();
        let c = SectorCipher::new(
            CipherSpec::parse("aes-xts-plain64").unwrap(),
            &key,
            g,
            WeakKeys::Refuse,
        )
        .unwrap();
        Volume::new(dev, c, 8192, None).unwrap()
    }

    /// Every read of whole sectors anywhere in the volume gives what one
    /// decryption of the whole data gives at the same place.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "whole sectors through the interpreted AES take minutes"
    )]
    fn reads_anywhere_match_one_decryption_of_the_whole_data() {
        for (ss, iv_offset) in [(512, 0), (4096, 8), (1024, 6)] {
            let dev: Vec<u8> = (0..8192 + 16 * 4096).map(|i| (i * 7 % 253) as u8).collect();
            let v = volume(dev.clone(), ss, iv_offset);
            let mut whole = dev[8192..].to_vec();
            v.cipher.crypt(Direction::Decrypt, 0, &mut whole).unwrap();
            let ss = ss as usize;
            for first in [0, 1, 5, whole.len() / ss - 1] {
                for n in [1, 2, 7] {
                    if (first + n) * ss > whole.len() {
                        continue;
                    }
                    let mut b = vec![0u8; n * ss];
                    v.read_at(&mut b, (first * ss) as u64).unwrap();
                    assert!(
                        b[..] == whole[first * ss..(first + n) * ss],
                        "{ss} {first} {n}"
                    );
                }
            }
        }
    }

    #[test]
    fn requests_off_the_grid_or_past_the_end_are_refused_and_change_nothing() {
        let v = volume(vec![0u8; 8192 + 4 * 512], 512, 0);
        let mut b = vec![9u8; 1024];
        for (len, offset) in [
            (512, 100),
            (100, 0),
            (512, 4 * 512),
            (1024, 3 * 512),
            (512, u64::MAX - 511),
        ] {
            let e = v.read_at(&mut b[..len], offset).unwrap_err();
            assert!(
                matches!(
                    e,
                    VolumeError::Unaligned { .. } | VolumeError::OutOfRange { .. }
                ),
                "{len} {offset}: {e}"
            );
        }
        assert!(b.iter().all(|&x| x == 9));
        let empty = Volume::new(vec![0u8; 8192], v.cipher, 8192, None);
        assert!(matches!(empty, Err(VolumeError::OutOfRange { .. })));
    }
}
