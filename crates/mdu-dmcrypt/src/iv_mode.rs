//! The IV modes of dm-crypt specs (`plain64`, `essiv:sha256`, ...): their
//! names and the IV widths each can fill. [`IvGenerator`](crate::IvGenerator)
//! computes them.

use core::fmt;
use core::str::FromStr;

use crate::Error;

/// A dm-crypt IV generator without per-sector state.
///
/// ```
/// use mdu_dmcrypt::IvMode;
/// assert_eq!("essiv:sha256".parse::<IvMode>()?, IvMode::EssivSha256);
/// assert_eq!(IvMode::Plain64Be.name(), "plain64be");
/// # Ok::<(), mdu_dmcrypt::Error>(())
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

    /// The modes dm-crypt runs over an IV wider than one cipher block (the
    /// 32-byte tweaks of HCTR2 and Adiantum): those whose
    /// [`iv_len_fits`](Self::iv_len_fits) holds for 32.
    ///
    /// ```
    /// use mdu_dmcrypt::IvMode;
    /// assert!(IvMode::WIDE.iter().all(|m| m.iv_len_fits(32)));
    /// assert_eq!(IvMode::ALL.iter().filter(|m| m.iv_len_fits(32)).count(), IvMode::WIDE.len());
    /// ```
    pub const WIDE: [IvMode; 4] = [
        IvMode::Plain,
        IvMode::Plain64,
        IvMode::Plain64Be,
        IvMode::Null,
    ];

    /// The modes of a 16-byte-IV cipher without 32-byte keys (SM4): all
    /// but `essiv:sha256`, whose IV cipher is the data cipher keyed with a
    /// 32-byte hash.
    ///
    /// ```
    /// use mdu_dmcrypt::IvMode;
    /// assert!(!IvMode::NO_ESSIV.contains(&IvMode::EssivSha256));
    /// assert_eq!(IvMode::NO_ESSIV.len(), IvMode::ALL.len() - 1);
    /// ```
    pub const NO_ESSIV: [IvMode; 6] = [
        IvMode::Plain,
        IvMode::Plain64,
        IvMode::Plain64Be,
        IvMode::Benbi,
        IvMode::Null,
        IvMode::Eboiv,
    ];

    /// Whether this mode fills IVs of `len` bytes as dm-crypt does:
    /// `essiv:sha256`, `eboiv` and `benbi` need one 16-byte cipher block
    /// (the first two encrypt the IV as a block, the last counts blocks);
    /// the others write at most 8 bytes at one end of any IV of 8 bytes
    /// or more and zero the rest.
    ///
    /// ```
    /// use mdu_dmcrypt::IvMode;
    /// assert!(IvMode::Plain64.iv_len_fits(32));
    /// assert!(IvMode::EssivSha256.iv_len_fits(16));
    /// assert!(!IvMode::EssivSha256.iv_len_fits(32));
    /// ```
    pub const fn iv_len_fits(self, len: usize) -> bool {
        match self {
            IvMode::EssivSha256 | IvMode::Eboiv | IvMode::Benbi => len == 16,
            IvMode::Plain | IvMode::Plain64 | IvMode::Plain64Be | IvMode::Null => len >= 8,
        }
    }

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
    type Err = Error;

    /// Parses an IV generator name as it appears after `aes-xts-`.
    fn from_str(s: &str) -> Result<IvMode, Error> {
        IvMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| Error::UnknownIvMode {
                mode: s.into(),
                supported: &IvMode::ALL,
            })
    }
}

impl fmt::Display for IvMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
