//! Verification with FEC, as `veritysetup verify --fec-device` does it
//! and as the kernel corrects what it reads: verify; where that fails,
//! decode the parity; verify again with the corrections in view; and only
//! then let the caller write them.

use super::correct::correct;
use super::device::{AtCursor, Corrections};
use super::layout::{Area, FecParams, Layout, VerityLayout};
use super::{ReadAt, WriteAt};
use crate::dmverity::{Params, Pins, Superblock, Verifier};
use crate::{Digest, Error};

/// How the tree is described: by the caller's parameters alone (as
/// [`verify`](crate::dmverity::verify)), or by the superblock on the hash
/// device with the caller's pins (as
/// [`verify_with_superblock`](crate::dmverity::verify_with_superblock)).
///
/// ```
/// use mdu_verity::dmverity::{fec::Shape, Params, Pins};
/// let p = Params::default();
/// let pins = Pins::default();
/// let _ = Shape::Params(&p);
/// let _ = Shape::Superblock { hash_offset: 0, pins: &pins };
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Shape<'a> {
    /// The caller's parameters; the superblock is not read.
    Params(&'a Params),
    /// The superblock at `hash_offset`, checked against `pins`.
    Superblock {
        /// Byte offset of the superblock on the hash device.
        hash_offset: u64,
        /// The values the superblock must agree with.
        pins: &'a Pins,
    },
}

/// What [`verify_with_fec`] found: whether the devices verify (as read, or
/// with FEC's corrections), what was bad, what FEC corrected and what it
/// could not.
///
/// ```
/// use mdu_verity::dmverity::{self, fec::{self, FecParams, Shape}};
///
/// let p = dmverity::Params::default();
/// let data = vec![3u8; 4 * 4096];
/// let mut hash = std::io::Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
/// let hash = hash.into_inner();
/// let out = fec::verify_with_fec(&data, &hash, &[][..], Shape::Params(&p), &root, &FecParams::default())?;
/// assert!(out.verified() && out.first_failure().is_none()); // FEC not needed
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Debug)]
pub struct FecOutcome {
    params: Params,
    layout: Option<VerityLayout>,
    first: Option<Error>,
    decoded: super::Decoded,
    after: Option<Error>,
}

impl FecOutcome {
    /// Whether the devices verify: as read, or with the corrections.
    pub fn verified(&self) -> bool {
        self.first.is_none()
            || (self.decoded.uncorrectable.is_empty()
                && !self.decoded.corrections.is_empty()
                && self.after.is_none())
    }

    /// The parameters of the tree (the superblock's, for
    /// [`Shape::Superblock`]).
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Why the devices as read did not verify (it names the first bad
    /// block); `None` if they did, and FEC was not needed.
    pub fn first_failure(&self) -> Option<&Error> {
        self.first.as_ref()
    }

    /// The FEC layout decoding used; `None` if FEC was not needed.
    pub fn layout(&self) -> Option<&VerityLayout> {
        self.layout.as_ref()
    }

    /// The blocks FEC corrected (empty if nothing needed correcting, or
    /// nothing could be).
    pub fn corrections(&self) -> &Corrections {
        &self.decoded.corrections
    }

    /// The FEC rounds beyond repair, in order: their blocks (input blocks
    /// `i * R + round`, [`Layout::round_blocks`]) were left as they were.
    pub fn uncorrectable_rounds(&self) -> impl Iterator<Item = u64> + '_ {
        self.decoded.uncorrectable.iter().map(|&(round, _)| round)
    }

    /// Why the devices do not verify with the corrections applied, when
    /// FEC corrected something but not enough; `None` otherwise.
    pub fn failure_after_correction(&self) -> Option<&Error> {
        self.after.as_ref()
    }

    /// The outcome if the devices verify, or why they do not: the first
    /// round beyond repair ([`Error::FecUncorrectable`]), the first
    /// failure if FEC found nothing to correct, or the failure with the
    /// corrections applied.
    ///
    /// ```
    /// use mdu_verity::{dmverity::{self, fec::{self, FecParams, Shape}}, Error};
    ///
    /// let p = dmverity::Params::default();
    /// let mut data = vec![3u8; 4 * 4096];
    /// let mut hash = std::io::Cursor::new(Vec::new());
    /// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
    /// let hash = hash.into_inner();
    /// let parity = vec![0u8; 2 * 4096]; // the parity of other data
    /// data[0] ^= 1;
    /// let out = fec::verify_with_fec(&data, &hash, &parity, Shape::Params(&p), &root, &FecParams::default())?;
    /// assert!(!out.verified());
    /// assert_eq!(out.uncorrectable_rounds().next(), Some(0));
    /// assert!(matches!(out.into_result(), Err(Error::FecUncorrectable { round: 0, .. })));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn into_result(mut self) -> Result<FecOutcome, Error> {
        if self.verified() {
            return Ok(self);
        }
        if let Some(&(round, byte)) = self.decoded.uncorrectable.first() {
            return Err(Error::FecUncorrectable { round, byte });
        }
        match (self.after.take(), self.first.take()) {
            (Some(e), _) | (None, Some(e)) => Err(e),
            // `verified` holds when there was no first failure.
            (None, None) => Ok(self),
        }
    }

    /// Repairs the devices in place: writes the corrected blocks to `data`
    /// and `hash` (the devices read, opened for writing), only if they
    /// verify with them; otherwise writes nothing and says why (as
    /// [`into_result`](Self::into_result)). Sync the devices afterwards.
    ///
    /// ```
    /// use std::cell::RefCell;
    /// use mdu_verity::dmverity::{self, fec::{self, FecParams, Shape}};
    ///
    /// let p = dmverity::Params::default();
    /// let clean: Vec<u8> = (0..20 * 4096).map(|i| (i * 31 % 253) as u8).collect();
    /// let mut hash = std::io::Cursor::new(Vec::new());
    /// let root = dmverity::format(&clean[..], &mut hash, &p)?.root_hash();
    /// let hash = hash.into_inner();
    /// let mut input = clean.clone();
    /// input.extend_from_slice(&hash[4096..]); // the tree, not the superblock
    /// let fec = FecParams::default();
    /// let parity = fec::encode_bytes(&input, 4096, fec.roots)?;
    ///
    /// let mut bad = clean.clone();
    /// bad[7 * 4096 + 100] ^= 0x42;
    /// let out = fec::verify_with_fec(&bad, &hash, &parity, Shape::Params(&p), &root, &fec)?;
    /// assert!(out.verified() && out.first_failure().is_some());
    /// let (data_dev, hash_dev) = (RefCell::new(bad), RefCell::new(hash.clone()));
    /// out.repair(&data_dev, &hash_dev)?;
    /// assert!(data_dev.into_inner() == clean);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn repair<D, H>(self, data: &D, hash: &H) -> Result<Corrections, Error>
    where
        D: WriteAt + ?Sized,
        H: WriteAt + ?Sized,
    {
        let out = self.into_result()?;
        let c = out.decoded.corrections;
        c.write_to(Area::Data, data)?;
        c.write_to(Area::Hash, hash)?;
        Ok(c)
    }
}

/// Whether FEC may make a failed verification succeed: every failure found
/// in the devices, not an I/O error.
fn fec_may_help(e: &Error) -> bool {
    !matches!(
        e,
        Error::Io(_) | Error::UnexpectedEof { .. } | Error::DataLengthUnknown
    )
}

/// Verifies the data and hash devices against `root` (shorthand of
/// [`Verifier::verify_with_fec`]) and, where that
/// fails, corrects them with the FEC parity on `fec` (laid out as `fec_params`
/// says) and verifies again with the corrections in view; nothing is
/// written (see [`FecOutcome::repair`]). The three devices are untrusted:
/// damage is an outcome that does not verify, never a panic. Errors are
/// I/O errors of the first verification, bad parameters, a FEC device too
/// short for its layout ([`Error::FecParityShort`]) and read errors while
/// decoding ([`Error::FecIo`]).
///
/// The FEC input is [`Layout::for_verity`]'s: every whole block of the data
/// device unless the tree pins a count, then the hash device from the
/// tree to its end (or to the parity where `fec_params` puts the parity on
/// the hash device).
///
/// ```
/// use mdu_verity::dmverity::{self, fec::{self, Area, FecParams, Shape}, Pins};
///
/// let p = dmverity::Params::default();
/// let clean: Vec<u8> = (0..30 * 4096).map(|i| (i * 7 + 3) as u8).collect();
/// let mut hash = std::io::Cursor::new(Vec::new());
/// let root = dmverity::format(&clean[..], &mut hash, &p)?.root_hash();
/// let hash = hash.into_inner();
/// let mut input = clean.clone();
/// input.extend_from_slice(&hash[4096..]);
/// let fec = FecParams { roots: 4, ..FecParams::default() };
/// let parity = fec::encode_bytes(&input, 4096, fec.roots)?;
///
/// let mut bad = clean.clone();
/// bad[3 * 4096] ^= 1;
/// let pins = Pins::default();
/// let shape = Shape::Superblock { hash_offset: 0, pins: &pins };
/// let out = fec::verify_with_fec(&bad, &hash, &parity, shape, &root, &fec)?;
/// assert!(out.verified());
/// assert!(matches!(out.first_failure(), Some(mdu_verity::Error::CorruptDataBlock { block: 3 })));
/// assert_eq!((out.corrections().bytes(), out.corrections().len(Area::Data)), (1, 1));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn verify_with_fec<D, H, F>(
    data: &D,
    hash: &H,
    fec: &F,
    shape: Shape<'_>,
    root: &Digest,
    fec_params: &FecParams,
) -> Result<FecOutcome, Error>
where
    D: ReadAt + Sync + ?Sized,
    H: ReadAt + ?Sized,
    F: ReadAt + ?Sized,
{
    Verifier::with_shape(shape, root).verify_with_fec(data, hash, fec, fec_params)
}

/// [`verify_with_fec`] after a first verification the caller ran itself:
/// `first` is what [`verify`](crate::dmverity::verify) (for
/// [`Shape::Params`]) or
/// [`verify_with_superblock`](crate::dmverity::verify_with_superblock)
/// (for [`Shape::Superblock`]) returned for these devices, this shape and
/// this root, read in any way (a memory-mapped data device, say, which
/// verifies without a copy). Only where it failed are the devices read
/// again, by position, to decode the parity and verify with the
/// corrections; an I/O error of the first verification is returned as it
/// is. A clean image costs one verification, as fast as the caller's.
///
/// ```
/// use mdu_verity::dmverity::{self, fec::{self, FecParams, Shape}};
///
/// let p = dmverity::Params::default();
/// let clean: Vec<u8> = (0..30 * 4096).map(|i| (i * 7 + 3) as u8).collect();
/// let mut hash = std::io::Cursor::new(Vec::new());
/// let root = dmverity::format(&clean[..], &mut hash, &p)?.root_hash();
/// let hash = hash.into_inner();
/// let layout = fec::Layout::for_verity(&p, 30, hash.len() as u64, &FecParams::default())?;
/// let parity = fec::encode_verity(&layout, &clean, &hash)?;
///
/// let mut bad = clean.clone();
/// bad[12 * 4096 + 9] ^= 0x80;
/// // The caller's own verification, from a slice here.
/// let first = dmverity::verify(&bad[..], std::io::Cursor::new(&hash), &p, &root);
/// assert!(first.is_err());
/// let shape = Shape::Params(&p);
/// let out = fec::verify_with_fec_after(first, &bad, &hash, &parity, shape, &root, &FecParams::default())?;
/// assert!(out.verified() && out.corrections().bytes() == 1);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn verify_with_fec_after<D, H, F>(
    first: Result<(), Error>,
    data: &D,
    hash: &H,
    fec: &F,
    shape: Shape<'_>,
    root: &Digest,
    fec_params: &FecParams,
) -> Result<FecOutcome, Error>
where
    D: ReadAt + Sync + ?Sized,
    H: ReadAt + ?Sized,
    F: ReadAt + ?Sized,
{
    Verifier::with_shape(shape, root).correct_after(first, data, hash, fec, fec_params)
}

/// The work of [`Verifier::correct_after`]: the FEC pass after a first
/// verification.
pub(crate) fn correct_after<D, H, F>(
    first: Result<(), Error>,
    data: &D,
    hash: &H,
    fec: &F,
    shape: Shape<'_>,
    root: &Digest,
    fec_params: &FecParams,
) -> Result<FecOutcome, Error>
where
    D: ReadAt + Sync + ?Sized,
    H: ReadAt + ?Sized,
    F: ReadAt + ?Sized,
{
    let first = match first {
        Ok(()) => None,
        Err(e) if !fec_may_help(&e) => return Err(e),
        Err(e) => Some(e),
    };
    let params = match shape {
        Shape::Params(p) => p.clone(),
        Shape::Superblock { hash_offset, .. } => {
            match Superblock::read_from(AtCursor::new(hash), hash_offset) {
                Ok(sb) => sb.params(hash_offset),
                // The superblock is not protected by FEC: nothing to do.
                Err(_) if first.is_some() => {
                    return Ok(FecOutcome {
                        params: Params::default(),
                        layout: None,
                        first,
                        decoded: Default::default(),
                        after: None,
                    });
                }
                Err(e) => return Err(e),
            }
        }
    };
    let mut out = FecOutcome {
        params,
        layout: None,
        first,
        decoded: Default::default(),
        after: None,
    };
    if out.first.is_none() {
        return Ok(out);
    }
    let p = &out.params;
    let data_blocks = match p.data_blocks {
        Some(n) => n,
        None => data.size()? / u64::from(p.data_block_size.max(1)),
    };
    let layout = Layout::for_verity(p, data_blocks, hash.size()?, fec_params)?;
    out.layout = Some(layout);
    out.decoded = correct(&layout, data, hash, fec)?;
    let c = &out.decoded.corrections;
    if out.decoded.uncorrectable.is_empty() && !c.is_empty() {
        let (d, h) = (c.overlay(Area::Data, data), c.overlay(Area::Hash, hash));
        out.after = Verifier::with_shape(shape, root)
            .verify_with_fec_first(&d, &h)
            .err();
    }
    Ok(out)
}
