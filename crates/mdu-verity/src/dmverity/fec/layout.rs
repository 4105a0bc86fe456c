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
