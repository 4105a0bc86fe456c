//! Extended attributes: in the inode after `i_extra_isize`, and in the
//! block `i_file_acl` names. The encryption context is index 9, name `c`.

use alloc::vec;
use alloc::vec::Vec;

use super::inode::Inode;
use super::{Ext4, Ext4Error, ReadAt, le16, le32};

const MAGIC: u32 = 0xea02_0000;
/// `EXT4_XATTR_INDEX_ENCRYPTION`.
pub(super) const INDEX_ENCRYPTION: u8 = 9;
/// `EXT4_XATTR_INDEX_SYSTEM` (`system.data` holds inline data's tail).
pub(super) const INDEX_SYSTEM: u8 = 7;

impl<R: ReadAt> Ext4<R> {
    /// The value of the extended attribute `name` in namespace `index`
    /// (9 is the encryption context, name `c`), looked up in the inode and
    /// then in its attribute block.
    ///
    /// # Errors
    ///
    /// [`Ext4Error::Inode`] for an attribute area or block whose entries overrun
    /// it, or a value kept in an inode of its own (`ea_inode`, never used for
    /// the small values read here).
    ///
    /// ```no_run
    /// # use mdu_fscrypt::ext4::Ext4;
    /// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
    /// let dir = fs.inode(12)?;
    /// if let Some(ctx) = fs.xattr(&dir, 9, b"c")? {
    ///     println!("encryption context: {} bytes", ctx.len());
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn xattr(
        &self,
        inode: &Inode,
        index: u8,
        name: &[u8],
    ) -> Result<Option<Vec<u8>>, Ext4Error> {
        let found = self.xattr_in_inode(inode, index, name)?;
        if found.is_some() {
            return Ok(found);
        }
        if inode.file_acl == 0 {
            return Ok(None);
        }
        if inode.file_acl >= self.sb.blocks_count {
            return Err(Ext4Error::Inode {
                ino: inode.ino,
                field: "i_file_acl",
                value: inode.file_acl,
            });
        }
        let mut block = vec![0u8; self.block_size() as usize];
        self.read_blocks(inode.file_acl, &mut block)?;
        let magic = le32(&block, 0);
        if magic != MAGIC {
            return Err(Ext4Error::Inode {
                ino: inode.ino,
                field: "xattr block magic",
                value: u64::from(magic),
            });
        }
        // Entries from byte 32; value offsets count from the block's start.
        find(inode.ino, &block, 32, index, name)
    }
}

impl<R: ReadAt> Ext4<R> {
    /// The attribute `name` of namespace `index` in the inode's own area
    /// only.
    pub(super) fn xattr_in_inode(
        &self,
        inode: &Inode,
        index: u8,
        name: &[u8],
    ) -> Result<Option<Vec<u8>>, Ext4Error> {
        let area = &inode.xattr_area;
        if area.len() >= 4 && le32(area, 0) == MAGIC {
            // Value offsets count from the first entry.
            return find(inode.ino, &area[4..], 0, index, name);
        }
        Ok(None)
    }
}

/// Looks `name` up in the entries of `region` from `first`; value offsets
/// are relative to the start of `region`.
fn find(
    ino: u32,
    region: &[u8],
    first: usize,
    index: u8,
    name: &[u8],
) -> Result<Option<Vec<u8>>, Ext4Error> {
    let corrupt = |field, value: usize| Ext4Error::Inode {
        ino,
        field,
        value: value as u64,
    };
    let mut at = first;
    // The list ends with four zero bytes, or where the region ends.
    while at + 4 <= region.len() && le32(region, at) != 0 {
        if at + 16 > region.len() {
            return Err(corrupt("xattr entry", at));
        }
        let name_len = usize::from(region[at]);
        let entry_index = region[at + 1];
        let value_offs = usize::from(le16(region, at + 2));
        let value_inum = le32(region, at + 4);
        let value_size = le32(region, at + 8) as usize;
        let end = at + 16 + name_len;
        let entry_name = region.get(at + 16..end).ok_or(corrupt("xattr name", at))?;
        if entry_index == index && entry_name == name {
            if value_inum != 0 {
                return Err(corrupt("xattr value inode", value_inum as usize));
            }
            let value = value_offs
                .checked_add(value_size)
                .and_then(|stop| region.get(value_offs..stop))
                .ok_or(corrupt("xattr value offset", value_offs))?;
            return Ok(Some(value.to_vec()));
        }
        at = end.next_multiple_of(4);
    }
    Ok(None)
}
