//! A dm-crypt sector cipher built from a cipher spec and a key: the
//! keyslot area cipher and the data segment cipher.

use mdu_cbc::{AesCbc128, AesCbc256};
use mdu_dmcrypt::{ChainMode, CipherSpec, Direction, Geometry, IvGenerator};
use mdu_xts::{XtsAes128, XtsAes256};

use crate::Luks2Error;

enum Inner {
    Xts128(XtsAes128),
    Xts256(XtsAes256),
    Cbc128(AesCbc128),
    Cbc256(AesCbc256),
}

/// `$e` with `$c` bound to the concrete cipher of `$s.inner` (the IV
/// generator is generic over it; `mdu_dmcrypt::DataUnitCipher` is not
/// object-safe).
macro_rules! with_cipher {
    ($s:ident, $c:ident => $e:expr) => {
        match &$s.inner {
            Inner::Xts128($c) => $e,
            Inner::Xts256($c) => $e,
            Inner::Cbc128($c) => $e,
            Inner::Cbc256($c) => $e,
        }
    };
}

/// AES-XTS or AES-CBC with a dm-crypt IV generator over sectors of one size,
/// IV sector numbers counted in 512-byte units from the start (as LUKS2
/// segments and keyslot areas use them).
///
/// ```
/// use mdu_luks2::{Direction, SectorCipher};
/// let key: Vec<u8> = (0..64).collect();
/// let c = SectorCipher::new("aes-xts-plain64", &key, 4096)?;
/// let mut buf = vec![0u8; 3 * 4096];
/// c.crypt(Direction::Encrypt, 0, &mut buf)?;
/// // Sector 2 alone, with IV sector 16 (= 2 * 4096 / 512).
/// let mut one = vec![0u8; 4096];
/// c.crypt(Direction::Encrypt, 2, &mut one)?;
/// assert_eq!(one[..], buf[2 * 4096..]);
/// # Ok::<(), mdu_luks2::Luks2Error>(())
/// ```
pub struct SectorCipher {
    inner: Inner,
    ivgen: IvGenerator,
    sector_size: u32,
}

impl std::fmt::Debug for SectorCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SectorCipher")
            .field("iv_mode", &self.ivgen.mode())
            .field("sector_size", &self.sector_size)
            .finish_non_exhaustive()
    }
}

impl SectorCipher {
    /// A cipher for `spec` (`aes-xts-plain64`, `aes-cbc-essiv:sha256`, any
    /// spec of mdu-dmcrypt) with `key` (the whole key, both XTS halves) and
    /// `sector_size` (512, 1024, 2048 or 4096).
    ///
    /// ```
    /// use mdu_luks2::SectorCipher;
    /// assert!(SectorCipher::new("aes-cbc-essiv:sha256", &[1u8; 32], 512).is_ok());
    /// assert!(SectorCipher::new("aes-cbc-essiv:sha256", &[1u8; 20], 512).is_err());
    /// assert!(SectorCipher::new("twofish-xts-plain64", &[1u8; 64], 512).is_err());
    /// ```
    pub fn new(spec: &str, key: &[u8], sector_size: u32) -> Result<SectorCipher, Luks2Error> {
        let spec = CipherSpec::parse(spec)?;
        spec.check_key_len(key.len())?;
        let geometry = Geometry::new(sector_size, 0, false)?;
        let ivgen = IvGenerator::new(spec.iv_mode(), geometry, key)?;
        let inner = match (spec.chain(), key.len()) {
            (ChainMode::Cbc, 16) => Inner::Cbc128(AesCbc128::new(key)?),
            (ChainMode::Cbc, _) => Inner::Cbc256(AesCbc256::new(key)?),
            (_, 32) => Inner::Xts128(XtsAes128::new_allow_equal_halves(key)?),
            _ => Inner::Xts256(XtsAes256::new_allow_equal_halves(key)?),
        };
        Ok(SectorCipher {
            inner,
            ivgen,
            sector_size,
        })
    }

    /// The sector size in bytes.
    ///
    /// ```
    /// let c = mdu_luks2::SectorCipher::new("aes-xts-plain64", &[3u8; 32], 1024)?;
    /// assert_eq!(c.sector_size(), 1024);
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn sector_size(&self) -> u32 {
        self.sector_size
    }

    /// Encrypts or decrypts `buf`, a whole number of sectors, in place; its
    /// first sector is sector `first` (counted in sectors of the cipher's
    /// size from the segment or area start).
    ///
    /// ```
    /// use mdu_luks2::{Direction, SectorCipher};
    /// let c = SectorCipher::new("aes-cbc-essiv:sha256", &[9u8; 16], 512)?;
    /// let mut buf = vec![1u8; 1024];
    /// c.crypt(Direction::Encrypt, 7, &mut buf)?;
    /// c.crypt(Direction::Decrypt, 7, &mut buf)?;
    /// assert!(buf.iter().all(|&b| b == 1));
    /// assert!(c.crypt(Direction::Encrypt, 0, &mut buf[..100]).is_err());
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    pub fn crypt(&self, dir: Direction, first: u64, buf: &mut [u8]) -> Result<(), Luks2Error> {
        Ok(with_cipher!(self, c => self.ivgen.crypt(dir, c, first, buf))?)
    }

    /// As [`crypt`](Self::crypt), split across the current rayon pool
    /// (same bytes).
    ///
    /// ```
    /// use mdu_luks2::{Direction, SectorCipher};
    /// let c = SectorCipher::new("aes-xts-plain64", &[5u8; 64], 512)?;
    /// let (mut a, mut b) = (vec![2u8; 4096 * 512], vec![2u8; 4096 * 512]);
    /// c.par_crypt(Direction::Encrypt, 3, &mut a)?;
    /// c.crypt(Direction::Encrypt, 3, &mut b)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), mdu_luks2::Luks2Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_crypt(&self, dir: Direction, first: u64, buf: &mut [u8]) -> Result<(), Luks2Error> {
        Ok(with_cipher!(self, c => self.ivgen.par_crypt(dir, c, first, buf))?)
    }
}
