//! The superblock: geometry, features and the directory-hash settings.

use super::hash::HashVersion;
use super::{Ext4Error, le16, le32};

/// The superblock's offset in the image.
pub(super) const OFFSET: u64 = 1024;
/// Its size.
pub(super) const SIZE: usize = 1024;

const MAGIC: u16 = 0xef53;

const INCOMPAT_FILETYPE: u32 = 0x2;
const INCOMPAT_RECOVER: u32 = 0x4;
const INCOMPAT_JOURNAL_DEV: u32 = 0x8;
const INCOMPAT_META_BG: u32 = 0x10;
const INCOMPAT_64BIT: u32 = 0x80;
const INCOMPAT_DIRDATA: u32 = 0x1000;
const INCOMPAT_ENCRYPT: u32 = 0x1_0000;
const INCOMPAT_CASEFOLD: u32 = 0x2_0000;
const COMPAT_DIR_INDEX: u32 = 0x20;
const COMPAT_STABLE_INODES: u32 = 0x800;
const FLAGS_UNSIGNED_HASH: u32 = 0x2;

/// What this reader takes from the superblock.
///
/// ```no_run
/// # use mdu_fscrypt::ext4::Ext4;
/// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
/// let sb = fs.superblock();
/// assert!(sb.encrypt, "mkfs.ext4 -O encrypt");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Superblock {
    /// `s_inodes_count`.
    pub inodes_count: u32,
    /// `s_blocks_count` (64-bit with the `64bit` feature).
    pub blocks_count: u64,
    /// `s_first_data_block`: 1 on 1 KiB-block file systems, else 0.
    pub first_data_block: u32,
    /// The block size in bytes.
    pub block_size: u32,
    /// `s_blocks_per_group`.
    pub blocks_per_group: u32,
    /// `s_inodes_per_group`.
    pub inodes_per_group: u32,
    /// `s_inode_size` (128 on revision 0).
    pub inode_size: u16,
    /// The group descriptor size: 32, or `s_desc_size` with `64bit`.
    pub desc_size: u16,
    /// `s_uuid`: the IV_INO_LBLK policies' key derivation takes it.
    pub uuid: [u8; 16],
    /// `s_hash_seed`, as four words.
    pub hash_seed: [u32; 4],
    /// `s_def_hash_version`, with the unsigned variant `s_flags` selects.
    pub default_hash: HashVersion,
    /// `s_flags` says the hashes read name bytes as unsigned (applies to
    /// the versions stored in indexed directories too).
    pub unsigned_hash: bool,
    /// `dir_index`: directories may be indexed (htree).
    pub dir_index: bool,
    /// `encrypt`.
    pub encrypt: bool,
    /// `casefold`.
    pub casefold: bool,
    /// `stable_inodes` (required by the IV_INO_LBLK policies).
    pub stable_inodes: bool,
    /// `filetype`: directory entries carry the file type.
    pub filetype: bool,
    /// The journal needs recovery: what was last written may be missing
    /// from the blocks this reader sees ([`Ext4::open`](super::Ext4::open)
    /// refuses such an image with [`Ext4Error::NeedsRecovery`]).
    pub needs_recovery: bool,
}

impl Superblock {
    pub(super) fn parse(b: &[u8]) -> Result<Superblock, Ext4Error> {
        let bad = |field, value: u64| Ext4Error::Superblock { field, value };
        let magic = le16(b, 0x38);
        if magic != MAGIC {
            return Err(bad("s_magic", u64::from(magic)));
        }
        let log_block = le32(b, 0x18);
        if log_block > 6 {
            return Err(bad("s_log_block_size", u64::from(log_block)));
        }
        let block_size = 1024u32 << log_block;
        let incompat = le32(b, 0x60);
        let compat = le32(b, 0x5c);
        for (bit, feature) in [
            (INCOMPAT_JOURNAL_DEV, "journal_dev"),
            (INCOMPAT_META_BG, "meta_bg"),
            (INCOMPAT_DIRDATA, "dirdata"),
        ] {
            if incompat & bit != 0 {
                return Err(Ext4Error::Unsupported { feature });
            }
        }
        let is_64bit = incompat & INCOMPAT_64BIT != 0;
        let rev = le32(b, 0x4c);
        let inode_size = if rev == 0 { 128 } else { le16(b, 0x58) };
        if inode_size < 128 || !inode_size.is_power_of_two() || u32::from(inode_size) > block_size {
            return Err(bad("s_inode_size", u64::from(inode_size)));
        }
        let desc_size = if is_64bit { le16(b, 0xfe) } else { 32 };
        if desc_size < 32 || !desc_size.is_power_of_two() || u32::from(desc_size) > block_size {
            return Err(bad("s_desc_size", u64::from(desc_size)));
        }
        let blocks_count = u64::from(le32(b, 0x04))
            | if is_64bit {
                u64::from(le32(b, 0x150)) << 32
            } else {
                0
            };
        let first_data_block = le32(b, 0x14);
        if u64::from(first_data_block) >= blocks_count || first_data_block > 1 {
            return Err(bad("s_first_data_block", u64::from(first_data_block)));
        }
        let blocks_per_group = le32(b, 0x20);
        if blocks_per_group == 0 || blocks_per_group > 8 * block_size {
            return Err(bad("s_blocks_per_group", u64::from(blocks_per_group)));
        }
        let inodes_per_group = le32(b, 0x28);
        if inodes_per_group == 0 || inodes_per_group > 8 * block_size {
            return Err(bad("s_inodes_per_group", u64::from(inodes_per_group)));
        }
        let inodes_count = le32(b, 0x00);
        let groups =
            (blocks_count - u64::from(first_data_block)).div_ceil(u64::from(blocks_per_group));
        if groups > u64::from(u32::MAX)
            || u64::from(inodes_count) > groups * u64::from(inodes_per_group)
        {
            return Err(bad("s_inodes_count", u64::from(inodes_count)));
        }
        let mut uuid = [0u8; 16];
        uuid.copy_from_slice(&b[0x68..0x78]);
        let hash_seed = [le32(b, 0xec), le32(b, 0xf0), le32(b, 0xf4), le32(b, 0xf8)];
        let unsigned = le32(b, 0x160) & FLAGS_UNSIGNED_HASH != 0;
        let default_hash = HashVersion::from_disk(b[0xfc], unsigned);
        Ok(Superblock {
            inodes_count,
            blocks_count,
            first_data_block,
            block_size,
            blocks_per_group,
            inodes_per_group,
            inode_size,
            desc_size,
            uuid,
            hash_seed,
            default_hash,
            unsigned_hash: unsigned,
            dir_index: compat & COMPAT_DIR_INDEX != 0,
            encrypt: incompat & INCOMPAT_ENCRYPT != 0,
            casefold: incompat & INCOMPAT_CASEFOLD != 0,
            stable_inodes: compat & COMPAT_STABLE_INODES != 0,
            filetype: incompat & INCOMPAT_FILETYPE != 0,
            needs_recovery: incompat & INCOMPAT_RECOVER != 0,
        })
    }

    /// The number of block groups.
    ///
    /// See [`Superblock`].
    pub fn group_count(&self) -> u32 {
        // Checked to fit in `parse`.
        (self.blocks_count - u64::from(self.first_data_block))
            .div_ceil(u64::from(self.blocks_per_group)) as u32
    }
}
