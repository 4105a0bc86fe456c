//! dm-crypt cipher specs: `<cipher>-<chainmode>-<ivmode>`, and the one
//! table that says which of them this crate runs.

use alloc::string::ToString;
use core::fmt;
use core::str::FromStr;

use crate::{Error, IvMode};

/// The cipher of a spec, the part before the chaining mode: AES, the
/// other 128-bit block ciphers of dm-crypt and LUKS (Serpent, Twofish,
/// Camellia, SM4), or Adiantum's `xchacha12,aes`.
///
/// ```
/// use mdu_dmcrypt::{Cipher, CipherSpec};
/// assert_eq!(CipherSpec::parse("serpent-xts-plain64")?.cipher(), Cipher::Serpent);
/// assert_eq!(Cipher::Twofish.name(), "twofish");
/// # Ok::<(), mdu_dmcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Cipher {
    /// AES (FIPS 197), mdu's own backends.
    Aes,
    /// Serpent, through the RustCrypto `serpent` crate.
    Serpent,
    /// Twofish, through the RustCrypto `twofish` crate.
    Twofish,
    /// Camellia (RFC 3713), through the RustCrypto `camellia` crate.
    Camellia,
    /// SM4 (GB/T 32907), through the RustCrypto `sm4` crate: 128-bit keys
    /// only.
    Sm4,
    /// Adiantum's XChaCha12 and AES (`xchacha12,aes`).
    XChaCha12Aes,
}

impl Cipher {
    /// The name in a spec (`aes`, `serpent`, `xchacha12,aes`, ...).
    ///
    /// ```
    /// assert_eq!(mdu_dmcrypt::Cipher::XChaCha12Aes.name(), "xchacha12,aes");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Cipher::Aes => "aes",
            Cipher::Serpent => "serpent",
            Cipher::Twofish => "twofish",
            Cipher::Camellia => "camellia",
            Cipher::Sm4 => "sm4",
            Cipher::XChaCha12Aes => "xchacha12,aes",
        }
    }

    /// The name of its keys in messages (`AES` in `AES-256`, `Serpent` in
    /// `Serpent-128`); Adiantum's key is the AES-256-sized key it derives
    /// everything from.
    ///
    /// ```
    /// assert_eq!(mdu_dmcrypt::Cipher::Sm4.key_label(), "SM4");
    /// ```
    pub const fn key_label(self) -> &'static str {
        match self {
            Cipher::Aes | Cipher::XChaCha12Aes => "AES",
            Cipher::Serpent => "Serpent",
            Cipher::Twofish => "Twofish",
            Cipher::Camellia => "Camellia",
            Cipher::Sm4 => "SM4",
        }
    }
}

impl fmt::Display for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One row of [`SUPPORTED`]: a cipher and chaining mode this crate runs,
/// its IV width, the IV modes it takes and its key lengths.
///
/// ```
/// use mdu_dmcrypt::{ChainMode, Cipher, SUPPORTED};
/// let xts = SUPPORTED.iter().find(|c| c.chain == ChainMode::Xts).unwrap();
/// assert_eq!((xts.name, xts.iv_len, xts.key_lens), ("aes-xts", 16, &[32, 64][..]));
/// let hctr2 = SUPPORTED.iter().find(|c| c.chain == ChainMode::Hctr2).unwrap();
/// assert_eq!(hctr2.iv_len, 32);
/// let sm4 = SUPPORTED.iter().find(|c| c.cipher == Cipher::Sm4 && c.chain == ChainMode::Xts);
/// assert_eq!(sm4.unwrap().key_lens, [32]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SupportedCipher {
    /// The cipher and chaining mode as a spec names them (`aes-xts`).
    pub name: &'static str,
    /// The cipher before the chaining mode.
    pub cipher: Cipher,
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
/// The AES rows come first: each chaining mode's first row is the one
/// [`CipherSpec::new`] names. The Serpent, Twofish, Camellia and SM4 rows
/// run mdu's portable XTS and CBC over the RustCrypto block ciphers
/// (`mdu_xts::BlockXts`, `mdu_cbc::BlockCbc`), one sector per call; their
/// `essiv:sha256` encrypts IVs with the same block cipher keyed by the
/// 32-byte salt, as the kernel's `essiv` template does, so SM4, which has
/// only 128-bit keys, takes no `essiv` (the kernel refuses it too). Their
/// key lengths are those cryptsetup uses (128, 192 and 256 bits per key;
/// SM4 128).
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
/// assert_eq!(names[..4], ["aes-xts", "aes-cbc", "aes-hctr2", "xchacha12,aes-adiantum"]);
/// assert!(names.contains(&"serpent-xts") && names.contains(&"sm4-cbc"));
/// ```
pub const SUPPORTED: &[SupportedCipher] = &[
    SupportedCipher {
        name: "aes-xts",
        cipher: Cipher::Aes,
        chain: ChainMode::Xts,
        iv_len: 16,
        iv_modes: &IvMode::ALL,
        key_lens: &[32, 64],
    },
    SupportedCipher {
        name: "aes-cbc",
        cipher: Cipher::Aes,
        chain: ChainMode::Cbc,
        iv_len: 16,
        iv_modes: &IvMode::ALL,
        key_lens: &[16, 32],
    },
    SupportedCipher {
        name: "aes-hctr2",
        cipher: Cipher::Aes,
        chain: ChainMode::Hctr2,
        iv_len: 32,
        iv_modes: &IvMode::WIDE,
        key_lens: &[16, 32],
    },
    SupportedCipher {
        name: "xchacha12,aes-adiantum",
        cipher: Cipher::XChaCha12Aes,
        chain: ChainMode::Adiantum,
        iv_len: 32,
        iv_modes: &IvMode::WIDE,
        key_lens: &[32],
    },
    block_row(
        "serpent-xts",
        Cipher::Serpent,
        ChainMode::Xts,
        &IvMode::ALL,
        &[32, 48, 64],
    ),
    block_row(
        "serpent-cbc",
        Cipher::Serpent,
        ChainMode::Cbc,
        &IvMode::ALL,
        &[16, 24, 32],
    ),
    block_row(
        "twofish-xts",
        Cipher::Twofish,
        ChainMode::Xts,
        &IvMode::ALL,
        &[32, 48, 64],
    ),
    block_row(
        "twofish-cbc",
        Cipher::Twofish,
        ChainMode::Cbc,
        &IvMode::ALL,
        &[16, 24, 32],
    ),
    block_row(
        "camellia-xts",
        Cipher::Camellia,
        ChainMode::Xts,
        &IvMode::ALL,
        &[32, 48, 64],
    ),
    block_row(
        "camellia-cbc",
        Cipher::Camellia,
        ChainMode::Cbc,
        &IvMode::ALL,
        &[16, 24, 32],
    ),
    block_row(
        "sm4-xts",
        Cipher::Sm4,
        ChainMode::Xts,
        &IvMode::NO_ESSIV,
        &[32],
    ),
    block_row(
        "sm4-cbc",
        Cipher::Sm4,
        ChainMode::Cbc,
        &IvMode::NO_ESSIV,
        &[16],
    ),
];

/// A row of a 128-bit block cipher other than AES (16-byte IVs).
const fn block_row(
    name: &'static str,
    cipher: Cipher,
    chain: ChainMode,
    iv_modes: &'static [IvMode],
    key_lens: &'static [usize],
) -> SupportedCipher {
    SupportedCipher {
        name,
        cipher,
        chain,
        iv_len: 16,
        iv_modes,
        key_lens,
    }
}

/// The first row of `chain`, its AES row (Adiantum's only row; every
/// chaining mode has one: see the test `table_has_a_row_per_chain_mode`).
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

/// The row of `cipher` and `chain`, if the table has one.
const fn find_row(cipher: Cipher, chain: ChainMode) -> Option<&'static SupportedCipher> {
    let mut i = 0;
    while i < SUPPORTED.len() {
        let r = &SUPPORTED[i];
        if r.chain as u8 == chain as u8 && r.cipher as u8 == cipher as u8 {
            return Some(r);
        }
        i += 1;
    }
    None
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
    /// XTS (IEEE 1619): the key is two keys of the cipher (AES: 32 or 64
    /// bytes in all).
    Xts,
    /// CBC: one key of the cipher (AES: 16 or 32 bytes).
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

    /// The key lengths in bytes of this mode's first (AES) row of
    /// [`SUPPORTED`], shortest first; a spec's own are
    /// [`CipherSpec::key_lens`].
    ///
    /// ```
    /// assert_eq!(mdu_dmcrypt::ChainMode::Xts.key_lens(), [32, 64]);
    /// ```
    pub const fn key_lens(self) -> &'static [usize] {
        row(self).key_lens
    }

    /// The IV width in bytes of this mode's ciphers, from [`SUPPORTED`]
    /// (every row of a chaining mode has the same).
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
    row: &'static SupportedCipher,
    iv_mode: IvMode,
}

impl CipherSpec {
    /// A spec of the chaining mode's first row (AES; Adiantum's
    /// `xchacha12,aes`) from its parts.
    ///
    /// ```
    /// use mdu_dmcrypt::{ChainMode, CipherSpec, IvMode};
    /// let spec = CipherSpec::new(ChainMode::Xts, IvMode::Plain64);
    /// assert_eq!(spec.to_string(), "aes-xts-plain64");
    /// ```
    pub const fn new(chain: ChainMode, iv_mode: IvMode) -> CipherSpec {
        CipherSpec {
            row: row(chain),
            iv_mode,
        }
    }

    /// A spec of any cipher from its parts.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedCipher`] unless [`SUPPORTED`] has a row
    /// for `cipher` and `chain`; [`Error::UnknownIvMode`] if that
    /// row does not take `iv_mode`.
    ///
    /// ```
    /// use mdu_dmcrypt::{ChainMode, Cipher, CipherSpec, IvMode};
    /// let spec = CipherSpec::with_cipher(Cipher::Twofish, ChainMode::Cbc, IvMode::EssivSha256)?;
    /// assert_eq!(spec.to_string(), "twofish-cbc-essiv:sha256");
    /// assert!(CipherSpec::with_cipher(Cipher::Sm4, ChainMode::Cbc, IvMode::EssivSha256).is_err());
    /// assert!(CipherSpec::with_cipher(Cipher::Serpent, ChainMode::Hctr2, IvMode::Plain64).is_err());
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn with_cipher(
        cipher: Cipher,
        chain: ChainMode,
        iv_mode: IvMode,
    ) -> Result<CipherSpec, Error> {
        let row = find_row(cipher, chain).ok_or_else(|| Error::UnsupportedCipher {
            spec: alloc::format!("{cipher}-{chain}-{iv_mode}"),
        })?;
        if !row.iv_modes.contains(&iv_mode) {
            return Err(Error::UnknownIvMode {
                mode: iv_mode.name().into(),
                supported: row.iv_modes,
            });
        }
        Ok(CipherSpec { row, iv_mode })
    }

    /// Parses `<cipher>-<chainmode>-<ivmode>` against [`SUPPORTED`] (the
    /// case of the cipher and of the chaining mode is ignored, as
    /// cryptsetup does).
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedCipher`] unless the spec's cipher and
    /// chaining mode are a row of [`SUPPORTED`] (`aes-xts-`,
    /// `serpent-cbc-`, ...);
    /// [`Error::UnknownIvMode`] for an IV generator that row does
    /// not take (including `lmk`, `tcw`, `random`, `elephant`). Both
    /// messages list what is supported.
    ///
    /// ```
    /// use mdu_dmcrypt::{CipherSpec, Error, IvMode};
    /// assert_eq!(CipherSpec::parse("AES-XTS-plain64")?.iv_mode(), IvMode::Plain64);
    /// assert_eq!(CipherSpec::parse("twofish-cbc-plain64")?.key_lens(), [16, 24, 32]);
    /// let err = CipherSpec::parse("blowfish-cbc-plain64").unwrap_err();
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
                cipher.eq_ignore_ascii_case(r.cipher.name())
                    && chain.eq_ignore_ascii_case(r.chain.name())
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
        Ok(CipherSpec { row, iv_mode })
    }

    /// The chaining mode.
    ///
    /// ```
    /// use mdu_dmcrypt::{ChainMode, CipherSpec};
    /// assert_eq!(CipherSpec::parse("aes-xts-null")?.chain(), ChainMode::Xts);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn chain(&self) -> ChainMode {
        self.row.chain
    }

    /// The cipher.
    ///
    /// ```
    /// use mdu_dmcrypt::{Cipher, CipherSpec};
    /// assert_eq!(CipherSpec::parse("camellia-cbc-plain64")?.cipher(), Cipher::Camellia);
    /// assert_eq!(CipherSpec::parse("aes-xts-plain64")?.cipher(), Cipher::Aes);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn cipher(&self) -> Cipher {
        self.row.cipher
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
        self.row.name
    }

    /// The IV width in bytes of the spec's cipher (from [`SUPPORTED`]).
    ///
    /// ```
    /// use mdu_dmcrypt::CipherSpec;
    /// assert_eq!(CipherSpec::parse("xchacha12,aes-adiantum-plain64")?.iv_len(), 32);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn iv_len(&self) -> usize {
        self.row.iv_len
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
        self.row.key_lens
    }

    /// The key length cryptsetup picks when none is given: the longest
    /// (256-bit keys: 64 bytes for XTS, 32 for CBC; SM4's 128-bit keys).
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
        let row = self.row;
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
        if self.row.chain == ChainMode::Xts && weak == WeakKeys::Refuse {
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
            assert_eq!(row(chain).chain, chain);
            assert_eq!(
                SUPPORTED.iter().find(|r| r.chain == chain),
                Some(row(chain))
            );
        }
        assert_eq!(row(ChainMode::Xts).cipher, Cipher::Aes);
        assert_eq!(row(ChainMode::Cbc).cipher, Cipher::Aes);
        for (i, r) in SUPPORTED.iter().enumerate() {
            assert_eq!(r.name, format!("{}-{}", r.cipher, r.chain));
            assert_eq!(find_row(r.cipher, r.chain), Some(r));
            // One row per cipher and chaining mode.
            assert!(
                !SUPPORTED[..i]
                    .iter()
                    .any(|o| (o.cipher, o.chain) == (r.cipher, r.chain))
            );
        }
    }

    #[test]
    fn every_row_takes_exactly_the_iv_modes_that_fit_its_width() {
        for r in SUPPORTED {
            // SM4, which has no 32-byte keys, cannot key its own ESSIV
            // cipher with the hash.
            let essiv_keyable = r.cipher != Cipher::Sm4;
            let fit: Vec<IvMode> = IvMode::ALL
                .into_iter()
                .filter(|m| m.iv_len_fits(r.iv_len))
                .filter(|&m| essiv_keyable || m != IvMode::EssivSha256)
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
                // Every length natively; the edges of the row's lengths
                // under Miri (the sweep over twelve rows is a minute there).
                let lens: Vec<usize> = if cfg!(miri) {
                    let edges = r.key_lens.iter().flat_map(|&n| [n - 1, n, n + 1]);
                    edges.chain([0, MAX_KEY_LEN + 1]).collect()
                } else {
                    (0..=MAX_KEY_LEN + 1).collect()
                };
                for len in lens {
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
