//! The one dm-verity verification entry: a [`Verifier`] names the tree's
//! shape (the caller's [`Params`], or a superblock checked against
//! [`Pins`]) and the trusted root hash, then verifies a whole device, a
//! range of it, corrects it with FEC, or opens a verifying [`Reader`].
//! The free functions of [`dmverity`](super) and of [`fec`] are shorthands
//! of it.

use std::io::{Read, Seek};

use super::fec::{self, AtCursor, FecOutcome, FecParams, Shape};
use super::{MAX_HASH_OFFSET, Params, Pins, Reader, Superblock, verify};
use crate::{Digest, Error, Source};
use mdu_core::io::ReadAt;

/// How a dm-verity image is verified: its shape and its trusted root hash
/// (see the [trust model](super#trust-model)).
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity::{self, Pins, Verifier};
///
/// let mut data = vec![9u8; 32 * 4096];
/// let p = dmverity::Params::default();
/// let mut hash = Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
///
/// // The caller's parameters, every block.
/// Verifier::new(&p, &root).verify(&data[..], &mut hash)?;
/// // The superblock's, with the count pinned.
/// let pins = Pins { data_blocks: Some(32), ..Pins::default() };
/// let used = Verifier::superblock(0, &pins, &root).verify(&data[..], &mut hash)?;
/// assert_eq!(used.data_blocks, Some(32));
/// // Blocks 1..32 only.
/// data[0] ^= 1;
/// Verifier::new(&p, &root).verify_range(&data[..], &mut hash, 1, 31)?;
/// assert!(Verifier::new(&p, &root).verify(&data[..], &mut hash).is_err());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Verifier<'a> {
    shape: Shape<'a>,
    root: &'a Digest,
}

impl<'a> Verifier<'a> {
    /// Verification with the caller's `params` (trusted; the superblock on
    /// the hash device, if any, is not read) against `root`.
    ///
    /// ```
    /// use mdu_verity::dmverity::{fec::Shape, Params, Verifier};
    /// let (p, root) = (Params::default(), mdu_verity::Digest::from_slice(&[0; 32]));
    /// assert!(matches!(Verifier::new(&p, &root).shape(), Shape::Params(_)));
    /// ```
    pub fn new(params: &'a Params, root: &'a Digest) -> Verifier<'a> {
        Verifier::with_shape(Shape::Params(params), root)
    }

    /// Verification with the parameters of the superblock at `hash_offset`
    /// of the hash device, checked against `pins`, against `root`, as
    /// `veritysetup verify` does. Pin at least `data_blocks` to know the
    /// data is the data the root was made for.
    ///
    /// ```
    /// use mdu_verity::dmverity::{Pins, Verifier};
    /// let (pins, root) = (Pins::default(), mdu_verity::Digest::from_slice(&[0; 32]));
    /// let _ = Verifier::superblock(0, &pins, &root);
    /// ```
    pub fn superblock(hash_offset: u64, pins: &'a Pins, root: &'a Digest) -> Verifier<'a> {
        Verifier::with_shape(Shape::Superblock { hash_offset, pins }, root)
    }

    /// Verification of a tree of `shape` against `root`.
    ///
    /// ```
    /// use mdu_verity::dmverity::{fec::Shape, Params, Verifier};
    /// let (p, root) = (Params::default(), mdu_verity::Digest::from_slice(&[0; 32]));
    /// let _ = Verifier::with_shape(Shape::Params(&p), &root);
    /// ```
    pub fn with_shape(shape: Shape<'a>, root: &'a Digest) -> Verifier<'a> {
        Verifier { shape, root }
    }

    /// The shape.
    ///
    /// ```
    /// use mdu_verity::dmverity::{fec::Shape, Pins, Verifier};
    /// let (pins, root) = (Pins::default(), mdu_verity::Digest::from_slice(&[0; 32]));
    /// let v = Verifier::superblock(4096, &pins, &root);
    /// assert!(matches!(v.shape(), Shape::Superblock { hash_offset: 4096, .. }));
    /// ```
    pub fn shape(&self) -> Shape<'a> {
        self.shape
    }

    /// The parameters of the tree: the caller's, or those of the
    /// superblock on `hash` that agree with the pins.
    fn params<H: Read + Seek>(&self, hash: &mut H) -> Result<Params, Error> {
        match self.shape {
            Shape::Params(p) => Ok(p.clone()),
            Shape::Superblock { hash_offset, pins } => {
                if !hash_offset.is_multiple_of(512) {
                    return Err(Error::HashOffset {
                        offset: hash_offset,
                    });
                }
                if hash_offset > MAX_HASH_OFFSET {
                    return Err(Error::HashOffsetTooLarge {
                        offset: hash_offset,
                        max: MAX_HASH_OFFSET,
                    });
                }
                let sb = Superblock::read_from(&mut *hash, hash_offset)?;
                sb.params_pinned(hash_offset, pins)
            }
        }
    }

    /// Verifies every data block of `data` (any [`Source`]) against the
    /// tree on `hash`, naming the first bad block in the error; returns
    /// the parameters used (the superblock's, for
    /// [`superblock`](Self::superblock)). The number of data blocks is the
    /// shape's, or every whole block of `data`; zero is an error, never
    /// success. How the work is spread and what memory it takes:
    /// [`dmverity::verify`](super::verify()).
    ///
    /// # Errors
    ///
    /// The first bad block ([`Error::CorruptHashBlock`],
    /// [`Error::CorruptDataBlock`], [`Error::MissingDataBlock`]), bad
    /// parameters, a superblock that is malformed or contradicts a pin, I/O
    /// errors. (Example: [`Verifier`].)
    pub fn verify<'d, H: Read + Seek>(
        &self,
        data: impl Into<Source<'d>>,
        mut hash: H,
    ) -> Result<Params, Error> {
        let mut data = data.into();
        let params = self.params(&mut hash)?;
        params.validate()?;
        let n = verify::data_blocks(&mut data, &params)?;
        verify::range(data, hash, &params, self.root, 0, n)?;
        Ok(params)
    }

    /// Verifies data blocks `start .. start + count` (and the hash blocks
    /// on their paths to the root); an empty range is
    /// [`Error::ZeroDataBlocks`], a range past the device
    /// [`Error::BlockRange`].
    ///
    /// # Errors
    ///
    /// As [`verify`](Self::verify). (Example: [`Verifier`].)
    pub fn verify_range<'d, H: Read + Seek>(
        &self,
        data: impl Into<Source<'d>>,
        mut hash: H,
        start: u64,
        count: u64,
    ) -> Result<Params, Error> {
        let params = self.params(&mut hash)?;
        verify::range(data.into(), hash, &params, self.root, start, count)?;
        Ok(params)
    }

    /// Verifies the devices and, where that fails, corrects them with the
    /// FEC parity on `fec` (laid out as `fec_params` says) and verifies
    /// again with the corrections in view; nothing is written. See
    /// [`fec::verify_with_fec`] for what is corrected and reported.
    ///
    /// # Errors
    ///
    /// I/O errors of the first verification, bad parameters, a FEC device
    /// too short for its layout, read errors while decoding.
    ///
    /// ```
    /// use mdu_verity::dmverity::{self, fec::FecParams, Verifier};
    /// let p = dmverity::Params::default();
    /// let data = vec![3u8; 4 * 4096];
    /// let mut hash = std::io::Cursor::new(Vec::new());
    /// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
    /// let out = Verifier::new(&p, &root)
    ///     .verify_with_fec(&data, &hash.into_inner(), &[][..], &FecParams::default())?;
    /// assert!(out.verified());
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn verify_with_fec<D, H, F>(
        &self,
        data: &D,
        hash: &H,
        fec: &F,
        fec_params: &FecParams,
    ) -> Result<FecOutcome, Error>
    where
        D: ReadAt + Sync + ?Sized,
        H: ReadAt + ?Sized,
        F: ReadAt + ?Sized,
    {
        let first = self.verify_with_fec_first(data, hash);
        self.correct_after(first, data, hash, fec, fec_params)
    }

    /// The verification of positioned devices that opens and closes the
    /// FEC pass.
    pub(crate) fn verify_with_fec_first<D, H>(&self, data: &D, hash: &H) -> Result<(), Error>
    where
        D: ReadAt + Sync + ?Sized,
        H: ReadAt + ?Sized,
    {
        let len = data.size()?;
        let src = Source::seekable(AtCursor::new(data)).with_len(len);
        self.verify(src, AtCursor::new(hash)).map(drop)
    }

    /// [`verify_with_fec`](Self::verify_with_fec) after a first
    /// verification the caller ran itself (`first`, what
    /// [`verify`](Self::verify) returned for these devices, read in any
    /// way): only where it failed are the devices read again, by position.
    ///
    /// # Errors
    ///
    /// As [`verify_with_fec`](Self::verify_with_fec); an I/O error of
    /// `first` is returned as it is.
    ///
    /// ```
    /// use mdu_verity::dmverity::{self, fec::FecParams, Verifier};
    /// let p = dmverity::Params::default();
    /// let data = vec![3u8; 4 * 4096];
    /// let mut hash = std::io::Cursor::new(Vec::new());
    /// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
    /// let v = Verifier::new(&p, &root);
    /// let out = v.correct_after(Ok(()), &data, &hash.into_inner(), &[][..], &FecParams::default())?;
    /// assert!(out.verified());
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn correct_after<D, H, F>(
        &self,
        first: Result<(), Error>,
        data: &D,
        hash: &H,
        fec: &F,
        fec_params: &FecParams,
    ) -> Result<FecOutcome, Error>
    where
        D: ReadAt + Sync + ?Sized,
        H: ReadAt + ?Sized,
        F: ReadAt + ?Sized,
    {
        fec::correct_after(first, data, hash, fec, self.shape, self.root, fec_params)
    }

    /// A reader of `data` that verifies every block it returns against the
    /// tree on `hash` (see [`Reader`]).
    ///
    /// # Errors
    ///
    /// As [`Reader::new`], and a superblock that is malformed or
    /// contradicts a pin.
    ///
    /// ```
    /// use mdu_verity::dmverity::{self, Verifier};
    /// let p = dmverity::Params::default();
    /// let data = vec![5u8; 8 * 4096];
    /// let mut hash = std::io::Cursor::new(Vec::new());
    /// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
    /// let r = Verifier::new(&p, &root).reader(&data[..], &hash.get_ref()[..])?;
    /// let mut block = vec![0u8; 4096];
    /// r.read_at(&mut block, 4096)?;
    /// assert_eq!(block, vec![5u8; 4096]);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn reader<D: ReadAt, H: ReadAt>(&self, data: D, hash: H) -> Result<Reader<D, H>, Error> {
        let params = self.params(&mut AtCursor::new(&hash))?;
        Reader::new(data, hash, &params, self.root)
    }
}
