//! Directories (linear, htree and inline), symlinks and whole-inode reads.

use alloc::vec;
use alloc::vec::Vec;

use super::hash::{DirHash, HashVersion};
use super::inode::Inode;
use super::xattr::INDEX_SYSTEM;
use super::{Ext4, Ext4Error, ReadAt, le16, le32};

/// A directory entry's file type (`EXT4_FT_*`).
///
/// See [`DirEntry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileType {
    /// 0, or a file system without the `filetype` feature.
    Unknown,
    /// A regular file.
    Regular,
    /// A directory.
    Dir,
    /// A character device.
    CharDev,
    /// A block device.
    BlockDev,
    /// A FIFO.
    Fifo,
    /// A socket.
    Socket,
    /// A symbolic link.
    Symlink,
}

impl FileType {
    fn from_disk(t: u8) -> FileType {
        match t {
            1 => FileType::Regular,
            2 => FileType::Dir,
            3 => FileType::CharDev,
            4 => FileType::BlockDev,
            5 => FileType::Fifo,
            6 => FileType::Socket,
            7 => FileType::Symlink,
            _ => FileType::Unknown,
        }
    }
}

/// One entry of a directory, its name as stored (encrypted in an encrypted
/// directory, except `.` and `..`).
///
/// ```no_run
/// # use mdu_fscrypt::ext4::{Ext4, ROOT_INO};
/// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
/// for e in fs.read_dir(&fs.inode(ROOT_INO)?)? {
///     println!("{:>8} {}", e.ino, String::from_utf8_lossy(&e.name));
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DirEntry {
    /// The inode it names.
    pub ino: u32,
    /// The stored name.
    pub name: Vec<u8>,
    /// The type the entry records.
    pub file_type: FileType,
    /// The hash stored after the name in an encrypted, casefolded
    /// directory (the kernel cannot compute it without the key).
    pub stored_hash: Option<DirHash>,
}

impl DirEntry {
    /// `.` or `..`.
    ///
    /// See [`DirEntry`].
    pub fn is_dot(&self) -> bool {
        self.name == b"." || self.name == b".."
    }
}

impl<R: ReadAt> Ext4<R> {
    /// Every entry of directory `dir`, `.` and `..` included, in the order
    /// stored. Indexed directories are read by scanning their leaf blocks
    /// (the index blocks read as empty entries).
    ///
    /// # Errors
    ///
    /// [`Ext4Error::NotADirectory`]; [`Ext4Error::Inode`] for an entry whose length
    /// fields overrun its block, and the errors of
    /// [`extents`](Self::extents).
    ///
    /// See [`DirEntry`].
    pub fn read_dir(&self, dir: &Inode) -> Result<Vec<DirEntry>, Ext4Error> {
        if !dir.is_dir() {
            return Err(Ext4Error::NotADirectory { ino: dir.ino });
        }
        let hashed = dir.is_encrypted() && dir.is_casefolded();
        let mut out = Vec::new();
        if dir.has_inline_data() {
            // i_block: the parent's number, then entries; more entries in
            // `system.data`.
            out.push(dot(dir.ino, b"."));
            out.push(dot(le32(&dir.block, 0), b".."));
            let size = usize::try_from(dir.size).unwrap_or(usize::MAX);
            let in_inode = &dir.block[4..size.clamp(4, 60)];
            self.parse_entries(dir.ino, in_inode, false, &mut out)?;
            if let Some(tail) = self.inline_tail(dir)? {
                self.parse_entries(dir.ino, &tail, false, &mut out)?;
            }
            return Ok(out);
        }
        let bs = self.block_size() as usize;
        let mut block = vec![0u8; bs];
        for e in self.extents(dir)? {
            if e.unwritten {
                continue;
            }
            for i in 0..e.len {
                self.read_blocks(e.physical + i, &mut block)?;
                self.parse_entries(dir.ino, &block, hashed, &mut out)?;
            }
        }
        Ok(out)
    }

    fn parse_entries(
        &self,
        ino: u32,
        region: &[u8],
        hashed: bool,
        out: &mut Vec<DirEntry>,
    ) -> Result<(), Ext4Error> {
        let corrupt = |field, value: usize| Ext4Error::Inode {
            ino,
            field,
            value: value as u64,
        };
        let filetype = self.sb.filetype;
        let mut at = 0;
        while at + 8 <= region.len() {
            let entry_ino = le32(region, at);
            let mut rec_len = usize::from(le16(region, at + 4));
            if self.block_size() == 65536 && (rec_len == 65535 || rec_len == 0) {
                rec_len = 65536;
            }
            let name_len = if filetype {
                usize::from(region[at + 6])
            } else {
                usize::from(le16(region, at + 6))
            };
            if rec_len < 8 || !rec_len.is_multiple_of(4) || at + rec_len > region.len() {
                return Err(corrupt("directory entry rec_len", rec_len));
            }
            if 8 + name_len > rec_len {
                return Err(corrupt("directory entry name_len", name_len));
            }
            if entry_ino != 0 && name_len != 0 {
                let name = region[at + 8..at + 8 + name_len].to_vec();
                let stored_hash = if hashed && name != b"." && name != b".." {
                    let h = (8 + name_len).next_multiple_of(4);
                    if h + 8 > rec_len {
                        return Err(corrupt("directory entry hash", rec_len));
                    }
                    Some(DirHash {
                        hash: le32(region, at + h),
                        minor_hash: le32(region, at + h + 4),
                    })
                } else {
                    None
                };
                out.push(DirEntry {
                    ino: entry_ino,
                    name,
                    file_type: if filetype {
                        FileType::from_disk(region[at + 7])
                    } else {
                        FileType::Unknown
                    },
                    stored_hash,
                });
            }
            at += rec_len;
        }
        Ok(())
    }

    /// The hash the kernel's `readdir` gives entry `name` of `dir`: the
    /// htree hash for a directory read through the htree path (indexed, or
    /// one block long, on a file system with `dir_index`), the stored hash
    /// in a casefolded encrypted directory, else zeros.
    ///
    /// # Errors
    ///
    /// The read errors of the directory's first block, whose `dx_root`
    /// names the hash of an indexed directory.
    ///
    /// ```no_run
    /// # use mdu_fscrypt::ext4::{Ext4, ROOT_INO};
    /// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
    /// let root = fs.inode(ROOT_INO)?;
    /// let entries = fs.read_dir(&root)?;
    /// let version = fs.readdir_hash(&root)?;
    /// for e in &entries {
    ///     println!("{:08x}", fs.entry_hash(version, e).hash);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn readdir_hash(&self, dir: &Inode) -> Result<Option<HashVersion>, Ext4Error> {
        let bs = u64::from(self.block_size());
        if !self.sb.dir_index || !(dir.is_indexed() || dir.size == bs || dir.has_inline_data()) {
            return Ok(None);
        }
        if !dir.is_indexed() {
            return Ok(Some(self.sb.default_hash));
        }
        let first = self
            .extents(dir)?
            .into_iter()
            .find(|e| e.logical == 0 && !e.unwritten)
            .ok_or(Ext4Error::Inode {
                ino: dir.ino,
                field: "dx_root block",
                value: 0,
            })?;
        let mut block = vec![0u8; bs as usize];
        self.read_blocks(first.physical, &mut block)?;
        Ok(Some(HashVersion::from_disk(
            block[0x1c],
            self.sb.unsigned_hash,
        )))
    }

    /// The hash of `entry` for a directory whose [`readdir_hash`] is
    /// `version`.
    ///
    /// [`readdir_hash`]: Self::readdir_hash
    ///
    /// See [`readdir_hash`](Self::readdir_hash).
    pub fn entry_hash(&self, version: Option<HashVersion>, entry: &DirEntry) -> DirHash {
        if let Some(h) = entry.stored_hash {
            return h;
        }
        match version {
            Some(v) => DirHash::new(v, self.sb.hash_seed, &entry.name),
            None => DirHash::default(),
        }
    }

    /// The whole of `inode`'s data (holes and unwritten extents as zeros),
    /// cut to its size: a directory, a symlink's target or payload, a
    /// small file. Inline data and fast symlinks come from the inode.
    ///
    /// # Errors
    ///
    /// [`Ext4Error::Inode`] with field `i_size` when the size passes what the
    /// image can hold, and with field `symlink i_size` for a symlink of a
    /// block or more, or of more than [`SYMLINK_MAX`] bytes (the kernel
    /// writes neither, nor reads past the first block less one byte); the
    /// errors of [`extents`](Self::extents).
    ///
    /// ```no_run
    /// # use mdu_fscrypt::ext4::Ext4;
    /// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
    /// let link = fs.inode(14)?;
    /// println!("{}", String::from_utf8_lossy(&fs.read_all(&link)?));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_all(&self, inode: &Inode) -> Result<Vec<u8>, Ext4Error> {
        let too_big = Ext4Error::Inode {
            ino: inode.ino,
            field: "i_size",
            value: inode.size,
        };
        if inode.size > self.size {
            return Err(too_big);
        }
        if inode.is_symlink()
            && (inode.size >= u64::from(self.block_size()) || inode.size > SYMLINK_MAX)
        {
            return Err(Ext4Error::Inode {
                ino: inode.ino,
                field: "symlink i_size",
                value: inode.size,
            });
        }
        let size = inode.size as usize;
        if inode.has_inline_data() || self.is_fast_symlink(inode) {
            let mut data = inode.block[..size.min(60)].to_vec();
            if size > 60 {
                let tail = self.inline_tail(inode)?.unwrap_or_default();
                data.extend_from_slice(&tail[..tail.len().min(size - 60)]);
            }
            if data.len() != size {
                return Err(too_big);
            }
            return Ok(data);
        }
        let bs = self.block_size() as usize;
        let mut data = vec![0u8; size.next_multiple_of(bs)];
        for e in self.extents(inode)? {
            if e.unwritten {
                continue;
            }
            let start = e.logical as usize * bs;
            let end = start + e.len as usize * bs;
            self.read_blocks(e.physical, &mut data[start..end])?;
        }
        data.truncate(size);
        Ok(data)
    }

    /// `system.data`, the tail of inline data: only in the inode's own
    /// attribute area, where the kernel looks for it (so its size is
    /// bounded by the inode's).
    fn inline_tail(&self, inode: &Inode) -> Result<Option<Vec<u8>>, Ext4Error> {
        self.xattr_in_inode(inode, INDEX_SYSTEM, b"data")
    }

    /// A symlink whose target sits in `i_block`: no data blocks besides
    /// an attribute block (the kernel's `ext4_inode_is_fast_symlink`).
    fn is_fast_symlink(&self, inode: &Inode) -> bool {
        let xattr_sectors = if inode.file_acl != 0 {
            u64::from(self.block_size() / 512)
        } else {
            0
        };
        inode.is_symlink() && !inode.has_inline_data() && inode.blocks == xattr_sectors
    }
}

/// The longest symlink `i_size`: a target of at most `PATH_MAX - 1` (4095)
/// bytes, or, encrypted, 2 length bytes and at most 4096 bytes of padded
/// ciphertext.
pub const SYMLINK_MAX: u64 = 4098;

fn dot(ino: u32, name: &[u8]) -> DirEntry {
    DirEntry {
        ino,
        name: name.to_vec(),
        file_type: FileType::Dir,
        stored_hash: None,
    }
}
