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

mod contents;
mod error;
mod keyring;
mod tree;

pub use contents::Contents;
pub use error::VolumeError;
pub use keyring::Keyring;
pub use tree::{Node, NodeKind, Tree};

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
    pub fn open(image: R, keys: Keyring) -> Result<Volume<R>, VolumeError> {
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
    pub fn inode(&self, ino: u32) -> Result<Inode, VolumeError> {
        Ok(self.fs.inode(ino)?)
    }

    /// The encryption context of `inode`: `None` when it is not encrypted.
    ///
    /// # Errors
    ///
    /// [`VolumeError::Context`] for the encryption flag without a context, or a
    /// context the kernel would not accept; [`VolumeError::EncryptedInline`] for
    /// an encrypted inode flagged inline data.
    ///
    /// See [`Volume`].
    pub fn context(&self, inode: &Inode) -> Result<Option<Context>, VolumeError> {
        if !inode.is_encrypted() {
            return Ok(None);
        }
        if inode.has_inline_data() {
            return Err(VolumeError::EncryptedInline { ino: inode.ino });
        }
        let raw = self
            .fs
            .encryption_context(inode)?
            .ok_or(VolumeError::Context {
                ino: inode.ino,
                error: None,
            })?;
        Context::parse(&raw)
            .map(Some)
            .map_err(|e| VolumeError::Context {
                ino: inode.ino,
                error: Some(e),
            })
    }

    /// The key for `ctx`: `Ok(None)` when no keys were given at all. A v1
    /// key is checked through its names the first time (see [`V1Check`]).
    fn key(&self, ino: u32, ctx: &Context) -> Result<Option<&MasterKey>, VolumeError> {
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
            None => Err(VolumeError::KeyMissing {
                ino,
                wanted,
                given: self.keys.given(),
            }),
        }
    }

    /// Checks v1 key `i` once (see [`V1Check`]), starting from inode
    /// `from`.
    fn check_v1(&self, i: usize, from: u32) -> Result<(), VolumeError> {
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
            return Err(VolumeError::Crypto {
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

    fn names_cipher(&self, inode: &Inode) -> Result<Option<NamesCipher>, VolumeError> {
        let Some(ctx) = self.context(inode)? else {
            return Ok(None);
        };
        let Some(master) = self.key(inode.ino, &ctx)? else {
            return Ok(None);
        };
        NamesCipher::new(master, &ctx, u64::from(inode.ino), &self.info)
            .map(Some)
            .map_err(|error| VolumeError::Crypto {
                ino: inode.ino,
                error,
            })
    }

    /// The entries of directory `dir` (`.` and `..` included), named as
    /// the kernel lists them.
    ///
    /// # Errors
    ///
    /// [`VolumeError::KeyMissing`] when keys were given but not this directory's;
    /// [`VolumeError::Crypto`] for a stored name that cannot exist (shorter than
    /// 16 bytes) or does not decrypt to a valid name; the image's errors.
    ///
    /// See [`Volume`].
    pub fn list(&self, dir: u32) -> Result<Vec<Entry>, VolumeError> {
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
        let crypto = |error| VolumeError::Crypto { ino: dir, error };
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
    /// [`VolumeError::NotFound`], [`VolumeError::NotADirectory`], and the errors of
    /// [`list`](Self::list).
    ///
    /// See [`Volume`].
    pub fn lookup(&self, path: &[u8]) -> Result<u32, VolumeError> {
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
                return Err(VolumeError::NotADirectory { path: so_far() });
            }
            ino = self
                .list(ino)?
                .into_iter()
                .find(|e| e.name == part)
                .ok_or_else(|| VolumeError::NotFound { path: so_far() })?
                .ino;
        }
        Ok(ino)
    }

    /// The target of symlink `inode`: decrypted, or the kernel's no-key form
    /// without the key.
    ///
    /// # Errors
    ///
    /// [`VolumeError::Crypto`] for a payload that does not decrypt; the errors of
    /// [`list`](Self::list).
    ///
    /// See [`Volume`].
    pub fn read_link(&self, inode: &Inode) -> Result<Vec<u8>, VolumeError> {
        let payload = self.fs.read_all(inode)?;
        if !inode.is_encrypted() {
            return Ok(payload);
        }
        let crypto = |error| VolumeError::Crypto {
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
    /// [`VolumeError::NoKey`] for an encrypted file and no keys,
    /// [`VolumeError::KeyMissing`] for keys without this file's,
    /// [`VolumeError::Crypto`] for a policy this crate cannot decrypt, and the
    /// errors of [`Ext4::extents`].
    ///
    /// See [`Contents`].
    pub fn contents(&self, inode: &Inode) -> Result<Contents<'_, R>, VolumeError> {
        let cipher = match self.context(inode)? {
            None => None,
            Some(ctx) => {
                let master = self
                    .key(inode.ino, &ctx)?
                    .ok_or(VolumeError::NoKey { ino: inode.ino })?;
                let c = ContentsCipher::new(master, &ctx, u64::from(inode.ino), &self.info)
                    .map_err(|error| VolumeError::Crypto {
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

fn entry(e: DirEntry, form: NameForm) -> Entry {
    Entry {
        name: e.name.clone(),
        form,
        ino: e.ino,
        file_type: e.file_type,
        stored: e.name,
    }
}
