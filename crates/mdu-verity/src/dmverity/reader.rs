//! The verified reader of a dm-verity tree ([`Reader`]).

use std::collections::HashMap;
use std::sync::Mutex;

use mdu_core::io::{IoError, ReadAt};

use super::Params;
use super::verify::{Layout, Parents};
use crate::hash::BlockHasher;
use crate::{Digest, Error};

/// The most bytes of verified hash blocks a [`Reader`] keeps (beyond it,
/// the cache starts over).
///
/// ```
/// assert_eq!(mdu_verity::dmverity::CACHE_BYTES, 64 << 20);
/// ```
pub const CACHE_BYTES: usize = 64 << 20;

/// Verified hash blocks by (level, index).
type Cache = HashMap<(usize, u64), Box<[u8]>>;

fn io(e: IoError) -> Error {
    Error::Io(e.into())
}

/// A dm-verity target as a value: data blocks read at byte offsets, each
/// verified on its path to the trusted root hash before it is returned, as
/// the kernel's dm-verity target checks them on every read.
///
/// Hash blocks are read as they are needed and kept once verified (up to
/// [`CACHE_BYTES`]), so a read costs the hashing of its data blocks and of
/// the hash blocks not yet seen; the data blocks of one read are hashed in
/// one batch (two at a time, across the rayon pool with the `rayon`
/// feature). Nothing is returned that was not verified: a bad data block
/// is [`Error::CorruptDataBlock`], a bad hash block on the way
/// [`Error::CorruptHashBlock`], and the buffer then holds no verified
/// bytes. The parameters and the root hash are the caller's and trusted
/// (see the [trust model](crate::dmverity#trust-model)).
///
/// ```
/// use mdu_verity::{dmverity, Error};
///
/// let mut data: Vec<u8> = (0..300 * 4096u32).map(|i| (i % 251) as u8).collect();
/// let p = dmverity::Params::default();
/// let mut hash = std::io::Cursor::new(Vec::new());
/// let root = dmverity::format(&data[..], &mut hash, &p)?.root_hash();
/// let hash = hash.into_inner();
///
/// let r = dmverity::Reader::new(&data, &hash, &p, &root)?;
/// let mut buf = vec![0u8; 3 * 4096];
/// r.read_at(&mut buf, 7 * 4096)?;
/// assert!(buf[..] == data[7 * 4096..10 * 4096]);
///
/// data[8 * 4096] ^= 1;
/// let r = dmverity::Reader::new(&data, &hash, &p, &root)?;
/// let err = r.read_at(&mut buf, 7 * 4096).unwrap_err();
/// assert!(matches!(err, Error::CorruptDataBlock { block: 8 }));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub struct Reader<D, H> {
    data: D,
    hash: H,
    params: Params,
    hasher: BlockHasher,
    layout: Layout,
    root: Vec<u8>,
    /// Verified hash blocks by (level, index).
    cache: Mutex<Cache>,
}

impl<D, H> std::fmt::Debug for Reader<D, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("params", &self.params)
            .field("data_blocks", &self.layout.data_blocks)
            .finish_non_exhaustive()
    }
}

impl<D: ReadAt, H: ReadAt> Reader<D, H> {
    /// A reader of `data` under the tree on `hash` (laid out as `params`
    /// say) and `root_hash`. The number of data blocks is
    /// `params.data_blocks`, or every whole block of `data`.
    ///
    /// # Errors
    ///
    /// Parameters [`Params::validate`] refuses, a root hash of the wrong
    /// length, no data blocks, a data device shorter than its blocks, a
    /// hash device that does not hold the whole tree.
    ///
    /// (Example: [`Reader`].)
    pub fn new(data: D, hash: H, params: &Params, root_hash: &Digest) -> Result<Self, Error> {
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
        let dbs = u64::from(params.data_block_size);
        let data_bytes = data.size().map_err(io)?;
        let n = params.data_blocks.unwrap_or(data_bytes / dbs);
        if n == 0 {
            return Err(Error::NoDataBlocks {
                data_bytes,
                data_block_size: params.data_block_size,
            });
        }
        let layout = Layout::new(params, n)?;
        if n * dbs > data_bytes {
            return Err(Error::MissingDataBlock {
                block: data_bytes / dbs,
                data_blocks: n,
            });
        }
        let available = hash.size().map_err(io)?;
        if layout.tree_end > available {
            return Err(Error::HashAreaTooSmall {
                needed: layout.tree_end,
                available,
            });
        }
        Ok(Reader {
            data,
            hash,
            hasher: params.hasher()?,
            params: params.clone(),
            layout,
            root: root_hash.as_bytes().to_vec(),
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The number of data blocks.
    ///
    /// ```
    /// # fn f(r: &mdu_verity::dmverity::Reader<Vec<u8>, Vec<u8>>) { let _ = r.data_blocks(); }
    /// ```
    pub fn data_blocks(&self) -> u64 {
        self.layout.data_blocks
    }

    /// The data block size: reads are whole blocks at block boundaries.
    ///
    /// ```
    /// # fn f(r: &mdu_verity::dmverity::Reader<Vec<u8>, Vec<u8>>) { assert!(r.block_size() >= 512); }
    /// ```
    pub fn block_size(&self) -> u32 {
        self.params.data_block_size
    }

    /// Fills `buf` (whole data blocks) with the data at `offset`, every
    /// block verified against the root.
    ///
    /// # Errors
    ///
    /// [`Error::BlockRange`] for a read off the block grid or past the
    /// last block; [`Error::CorruptHashBlock`], [`Error::HashBlockSpare`]
    /// or [`Error::CorruptDataBlock`] for the first bad block on the way;
    /// the devices' errors.
    ///
    /// (Example: [`Reader`].)
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<(), Error> {
        let dbs = self.params.data_block_size as usize;
        let n = self.layout.data_blocks;
        let (start, count) = (offset / dbs as u64, (buf.len() / dbs) as u64);
        if !offset.is_multiple_of(dbs as u64)
            || !buf.len().is_multiple_of(dbs)
            || count == 0
            || start.checked_add(count).is_none_or(|e| e > n)
        {
            return Err(Error::BlockRange {
                start,
                count,
                data_blocks: n,
            });
        }
        let leaves = self.level0(start, start + count)?;
        self.data.read_exact_at(buf, offset).map_err(io)?;
        let expected = |j: usize| leaves.entry(start + j as u64);
        if let Some(j) = self.hasher.first_mismatch(buf, dbs, &expected) {
            buf.fill(0);
            return Err(Error::CorruptDataBlock {
                block: start + j as u64,
            });
        }
        Ok(())
    }

    /// The level-0 hash blocks covering data blocks `start..end`, each
    /// verified on its path to the root (or taken from the cache).
    fn level0(&self, start: u64, end: u64) -> Result<Parents, Error> {
        let hbs = self.params.hash_block_size as usize;
        let mut parents = Parents::root(&self.root);
        for (i, lo, hi) in self.layout.covering(self.params.per_block(), start, end) {
            let mut blocks = vec![0u8; (hi - lo + 1) as usize * hbs];
            for (j, block) in (lo..=hi).zip(blocks.chunks_mut(hbs)) {
                if let Some(b) = self.cache.lock().expect("cache").get(&(i, j)) {
                    block.copy_from_slice(b);
                    continue;
                }
                let at = (self.layout.level_start[i] + j) * hbs as u64;
                self.hash.read_exact_at(block, at).map_err(io)?;
                let expected = |_: usize| parents.entry(j);
                if self.hasher.first_mismatch(block, hbs, &expected).is_some() {
                    return Err(Error::CorruptHashBlock {
                        level: i,
                        index: j,
                        hash_block: self.layout.level_start[i] + j,
                    });
                }
                self.layout.check_spare(&self.params, i, j, block)?;
                let mut cache = self.cache.lock().expect("cache");
                if cache.len() * hbs >= CACHE_BYTES {
                    cache.clear();
                }
                cache.insert((i, j), block.into());
            }
            parents = Parents::level(blocks, lo, &self.params);
        }
        Ok(parents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dmverity::{HashAlg, format};

    fn tree(data: &[u8], p: &Params) -> (Vec<u8>, Digest) {
        let mut hash = std::io::Cursor::new(Vec::new());
        let root = format(data, &mut hash, p).unwrap().root_hash();
        (hash.into_inner(), root)
    }

    /// Reads of every shape match the data, for trees of one to four
    /// levels, with and without a superblock, salt and format 0.
    #[test]
    fn every_read_of_good_data_returns_it() {
        let cases = [
            Params::default(),
            Params {
                data_block_size: 512,
                hash_block_size: 512,
                salt: vec![7; 32],
                ..Params::default()
            },
            Params {
                format: 0,
                superblock: false,
                hash_block_size: 1024,
                salt: vec![1, 2, 3],
                ..Params::default()
            },
            Params {
                hash: HashAlg::Sha256,
                data_block_size: 1024,
                hash_block_size: 512,
                hash_offset: 4096,
                ..Params::default()
            },
        ];
        for p in cases {
            let dbs = p.data_block_size as usize;
            for blocks in [1usize, 2, 17, 300] {
                let data: Vec<u8> = (0..blocks * dbs).map(|i| (i * 13 % 251) as u8).collect();
                let (hash, root) = tree(&data, &p);
                let r = Reader::new(&data, &hash, &p, &root).unwrap();
                assert_eq!(r.data_blocks(), blocks as u64);
                for (first, count) in [(0, blocks), (blocks - 1, 1), (blocks / 3, blocks / 2 + 1)] {
                    let count = count.min(blocks - first);
                    let mut b = vec![0u8; count * dbs];
                    r.read_at(&mut b, (first * dbs) as u64).unwrap();
                    assert!(
                        b[..] == data[first * dbs..(first + count) * dbs],
                        "{p:?} {blocks} {first}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_bad_data_or_hash_block_fails_the_reads_through_it_and_no_other() {
        let p = Params {
            data_block_size: 512,
            hash_block_size: 512,
            superblock: false,
            ..Params::default()
        };
        let mut data: Vec<u8> = (0..1000 * 512).map(|i| (i % 249) as u8).collect();
        let (mut hash, root) = tree(&data, &p);
        data[500 * 512 + 3] ^= 0x10;
        let r = Reader::new(&data, &hash, &p, &root).unwrap();
        let mut b = vec![0u8; 4 * 512];
        let e = r.read_at(&mut b, 498 * 512).unwrap_err();
        assert!(matches!(e, Error::CorruptDataBlock { block: 500 }), "{e}");
        assert!(b.iter().all(|&x| x == 0), "no unverified byte is returned");
        r.read_at(&mut b, 502 * 512).unwrap();
        // A level-0 hash block (16 digests of 32 bytes per 512-byte block):
        // the last one, which covers data blocks 992..1000.
        let last = hash.len() - 512;
        hash[last + 5] ^= 1;
        let r = Reader::new(&data, &hash, &p, &root).unwrap();
        let e = r.read_at(&mut b[..512], 995 * 512).unwrap_err();
        assert!(matches!(e, Error::CorruptHashBlock { level: 0, .. }), "{e}");
        r.read_at(&mut b[..512], 0).unwrap();
        // A wrong root fails every read.
        let mut other = root.as_bytes().to_vec();
        other[0] ^= 1;
        let r = Reader::new(&data, &hash, &p, &Digest::from_slice(&other)).unwrap();
        assert!(r.read_at(&mut b[..512], 0).is_err());
    }

    #[test]
    fn reads_off_the_grid_past_the_end_or_of_nothing_are_refused() {
        let p = Params::default();
        let data = vec![5u8; 8 * 4096];
        let (hash, root) = tree(&data, &p);
        let r = Reader::new(&data, &hash, &p, &root).unwrap();
        let mut b = vec![0u8; 8192];
        for (len, off) in [
            (4096, 1),
            (100, 0),
            (4096, 8 * 4096),
            (8192, 7 * 4096),
            (0, 0),
        ] {
            let e = r.read_at(&mut b[..len], off).unwrap_err();
            assert!(matches!(e, Error::BlockRange { .. }), "{len} {off}: {e}");
        }
        assert!(Reader::new(&data, &hash[..hash.len() - 1], &p, &root).is_err());
        assert!(Reader::new(&data[..0], &hash, &p, &root).is_err());
    }
}
