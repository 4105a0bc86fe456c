//! dm-crypt IV generators and whole-buffer sector encryption.
//!
//! dm-crypt encrypts each sector (512 to 4096 bytes) as one data unit whose
//! IV comes from an *IV generator* applied to the sector's `iv_sector`:
//!
//! * `cc_sector` = the sector's position in 512-byte units from the start of
//!   the mapping, plus the table's `iv_offset` (also in 512-byte units),
//!   modulo 2^64;
//! * `iv_sector` = `cc_sector`, shifted right by log2(sector_size / 512)
//!   **only** with `iv_large_sectors`. Without the flag, consecutive 4096-byte
//!   sectors get `iv_sector` 0, 8, 16, ... (every LUKS volume), with it 0, 1,
//!   2, ...
//!
//! [`IvMode`](crate::dmcrypt::IvMode) lists the generators that need no per-sector data: `plain`,
//! `plain64`, `plain64be`, `essiv:sha256`, `benbi`, `null` and `eboiv`.
//! [`Geometry`](crate::dmcrypt::Geometry) holds the sector size, `iv_offset` and the flag;
//! [`IvGenerator`](crate::dmcrypt::IvGenerator) combines the two with the volume key.
//!
//! A run of consecutive sectors can go through the batched
//! [`DataUnits`](crate::DataUnits) path (one starting IV, IV `i` = IV0 + i * step as a 128-bit
//! little-endian counter) only where the mode is affine in that counter:
//! `plain64` while `iv_sector` stays below 2^64, `plain` while the run does
//! not cross a multiple of 2^32, never for the other modes.
//! [`IvGenerator::affine_run_len`](crate::dmcrypt::IvGenerator::affine_run_len) measures such runs and
//! [`IvGenerator::encrypt`](crate::dmcrypt::IvGenerator::encrypt) uses it: every maximal affine run in one batched
//! call, the other sectors one at a time, the same bytes either way.
//!
//! ```
//! use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
//! use mdu_xts::{Iv, XtsAes256};
//!
//! let key: Vec<u8> = (0..64).collect();
//! let xts = XtsAes256::new(&key)?;
//! let mode = IvMode::from_cipher_spec("aes-xts-plain64")?;
//! // LUKS2 layout: 4096-byte sectors, no iv_large_sectors.
//! let ivgen = IvGenerator::new(mode, Geometry::new(4096, 0, false)?, &key)?;
//! assert_eq!(ivgen.iv(&xts, 3)?, Iv::plain64(24));
//!
//! let mut disk = vec![0u8; 16 * 4096];
//! ivgen.encrypt(&xts, 0, &mut disk)?;
//! ivgen.decrypt(&xts, 0, &mut disk)?;
//! assert!(disk.iter().all(|&b| b == 0));
//! # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
//! ```

use core::fmt;
use core::str::FromStr;

use aes::Aes256;
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::{DataUnitCipher, DataUnits, Error, Iv};

/// The sector sizes dm-crypt accepts.
pub const SECTOR_SIZES: [u32; 4] = [512, 1024, 2048, 4096];

/// A dm-crypt IV generator without per-sector state.
///
/// ```
/// use mdu_xts::dmcrypt::IvMode;
/// assert_eq!("essiv:sha256".parse::<IvMode>()?, IvMode::EssivSha256);
/// assert_eq!(IvMode::Plain64Be.name(), "plain64be");
/// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IvMode {
    /// `le32(iv_sector mod 2^32)` in bytes 0..4, zeros after.
    Plain,
    /// `le64(iv_sector)` in bytes 0..8, zeros after.
    Plain64,
    /// Zeros, then `be64(iv_sector)` in bytes 8..16.
    Plain64Be,
    /// `AES-256_salt(plain64 IV)` with `salt = SHA-256(volume key)`.
    EssivSha256,
    /// Zeros, then `be64((iv_sector << 5) + 1)` in bytes 8..16 (the count of
    /// 16-byte blocks, starting at 1).
    Benbi,
    /// All zeros.
    Null,
    /// The encryption of one zero block under the volume's own cipher with
    /// the sector's byte offset `le64(iv_sector * sector_size) || 0^8` as IV.
    Eboiv,
}

impl IvMode {
    /// Every mode, in declaration order.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::IvMode;
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
    /// use mdu_xts::dmcrypt::IvMode;
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

    /// The IV mode of a dm-crypt cipher string for AES-XTS,
    /// `aes-xts-<ivmode>` (case of `aes`/`xts` ignored).
    ///
    /// # Errors
    ///
    /// [`DmCryptError::UnsupportedCipher`] unless the string starts with
    /// `aes-xts-`; [`DmCryptError::UnknownIvMode`] for any other IV
    /// generator (including `lmk`, `tcw`, `random`, `elephant`).
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{DmCryptError, IvMode};
    /// assert_eq!(IvMode::from_cipher_spec("aes-xts-essiv:sha256")?, IvMode::EssivSha256);
    /// assert!(matches!(
    ///     IvMode::from_cipher_spec("aes-cbc-essiv:sha256"),
    ///     Err(DmCryptError::UnsupportedCipher { .. })
    /// ));
    /// assert!(matches!(
    ///     IvMode::from_cipher_spec("aes-xts-lmk"),
    ///     Err(DmCryptError::UnknownIvMode { .. })
    /// ));
    /// # Ok::<(), DmCryptError>(())
    /// ```
    pub fn from_cipher_spec(spec: &str) -> Result<IvMode, DmCryptError> {
        let mut parts = spec.splitn(3, '-');
        let (Some(cipher), Some(chain), Some(iv)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(DmCryptError::UnsupportedCipher { spec: spec.into() });
        };
        if !cipher.eq_ignore_ascii_case("aes") || !chain.eq_ignore_ascii_case("xts") {
            return Err(DmCryptError::UnsupportedCipher { spec: spec.into() });
        }
        iv.parse()
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

/// What was wrong with a dm-crypt layout or request.
///
/// ```
/// use mdu_xts::dmcrypt::{DmCryptError, Geometry};
/// let err = Geometry::new(4096, 3, false).unwrap_err();
/// assert_eq!(err, DmCryptError::IvOffsetAlignment { iv_offset: 3, sector_size: 4096 });
/// assert!(err.to_string().contains("multiple of 8"));
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DmCryptError {
    /// The cipher string is not `aes-xts-<ivmode>`.
    UnsupportedCipher {
        /// The string given.
        spec: String,
    },
    /// The IV generator is not one of [`IvMode::ALL`].
    UnknownIvMode {
        /// The IV generator name given.
        mode: String,
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
    /// The cipher refused the key or a request.
    Cipher(Error),
}

impl fmt::Display for DmCryptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DmCryptError::UnsupportedCipher { spec } => write!(
                f,
                "unsupported cipher {spec:?}: expected aes-xts-<ivmode>, e.g. aes-xts-plain64"
            ),
            DmCryptError::UnknownIvMode { mode } => write!(
                f,
                "unknown IV mode {mode:?}: expected one of plain, plain64, plain64be, \
                 essiv:sha256, benbi, null, eboiv"
            ),
            DmCryptError::SectorSize { size } => write!(
                f,
                "sector size {size} is invalid: it must be 512, 1024, 2048 or 4096 bytes"
            ),
            DmCryptError::IvOffsetAlignment {
                iv_offset,
                sector_size,
            } => write!(
                f,
                "iv_offset {iv_offset} is invalid: with {sector_size}-byte sectors it must be \
                 a multiple of {} (512-byte units)",
                sector_size / 512
            ),
            DmCryptError::Length { len, sector_size } => {
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
            DmCryptError::Cipher(e) => write!(f, "cipher error: {e}"),
        }
    }
}

impl std::error::Error for DmCryptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DmCryptError::Cipher(e) => Some(e),
            _ => None,
        }
    }
}

impl From<Error> for DmCryptError {
    fn from(e: Error) -> Self {
        DmCryptError::Cipher(e)
    }
}

/// Sector size, `iv_offset` and `iv_large_sectors` of a dm-crypt mapping.
///
/// ```
/// use mdu_xts::dmcrypt::Geometry;
/// let g = Geometry::new(4096, 16, false)?;
/// assert_eq!((g.iv_sector(0), g.iv_sector(1), g.iv_step()), (16, 24, 8));
/// let g = Geometry::new(4096, 16, true)?;
/// assert_eq!((g.iv_sector(0), g.iv_sector(1), g.iv_step()), (2, 3, 1));
/// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    sector_size: u32,
    iv_offset: u64,
    iv_large_sectors: bool,
}

impl Geometry {
    /// A mapping with `sector_size`-byte sectors whose first sector has
    /// `cc_sector = iv_offset` (512-byte units).
    ///
    /// # Errors
    ///
    /// [`DmCryptError::SectorSize`] unless `sector_size` is one of
    /// [`SECTOR_SIZES`]; [`DmCryptError::IvOffsetAlignment`] unless
    /// `iv_offset` is a multiple of `sector_size / 512`.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{DmCryptError, Geometry};
    /// assert!(Geometry::new(2048, 4, true).is_ok());
    /// assert_eq!(Geometry::new(8192, 0, false).unwrap_err(), DmCryptError::SectorSize { size: 8192 });
    /// ```
    pub fn new(
        sector_size: u32,
        iv_offset: u64,
        iv_large_sectors: bool,
    ) -> Result<Geometry, DmCryptError> {
        if !SECTOR_SIZES.contains(&sector_size) {
            return Err(DmCryptError::SectorSize { size: sector_size });
        }
        if !iv_offset.is_multiple_of(u64::from(sector_size / 512)) {
            return Err(DmCryptError::IvOffsetAlignment {
                iv_offset,
                sector_size,
            });
        }
        Ok(Geometry {
            sector_size,
            iv_offset,
            iv_large_sectors,
        })
    }

    /// The sector size in bytes.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::Geometry;
    /// assert_eq!(Geometry::new(1024, 0, false)?.sector_size(), 1024);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub const fn sector_size(&self) -> u32 {
        self.sector_size
    }

    /// `iv_offset` in 512-byte sectors.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::Geometry;
    /// assert_eq!(Geometry::new(512, 7, false)?.iv_offset(), 7);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub const fn iv_offset(&self) -> u64 {
        self.iv_offset
    }

    /// Whether `iv_large_sectors` is set.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::Geometry;
    /// assert!(Geometry::new(512, 0, true)?.iv_large_sectors());
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub const fn iv_large_sectors(&self) -> bool {
        self.iv_large_sectors
    }

    /// log2(sector_size / 512).
    const fn shift(&self) -> u32 {
        (self.sector_size / 512).trailing_zeros()
    }

    /// `cc_sector` of sector `index` (counted in sectors of `sector_size`
    /// from the start of the mapping): `iv_offset + index * sector_size/512`,
    /// modulo 2^64 like the kernel's `sector_t`.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::Geometry;
    /// assert_eq!(Geometry::new(2048, 4, true)?.cc_sector(2), 12);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub const fn cc_sector(&self, index: u64) -> u64 {
        self.iv_offset
            .wrapping_add(index.wrapping_shl(self.shift()))
    }

    /// The sector number fed to the IV generator for sector `index`:
    /// [`cc_sector`](Self::cc_sector), shifted down by log2(sector_size/512)
    /// only with `iv_large_sectors`.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::Geometry;
    /// assert_eq!(Geometry::new(4096, 0, false)?.iv_sector(5), 40);
    /// assert_eq!(Geometry::new(4096, 0, true)?.iv_sector(5), 5);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub const fn iv_sector(&self, index: u64) -> u64 {
        let cc = self.cc_sector(index);
        if self.iv_large_sectors {
            cc >> self.shift()
        } else {
            cc
        }
    }

    /// How far `iv_sector` advances from one sector to the next:
    /// sector_size/512 without `iv_large_sectors`, 1 with it.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::Geometry;
    /// assert_eq!(Geometry::new(4096, 0, false)?.iv_step(), 8);
    /// assert_eq!(Geometry::new(4096, 0, true)?.iv_step(), 1);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub const fn iv_step(&self) -> u64 {
        if self.iv_large_sectors {
            1
        } else {
            1 << self.shift()
        }
    }

    /// Number of sectors from `index` on (at most `max`) before `cc_sector`
    /// wraps past 2^64.
    fn sectors_before_wrap(&self, index: u64, max: u64) -> u64 {
        let cc = u128::from(self.cc_sector(index));
        let room = ((1u128 << 64) - cc - 1) >> self.shift();
        (room + 1).min(u128::from(max)) as u64
    }
}

/// The `essiv` IV key: AES-256 keyed with `salt = SHA-256(volume_key)`, in
/// a new heap allocation.
///
/// The salt is hashed into a `Zeroizing` buffer and the key read from
/// there without a copy; the SHA-256 state zeroizes itself on drop (the
/// `sha2` `zeroize` feature). What the `aes` crate's expansion leaves on the
/// stack below this frame is the caller's to wipe, hence `inline(never)`.
#[inline(never)]
fn essiv_key(volume_key: &[u8]) -> Box<Aes256> {
    let mut salt = Zeroizing::new([0u8; 32]);
    let mut hash = Sha256::new();
    Digest::update(&mut hash, volume_key);
    hash.finalize_into((&mut *salt).into());
    Box::write(Box::new_uninit(), Aes256::new((&*salt).into()))
}

/// An IV generator bound to a mapping's geometry and volume key.
///
/// Sectors are named by their index (in `sector_size` units) from the start
/// of the mapping. Cloning is cheap; the `essiv` IV key is zeroized on drop.
///
/// ```
/// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
/// use mdu_xts::{Iv, XtsAes128};
///
/// let key: Vec<u8> = (1..=32).collect();
/// let xts = XtsAes128::new(&key)?;
/// let g = IvGenerator::new(IvMode::Plain64Be, Geometry::new(512, 0, false)?, &key)?;
/// let mut expect = [0u8; 16];
/// expect[15] = 9;
/// assert_eq!(g.iv(&xts, 9)?, Iv(expect));
/// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
/// ```
#[derive(Clone)]
pub struct IvGenerator {
    mode: IvMode,
    geometry: Geometry,
    essiv: Option<Box<Aes256>>,
}

impl fmt::Debug for IvGenerator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IvGenerator")
            .field("mode", &self.mode)
            .field("geometry", &self.geometry)
            .finish_non_exhaustive()
    }
}

impl IvGenerator {
    /// A generator for `mode` over `geometry`. `volume_key` is the full key
    /// of the volume (K1 || K2 for XTS); only `essiv` reads it (its salt is
    /// `SHA-256(volume_key)`).
    ///
    /// # Errors
    ///
    /// None today for the modes listed; the `Result` leaves room for
    /// generators that check their key.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let g = IvGenerator::new(IvMode::Null, Geometry::new(512, 0, false)?, &[])?;
    /// assert_eq!(g.mode(), IvMode::Null);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn new(
        mode: IvMode,
        geometry: Geometry,
        volume_key: &[u8],
    ) -> Result<IvGenerator, DmCryptError> {
        let essiv = (mode == IvMode::EssivSha256).then(|| {
            let aes = essiv_key(volume_key);
            // The hash state and the AES-256 expansion ran in the stack
            // below this frame: wipe it.
            crate::wipe::after_key_setup();
            aes
        });
        Ok(IvGenerator {
            mode,
            geometry,
            essiv,
        })
    }

    /// The IV mode.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let g = IvGenerator::new(IvMode::Benbi, Geometry::new(512, 0, false)?, &[])?;
    /// assert_eq!(g.mode(), IvMode::Benbi);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn mode(&self) -> IvMode {
        self.mode
    }

    /// The geometry.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let geo = Geometry::new(1024, 2, false)?;
    /// assert_eq!(IvGenerator::new(IvMode::Plain, geo, &[])?.geometry(), geo);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The IV of sector `index`. `cipher` is the volume's cipher, used only
    /// by `eboiv`.
    ///
    /// # Errors
    ///
    /// Only what `cipher` returns for a one-block `eboiv` request (never,
    /// for the XTS ciphers of this crate).
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// use mdu_xts::{Iv, XtsAes128};
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Plain, Geometry::new(512, (1 << 32) - 1, false)?, &key)?;
    /// assert_eq!(g.iv(&xts, 1)?, Iv::ZERO); // plain wraps at 2^32
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn iv<C: DataUnitCipher + ?Sized>(&self, cipher: &C, index: u64) -> Result<Iv, Error> {
        let s = self.geometry.iv_sector(index);
        let mut iv = [0u8; 16];
        match self.mode {
            IvMode::Plain => iv[..4].copy_from_slice(&(s as u32).to_le_bytes()),
            IvMode::Plain64 => iv[..8].copy_from_slice(&s.to_le_bytes()),
            IvMode::Plain64Be => iv[8..].copy_from_slice(&s.to_be_bytes()),
            IvMode::EssivSha256 => {
                iv[..8].copy_from_slice(&s.to_le_bytes());
                if let Some(aes) = &self.essiv {
                    let mut block = iv.into();
                    aes.encrypt_block(&mut block);
                    iv = block.into();
                }
            }
            IvMode::Benbi => iv[8..].copy_from_slice(&((s << 5).wrapping_add(1)).to_be_bytes()),
            IvMode::Null => {}
            IvMode::Eboiv => {
                let offset = s.wrapping_mul(u64::from(self.geometry.sector_size));
                let mut tweak = [0u8; 16];
                tweak[..8].copy_from_slice(&offset.to_le_bytes());
                cipher.encrypt_unit(Iv(tweak), &mut iv)?;
            }
        }
        Ok(Iv(iv))
    }

    /// The IV step of a batched run when this mode is affine in the 128-bit
    /// little-endian counter (`plain64`, `plain`), `None` otherwise. Where
    /// the run may start and how long it may be is
    /// [`affine_run_len`](Self::affine_run_len).
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let geo = Geometry::new(4096, 0, false)?;
    /// assert_eq!(IvGenerator::new(IvMode::Plain64, geo, &[])?.affine_step(), Some(8));
    /// assert_eq!(IvGenerator::new(IvMode::Plain64Be, geo, &[])?.affine_step(), None);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn affine_step(&self) -> Option<u64> {
        match self.mode {
            IvMode::Plain | IvMode::Plain64 => Some(self.geometry.iv_step()),
            _ => None,
        }
    }

    /// The length of the longest run of sectors `index, index + 1, ...` (at
    /// most `max`) whose IVs are `iv(index) + i * step` in the 128-bit
    /// little-endian counter, with `step` = [`affine_step`](Self::affine_step).
    /// 0 when `max` is 0 or the mode is never affine; otherwise at least 1.
    ///
    /// `plain64`: until `iv_sector` would wrap past 2^64. `plain`: until it
    /// would cross a multiple of 2^32.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let geo = Geometry::new(512, (1 << 32) - 3, false)?;
    /// let plain = IvGenerator::new(IvMode::Plain, geo, &[])?;
    /// assert_eq!(plain.affine_run_len(0, 100), 3);
    /// assert_eq!(plain.affine_run_len(3, 100), 100);
    /// let plain64 = IvGenerator::new(IvMode::Plain64, geo, &[])?;
    /// assert_eq!(plain64.affine_run_len(0, 100), 100);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn affine_run_len(&self, index: u64, max: u64) -> u64 {
        let Some(step) = self.affine_step() else {
            return 0;
        };
        let run = self.geometry.sectors_before_wrap(index, max);
        if self.mode == IvMode::Plain64 {
            return run;
        }
        let s = self.geometry.iv_sector(index);
        let last_before_wrap = s | 0xffff_ffff;
        run.min((last_before_wrap - s) / step + 1)
    }

    /// Whether the `count` sectors from `index` on form one affine run, and
    /// with which IV step.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let geo = Geometry::new(512, (1 << 32) - 3, false)?;
    /// let plain = IvGenerator::new(IvMode::Plain, geo, &[])?;
    /// assert_eq!(plain.affine(0, 3), Some(1));
    /// assert_eq!(plain.affine(0, 4), None);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn affine(&self, index: u64, count: u64) -> Option<u64> {
        let step = self.affine_step()?;
        (count > 0 && self.affine_run_len(index, count) == count).then_some(step)
    }

    fn check_len(&self, len: usize) -> Result<u64, DmCryptError> {
        let ss = self.geometry.sector_size as usize;
        if len == 0 || !len.is_multiple_of(ss) {
            return Err(DmCryptError::Length {
                len,
                sector_size: self.geometry.sector_size,
            });
        }
        Ok((len / ss) as u64)
    }

    fn crypt<C: DataUnitCipher + ?Sized>(
        &self,
        encrypt: bool,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), DmCryptError> {
        let n = self.check_len(buf.len())?;
        let ss = self.geometry.sector_size as usize;
        let mut i = 0u64;
        let mut rest = buf;
        while i < n {
            let index = first.wrapping_add(i);
            let run = self.affine_run_len(index, n - i).max(1);
            let (head, tail) = rest.split_at_mut(run as usize * ss);
            let iv = self.iv(cipher, index)?;
            if run > 1 {
                let step = self.geometry.iv_step();
                let units = DataUnits::new(cipher, ss)?.with_iv_step(step);
                if encrypt {
                    units.encrypt(iv, head)?;
                } else {
                    units.decrypt(iv, head)?;
                }
            } else if encrypt {
                cipher.encrypt_unit(iv, head)?;
            } else {
                cipher.decrypt_unit(iv, head)?;
            }
            rest = tail;
            i += run;
        }
        Ok(())
    }

    /// Encrypts `buf`, whole sectors starting with sector `first` of the
    /// mapping, in place: every maximal affine run (see
    /// [`affine_run_len`](Self::affine_run_len)) in one batched
    /// [`DataUnits`] call, the other sectors one at a time.
    ///
    /// # Errors
    ///
    /// [`DmCryptError::Length`] unless `buf` is a whole, non-zero number of
    /// sectors (`buf` is then unchanged); a cipher error if `cipher` refuses
    /// the sector size (not the XTS ciphers of this crate).
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// use mdu_xts::XtsAes128;
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Plain64, Geometry::new(512, 0, false)?, &key)?;
    /// let mut buf = vec![0u8; 4 * 512];
    /// g.encrypt(&xts, 10, &mut buf)?;
    /// let mut one = vec![0u8; 512];
    /// g.encrypt(&xts, 12, &mut one)?;
    /// assert_eq!(buf[1024..1536], one[..]);
    /// assert!(g.encrypt(&xts, 0, &mut [0u8; 100]).is_err());
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn encrypt<C: DataUnitCipher + ?Sized>(
        &self,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), DmCryptError> {
        self.crypt(true, cipher, first, buf)
    }

    /// Decrypts `buf` in place; the inverse of [`encrypt`](Self::encrypt).
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// use mdu_xts::XtsAes128;
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Eboiv, Geometry::new(1024, 0, false)?, &key)?;
    /// let mut buf = vec![7u8; 3 * 1024];
    /// g.encrypt(&xts, 0, &mut buf)?;
    /// g.decrypt(&xts, 0, &mut buf)?;
    /// assert!(buf.iter().all(|&b| b == 7));
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn decrypt<C: DataUnitCipher + ?Sized>(
        &self,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), DmCryptError> {
        self.crypt(false, cipher, first, buf)
    }
}

#[cfg(feature = "rayon")]
impl IvGenerator {
    fn par_crypt<C: DataUnitCipher + Sync + ?Sized>(
        &self,
        encrypt: bool,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), DmCryptError> {
        use rayon::prelude::*;

        let n = self.check_len(buf.len())? as usize;
        let ss = self.geometry.sector_size as usize;
        let threads = rayon::current_num_threads().max(1);
        // Enough chunks to balance the threads, each at least 256 KiB so the
        // per-chunk setup stays invisible.
        let per_chunk = n.div_ceil(threads * 4).max((256usize << 10) / ss).max(1);
        if threads == 1 || per_chunk >= n {
            return self.crypt(encrypt, cipher, first, buf);
        }
        buf.par_chunks_mut(per_chunk * ss)
            .enumerate()
            .try_for_each(|(i, chunk)| {
                let index = first.wrapping_add((i * per_chunk) as u64);
                self.crypt(encrypt, cipher, index, chunk)
            })
    }

    /// As [`encrypt`](Self::encrypt), split on sector boundaries across the
    /// current rayon pool (same bytes).
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt); `buf` is unchanged on a length
    /// error.
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// use mdu_xts::XtsAes128;
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Benbi, Geometry::new(512, 0, false)?, &key)?;
    /// let (mut a, mut b) = (vec![1u8; 4096 * 512], vec![1u8; 4096 * 512]);
    /// g.par_encrypt(&xts, 5, &mut a)?;
    /// g.encrypt(&xts, 5, &mut b)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn par_encrypt<C: DataUnitCipher + Sync + ?Sized>(
        &self,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), DmCryptError> {
        self.par_crypt(true, cipher, first, buf)
    }

    /// As [`decrypt`](Self::decrypt), split across the current rayon pool.
    ///
    /// # Errors
    ///
    /// As for [`decrypt`](Self::decrypt).
    ///
    /// ```
    /// use mdu_xts::dmcrypt::{Geometry, IvGenerator, IvMode};
    /// use mdu_xts::XtsAes128;
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Plain, Geometry::new(512, 0, false)?, &key)?;
    /// let mut a = vec![1u8; 2048 * 512];
    /// g.par_encrypt(&xts, 0, &mut a)?;
    /// g.par_decrypt(&xts, 0, &mut a)?;
    /// assert!(a.iter().all(|&b| b == 1));
    /// # Ok::<(), mdu_xts::dmcrypt::DmCryptError>(())
    /// ```
    pub fn par_decrypt<C: DataUnitCipher + Sync + ?Sized>(
        &self,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), DmCryptError> {
        self.par_crypt(false, cipher, first, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_error_display_never_divides_by_zero() {
        // Every field value, including a sector size of 0 that no
        // constructor of this crate produces but the public fields allow.
        for sector_size in [0, 1, 512, 4096, u32::MAX] {
            for len in [0, 1, 100, 4096, usize::MAX] {
                let msg = DmCryptError::Length { len, sector_size }.to_string();
                assert!(msg.contains(&format!("buffer of {len} bytes")), "{msg}");
                assert!(
                    msg.contains(&format!("{sector_size}-byte sectors")),
                    "{msg}"
                );
                assert_eq!(msg.contains("left over"), sector_size != 0, "{msg}");
            }
        }
        let msg = DmCryptError::Length {
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
    fn essiv_key_is_aes256_of_the_sha256_of_the_volume_key() {
        let volume_key: Vec<u8> = (0..64).collect();
        let salt: [u8; 32] = Sha256::digest(&volume_key).into();
        let want = Aes256::new(&salt.into());
        let got = essiv_key(&volume_key);
        let mut a = aes::Block::from([7u8; 16]);
        let mut b = a;
        want.encrypt_block(&mut a);
        got.encrypt_block(&mut b);
        assert_eq!(a, b);
    }
}
