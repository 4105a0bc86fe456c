//! Devices read and written by position ([`ReadAt`], [`WriteAt`]:
//! mdu-core's pair, re-exported), the blocks FEC corrected
//! ([`Corrections`]), and a device as it reads with them applied
//! ([`Overlay`]).

use std::collections::BTreeMap;
use std::io::{self, Read, Seek, SeekFrom};

use mdu_core::io::{IoError, ReadAt, WriteAt};

use super::layout::Area;

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
    /// # Ok::<(), mdu_core::io::IoError>(())
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
/// # Ok::<(), mdu_core::io::IoError>(())
/// ```
pub struct Overlay<'a, R: ?Sized> {
    base: &'a R,
    block_size: u64,
    blocks: &'a BTreeMap<u64, Vec<u8>>,
}

impl<R: ReadAt + ?Sized> ReadAt for Overlay<'_, R> {
    fn size(&self) -> Result<u64, IoError> {
        self.base.size()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError> {
        self.base.read_exact_at(buf, offset)?;
        let end = offset.saturating_add(buf.len() as u64);
        let first = offset - offset % self.block_size;
        for (&at, block) in self.blocks.range(first..end) {
            let from = at.max(offset);
            let to = at.saturating_add(block.len() as u64).min(end);
            if from < to {
                buf[(from - offset) as usize..(to - offset) as usize]
                    .copy_from_slice(&block[(from - at) as usize..(to - at) as usize]);
            }
        }
        Ok(())
    }
}

/// A positioned device as a reader with a position of its own, for the
/// streaming verifier: a read returns what the device holds from the
/// position, up to its size (taken at the first read or seek, and taken
/// again where the device turns out shorter), 0 at its end.
pub(crate) struct AtCursor<R> {
    dev: R,
    pos: u64,
    size: Option<u64>,
}

impl<R: ReadAt> AtCursor<R> {
    pub(crate) fn new(dev: R) -> AtCursor<R> {
        AtCursor {
            dev,
            pos: 0,
            size: None,
        }
    }

    fn size(&mut self) -> io::Result<u64> {
        match self.size {
            Some(size) => Ok(size),
            None => {
                let size = self.dev.size()?;
                self.size = Some(size);
                Ok(size)
            }
        }
    }
}

impl<R: ReadAt> Read for AtCursor<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let left = self.size()?.saturating_sub(self.pos);
            let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            if n == 0 {
                return Ok(0);
            }
            match self.dev.read_exact_at(&mut buf[..n], self.pos) {
                Ok(()) => {
                    self.pos += n as u64;
                    return Ok(n);
                }
                // The device shrank: read up to where it ends now.
                Err(IoError::OutOfRange { size, .. }) if self.size.is_some_and(|s| size < s) => {
                    self.size = Some(size);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl<R: ReadAt> Seek for AtCursor<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let bad = || io::Error::from(io::ErrorKind::InvalidInput);
        self.pos = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::Current(off) => self.pos.checked_add_signed(off).ok_or_else(bad)?,
            SeekFrom::End(off) => self.size()?.checked_add_signed(off).ok_or_else(bad)?,
        };
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose size says more than it holds (a file truncated
    /// after its size was taken).
    struct Shrunk(Vec<u8>, u64);

    impl ReadAt for Shrunk {
        fn size(&self) -> Result<u64, IoError> {
            Ok(self.1)
        }

        fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError> {
            self.0.read_exact_at(buf, offset)
        }
    }

    /// The cursor reads as a stream does: whole while the device lasts,
    /// a short read at its end and 0 after it, also where the device ends
    /// before the size it gave; seeks from the end use the size.
    #[test]
    fn the_cursor_reads_to_the_end_the_device_really_has() {
        for dev in [Shrunk((0..10).collect(), 10), Shrunk((0..10).collect(), 16)] {
            let mut c = AtCursor::new(&dev);
            let mut b = [0u8; 4];
            let reads: Vec<usize> = (0..4).map(|_| c.read(&mut b).unwrap()).collect();
            assert_eq!((reads, &b[..2]), (vec![4, 4, 2, 0], &[8u8, 9][..]));
        }
        let dev = vec![1u8, 2, 3];
        let mut c = AtCursor::new(&dev);
        assert_eq!(c.seek(SeekFrom::End(-1)).unwrap(), 2);
        let mut b = [0u8; 2];
        assert_eq!((c.read(&mut b).unwrap(), b[0]), (1, 3));
        assert!(c.seek(SeekFrom::Current(-4)).is_err());
        c.seek(SeekFrom::Start(7)).unwrap();
        assert_eq!(c.read(&mut b).unwrap(), 0);
    }
}
