//! Where the blocks of one FEC input go: rounds, codewords and the size of
//! the parity area.

use super::{MAX_ROOTS, MIN_ROOTS};
use crate::Error;

/// Where the blocks of one FEC input go: block count, rounds and the size
/// of the parity area.
///
/// ```
/// use mdu_verity::dmverity::fec::Layout;
///
/// // 256 data blocks and 3 hash blocks of 4 KiB, two parity bytes.
/// let l = Layout::new(259, 4096, 2)?;
/// assert_eq!(l.rounds(), 2);
/// assert_eq!(l.parity_len(), 16384);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub(super) blocks: u64,
    pub(super) block_size: u32,
    pub(super) roots: u8,
    pub(super) rounds: u64,
}

impl Layout {
    /// The layout of `blocks` blocks of `block_size` bytes (a power of two,
    /// 512..=65536) with `roots` parity bytes per codeword (2..=24).
    ///
    /// ```
    /// use mdu_verity::{dmverity::fec::Layout, Error};
    /// assert!(matches!(Layout::new(10, 4096, 25), Err(Error::FecRoots { roots: 25 })));
    /// assert!(matches!(Layout::new(0, 4096, 2), Err(Error::ZeroDataBlocks { .. })));
    /// ```
    pub fn new(blocks: u64, block_size: u32, roots: u8) -> Result<Layout, Error> {
        crate::dmverity::check_block_size("FEC block", block_size)?;
        if !(MIN_ROOTS..=MAX_ROOTS).contains(&roots) {
            return Err(Error::FecRoots { roots });
        }
        if blocks == 0 {
            return Err(Error::ZeroDataBlocks {
                source: "the FEC input",
            });
        }
        let rsn = 255 - u64::from(roots);
        let rounds = blocks.div_ceil(rsn);
        // The parity (and the encoder's state) must be addressable.
        rounds
            .checked_mul(u64::from(block_size) * u64::from(roots))
            .filter(|&len| usize::try_from(len).is_ok())
            .ok_or(Error::TreeTooLarge {
                data_blocks: blocks,
            })?;
        Ok(Layout {
            blocks,
            block_size,
            roots,
            rounds,
        })
    }

    /// Blocks of the protected input `I` (`N`).
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// The block size in bytes.
    pub fn block_size(&self) -> u32 {
        self.block_size
    }

    /// Parity bytes per codeword.
    pub fn roots(&self) -> u8 {
        self.roots
    }

    /// Rounds `R = ceil(N / (255 - roots))`.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Bytes of parity: `R * block_size * roots`.
    pub fn parity_len(&self) -> u64 {
        self.rounds * u64::from(self.block_size) * u64::from(self.roots)
    }

    /// Parity blocks (`veritysetup dump`'s "FEC blocks"): `R * roots`.
    pub fn parity_blocks(&self) -> u64 {
        self.rounds * u64::from(self.roots)
    }
}

impl Layout {
    /// The input blocks of round `round`, message position by position:
    /// block `i * R + round` for the positions inside the input.
    ///
    /// ```
    /// use mdu_verity::dmverity::fec::Layout;
    /// let l = Layout::new(259, 4096, 2)?; // R = 2
    /// let r1: Vec<u64> = l.round_blocks(1).collect();
    /// assert_eq!((r1[0], r1[1], r1.len()), (1, 3, 129));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn round_blocks(&self, round: u64) -> impl Iterator<Item = u64> + use<> {
        let (rounds, blocks) = (self.rounds, self.blocks);
        let rsn = 255 - u64::from(self.roots);
        (0..rsn)
            .map(move |i| i * rounds + round)
            .take_while(move |&k| k < blocks)
    }
}

/// The FEC options of a dm-verity image, as `veritysetup` takes them:
/// `--fec-roots`, `--fec-offset`, and whether `--fec-device` names the hash
/// device itself (the parity then follows the tree, and the protected hash
/// area ends where it starts). They are stored nowhere on disk: give them
/// again to verify, repair or describe an image.
///
/// ```
/// use mdu_verity::dmverity::fec::FecParams;
/// let f = FecParams::default();
/// assert_eq!((f.roots, f.offset, f.in_hash_device), (2, 0, false));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FecParams {
    /// Parity bytes per codeword, 2..=24 (`--fec-roots`, default 2).
    pub roots: u8,
    /// Byte offset of the parity on its device, a multiple of 512
    /// (`--fec-offset`).
    pub offset: u64,
    /// The parity lies on the hash device (`--fec-device` is the hash
    /// device).
    pub in_hash_device: bool,
}

impl Default for FecParams {
    fn default() -> Self {
        FecParams {
            roots: 2,
            offset: 0,
            in_hash_device: false,
        }
    }
}

impl FecParams {
    /// Checks the number of roots and the offset.
    ///
    /// ```
    /// use mdu_verity::{dmverity::fec::FecParams, Error};
    /// let f = FecParams { offset: 100, ..FecParams::default() };
    /// assert!(matches!(f.validate(), Err(Error::FecOffset { offset: 100 })));
    /// let f = FecParams { roots: 1, ..FecParams::default() };
    /// assert!(matches!(f.validate(), Err(Error::FecRoots { roots: 1 })));
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        if !(MIN_ROOTS..=MAX_ROOTS).contains(&self.roots) {
            return Err(Error::FecRoots { roots: self.roots });
        }
        if !self.offset.is_multiple_of(512) {
            return Err(Error::FecOffset {
                offset: self.offset,
            });
        }
        Ok(())
    }

    /// Checks the number of roots and the offset ([`validate`](Self::validate)),
    /// then that `params` can have FEC: a valid data block size, equal to
    /// the hash block size. What [`Layout::for_verity`] checks first, for a
    /// caller that refuses bad options before it reads anything.
    ///
    /// ```
    /// use mdu_verity::{dmverity::{fec::FecParams, Params}, Error};
    /// let f = FecParams::default();
    /// assert!(f.validate_for(&Params::default()).is_ok());
    /// let p = Params { hash_block_size: 512, ..Params::default() };
    /// let err = f.validate_for(&p).unwrap_err();
    /// assert!(matches!(err, Error::FecBlockSizes { data: 4096, hash: 512 }));
    /// ```
    pub fn validate_for(&self, params: &crate::dmverity::Params) -> Result<(), Error> {
        self.validate()?;
        crate::dmverity::check_block_size("data block", params.data_block_size)?;
        if params.data_block_size != params.hash_block_size {
            return Err(Error::FecBlockSizes {
                data: params.data_block_size,
                hash: params.hash_block_size,
            });
        }
        Ok(())
    }
}

impl FecParams {
    /// Checks where the parity goes on a hash device of `device_len` bytes
    /// whose tree ends at byte `tree_end`, for parity that shares the hash
    /// device: past the tree, and not past the device's end (as
    /// `veritysetup` requires). Parity on a device of its own may go
    /// anywhere.
    ///
    /// ```
    /// use mdu_verity::{dmverity::fec::FecParams, Error};
    /// let f = FecParams { offset: 8192, in_hash_device: true, ..FecParams::default() };
    /// assert!(f.check_placement(8192, 8192).is_ok());
    /// assert!(matches!(f.check_placement(12288, 16384), Err(Error::FecOffsetInTree { .. })));
    /// assert!(matches!(f.check_placement(4096, 4096), Err(Error::FecOffsetPastEnd { .. })));
    /// ```
    pub fn check_placement(&self, tree_end: u64, device_len: u64) -> Result<(), Error> {
        if !self.in_hash_device {
            return Ok(());
        }
        if self.offset < tree_end {
            return Err(Error::FecOffsetInTree {
                offset: self.offset,
                tree_end,
            });
        }
        if self.offset > device_len {
            return Err(Error::FecOffsetPastEnd {
                offset: self.offset,
                device_len,
            });
        }
        Ok(())
    }
}

/// One of the two areas the FEC input is made of.
///
/// ```
/// use mdu_verity::dmverity::fec::Area;
/// assert_ne!(Area::Data, Area::Hash);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Area {
    /// The data device.
    Data,
    /// The hash device.
    Hash,
}

/// The FEC geometry of a dm-verity image, computed once as `veritysetup`
/// computes it: the input `I = D || H` is the `data_blocks` whole blocks
/// of the data device, then the hash device from the tree's first block
/// (never the superblock) to its end, or to the parity where the parity
/// shares the hash device; the parity of round `n` lies at
/// `offset + n * block_size * roots` of the FEC device. Built by
/// [`Layout::for_verity`].
///
/// ```
/// use mdu_verity::dmverity::{self, fec::{Area, FecParams, Layout}};
///
/// // 256 data blocks, a 16 KiB hash device (superblock and 3 tree blocks).
/// let p = dmverity::Params::default();
/// let l = Layout::for_verity(&p, 256, 16384, &FecParams::default())?;
/// assert_eq!((l.hash_start_block(), l.hash_blocks()), (1, 3));
/// assert_eq!(l.layout().blocks(), 259);
/// assert_eq!(l.block(256), Some((Area::Hash, 4096)));
/// assert_eq!(l.parity_offset(1), Some(8192));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerityLayout {
    layout: Layout,
    data_blocks: u64,
    hash_start: u64,
    hash_blocks: u64,
    fec: FecParams,
}

impl Layout {
    /// The FEC layout of a dm-verity image of `data_blocks` data blocks
    /// whose hash device is `hash_device_size` bytes, with the tree where
    /// `params` puts it ([`Params::hash_start_block`](crate::dmverity::Params::hash_start_block))
    /// and the parity where `fec` puts it. Data and hash block sizes must
    /// be equal.
    ///
    /// ```
    /// use mdu_verity::{dmverity::{self, fec::{FecParams, Layout}}, Error};
    ///
    /// let p = dmverity::Params::default();
    /// // The parity in the hash device at 16 KiB: it protects 3 hash blocks,
    /// // whatever the device's size.
    /// let fec = FecParams { offset: 16384, in_hash_device: true, ..FecParams::default() };
    /// let l = Layout::for_verity(&p, 256, 1 << 30, &fec)?;
    /// assert_eq!((l.hash_blocks(), l.layout().parity_len()), (3, 16384));
    ///
    /// let p = dmverity::Params { hash_block_size: 512, ..p };
    /// let err = Layout::for_verity(&p, 256, 16384, &FecParams::default()).unwrap_err();
    /// assert!(matches!(err, Error::FecBlockSizes { data: 4096, hash: 512 }));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn for_verity(
        params: &crate::dmverity::Params,
        data_blocks: u64,
        hash_device_size: u64,
        fec: &FecParams,
    ) -> Result<VerityLayout, Error> {
        fec.validate_for(params)?;
        let bs = u64::from(params.data_block_size);
        let hash_start = params.hash_start_block();
        let end = if fec.in_hash_device {
            fec.offset / bs
        } else {
            hash_device_size / bs
        };
        let hash_blocks = end.saturating_sub(hash_start);
        let too_large = Error::TreeTooLarge { data_blocks };
        // Every block of I must have a byte offset on its device.
        data_blocks.checked_mul(bs).ok_or(too_large)?;
        let blocks = data_blocks
            .checked_add(hash_blocks)
            .ok_or(Error::TreeTooLarge { data_blocks })?;
        let layout = Layout::new(blocks, params.data_block_size, fec.roots)?;
        fec.offset
            .checked_add(layout.parity_len())
            .ok_or_else(|| Error::FecInput {
                reason: format!(
                    "{} parity bytes at offset {} end past the largest offset",
                    layout.parity_len(),
                    fec.offset
                ),
            })?;
        Ok(VerityLayout {
            layout,
            data_blocks,
            hash_start,
            hash_blocks,
            fec: *fec,
        })
    }
}

impl VerityLayout {
    /// The interleave of the input (blocks, rounds, parity size).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The FEC options this layout was computed for.
    pub fn fec(&self) -> &FecParams {
        &self.fec
    }

    /// Data blocks at the start of the input.
    pub fn data_blocks(&self) -> u64 {
        self.data_blocks
    }

    /// The hash block where the protected hash area starts (the tree's
    /// first block).
    pub fn hash_start_block(&self) -> u64 {
        self.hash_start
    }

    /// Hash blocks in the input, after the data blocks.
    pub fn hash_blocks(&self) -> u64 {
        self.hash_blocks
    }

    /// Where block `k` of the input lies: its area and its byte offset on
    /// that device; `None` past the input.
    ///
    /// ```
    /// use mdu_verity::dmverity::{self, fec::{Area, FecParams, Layout}};
    /// let p = dmverity::Params { superblock: false, ..Default::default() };
    /// let l = Layout::for_verity(&p, 10, 3 * 4096, &FecParams::default())?;
    /// assert_eq!(l.block(9), Some((Area::Data, 9 * 4096)));
    /// assert_eq!(l.block(10), Some((Area::Hash, 0)));
    /// assert_eq!(l.block(13), None);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn block(&self, k: u64) -> Option<(Area, u64)> {
        let bs = u64::from(self.layout.block_size);
        if k < self.data_blocks {
            Some((Area::Data, k * bs))
        } else if k < self.layout.blocks {
            // Below the end of the hash area, itself below a `u64` offset.
            Some((Area::Hash, (self.hash_start + (k - self.data_blocks)) * bs))
        } else {
            None
        }
    }

    /// Bytes of parity per round: `block_size * roots`.
    pub fn round_parity_len(&self) -> u64 {
        u64::from(self.layout.block_size) * u64::from(self.layout.roots)
    }

    /// The byte offset of round `round`'s parity on the FEC device;
    /// `None` past the last round.
    pub fn parity_offset(&self, round: u64) -> Option<u64> {
        // Checked in `for_verity`: offset + parity_len fits.
        (round < self.layout.rounds).then(|| self.fec.offset + round * self.round_parity_len())
    }
}
