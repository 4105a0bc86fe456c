//! Verification against a trusted root hash (see the trust model in the
//! module documentation).

use std::io::{Read, Seek, SeekFrom};

use super::{Params, Pins, Verifier};
use crate::hash::BlockHasher;
use crate::merkle;
use crate::source::fill;
use crate::{Digest, Error, Source};

/// Verify every data block of `data` against the hash area on `hash` and
/// `root_hash` (shorthand of [`Verifier::new`] and
/// [`Verifier::verify`]); the first bad block is named in the error
/// ([`Error::CorruptHashBlock`], [`Error::CorruptDataBlock`] or
/// [`Error::MissingDataBlock`]).
///
/// `data` is any [`Source`]: a byte slice or a [`Cursor`](std::io::Cursor)
/// over one, a file or block device, windows of a mapped image, a reader.
/// `params` are the caller's and are trusted: the superblock on `hash`, if
/// any, is not read (see [`verify_with_superblock`] and the
/// [trust model](super#trust-model)). The number of data blocks is
/// `params.data_blocks`, or every whole block of `data`; zero blocks is an
/// error, never success.
///
/// Hash blocks are checked level by level from the root down, then the data
/// blocks in order; every level and every piece of the data is hashed two
/// blocks at a time on all threads of the rayon pool (with the `rayon`
/// feature), and the first bad block (the lowest index) is the one named,
/// whatever the number of threads. Memory: the hash blocks of two adjacent
/// levels (at most the tree, 1/128 of the data with SHA-256 and 4 KiB
/// blocks), the read ring of a reader source (three buffers of
/// [`READ_BUF_LEN`](crate::READ_BUF_LEN) bytes) and 64 KiB of staging for
/// chunks; nothing else grows with the data.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity, Error};
///
/// let mut data = vec![3u8; 64 * 4096];
/// let p = dmverity::Params::default();
/// let mut hash = Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
/// dmverity::verify(Cursor::new(&data), &mut hash, &p, &root)?;
/// data[40 * 4096 + 17] ^= 1;
/// let err = dmverity::verify(Cursor::new(&data), &mut hash, &p, &root).unwrap_err();
/// assert!(matches!(err, Error::CorruptDataBlock { block: 40 }));
/// let err = dmverity::verify(Cursor::new(&[]), &mut hash, &p, &root).unwrap_err();
/// assert!(matches!(err, Error::NoDataBlocks { .. }));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn verify<'a, H: Read + Seek>(
    data: impl Into<Source<'a>>,
    hash: H,
    params: &Params,
    root_hash: &Digest,
) -> Result<(), Error> {
    Verifier::new(params, root_hash)
        .verify(data, hash)
        .map(drop)
}

/// Read the superblock at `hash_offset` of `hash`, check it against the
/// caller's `pins`, and verify every data block it describes (shorthand of
/// [`Verifier::superblock`] and [`Verifier::verify`]); returns the
/// parameters that were used (so the caller sees the shape the superblock
/// chose), like `veritysetup verify`.
///
/// The superblock is untrusted: a malformed one is an error, a pinned
/// value it contradicts is [`Error::PinMismatch`], and the parameters it
/// does not contradict are taken from it. Pin at least `data_blocks` to
/// know that the data is the data the root hash was made for (see the
/// [trust model](super#trust-model)).
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity::{self, Pins}, Error};
///
/// let data = vec![5u8; 16 * 4096];
/// let mut hash = Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &Default::default())?.root_hash();
/// let pins = Pins { data_blocks: Some(16), ..Pins::default() };
/// let used = dmverity::verify_with_superblock(Cursor::new(&data), &mut hash, 0, &pins, &root)?;
/// assert_eq!(used.data_blocks, Some(16));
///
/// // The hash device claims one data block: the pin refuses it.
/// hash.get_mut()[72..80].copy_from_slice(&1u64.to_le_bytes());
/// let err = dmverity::verify_with_superblock(Cursor::new(&data), &mut hash, 0, &pins, &root);
/// assert!(matches!(err, Err(Error::PinMismatch { field: "data_blocks", .. })));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn verify_with_superblock<'a, H: Read + Seek>(
    data: impl Into<Source<'a>>,
    hash: H,
    hash_offset: u64,
    pins: &Pins,
    root_hash: &Digest,
) -> Result<Params, Error> {
    Verifier::superblock(hash_offset, pins, root_hash).verify(data, hash)
}

/// The number of data blocks: pinned, or every whole block of `data`.
pub(super) fn data_blocks(data: &mut Source<'_>, params: &Params) -> Result<u64, Error> {
    let n = match params.data_blocks {
        Some(n) => n,
        None => {
            let data_bytes = data.len()?.ok_or(Error::DataLengthUnknown)?;
            let n = data_bytes / u64::from(params.data_block_size);
            if n == 0 {
                return Err(Error::NoDataBlocks {
                    data_bytes,
                    data_block_size: params.data_block_size,
                });
            }
            n
        }
    };
    if n == 0 {
        return Err(Error::ZeroDataBlocks {
            source: "Params::data_blocks",
        });
    }
    Ok(n)
}

/// Verify data blocks `start .. start + count` (and the hash blocks on
/// their paths to the root), naming the first bad block in the error
/// (shorthand of [`Verifier::new`] and [`Verifier::verify_range`]).
///
/// The device has `params.data_blocks` blocks, or every whole block of
/// `data` when that is `None`. An empty range is [`Error::ZeroDataBlocks`]:
/// it would check nothing.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity, Error};
///
/// let mut data = vec![0u8; 300 * 512];
/// let p = dmverity::Params { data_block_size: 512, hash_block_size: 512, ..Default::default() };
/// let mut hash = Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
/// data[0] = 1;
/// // Blocks 1..300 are still good; block 0 is not.
/// dmverity::verify_range(Cursor::new(&data), &mut hash, &p, &root, 1, 299)?;
/// let err = dmverity::verify_range(Cursor::new(&data), &mut hash, &p, &root, 0, 1).unwrap_err();
/// assert!(matches!(err, Error::CorruptDataBlock { block: 0 }));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn verify_range<'a, H: Read + Seek>(
    data: impl Into<Source<'a>>,
    hash: H,
    params: &Params,
    root_hash: &Digest,
    start: u64,
    count: u64,
) -> Result<(), Error> {
    Verifier::new(params, root_hash)
        .verify_range(data, hash, start, count)
        .map(drop)
}

/// The verification of data blocks `start .. start + count` under a tree
/// of `params`: the work of every [`Verifier`] entry.
pub(super) fn range<H: Read + Seek>(
    mut data: Source<'_>,
    mut hash: H,
    params: &Params,
    root_hash: &Digest,
    start: u64,
    count: u64,
) -> Result<(), Error> {
    params.validate()?;
    let dl = params.hash.digest_len();
    if root_hash.as_bytes().len() != dl {
        return Err(Error::RootHash {
            reason: format!(
                "{} bytes given, {} needs {dl}",
                root_hash.as_bytes().len(),
                params.hash
            ),
        });
    }
    if count == 0 {
        return Err(Error::ZeroDataBlocks {
            source: "the verify range",
        });
    }
    let n = data_blocks(&mut data, params)?;
    let end = start.checked_add(count).filter(|&e| e <= n);
    let Some(end) = end else {
        return Err(Error::BlockRange {
            start,
            count,
            data_blocks: n,
        });
    };
    let hasher = params.hasher()?;
    let layout = Layout::new(params, n)?;

    // The whole tree must be on the hash device; checking this first also
    // bounds every buffer below by the device size.
    let available = hash.seek(SeekFrom::End(0))?;
    if layout.tree_end > available {
        return Err(Error::HashAreaTooSmall {
            needed: layout.tree_end,
            available,
        });
    }
    let level0 = verify_levels(&mut hash, params, &hasher, &layout, root_hash, start, end)?;
    verify_data(data, params, &hasher, &level0, n, start, end)
}

/// Where the levels of a tree over `data_blocks` blocks lie on the hash
/// device. Every count comes from untrusted input (a superblock, a device
/// size), so every position is computed with checked arithmetic.
pub(super) struct Layout {
    /// Data blocks under the tree.
    pub(super) data_blocks: u64,
    /// Blocks in each level, level 0 (just above the data) first.
    pub(super) levels: Vec<u64>,
    /// Absolute hash-device block where each level starts.
    pub(super) level_start: Vec<u64>,
    /// Byte just past the tree on the hash device (0 without levels).
    pub(super) tree_end: u64,
}

impl Layout {
    pub(super) fn new(params: &Params, data_blocks: u64) -> Result<Layout, Error> {
        let too_large = || Error::TreeTooLarge { data_blocks };
        // Every data byte offset must fit, not only the tree's.
        data_blocks
            .checked_mul(u64::from(params.data_block_size))
            .ok_or_else(too_large)?;
        let levels = merkle::level_blocks(data_blocks, params.per_block());
        let mut level_start = vec![0u64; levels.len()];
        let mut pos = params.hash_start_block();
        for i in (0..levels.len()).rev() {
            level_start[i] = pos;
            pos = pos.checked_add(levels[i]).ok_or_else(too_large)?;
        }
        let tree_end = if levels.is_empty() {
            0
        } else {
            pos.checked_mul(u64::from(params.hash_block_size))
                .ok_or_else(too_large)?
        };
        Ok(Layout {
            data_blocks,
            levels,
            level_start,
            tree_end,
        })
    }

    /// The blocks of each level that cover data blocks `start..end`, root
    /// level first: `(level, first, last)`.
    pub(super) fn covering(&self, per_block: u64, start: u64, end: u64) -> Vec<(usize, u64, u64)> {
        // Data blocks covered by one block of the level; saturating is
        // exact here: the top level's span only needs to exceed the number
        // of data blocks.
        let mut span = 1u64;
        for _ in 0..self.levels.len() {
            span = span.saturating_mul(per_block);
        }
        (0..self.levels.len())
            .rev()
            .map(|i| {
                span /= per_block;
                (i, start / span / per_block, (end - 1) / span / per_block)
            })
            .collect()
    }

    /// Checks that block `j` of level `i`, if it is the level's last,
    /// holds zeros after its last entry (as `format` writes it and as
    /// `veritysetup verify` checks): otherwise the tree is one over more
    /// blocks than the device has, and a prefix of its data would verify.
    pub(super) fn check_spare(
        &self,
        params: &Params,
        i: usize,
        j: u64,
        block: &[u8],
    ) -> Result<(), Error> {
        if j + 1 != self.levels[i] {
            return Ok(());
        }
        let below = if i == 0 {
            self.data_blocks
        } else {
            self.levels[i - 1]
        };
        let used = ((below - j * params.per_block()) as usize) * params.packing().slot;
        match block[used..].iter().position(|&b| b != 0) {
            Some(at) => Err(Error::HashBlockSpare {
                hash_block: self.level_start[i] + j,
                offset: used + at,
            }),
            None => Ok(()),
        }
    }
}

/// Hash blocks of one level held in memory: blocks `first..` of the level,
/// whose entries are the expected digests of the level below (or of the
/// data). The root hash is a pseudo-level of one entry.
pub(super) struct Parents {
    pub(super) bytes: Vec<u8>,
    /// Index (within its level) of the first block in `bytes`.
    pub(super) first: u64,
    /// Bytes per block (the hash block size; the digest length for the root).
    pub(super) block_len: usize,
    pub(super) per_block: u64,
    /// Bytes from one entry to the next.
    pub(super) slot: usize,
    pub(super) dl: usize,
}

impl Parents {
    /// The root hash as a pseudo-level of one entry.
    pub(super) fn root(root: &[u8]) -> Parents {
        Parents {
            bytes: root.to_vec(),
            first: 0,
            block_len: root.len(),
            per_block: 1,
            slot: root.len(),
            dl: root.len(),
        }
    }

    /// Blocks `first..` of a level, as `params` pack them.
    pub(super) fn level(bytes: Vec<u8>, first: u64, params: &Params) -> Parents {
        Parents {
            bytes,
            first,
            block_len: params.hash_block_size as usize,
            per_block: params.per_block(),
            slot: params.packing().slot,
            dl: params.hash.digest_len(),
        }
    }

    /// The expected digest of child `c` (which must lie under these blocks).
    pub(super) fn entry(&self, c: u64) -> &[u8] {
        let at = (c / self.per_block - self.first) as usize * self.block_len
            + (c % self.per_block) as usize * self.slot;
        &self.bytes[at..at + self.dl]
    }
}

/// Read and check the hash blocks covering data blocks `start..end`, root
/// level first; returns the level-0 blocks (the data blocks' digests).
fn verify_levels<H: Read + Seek>(
    hash: &mut H,
    params: &Params,
    hasher: &BlockHasher,
    layout: &Layout,
    root_hash: &Digest,
    start: u64,
    end: u64,
) -> Result<Parents, Error> {
    let hbs = params.hash_block_size as usize;
    let mut parents = Parents::root(root_hash.as_bytes());
    for (i, lo, hi) in layout.covering(params.per_block(), start, end) {
        let nblocks = (hi - lo + 1) as usize;
        let mut blocks = vec![0u8; nblocks * hbs];
        // In bounds: lo..=hi lies inside level i, which ends before tree_end.
        let at = (layout.level_start[i] + lo) * hbs as u64;
        hash.seek(SeekFrom::Start(at))?;
        let got = fill(hash, &mut blocks)?;
        if got < blocks.len() {
            return Err(Error::HashAreaTooSmall {
                needed: at + blocks.len() as u64,
                available: at + got as u64,
            });
        }
        let expected = |j: usize| parents.entry(lo + j as u64);
        if let Some(j) = hasher.first_mismatch(&blocks, hbs, &expected) {
            let index = lo + j as u64;
            return Err(Error::CorruptHashBlock {
                level: i,
                index,
                hash_block: layout.level_start[i] + index,
            });
        }
        layout.check_spare(params, i, hi, &blocks[(nblocks - 1) * hbs..])?;
        parents = Parents::level(blocks, lo, params);
    }
    Ok(parents)
}

/// Hash data blocks `start..end` of `data` in order and compare them with
/// their entries in `level0`; the first bad block is the error, and a
/// source that ends early is [`Error::MissingDataBlock`] for the first block
/// it lacks, after every whole block before it was compared.
fn verify_data(
    data: Source<'_>,
    params: &Params,
    hasher: &BlockHasher,
    level0: &Parents,
    n: u64,
    start: u64,
    end: u64,
) -> Result<(), Error> {
    let dbs = params.data_block_size as usize;
    let dbs64 = u64::from(params.data_block_size);
    // Offsets fit: n * dbs was checked by the layout.
    let mut next = start;
    let fed = data.feed(start * dbs64, (end - start) * dbs64, dbs, &mut |run| {
        let expected = |j: usize| level0.entry(next + j as u64);
        if let Some(j) = hasher.first_mismatch(run, dbs, &expected) {
            return Err(Error::CorruptDataBlock {
                block: next + j as u64,
            });
        }
        next += (run.len() / dbs) as u64;
        Ok(())
    })?;
    debug_assert_eq!(next - start, fed.bytes / dbs64);
    if next < end {
        return Err(Error::MissingDataBlock {
            block: next,
            data_blocks: n,
        });
    }
    Ok(())
}
