//! What can be wrong when a cipher of an AES mode is set up: the key and
//! the backend. A request to a cipher that was set up fails with
//! `mdu_core::Error` instead.

use core::fmt;

/// Why a cipher of an AES mode (`mdu_xts::Xts`, `mdu_cbc::Cbc`) could not
/// be set up: its key or the backend asked for.
///
/// The constructors (`new`, `new_allow_weak_key`, `with_backend`,
/// `with_backend_allow_weak_key`) return it; `mdu-xts` and `mdu-cbc`
/// re-export it. Every variant names the offending value and the rule it
/// broke. The requests of a cipher return `mdu_core::Error`, the request
/// errors every cipher family shares.
///
/// ```
/// use mdu_aes::SetupError;
/// use mdu_xts::XtsAes256;
///
/// let err = XtsAes256::new(&[1u8; 63]).unwrap_err();
/// assert_eq!(err, SetupError::InvalidKeyLength { len: 63, expected: 64 });
/// assert!(err.to_string().contains("needs exactly 64"));
///
/// // Equal halves: a weak XTS key.
/// let err = XtsAes256::new(&[1u8; 64]).unwrap_err();
/// assert!(matches!(err, SetupError::WeakKey { .. }));
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetupError {
    /// The key has the wrong length for this cipher.
    InvalidKeyLength {
        /// The length that was given.
        len: usize,
        /// The length the cipher needs.
        expected: usize,
    },
    /// The key is refused as weak by the mode's own rule (for XTS: the
    /// data-key half equals the tweak-key half).
    WeakKey {
        /// What is wrong with the key, in the mode's words.
        reason: &'static str,
    },
    /// The requested backend cannot run on this CPU (or is not compiled
    /// for this target).
    BackendUnavailable {
        /// The cipher crate whose backend was asked for (`"mdu-xts"`).
        cipher: &'static str,
        /// Name of the backend that was asked for (`"vaes512"`).
        backend: &'static str,
    },
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SetupError::InvalidKeyLength { len, expected } => {
                write!(
                    f,
                    "key is {len} bytes but this cipher needs exactly {expected}"
                )
            }
            SetupError::WeakKey { reason } => write!(f, "weak key: {reason}"),
            SetupError::BackendUnavailable { cipher, backend } => write!(
                f,
                "the {cipher} backend {backend} cannot run here: this CPU lacks the \
                 instructions it needs, or it is not compiled for this target"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SetupError {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn messages_name_the_value_and_the_rule() {
        let cases = [
            (
                SetupError::InvalidKeyLength {
                    len: 3,
                    expected: 64,
                },
                "key is 3 bytes but this cipher needs exactly 64",
            ),
            (
                SetupError::WeakKey {
                    reason: "the two key halves are equal",
                },
                "weak key: the two key halves are equal",
            ),
            (
                SetupError::BackendUnavailable {
                    cipher: "mdu-xts",
                    backend: "vaes512",
                },
                "the mdu-xts backend vaes512 cannot run here",
            ),
        ];
        for (err, needle) in cases {
            let text = err.to_string();
            assert!(text.contains(needle), "{text:?} lacks {needle:?}");
        }
    }
}
