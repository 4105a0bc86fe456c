//! Writing the hash area, as `veritysetup format` does.

use std::io::{Read, Seek, SeekFrom, Write};

use super::{Params, SUPERBLOCK_LEN, Superblock};
use crate::merkle::{self, Spec};
use crate::{Digest, Error, sha256};

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

/// Hash the data blocks read from `data` and write the hash area (and the
/// superblock, if enabled) to `hash_out`, like `veritysetup format`.
///
/// All reading and hashing happens before the first write, so a parameter
/// error or a short data device leaves `hash_out` untouched; an I/O error
/// while writing may leave it partly written.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity;
///
/// let salt = (0..32u8).collect::<Vec<u8>>();
/// let p = dmverity::Params { salt, data_block_size: 1024, hash_block_size: 1024, ..Default::default() };
/// let mut dev = Cursor::new(Vec::new());
/// let out = dmverity::format(&vec![7u8; 300 * 1024][..], &mut dev, &p)?;
/// assert_eq!(out.hash_blocks(), 10 + 1);
/// assert_eq!(dev.get_ref().len() as u64, out.hash_device_size());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn format<R: Read, W: Write + Seek>(
    data: R,
    hash_out: W,
    params: &Params,
) -> Result<Formatted, Error> {
    format_with(data, hash_out, params, sha256::State::new())
}

/// As [`format()`], with SHA-256 on the given fresh state's backend.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity, sha256::{Backend, State}};
/// let p = dmverity::Params::default();
/// let g = State::with_backend(Backend::Generic).unwrap();
/// let a = dmverity::format_with(&[1u8; 8192][..], &mut Cursor::new(Vec::new()), &p, g)?;
/// let b = dmverity::format(&[1u8; 8192][..], &mut Cursor::new(Vec::new()), &p)?;
/// assert_eq!(a.root_hash(), b.root_hash());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn format_with<R: Read, W: Write + Seek>(
    data: R,
    hash_out: W,
    params: &Params,
    fresh: sha256::State,
) -> Result<Formatted, Error> {
    format_tree(hash_out, params, fresh, |spec| merkle::build(data, spec))
}

/// As [`format()`], for a data device already in memory (or mapped into
/// it): the blocks are hashed where they lie, without the copy a reader
/// needs, and with the `rayon` feature the whole device is shared among the
/// pool's threads. The result is the same as `format(data, hash_out,
/// params)`.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity;
///
/// let data = vec![4u8; 64 * 4096];
/// let p = dmverity::Params::default();
/// let a = dmverity::format_bytes(&data, &mut Cursor::new(Vec::new()), &p)?;
/// let b = dmverity::format(&data[..], &mut Cursor::new(Vec::new()), &p)?;
/// assert_eq!(a.root_hash(), b.root_hash());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn format_bytes<W: Write + Seek>(
    data: &[u8],
    hash_out: W,
    params: &Params,
) -> Result<Formatted, Error> {
    format_chunks(core::iter::once(Ok(data)), hash_out, params)
}

/// As [`format_bytes`], for a data device that arrives in pieces already in
/// memory, in order: for example successive windows of a mapped image, each
/// of which can be unmapped as soon as it has been hashed, so that memory
/// stays bounded by the window and the tree. Chunks may have any lengths; a
/// block split between two chunks is joined. With `params.data_blocks`
/// set, chunks past those blocks are not taken from the iterator. An `Err`
/// item stops the work and is returned as [`Error::Io`]; like every error
/// before the first write, it leaves `hash_out` untouched.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::dmverity;
///
/// let data = vec![4u8; 64 * 4096];
/// let p = dmverity::Params::default();
/// let pieces = data.chunks(5000).map(Ok::<_, std::io::Error>);
/// let a = dmverity::format_chunks(pieces, &mut Cursor::new(Vec::new()), &p)?;
/// let b = dmverity::format_bytes(&data, &mut Cursor::new(Vec::new()), &p)?;
/// assert_eq!(a.root_hash(), b.root_hash());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn format_chunks<C: AsRef<[u8]>, W: Write + Seek>(
    chunks: impl IntoIterator<Item = std::io::Result<C>>,
    hash_out: W,
    params: &Params,
) -> Result<Formatted, Error> {
    format_tree(hash_out, params, sha256::State::new(), |spec| {
        merkle::build_chunks(chunks, spec)
    })
}

/// Checks `params`, builds the tree with `build` and writes the hash area.
fn format_tree<W: Write + Seek>(
    mut hash_out: W,
    params: &Params,
    fresh: sha256::State,
    build: impl FnOnce(&Spec<'_>) -> Result<crate::merkle::Tree, Error>,
) -> Result<Formatted, Error> {
    params.validate()?;
    let hasher = params.hasher(fresh);
    let tree = build(&Spec {
        hasher: &hasher,
        data_block_size: params.data_block_size as usize,
        hash_block_size: params.hash_block_size as usize,
        pad_partial: false,
        data_blocks: params.data_blocks,
    })?;
    if tree.data_blocks() == 0 {
        return Err(Error::NoDataBlocks {
            data_bytes: tree.data_bytes(),
            data_block_size: params.data_block_size,
        });
    }
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
