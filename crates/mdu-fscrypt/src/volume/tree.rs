//! A whole tree walked at once, with the loop and name rules inside the library.

use super::*;

/// What one node of a [`Tree`] is.
///
/// See [`Volume::walk`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeKind {
    /// A directory.
    Dir,
    /// A regular file: its key is given and its block map valid.
    File,
    /// A symlink: its target is in [`Tree::target`].
    Symlink,
    /// A FIFO, a socket, a character or block device (the type is its
    /// inode's [`Inode::file_type`]).
    Special,
}

/// One entry of a [`Tree`].
///
/// See [`Volume::walk`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Node {
    /// The index of its directory in [`Tree::nodes`] (`None`: the top).
    pub parent: Option<usize>,
    /// Its name in that directory, as listed (empty for the top).
    pub name: Vec<u8>,
    /// Its inode.
    pub ino: u32,
    /// What it is.
    pub kind: NodeKind,
}

/// A directory tree, every part of it checked: what [`Volume::walk`]
/// returns. Directories come before what they hold.
///
/// See [`Volume::walk`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tree {
    /// The top directory first, then every entry under it (`.` and `..`
    /// left out), breadth first.
    pub nodes: Vec<Node>,
    /// Symlink targets, once per symlink inode.
    targets: BTreeMap<u32, Vec<u8>>,
}

impl Tree {
    /// The path of node `i` below the top, its components joined by `/`
    /// (empty for the top).
    ///
    /// See [`Volume::walk`].
    pub fn path(&self, i: usize) -> Vec<u8> {
        let mut parts = Vec::new();
        let mut at = Some(i);
        while let Some(n) = at.and_then(|n| self.nodes.get(n)) {
            if n.parent.is_some() {
                parts.push(&n.name[..]);
            }
            at = n.parent;
        }
        parts.reverse();
        parts.join(&b'/')
    }

    /// The target of symlink inode `ino`.
    ///
    /// See [`Volume::walk`].
    pub fn target(&self, ino: u32) -> Option<&[u8]> {
        self.targets.get(&ino).map(Vec::as_slice)
    }
}

impl<R: ReadAt> Volume<R> {
    /// Every entry under directory `top`, checked as a whole before the
    /// caller writes anything: every name (decrypted with its key, or as
    /// a no-key name) valid and unique in its directory, every directory
    /// reached once, no directory block shared with another directory,
    /// every regular file's key given and its block map valid, every
    /// symlink's target read. Memory stays proportional to the
    /// directories' blocks: a file or symlink with many names is checked
    /// once, its target kept once.
    ///
    /// # Errors
    ///
    /// [`VolumeError::NotADirectory`] when `top` is not one;
    /// [`VolumeError::BadName`], [`VolumeError::DuplicateName`],
    /// [`VolumeError::DirectoryLoop`], [`VolumeError::BadTarget`]; a directory block
    /// shared by two directories as [`ext4::Ext4Error::BlockMappedTwice`];
    /// the errors of [`list`](Self::list), [`contents`](Self::contents)
    /// and [`read_link`](Self::read_link).
    ///
    /// ```no_run
    /// use mdu_fscrypt::key::MasterKey;
    /// use mdu_fscrypt::volume::{Keyring, Volume};
    ///
    /// let mut keys = Keyring::new();
    /// keys.add(MasterKey::new(&std::fs::read("master.key")?)?);
    /// let vol = Volume::open(std::fs::File::open("disk.img")?, keys)?;
    /// let tree = vol.walk(vol.lookup(b"vault")?)?;
    /// for i in 0..tree.nodes.len() {
    ///     println!("{}", String::from_utf8_lossy(&tree.path(i)));
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn walk(&self, top: u32) -> Result<Tree, VolumeError> {
        let top_inode = self.fs.inode(top)?;
        if !top_inode.is_dir() {
            return Err(VolumeError::NotADirectory {
                path: alloc::format!("inode {top}"),
            });
        }
        let mut tree = Tree {
            nodes: vec![Node {
                parent: None,
                name: Vec::new(),
                ino: top,
                kind: NodeKind::Dir,
            }],
            targets: BTreeMap::new(),
        };
        let mut dirs_seen = BTreeSet::from([top]);
        let mut files_seen = BTreeSet::new();
        // Directory blocks met so far: start -> end.
        let mut dir_blocks: BTreeMap<u64, u64> = BTreeMap::new();
        let mut i = 0;
        while i < tree.nodes.len() {
            if tree.nodes[i].kind != NodeKind::Dir {
                i += 1;
                continue;
            }
            let dir = tree.nodes[i].ino;
            let inode = self.fs.inode(dir)?;
            if !inode.has_inline_data() {
                for e in self.fs.extents(&inode)? {
                    let (start, end) = (e.physical, e.physical + e.len);
                    // The met runs are disjoint: only the last one that
                    // starts before this one ends can overlap it.
                    let before = dir_blocks.range(..end).next_back();
                    if let Some((&prev_start, _)) = before.filter(|&(_, &pe)| pe > start) {
                        return Err(VolumeError::Ext4(ext4::Ext4Error::BlockMappedTwice {
                            ino: dir,
                            block: start.max(prev_start),
                        }));
                    }
                    dir_blocks.insert(start, end);
                }
            }
            let mut names = BTreeSet::new();
            for e in self.list(dir)? {
                if e.form == NameForm::Clear && (e.name == b"." || e.name == b"..") {
                    continue;
                }
                let bad = e.name.is_empty()
                    || e.name.len() > crate::names::NAME_MAX
                    || e.name.contains(&b'/')
                    || e.name.contains(&0)
                    || e.name == b"."
                    || e.name == b"..";
                if bad {
                    return Err(VolumeError::BadName { dir, name: e.name });
                }
                if !names.insert(e.name.clone()) {
                    return Err(VolumeError::DuplicateName { dir, name: e.name });
                }
                let child = self.fs.inode(e.ino)?;
                let kind = match child.file_type() {
                    FileType::Dir => {
                        if !dirs_seen.insert(e.ino) {
                            return Err(VolumeError::DirectoryLoop { ino: e.ino });
                        }
                        NodeKind::Dir
                    }
                    FileType::Regular => {
                        if files_seen.insert(e.ino) {
                            self.contents(&child)?;
                        }
                        NodeKind::File
                    }
                    FileType::Symlink => {
                        if let alloc::collections::btree_map::Entry::Vacant(slot) =
                            tree.targets.entry(e.ino)
                        {
                            let target = self.read_link(&child)?;
                            if target.is_empty() || target.contains(&0) {
                                return Err(VolumeError::BadTarget { ino: e.ino });
                            }
                            slot.insert(target);
                        }
                        NodeKind::Symlink
                    }
                    _ => NodeKind::Special,
                };
                tree.nodes.push(Node {
                    parent: Some(i),
                    name: e.name,
                    ino: e.ino,
                    kind,
                });
            }
            i += 1;
        }
        Ok(tree)
    }
}
