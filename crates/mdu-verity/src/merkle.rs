//! The Merkle tree builder shared by fs-verity and dm-verity.
//!
//! Data blocks are read from any [`std::io::Read`] in large chunks (or taken
//! where they lie, from byte slices already in memory) and hashed two at a
//! time; their digests form level 0, which is cut into hash blocks
//! (the last one zero-filled) and hashed, again in pairs, into level 1, and
//! so on until a level fits in one block. The hash of that block is the root
//! hash. Only the tree is kept in memory, never more than one chunk of data.
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

use std::io::{self, Read, Write};

use crate::hash::BlockHasher;
use crate::{Digest, Error};

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

/// How to build one tree.
pub(crate) struct Spec<'a> {
    pub(crate) hasher: &'a BlockHasher,
    pub(crate) data_block_size: usize,
    pub(crate) hash_block_size: usize,
    /// Zero-pad and hash a trailing partial data block (fs-verity); otherwise
    /// it is ignored (dm-verity).
    pub(crate) pad_partial: bool,
    /// Hash exactly this many data blocks (error if fewer are available).
    pub(crate) data_blocks: Option<u64>,
}

/// Read until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn fill<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Bytes of data read (and hashed) per chunk: small enough to stay in the
/// L2 cache on one thread, large enough to feed the pool on several.
fn chunk_len(block_size: usize) -> usize {
    let target = 256 << 10;
    #[cfg(feature = "rayon")]
    let target = if rayon::current_num_threads() > 1 {
        1 << 20
    } else {
        target
    };
    (target / block_size).max(2) * block_size
}

/// Hash the blocks of `src` into `dst` and read the next chunk into `next`,
/// both at once when a rayon pool with more than one thread is available.
fn hash_while_reading<R: Read>(
    hasher: &BlockHasher,
    src: &[u8],
    bs: usize,
    dst: &mut [u8],
    reader: &mut R,
    next: &mut [u8],
) -> io::Result<usize> {
    #[cfg(feature = "rayon")]
    if rayon::current_num_threads() > 1 {
        return rayon::in_place_scope(|s| {
            s.spawn(|_| hasher.hash_blocks_par(src, bs, dst));
            fill(reader, next)
        });
    }
    hasher.hash_blocks(src, bs, dst);
    fill(reader, next)
}

/// Build the tree of the data read from `reader`.
pub(crate) fn build<R: Read>(reader: R, spec: &Spec<'_>) -> Result<Tree, Error> {
    let bs = spec.data_block_size;
    let dl = spec.hasher.digest_len();
    let hasher = spec.hasher;

    let limit = match spec.data_blocks {
        Some(n) => n
            .checked_mul(bs as u64)
            .ok_or(Error::TreeTooLarge { data_blocks: n })?,
        None => u64::MAX,
    };
    let mut reader = reader.take(limit);

    // Two buffers: while the blocks of one are hashed (on the rayon pool),
    // the next chunk is read into the other on this thread.
    let mut cur = vec![0u8; chunk_len(bs)];
    let mut next = vec![0u8; cur.len()];
    let mut level0 = Vec::new();
    let mut data_blocks = 0u64;
    let mut data_bytes = 0u64;
    let mut got = fill(&mut reader, &mut cur)?;
    loop {
        data_bytes += got as u64;
        let whole = got / bs;
        let old = level0.len();
        level0.resize(old + whole * dl, 0);
        data_blocks += whole as u64;
        if got < cur.len() {
            hasher.hash_blocks_par(&cur[..whole * bs], bs, &mut level0[old..]);
            let partial = got % bs;
            if partial > 0 && spec.pad_partial {
                let block = &mut cur[whole * bs..(whole + 1) * bs];
                block[partial..].fill(0);
                let mut d = [0u8; 64];
                hasher.hash1(block, &mut d[..dl]);
                level0.extend_from_slice(&d[..dl]);
                data_blocks += 1;
            }
            break;
        }
        got = hash_while_reading(hasher, &cur, bs, &mut level0[old..], &mut reader, &mut next)?;
        core::mem::swap(&mut cur, &mut next);
    }
    if let Some(n) = spec.data_blocks
        && data_blocks < n
    {
        return Err(Error::TruncatedInput {
            expected_blocks: n,
            available_blocks: data_blocks,
        });
    }
    drop((cur, next));
    Ok(upper_levels(level0, data_blocks, data_bytes, spec))
}

/// Build the tree of data that arrives as a sequence of byte slices already
/// in memory (for example windows of a mapped file, each unmapped once
/// hashed), hashing the blocks where they lie: no copy except for a block
/// that straddles two chunks, and with the `rayon` feature each chunk is
/// shared among the pool's threads. The same tree as [`build`] of the
/// concatenated bytes.
pub(crate) fn build_chunks<C: AsRef<[u8]>>(
    chunks: impl IntoIterator<Item = io::Result<C>>,
    spec: &Spec<'_>,
) -> Result<Tree, Error> {
    let bs = spec.data_block_size;
    let dl = spec.hasher.digest_len();
    // Bytes still to take: the whole input, or exactly `n` blocks.
    let mut want = match spec.data_blocks {
        Some(n) => n
            .checked_mul(bs as u64)
            .ok_or(Error::TreeTooLarge { data_blocks: n })?,
        None => u64::MAX,
    };
    let mut level0 = Vec::new();
    let mut data_blocks = 0u64;
    let mut data_bytes = 0u64;
    // A block begun at the end of one chunk and finished by the next.
    let mut carry = vec![0u8; bs];
    let mut carried = 0;
    let mut d = [0u8; 64];
    for chunk in chunks {
        let chunk = chunk?;
        let mut data = chunk.as_ref();
        if (data.len() as u64) > want {
            data = &data[..want as usize];
        }
        want -= data.len() as u64;
        data_bytes += data.len() as u64;
        if carried > 0 {
            let take = (bs - carried).min(data.len());
            carry[carried..carried + take].copy_from_slice(&data[..take]);
            carried += take;
            data = &data[take..];
            if carried < bs {
                continue;
            }
            spec.hasher.hash1(&carry, &mut d[..dl]);
            level0.extend_from_slice(&d[..dl]);
            data_blocks += 1;
        }
        let (blocks, rest) = data.split_at(data.len() / bs * bs);
        let old = level0.len();
        level0.resize(old + blocks.len() / bs * dl, 0);
        spec.hasher.hash_blocks_par(blocks, bs, &mut level0[old..]);
        data_blocks += (blocks.len() / bs) as u64;
        carry[..rest.len()].copy_from_slice(rest);
        carried = rest.len();
        if want == 0 {
            break;
        }
    }
    if let Some(n) = spec.data_blocks
        && data_blocks < n
    {
        return Err(Error::TruncatedInput {
            expected_blocks: n,
            available_blocks: data_blocks,
        });
    }
    if carried > 0 && spec.pad_partial {
        carry[carried..].fill(0);
        spec.hasher.hash1(&carry, &mut d[..dl]);
        level0.extend_from_slice(&d[..dl]);
        data_blocks += 1;
    }
    Ok(upper_levels(level0, data_blocks, data_bytes, spec))
}

/// The levels above level 0 and the root hash, from level 0 (the digests of
/// the `data_blocks` data blocks).
fn upper_levels(level0: Vec<u8>, data_blocks: u64, data_bytes: u64, spec: &Spec<'_>) -> Tree {
    let hasher = spec.hasher;
    let dl = hasher.digest_len();
    let hbs = spec.hash_block_size;
    let mut levels = Vec::new();
    let root = match data_blocks {
        0 => Digest::from_slice(&[0u8; 64][..dl]),
        1 => Digest::from_slice(&level0),
        _ => {
            let mut cur = level0;
            loop {
                cur.resize(cur.len().div_ceil(hbs) * hbs, 0);
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
