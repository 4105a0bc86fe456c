//! Typed errors of encoding and decoding.

use core::fmt;

use mdu_platform::cpu::Features;

use crate::Backend;

/// Why a base64 string was rejected.
///
/// Checks run in a fixed order, the same on every backend, so a given input
/// always yields the same error:
///
/// 1. [`InvalidLength`](DecodeError::InvalidLength), from the length alone;
/// 2. [`InvalidPadding`](DecodeError::InvalidPadding), from the length and the
///    run of trailing `=` alone;
/// 3. [`OutputTooSmall`](DecodeError::OutputTooSmall) (slice decoding);
/// 4. [`InvalidByte`](DecodeError::InvalidByte): the **first** byte, by index,
///    that is not a symbol of the alphabet (an `=` before the trailing run
///    counts as such a byte);
/// 5. [`NonCanonical`](DecodeError::NonCanonical): unused low bits of the
///    last symbol are not zero.
///
/// ```
/// use mdu_base64::{DecodeError, STANDARD, URL_SAFE_NO_PAD};
///
/// assert_eq!(
///     URL_SAFE_NO_PAD.decode_to_vec(b"Zm9v+g"),
///     Err(DecodeError::InvalidByte { index: 4, byte: b'+' })
/// );
/// assert_eq!(URL_SAFE_NO_PAD.decode_to_vec(b"AAAAA"), Err(DecodeError::InvalidLength { len: 5 }));
/// assert_eq!(STANDARD.decode_to_vec(b"Zh=="), Err(DecodeError::NonCanonical { index: 1 }));
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecodeError {
    /// A byte that is not a symbol of the alphabet (nor part of valid
    /// trailing padding).
    InvalidByte {
        /// Index of the byte in the input.
        index: usize,
        /// The byte.
        byte: u8,
    },
    /// The number of symbols cannot come from any byte string: it is 1 mod 4
    /// (one symbol holds only 6 bits, less than a byte), or, with
    /// [`Padding::Required`](crate::Padding::Required), the input length is
    /// not a multiple of 4.
    ///
    /// The fscrypt decoder of 2021-2025 accepted a lone trailing `A` in a
    /// length of 1 mod 4 (its 6 zero bits produced no byte and passed the
    /// leftover check: `"AAAAA"` decoded to 3 bytes). Here, as in the kernel's
    /// generic lib/base64 decoder since, it is always an error.
    InvalidLength {
        /// Length of the input in bytes.
        len: usize,
    },
    /// The trailing `=` run is wrong for the engine's padding mode: padding
    /// where none is allowed, more or fewer `=` than the canonical count, or
    /// padding on an input whose length is not a multiple of 4.
    InvalidPadding {
        /// Index of the first `=` of the trailing run.
        index: usize,
    },
    /// The last symbol carries non-zero bits that do not belong to any
    /// decoded byte, so the string is not the canonical encoding of anything.
    NonCanonical {
        /// Index of the last symbol.
        index: usize,
    },
    /// The output slice is shorter than the decoded data.
    OutputTooSmall {
        /// Bytes the decoded data needs.
        needed: usize,
        /// Bytes the output slice has.
        got: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::InvalidByte { index, byte } => {
                if byte.is_ascii_graphic() {
                    write!(
                        f,
                        "invalid byte {:?} ({byte:#04x}) at index {index}: not a symbol of the alphabet",
                        byte as char
                    )
                } else {
                    write!(
                        f,
                        "invalid byte {byte:#04x} at index {index}: not a symbol of the alphabet"
                    )
                }
            }
            DecodeError::InvalidLength { len } => write!(
                f,
                "invalid length {len}: the symbol count must not be 1 mod 4 (and must be a multiple of 4 when padding is required)"
            ),
            DecodeError::InvalidPadding { index } => write!(
                f,
                "invalid padding at index {index}: '=' must be absent or exactly the canonical 1 or 2 bytes completing the last group of 4, as the padding mode allows"
            ),
            DecodeError::NonCanonical { index } => write!(
                f,
                "non-canonical symbol at index {index}: its unused low bits must be zero"
            ),
            DecodeError::OutputTooSmall { needed, got } => write!(
                f,
                "output too small: decoding needs {needed} bytes, the output has {got}"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DecodeError {}

/// Why encoding failed.
///
/// ```
/// use mdu_base64::{EncodeError, URL_SAFE_NO_PAD};
///
/// let mut out = [0u8; 3];
/// assert_eq!(
///     URL_SAFE_NO_PAD.encode_slice(b"abc", &mut out),
///     Err(EncodeError::OutputTooSmall { needed: 4, got: 3 })
/// );
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EncodeError {
    /// The output slice is shorter than the encoded text.
    OutputTooSmall {
        /// Bytes the encoded text needs.
        needed: usize,
        /// Bytes the output slice has.
        got: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EncodeError::OutputTooSmall { needed, got } => write!(
                f,
                "output too small: encoding needs {needed} bytes, the output has {got}"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for EncodeError {}

/// A backend was pinned that this CPU (or this build) cannot run.
///
/// ```
/// use mdu_base64::{Backend, URL_SAFE_NO_PAD};
///
/// for b in [Backend::Avx512Vbmi, Backend::Avx2, Backend::Neon, Backend::Generic] {
///     assert_eq!(URL_SAFE_NO_PAD.with_backend(b).is_ok(), b.is_available());
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BackendUnavailable {
    /// Name of the backend that was asked for.
    pub backend: &'static str,
}

impl fmt::Display for BackendUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::backend::Unavailable;
        let name = self.backend;
        let backend = Backend::ALL.into_iter().find(|b| b.name() == name);
        match backend.and_then(Backend::unavailable_reason) {
            Some(Unavailable::Lacks(missing)) => write!(
                f,
                "backend {name} is not available: this CPU lacks {missing} (it needs {})",
                backend.map_or(Features::NONE, Backend::needs)
            ),
            Some(Unavailable::NotCompiled) => write!(
                f,
                "backend {name} is not available: it is not compiled for this target"
            ),
            None => write!(f, "backend {name} is not available on this CPU or target"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for BackendUnavailable {}
