//! The Merkle tree builder shared by fs-verity and dm-verity.
//!
//! Data blocks come from a [`Source`](crate::Source) (hashed where they lie
//! when they are in memory, read through a ring of buffers otherwise) and
//! are hashed two at a time; their digests form level 0, which is cut into
//! hash blocks (the last one zero-filled) and hashed, again in pairs, into
//! level 1, and so on until a level fits in one block. The hash of that
//! block is the root hash. Only the tree is kept in memory, and of the data
//! never more than what the source holds at once (one read buffer, or the
//! piece the caller handed over).
//!
//! Both formats store the levels root level first ([`Tree::to_root_first`]).
//!
//! ```
//! use mdu_verity::fsverity;
//!
//! let data = vec![0u8; 100_000];
//! let params = fsverity::Params { block_size: 1024, ..Default::default() };
//! let m = fsverity::measure(&data[..], &params)?;
//! let tree = m.tree();
//! assert_eq!(tree.level_blocks(), vec![4, 1]); // level 0 first
//! assert_eq!(tree.to_root_first().len(), 5 * 1024);
//! # Ok::<(), mdu_verity::Error>(())
//! ```

use std::io::{self, Write};

use crate::Digest;
use crate::hash::BlockHasher;

/// A complete Merkle tree: its levels and its root hash.
///
/// ```
/// use mdu_verity::fsverity;
/// let m = fsverity::measure(&[7u8; 4097][..], &fsverity::Params::default())?;
/// assert_eq!(m.tree().num_levels(), 1);
/// assert_eq!(m.tree().data_blocks(), 2);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Tree {
    /// Level 0 (just above the data) first; each a whole number of blocks.
    levels: Vec<Vec<u8>>,
    root: Digest,
    data_blocks: u64,
    data_bytes: u64,
    hash_block_size: usize,
}

impl Tree {
    /// The root hash.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&b"abc"[..], &fsverity::Params::default())?;
    /// assert!(m.tree().root_hash().to_hex().starts_with("73fbfd76"));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn root_hash(&self) -> Digest {
        self.root
    }

    /// Number of data blocks hashed (a partial last block counts when the
    /// format pads it).
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&[0u8; 5000][..], &fsverity::Params::default())?;
    /// assert_eq!(m.tree().data_blocks(), 2);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn data_blocks(&self) -> u64 {
        self.data_blocks
    }

    /// Number of data bytes read (hashed or, for dm-verity, ignored as a
    /// trailing partial block).
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&[0u8; 5000][..], &fsverity::Params::default())?;
    /// assert_eq!(m.tree().data_bytes(), 5000);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }

    /// Number of levels (0 when there is at most one data block).
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&[0u8; 4096][..], &fsverity::Params::default())?;
    /// assert_eq!(m.tree().num_levels(), 0);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn num_levels(&self) -> usize {
        self.levels.len()
    }

    /// The bytes of level `i` (0 = just above the data), a whole number of
    /// hash blocks, or `None` past the top.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&[0u8; 8192][..], &fsverity::Params::default())?;
    /// assert_eq!(m.tree().level(0).map(<[u8]>::len), Some(4096));
    /// assert!(m.tree().level(1).is_none());
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn level(&self, i: usize) -> Option<&[u8]> {
        self.levels.get(i).map(Vec::as_slice)
    }

    /// Block count of each level, level 0 first.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&[0u8; 8192][..], &fsverity::Params::default())?;
    /// assert_eq!(m.tree().level_blocks(), vec![1]);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn level_blocks(&self) -> Vec<u64> {
        self.levels
            .iter()
            .map(|l| (l.len() / self.hash_block_size) as u64)
            .collect()
    }

    /// Total size of all levels in bytes.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&[0u8; 8192][..], &fsverity::Params::default())?;
    /// assert_eq!(m.tree().size(), 4096);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }

    /// The tree in on-disk order: the root level first, level 0 last.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&[1u8; 1 << 20][..], &fsverity::Params::default())?;
    /// let bytes = m.tree().to_root_first();
    /// assert_eq!(&bytes[..4096], m.tree().level(1).unwrap());
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn to_root_first(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size());
        for l in self.levels.iter().rev() {
            out.extend_from_slice(l);
        }
        out
    }

    /// Write [`to_root_first`](Self::to_root_first) to `w` without building
    /// it in memory.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&[1u8; 1 << 20][..], &fsverity::Params::default())?;
    /// let mut out = Vec::new();
    /// m.tree().write_root_first(&mut out)?;
    /// assert_eq!(out, m.tree().to_root_first());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_root_first<W: Write>(&self, mut w: W) -> io::Result<()> {
        for l in self.levels.iter().rev() {
            w.write_all(l)?;
        }
        Ok(())
    }
}

/// Level 0 of a tree (the digests of the data blocks), built from runs of
/// whole data blocks as a [`Source`](crate::Source) or a streaming hasher
/// hands them over, then the levels above it.
#[derive(Clone)]
pub(crate) struct Level0 {
    hasher: BlockHasher,
    block_size: usize,
    digests: Vec<u8>,
    blocks: u64,
}

impl Level0 {
    pub(crate) fn new(hasher: BlockHasher, block_size: usize) -> Level0 {
        Level0 {
            hasher,
            block_size,
            digests: Vec::new(),
            blocks: 0,
        }
    }

    /// Data blocks taken so far.
    pub(crate) fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Hash a run of whole data blocks (in pairs, on the rayon pool when
    /// it is large).
    pub(crate) fn add(&mut self, run: &[u8]) {
        let n = run.len() / self.block_size;
        let old = self.digests.len();
        self.digests.resize(old + n * self.hasher.digest_len(), 0);
        self.hasher
            .hash_blocks_par(run, self.block_size, &mut self.digests[old..]);
        self.blocks += n as u64;
    }

    /// Zero-pad a partial last block (fs-verity) and hash it.
    pub(crate) fn add_padded(&mut self, tail: &[u8]) {
        if tail.is_empty() {
            return;
        }
        let mut block = vec![0u8; self.block_size];
        block[..tail.len()].copy_from_slice(tail);
        self.add(&block);
    }

    /// The levels above level 0 and the root hash.
    pub(crate) fn finish(self, data_bytes: u64, packing: Packing) -> Tree {
        upper_levels(&self.hasher, self.digests, self.blocks, data_bytes, packing)
    }
}

/// Where the digests sit in a hash block: `per_block` slots of `slot`
/// bytes from its start (each a digest, then zeros), zeros after them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packing {
    /// The hash block size.
    pub(crate) block: usize,
    /// Bytes per digest slot: the digest length, or the next power of two
    /// (dm-verity format 1).
    pub(crate) slot: usize,
    /// Slots per block: the largest power of two of digests that fit.
    pub(crate) per_block: usize,
}

impl Packing {
    /// `digest_len`-byte digests in `block`-byte hash blocks, each in a
    /// slot rounded up to a power of two if `pad_to_power_of_two`.
    pub(crate) fn new(block: usize, digest_len: usize, pad_to_power_of_two: bool) -> Packing {
        let slot = if pad_to_power_of_two {
            digest_len.next_power_of_two()
        } else {
            digest_len
        };
        Packing {
            block,
            slot,
            per_block: 1 << (block / digest_len).ilog2(),
        }
    }

    /// Lay out `digests` (back to back, `dl` bytes each) into hash blocks.
    fn blocks(&self, mut digests: Vec<u8>, dl: usize) -> Vec<u8> {
        if self.slot == dl && self.per_block * dl == self.block {
            // Dense: the digests are the blocks, zero-filled at the end.
            digests.resize(digests.len().div_ceil(self.block) * self.block, 0);
            return digests;
        }
        let n = digests.len() / dl;
        let mut out = vec![0u8; n.div_ceil(self.per_block) * self.block];
        for (i, d) in digests.chunks_exact(dl).enumerate() {
            let at = i / self.per_block * self.block + i % self.per_block * self.slot;
            out[at..at + dl].copy_from_slice(d);
        }
        out
    }
}

/// The levels above level 0 and the root hash, from level 0 (the digests of
/// the `data_blocks` data blocks).
fn upper_levels(
    hasher: &BlockHasher,
    level0: Vec<u8>,
    data_blocks: u64,
    data_bytes: u64,
    packing: Packing,
) -> Tree {
    let dl = hasher.digest_len();
    let hbs = packing.block;
    let mut levels = Vec::new();
    let root = match data_blocks {
        0 => Digest::from_slice(&[0u8; 64][..dl]),
        1 => Digest::from_slice(&level0),
        _ => {
            let mut cur = level0;
            loop {
                cur = packing.blocks(cur, dl);
                let blocks = cur.len() / hbs;
                if blocks == 1 {
                    let mut d = [0u8; 64];
                    hasher.hash1(&cur, &mut d[..dl]);
                    levels.push(cur);
                    break Digest::from_slice(&d[..dl]);
                }
                let mut next = vec![0u8; blocks * dl];
                hasher.hash_blocks_par(&cur, hbs, &mut next);
                levels.push(cur);
                cur = next;
            }
        }
    };
    Tree {
        levels,
        root,
        data_blocks,
        data_bytes,
        hash_block_size: hbs,
    }
}

/// The root hashes of many small inputs (fs-verity: partial last blocks
/// zero-padded, `block_size` data and hash blocks), built together so that
/// the blocks of different inputs are hashed in pairs: every level of every
/// input is one list of equal-length blocks, whatever input they belong to.
pub(crate) fn roots_of_many(
    hasher: &BlockHasher,
    block_size: usize,
    inputs: &[&[u8]],
) -> Vec<Digest> {
    let bs = block_size;
    let dl = hasher.digest_len();
    // Each input's partial last block, zero-padded.
    let pads: Vec<Vec<u8>> = inputs
        .iter()
        .map(|d| {
            let rest = d.len() % bs;
            let mut p = Vec::new();
            if rest > 0 {
                p.resize(bs, 0);
                p[..rest].copy_from_slice(&d[d.len() - rest..]);
            }
            p
        })
        .collect();
    // The current level of every input: its blocks, then their digests.
    let mut cur: Vec<Vec<u8>> = Vec::with_capacity(inputs.len());
    {
        let mut blocks: Vec<&[u8]> = Vec::new();
        let mut counts = Vec::with_capacity(inputs.len());
        for (d, pad) in inputs.iter().zip(&pads) {
            let before = blocks.len();
            blocks.extend(d.chunks_exact(bs));
            if !pad.is_empty() {
                blocks.push(pad);
            }
            counts.push(blocks.len() - before);
        }
        let mut out = vec![0u8; blocks.len() * dl];
        hasher.hash_list(&blocks, &mut out);
        let mut at = 0;
        for n in counts {
            cur.push(out[at..at + n * dl].to_vec());
            at += n * dl;
        }
    }
    // Every level with more than one digest becomes blocks to hash.
    loop {
        let mut blocks: Vec<&[u8]> = Vec::new();
        let mut counts = Vec::with_capacity(cur.len());
        for level in &mut cur {
            if level.len() > dl {
                level.resize(level.len().div_ceil(bs) * bs, 0);
            }
        }
        for level in &cur {
            let before = blocks.len();
            if level.len() > dl {
                blocks.extend(level.chunks_exact(bs));
            }
            counts.push(blocks.len() - before);
        }
        if blocks.is_empty() {
            break;
        }
        let mut out = vec![0u8; blocks.len() * dl];
        hasher.hash_list(&blocks, &mut out);
        let mut at = 0;
        for (level, n) in cur.iter_mut().zip(counts) {
            if n > 0 {
                *level = out[at..at + n * dl].to_vec();
                at += n * dl;
            }
        }
    }
    cur.iter()
        .map(|l| {
            if l.is_empty() {
                Digest::from_slice(&[0u8; 64][..dl])
            } else {
                Digest::from_slice(l)
            }
        })
        .collect()
}

/// Block count of each level (level 0 first) of a tree over `data_blocks`
/// blocks with `per_block` digests per hash block.
pub(crate) fn level_blocks(data_blocks: u64, per_block: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut n = data_blocks;
    while n > 1 {
        n = n.div_ceil(per_block);
        out.push(n);
    }
    out
}
