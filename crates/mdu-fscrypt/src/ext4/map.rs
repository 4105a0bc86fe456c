//! Where a file's blocks are: extent trees and the block maps of old files.

use alloc::collections::BTreeSet;
use alloc::vec;
use alloc::vec::Vec;

use super::inode::Inode;
use super::{Ext4, Ext4Error, ReadAt, le16, le32};

const EXTENT_MAGIC: u16 = 0xf30a;
/// The kernel's limit on an extent tree's depth.
const MAX_DEPTH: u16 = 5;
/// An extent longer than this is unwritten (its length less this).
const INIT_MAX_LEN: u16 = 32768;

/// A run of a file's logical blocks stored in consecutive physical blocks.
///
/// ```no_run
/// # use mdu_fscrypt::ext4::Ext4;
/// let fs = Ext4::open(std::fs::File::open("disk.img")?)?;
/// let file = fs.inode(12)?;
/// for e in fs.extents(&file)? {
///     println!("{}..{} at {}{}", e.logical, e.logical + e.len, e.physical,
///              if e.unwritten { " (unwritten)" } else { "" });
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// The first logical block.
    pub logical: u64,
    /// The first physical block.
    pub physical: u64,
    /// The number of blocks.
    pub len: u64,
    /// Allocated but never written: reads as zeros.
    pub unwritten: bool,
}

impl<R: ReadAt> Ext4<R> {
    /// The runs of blocks holding `inode`'s data up to its size, in logical
    /// order; blocks not covered are holes (zeros). Empty for inline data
    /// and fast symlinks.
    ///
    /// # Errors
    ///
    /// [`Ext4Error::Inode`] naming the field for an extent tree or block map
    /// that no ext4 file system writes: a bad magic or depth, entries out
    /// of order or overlapping, a block past the file system's end, or a
    /// node met twice (a loop); [`Ext4Error::BlockMappedTwice`] when two runs
    /// (or a run and a node of the tree) share a physical block, so that
    /// no file reads more blocks than the image holds.
    ///
    /// See [`Extent`].
    pub fn extents(&self, inode: &Inode) -> Result<Vec<Extent>, Ext4Error> {
        let limit = inode.size.div_ceil(u64::from(self.block_size()));
        let mut walk = Walk {
            fs: self,
            ino: inode.ino,
            limit,
            out: Vec::new(),
            next_logical: 0,
            seen: BTreeSet::new(),
        };
        if inode.has_inline_data() || limit == 0 {
            return Ok(Vec::new());
        }
        if inode.has_extents() {
            walk.extent_node(&inode.block, None)?;
        } else {
            walk.block_map(&inode.block)?;
        }
        walk.check_disjoint()?;
        Ok(walk.out)
    }
}

struct Walk<'a, R> {
    fs: &'a Ext4<R>,
    ino: u32,
    /// Logical blocks at and past this are beyond the file's size.
    limit: u64,
    out: Vec<Extent>,
    /// Extents must start at or after this (they come in order).
    next_logical: u64,
    /// Tree blocks already read: a legitimate tree never shares one.
    seen: BTreeSet<u64>,
}

impl<R: ReadAt> Walk<'_, R> {
    fn corrupt(&self, field: &'static str, value: u64) -> Ext4Error {
        Ext4Error::Inode {
            ino: self.ino,
            field,
            value,
        }
    }

    /// Every physical block is mapped once: runs do not overlap each
    /// other nor the tree's own nodes.
    fn check_disjoint(&self) -> Result<(), Ext4Error> {
        let twice = |block| Ext4Error::BlockMappedTwice {
            ino: self.ino,
            block,
        };
        let mut spans: Vec<(u64, u64)> = self
            .out
            .iter()
            .map(|e| (e.physical, e.physical + e.len))
            .collect();
        spans.sort_unstable();
        for w in spans.windows(2) {
            if w[1].0 < w[0].1 {
                return Err(twice(w[1].0));
            }
        }
        for &(start, end) in &spans {
            if let Some(&node) = self.seen.range(start..end).next() {
                return Err(twice(node));
            }
        }
        Ok(())
    }

    fn read_node(&mut self, block: u64, field: &'static str) -> Result<Vec<u8>, Ext4Error> {
        if block == 0 || block >= self.fs.sb.blocks_count || !self.seen.insert(block) {
            return Err(self.corrupt(field, block));
        }
        let mut node = vec![0u8; self.fs.block_size() as usize];
        self.fs.read_blocks(block, &mut node)?;
        Ok(node)
    }

    /// Adds a run, clipped to the file's size and merged with the last one
    /// when they continue each other.
    fn push(&mut self, logical: u64, physical: u64, len: u64, unwritten: bool) {
        if logical >= self.limit {
            return;
        }
        let len = len.min(self.limit - logical);
        if let Some(last) = self.out.last_mut()
            && last.unwritten == unwritten
            && last.logical + last.len == logical
            && last.physical + last.len == physical
        {
            last.len += len;
            return;
        }
        self.out.push(Extent {
            logical,
            physical,
            len,
            unwritten,
        });
    }

    fn extent_node(&mut self, node: &[u8], want_depth: Option<u16>) -> Result<(), Ext4Error> {
        let magic = le16(node, 0);
        if magic != EXTENT_MAGIC {
            return Err(self.corrupt("extent header magic", u64::from(magic)));
        }
        let entries = usize::from(le16(node, 2));
        let max = usize::from(le16(node, 4));
        let depth = le16(node, 6);
        if depth > MAX_DEPTH || want_depth.is_some_and(|d| d != depth) {
            return Err(self.corrupt("extent header depth", u64::from(depth)));
        }
        if entries > max || 12 * (1 + max) > node.len() {
            return Err(self.corrupt("extent header entries", entries as u64));
        }
        for e in node[12..12 * (1 + entries)].chunks_exact(12) {
            let logical = u64::from(le32(e, 0));
            if logical < self.next_logical {
                return Err(self.corrupt("extent logical block", logical));
            }
            if logical >= self.limit {
                // The rest maps blocks past the size (preallocated).
                return Ok(());
            }
            if depth == 0 {
                let raw_len = le16(e, 4);
                let (len, unwritten) = if raw_len > INIT_MAX_LEN {
                    (raw_len - INIT_MAX_LEN, true)
                } else {
                    (raw_len, false)
                };
                let physical = u64::from(le32(e, 8)) | (u64::from(le16(e, 6)) << 32);
                if len == 0 {
                    return Err(self.corrupt("extent length", 0));
                }
                if physical == 0
                    || physical
                        .checked_add(u64::from(len))
                        .is_none_or(|end| end > self.fs.sb.blocks_count)
                {
                    return Err(self.corrupt("extent physical block", physical));
                }
                self.next_logical = logical + u64::from(len);
                self.push(logical, physical, u64::from(len), unwritten);
            } else {
                // An index entry's subtree starts at or after its key.
                self.next_logical = logical;
                let child = u64::from(le32(e, 4)) | (u64::from(le16(e, 8)) << 32);
                let child = self.read_node(child, "extent index block")?;
                self.extent_node(&child, Some(depth - 1))?;
            }
        }
        Ok(())
    }

    fn block_map(&mut self, root: &[u8; 60]) -> Result<(), Ext4Error> {
        let per_block = u64::from(self.fs.block_size() / 4);
        let ptr = |i: usize| u64::from(le32(root, 4 * i));
        for i in 0..12 {
            self.map_pointer(ptr(i), i as u64, 0, per_block)?;
        }
        let mut start = 12;
        for (level, slot) in [(1u32, 12usize), (2, 13), (3, 14)] {
            self.map_pointer(ptr(slot), start, level, per_block)?;
            start += per_block.pow(level);
        }
        Ok(())
    }

    /// Maps the subtree under `block`: a data block at `level` 0, else an
    /// indirect block covering `per_block^level` logical blocks from
    /// `logical`.
    fn map_pointer(
        &mut self,
        block: u64,
        logical: u64,
        level: u32,
        per_block: u64,
    ) -> Result<(), Ext4Error> {
        if block == 0 || logical >= self.limit {
            return Ok(());
        }
        if level == 0 {
            if block >= self.fs.sb.blocks_count {
                return Err(self.corrupt("block map entry", block));
            }
            self.push(logical, block, 1, false);
            return Ok(());
        }
        let node = self.read_node(block, "indirect block")?;
        let span = per_block.pow(level - 1);
        for (i, p) in node.chunks_exact(4).enumerate() {
            let at = logical + i as u64 * span;
            if at >= self.limit {
                break;
            }
            self.map_pointer(u64::from(le32(p, 0)), at, level - 1, per_block)?;
        }
        Ok(())
    }
}
