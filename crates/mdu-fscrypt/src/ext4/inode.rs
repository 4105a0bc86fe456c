//! Inodes: type, owner, size, times, flags and where the data is.

use alloc::vec::Vec;

use super::dir::FileType;
use super::{Ext4Error, le16, le32};

/// `EXT4_ENCRYPT_FL`.
pub(super) const FLAG_ENCRYPT: u32 = 0x800;
/// `EXT4_INDEX_FL`: an htree directory.
pub(super) const FLAG_INDEX: u32 = 0x1000;
/// `EXT4_EXTENTS_FL`.
pub(super) const FLAG_EXTENTS: u32 = 0x8_0000;
/// `EXT4_INLINE_DATA_FL`.
pub(super) const FLAG_INLINE_DATA: u32 = 0x1000_0000;
/// `EXT4_CASEFOLD_FL`.
pub(super) const FLAG_CASEFOLD: u32 = 0x4000_0000;

const S_IFMT: u16 = 0o170000;
const S_IFREG: u16 = 0o100000;
const S_IFDIR: u16 = 0o040000;
const S_IFLNK: u16 = 0o120000;
const S_IFCHR: u16 = 0o020000;
const S_IFBLK: u16 = 0o060000;
const S_IFIFO: u16 = 0o010000;
const S_IFSOCK: u16 = 0o140000;

/// Seconds and nanoseconds since the epoch.
///
/// See [`Inode`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Timestamp {
    /// Seconds (signed; past 2038 with the extra field's epoch bits).
    pub secs: i64,
    /// Nanoseconds (0 on 128-byte inodes).
    pub nsecs: u32,
}

/// An inode as this reader needs it.
///
/// ```no_run
/// # use mdu_fscrypt::ext4::{Ext4, ROOT_INO};
/// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
/// let root = fs.inode(ROOT_INO)?;
/// println!("mode {:o}, {} bytes, encrypted: {}", root.mode, root.size, root.is_encrypted());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Inode {
    /// Its number.
    pub ino: u32,
    /// `i_mode`: type and permission bits.
    pub mode: u16,
    /// Owner (`i_uid` with its high half).
    pub uid: u32,
    /// Group (`i_gid` with its high half).
    pub gid: u32,
    /// `i_size`.
    pub size: u64,
    /// `i_links_count`.
    pub links: u16,
    /// `i_flags`.
    pub flags: u32,
    /// `i_blocks`: 512-byte sectors allocated (file system blocks with
    /// the `huge_file` inode flag).
    pub blocks: u64,
    /// Last access.
    pub atime: Timestamp,
    /// Last modification.
    pub mtime: Timestamp,
    /// Last status change.
    pub ctime: Timestamp,
    /// `i_block`: the extent tree's root, the block map, a fast symlink's
    /// target or the start of inline data.
    pub block: [u8; 60],
    /// `i_file_acl`: the extended-attribute block, or 0.
    pub file_acl: u64,
    /// The in-inode extended-attribute area (after `i_extra_isize`).
    pub(super) xattr_area: Vec<u8>,
}

impl Inode {
    pub(super) fn parse(ino: u32, raw: &[u8]) -> Result<Inode, Ext4Error> {
        let mut block = [0u8; 60];
        block.copy_from_slice(&raw[0x28..0x64]);
        let extra = if raw.len() > 128 {
            let isize = usize::from(le16(raw, 0x80));
            if 128 + isize > raw.len() || !isize.is_multiple_of(4) {
                return Err(Ext4Error::Inode {
                    ino,
                    field: "i_extra_isize",
                    value: isize as u64,
                });
            }
            isize
        } else {
            0
        };
        let time = |at: usize, extra_at: usize| {
            let base = i64::from(le32(raw, at) as i32);
            if extra_at + 4 <= 128 + extra {
                let x = le32(raw, extra_at);
                Timestamp {
                    secs: base + (i64::from(x & 3) << 32),
                    nsecs: x >> 2,
                }
            } else {
                Timestamp {
                    secs: base,
                    nsecs: 0,
                }
            }
        };
        let xattr_area = raw[(128 + extra).min(raw.len())..].to_vec();
        Ok(Inode {
            ino,
            mode: le16(raw, 0x00),
            uid: u32::from(le16(raw, 0x02)) | (u32::from(le16(raw, 0x78)) << 16),
            gid: u32::from(le16(raw, 0x18)) | (u32::from(le16(raw, 0x7a)) << 16),
            size: u64::from(le32(raw, 0x04)) | (u64::from(le32(raw, 0x6c)) << 32),
            links: le16(raw, 0x1a),
            flags: le32(raw, 0x20),
            blocks: u64::from(le32(raw, 0x1c)) | (u64::from(le16(raw, 0x74)) << 32),
            atime: time(0x08, 0x8c),
            ctime: time(0x0c, 0x84),
            mtime: time(0x10, 0x88),
            block,
            file_acl: u64::from(le32(raw, 0x68)) | (u64::from(le16(raw, 0x76)) << 32),
            xattr_area,
        })
    }

    /// A regular file.
    ///
    /// See [`Inode`].
    pub fn is_file(&self) -> bool {
        self.mode & S_IFMT == S_IFREG
    }

    /// A directory.
    ///
    /// See [`Inode`].
    pub fn is_dir(&self) -> bool {
        self.mode & S_IFMT == S_IFDIR
    }

    /// A symbolic link.
    ///
    /// See [`Inode`].
    pub fn is_symlink(&self) -> bool {
        self.mode & S_IFMT == S_IFLNK
    }

    /// Has the encryption flag (and so an encryption context).
    ///
    /// See [`Inode`].
    pub fn is_encrypted(&self) -> bool {
        self.flags & FLAG_ENCRYPT != 0
    }

    /// An htree-indexed directory.
    ///
    /// See [`Inode`].
    pub fn is_indexed(&self) -> bool {
        self.flags & FLAG_INDEX != 0
    }

    /// A casefolded directory.
    ///
    /// See [`Inode`].
    pub fn is_casefolded(&self) -> bool {
        self.flags & FLAG_CASEFOLD != 0
    }

    /// Data stored in the inode itself.
    ///
    /// See [`Inode`].
    pub fn has_inline_data(&self) -> bool {
        self.flags & FLAG_INLINE_DATA != 0
    }

    /// Data mapped by an extent tree (else a block map).
    ///
    /// See [`Inode`].
    pub fn has_extents(&self) -> bool {
        self.flags & FLAG_EXTENTS != 0
    }

    /// The type its mode says.
    ///
    /// See [`Inode`].
    pub fn file_type(&self) -> FileType {
        match self.mode & S_IFMT {
            S_IFREG => FileType::Regular,
            S_IFDIR => FileType::Dir,
            S_IFLNK => FileType::Symlink,
            S_IFCHR => FileType::CharDev,
            S_IFBLK => FileType::BlockDev,
            S_IFIFO => FileType::Fifo,
            S_IFSOCK => FileType::Socket,
            _ => FileType::Unknown,
        }
    }

    /// A device node's number, (major, minor), as the kernel decodes it
    /// from `i_block`: the old 16-bit form in its first word when that is
    /// not zero, else the new 32-bit form in its second.
    ///
    /// See [`Inode`].
    pub fn device(&self) -> (u32, u32) {
        let old = le32(&self.block, 0);
        if old != 0 {
            return ((old >> 8) & 0xff, old & 0xff);
        }
        let new = le32(&self.block, 4);
        ((new & 0xfff00) >> 8, (new & 0xff) | ((new >> 12) & 0xfff00))
    }

    /// The permission bits (`mode & 0o7777`).
    ///
    /// See [`Inode`].
    pub fn permissions(&self) -> u16 {
        self.mode & 0o7777
    }
}
