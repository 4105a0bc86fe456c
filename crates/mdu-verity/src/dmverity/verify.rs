//! Verification against a trusted root hash (see the trust model in the
//! module documentation).

use std::io::{Read, Seek, SeekFrom};

use super::{MAX_HASH_OFFSET, Params, Pins, Superblock};
use crate::merkle::{self, fill};
use crate::{Digest, Error, sha256};

/// Verify every data block of `data` against the hash area on `hash` and
/// `root_hash`; the first bad block is named in the error
/// ([`Error::CorruptHashBlock`], [`Error::CorruptDataBlock`] or
/// [`Error::MissingDataBlock`]).
///
/// `params` are the caller's and are trusted: the superblock on `hash`, if
/// any, is not read (see [`verify_with_superblock`] and the
/// [trust model](super#trust-model)). The number of data blocks is
/// `params.data_blocks`, or every whole block of `data`; zero blocks is an
/// error, never success. Hash blocks are checked from the root down, then
/// the data blocks in order, hashing two blocks at a time.
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
pub fn verify<D: Read + Seek, H: Read + Seek>(
    mut data: D,
    hash: H,
    params: &Params,
    root_hash: &Digest,
) -> Result<(), Error> {
    params.validate()?;
    let n = data_blocks(&mut data, params)?;
    verify_range(data, hash, params, root_hash, 0, n)
}

/// Read the superblock at `hash_offset` of `hash`, check it against the
/// caller's `pins`, and verify every data block it describes; returns the
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
pub fn verify_with_superblock<D: Read + Seek, H: Read + Seek>(
    data: D,
    mut hash: H,
    hash_offset: u64,
    pins: &Pins,
    root_hash: &Digest,
) -> Result<Params, Error> {
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
    let sb = Superblock::read_from(&mut hash, hash_offset)?;
    let params = sb.params_pinned(hash_offset, pins)?;
    verify_range(data, hash, &params, root_hash, 0, sb.data_blocks)?;
    Ok(params)
}

/// The number of data blocks: pinned, or every whole block of `data`.
fn data_blocks<D: Seek>(data: &mut D, params: &Params) -> Result<u64, Error> {
    let n = match params.data_blocks {
        Some(n) => n,
        None => {
            let data_bytes = data.seek(SeekFrom::End(0))?;
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
/// their paths to the root), naming the first bad block in the error.
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
pub fn verify_range<D: Read + Seek, H: Read + Seek>(
    data: D,
    hash: H,
    params: &Params,
    root_hash: &Digest,
    start: u64,
    count: u64,
) -> Result<(), Error> {
    verify_range_with(
        data,
        hash,
        params,
        root_hash,
        start,
        count,
        sha256::State::new(),
    )
}

/// Where the levels of a tree over `data_blocks` blocks lie on the hash
/// device. Every count comes from untrusted input (a superblock, a device
/// size), so every position is computed with checked arithmetic.
struct Layout {
    /// Blocks in each level, level 0 (just above the data) first.
    levels: Vec<u64>,
    /// Absolute hash-device block where each level starts.
    level_start: Vec<u64>,
    /// Byte just past the tree on the hash device (0 without levels).
    tree_end: u64,
}

impl Layout {
    fn new(params: &Params, data_blocks: u64) -> Result<Layout, Error> {
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
            levels,
            level_start,
            tree_end,
        })
    }
}

/// As [`verify_range`], with SHA-256 on the given fresh state's backend.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity, sha256::{Backend, State}};
/// let p = dmverity::Params::default();
/// let data = vec![0u8; 4 * 4096];
/// let mut hash = Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
/// let g = State::with_backend(Backend::Generic).unwrap();
/// dmverity::verify_range_with(Cursor::new(&data), &mut hash, &p, &root, 0, 4, g)?;
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn verify_range_with<D: Read + Seek, H: Read + Seek>(
    mut data: D,
    mut hash: H,
    params: &Params,
    root_hash: &Digest,
    start: u64,
    count: u64,
    fresh: sha256::State,
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
    let dbs = params.data_block_size as usize;
    let hbs = params.hash_block_size as usize;
    let n = data_blocks(&mut data, params)?;
    let end = start.checked_add(count).filter(|&e| e <= n);
    let Some(end) = end else {
        return Err(Error::BlockRange {
            start,
            count,
            data_blocks: n,
        });
    };
    let hasher = params.hasher(fresh);
    let per_block = params.per_block();
    let Layout {
        levels,
        level_start,
        tree_end,
    } = Layout::new(params, n)?;

    // The whole tree must be on the hash device; checking this first also
    // bounds every buffer below by the device size.
    let available = hash.seek(SeekFrom::End(0))?;
    if tree_end > available {
        return Err(Error::HashAreaTooSmall {
            needed: tree_end,
            available,
        });
    }

    // `expected` holds the digests of the blocks `lo..=hi` of the level being
    // checked (starting with the root hash for the top block), `base` the
    // index whose digest sits at offset 0 of `expected`.
    let mut expected = root_hash.as_bytes().to_vec();
    let mut base = 0u64;
    // Data blocks covered by one entry of `expected`; saturating is exact
    // here: the top level's span only needs to exceed `n`.
    let mut span = 1u64;
    for _ in 0..levels.len() {
        span = span.saturating_mul(per_block);
    }
    for i in (0..levels.len()).rev() {
        // Blocks of level i covering the range; each covers `span` data blocks.
        let lo = start / span;
        let hi = (end - 1) / span;
        let nblocks = (hi - lo + 1) as usize;
        let mut blocks = vec![0u8; nblocks * hbs];
        // In bounds: lo..=hi lies inside level i, which ends before tree_end.
        let at = (level_start[i] + lo) * hbs as u64;
        hash.seek(SeekFrom::Start(at))?;
        let got = fill(&mut hash, &mut blocks)?;
        if got < blocks.len() {
            return Err(Error::HashAreaTooSmall {
                needed: at + blocks.len() as u64,
                available: at + got as u64,
            });
        }
        let mut digests = vec![0u8; nblocks * dl];
        hasher.hash_blocks_par(&blocks, hbs, &mut digests);
        for j in 0..nblocks {
            let idx = lo + j as u64;
            let off = ((idx - base) as usize) * dl;
            if digests[j * dl..(j + 1) * dl] != expected[off..off + dl] {
                return Err(Error::CorruptHashBlock {
                    level: i,
                    index: idx,
                    hash_block: level_start[i] + idx,
                });
            }
        }
        // The last block of a level holds the digests of the last blocks
        // below it and zeros after them (as `format` writes it and as
        // `veritysetup verify` checks): otherwise the tree is one over more
        // blocks than `n`, and a prefix of its data would verify.
        if hi + 1 == levels[i] {
            let below = if i == 0 { n } else { levels[i - 1] };
            let used = ((below - hi * per_block) as usize) * dl;
            let last = &blocks[(nblocks - 1) * hbs..];
            if let Some(at) = last[used..].iter().position(|&b| b != 0) {
                return Err(Error::HashBlockSpare {
                    hash_block: level_start[i] + hi,
                    offset: used + at,
                });
            }
        }
        // The entries of these blocks are the digests one level down.
        expected = blocks;
        if dl * per_block as usize != hbs {
            // Digest slots fill each block exactly for SHA-256 and SHA-512
            // with power-of-two blocks; keep only the used part otherwise.
            expected = expected
                .chunks_exact(hbs)
                .flat_map(|b| b[..dl * per_block as usize].iter().copied())
                .collect();
        }
        base = lo * per_block;
        span /= per_block;
    }

    // Data blocks, in chunks, two at a time. Offsets fit: n * dbs was
    // checked by the layout.
    let chunk_blocks = ((1usize << 20) / dbs).max(2);
    let mut buf = vec![0u8; chunk_blocks * dbs];
    let mut digests = vec![0u8; chunk_blocks * dl];
    data.seek(SeekFrom::Start(start * dbs as u64))?;
    let mut b = start;
    while b < end {
        let want = ((end - b) as usize).min(chunk_blocks);
        let got = fill(&mut data, &mut buf[..want * dbs])?;
        // Compare the whole blocks that arrived before naming a missing
        // one, so the first bad block is the one reported.
        let k = got / dbs;
        hasher.hash_blocks_par(&buf[..k * dbs], dbs, &mut digests[..k * dl]);
        for j in 0..k {
            let off = ((b + j as u64 - base) as usize) * dl;
            if digests[j * dl..(j + 1) * dl] != expected[off..off + dl] {
                return Err(Error::CorruptDataBlock {
                    block: b + j as u64,
                });
            }
        }
        if k < want {
            return Err(Error::MissingDataBlock {
                block: b + k as u64,
                data_blocks: n,
            });
        }
        b += k as u64;
    }
    Ok(())
}
