//! The contents of one regular file, decrypted as they are read.

use super::*;

/// A regular file's plaintext, read a block range at a time: holes and
/// unwritten extents as zeros, each run of consecutive blocks decrypted in
/// one batched call. `Sync`: threads may read different ranges at once.
///
/// ```no_run
/// use std::io::Write;
/// use mdu_fscrypt::key::MasterKey;
/// use mdu_fscrypt::volume::{Keyring, Volume};
///
/// let mut keys = Keyring::new();
/// keys.add(MasterKey::new(&std::fs::read("master.key")?)?);
/// let vol = Volume::open(std::fs::File::open("disk.img")?, keys)?;
/// let file = vol.inode(vol.lookup(b"vault/notes.txt")?)?;
/// let contents = vol.contents(&file)?;
/// let bs = vol.ext4().block_size() as u64;
/// let mut buf = vec![0u8; 256 * bs as usize];
/// let mut out = std::io::stdout().lock();
/// let mut block = 0;
/// while block * bs < contents.size() {
///     let n = contents.read(block, &mut buf)?;
///     out.write_all(&buf[..n])?;
///     block += 256;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Contents<'a, R> {
    pub(super) fs: &'a Ext4<R>,
    pub(super) ino: u32,
    pub(super) size: u64,
    pub(super) extents: Vec<Extent>,
    pub(super) cipher: Option<ContentsCipher>,
    pub(super) inline: Option<Vec<u8>>,
}

impl<R: ReadAt> Contents<'_, R> {
    /// The file's size in bytes.
    ///
    /// See [`Contents`].
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The runs of blocks that hold data (holes are not listed).
    ///
    /// See [`Contents`].
    pub fn extents(&self) -> &[Extent] {
        &self.extents
    }

    /// The runs of logical blocks that hold data, as (first block, number
    /// of blocks), in order: the written extents (holes and unwritten
    /// extents read as zeros and are left out), or the whole file for
    /// inline data. A copy that writes only these and sets the size keeps
    /// the file as sparse as the image has it.
    ///
    /// See [`Contents`].
    pub fn data_runs(&self) -> Vec<(u64, u64)> {
        if self.inline.is_some() {
            let bs = u64::from(self.fs.block_size());
            return vec![(0, self.size.div_ceil(bs))];
        }
        self.extents
            .iter()
            .filter(|e| !e.unwritten)
            .map(|e| (e.logical, e.len))
            .collect()
    }

    /// Fills `buf` (a whole number of blocks) with the plaintext from
    /// logical block `first` on; returns how many bytes of it lie within the
    /// file's size (the rest is zeroed).
    ///
    /// # Errors
    ///
    /// [`VolumeError::Crypto`] when `buf` is not a whole number of blocks or the
    /// IV cannot be formed; the image's read errors.
    ///
    /// See [`Contents`].
    pub fn read(&self, first: u64, buf: &mut [u8]) -> Result<usize, VolumeError> {
        let bs = u64::from(self.fs.block_size());
        let crypto = |error| VolumeError::Crypto {
            ino: self.ino,
            error,
        };
        if !(buf.len() as u64).is_multiple_of(bs) {
            return Err(crypto(crate::Error::Request(
                mdu_core::Error::LengthNotMultiple {
                    len: buf.len(),
                    unit: bs as usize,
                },
            )));
        }
        let start = first.saturating_mul(bs);
        let valid = self.size.saturating_sub(start).min(buf.len() as u64) as usize;
        if let Some(data) = &self.inline {
            let from = usize::try_from(start).unwrap_or(usize::MAX).min(data.len());
            let n = (data.len() - from).min(buf.len());
            buf[..n].copy_from_slice(&data[from..from + n]);
            buf[n..].fill(0);
            return Ok(valid);
        }
        let count = buf.len() as u64 / bs;
        let end = first.saturating_add(count);
        // Bytes before this are written; holes and unwritten extents are
        // zeroed as they are passed, not the whole buffer up front (it is
        // read once per MiB of every file extracted).
        let mut filled = 0;
        // The first extent that ends after `first`.
        let at = self.extents.partition_point(|e| e.logical + e.len <= first);
        for e in &self.extents[at..] {
            if e.logical >= end {
                break;
            }
            let lo = ((e.logical.max(first) - first) * bs) as usize;
            let hi = (((e.logical + e.len).min(end) - first) * bs) as usize;
            buf[filled..lo].fill(0);
            filled = hi;
            let dst = &mut buf[lo..hi];
            if e.unwritten {
                dst.fill(0);
                continue;
            }
            let lblk = first + lo as u64 / bs;
            self.fs.read_blocks(e.physical + (lblk - e.logical), dst)?;
            if let Some(c) = &self.cipher {
                c.decrypt_blocks(lblk, dst).map_err(crypto)?;
            }
        }
        buf[filled..].fill(0);
        // Past the size: zeros, whatever the last block decrypted to.
        buf[valid..].fill(0);
        Ok(valid)
    }

    /// The whole file, for small files and tests.
    ///
    /// # Errors
    ///
    /// As for [`read`](Self::read); a file larger than the image (sparse)
    /// is refused here with [`ext4::Ext4Error::Inode`] on `i_size`: read it a
    /// range at a time.
    ///
    /// See [`Contents`].
    pub fn read_to_vec(&self) -> Result<Vec<u8>, VolumeError> {
        let bs = u64::from(self.fs.block_size());
        let too_big = VolumeError::Ext4(ext4::Ext4Error::Inode {
            ino: self.ino,
            field: "i_size",
            value: self.size,
        });
        if self.size > self.fs.image_size() {
            return Err(too_big);
        }
        let len = usize::try_from(self.size.div_ceil(bs) * bs).map_err(|_| too_big)?;
        let mut buf = vec![0u8; len];
        let n = self.read(0, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }
}
