//! Encryption policies and the contexts stored with each encrypted inode
//! (ext4's xattr `c` of index 9): parsed from untrusted bytes, checked
//! against the rules the kernel applies, and written back.
//!
//! | struct | bytes | layout |
//! |---|---|---|
//! | context v1 | 28 | version **1**, contents mode, names mode, flags, 8-byte key descriptor, 16-byte nonce |
//! | context v2 | 40 | version 2, contents mode, names mode, flags, `log2_data_unit_size`, 3 zero bytes, 16-byte key identifier, 16-byte nonce |

use core::fmt;

/// One of fscrypt's encryption modes (`FSCRYPT_MODE_*`).
///
/// ```
/// use mdu_fscrypt::policy::Mode;
///
/// assert_eq!(Mode::from_u8(1), Some(Mode::Aes256Xts));
/// assert_eq!(Mode::Aes256Xts.key_len(), 64);
/// assert_eq!(Mode::Adiantum.iv_len(), 32);
/// assert_eq!(Mode::from_u8(2), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Mode {
    /// 1: AES-256-XTS, contents.
    Aes256Xts,
    /// 4: AES-256-CBC with ciphertext stealing (CS3), names.
    Aes256Cts,
    /// 5: AES-128-CBC with ESSIV (SHA-256), contents.
    Aes128CbcEssiv,
    /// 6: AES-128-CBC with ciphertext stealing, names.
    Aes128Cts,
    /// 7: SM4-XTS, contents.
    Sm4Xts,
    /// 8: SM4-CBC with ciphertext stealing, names.
    Sm4Cts,
    /// 9: Adiantum (XChaCha12, NH, Poly1305, AES-256), contents and names.
    Adiantum,
    /// 10: AES-256-HCTR2, names.
    Aes256Hctr2,
}

impl Mode {
    /// The mode of an on-disk value, `None` for a value no kernel defines.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Mode;
    /// assert_eq!(Mode::from_u8(10), Some(Mode::Aes256Hctr2));
    /// ```
    pub const fn from_u8(v: u8) -> Option<Mode> {
        Some(match v {
            1 => Mode::Aes256Xts,
            4 => Mode::Aes256Cts,
            5 => Mode::Aes128CbcEssiv,
            6 => Mode::Aes128Cts,
            7 => Mode::Sm4Xts,
            8 => Mode::Sm4Cts,
            9 => Mode::Adiantum,
            10 => Mode::Aes256Hctr2,
            _ => return None,
        })
    }

    /// The on-disk value.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Mode;
    /// assert_eq!(Mode::Aes256Cts.as_u8(), 4);
    /// ```
    pub const fn as_u8(self) -> u8 {
        match self {
            Mode::Aes256Xts => 1,
            Mode::Aes256Cts => 4,
            Mode::Aes128CbcEssiv => 5,
            Mode::Aes128Cts => 6,
            Mode::Sm4Xts => 7,
            Mode::Sm4Cts => 8,
            Mode::Adiantum => 9,
            Mode::Aes256Hctr2 => 10,
        }
    }

    /// The length of the key this mode takes (of a per-file or per-mode
    /// key), in bytes.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Mode;
    /// assert_eq!(Mode::Aes128Cts.key_len(), 16);
    /// ```
    pub const fn key_len(self) -> usize {
        match self {
            Mode::Aes256Xts => 64,
            Mode::Aes256Cts | Mode::Sm4Xts | Mode::Adiantum | Mode::Aes256Hctr2 => 32,
            Mode::Aes128CbcEssiv | Mode::Aes128Cts | Mode::Sm4Cts => 16,
        }
    }

    /// The length of this mode's IV (tweak), in bytes.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Mode;
    /// assert_eq!(Mode::Aes256Hctr2.iv_len(), 32);
    /// assert_eq!(Mode::Aes256Xts.iv_len(), 16);
    /// ```
    pub const fn iv_len(self) -> usize {
        match self {
            Mode::Adiantum | Mode::Aes256Hctr2 => 32,
            _ => 16,
        }
    }

    /// The smallest master key a v2 policy of this mode accepts, in bytes.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Mode;
    /// assert_eq!(Mode::Aes256Xts.min_master_key_len_v2(), 32);
    /// ```
    pub const fn min_master_key_len_v2(self) -> usize {
        match self {
            Mode::Aes128CbcEssiv | Mode::Aes128Cts | Mode::Sm4Xts | Mode::Sm4Cts => 16,
            _ => 32,
        }
    }

    /// The kernel's name of the mode.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Mode;
    /// assert_eq!(Mode::Aes256Cts.name(), "AES-256-CTS-CBC");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Aes256Xts => "AES-256-XTS",
            Mode::Aes256Cts => "AES-256-CTS-CBC",
            Mode::Aes128CbcEssiv => "AES-128-CBC-ESSIV",
            Mode::Aes128Cts => "AES-128-CTS-CBC",
            Mode::Sm4Xts => "SM4-XTS",
            Mode::Sm4Cts => "SM4-CTS-CBC",
            Mode::Adiantum => "Adiantum",
            Mode::Aes256Hctr2 => "AES-256-HCTR2",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The policy flags byte (`FSCRYPT_POLICY_FLAG*`).
///
/// ```
/// use mdu_fscrypt::policy::Flags;
///
/// let f = Flags::from_bits(0x0b).unwrap(); // pad 32, IV_INO_LBLK_64
/// assert_eq!(f.name_padding(), 32);
/// assert!(f.iv_ino_lblk_64() && !f.direct_key());
/// assert!(Flags::from_bits(0x20).is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Flags(u8);

impl Flags {
    /// DIRECT_KEY: the master key (v1) or a per-mode key (v2) encrypts
    /// every file, the nonce goes into the IV.
    pub const DIRECT_KEY: u8 = 0x04;
    /// IV_INO_LBLK_64: a per-mode key per file system, the inode number in
    /// the IV.
    pub const IV_INO_LBLK_64: u8 = 0x08;
    /// IV_INO_LBLK_32: a per-mode key per file system, a hash of the inode
    /// number added to the data-unit index.
    pub const IV_INO_LBLK_32: u8 = 0x10;
    /// Every bit a kernel defines.
    pub const VALID: u8 = 0x1f;

    /// The flags of `bits`, `None` if an undefined bit is set.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Flags;
    /// assert_eq!(Flags::from_bits(3).unwrap().bits(), 3);
    /// ```
    pub const fn from_bits(bits: u8) -> Option<Flags> {
        if bits & !Flags::VALID == 0 {
            Some(Flags(bits))
        } else {
            None
        }
    }

    /// The on-disk byte.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Flags;
    /// assert_eq!(Flags::from_bits(0x12).unwrap().bits(), 0x12);
    /// ```
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Names are NUL-padded to a multiple of this: 4, 8, 16 or 32.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Flags;
    /// assert_eq!(Flags::from_bits(0).unwrap().name_padding(), 4);
    /// ```
    pub const fn name_padding(self) -> usize {
        4 << (self.0 & 3)
    }

    /// Whether DIRECT_KEY is set.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Flags;
    /// assert!(Flags::from_bits(4).unwrap().direct_key());
    /// ```
    pub const fn direct_key(self) -> bool {
        self.0 & Flags::DIRECT_KEY != 0
    }

    /// Whether IV_INO_LBLK_64 is set.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Flags;
    /// assert!(Flags::from_bits(8).unwrap().iv_ino_lblk_64());
    /// ```
    pub const fn iv_ino_lblk_64(self) -> bool {
        self.0 & Flags::IV_INO_LBLK_64 != 0
    }

    /// Whether IV_INO_LBLK_32 is set.
    ///
    /// ```
    /// use mdu_fscrypt::policy::Flags;
    /// assert!(Flags::from_bits(0x10).unwrap().iv_ino_lblk_32());
    /// ```
    pub const fn iv_ino_lblk_32(self) -> bool {
        self.0 & Flags::IV_INO_LBLK_32 != 0
    }
}

/// Which master key a policy names.
///
/// ```
/// use mdu_fscrypt::policy::KeySpec;
///
/// let spec = KeySpec::V2 { identifier: [0x86; 16] };
/// assert_eq!(spec.to_string(), "86868686868686868686868686868686");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeySpec {
    /// A v1 policy's 8-byte key descriptor (chosen by whoever added the
    /// key; nothing ties it to the key's bytes).
    V1 {
        /// The descriptor.
        descriptor: [u8; 8],
    },
    /// A v2 policy's 16-byte key identifier, derived from the key.
    V2 {
        /// The identifier.
        identifier: [u8; 16],
    },
}

impl fmt::Display for KeySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes: &[u8] = match self {
            KeySpec::V1 { descriptor } => descriptor,
            KeySpec::V2 { identifier } => identifier,
        };
        bytes.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// An encryption policy: the modes, the flags, the data-unit size and the
/// master key that every inode under it uses.
///
/// ```
/// use mdu_fscrypt::policy::{Context, Mode};
///
/// let ctx = Context::parse(&[
///     2, 1, 4, 3, 0, 0, 0, 0, // v2, AES-256-XTS, AES-256-CTS, pad 32
///     0x86, 0x99, 0xc2, 0xc5, 0x37, 0x07, 0x40, 0x5d, 0xa5, 0xab, 0xa5, 0xae, 0x4d, 0x85, 0x83, 0xc0,
///     0x82, 0x70, 0x92, 0x20, 0x64, 0x9b, 0xa1, 0x90, 0xf6, 0x48, 0xf6, 0x8a, 0x5f, 0xf1, 0xea, 0xba,
/// ])?;
/// let policy = ctx.policy();
/// assert_eq!((policy.contents(), policy.filenames()), (Mode::Aes256Xts, Mode::Aes256Cts));
/// assert_eq!(policy.data_unit_size(4096), 4096);
/// # Ok::<(), mdu_fscrypt::policy::PolicyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Policy {
    contents: Mode,
    filenames: Mode,
    flags: Flags,
    log2_data_unit_size: u8,
    key: KeySpec,
}

impl Policy {
    /// A policy from its parts, checked as the kernel checks one it is
    /// asked to set (the mode pair, the flags, the data-unit size).
    ///
    /// # Errors
    ///
    /// [`PolicyError`] naming the rule broken.
    ///
    /// ```
    /// use mdu_fscrypt::policy::{Flags, KeySpec, Mode, Policy, PolicyError};
    ///
    /// let key = KeySpec::V2 { identifier: [1; 16] };
    /// let pad32 = Flags::from_bits(3).unwrap();
    /// assert!(Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, pad32, 0, key).is_ok());
    /// assert!(matches!(
    ///     Policy::new(Mode::Aes256Xts, Mode::Aes128Cts, pad32, 0, key),
    ///     Err(PolicyError::ModePair { .. })
    /// ));
    /// ```
    pub fn new(
        contents: Mode,
        filenames: Mode,
        flags: Flags,
        log2_data_unit_size: u8,
        key: KeySpec,
    ) -> Result<Policy, PolicyError> {
        let v2 = matches!(key, KeySpec::V2 { .. });
        let pair_ok = matches!(
            (contents, filenames),
            (Mode::Aes256Xts, Mode::Aes256Cts)
                | (Mode::Aes128CbcEssiv, Mode::Aes128Cts)
                | (Mode::Adiantum, Mode::Adiantum)
        ) || (v2
            && matches!(
                (contents, filenames),
                (Mode::Aes256Xts, Mode::Aes256Hctr2) | (Mode::Sm4Xts, Mode::Sm4Cts)
            ));
        if !pair_ok {
            return Err(PolicyError::ModePair {
                contents,
                filenames,
                version: if v2 { 2 } else { 1 },
            });
        }
        let key_flags =
            flags.bits() & (Flags::DIRECT_KEY | Flags::IV_INO_LBLK_64 | Flags::IV_INO_LBLK_32);
        let flags_ok = if v2 {
            key_flags.count_ones() <= 1
        } else {
            key_flags & !Flags::DIRECT_KEY == 0
        };
        if !flags_ok {
            return Err(PolicyError::Flags {
                flags: flags.bits(),
                version: if v2 { 2 } else { 1 },
            });
        }
        if flags.direct_key() && contents != filenames {
            // DIRECT_KEY puts the nonce into the IV, which only a mode with
            // a 32-byte IV (Adiantum, both roles) has room for.
            return Err(PolicyError::DirectKey {
                contents,
                filenames,
            });
        }
        if log2_data_unit_size != 0 {
            let sub_block_ok =
                v2 && (9..=16).contains(&log2_data_unit_size) && !flags.iv_ino_lblk_32();
            if !sub_block_ok {
                return Err(PolicyError::DataUnitSize {
                    log2: log2_data_unit_size,
                });
            }
        }
        Ok(Policy {
            contents,
            filenames,
            flags,
            log2_data_unit_size,
            key,
        })
    }

    /// The policy version: 1 or 2.
    ///
    /// ```
    /// use mdu_fscrypt::policy::{Flags, KeySpec, Mode, Policy};
    /// let p = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::default(), 0,
    ///     KeySpec::V1 { descriptor: [0; 8] })?;
    /// assert_eq!(p.version(), 1);
    /// # Ok::<(), mdu_fscrypt::policy::PolicyError>(())
    /// ```
    pub fn version(&self) -> u8 {
        match self.key {
            KeySpec::V1 { .. } => 1,
            KeySpec::V2 { .. } => 2,
        }
    }

    /// The contents mode.
    ///
    /// See the [`Policy`] example.
    pub fn contents(&self) -> Mode {
        self.contents
    }

    /// The file-names mode (also that of symlink targets).
    ///
    /// See the [`Policy`] example.
    pub fn filenames(&self) -> Mode {
        self.filenames
    }

    /// The flags.
    ///
    /// ```
    /// use mdu_fscrypt::policy::{Flags, KeySpec, Mode, Policy};
    /// let p = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::from_bits(2).unwrap(), 0,
    ///     KeySpec::V2 { identifier: [0; 16] })?;
    /// assert_eq!(p.flags().name_padding(), 16);
    /// # Ok::<(), mdu_fscrypt::policy::PolicyError>(())
    /// ```
    pub fn flags(&self) -> Flags {
        self.flags
    }

    /// The master key the policy names.
    ///
    /// See [`KeySpec`].
    pub fn key(&self) -> KeySpec {
        self.key
    }

    /// `log2_data_unit_size` as stored: 0 means the file system's block
    /// size.
    ///
    /// See [`data_unit_size`](Self::data_unit_size).
    pub fn log2_data_unit_size(&self) -> u8 {
        self.log2_data_unit_size
    }

    /// The contents data-unit size on a file system of `block_size`-byte
    /// blocks.
    ///
    /// ```
    /// use mdu_fscrypt::policy::{Flags, KeySpec, Mode, Policy};
    /// let p = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::default(), 9,
    ///     KeySpec::V2 { identifier: [0; 16] })?;
    /// assert_eq!(p.data_unit_size(4096), 512);
    /// # Ok::<(), mdu_fscrypt::policy::PolicyError>(())
    /// ```
    pub fn data_unit_size(&self, block_size: u32) -> u32 {
        match self.log2_data_unit_size {
            0 => block_size,
            l => 1 << l,
        }
    }
}

/// A policy and the 16-byte nonce of one inode: what ext4 stores in the
/// inode's encryption xattr.
///
/// See the [`Policy`] example.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    policy: Policy,
    nonce: [u8; 16],
}

/// The length of a v1 context.
pub const CONTEXT_V1_LEN: usize = 28;
/// The length of a v2 context.
pub const CONTEXT_V2_LEN: usize = 40;

impl Context {
    /// A context from a policy and a nonce.
    ///
    /// ```
    /// use mdu_fscrypt::policy::{Context, Flags, KeySpec, Mode, Policy};
    /// let p = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::default(), 0,
    ///     KeySpec::V2 { identifier: [7; 16] })?;
    /// let ctx = Context::new(p, [9; 16]);
    /// assert_eq!(Context::parse(&ctx.to_bytes())?, ctx);
    /// # Ok::<(), mdu_fscrypt::policy::PolicyError>(())
    /// ```
    pub fn new(policy: Policy, nonce: [u8; 16]) -> Context {
        Context { policy, nonce }
    }

    /// Parses an on-disk context (untrusted bytes).
    ///
    /// # Errors
    ///
    /// [`PolicyError`]: a length other than the version's, an unknown
    /// version, mode or flag, reserved bytes not zero, or a combination
    /// the kernel refuses.
    ///
    /// ```
    /// use mdu_fscrypt::policy::{Context, PolicyError};
    /// assert_eq!(Context::parse(&[2; 39]), Err(PolicyError::Length { version: 2, len: 39 }));
    /// assert_eq!(Context::parse(&[]), Err(PolicyError::Length { version: 0, len: 0 }));
    /// ```
    pub fn parse(bytes: &[u8]) -> Result<Context, PolicyError> {
        let version = bytes.first().copied().unwrap_or(0);
        let want = match version {
            1 => CONTEXT_V1_LEN,
            2 => CONTEXT_V2_LEN,
            _ if bytes.is_empty() => return Err(PolicyError::Length { version, len: 0 }),
            v => return Err(PolicyError::Version(v)),
        };
        if bytes.len() != want {
            return Err(PolicyError::Length {
                version,
                len: bytes.len(),
            });
        }
        let mode = |i: usize| Mode::from_u8(bytes[i]).ok_or(PolicyError::UnknownMode(bytes[i]));
        let (contents, filenames) = (mode(1)?, mode(2)?);
        let flags = Flags::from_bits(bytes[3]).ok_or(PolicyError::Flags {
            flags: bytes[3],
            version,
        })?;
        let (log2, key, nonce) = if version == 1 {
            let mut descriptor = [0; 8];
            descriptor.copy_from_slice(&bytes[4..12]);
            (0, KeySpec::V1 { descriptor }, &bytes[12..28])
        } else {
            if bytes[5..8] != [0; 3] {
                return Err(PolicyError::Reserved);
            }
            let mut identifier = [0; 16];
            identifier.copy_from_slice(&bytes[8..24]);
            (bytes[4], KeySpec::V2 { identifier }, &bytes[24..40])
        };
        let policy = Policy::new(contents, filenames, flags, log2, key)?;
        let mut n = [0; 16];
        n.copy_from_slice(nonce);
        Ok(Context { policy, nonce: n })
    }

    /// The on-disk bytes: 28 for a v1 policy, 40 for v2.
    ///
    /// See [`new`](Self::new).
    pub fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        let p = &self.policy;
        let mut out = alloc::vec![
            p.version(),
            p.contents.as_u8(),
            p.filenames.as_u8(),
            p.flags.bits()
        ];
        match p.key {
            KeySpec::V1 { descriptor } => out.extend_from_slice(&descriptor),
            KeySpec::V2 { identifier } => {
                out.extend_from_slice(&[p.log2_data_unit_size, 0, 0, 0]);
                out.extend_from_slice(&identifier);
            }
        }
        out.extend_from_slice(&self.nonce);
        out
    }

    /// The policy.
    ///
    /// See the [`Policy`] example.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The inode's nonce.
    ///
    /// ```
    /// use mdu_fscrypt::policy::{Context, Flags, KeySpec, Mode, Policy};
    /// let p = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::default(), 0,
    ///     KeySpec::V2 { identifier: [7; 16] })?;
    /// assert_eq!(Context::new(p, [9; 16]).nonce(), &[9; 16]);
    /// # Ok::<(), mdu_fscrypt::policy::PolicyError>(())
    /// ```
    pub fn nonce(&self) -> &[u8; 16] {
        &self.nonce
    }
}

/// Why a context or policy was refused.
///
/// ```
/// use mdu_fscrypt::policy::{Context, PolicyError};
/// let err = Context::parse(&[3, 1, 4, 0]).unwrap_err();
/// assert_eq!(err, PolicyError::Version(3));
/// assert_eq!(err.to_string(), "unknown encryption context version 3 (known: 1, 2)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PolicyError {
    /// The context is not as long as its version says (28 for v1, 40 for
    /// v2), or empty (`version` 0).
    Length {
        /// The version byte (0 when there is none).
        version: u8,
        /// The length found.
        len: usize,
    },
    /// A version byte no kernel writes.
    Version(u8),
    /// A mode value no kernel defines.
    UnknownMode(u8),
    /// A contents and names mode the kernel does not pair.
    ModePair {
        /// The contents mode.
        contents: Mode,
        /// The names mode.
        filenames: Mode,
        /// The policy version.
        version: u8,
    },
    /// Undefined or conflicting flags, or flags the version or the modes
    /// do not allow.
    Flags {
        /// The flags byte.
        flags: u8,
        /// The policy version.
        version: u8,
    },
    /// DIRECT_KEY with different contents and names modes.
    DirectKey {
        /// The contents mode.
        contents: Mode,
        /// The names mode.
        filenames: Mode,
    },
    /// A `log2_data_unit_size` the kernel refuses (v2 only, 9..=16, not
    /// with IV_INO_LBLK_32).
    DataUnitSize {
        /// The value found.
        log2: u8,
    },
    /// The reserved bytes of a v2 context are not zero.
    Reserved,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PolicyError::Length { version: 0, len } => {
                write!(f, "encryption context of {len} bytes: empty")
            }
            PolicyError::Length { version, len } => write!(
                f,
                "encryption context v{version} of {len} bytes: must be {}",
                if version == 1 {
                    CONTEXT_V1_LEN
                } else {
                    CONTEXT_V2_LEN
                }
            ),
            PolicyError::Version(v) => {
                write!(f, "unknown encryption context version {v} (known: 1, 2)")
            }
            PolicyError::UnknownMode(m) => write!(f, "unknown encryption mode {m}"),
            PolicyError::ModePair {
                contents,
                filenames,
                version,
            } => write!(
                f,
                "v{version} policies do not pair contents mode {contents} with names mode {filenames}"
            ),
            PolicyError::Flags { flags, version } => write!(
                f,
                "policy flags {flags:#04x} are not valid for this v{version} policy"
            ),
            PolicyError::DirectKey {
                contents,
                filenames,
            } => write!(
                f,
                "DIRECT_KEY needs one mode for contents and names, not {contents} and {filenames}"
            ),
            PolicyError::DataUnitSize { log2 } => write!(
                f,
                "log2_data_unit_size {log2} is not valid (v2 only, 9..=16, not with IV_INO_LBLK_32)"
            ),
            PolicyError::Reserved => f.write_str("reserved bytes of a v2 context are not zero"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for PolicyError {}
