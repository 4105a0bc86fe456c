//! The parity of a whole dm-verity image, as `veritysetup format
//! --fec-device` writes it: the data blocks (handed over while they are
//! hashed, or read by position), then the hash area read by position,
//! through one [`Encoder`], written where the layout puts it.

use mdu_core::io::IoError;

use super::encode::Encoder;
use super::layout::{FecParams, Layout, VerityLayout};
use super::{ReadAt, WriteAt};
use crate::Error;
use crate::dmverity::Params;

/// Bytes read per step from a device read by position.
const CHUNK: usize = 4 << 20;

impl Layout {
    /// The FEC layout of the image [`dmverity::format`](crate::dmverity::format)
    /// writes to a new, empty hash device: the device ends with the tree
    /// (at [`Formatted::hash_device_size`](crate::dmverity::Formatted::hash_device_size)),
    /// or the protected area ends where `fec` puts the parity on the hash
    /// device. Known before a block is hashed, so that the data can feed a
    /// [`VerityEncoder`] on its way to the hasher; where the hash device
    /// already held bytes past the tree, compute the layout again from its
    /// real size ([`Layout::for_verity`]) and compare.
    ///
    /// ```
    /// use mdu_verity::dmverity::{self, fec::{FecParams, Layout}};
    ///
    /// let p = dmverity::Params::default();
    /// let l = Layout::for_new_verity(&p, 256, &FecParams::default())?;
    /// // A superblock block and 3 tree blocks, as format writes them.
    /// let out = dmverity::format(&vec![0u8; 256 * 4096][..], std::io::Cursor::new(Vec::new()), &p)?;
    /// assert_eq!(l, Layout::for_verity(&p, 256, out.hash_device_size(), &FecParams::default())?);
    /// assert_eq!(l.hash_blocks(), 3);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn for_new_verity(
        params: &Params,
        data_blocks: u64,
        fec: &FecParams,
    ) -> Result<VerityLayout, Error> {
        let hash_device_size = if fec.in_hash_device {
            // The protected area ends at the parity: the size does not count.
            0
        } else {
            params
                .hash_start_block()
                .checked_add(params.tree_blocks(data_blocks)?)
                .and_then(|end| end.checked_mul(u64::from(params.hash_block_size)))
                .ok_or(Error::TreeTooLarge { data_blocks })?
        };
        Layout::for_verity(params, data_blocks, hash_device_size, fec)
    }
}

/// Computes the FEC parity of a dm-verity image and writes it where its
/// [`VerityLayout`] puts it: the data blocks first, in order, each once
/// (pieces handed over with [`push_data`](Self::push_data), for example
/// the mapped windows of the data device while
/// [`dmverity::format`](crate::dmverity::format) hashes them, so the data
/// is read once; the rest read by position with
/// [`read_data`](Self::read_data)), then the hash area
/// ([`read_hash`](Self::read_hash), once the tree is written), and the
/// parity out ([`write_to`](Self::write_to) or [`finish`](Self::finish)).
/// The rounds are encoded on all threads of the rayon pool (with the
/// `rayon` feature) and with the fastest kernel of the CPU; the state is
/// as large as the parity, whatever the size of the image.
///
/// ```
/// use std::cell::RefCell;
/// use mdu_verity::dmverity::{self, fec::{FecParams, Layout, VerityEncoder}};
///
/// let p = dmverity::Params::default();
/// let data: Vec<u8> = (0..300 * 4096).map(|i| (i * 7 + 3) as u8).collect();
/// let mut hash = std::io::Cursor::new(Vec::new());
/// dmverity::format(&data[..], &mut hash, &p)?;
/// let hash = hash.into_inner();
///
/// let fec = FecParams { roots: 4, ..FecParams::default() };
/// let layout = Layout::for_verity(&p, 300, hash.len() as u64, &fec)?;
/// let mut enc = VerityEncoder::new(layout)?;
/// enc.push_data(&data[..100 * 4096])?; // as it goes by
/// enc.read_data(&data)?; // the other 200 blocks
/// enc.read_hash(&hash)?;
/// let out = RefCell::new(Vec::new());
/// enc.write_to(&out)?;
/// assert_eq!(out.into_inner(), dmverity::fec::encode_verity(&layout, &data, &hash)?);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub struct VerityEncoder {
    layout: VerityLayout,
    enc: Encoder,
    /// Data blocks taken so far.
    data: u64,
    /// Whether the hash area was taken.
    hash: bool,
}

impl VerityEncoder {
    /// An encoder for the image `layout` describes, with nothing taken.
    ///
    /// ```
    /// use mdu_verity::dmverity::{self, fec::{FecParams, Layout, VerityEncoder}};
    /// let p = dmverity::Params::default();
    /// let l = Layout::for_verity(&p, 10, 2 * 4096, &FecParams::default())?;
    /// let enc = VerityEncoder::new(l)?;
    /// assert_eq!((enc.data_blocks_taken(), enc.layout().data_blocks()), (0, 10));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn new(layout: VerityLayout) -> Result<VerityEncoder, Error> {
        Ok(VerityEncoder {
            enc: Encoder::new(*layout.layout())?,
            layout,
            data: 0,
            hash: false,
        })
    }

    /// The layout this encoder computes.
    pub fn layout(&self) -> &VerityLayout {
        &self.layout
    }

    /// Data blocks taken so far.
    pub fn data_blocks_taken(&self) -> u64 {
        self.data
    }

    fn block_size(&self) -> usize {
        self.layout.layout().block_size() as usize
    }

    /// Takes the next bytes of the data device, from where the last call
    /// ended (block 0 at first): their whole blocks, up to the layout's
    /// data block count, and the number of blocks taken. Bytes past the
    /// last data block are not part of the input and are passed over (the
    /// tail of a device longer than the count, a part block at its end); a
    /// part block before the last data block is [`Error::FecInput`], with
    /// nothing taken. Once the hash area is taken, nothing more is.
    ///
    /// ```
    /// use mdu_verity::{dmverity::{self, fec::{FecParams, Layout, VerityEncoder}}, Error};
    /// let p = dmverity::Params { superblock: false, ..Default::default() };
    /// let mut enc = VerityEncoder::new(Layout::for_verity(&p, 3, 4096, &FecParams::default())?)?;
    /// assert_eq!(enc.push_data(&[0u8; 2 * 4096])?, 2);
    /// assert!(matches!(enc.push_data(&[0u8; 100]), Err(Error::FecInput { .. })));
    /// assert_eq!(enc.push_data(&[0u8; 2 * 4096 + 100])?, 1); // the rest is past the data
    /// assert_eq!(enc.push_data(&[0u8; 4096])?, 0);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn push_data(&mut self, bytes: &[u8]) -> Result<u64, Error> {
        let bs = self.block_size();
        let left = self.layout.data_blocks() - self.data;
        let whole = (bytes.len() / bs) as u64;
        let take = whole.min(left);
        if whole < left && !bytes.len().is_multiple_of(bs) {
            return Err(Error::FecInput {
                reason: format!(
                    "{} bytes of data after block {} end inside a {bs}-byte block, before the \
                     last of the {} data blocks",
                    bytes.len(),
                    self.data,
                    self.layout.data_blocks()
                ),
            });
        }
        if take == 0 {
            return Ok(0);
        }
        // Below `bytes.len()`.
        self.enc.push(&bytes[..take as usize * bs])?;
        self.data += take;
        Ok(take)
    }

    /// Reads the data blocks not taken yet from the data device `data`, by
    /// position. A device that ends before the last of them is
    /// [`Error::TruncatedInput`]; other read errors are [`Error::Io`].
    ///
    /// ```
    /// use mdu_verity::{dmverity::{self, fec::{FecParams, Layout, VerityEncoder}}, Error};
    /// let p = dmverity::Params { superblock: false, ..Default::default() };
    /// let mut enc = VerityEncoder::new(Layout::for_verity(&p, 3, 4096, &FecParams::default())?)?;
    /// let err = enc.read_data(&vec![0u8; 2 * 4096 + 5]).unwrap_err();
    /// assert!(matches!(err, Error::TruncatedInput { expected_blocks: 3, available_blocks: 2 }));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn read_data<D: ReadAt + ?Sized>(&mut self, data: &D) -> Result<(), Error> {
        let total = self.layout.data_blocks();
        let bs = self.block_size() as u64;
        let mut buf = Vec::new();
        while self.data < total {
            let (at, blocks) = (self.data * bs, total - self.data);
            let read = read_blocks(data, &mut buf, at, blocks, bs);
            match read {
                Ok(chunk) => {
                    self.enc.push(chunk)?;
                    self.data += chunk.len() as u64 / bs;
                }
                Err(IoError::OutOfRange { size, .. }) => {
                    let available = size / bs;
                    return Err(Error::TruncatedInput {
                        expected_blocks: total,
                        available_blocks: available.min(total),
                    });
                }
                Err(e) => return Err(Error::Io(e.into())),
            }
        }
        Ok(())
    }

    /// Reads the hash area from the hash device `hash` (holding the tree),
    /// by position, after every data block was taken (otherwise
    /// [`Error::FecInput`], with nothing read). Read errors, and a device
    /// that ends before the area does, are [`Error::Io`].
    ///
    /// ```
    /// use mdu_verity::{dmverity::{self, fec::{FecParams, Layout, VerityEncoder}}, Error};
    /// let p = dmverity::Params { superblock: false, ..Default::default() };
    /// let mut enc = VerityEncoder::new(Layout::for_verity(&p, 3, 4096, &FecParams::default())?)?;
    /// let hash = vec![0u8; 4096];
    /// assert!(matches!(enc.read_hash(&hash), Err(Error::FecInput { .. })));
    /// enc.read_data(&vec![0u8; 3 * 4096])?;
    /// enc.read_hash(&hash)?;
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn read_hash<H: ReadAt + ?Sized>(&mut self, hash: &H) -> Result<(), Error> {
        if self.data < self.layout.data_blocks() {
            return Err(Error::FecInput {
                reason: format!(
                    "the hash area goes after the {} data blocks, but {} were given",
                    self.layout.data_blocks(),
                    self.data
                ),
            });
        }
        if self.hash {
            return Ok(());
        }
        let bs = self.block_size() as u64;
        // Below the hash device's size, itself a `u64` (`for_verity`).
        let start = self.layout.hash_start_block() * bs;
        let (mut done, total) = (0, self.layout.hash_blocks());
        let mut buf = Vec::new();
        while done < total {
            let chunk = read_blocks(hash, &mut buf, start + done * bs, total - done, bs)?;
            self.enc.push(chunk)?;
            done += chunk.len() as u64 / bs;
        }
        self.hash = true;
        Ok(())
    }

    /// The parity, once the data blocks and the hash area were taken
    /// (otherwise [`Error::FecInput`]): `layout().layout().parity_len()`
    /// bytes, as the FEC device holds them from the parity offset.
    ///
    /// ```
    /// use mdu_verity::{dmverity::{self, fec::{FecParams, Layout, VerityEncoder}}, Error};
    /// let p = dmverity::Params { superblock: false, ..Default::default() };
    /// let l = Layout::for_verity(&p, 3, 4096, &FecParams::default())?;
    /// assert!(matches!(VerityEncoder::new(l)?.finish(), Err(Error::FecInput { .. })));
    /// let mut enc = VerityEncoder::new(l)?;
    /// enc.read_data(&vec![0u8; 3 * 4096])?;
    /// enc.read_hash(&vec![0u8; 4096])?;
    /// assert_eq!(enc.finish()?, vec![0u8; 2 * 4096]); // zeros in, zeros out
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn finish(self) -> Result<Vec<u8>, Error> {
        if !self.hash {
            return Err(Error::FecInput {
                reason: format!(
                    "the hash area was not given ({} of {} data blocks were)",
                    self.data,
                    self.layout.data_blocks()
                ),
            });
        }
        self.enc.finish()
    }

    /// Writes the parity to the FEC device `fec` (the hash device itself
    /// where the parameters say so) at the parity offset of the layout;
    /// [`finish`](Self::finish)'s errors, and write errors as
    /// [`Error::Io`]. Sync the device afterwards.
    ///
    /// ```
    /// use std::cell::RefCell;
    /// use mdu_verity::dmverity::{self, fec::{FecParams, Layout, VerityEncoder}};
    /// let p = dmverity::Params { superblock: false, ..Default::default() };
    /// let fec = FecParams { offset: 512, ..FecParams::default() };
    /// let mut enc = VerityEncoder::new(Layout::for_verity(&p, 3, 4096, &fec)?)?;
    /// enc.read_data(&vec![0u8; 3 * 4096])?;
    /// enc.read_hash(&vec![0u8; 4096])?;
    /// let dev = RefCell::new(vec![7u8; 512]);
    /// enc.write_to(&dev)?;
    /// assert_eq!(dev.borrow().len(), 512 + 2 * 4096);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn write_to<W: WriteAt + ?Sized>(self, fec: &W) -> Result<(), Error> {
        let offset = self.layout.fec().offset;
        let parity = self.finish()?;
        fec.write_all_at(&parity, offset)?;
        Ok(())
    }
}

/// Reads up to `blocks` blocks of `bs` bytes at `at` (at most [`CHUNK`]
/// bytes, at least one block) into `buf`, and returns them.
fn read_blocks<'b, R: ReadAt + ?Sized>(
    dev: &R,
    buf: &'b mut Vec<u8>,
    at: u64,
    blocks: u64,
    bs: u64,
) -> Result<&'b [u8], IoError> {
    let per_chunk = (CHUNK as u64 / bs).max(1);
    // At most `CHUNK` bytes, or one block.
    let len = (blocks.min(per_chunk) * bs) as usize;
    if buf.len() < len {
        buf.resize(len, 0);
    }
    dev.read_exact_at(&mut buf[..len], at)?;
    Ok(&buf[..len])
}

/// The parity of the image `layout` describes, in one call: the data
/// blocks read from `data`, the hash area from `hash` (holding the tree),
/// both by position (see [`VerityEncoder`] for its errors).
///
/// ```
/// use mdu_verity::dmverity::{self, fec::{self, FecParams, Layout}};
///
/// let p = dmverity::Params::default();
/// let data: Vec<u8> = (0..64 * 4096).map(|i| (i % 251) as u8).collect();
/// let mut hash = std::io::Cursor::new(Vec::new());
/// dmverity::format(&data[..], &mut hash, &p)?;
/// let hash = hash.into_inner();
/// let layout = Layout::for_verity(&p, 64, hash.len() as u64, &FecParams::default())?;
///
/// // The input is the data blocks, then the tree (never the superblock).
/// let mut input = data.clone();
/// input.extend_from_slice(&hash[4096..]);
/// assert_eq!(fec::encode_verity(&layout, &data, &hash)?, fec::encode_bytes(&input, 4096, 2)?);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn encode_verity<D, H>(layout: &VerityLayout, data: &D, hash: &H) -> Result<Vec<u8>, Error>
where
    D: ReadAt + ?Sized,
    H: ReadAt + ?Sized,
{
    let mut enc = VerityEncoder::new(*layout)?;
    enc.read_data(data)?;
    enc.read_hash(hash)?;
    enc.finish()
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;
    use crate::dmverity::fec::{Area, encode_bytes};

    /// The FEC input of `layout`, block by block, from the two devices.
    fn input(layout: &VerityLayout, data: &[u8], hash: &[u8]) -> Vec<u8> {
        let bs = layout.layout().block_size() as usize;
        let mut v = Vec::new();
        for k in 0..layout.layout().blocks() {
            let (area, at) = layout.block(k).unwrap();
            let dev = if area == Area::Data { data } else { hash };
            v.extend_from_slice(&dev[at as usize..at as usize + bs]);
        }
        v
    }

    /// Data handed over in pieces of every shape (none, part, all, more
    /// than all, block by block) and the rest read by position give the
    /// parity of the input laid out block by block; a data device longer
    /// than the pinned count and a hash device with bytes before and after
    /// the area are read only where the layout says.
    #[test]
    fn every_split_of_the_data_gives_the_parity_of_the_input() {
        let p = Params {
            superblock: true,
            hash_offset: 1024,
            data_blocks: Some(70),
            hash_block_size: 512,
            data_block_size: 512,
            ..Params::default()
        };
        let data: Vec<u8> = (0..75 * 512 + 100)
            .map(|i| (i * 13 + i / 509) as u8)
            .collect();
        let hash: Vec<u8> = (0..40 * 512).map(|i| (i * 7 + 1) as u8).collect();
        let fec = FecParams {
            roots: 3,
            ..FecParams::default()
        };
        let layout = Layout::for_verity(&p, 70, hash.len() as u64, &fec).unwrap();
        let want = encode_bytes(&input(&layout, &data, &hash), 512, 3).unwrap();
        let splits: [&[usize]; 6] = [
            &[],
            &[10 * 512],
            &[70 * 512],
            &[75 * 512 + 100],
            &[512; 70],
            &[3 * 512, 0, 64 * 512, 512, 2 * 512],
        ];
        for pieces in splits {
            let mut enc = VerityEncoder::new(layout).unwrap();
            let mut at = 0;
            for &n in pieces {
                enc.push_data(&data[at..at + n]).unwrap();
                at += n;
            }
            enc.read_data(&data).unwrap();
            enc.read_hash(&hash).unwrap();
            assert!(enc.finish().unwrap() == want, "pieces {pieces:?}");
        }
        assert!(encode_verity(&layout, &data, &hash).unwrap() == want);
    }

    /// A hash device that ends before its area, a data device that ends
    /// before its blocks, and steps out of order are typed errors.
    #[test]
    fn short_devices_and_steps_out_of_order_are_errors() {
        let p = Params::default();
        let layout = Layout::for_verity(&p, 5, 3 * 4096, &FecParams::default()).unwrap();
        let data = vec![1u8; 5 * 4096];
        let err = encode_verity(&layout, &data, &vec![0u8; 2 * 4096 + 7]).unwrap_err();
        assert!(matches!(err, Error::Io(ref e) if e.kind() == io::ErrorKind::UnexpectedEof));
        let err = encode_verity(&layout, &data[..4096], &vec![0u8; 3 * 4096]).unwrap_err();
        assert!(matches!(
            err,
            Error::TruncatedInput {
                expected_blocks: 5,
                available_blocks: 1
            }
        ));
        let mut enc = VerityEncoder::new(layout).unwrap();
        enc.read_data(&data).unwrap();
        enc.read_hash(&vec![0u8; 3 * 4096]).unwrap();
        assert_eq!(enc.push_data(&data).unwrap(), 0);
        assert!(enc.finish().is_ok());
    }

    /// The predicted layout of a new image is the one computed from the
    /// hash device `format` writes, with and without a superblock and
    /// offset, and with the parity in the hash device.
    #[test]
    fn the_layout_of_a_new_image_is_the_formatted_one() {
        for (superblock, hash_offset, blocks) in [
            (true, 0, 1),
            (false, 0, 300),
            (true, 8192, 1000),
            (false, 512, 129),
        ] {
            let p = Params {
                superblock,
                hash_offset,
                ..Params::default()
            };
            let data = vec![0u8; blocks * 4096];
            let mut hash = std::io::Cursor::new(Vec::new());
            let out = crate::dmverity::format(&data[..], &mut hash, &p).unwrap();
            let fec = FecParams::default();
            let want = Layout::for_verity(&p, blocks as u64, out.hash_device_size(), &fec);
            let got = Layout::for_new_verity(&p, blocks as u64, &fec);
            assert_eq!(
                got.unwrap(),
                want.unwrap(),
                "{superblock} {hash_offset} {blocks}"
            );
            let fec = FecParams {
                offset: out.hash_device_size().next_multiple_of(4096),
                in_hash_device: true,
                ..fec
            };
            let got = Layout::for_new_verity(&p, blocks as u64, &fec).unwrap();
            assert_eq!(got.hash_blocks(), out.hash_blocks());
        }
    }
}
