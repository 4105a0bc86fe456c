//! What can go wrong reading an encrypted tree.

use super::*;

/// What went wrong reading an encrypted tree: the image, its fscrypt
/// metadata, a missing key, or a path.
///
/// ```
/// use mdu_fscrypt::volume::VolumeError;
///
/// let e = VolumeError::NotFound { path: "a/b".into() };
/// assert_eq!(e.to_string(), "a/b: no such file or directory");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum VolumeError {
    /// The ext4 structures.
    Ext4(ext4::Ext4Error),
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

impl From<ext4::Ext4Error> for VolumeError {
    fn from(e: ext4::Ext4Error) -> VolumeError {
        VolumeError::Ext4(e)
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

impl fmt::Display for VolumeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VolumeError::Ext4(e) => e.fmt(f),
            VolumeError::Context { ino, error: None } => {
                write!(f, "inode {ino}: encrypted, but has no encryption context")
            }
            VolumeError::Context {
                ino,
                error: Some(e),
            } => write!(f, "inode {ino}: encryption context: {e}"),
            VolumeError::EncryptedInline { ino } => write!(
                f,
                "inode {ino}: encrypted and flagged inline data, which the kernel never writes \
                 (its bytes would not be decrypted): a damaged or hostile image"
            ),
            VolumeError::KeyMissing { ino, wanted, given } => {
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
            VolumeError::NoKey { ino } => {
                write!(f, "inode {ino} is encrypted: its contents need its key")
            }
            VolumeError::Crypto {
                ino,
                error: crate::Error::InvalidName,
            } => write!(
                f,
                "inode {ino}: a name or symlink target does not decrypt to a valid one: the key is wrong (a v1 key cannot be checked any other way) or the image is damaged"
            ),
            VolumeError::Crypto { ino, error } => write!(f, "inode {ino}: {error}"),
            VolumeError::NotFound { path } => write!(f, "{path}: no such file or directory"),
            VolumeError::NotADirectory { path } => write!(f, "{path}: not a directory"),
            VolumeError::BadName { dir, name } => write!(
                f,
                "directory inode {dir}: an entry named {:?} cannot be written out (a name is \
                 1 to 255 bytes, without '/' or NUL, and not . or ..)",
                String::from_utf8_lossy(name)
            ),
            VolumeError::DuplicateName { dir, name } => write!(
                f,
                "directory inode {dir}: two entries are named {:?}: a damaged image",
                String::from_utf8_lossy(name)
            ),
            VolumeError::DirectoryLoop { ino } => write!(
                f,
                "directory inode {ino} is reached twice: a loop in a damaged image"
            ),
            VolumeError::BadTarget { ino } => write!(
                f,
                "symlink inode {ino}: its target is empty or holds a NUL: a damaged image"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for VolumeError {}
