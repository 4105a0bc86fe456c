//! The crate's error type.

use core::fmt;

use crate::key::KeyError;
use crate::nokey::NoKeyError;
use crate::policy::{Mode, PolicyError};

/// Why an fscrypt operation failed. Nothing was written when it does.
///
/// ```
/// use mdu_fscrypt::{Error, names};
///
/// let e = names::padded_len(300, 32, 255).unwrap_err();
/// assert_eq!(e, Error::NameLength { len: 300, max: 255 });
/// assert_eq!(e.to_string(), "a name of 300 bytes: must be 1 to 255 bytes");
///
/// // A no-key name that does not parse converts too, so names and no-key
/// // names can share one `?`.
/// let e = Error::from(mdu_fscrypt::nokey::decode(b"A").unwrap_err());
/// assert!(matches!(e, Error::NoKey(_)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A context or policy the kernel would not accept.
    Policy(PolicyError),
    /// A master key that does not fit the policy.
    Key(KeyError),
    /// A no-key name that could not be built, encoded or decoded.
    NoKey(NoKeyError),
    /// A mode this crate does not implement yet.
    Unsupported {
        /// The mode.
        mode: Mode,
    },
    /// The cipher refused its key (an AES-256-XTS key whose halves are
    /// equal: the kernel refuses it too).
    Setup(mdu_aes::SetupError),
    /// A buffer whose length is not a whole number of data units.
    Request(mdu_core::Error),
    /// IV_INO_LBLK policies put the inode number in 32 bits.
    InodeNumber {
        /// The inode number.
        ino: u64,
    },
    /// A data-unit index an IV_INO_LBLK_64 IV cannot hold (2^32 or more).
    UnitIndex {
        /// The first index out of range.
        index: u64,
    },
    /// The policy's data unit does not divide the file system's block.
    DataUnitSize {
        /// The data-unit size.
        unit: u32,
        /// The block size.
        block: u32,
    },
    /// A plaintext name or symlink target outside `1..=max` bytes.
    NameLength {
        /// Its length.
        len: usize,
        /// The longest allowed.
        max: usize,
    },
    /// An encrypted name or symlink target of a length that cannot exist
    /// (shorter than 16 bytes, or longer than the maximum).
    CiphertextLength {
        /// Its length.
        len: usize,
        /// The longest allowed.
        max: usize,
    },
    /// A name or target that decrypts to something no file system holds
    /// (empty, with a `/` in a name, or not NUL-padded to its stored
    /// length as the kernel pads it): the image is damaged, or the key is
    /// wrong (a v1 key cannot be checked any other way, nor can the kernel
    /// check it).
    InvalidName,
    /// An encrypted symlink whose stored length does not fit its payload.
    SymlinkPayload {
        /// The length the payload says.
        stated: usize,
        /// The bytes there are.
        len: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Policy(e) => e.fmt(f),
            Error::Key(e) => e.fmt(f),
            Error::NoKey(e) => e.fmt(f),
            Error::Unsupported { mode } => write!(f, "encryption mode {mode} is not supported"),
            Error::Setup(e) => write!(f, "cipher setup: {e}"),
            Error::Request(e) => e.fmt(f),
            Error::InodeNumber { ino } => write!(
                f,
                "inode {ino} does not fit the 32 bits of an IV_INO_LBLK policy's IV"
            ),
            Error::UnitIndex { index } => write!(
                f,
                "data unit {index} does not fit the 32 bits of an IV_INO_LBLK_64 IV"
            ),
            Error::DataUnitSize { unit, block } => write!(
                f,
                "data units of {unit} bytes do not divide {block}-byte blocks"
            ),
            Error::NameLength { len, max } => {
                write!(f, "a name of {len} bytes: must be 1 to {max} bytes")
            }
            Error::CiphertextLength { len, max } => write!(
                f,
                "an encrypted name of {len} bytes: must be 16 to {max} bytes"
            ),
            Error::InvalidName => f.write_str(
                "a name decrypts to an invalid name: the image is damaged or the key is wrong",
            ),
            Error::SymlinkPayload { stated, len } => write!(
                f,
                "encrypted symlink states {stated} bytes of target, its payload holds {len}"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Policy(e) => Some(e),
            Error::Key(e) => Some(e),
            Error::NoKey(e) => Some(e),
            Error::Setup(e) => Some(e),
            Error::Request(e) => Some(e),
            _ => None,
        }
    }
}

impl From<PolicyError> for Error {
    fn from(e: PolicyError) -> Error {
        Error::Policy(e)
    }
}

impl From<KeyError> for Error {
    fn from(e: KeyError) -> Error {
        Error::Key(e)
    }
}

impl From<NoKeyError> for Error {
    fn from(e: NoKeyError) -> Error {
        Error::NoKey(e)
    }
}

impl From<mdu_aes::SetupError> for Error {
    fn from(e: mdu_aes::SetupError) -> Error {
        Error::Setup(e)
    }
}

impl From<mdu_core::Error> for Error {
    fn from(e: mdu_core::Error) -> Error {
        Error::Request(e)
    }
}
