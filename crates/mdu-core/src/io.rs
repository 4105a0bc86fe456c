//! Positioned I/O: the one pair of device traits of the workspace.
//!
//! Images, devices and hash trees are read and written at byte offsets by
//! every crate that parses or maps them (ext4 trees, LUKS2 headers, dm-verity
//! hash devices, encrypted volumes). [`ReadAt`] and [`WriteAt`] are that
//! interface, with one error ([`IoError`]): byte slices and vectors read
//! as devices (in memory, fuzzing), a vector in a `RefCell` is also
//! written as one (growing as a file does), and with the `std` feature so do
//! files and block devices, where a read past the end is an
//! [`IoError::OutOfRange`] that names the range and the size.
//!
//! ```
//! use mdu_core::io::{IoError, ReadAt};
//!
//! let image = [1u8, 2, 3, 4];
//! let mut buf = [0u8; 2];
//! image[..].read_exact_at(&mut buf, 1)?;
//! assert_eq!((buf, image[..].size()?), ([2, 3], 4));
//! assert!(matches!(
//!     image[..].read_exact_at(&mut buf, 3),
//!     Err(IoError::OutOfRange { offset: 3, len: 2, size: 4 })
//! ));
//! # Ok::<(), IoError>(())
//! ```

use core::fmt;

/// Why a positioned read, write or sync failed.
///
/// ```
/// let e = mdu_core::io::IoError::OutOfRange { offset: 8, len: 4, size: 10 };
/// assert!(e.to_string().contains("10-byte"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum IoError {
    /// `len` bytes at `offset` pass the end of the `size`-byte device.
    OutOfRange {
        /// Where the range starts.
        offset: u64,
        /// Its length.
        len: u64,
        /// The device's size.
        size: u64,
    },
    /// The device refused the request (a device without the standard
    /// library says why in words).
    Device(&'static str),
    /// The operating system's error.
    #[cfg(feature = "std")]
    Os(std::io::Error),
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IoError::OutOfRange { offset, len, size } => write!(
                f,
                "{len} bytes at offset {offset} pass the end of the {size}-byte device"
            ),
            IoError::Device(why) => f.write_str(why),
            #[cfg(feature = "std")]
            IoError::Os(e) => e.fmt(f),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for IoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IoError::Os(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(feature = "std")]
impl From<std::io::Error> for IoError {
    fn from(e: std::io::Error) -> IoError {
        IoError::Os(e)
    }
}

#[cfg(feature = "std")]
impl From<IoError> for std::io::Error {
    fn from(e: IoError) -> std::io::Error {
        match e {
            IoError::Os(e) => e,
            e @ IoError::OutOfRange { .. } => {
                std::io::Error::new(std::io::ErrorKind::UnexpectedEof, e)
            }
            e => std::io::Error::other(e),
        }
    }
}

/// A device read at byte offsets, shared between threads by reference.
///
/// ```
/// use mdu_core::io::ReadAt;
/// fn first_sector(dev: &impl ReadAt) -> Result<[u8; 512], mdu_core::io::IoError> {
///     let mut s = [0u8; 512];
///     dev.read_exact_at(&mut s, 0)?;
///     Ok(s)
/// }
/// assert_eq!(first_sector(&vec![7u8; 4096])?[511], 7);
/// # Ok::<(), mdu_core::io::IoError>(())
/// ```
pub trait ReadAt {
    /// The device's size in bytes (a block device's too, whose file
    /// metadata say 0).
    fn size(&self) -> Result<u64, IoError>;

    /// Fills `buf` from `offset`, or fails: [`IoError::OutOfRange`] where
    /// the device ends first.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError>;
}

/// A device written at byte offsets.
///
/// ```
/// # #[cfg(feature = "std")] {
/// use mdu_core::io::{ReadAt, WriteAt};
/// let path = std::env::temp_dir().join(format!("mdu-core-io-doc-{}", std::process::id()));
/// let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path)?;
/// f.write_all_at(b"sector", 512)?;
/// f.sync()?;
/// assert_eq!(ReadAt::size(&f)?, 518);
/// # std::fs::remove_file(&path)?;
/// # }
/// # Ok::<(), mdu_core::io::IoError>(())
/// ```
pub trait WriteAt: ReadAt {
    /// Writes all of `buf` at `offset`.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> Result<(), IoError>;

    /// Makes what was written durable.
    fn sync(&self) -> Result<(), IoError>;
}

/// The bytes of `src` at `offset`, `len` long, or the range's refusal.
fn range(src: &[u8], offset: u64, len: usize) -> Result<&[u8], IoError> {
    usize::try_from(offset)
        .ok()
        .and_then(|start| src.get(start..start.checked_add(len)?))
        .ok_or(IoError::OutOfRange {
            offset,
            len: len as u64,
            size: src.len() as u64,
        })
}

impl ReadAt for [u8] {
    fn size(&self) -> Result<u64, IoError> {
        Ok(self.len() as u64)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError> {
        buf.copy_from_slice(range(self, offset, buf.len())?);
        Ok(())
    }
}

#[cfg(feature = "alloc")]
impl ReadAt for alloc::vec::Vec<u8> {
    fn size(&self) -> Result<u64, IoError> {
        self.as_slice().size()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError> {
        self.as_slice().read_exact_at(buf, offset)
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn size(&self) -> Result<u64, IoError> {
        (**self).size()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError> {
        (**self).read_exact_at(buf, offset)
    }
}

impl<T: WriteAt + ?Sized> WriteAt for &T {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> Result<(), IoError> {
        (**self).write_all_at(buf, offset)
    }

    fn sync(&self) -> Result<(), IoError> {
        (**self).sync()
    }
}

/// Bytes in memory as a writable device: a write that ends past them
/// extends them with zeros first (as a file grows), so tests, examples and
/// fuzz targets write where files and devices would.
///
/// ```
/// use core::cell::RefCell;
/// use mdu_core::io::{ReadAt, WriteAt};
/// let dev = RefCell::new(vec![1u8; 2]);
/// dev.write_all_at(&[7, 8], 3)?;
/// assert_eq!(*dev.borrow(), [1, 1, 0, 7, 8]);
/// let mut b = [0u8; 2];
/// dev.read_exact_at(&mut b, 3)?;
/// assert_eq!((b, dev.size()?), ([7, 8], 5));
/// # Ok::<(), mdu_core::io::IoError>(())
/// ```
#[cfg(feature = "alloc")]
impl ReadAt for core::cell::RefCell<alloc::vec::Vec<u8>> {
    fn size(&self) -> Result<u64, IoError> {
        self.borrow().size()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError> {
        self.borrow().read_exact_at(buf, offset)
    }
}

/// Why a vector in memory refuses a write.
#[cfg(feature = "alloc")]
const TOO_FAR: IoError = IoError::Device("the write ends past what a vector in memory can hold");

/// See the [`ReadAt`] implementation above.
#[cfg(feature = "alloc")]
impl WriteAt for core::cell::RefCell<alloc::vec::Vec<u8>> {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> Result<(), IoError> {
        let at = usize::try_from(offset).map_err(|_| TOO_FAR)?;
        let end = at.checked_add(buf.len()).ok_or(TOO_FAR)?;
        let mut v = self.borrow_mut();
        if let Some(grow) = end.checked_sub(v.len()) {
            v.try_reserve(grow).map_err(|_| TOO_FAR)?;
            v.resize(end, 0);
        }
        v[at..end].copy_from_slice(buf);
        Ok(())
    }

    fn sync(&self) -> Result<(), IoError> {
        Ok(())
    }
}

#[cfg(all(feature = "std", unix))]
impl ReadAt for std::fs::File {
    fn size(&self) -> Result<u64, IoError> {
        use std::io::Seek;
        // A seek to the end gives a block device's size too; positioned
        // reads and writes do not use the file position.
        let mut f = self;
        Ok(f.seek(std::io::SeekFrom::End(0))?)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError> {
        use std::os::unix::fs::FileExt;
        match FileExt::read_exact_at(self, buf, offset) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(IoError::OutOfRange {
                offset,
                len: buf.len() as u64,
                size: ReadAt::size(self)?,
            }),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(all(feature = "std", unix))]
impl WriteAt for std::fs::File {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> Result<(), IoError> {
        use std::os::unix::fs::FileExt;
        Ok(FileExt::write_all_at(self, buf, offset)?)
    }

    fn sync(&self) -> Result<(), IoError> {
        Ok(self.sync_data()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_refuse_every_range_past_their_end() {
        let dev = [0u8; 16];
        let mut b = [0u8; 4];
        for (offset, ok) in [
            (0, true),
            (12, true),
            (13, false),
            (16, false),
            (u64::MAX, false),
        ] {
            assert_eq!(
                dev[..].read_exact_at(&mut b, offset).is_ok(),
                ok,
                "{offset}"
            );
        }
        assert!(dev[..].read_exact_at(&mut [], 16).is_ok());
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn a_vector_in_a_cell_grows_where_a_write_ends_past_it() {
        let dev = core::cell::RefCell::new(alloc::vec![9u8; 4]);
        dev.write_all_at(&[1, 2], 2).unwrap();
        dev.write_all_at(&[3], 6).unwrap();
        assert_eq!(*dev.borrow(), [9, 9, 1, 2, 0, 0, 3]);
        assert!(matches!(
            dev.write_all_at(&[1], u64::MAX),
            Err(IoError::Device(_))
        ));
        assert_eq!(dev.borrow().len(), 7);
        assert!(matches!(
            dev.read_exact_at(&mut [0u8; 2], 6),
            Err(IoError::OutOfRange {
                offset: 6,
                len: 2,
                size: 7
            })
        ));
    }
}
