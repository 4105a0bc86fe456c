//! Writing the hash area, as `veritysetup format` does.

use std::io::{Read, Seek, SeekFrom, Write};

use super::{Params, SUPERBLOCK_LEN, Superblock};
use crate::merkle::Level0;
use crate::source::Stager;
use crate::{Digest, Error, Source};

/// What [`format()`] wrote.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity;
/// let out = dmverity::format(&[0u8; 8 << 20][..], &mut Cursor::new(Vec::new()), &dmverity::Params::default())?;
/// assert_eq!((out.data_blocks(), out.hash_blocks()), (2048, 17));
/// assert_eq!(out.hash_device_size(), 18 * 4096);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Formatted {
    root_hash: Digest,
    superblock: Option<Superblock>,
    data_blocks: u64,
    hash_blocks: u64,
    hash_start_block: u64,
    hash_block_size: u32,
}

impl Formatted {
    /// The root hash (what `veritysetup format` prints as `Root hash:`).
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let out = dmverity::format(&[0u8; 4096][..], &mut Cursor::new(Vec::new()), &dmverity::Params::default())?;
    /// assert_eq!(out.root_hash().to_hex(), "ad7facb2586fc6e966c004d7d1d16b024f5805ff7cb47c7a85dabd8b48892ca7");
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn root_hash(&self) -> Digest {
        self.root_hash
    }

    /// The superblock that was written, if any.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let p = dmverity::Params { superblock: false, ..Default::default() };
    /// let out = dmverity::format(&[0u8; 4096][..], &mut Cursor::new(Vec::new()), &p)?;
    /// assert!(out.superblock().is_none());
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn superblock(&self) -> Option<&Superblock> {
        self.superblock.as_ref()
    }

    /// Number of data blocks hashed.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let out = dmverity::format(&[0u8; 5000][..], &mut Cursor::new(Vec::new()), &Default::default())?;
    /// assert_eq!(out.data_blocks(), 1); // the partial block is ignored
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn data_blocks(&self) -> u64 {
        self.data_blocks
    }

    /// Number of hash blocks of the tree (without the superblock).
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let out = dmverity::format(&[0u8; 4096][..], &mut Cursor::new(Vec::new()), &Default::default())?;
    /// assert_eq!(out.hash_blocks(), 0);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn hash_blocks(&self) -> u64 {
        self.hash_blocks
    }

    /// The hash block where the tree starts on the hash device.
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let out = dmverity::format(&[0u8; 4096][..], &mut Cursor::new(Vec::new()), &Default::default())?;
    /// assert_eq!(out.hash_start_block(), 1);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn hash_start_block(&self) -> u64 {
        self.hash_start_block
    }

    /// Bytes from the start of the hash device to the end of the tree
    /// (`veritysetup`'s "Hash device size" when the offset is 0).
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::dmverity;
    /// let out = dmverity::format(&[0u8; 8192][..], &mut Cursor::new(Vec::new()), &Default::default())?;
    /// assert_eq!(out.hash_device_size(), 2 * 4096);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn hash_device_size(&self) -> u64 {
        (self.hash_start_block + self.hash_blocks) * u64::from(self.hash_block_size)
    }
}

/// Hash the data blocks of `data` (a byte slice, a file or block device,
/// a reader, pieces in memory: any [`Source`]) and write the hash area (and
/// the superblock, if enabled) to `hash_out`, like `veritysetup format`.
///
/// All reading and hashing happens before the first write, so a parameter
/// error or a short data device leaves `hash_out` untouched; an I/O error
/// while writing may leave it partly written. With `params.data_blocks`
/// set, the source is read no further than those blocks.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity;
///
/// let salt = (0..32u8).collect::<Vec<u8>>();
/// let p = dmverity::Params { salt, data_block_size: 1024, hash_block_size: 1024, ..Default::default() };
/// let mut dev = Cursor::new(Vec::new());
/// let out = dmverity::format(&vec![7u8; 300 * 1024], &mut dev, &p)?;
/// assert_eq!(out.hash_blocks(), 10 + 1);
/// assert_eq!(dev.get_ref().len() as u64, out.hash_device_size());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn format<'a, W: Write + Seek>(
    data: impl Into<Source<'a>>,
    hash_out: W,
    params: &Params,
) -> Result<Formatted, Error> {
    params.validate()?;
    let dbs = params.data_block_size as usize;
    let limit = data_limit(params)?;
    let mut level0 = Level0::new(params.hasher()?, dbs);
    let fed = data.into().feed(0, limit, dbs, &mut |run| {
        level0.add(run);
        Ok(())
    })?;
    write_area(hash_out, params, level0, fed.bytes)
}

/// Bytes of data to take: exactly the pinned blocks, or all of it.
fn data_limit(params: &Params) -> Result<u64, Error> {
    match params.data_blocks {
        Some(n) => n
            .checked_mul(u64::from(params.data_block_size))
            .ok_or(Error::TreeTooLarge { data_blocks: n }),
        None => Ok(u64::MAX),
    }
}

/// The dm-verity hash area of data that arrives piece by piece:
/// [`update`](Hasher::update) takes pieces of any size, and
/// [`finalize`](Hasher::finalize) writes the same hash area as [`format()`]
/// of the whole data and returns the same [`Formatted`]. Memory: the tree
/// and a staging buffer of 64 KiB; pieces of 64 KiB and more are hashed
/// where they lie.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity;
///
/// let p = dmverity::Params::default();
/// let mut h = dmverity::Hasher::new(&p)?;
/// for _ in 0..100 {
///     h.update(&[6u8; 1000]);
/// }
/// let mut a = Cursor::new(Vec::new());
/// let mut b = Cursor::new(Vec::new());
/// let streamed = h.finalize(&mut a)?;
/// let whole = dmverity::format(&[6u8; 100_000], &mut b, &p)?;
/// assert_eq!(streamed.root_hash(), whole.root_hash());
/// assert_eq!(a.into_inner(), b.into_inner());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone)]
pub struct Hasher {
    params: Params,
    level0: Level0,
    stager: Stager,
    /// Bytes taken (at most `limit`).
    bytes: u64,
    limit: u64,
}

impl Hasher {
    /// A hasher for `params` (checked here, so [`update`](Hasher::update)
    /// cannot fail).
    ///
    /// ```
    /// use mdu_verity::{dmverity, Error};
    /// let bad = dmverity::Params { format: 7, ..Default::default() };
    /// assert!(matches!(dmverity::Hasher::new(&bad), Err(Error::UnknownHashType { .. })));
    /// ```
    pub fn new(params: &Params) -> Result<Hasher, Error> {
        params.validate()?;
        let dbs = params.data_block_size as usize;
        Ok(Hasher {
            params: params.clone(),
            level0: Level0::new(params.hasher()?, dbs),
            stager: Stager::new(dbs),
            bytes: 0,
            limit: data_limit(params)?,
        })
    }

    /// Take the next piece of the data (with `data_blocks` pinned, bytes
    /// past those blocks are ignored).
    ///
    /// ```
    /// use mdu_verity::dmverity;
    /// let p = dmverity::Params { data_blocks: Some(1), ..Default::default() };
    /// let mut h = dmverity::Hasher::new(&p)?;
    /// h.update(&[0u8; 3 * 4096]);
    /// assert_eq!(h.len(), 4096);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn update(&mut self, data: &[u8]) {
        let room = self.limit - self.bytes;
        let data = &data[..usize::try_from(room).map_or(data.len(), |r| r.min(data.len()))];
        self.bytes += data.len() as u64;
        let level0 = &mut self.level0;
        // The sink cannot fail.
        let _ = self.stager.push(data, &mut |run| {
            level0.add(run);
            Ok(())
        });
    }

    /// Bytes taken so far.
    ///
    /// ```
    /// let mut h = mdu_verity::dmverity::Hasher::new(&Default::default())?;
    /// h.update(b"abc");
    /// assert_eq!(h.len(), 3);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn len(&self) -> u64 {
        self.bytes
    }

    /// Whether no byte was taken yet.
    ///
    /// ```
    /// assert!(mdu_verity::dmverity::Hasher::new(&Default::default())?.is_empty());
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Write the hash area of everything taken to `hash_out`, as
    /// [`format()`] does (a trailing partial block is ignored; fewer blocks
    /// than pinned is [`Error::TruncatedInput`], none is
    /// [`Error::NoDataBlocks`], and neither writes anything).
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::{dmverity, Error};
    /// let h = dmverity::Hasher::new(&Default::default())?;
    /// let e = h.finalize(Cursor::new(Vec::new()));
    /// assert!(matches!(e, Err(Error::NoDataBlocks { .. })));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn finalize<W: Write + Seek>(mut self, hash_out: W) -> Result<Formatted, Error> {
        let level0 = &mut self.level0;
        self.stager.finish(&mut |run| {
            level0.add(run);
            Ok(())
        })?;
        write_area(hash_out, &self.params, self.level0, self.bytes)
    }
}

impl core::fmt::Debug for Hasher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hasher")
            .field("params", &self.params)
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// Checks the block count, builds the levels above level 0 and writes the
/// hash area.
fn write_area<W: Write + Seek>(
    mut hash_out: W,
    params: &Params,
    level0: Level0,
    data_bytes: u64,
) -> Result<Formatted, Error> {
    if let Some(n) = params.data_blocks
        && level0.blocks() < n
    {
        return Err(Error::TruncatedInput {
            expected_blocks: n,
            available_blocks: level0.blocks(),
        });
    }
    if level0.blocks() == 0 {
        return Err(Error::NoDataBlocks {
            data_bytes,
            data_block_size: params.data_block_size,
        });
    }
    let tree = level0.finish(data_bytes, params.packing());
    let hbs = u64::from(params.hash_block_size);
    let start = params.hash_start_block();
    let superblock = params
        .superblock
        .then(|| params.superblock_for(tree.data_blocks()));
    if let Some(sb) = &superblock {
        hash_out.seek(SeekFrom::Start(params.hash_offset))?;
        hash_out.write_all(&sb.to_bytes())?;
        // veritysetup writes the superblock with a read-modify-write of the
        // block holding it (the hash block size, at most 4 KiB, on a regular
        // file): bytes already there are kept, a shorter device is extended
        // with zeros to the end of that block.
        let sb_end = params.hash_offset + SUPERBLOCK_LEN as u64;
        let block_end = sb_end.next_multiple_of(hbs.min(4096));
        let len = hash_out.seek(SeekFrom::End(0))?;
        if len < block_end {
            std::io::copy(&mut std::io::repeat(0).take(block_end - len), &mut hash_out)?;
        }
    }
    hash_out.seek(SeekFrom::Start(start * hbs))?;
    tree.write_root_first(&mut hash_out)?;
    hash_out.flush()?;
    Ok(Formatted {
        root_hash: tree.root_hash(),
        superblock,
        data_blocks: tree.data_blocks(),
        hash_blocks: tree.size() as u64 / hbs,
        hash_start_block: start,
        hash_block_size: params.hash_block_size,
    })
}
