//! dm-crypt cipher specs: `<cipher>-<chainmode>-<ivmode>`, and the one
//! table that says which of them this crate runs.

use alloc::string::ToString;
use core::fmt;
use core::str::FromStr;

use crate::Error;

/// One row of [`SUPPORTED`]: a cipher and chaining mode this crate runs,
/// its IV width, the IV modes it takes and its key lengths.
///
/// ```
/// use mdu_dmcrypt::{ChainMode, SUPPORTED};
/// let xts = SUPPORTED.iter().find(|c| c.chain == ChainMode::Xts).unwrap();
/// assert_eq!((xts.name, xts.iv_len, xts.key_lens), ("aes-xts", 16, &[32, 64][..]));
/// let hctr2 = SUPPORTED.iter().find(|c| c.chain == ChainMode::Hctr2).unwrap();
/// assert_eq!(hctr2.iv_len, 32);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SupportedCipher {
    /// The cipher and chaining mode as a spec names them (`aes-xts`).
    pub name: &'static str,
    /// The block cipher (`aes`; Adiantum's `xchacha12,aes` names its
    /// stream cipher and its block cipher).
    pub cipher: &'static str,
    /// Its chaining mode.
    pub chain: ChainMode,
    /// Its IV (tweak) width in bytes, the kernel's `ivsize`: 16 for XTS and
    /// CBC, 32 for HCTR2 and Adiantum.
    pub iv_len: usize,
    /// The IV modes it takes: those that fill IVs of its width
    /// ([`IvMode::iv_len_fits`]).
    pub iv_modes: &'static [IvMode],
    /// The whole key lengths in bytes it takes, shortest first (for XTS
    /// both halves together).
    pub key_lens: &'static [usize],
}

/// Every cipher spec this crate runs, one row per cipher and chaining
/// mode: parsing, key checks, IV widths and error messages all read it,
/// and nothing else lists key lengths.
///
/// The wide-block rows are spelled as dm-crypt and cryptsetup spell them
/// (dm-crypt makes `<cipher>-<chainmode>` the kernel algorithm
/// `<chainmode>(<cipher>)`: `hctr2(aes)`, `adiantum(xchacha12,aes)`), and
/// take the IV modes that dm-crypt runs over a 32-byte IV: `essiv` and
/// `eboiv` need the IV to be one cipher block (the kernel's `essiv`
/// template and `eboiv` constructor refuse anything else), and `benbi`
/// counts cipher blocks, which a wide-block mode does not have.
///
/// ```
/// use mdu_dmcrypt::SUPPORTED;
/// let names: Vec<&str> = SUPPORTED.iter().map(|c| c.name).collect();
/// assert_eq!(names, ["aes-xts", "aes-cbc", "aes-hctr2", "xchacha12,aes-adiantum"]);
/// ```
pub const SUPPORTED: &[SupportedCipher] = &[
    SupportedCipher {
        name: "aes-xts",
        cipher: "aes",
        chain: ChainMode::Xts,
        iv_len: 16,
        iv_modes: &IvMode::ALL,
        key_lens: &[32, 64],
    },
    SupportedCipher {
        name: "aes-cbc",
        cipher: "aes",
        chain: ChainMode::Cbc,
        iv_len: 16,
        iv_modes: &IvMode::ALL,
        key_lens: &[16, 32],
    },
    SupportedCipher {
        name: "aes-hctr2",
        cipher: "aes",
        chain: ChainMode::Hctr2,
        iv_len: 32,
        iv_modes: &IvMode::WIDE,
        key_lens: &[16, 32],
    },
    SupportedCipher {
        name: "xchacha12,aes-adiantum",
        cipher: "xchacha12,aes",
        chain: ChainMode::Adiantum,
        iv_len: 32,
        iv_modes: &IvMode::WIDE,
        key_lens: &[32],
    },
];

/// The row of `chain` (every chaining mode has one: see the test
/// `table_has_a_row_per_chain_mode`).
const fn row(chain: ChainMode) -> &'static SupportedCipher {
    let mut i = 0;
    while i < SUPPORTED.len() {
        if SUPPORTED[i].chain as u8 == chain as u8 {
            return &SUPPORTED[i];
        }
        i += 1;
    }
    &SUPPORTED[0]
}

/// The longest key of any supported spec, in bytes (AES-256-XTS: 64).
///
/// ```
/// assert_eq!(mdu_dmcrypt::MAX_KEY_LEN, 64);
/// ```
pub const MAX_KEY_LEN: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < SUPPORTED.len() {
        let lens = SUPPORTED[i].key_lens;
        let mut j = 0;
        while j < lens.len() {
            if lens[j] > max {
                max = lens[j];
            }
            j += 1;
        }
        i += 1;
    }
    max
};

/// What to do with a weak key: an XTS key whose two halves (the data key
/// and the tweak key) are equal.
///
/// The policy is the kernel's where weak keys are forbidden (its
/// `xts_verify_key`, in FIPS mode or for a caller that asks for it): such a
/// key is refused (by the one rule, [`mdu_xts::verify_key`], and its error,
/// `SetupError::WeakKey`: see [`Error::is_weak_key`]) unless the
/// caller opts in with [`WeakKeys::Allow`]. IEEE 1619 test vector 1 and images made with
/// such a key need the opt-in; nothing else should. It is applied in one
/// place, [`CipherSpec::check_key`], which every
/// [`SectorCipher`](crate::SectorCipher) calls; CBC has no weak keys.
///
/// ```
/// use mdu_dmcrypt::{CipherSpec, Error, WeakKeys};
/// let spec = CipherSpec::parse("aes-xts-plain64")?;
/// let weak = [7u8; 64];
/// assert!(spec.check_key(&weak, WeakKeys::Refuse).unwrap_err().is_weak_key());
/// assert!(spec.check_key(&weak, WeakKeys::Allow).is_ok());
/// assert_eq!(WeakKeys::default(), WeakKeys::Refuse);
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WeakKeys {
    /// Refuse a weak key (the default).
    #[default]
    Refuse,
    /// Accept it.
    Allow,
}

impl WeakKeys {
    /// `Allow` if `allow`, else `Refuse` (for a command-line flag).
    ///
    /// ```
    /// use mdu_dmcrypt::WeakKeys;
    /// assert_eq!(WeakKeys::allow_if(true), WeakKeys::Allow);
    /// assert_eq!(WeakKeys::allow_if(false), WeakKeys::Refuse);
    /// ```
    pub const fn allow_if(allow: bool) -> WeakKeys {
        if allow {
            WeakKeys::Allow
        } else {
            WeakKeys::Refuse
        }
    }
}

/// The chaining mode of a cipher spec.
///
/// The mode says which cipher the spec names and (through [`SUPPORTED`])
/// which key lengths and IV width fit it;
/// [`SectorCipher`](crate::SectorCipher) builds the cipher (from `mdu_xts`,
/// `mdu_cbc`, `mdu_hctr2` or `mdu_adiantum`), and
/// [`IvGenerator`](crate::IvGenerator) runs any other
/// [`DataUnitCipher`](mdu_core::DataUnitCipher).
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
    /// HCTR2 (`aes-hctr2`): one AES key of 16 or 32 bytes, 32-byte tweaks.
    Hctr2,
    /// Adiantum (`xchacha12,aes-adiantum`): a 32-byte key, 32-byte tweaks.
    Adiantum,
}

impl ChainMode {
    /// The name in a spec (`xts`, `cbc`, `hctr2`, `adiantum`).
    ///
    /// ```
    /// assert_eq!(mdu_dmcrypt::ChainMode::Cbc.name(), "cbc");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            ChainMode::Xts => "xts",
            ChainMode::Cbc => "cbc",
            ChainMode::Hctr2 => "hctr2",
            ChainMode::Adiantum => "adiantum",
        }
    }

    /// The key lengths in bytes the mdu ciphers of this mode take, shortest
    /// first, from [`SUPPORTED`].
    ///
    /// ```
    /// assert_eq!(mdu_dmcrypt::ChainMode::Xts.key_lens(), [32, 64]);
    /// ```
    pub const fn key_lens(self) -> &'static [usize] {
        row(self).key_lens
    }

    /// The IV width in bytes of this mode's cipher, from [`SUPPORTED`].
    ///
    /// ```
    /// use mdu_dmcrypt::ChainMode;
    /// assert_eq!((ChainMode::Cbc.iv_len(), ChainMode::Adiantum.iv_len()), (16, 32));
    /// ```
    pub const fn iv_len(self) -> usize {
        row(self).iv_len
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

/// A dm-crypt cipher spec, `<cipher>-<chainmode>-<ivmode>` (one of
/// [`SUPPORTED`]), as in a dm-crypt
/// table or `cryptsetup --cipher`: `aes-xts-plain64` (LUKS2's default),
/// `aes-cbc-essiv:sha256` (LUKS1's and old plain mode's), `aes-cbc-plain64`,
/// `aes-hctr2-plain64`, `xchacha12,aes-adiantum-plain64`, ...
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
/// # Ok::<(), mdu_dmcrypt::Error>(())
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

    /// Parses `<cipher>-<chainmode>-<ivmode>` against [`SUPPORTED`] (the
    /// case of the cipher and of the chaining mode is ignored, as
    /// cryptsetup does).
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedCipher`] unless the spec's cipher and
    /// chaining mode are a row of [`SUPPORTED`] (`aes-xts-`, `aes-cbc-`);
    /// [`Error::UnknownIvMode`] for an IV generator that row does
    /// not take (including `lmk`, `tcw`, `random`, `elephant`). Both
    /// messages list what is supported.
    ///
    /// ```
    /// use mdu_dmcrypt::{CipherSpec, Error, IvMode};
    /// assert_eq!(CipherSpec::parse("AES-XTS-plain64")?.iv_mode(), IvMode::Plain64);
    /// let err = CipherSpec::parse("twofish-cbc-plain64").unwrap_err();
    /// assert!(matches!(err, Error::UnsupportedCipher { .. }));
    /// assert!(err.to_string().contains("aes-xts"), "{err}");
    /// assert!(matches!(
    ///     CipherSpec::parse("aes-cbc-lmk"),
    ///     Err(Error::UnknownIvMode { .. })
    /// ));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn parse(spec: &str) -> Result<CipherSpec, Error> {
        let unsupported = || Error::UnsupportedCipher {
            spec: spec.to_string(),
        };
        let mut parts = spec.splitn(3, '-');
        let (Some(cipher), Some(chain), Some(iv)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(unsupported());
        };
        let row = SUPPORTED
            .iter()
            .find(|r| {
                cipher.eq_ignore_ascii_case(r.cipher) && chain.eq_ignore_ascii_case(r.chain.name())
            })
            .ok_or_else(unsupported)?;
        let iv_mode = row
            .iv_modes
            .iter()
            .copied()
            .find(|m| m.name() == iv)
            .ok_or_else(|| Error::UnknownIvMode {
                mode: iv.into(),
                supported: row.iv_modes,
            })?;
        Ok(CipherSpec {
            chain: row.chain,
            iv_mode,
        })
    }

    /// The chaining mode.
    ///
    /// ```
    /// use mdu_dmcrypt::{ChainMode, CipherSpec};
    /// assert_eq!(CipherSpec::parse("aes-xts-null")?.chain(), ChainMode::Xts);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn chain(&self) -> ChainMode {
        self.chain
    }

    /// The IV generator.
    ///
    /// ```
    /// use mdu_dmcrypt::{CipherSpec, IvMode};
    /// assert_eq!(CipherSpec::parse("aes-cbc-benbi")?.iv_mode(), IvMode::Benbi);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn iv_mode(&self) -> IvMode {
        self.iv_mode
    }

    /// The spec's cipher and chaining mode as a spec names them (`aes-xts`).
    ///
    /// ```
    /// use mdu_dmcrypt::CipherSpec;
    /// assert_eq!(CipherSpec::parse("aes-cbc-essiv:sha256")?.cipher_name(), "aes-cbc");
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn cipher_name(&self) -> &'static str {
        row(self.chain).name
    }

    /// The IV width in bytes of the spec's cipher (from [`SUPPORTED`]).
    ///
    /// ```
    /// use mdu_dmcrypt::CipherSpec;
    /// assert_eq!(CipherSpec::parse("xchacha12,aes-adiantum-plain64")?.iv_len(), 32);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn iv_len(&self) -> usize {
        row(self.chain).iv_len
    }

    /// The whole key lengths in bytes the spec's cipher takes, shortest
    /// first (from [`SUPPORTED`]).
    ///
    /// ```
    /// use mdu_dmcrypt::CipherSpec;
    /// assert_eq!(CipherSpec::parse("aes-xts-plain64")?.key_lens(), [32, 64]);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn key_lens(&self) -> &'static [usize] {
        row(self.chain).key_lens
    }

    /// The key length cryptsetup picks when none is given: the longest
    /// (AES-256: 64 bytes for XTS, 32 for CBC).
    ///
    /// ```
    /// use mdu_dmcrypt::CipherSpec;
    /// assert_eq!(CipherSpec::parse("aes-xts-plain64")?.default_key_len(), 64);
    /// assert_eq!(CipherSpec::parse("aes-cbc-plain64")?.default_key_len(), 32);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn default_key_len(&self) -> usize {
        match self.key_lens() {
            [.., last] => *last,
            [] => 0,
        }
    }

    /// Checks that a key of `len` bytes fits the spec's cipher.
    ///
    /// # Errors
    ///
    /// [`Error::KeyLength`] unless `len` is one of
    /// [`key_lens`](Self::key_lens).
    ///
    /// ```
    /// use mdu_dmcrypt::CipherSpec;
    /// let xts = CipherSpec::parse("aes-xts-plain64")?;
    /// assert!(xts.check_key_len(64).is_ok());
    /// assert!(xts.check_key_len(16).unwrap_err().to_string().contains("32 or 64"));
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn check_key_len(&self, len: usize) -> Result<(), Error> {
        let row = row(self.chain);
        if row.key_lens.contains(&len) {
            return Ok(());
        }
        Err(Error::KeyLength {
            cipher: row.name,
            len,
            expected: row.key_lens,
        })
    }

    /// Checks a whole key: its length ([`check_key_len`](Self::check_key_len)),
    /// then, for XTS, the weak-key policy ([`WeakKeys`]): two equal halves
    /// are refused unless `weak` is [`WeakKeys::Allow`]. This is the one
    /// place the policy lives; [`SectorCipher::new`](crate::SectorCipher::new)
    /// calls it.
    ///
    /// # Errors
    ///
    /// [`Error::KeyLength`], or the weak-key error of
    /// [`mdu_xts::verify_key`] ([`Error::is_weak_key`]).
    ///
    /// ```
    /// use mdu_dmcrypt::{CipherSpec, Error, WeakKeys};
    /// let xts = CipherSpec::parse("aes-xts-plain64")?;
    /// let good: Vec<u8> = (0..64).collect();
    /// assert!(xts.check_key(&good, WeakKeys::Refuse).is_ok());
    /// let err = xts.check_key(&[1u8; 32], WeakKeys::Refuse).unwrap_err();
    /// assert!(err.is_weak_key());
    /// // CBC has no weak keys.
    /// let cbc = CipherSpec::parse("aes-cbc-plain64")?;
    /// assert!(cbc.check_key(&[1u8; 32], WeakKeys::Refuse).is_ok());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn check_key(&self, key: &[u8], weak: WeakKeys) -> Result<(), Error> {
        self.check_key_len(key.len())?;
        if self.chain == ChainMode::Xts && weak == WeakKeys::Refuse {
            mdu_xts::verify_key(key)?;
        }
        Ok(())
    }
}

impl FromStr for CipherSpec {
    type Err = Error;

    /// As [`CipherSpec::parse`].
    fn from_str(s: &str) -> Result<CipherSpec, Error> {
        CipherSpec::parse(s)
    }
}

impl fmt::Display for CipherSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.cipher_name(), self.iv_mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec::Vec;

    #[test]
    fn table_has_a_row_per_chain_mode() {
        let chains = [
            ChainMode::Xts,
            ChainMode::Cbc,
            ChainMode::Hctr2,
            ChainMode::Adiantum,
        ];
        for chain in chains {
            let rows = SUPPORTED.iter().filter(|r| r.chain == chain).count();
            assert_eq!(rows, 1, "{chain}");
            assert_eq!(row(chain).chain, chain);
            assert_eq!(row(chain).name, format!("{}-{chain}", row(chain).cipher));
        }
        assert_eq!(SUPPORTED.len(), chains.len());
    }

    #[test]
    fn every_row_takes_exactly_the_iv_modes_that_fit_its_width() {
        for r in SUPPORTED {
            let fit: Vec<IvMode> = IvMode::ALL
                .into_iter()
                .filter(|m| m.iv_len_fits(r.iv_len))
                .collect();
            assert_eq!(r.iv_modes, &fit[..], "{}", r.name);
        }
    }

    #[test]
    fn every_supported_spec_round_trips_and_checks_its_keys() {
        for r in SUPPORTED {
            for mode in r.iv_modes {
                let text = format!("{}-{mode}", r.name);
                let spec = CipherSpec::parse(&text).unwrap();
                assert_eq!(spec.to_string(), text);
                for len in 0..=MAX_KEY_LEN + 1 {
                    let fits = r.key_lens.contains(&len);
                    assert_eq!(spec.check_key_len(len).is_ok(), fits, "{text} {len}");
                    let key: Vec<u8> = (0..len as u8).collect();
                    assert_eq!(spec.check_key(&key, WeakKeys::Refuse).is_ok(), fits);
                }
            }
        }
    }

    #[test]
    fn weak_xts_keys_are_refused_unless_allowed() {
        let xts = CipherSpec::parse("aes-xts-plain64").unwrap();
        for len in [32, 64] {
            let mut key = alloc::vec![0x5au8; len];
            assert!(xts.check_key(&key, WeakKeys::Refuse).is_err());
            assert!(xts.check_key(&key, WeakKeys::Allow).is_ok());
            // One differing byte anywhere in either half makes it strong.
            for i in [0, len / 2 - 1, len / 2, len - 1] {
                key[i] ^= 1;
                assert!(xts.check_key(&key, WeakKeys::Refuse).is_ok(), "{len} {i}");
                key[i] ^= 1;
            }
        }
    }
}
