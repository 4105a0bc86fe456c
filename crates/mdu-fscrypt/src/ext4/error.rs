//! What can go wrong reading an image.

use alloc::string::String;
use core::fmt;

/// A read outside the image, a failed read, or a structure no ext4 file
/// system writes (naming the inode or group and the field).
///
/// ```
/// use mdu_fscrypt::ext4::Ext4Error;
///
/// let e = Ext4Error::Inode { ino: 13, field: "extent header magic", value: 0x1234 };
/// assert_eq!(e.to_string(), "inode 13: extent header magic: invalid value 4660 (0x1234)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ext4Error {
    /// A read that passes the end of the image (a truncated image, or an
    /// offset no valid file system holds).
    OutOfImage {
        /// The offset.
        offset: u64,
        /// The bytes wanted.
        len: u64,
        /// The image's size.
        size: u64,
    },
    /// The image could not be read.
    Io {
        /// The offset of the failed read.
        offset: u64,
        /// What the system said.
        message: String,
    },
    /// The image could not say its size (taken once, when it is opened:
    /// the seek to the end of a file or block device failed).
    ImageSize {
        /// What the system said.
        message: String,
    },
    /// A superblock field no ext4 file system has.
    Superblock {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// A feature this reader does not read.
    Unsupported {
        /// The feature's name, as `mke2fs -O` spells it.
        feature: &'static str,
    },
    /// A group descriptor field no ext4 file system has.
    Group {
        /// The group.
        group: u32,
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// An inode number of 0 or past `s_inodes_count`.
    InodeNumber {
        /// The number.
        ino: u32,
    },
    /// An inode whose field (or a structure it points to: extent tree,
    /// block map, directory entry, extended attribute) is invalid.
    Inode {
        /// The inode.
        ino: u32,
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// A directory operation on something else.
    NotADirectory {
        /// The inode.
        ino: u32,
    },
    /// A file or directory whose extents or block map name one physical
    /// block twice (or a block of its own extent tree or block map), or a
    /// directory sharing a block with another one in a walk: no file system
    /// writes that, and a hostile image uses it to make one block of the
    /// image read as many.
    BlockMappedTwice {
        /// The inode.
        ino: u32,
        /// The block.
        block: u64,
    },
    /// The journal needs recovery (`needs_recovery`): the file system was
    /// not unmounted (a crash, a snapshot or copy of a mounted device), so
    /// what was last written may sit only in the journal, and the blocks
    /// this reader sees show an older state.
    NeedsRecovery,
}

impl fmt::Display for Ext4Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ext4Error::OutOfImage { offset, len, size } => write!(
                f,
                "a read of {len} bytes at offset {offset} passes the end of the image ({size} bytes): truncated or damaged"
            ),
            Ext4Error::Io { offset, message } => write!(f, "read at offset {offset}: {message}"),
            Ext4Error::ImageSize { message } => {
                write!(f, "cannot take the image's size: {message}")
            }
            Ext4Error::Superblock { field, value } => {
                write!(
                    f,
                    "superblock: {field}: invalid value {value} ({value:#x}); not an ext4 file system, or a damaged one"
                )
            }
            Ext4Error::Unsupported { feature } => {
                write!(
                    f,
                    "the file system uses the {feature} feature, which this reader does not read"
                )
            }
            Ext4Error::Group {
                group,
                field,
                value,
            } => {
                write!(
                    f,
                    "block group {group}: {field}: invalid value {value} ({value:#x})"
                )
            }
            Ext4Error::InodeNumber { ino } => {
                write!(f, "inode number {ino} is outside the file system")
            }
            Ext4Error::Inode { ino, field, value } => {
                write!(
                    f,
                    "inode {ino}: {field}: invalid value {value} ({value:#x})"
                )
            }
            Ext4Error::NotADirectory { ino } => write!(f, "inode {ino} is not a directory"),
            Ext4Error::BlockMappedTwice { ino, block } => write!(
                f,
                "inode {ino}: physical block {block} is mapped twice (twice in its extents or \
                 block map, or also by another directory read): a damaged or hostile image"
            ),
            Ext4Error::NeedsRecovery => f.write_str(
                "the file system needs journal recovery (needs_recovery): it was not unmounted \
                 (a crash, or a copy of a mounted device), so its last writes are only in the \
                 journal and reading it as it is would show stale or missing files; replay the \
                 journal first: run `e2fsck -fy` on a copy of the image, or mount it once and \
                 unmount it",
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Ext4Error {}
