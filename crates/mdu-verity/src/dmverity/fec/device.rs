//! Devices read and written by position ([`ReadAt`], [`WriteAt`]), the
//! blocks FEC corrected ([`Corrections`]), and a device as it reads with
//! them applied ([`Overlay`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use super::layout::Area;

/// A device read by position, as [`std::os::unix::fs::FileExt::read_at`]
/// reads a file: files, block devices, bytes in memory, or a device with
/// corrections over it ([`Overlay`]). Reads through `&self`, so one device
/// serves several readers.
///
/// ```
/// use mdu_verity::dmverity::fec::ReadAt;
/// let dev = vec![1u8, 2, 3, 4];
/// let mut buf = [0u8; 3];
/// assert_eq!(dev.read_at(&mut buf, 2)?, 2);
/// assert_eq!(&buf[..2], &[3, 4]);
/// assert_eq!(dev.size()?, 4);
/// assert!(dev.read_exact_at(&mut buf, 2).is_err()); // ends early
/// # Ok::<(), std::io::Error>(())
/// ```
pub trait ReadAt {
    /// Reads up to `buf.len()` bytes at `offset`; 0 at or past the end.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

    /// The size in bytes (of a block device too, whose metadata says 0).
    fn size(&self) -> io::Result<u64>;

    /// Fills `buf` from `offset`, or fails with
    /// [`io::ErrorKind::UnexpectedEof`] where the device ends first.
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let Some(rest) = usize::try_from(offset).ok().and_then(|o| self.get(o..)) else {
            return Ok(0);
        };
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }
}

impl ReadAt for Vec<u8> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        self.as_slice().read_at(buf, offset)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }
}

impl ReadAt for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, offset)
    }

    fn size(&self) -> io::Result<u64> {
        let meta = self.metadata()?;
        if meta.is_file() {
            Ok(meta.len())
        } else {
            // A block device: seeking to the end gives its size (reads
            // use positions, not this offset).
            let mut f = self;
            f.seek(SeekFrom::End(0))
        }
    }
}

impl<T: ReadAt + ?Sized> ReadAt for &T {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        (**self).read_at(buf, offset)
    }

    fn size(&self) -> io::Result<u64> {
        (**self).size()
    }
}

/// A device written by position, as
/// [`std::os::unix::fs::FileExt::write_all_at`] writes a file.
///
/// ```
/// use std::cell::RefCell;
/// use mdu_verity::dmverity::fec::WriteAt;
/// let dev = RefCell::new(vec![0u8; 4]);
/// dev.write_all_at(&[7, 8], 1)?;
/// assert_eq!(*dev.borrow(), [0, 7, 8, 0]);
/// # Ok::<(), std::io::Error>(())
/// ```
pub trait WriteAt {
    /// Writes all of `buf` at `offset`.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
}

impl WriteAt for File {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(self, buf, offset)
    }
}

/// Bytes in memory, extended with zeros where a write ends past them.
impl WriteAt for std::cell::RefCell<Vec<u8>> {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let at = usize::try_from(offset).map_err(|_| io::ErrorKind::InvalidInput)?;
        let end = at
            .checked_add(buf.len())
            .ok_or(io::ErrorKind::InvalidInput)?;
        let mut v = self.borrow_mut();
        if v.len() < end {
            v.resize(end, 0);
        }
        v[at..end].copy_from_slice(buf);
        Ok(())
    }
}

impl<T: WriteAt + ?Sized> WriteAt for &T {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        (**self).write_all_at(buf, offset)
    }
}

/// The whole blocks FEC decoding changed, by byte offset on the data and
/// the hash device, and the number of bytes corrected.
///
/// ```
/// use mdu_verity::dmverity::fec::{Area, Corrections};
/// let c = Corrections::default();
/// assert!(c.is_empty());
/// assert_eq!((c.bytes(), c.len(Area::Data), c.blocks(Area::Hash).count()), (0, 0, 0));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Corrections {
    pub(super) block_size: u64,
    pub(super) data: BTreeMap<u64, Vec<u8>>,
    pub(super) hash: BTreeMap<u64, Vec<u8>>,
    pub(super) bytes: u64,
}

impl Corrections {
    fn area(&self, area: Area) -> &BTreeMap<u64, Vec<u8>> {
        match area {
            Area::Data => &self.data,
            Area::Hash => &self.hash,
        }
    }

    /// Bytes corrected in all.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Blocks corrected on one device.
    pub fn len(&self, area: Area) -> usize {
        self.area(area).len()
    }

    /// Whether nothing was corrected.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.hash.is_empty()
    }

    /// The corrected blocks of one device, by byte offset, in order.
    pub fn blocks(&self, area: Area) -> impl Iterator<Item = (u64, &[u8])> {
        self.area(area).iter().map(|(&at, b)| (at, b.as_slice()))
    }

    /// `base` (the data or hash device) as it reads with the corrected
    /// blocks of `area` in place of its own.
    ///
    /// ```
    /// use mdu_verity::dmverity::fec::{Area, Corrections, ReadAt};
    /// let c = Corrections::default();
    /// let dev = vec![5u8; 10];
    /// let view = c.overlay(Area::Data, &dev);
    /// let mut b = [0u8; 4];
    /// view.read_exact_at(&mut b, 6)?;
    /// assert_eq!(b, [5; 4]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn overlay<'a, R: ReadAt + ?Sized>(&'a self, area: Area, base: &'a R) -> Overlay<'a, R> {
        Overlay {
            base,
            block_size: self.block_size.max(1),
            blocks: self.area(area),
        }
    }

    /// Writes the corrected blocks of `area` to `dev`, in order (to
    /// repair the device in place; sync it afterwards).
    ///
    /// ```
    /// use std::cell::RefCell;
    /// use mdu_verity::dmverity::fec::{Area, Corrections};
    /// let dev = RefCell::new(vec![1u8; 8]);
    /// Corrections::default().write_to(Area::Hash, &dev)?;
    /// assert_eq!(*dev.borrow(), [1; 8]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn write_to<W: WriteAt + ?Sized>(&self, area: Area, dev: &W) -> io::Result<()> {
        for (at, block) in self.blocks(area) {
            dev.write_all_at(block, at)?;
        }
        Ok(())
    }
}

/// A device as it reads with corrected blocks in place of its own (made
/// by [`Corrections::overlay`]): what verification reads before anything
/// is written. Bytes past the end of the device stay past it.
///
/// ```
/// use mdu_verity::dmverity::fec::{Area, Corrections, Overlay, ReadAt};
/// let c = Corrections::default();
/// let dev = [0u8; 4];
/// let view: Overlay<'_, [u8]> = c.overlay(Area::Hash, &dev[..]);
/// assert_eq!(view.size()?, 4);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Overlay<'a, R: ?Sized> {
    base: &'a R,
    block_size: u64,
    blocks: &'a BTreeMap<u64, Vec<u8>>,
}

impl<R: ReadAt + ?Sized> ReadAt for Overlay<'_, R> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let n = self.base.read_at(buf, offset)?;
        let end = offset.saturating_add(n as u64);
        let first = offset - offset % self.block_size;
        for (&at, block) in self.blocks.range(first..end) {
            let from = at.max(offset);
            let to = at.saturating_add(block.len() as u64).min(end);
            if from < to {
                buf[(from - offset) as usize..(to - offset) as usize]
                    .copy_from_slice(&block[(from - at) as usize..(to - at) as usize]);
            }
        }
        Ok(n)
    }

    fn size(&self) -> io::Result<u64> {
        self.base.size()
    }
}

/// A positioned device as a reader with a position of its own, for the
/// streaming verifier.
pub(crate) struct AtCursor<R> {
    dev: R,
    pos: u64,
}

impl<R: ReadAt> AtCursor<R> {
    pub(crate) fn new(dev: R) -> AtCursor<R> {
        AtCursor { dev, pos: 0 }
    }
}

impl<R: ReadAt> Read for AtCursor<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.dev.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: ReadAt> Seek for AtCursor<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let bad = || io::Error::from(io::ErrorKind::InvalidInput);
        self.pos = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::Current(off) => self.pos.checked_add_signed(off).ok_or_else(bad)?,
            SeekFrom::End(off) => self.dev.size()?.checked_add_signed(off).ok_or_else(bad)?,
        };
        Ok(self.pos)
    }
}
