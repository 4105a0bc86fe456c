//! A read-only ext4 reader: the subset an offline fscrypt reader needs.
//!
//! Superblock and feature checks, 32- and 64-bit group descriptors, inode
//! tables, extent trees (index nodes included) and the block maps of old
//! files, linear and htree directories (read by scanning every leaf block),
//! in-inode and block extended attributes (where the encryption context
//! lives), inline data, fast and slow symlinks, holes and unwritten
//! extents, and the directory hashes (`half_md4`, `tea`, legacy) that
//! no-key names carry.
//!
//! Every count and offset read from the image is untrusted: arithmetic is
//! checked, every read is bounded by the image, every loop by what the image
//! can hold, and a damaged image gives a typed [`Ext4Error`] naming the inode
//! and the field, never a panic.
//!
//! The image is anything that reads at an offset ([`ReadAt`], mdu-core's
//! trait): a byte slice or vector, or with `std` a file or block device
//! ([`std::fs::File`]). Its size is taken once, when it is opened.
//!
//! # Example
//!
//! ```
//! use mdu_fscrypt::ext4::{Ext4, Ext4Error, ROOT_INO};
//!
//! // Not an ext4 image: the superblock's magic is checked first.
//! let image = vec![0u8; 4096];
//! match Ext4::open(&image[..]) {
//!     Err(Ext4Error::Superblock { field: "s_magic", .. }) => {}
//!     other => panic!("{other:?}"),
//! }
//! # let _ = ROOT_INO;
//! ```

mod dir;
mod error;
mod hash;
mod inode;
mod map;
mod superblock;
mod xattr;

use alloc::string::ToString;
use alloc::vec;
use alloc::vec::Vec;

use mdu_core::io::IoError;

pub use dir::{DirEntry, FileType, SYMLINK_MAX};
pub use error::Ext4Error;
pub use hash::{DirHash, HashVersion};
pub use inode::{Inode, Timestamp};
pub use map::Extent;
pub use superblock::Superblock;

/// The root directory's inode number.
pub const ROOT_INO: u32 = 2;

/// An image read at offsets: mdu-core's one positioned-read trait
/// (`mdu_core::io::ReadAt`), re-exported here. A byte slice or vector, and
/// with `std` a [`std::fs::File`] (a file or block device) are images; a
/// read past the end is [`Ext4Error::OutOfImage`], any other failure
/// [`Ext4Error::Io`] naming the offset.
///
/// ```
/// use mdu_fscrypt::ext4::{Ext4, Ext4Error, ReadAt};
///
/// let image = [1u8, 2, 3, 4];
/// let mut buf = [0u8; 2];
/// image[..].read_exact_at(&mut buf, 1)?;
/// assert_eq!((buf, image[..].size()?), ([2, 3], 4));
/// // Too short for a superblock: the reader names the read that passes the end.
/// assert!(matches!(Ext4::open(&image[..]), Err(Ext4Error::OutOfImage { offset: 1024, .. })));
/// # Ok::<(), mdu_core::io::IoError>(())
/// ```
pub use mdu_core::io::ReadAt;

/// `e`, the failure of a read of the image at `offset`, as this reader's
/// error: a range past the end is [`Ext4Error::OutOfImage`], anything else
/// [`Ext4Error::Io`] with what the device said.
fn read_error(e: IoError, offset: u64) -> Ext4Error {
    match e {
        IoError::OutOfRange { offset, len, size } => Ext4Error::OutOfImage { offset, len, size },
        e => Ext4Error::Io {
            offset,
            message: e.to_string(),
        },
    }
}

/// Fills `buf` from `offset` of `image`, with this reader's errors.
fn read_at<R: ReadAt + ?Sized>(image: &R, buf: &mut [u8], offset: u64) -> Result<(), Ext4Error> {
    image
        .read_exact_at(buf, offset)
        .map_err(|e| read_error(e, offset))
}

/// An ext4 file system in an image, opened read-only.
///
/// See the [module](self) documentation.
#[derive(Debug)]
pub struct Ext4<R> {
    image: R,
    /// The image's size, taken once when it was opened.
    size: u64,
    sb: Superblock,
    /// The first block of each group's inode table.
    inode_tables: Vec<u64>,
}

impl<R: ReadAt> Ext4<R> {
    /// Reads and checks the superblock and the group descriptors.
    ///
    /// # Errors
    ///
    /// [`Ext4Error::Superblock`] for a field no ext4 file system has,
    /// [`Ext4Error::Unsupported`] for a feature this reader does not read
    /// (`meta_bg`, a journal device, `dirdata`), [`Ext4Error::NeedsRecovery`]
    /// for a file system whose journal needs replaying (not unmounted: its
    /// blocks may not hold what was last written), [`Ext4Error::Group`] for a
    /// descriptor whose inode table lies outside the file system,
    /// [`Ext4Error::ImageSize`] when the image cannot say its size, and the
    /// image's read errors.
    ///
    /// See the [module](self) documentation.
    pub fn open(image: R) -> Result<Ext4<R>, Ext4Error> {
        let mut raw = vec![0u8; superblock::SIZE];
        read_at(&image, &mut raw, superblock::OFFSET)?;
        let sb = Superblock::parse(&raw)?;
        let size = image.size().map_err(|e| Ext4Error::ImageSize {
            message: e.to_string(),
        })?;
        if sb.needs_recovery {
            return Err(Ext4Error::NeedsRecovery);
        }
        let bs = u64::from(sb.block_size);
        let desc_size = u64::from(sb.desc_size);
        let groups = sb.group_count();
        // The descriptors follow the superblock's block.
        let table_start = (u64::from(sb.first_data_block) + 1) * bs;
        let table_len = u64::from(groups) * desc_size;
        if table_start
            .checked_add(table_len)
            .is_none_or(|end| end > size)
        {
            return Err(Ext4Error::OutOfImage {
                offset: table_start,
                len: table_len,
                size,
            });
        }
        let mut table = vec![0u8; table_len as usize];
        read_at(&image, &mut table, table_start)?;
        let mut inode_tables = Vec::with_capacity(groups as usize);
        let table_blocks = u64::from(sb.inodes_per_group) * u64::from(sb.inode_size) / bs;
        for (group, d) in table.chunks_exact(desc_size as usize).enumerate() {
            let lo = u64::from(le32(d, 0x08));
            let hi = if desc_size >= 64 {
                u64::from(le32(d, 0x28))
            } else {
                0
            };
            let start = lo | (hi << 32);
            if start == 0
                || start
                    .checked_add(table_blocks)
                    .is_none_or(|end| end > sb.blocks_count)
            {
                return Err(Ext4Error::Group {
                    group: group as u32,
                    field: "bg_inode_table",
                    value: start,
                });
            }
            inode_tables.push(start);
        }
        Ok(Ext4 {
            image,
            size,
            sb,
            inode_tables,
        })
    }

    /// The parsed superblock.
    ///
    /// ```no_run
    /// # use mdu_fscrypt::ext4::Ext4;
    /// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
    /// println!("uuid {:02x?}", fs.superblock().uuid);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn superblock(&self) -> &Superblock {
        &self.sb
    }

    /// The block size in bytes (1 KiB to 64 KiB).
    ///
    /// See [`superblock`](Self::superblock).
    pub fn block_size(&self) -> u32 {
        self.sb.block_size
    }

    /// The image the file system is read from.
    ///
    /// See [`superblock`](Self::superblock).
    pub fn image(&self) -> &R {
        &self.image
    }

    /// The image's size in bytes, as it was when it was opened.
    pub(crate) fn image_size(&self) -> u64 {
        self.size
    }

    /// Reads inode `ino`.
    ///
    /// # Errors
    ///
    /// [`Ext4Error::InodeNumber`] for 0 or a number past `s_inodes_count`;
    /// [`Ext4Error::Inode`] for a field no inode has (an `i_extra_isize` past
    /// the inode); the image's read errors.
    ///
    /// ```no_run
    /// # use mdu_fscrypt::ext4::{Ext4, ROOT_INO};
    /// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
    /// let root = fs.inode(ROOT_INO)?;
    /// assert!(root.is_dir());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn inode(&self, ino: u32) -> Result<Inode, Ext4Error> {
        if ino == 0 || ino > self.sb.inodes_count {
            return Err(Ext4Error::InodeNumber { ino });
        }
        let index = ino - 1;
        let group = index / self.sb.inodes_per_group;
        let slot = index % self.sb.inodes_per_group;
        let table = *self
            .inode_tables
            .get(group as usize)
            .ok_or(Ext4Error::InodeNumber { ino })?;
        let size = u64::from(self.sb.inode_size);
        let offset = table * u64::from(self.sb.block_size) + u64::from(slot) * size;
        let mut raw = vec![0u8; size as usize];
        read_at(&self.image, &mut raw, offset)?;
        Inode::parse(ino, &raw)
    }

    /// Reads `count` whole blocks from physical block `block` into `buf`.
    ///
    /// # Errors
    ///
    /// [`Ext4Error::OutOfImage`] or [`Ext4Error::Io`].
    ///
    /// ```no_run
    /// # use mdu_fscrypt::ext4::Ext4;
    /// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
    /// let mut block = vec![0u8; fs.block_size() as usize];
    /// fs.read_blocks(0, &mut block)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_blocks(&self, block: u64, buf: &mut [u8]) -> Result<(), Ext4Error> {
        let offset =
            block
                .checked_mul(u64::from(self.sb.block_size))
                .ok_or(Ext4Error::OutOfImage {
                    offset: u64::MAX,
                    len: buf.len() as u64,
                    size: self.size,
                })?;
        read_at(&self.image, buf, offset)
    }

    /// `inode`'s encryption context (the extended attribute of index 9,
    /// name `c`), if it has one.
    ///
    /// # Errors
    ///
    /// As for [`xattr`](Self::xattr).
    ///
    /// ```no_run
    /// # use mdu_fscrypt::ext4::Ext4;
    /// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
    /// let ctx = fs.encryption_context(&fs.inode(12)?)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encryption_context(&self, inode: &Inode) -> Result<Option<Vec<u8>>, Ext4Error> {
        self.xattr(inode, xattr::INDEX_ENCRYPTION, b"c")
    }
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
