//! An ext4 image read as the kernel presents it: names decrypted where the
//! key is given and shown as no-key names where it is not, file contents
//! decrypted block run by block run, symlink targets.

use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicU8, AtomicU32, Ordering};

use crate::ext4::{self, DirEntry, Ext4, Extent, FileType, Inode, ROOT_INO, ReadAt};
use crate::key::{KeyIdentifier, MasterKey};
use crate::nokey::NoKeyName;
use crate::policy::{Context, KeySpec, PolicyError};
use crate::{ContentsCipher, FsInfo, NamesCipher};

/// The master keys a reader was given: v2 keys by their identifier, v1
/// keys by the descriptor their owner chose.
///
/// ```
/// use mdu_fscrypt::key::MasterKey;
/// use mdu_fscrypt::volume::Keyring;
///
/// let mut keys = Keyring::new();
/// let id = keys.add(MasterKey::new(&[7; 64])?);
/// assert_eq!(keys.identifiers().collect::<Vec<_>>(), [id]);
/// # Ok::<(), mdu_fscrypt::key::KeyError>(())
/// ```
#[derive(Debug, Default)]
pub struct Keyring {
    v2: Vec<(KeyIdentifier, MasterKey)>,
    v1: Vec<([u8; 8], MasterKey)>,
}

impl Keyring {
    /// No keys: names are shown as the kernel shows them without a key.
    ///
    /// See [`Keyring`].
    pub fn new() -> Keyring {
        Keyring::default()
    }

    /// Adds a v2 master key; returns its identifier.
    ///
    /// See [`Keyring`].
    pub fn add(&mut self, key: MasterKey) -> KeyIdentifier {
        let id = key.identifier();
        self.v2.push((id, key));
        id
    }

    /// Adds a v1 master key under `descriptor`.
    ///
    /// ```
    /// use mdu_fscrypt::key::MasterKey;
    /// use mdu_fscrypt::volume::Keyring;
    ///
    /// let mut keys = Keyring::new();
    /// keys.add_v1(*b"\x01\x23\x45\x67\x89\xab\xcd\xef", MasterKey::new(&[9; 64])?);
    /// assert!(!keys.is_empty());
    /// # Ok::<(), mdu_fscrypt::key::KeyError>(())
    /// ```
    pub fn add_v1(&mut self, descriptor: [u8; 8], key: MasterKey) {
        self.v1.push((descriptor, key));
    }

    /// No key at all.
    ///
    /// See [`add_v1`](Self::add_v1).
    pub fn is_empty(&self) -> bool {
        self.v1.is_empty() && self.v2.is_empty()
    }

    /// The identifiers of the v2 keys.
    ///
    /// See [`Keyring`].
    pub fn identifiers(&self) -> impl Iterator<Item = KeyIdentifier> + '_ {
        self.v2.iter().map(|(id, _)| *id)
    }

    /// The key `spec` names, if given.
    ///
    /// See [`Keyring`].
    pub fn find(&self, spec: &KeySpec) -> Option<&MasterKey> {
        match spec {
            KeySpec::V2 { identifier } => self
                .v2
                .iter()
                .find(|(id, _)| id.0 == *identifier)
                .map(|(_, k)| k),
            KeySpec::V1 { descriptor } => self
                .v1
                .iter()
                .find(|(d, _)| d == descriptor)
                .map(|(_, k)| k),
        }
    }

    fn given(&self) -> Vec<KeySpec> {
        let v2 = self
            .v2
            .iter()
            .map(|(id, _)| KeySpec::V2 { identifier: id.0 });
        let v1 = self.v1.iter().map(|(d, _)| KeySpec::V1 { descriptor: *d });
        v2.chain(v1).collect()
    }
}

/// What went wrong reading an encrypted tree: the image, its fscrypt
/// metadata, a missing key, or a path.
///
/// ```
/// use mdu_fscrypt::volume::Error;
///
/// let e = Error::NotFound { path: "a/b".into() };
/// assert_eq!(e.to_string(), "a/b: no such file or directory");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The ext4 structures.
    Ext4(ext4::Error),
    /// An inode with the encryption flag and no context, or a context the
    /// kernel would not accept.
    Context {
        /// The inode.
        ino: u32,
        /// Why (`None`: no context at all).
        error: Option<PolicyError>,
    },
    /// An encrypted inode flagged as holding its data inline: the kernel
    /// never stores an encrypted file, directory or symlink inline (it
    /// converts inline data before setting a policy), and such bytes would
    /// be read unencrypted, as whoever made the image chose them.
    EncryptedInline {
        /// The inode.
        ino: u32,
    },
    /// Keys were given, but not the one this inode's policy names.
    KeyMissing {
        /// The inode.
        ino: u32,
        /// The key its policy names.
        wanted: KeySpec,
        /// The keys given.
        given: Vec<KeySpec>,
    },
    /// The contents of an encrypted file, asked for without any key.
    NoKey {
        /// The inode.
        ino: u32,
    },
    /// The fscrypt layer refused an inode: a name or symlink that does not
    /// decrypt, a policy this crate does not implement, a key too short.
    Crypto {
        /// The inode (the directory, for a name).
        ino: u32,
        /// Why.
        error: crate::Error,
    },
    /// No entry of that name.
    NotFound {
        /// The path, as given.
        path: String,
    },
    /// A path that goes through something not a directory.
    NotADirectory {
        /// The path up to it.
        path: String,
    },
    /// An entry whose name no file can have where it is written out:
    /// empty, with a `/` or a NUL, or `.` or `..`.
    BadName {
        /// The directory.
        dir: u32,
        /// The name, as listed.
        name: Vec<u8>,
    },
    /// Two entries of one directory with the same name.
    DuplicateName {
        /// The directory.
        dir: u32,
        /// The name, as listed.
        name: Vec<u8>,
    },
    /// A directory reached twice in one walk: a loop, or a directory with
    /// two names (which no ext4 file system has).
    DirectoryLoop {
        /// The directory.
        ino: u32,
    },
    /// A symlink whose target is empty or holds a NUL.
    BadTarget {
        /// The symlink.
        ino: u32,
    },
}

impl From<ext4::Error> for Error {
    fn from(e: ext4::Error) -> Error {
        Error::Ext4(e)
    }
}

struct Spec<'a>(&'a KeySpec);

impl fmt::Display for Spec<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            KeySpec::V2 { identifier } => write!(f, "{}", KeyIdentifier(*identifier)),
            KeySpec::V1 { descriptor } => {
                f.write_str("v1 descriptor ")?;
                descriptor.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Ext4(e) => e.fmt(f),
            Error::Context { ino, error: None } => {
                write!(f, "inode {ino}: encrypted, but has no encryption context")
            }
            Error::Context {
                ino,
                error: Some(e),
            } => write!(f, "inode {ino}: encryption context: {e}"),
            Error::EncryptedInline { ino } => write!(
                f,
                "inode {ino}: encrypted and flagged inline data, which the kernel never writes \
                 (its bytes would not be decrypted): a damaged or hostile image"
            ),
            Error::KeyMissing { ino, wanted, given } => {
                write!(
                    f,
                    "inode {ino} is encrypted with key {}; the keys given are ",
                    Spec(wanted)
                )?;
                for (i, g) in given.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{}", Spec(g))?;
                }
                Ok(())
            }
            Error::NoKey { ino } => {
                write!(f, "inode {ino} is encrypted: its contents need its key")
            }
            Error::Crypto {
                ino,
                error: crate::Error::InvalidName,
            } => write!(
                f,
                "inode {ino}: a name or symlink target does not decrypt to a valid one: the key is wrong (a v1 key cannot be checked any other way) or the image is damaged"
            ),
            Error::Crypto { ino, error } => write!(f, "inode {ino}: {error}"),
            Error::NotFound { path } => write!(f, "{path}: no such file or directory"),
            Error::NotADirectory { path } => write!(f, "{path}: not a directory"),
            Error::BadName { dir, name } => write!(
                f,
                "directory inode {dir}: an entry named {:?} cannot be written out (a name is \
                 1 to 255 bytes, without '/' or NUL, and not . or ..)",
                String::from_utf8_lossy(name)
            ),
            Error::DuplicateName { dir, name } => write!(
                f,
                "directory inode {dir}: two entries are named {:?}: a damaged image",
                String::from_utf8_lossy(name)
            ),
            Error::DirectoryLoop { ino } => write!(
                f,
                "directory inode {ino} is reached twice: a loop in a damaged image"
            ),
            Error::BadTarget { ino } => write!(
                f,
                "symlink inode {ino}: its target is empty or holds a NUL: a damaged image"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// How an entry's name was obtained.
///
/// See [`Entry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameForm {
    /// Stored in clear (an unencrypted directory, `.` and `..`).
    Clear,
    /// Decrypted with the directory's key.
    Decrypted,
    /// The no-key name the kernel shows without the key.
    NoKey,
}

/// A directory entry as the kernel lists it.
///
/// See [`Volume::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Entry {
    /// The name shown: clear, decrypted, or the no-key name.
    pub name: Vec<u8>,
    /// How `name` was obtained.
    pub form: NameForm,
    /// The inode.
    pub ino: u32,
    /// The type the entry records.
    pub file_type: FileType,
    /// The name as stored on disk.
    pub stored: Vec<u8>,
}

/// An ext4 image and the keys to read it with.
///
/// ```no_run
/// use mdu_fscrypt::key::MasterKey;
/// use mdu_fscrypt::volume::{Keyring, Volume};
///
/// let mut keys = Keyring::new();
/// keys.add(MasterKey::new(&std::fs::read("master.key")?)?);
/// let vol = Volume::open(std::fs::File::open("disk.img")?, keys)?;
/// let dir = vol.lookup(b"/vault")?;
/// for e in vol.list(dir)? {
///     println!("{}", String::from_utf8_lossy(&e.name));
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Volume<R> {
    fs: Ext4<R>,
    keys: Keyring,
    info: FsInfo,
    /// Per v1 key (in the keyring's order): what its check through the
    /// names found, once it was first needed.
    v1_checks: Vec<V1Check>,
}

/// A v1 key has no identifier to check: it is checked once, the first
/// time an inode needs it, through the names it decrypts. A stored name
/// of `L` bytes passes under a wrong key with a probability of about
/// `(254/256)^L`, so one directory alone may not tell; the check reads
/// names under that key from the directory first asking for it, then
/// breadth-first from the root, until it has checked
/// [`V1_CHECK_BYTES`] bytes of names (a wrong key then passes with a
/// probability under 10^-6) or read [`V1_CHECK_DIRS`] directories.
#[derive(Debug, Default)]
struct V1Check {
    /// 0: not checked yet, 1: no name refused it, 2: refused.
    state: AtomicU8,
    /// The directory or symlink whose name refused it.
    refused_by: AtomicU32,
}

/// Bytes of stored names under one v1 key its check reads, at most.
const V1_CHECK_BYTES: usize = 2048;
/// Directories its check reads, at most.
const V1_CHECK_DIRS: usize = 1024;

impl<R: ReadAt> Volume<R> {
    /// Opens the file system in `image`, to be read with `keys` (none:
    /// names as no-key names, contents refused).
    ///
    /// # Errors
    ///
    /// The errors of [`Ext4::open`].
    ///
    /// See [`Volume`].
    pub fn open(image: R, keys: Keyring) -> Result<Volume<R>, Error> {
        let fs = Ext4::open(image)?;
        let info = FsInfo {
            uuid: fs.superblock().uuid,
            block_size: fs.block_size(),
        };
        let v1_checks = keys.v1.iter().map(|_| V1Check::default()).collect();
        Ok(Volume {
            fs,
            keys,
            info,
            v1_checks,
        })
    }

    /// The ext4 layer.
    ///
    /// See [`Volume`].
    pub fn ext4(&self) -> &Ext4<R> {
        &self.fs
    }

    /// What key derivation and IVs need of the file system.
    ///
    /// See [`Volume`].
    pub fn info(&self) -> &FsInfo {
        &self.info
    }

    /// Reads inode `ino`.
    ///
    /// # Errors
    ///
    /// As for [`Ext4::inode`].
    ///
    /// See [`Volume`].
    pub fn inode(&self, ino: u32) -> Result<Inode, Error> {
        Ok(self.fs.inode(ino)?)
    }

    /// The encryption context of `inode`: `None` when it is not encrypted.
    ///
    /// # Errors
    ///
    /// [`Error::Context`] for the encryption flag without a context, or a
    /// context the kernel would not accept; [`Error::EncryptedInline`] for
    /// an encrypted inode flagged inline data.
    ///
    /// See [`Volume`].
    pub fn context(&self, inode: &Inode) -> Result<Option<Context>, Error> {
        if !inode.is_encrypted() {
            return Ok(None);
        }
        if inode.has_inline_data() {
            return Err(Error::EncryptedInline { ino: inode.ino });
        }
        let raw = self.fs.encryption_context(inode)?.ok_or(Error::Context {
            ino: inode.ino,
            error: None,
        })?;
        Context::parse(&raw).map(Some).map_err(|e| Error::Context {
            ino: inode.ino,
            error: Some(e),
        })
    }

    /// The key for `ctx`: `Ok(None)` when no keys were given at all. A v1
    /// key is checked through its names the first time (see [`V1Check`]).
    fn key(&self, ino: u32, ctx: &Context) -> Result<Option<&MasterKey>, Error> {
        let wanted = ctx.policy().key();
        if let KeySpec::V1 { descriptor } = wanted
            && let Some(i) = self.keys.v1.iter().position(|(d, _)| *d == descriptor)
        {
            self.check_v1(i, ino)?;
            return Ok(Some(&self.keys.v1[i].1));
        }
        match self.keys.find(&wanted) {
            Some(k) => Ok(Some(k)),
            None if self.keys.is_empty() => Ok(None),
            None => Err(Error::KeyMissing {
                ino,
                wanted,
                given: self.keys.given(),
            }),
        }
    }

    /// Checks v1 key `i` once (see [`V1Check`]), starting from inode
    /// `from`.
    fn check_v1(&self, i: usize, from: u32) -> Result<(), Error> {
        let check = &self.v1_checks[i];
        let state = match check.state.load(Ordering::Acquire) {
            0 => {
                // Threads that race here reach the same verdict.
                let (descriptor, master) = &self.keys.v1[i];
                match self.probe_v1(*descriptor, master, from) {
                    Ok(()) => check.state.store(1, Ordering::Release),
                    Err(ino) => {
                        check.refused_by.store(ino, Ordering::Relaxed);
                        check.state.store(2, Ordering::Release);
                    }
                }
                check.state.load(Ordering::Acquire)
            }
            s => s,
        };
        if state == 2 {
            return Err(Error::Crypto {
                ino: check.refused_by.load(Ordering::Relaxed),
                error: crate::Error::InvalidName,
            });
        }
        Ok(())
    }

    /// Decrypts the names (and symlink targets) under the v1 key
    /// `descriptor` from directory `from` on, then from the root; `Err`
    /// names the inode whose name did not decrypt to a valid one. Parts of
    /// the image that cannot be read are passed over: reading them later
    /// reports them.
    fn probe_v1(&self, descriptor: [u8; 8], master: &MasterKey, from: u32) -> Result<(), u32> {
        let under_key = |inode: &Inode| -> Option<NamesCipher> {
            let ctx = self.context(inode).ok()??;
            if ctx.policy().key() != (KeySpec::V1 { descriptor }) {
                return None;
            }
            NamesCipher::new(master, &ctx, u64::from(inode.ino), &self.info).ok()
        };
        let mut queue = VecDeque::from([from, ROOT_INO]);
        let mut seen = BTreeSet::new();
        let (mut checked, mut dirs) = (0, 0);
        while let Some(ino) = queue.pop_front() {
            if checked >= V1_CHECK_BYTES || dirs >= V1_CHECK_DIRS {
                break;
            }
            if !seen.insert(ino) {
                continue;
            }
            let Ok(dir) = self.fs.inode(ino) else {
                continue;
            };
            if !dir.is_dir() {
                continue;
            }
            dirs += 1;
            let Ok(entries) = self.fs.read_dir(&dir) else {
                continue;
            };
            let cipher = under_key(&dir);
            for e in entries.iter().filter(|e| !e.is_dot()) {
                if let Some(c) = &cipher {
                    c.decrypt_name(&e.name).map_err(|_| ino)?;
                    checked += e.name.len();
                }
                match e.file_type {
                    FileType::Dir | FileType::Unknown => queue.push_back(e.ino),
                    FileType::Symlink if cipher.is_some() => {
                        let Ok(link) = self.fs.inode(e.ino) else {
                            continue;
                        };
                        let (Some(c), Ok(payload)) = (under_key(&link), self.fs.read_all(&link))
                        else {
                            continue;
                        };
                        c.decrypt_symlink(&payload).map_err(|_| e.ino)?;
                        checked += payload.len().saturating_sub(3);
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    fn names_cipher(&self, inode: &Inode) -> Result<Option<NamesCipher>, Error> {
        let Some(ctx) = self.context(inode)? else {
            return Ok(None);
        };
        let Some(master) = self.key(inode.ino, &ctx)? else {
            return Ok(None);
        };
        NamesCipher::new(master, &ctx, u64::from(inode.ino), &self.info)
            .map(Some)
            .map_err(|error| Error::Crypto {
                ino: inode.ino,
                error,
            })
    }

    /// The entries of directory `dir` (`.` and `..` included), named as
    /// the kernel lists them.
    ///
    /// # Errors
    ///
    /// [`Error::KeyMissing`] when keys were given but not this directory's;
    /// [`Error::Crypto`] for a stored name that cannot exist (shorter than
    /// 16 bytes) or does not decrypt to a valid name; the image's errors.
    ///
    /// See [`Volume`].
    pub fn list(&self, dir: u32) -> Result<Vec<Entry>, Error> {
        let inode = self.fs.inode(dir)?;
        let entries = self.fs.read_dir(&inode)?;
        if !inode.is_encrypted() {
            return Ok(entries
                .into_iter()
                .map(|e| entry(e, NameForm::Clear))
                .collect());
        }
        let cipher = self.names_cipher(&inode)?;
        let version = match cipher {
            Some(_) => None,
            None => self.fs.readdir_hash(&inode)?,
        };
        let crypto = |error| Error::Crypto { ino: dir, error };
        entries
            .into_iter()
            .map(|e| {
                if e.is_dot() {
                    return Ok(entry(e, NameForm::Clear));
                }
                if e.name.len() < 16 {
                    return Err(crypto(crate::Error::CiphertextLength {
                        len: e.name.len(),
                        max: crate::names::NAME_MAX,
                    }));
                }
                let (name, form) = match &cipher {
                    Some(c) => {
                        let name = c.decrypt_name(&e.name).map_err(crypto)?;
                        // Stored in clear when genuine: encrypted, they
                        // are a hostile image's path traversal.
                        if name == b"." || name == b".." {
                            return Err(crypto(crate::Error::InvalidName));
                        }
                        (name, NameForm::Decrypted)
                    }
                    None => {
                        let h = self.fs.entry_hash(version, &e);
                        let shown = NoKeyName::new(h.hash, h.minor_hash, &e.name)
                            .expect("1 to 255 bytes")
                            .encode();
                        (shown.into_bytes(), NameForm::NoKey)
                    }
                };
                Ok(Entry {
                    name,
                    form,
                    ino: e.ino,
                    file_type: e.file_type,
                    stored: e.name,
                })
            })
            .collect()
    }

    /// The inode at `path` (absolute or relative to the root; components
    /// as [`list`](Self::list) names them).
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`], [`Error::NotADirectory`], and the errors of
    /// [`list`](Self::list).
    ///
    /// See [`Volume`].
    pub fn lookup(&self, path: &[u8]) -> Result<u32, Error> {
        let mut ino = ROOT_INO;
        let mut walked = 0;
        for part in path.split(|&b| b == b'/') {
            walked += part.len() + 1;
            if part.is_empty() || part == b"." {
                continue;
            }
            let so_far =
                || String::from_utf8_lossy(&path[..(walked - 1).min(path.len())]).into_owned();
            let inode = self.fs.inode(ino)?;
            if !inode.is_dir() {
                return Err(Error::NotADirectory { path: so_far() });
            }
            ino = self
                .list(ino)?
                .into_iter()
                .find(|e| e.name == part)
                .ok_or_else(|| Error::NotFound { path: so_far() })?
                .ino;
        }
        Ok(ino)
    }

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
    /// [`Error::NotADirectory`] when `top` is not one;
    /// [`Error::BadName`], [`Error::DuplicateName`],
    /// [`Error::DirectoryLoop`], [`Error::BadTarget`]; a directory block
    /// shared by two directories as [`ext4::Error::BlockMappedTwice`];
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
    pub fn walk(&self, top: u32) -> Result<Tree, Error> {
        let top_inode = self.fs.inode(top)?;
        if !top_inode.is_dir() {
            return Err(Error::NotADirectory {
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
                        return Err(Error::Ext4(ext4::Error::BlockMappedTwice {
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
                    return Err(Error::BadName { dir, name: e.name });
                }
                if !names.insert(e.name.clone()) {
                    return Err(Error::DuplicateName { dir, name: e.name });
                }
                let child = self.fs.inode(e.ino)?;
                let kind = match child.file_type() {
                    FileType::Dir => {
                        if !dirs_seen.insert(e.ino) {
                            return Err(Error::DirectoryLoop { ino: e.ino });
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
                                return Err(Error::BadTarget { ino: e.ino });
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

    /// The target of symlink `inode`: decrypted, or the kernel's no-key form
    /// without the key.
    ///
    /// # Errors
    ///
    /// [`Error::Crypto`] for a payload that does not decrypt; the errors of
    /// [`list`](Self::list).
    ///
    /// See [`Volume`].
    pub fn read_link(&self, inode: &Inode) -> Result<Vec<u8>, Error> {
        let payload = self.fs.read_all(inode)?;
        if !inode.is_encrypted() {
            return Ok(payload);
        }
        let crypto = |error| Error::Crypto {
            ino: inode.ino,
            error,
        };
        match self.names_cipher(inode)? {
            Some(c) => c.decrypt_symlink(&payload).map_err(crypto),
            None => {
                let stated = payload
                    .get(..2)
                    .map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]])));
                let ciphertext =
                    payload
                        .get(2..2 + stated)
                        .filter(|c| c.len() >= 16)
                        .ok_or(crypto(crate::Error::SymlinkPayload {
                            stated,
                            len: payload.len().saturating_sub(2),
                        }))?;
                let shown = NoKeyName::symlink(ciphertext).expect("16 bytes or more");
                Ok(shown.encode().into_bytes())
            }
        }
    }

    /// The plaintext contents of regular file `inode`, to be read block run
    /// by block run.
    ///
    /// # Errors
    ///
    /// [`Error::NoKey`] for an encrypted file and no keys,
    /// [`Error::KeyMissing`] for keys without this file's,
    /// [`Error::Crypto`] for a policy this crate cannot decrypt, and the
    /// errors of [`Ext4::extents`].
    ///
    /// See [`Contents`].
    pub fn contents(&self, inode: &Inode) -> Result<Contents<'_, R>, Error> {
        let cipher = match self.context(inode)? {
            None => None,
            Some(ctx) => {
                let master = self
                    .key(inode.ino, &ctx)?
                    .ok_or(Error::NoKey { ino: inode.ino })?;
                let c = ContentsCipher::new(master, &ctx, u64::from(inode.ino), &self.info)
                    .map_err(|error| Error::Crypto {
                        ino: inode.ino,
                        error,
                    })?;
                Some(c)
            }
        };
        let inline = if inode.has_inline_data() {
            Some(self.fs.read_all(inode)?)
        } else {
            None
        };
        Ok(Contents {
            fs: &self.fs,
            ino: inode.ino,
            size: inode.size,
            extents: self.fs.extents(inode)?,
            cipher,
            inline,
        })
    }
}

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

fn entry(e: DirEntry, form: NameForm) -> Entry {
    Entry {
        name: e.name.clone(),
        form,
        ino: e.ino,
        file_type: e.file_type,
        stored: e.name,
    }
}

/// A regular file's plaintext, read a block range at a time: holes and
/// unwritten extents as zeros, each run of consecutive blocks decrypted in
/// one batched call. `Sync`: threads may read different ranges at once.
///
/// ```no_run
/// use std::io::Write;
/// use mdu_fscrypt::key::MasterKey;
/// use mdu_fscrypt::volume::{Keyring, Volume};
///
/// let mut keys = Keyring::new();
/// keys.add(MasterKey::new(&std::fs::read("master.key")?)?);
/// let vol = Volume::open(std::fs::File::open("disk.img")?, keys)?;
/// let file = vol.inode(vol.lookup(b"vault/notes.txt")?)?;
/// let contents = vol.contents(&file)?;
/// let bs = vol.ext4().block_size() as u64;
/// let mut buf = vec![0u8; 256 * bs as usize];
/// let mut out = std::io::stdout().lock();
/// let mut block = 0;
/// while block * bs < contents.size() {
///     let n = contents.read(block, &mut buf)?;
///     out.write_all(&buf[..n])?;
///     block += 256;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Contents<'a, R> {
    fs: &'a Ext4<R>,
    ino: u32,
    size: u64,
    extents: Vec<Extent>,
    cipher: Option<ContentsCipher>,
    inline: Option<Vec<u8>>,
}

impl<R: ReadAt> Contents<'_, R> {
    /// The file's size in bytes.
    ///
    /// See [`Contents`].
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The runs of blocks that hold data (holes are not listed).
    ///
    /// See [`Contents`].
    pub fn extents(&self) -> &[Extent] {
        &self.extents
    }

    /// The runs of logical blocks that hold data, as (first block, number
    /// of blocks), in order: the written extents (holes and unwritten
    /// extents read as zeros and are left out), or the whole file for
    /// inline data. A copy that writes only these and sets the size keeps
    /// the file as sparse as the image has it.
    ///
    /// See [`Contents`].
    pub fn data_runs(&self) -> Vec<(u64, u64)> {
        if self.inline.is_some() {
            let bs = u64::from(self.fs.block_size());
            return vec![(0, self.size.div_ceil(bs))];
        }
        self.extents
            .iter()
            .filter(|e| !e.unwritten)
            .map(|e| (e.logical, e.len))
            .collect()
    }

    /// Fills `buf` (a whole number of blocks) with the plaintext from
    /// logical block `first` on; returns how many bytes of it lie within the
    /// file's size (the rest is zeroed).
    ///
    /// # Errors
    ///
    /// [`Error::Crypto`] when `buf` is not a whole number of blocks or the
    /// IV cannot be formed; the image's read errors.
    ///
    /// See [`Contents`].
    pub fn read(&self, first: u64, buf: &mut [u8]) -> Result<usize, Error> {
        let bs = u64::from(self.fs.block_size());
        let crypto = |error| Error::Crypto {
            ino: self.ino,
            error,
        };
        if !(buf.len() as u64).is_multiple_of(bs) {
            return Err(crypto(crate::Error::Request(
                mdu_core::Error::LengthNotMultiple {
                    len: buf.len(),
                    unit: bs as usize,
                },
            )));
        }
        let start = first.saturating_mul(bs);
        let valid = self.size.saturating_sub(start).min(buf.len() as u64) as usize;
        if let Some(data) = &self.inline {
            let from = usize::try_from(start).unwrap_or(usize::MAX).min(data.len());
            let n = (data.len() - from).min(buf.len());
            buf[..n].copy_from_slice(&data[from..from + n]);
            buf[n..].fill(0);
            return Ok(valid);
        }
        let count = buf.len() as u64 / bs;
        let end = first.saturating_add(count);
        // Bytes before this are written; holes and unwritten extents are
        // zeroed as they are passed, not the whole buffer up front (it is
        // read once per MiB of every file extracted).
        let mut filled = 0;
        // The first extent that ends after `first`.
        let at = self.extents.partition_point(|e| e.logical + e.len <= first);
        for e in &self.extents[at..] {
            if e.logical >= end {
                break;
            }
            let lo = ((e.logical.max(first) - first) * bs) as usize;
            let hi = (((e.logical + e.len).min(end) - first) * bs) as usize;
            buf[filled..lo].fill(0);
            filled = hi;
            let dst = &mut buf[lo..hi];
            if e.unwritten {
                dst.fill(0);
                continue;
            }
            let lblk = first + lo as u64 / bs;
            self.fs.read_blocks(e.physical + (lblk - e.logical), dst)?;
            if let Some(c) = &self.cipher {
                c.decrypt_blocks(lblk, dst).map_err(crypto)?;
            }
        }
        buf[filled..].fill(0);
        // Past the size: zeros, whatever the last block decrypted to.
        buf[valid..].fill(0);
        Ok(valid)
    }

    /// The whole file, for small files and tests.
    ///
    /// # Errors
    ///
    /// As for [`read`](Self::read); a file larger than the image (sparse)
    /// is refused here with [`ext4::Error::Inode`] on `i_size`: read it a
    /// range at a time.
    ///
    /// See [`Contents`].
    pub fn read_to_vec(&self) -> Result<Vec<u8>, Error> {
        let bs = u64::from(self.fs.block_size());
        let too_big = Error::Ext4(ext4::Error::Inode {
            ino: self.ino,
            field: "i_size",
            value: self.size,
        });
        if self.size > self.fs.image_size() {
            return Err(too_big);
        }
        let len = usize::try_from(self.size.div_ceil(bs) * bs).map_err(|_| too_big)?;
        let mut buf = vec![0u8; len];
        let n = self.read(0, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }
}
