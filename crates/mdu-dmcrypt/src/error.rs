//! What can be wrong with a dm-crypt layout or request.

use alloc::string::String;
use core::fmt;

use mdu_xts::SetupError;

/// What was wrong with a cipher spec, a dm-crypt layout or a request.
///
/// ```
/// use mdu_dmcrypt::{Error, Geometry};
/// let err = Geometry::new(4096, 3, false).unwrap_err();
/// assert_eq!(err, Error::IvOffsetAlignment { iv_offset: 3, sector_size: 4096 });
/// assert!(err.to_string().contains("multiple of 8"));
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The cipher and chaining mode of the spec are not a row of
    /// [`SUPPORTED`](crate::SUPPORTED) (`aes-xts-<ivmode>`,
    /// `aes-cbc-<ivmode>`); the message lists the rows.
    UnsupportedCipher {
        /// The spec given.
        spec: String,
    },
    /// The IV generator is not one the spec's cipher takes (one of
    /// [`IvMode::ALL`](crate::IvMode::ALL) for a bare IV mode); the message
    /// lists them.
    UnknownIvMode {
        /// The IV generator name given.
        mode: String,
        /// The IV modes that would have been taken.
        supported: &'static [crate::IvMode],
    },
    /// An IV mode asked to fill IVs of a width it cannot fill
    /// ([`IvMode::iv_len_fits`](crate::IvMode::iv_len_fits)): `essiv`,
    /// `eboiv` and `benbi` for a cipher whose IV is not 16 bytes.
    IvWidth {
        /// The IV mode.
        mode: crate::IvMode,
        /// The cipher's IV width in bytes.
        len: usize,
    },
    /// The key length does not fit the cipher of the spec.
    KeyLength {
        /// The spec's cipher and chaining mode (`aes-cbc`).
        cipher: &'static str,
        /// The length given, in bytes.
        len: usize,
        /// The lengths the cipher takes, in bytes.
        expected: &'static [usize],
    },
    /// The sector size is not 512, 1024, 2048 or 4096.
    SectorSize {
        /// The size given, in bytes.
        size: u32,
    },
    /// `iv_offset` is not a multiple of sector_size / 512 (dm-crypt refuses
    /// such a table).
    IvOffsetAlignment {
        /// The offset given, in 512-byte sectors.
        iv_offset: u64,
        /// The sector size in bytes.
        sector_size: u32,
    },
    /// The buffer is not a whole, non-zero number of sectors.
    Length {
        /// The buffer length in bytes.
        len: usize,
        /// The sector size in bytes.
        sector_size: u32,
    },
    /// The cipher refused a request.
    Cipher(mdu_core::Error),
    /// The cipher could not be set up: it refused the key (a weak XTS key
    /// among others: [`is_weak_key`](Self::is_weak_key)), or the backend it
    /// was asked for cannot run here.
    CipherSetup(SetupError),
}

impl Error {
    /// Whether this is the refusal of a weak key (an XTS key with equal
    /// halves, under [`WeakKeys::Refuse`](crate::WeakKeys::Refuse)): the
    /// one error of the one rule, [`mdu_xts::verify_key`].
    ///
    /// ```
    /// use mdu_dmcrypt::{CipherSpec, WeakKeys};
    /// let xts = CipherSpec::parse("aes-xts-plain64")?;
    /// assert!(xts.check_key(&[3; 64], WeakKeys::Refuse).unwrap_err().is_weak_key());
    /// assert!(!xts.check_key(&[3; 63], WeakKeys::Refuse).unwrap_err().is_weak_key());
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn is_weak_key(&self) -> bool {
        matches!(self, Error::CipherSetup(SetupError::WeakKey { .. }))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnsupportedCipher { spec } => {
                write!(f, "unsupported cipher {spec:?}: supported are ")?;
                for (i, row) in crate::SUPPORTED.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{}-<ivmode>", row.name)?;
                }
                f.write_str(" (e.g. aes-xts-plain64 or aes-cbc-essiv:sha256)")
            }
            Error::UnknownIvMode { mode, supported } => {
                write!(f, "unknown IV mode {mode:?}: supported are ")?;
                for (i, m) in supported.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{m}")?;
                }
                Ok(())
            }
            Error::IvWidth { mode, len } => {
                let takes = if mode.iv_len_fits(16) && !mode.iv_len_fits(32) {
                    "16-byte IVs only (one cipher block)"
                } else {
                    "IVs of 8 bytes or more"
                };
                write!(
                    f,
                    "the {mode} IV mode cannot fill the {len}-byte IVs of this cipher: \
                     dm-crypt runs it over {takes}"
                )
            }
            Error::KeyLength {
                cipher,
                len,
                expected,
            } => {
                write!(f, "a {len}-byte key does not fit {cipher}: it takes ")?;
                if expected.is_empty() {
                    return f.write_str("no key length this crate knows");
                }
                for (i, n) in expected.iter().enumerate() {
                    let sep = match i {
                        0 => "",
                        _ if i + 1 == expected.len() => " or ",
                        _ => ", ",
                    };
                    write!(f, "{sep}{n}")?;
                }
                f.write_str(" bytes")
            }
            Error::SectorSize { size } => write!(
                f,
                "sector size {size} is invalid: it must be 512, 1024, 2048 or 4096 bytes"
            ),
            Error::IvOffsetAlignment {
                iv_offset,
                sector_size,
            } => write!(
                f,
                "iv_offset {iv_offset} is invalid: with {sector_size}-byte sectors it must be \
                 a multiple of {} (512-byte units)",
                sector_size / 512
            ),
            Error::Length { len, sector_size } => {
                write!(
                    f,
                    "buffer of {len} bytes is not a whole, non-zero number of {sector_size}-byte \
                     sectors"
                )?;
                // The fields are public: a value built by hand may hold a
                // sector size of 0, which has no whole sectors to count.
                let ss = usize::try_from(*sector_size).unwrap_or(usize::MAX);
                match (len.checked_div(ss), len.checked_rem(ss)) {
                    (Some(whole), Some(left)) => {
                        write!(f, " ({whole} whole sectors and {left} bytes left over)")
                    }
                    _ => Ok(()),
                }
            }
            Error::Cipher(e) => write!(f, "cipher error: {e}"),
            Error::CipherSetup(e) => write!(f, "cipher setup failed: {e}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Cipher(e) => Some(e),
            Error::CipherSetup(e) => Some(e),
            _ => None,
        }
    }
}

impl From<mdu_core::Error> for Error {
    fn from(e: mdu_core::Error) -> Self {
        Error::Cipher(e)
    }
}

impl From<SetupError> for Error {
    fn from(e: SetupError) -> Self {
        Error::CipherSetup(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::ToString;

    #[test]
    fn length_error_display_never_divides_by_zero() {
        // Every field value, including a sector size of 0 that no
        // constructor of this crate produces but the public fields allow.
        for sector_size in [0, 1, 512, 4096, u32::MAX] {
            for len in [0, 1, 100, 4096, usize::MAX] {
                let msg = Error::Length { len, sector_size }.to_string();
                assert!(msg.contains(&format!("buffer of {len} bytes")), "{msg}");
                assert!(
                    msg.contains(&format!("{sector_size}-byte sectors")),
                    "{msg}"
                );
                assert_eq!(msg.contains("left over"), sector_size != 0, "{msg}");
            }
        }
        let msg = Error::Length {
            len: 1100,
            sector_size: 512,
        }
        .to_string();
        assert!(
            msg.ends_with("(2 whole sectors and 76 bytes left over)"),
            "{msg}"
        );
    }

    #[test]
    fn refusals_name_what_is_supported() {
        let msg = Error::UnsupportedCipher {
            spec: "serpent-xts-plain64".into(),
        }
        .to_string();
        assert!(msg.contains("aes-xts-<ivmode>, aes-cbc-<ivmode>"), "{msg}");
        let msg = Error::UnknownIvMode {
            mode: "lmk".into(),
            supported: &crate::IvMode::ALL,
        }
        .to_string();
        assert!(msg.ends_with("plain, plain64, plain64be, essiv:sha256, benbi, null, eboiv"));
    }

    #[test]
    fn a_cipher_setup_error_keeps_the_cipher_message() {
        let e = Error::from(SetupError::BackendUnavailable {
            cipher: "mdu-xts",
            backend: "vaes512",
        });
        assert_eq!(
            e,
            Error::CipherSetup(SetupError::BackendUnavailable {
                cipher: "mdu-xts",
                backend: "vaes512",
            })
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with("cipher setup failed: the mdu-xts backend vaes512 cannot run here"),
            "{msg}"
        );
    }

    #[test]
    fn key_length_lists_what_fits() {
        let msg = Error::KeyLength {
            cipher: "aes-cbc",
            len: 24,
            expected: &[16, 32],
        }
        .to_string();
        assert_eq!(
            msg,
            "a 24-byte key does not fit aes-cbc: it takes 16 or 32 bytes"
        );
        let msg = Error::KeyLength {
            cipher: "x",
            len: 1,
            expected: &[],
        }
        .to_string();
        assert!(
            msg.ends_with("takes no key length this crate knows"),
            "{msg}"
        );
    }
}
