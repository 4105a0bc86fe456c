//! dm-crypt cipher specs: `aes-<chainmode>-<ivmode>`.

use alloc::string::ToString;
use core::fmt;
use core::str::FromStr;

use crate::DmCryptError;

/// The chaining mode of an AES cipher spec.
///
/// This crate encrypts with any [`DataUnitCipher`](mdu_core::DataUnitCipher);
/// the mode only says which cipher the spec names and which key lengths
/// fit it (the caller builds the cipher, e.g. `mdu_xts::XtsAes256` or
/// `mdu_cbc::AesCbc128`).
///
/// ```
/// use mdu_dmcrypt::ChainMode;
/// assert_eq!(ChainMode::Cbc.key_lens(), [16, 32]);
/// assert_eq!(ChainMode::Xts.to_string(), "xts");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChainMode {
    /// XTS (IEEE 1619): the key is two AES keys, 32 or 64 bytes in all.
    Xts,
    /// CBC: one AES key of 16 or 32 bytes.
    Cbc,
}

impl ChainMode {
    /// The name in a spec (`xts`, `cbc`).
    ///
    /// ```
    /// assert_eq!(mdu_dmcrypt::ChainMode::Cbc.name(), "cbc");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            ChainMode::Xts => "xts",
            ChainMode::Cbc => "cbc",
        }
    }

    /// The key lengths in bytes the mdu ciphers of this mode take, shortest
    /// first (AES-128, then AES-256).
    ///
    /// ```
    /// assert_eq!(mdu_dmcrypt::ChainMode::Xts.key_lens(), [32, 64]);
    /// ```
    pub const fn key_lens(self) -> &'static [usize] {
        match self {
            ChainMode::Xts => &[32, 64],
            ChainMode::Cbc => &[16, 32],
        }
    }
}

impl fmt::Display for ChainMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dm-crypt IV generator without per-sector state.
///
/// ```
/// use mdu_dmcrypt::IvMode;
/// assert_eq!("essiv:sha256".parse::<IvMode>()?, IvMode::EssivSha256);
/// assert_eq!(IvMode::Plain64Be.name(), "plain64be");
/// # Ok::<(), mdu_dmcrypt::DmCryptError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IvMode {
    /// `le32(iv_sector mod 2^32)` in bytes 0..4, zeros after.
    Plain,
    /// `le64(iv_sector)` in bytes 0..8, zeros after.
    Plain64,
    /// Zeros, then `be64(iv_sector)` in bytes 8..16.
    Plain64Be,
    /// `AES-256_salt(plain64 IV)` with `salt = SHA-256(volume key)`,
    /// whatever the data cipher and its key length.
    EssivSha256,
    /// Zeros, then `be64((iv_sector << 5) + 1)` in bytes 8..16 (the count of
    /// 16-byte blocks, starting at 1).
    Benbi,
    /// All zeros.
    Null,
    /// The encryption of one zero block under the volume's own cipher with
    /// the sector's byte offset `le64(iv_sector * sector_size) || 0^8` as IV
    /// (for CBC: `E_K(offset)`; for XTS: the XTS encryption of a zero block
    /// with the offset as tweak).
    Eboiv,
}

impl IvMode {
    /// Every mode, in declaration order.
    ///
    /// ```
    /// use mdu_dmcrypt::IvMode;
    /// assert_eq!(IvMode::ALL.len(), 7);
    /// ```
    pub const ALL: [IvMode; 7] = [
        IvMode::Plain,
        IvMode::Plain64,
        IvMode::Plain64Be,
        IvMode::EssivSha256,
        IvMode::Benbi,
        IvMode::Null,
        IvMode::Eboiv,
    ];

    /// The name dm-crypt and cryptsetup use (`plain64`, `essiv:sha256`, ...).
    ///
    /// ```
    /// use mdu_dmcrypt::IvMode;
    /// assert_eq!(IvMode::EssivSha256.name(), "essiv:sha256");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            IvMode::Plain => "plain",
            IvMode::Plain64 => "plain64",
            IvMode::Plain64Be => "plain64be",
            IvMode::EssivSha256 => "essiv:sha256",
            IvMode::Benbi => "benbi",
            IvMode::Null => "null",
            IvMode::Eboiv => "eboiv",
        }
    }
}

impl FromStr for IvMode {
    type Err = DmCryptError;

    /// Parses an IV generator name as it appears after `aes-xts-`.
    fn from_str(s: &str) -> Result<IvMode, DmCryptError> {
        IvMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| DmCryptError::UnknownIvMode { mode: s.into() })
    }
}

impl fmt::Display for IvMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dm-crypt cipher spec, `aes-<chainmode>-<ivmode>`, as in a dm-crypt
/// table or `cryptsetup --cipher`: `aes-xts-plain64` (LUKS2's default),
/// `aes-cbc-essiv:sha256` (LUKS1's and old plain mode's), `aes-cbc-plain64`,
/// ...
///
/// ```
/// use mdu_dmcrypt::{ChainMode, CipherSpec, IvMode};
///
/// let spec: CipherSpec = "aes-cbc-essiv:sha256".parse()?;
/// assert_eq!(spec.chain(), ChainMode::Cbc);
/// assert_eq!(spec.iv_mode(), IvMode::EssivSha256);
/// assert_eq!(spec.to_string(), "aes-cbc-essiv:sha256");
/// assert!(spec.check_key_len(32).is_ok());
/// assert!(spec.check_key_len(64).is_err());
/// # Ok::<(), mdu_dmcrypt::DmCryptError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CipherSpec {
    chain: ChainMode,
    iv_mode: IvMode,
}

impl CipherSpec {
    /// A spec from its parts.
    ///
    /// ```
    /// use mdu_dmcrypt::{ChainMode, CipherSpec, IvMode};
    /// let spec = CipherSpec::new(ChainMode::Xts, IvMode::Plain64);
    /// assert_eq!(spec.to_string(), "aes-xts-plain64");
    /// ```
    pub const fn new(chain: ChainMode, iv_mode: IvMode) -> CipherSpec {
        CipherSpec { chain, iv_mode }
    }

    /// Parses `aes-<chainmode>-<ivmode>` (the case of `aes` and of the
    /// chaining mode is ignored, as cryptsetup does).
    ///
    /// # Errors
    ///
    /// [`DmCryptError::UnsupportedCipher`] unless the spec starts with
    /// `aes-xts-` or `aes-cbc-`; [`DmCryptError::UnknownIvMode`] for any
    /// other IV generator (including `lmk`, `tcw`, `random`, `elephant`).
    ///
    /// ```
    /// use mdu_dmcrypt::{CipherSpec, DmCryptError, IvMode};
    /// assert_eq!(CipherSpec::parse("AES-XTS-plain64")?.iv_mode(), IvMode::Plain64);
    /// assert!(matches!(
    ///     CipherSpec::parse("twofish-cbc-plain64"),
    ///     Err(DmCryptError::UnsupportedCipher { .. })
    /// ));
    /// assert!(matches!(
    ///     CipherSpec::parse("aes-cbc-lmk"),
    ///     Err(DmCryptError::UnknownIvMode { .. })
    /// ));
    /// # Ok::<(), DmCryptError>(())
    /// ```
    pub fn parse(spec: &str) -> Result<CipherSpec, DmCryptError> {
        let unsupported = || DmCryptError::UnsupportedCipher {
            spec: spec.to_string(),
        };
        let mut parts = spec.splitn(3, '-');
        let (Some(cipher), Some(chain), Some(iv)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(unsupported());
        };
        if !cipher.eq_ignore_ascii_case("aes") {
            return Err(unsupported());
        }
        let chain = [ChainMode::Xts, ChainMode::Cbc]
            .into_iter()
            .find(|c| chain.eq_ignore_ascii_case(c.name()))
            .ok_or_else(unsupported)?;
        Ok(CipherSpec {
            chain,
            iv_mode: iv.parse()?,
        })
    }

    /// The chaining mode.
    ///
    /// ```
    /// use mdu_dmcrypt::{ChainMode, CipherSpec};
    /// assert_eq!(CipherSpec::parse("aes-xts-null")?.chain(), ChainMode::Xts);
    /// # Ok::<(), mdu_dmcrypt::DmCryptError>(())
    /// ```
    pub const fn chain(&self) -> ChainMode {
        self.chain
    }

    /// The IV generator.
    ///
    /// ```
    /// use mdu_dmcrypt::{CipherSpec, IvMode};
    /// assert_eq!(CipherSpec::parse("aes-cbc-benbi")?.iv_mode(), IvMode::Benbi);
    /// # Ok::<(), mdu_dmcrypt::DmCryptError>(())
    /// ```
    pub const fn iv_mode(&self) -> IvMode {
        self.iv_mode
    }

    /// Checks that a key of `len` bytes fits the spec's cipher.
    ///
    /// # Errors
    ///
    /// [`DmCryptError::KeyLength`] unless `len` is one of
    /// [`ChainMode::key_lens`].
    ///
    /// ```
    /// use mdu_dmcrypt::CipherSpec;
    /// let xts = CipherSpec::parse("aes-xts-plain64")?;
    /// assert!(xts.check_key_len(64).is_ok());
    /// assert!(xts.check_key_len(16).unwrap_err().to_string().contains("32 or 64"));
    /// # Ok::<(), mdu_dmcrypt::DmCryptError>(())
    /// ```
    pub fn check_key_len(&self, len: usize) -> Result<(), DmCryptError> {
        let expected = self.chain.key_lens();
        if expected.contains(&len) {
            return Ok(());
        }
        Err(DmCryptError::KeyLength {
            cipher: match self.chain {
                ChainMode::Xts => "aes-xts",
                ChainMode::Cbc => "aes-cbc",
            },
            len,
            expected,
        })
    }
}

impl FromStr for CipherSpec {
    type Err = DmCryptError;

    /// As [`CipherSpec::parse`].
    fn from_str(s: &str) -> Result<CipherSpec, DmCryptError> {
        CipherSpec::parse(s)
    }
}

impl fmt::Display for CipherSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "aes-{}-{}", self.chain, self.iv_mode)
    }
}
