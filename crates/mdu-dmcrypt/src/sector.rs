//! A running sector cipher: a spec, a key and a geometry made into the
//! concrete cipher and its IV generator.

use core::fmt;

use camellia::{Camellia128, Camellia192, Camellia256};
use mdu_adiantum::Adiantum;
use mdu_cbc::{AesCbc128, AesCbc256, BlockCbc};
use mdu_core::Direction;
use mdu_hctr2::{Hctr2Aes128, Hctr2Aes256};
use mdu_xts::{BlockXts, XtsAes128, XtsAes256};
use serpent::Serpent;
use sm4::Sm4;
use twofish::Twofish;

use crate::{ChainMode, Cipher, CipherSpec, Error, Geometry, IvGenerator, WeakKeys};

/// The concrete cipher of a spec and key length.
enum Inner {
    Xts128(XtsAes128),
    Xts256(XtsAes256),
    Cbc128(AesCbc128),
    Cbc256(AesCbc256),
    Hctr2Aes128(Hctr2Aes128),
    Hctr2Aes256(Hctr2Aes256),
    Adiantum(Adiantum),
    // The other block ciphers: one portable XTS or CBC over each (Serpent
    // and Twofish take every key length of their rows in one type).
    SerpentXts(BlockXts<Serpent>),
    SerpentCbc(BlockCbc<Serpent>),
    TwofishXts(BlockXts<Twofish>),
    TwofishCbc(BlockCbc<Twofish>),
    Camellia128Xts(BlockXts<Camellia128>),
    Camellia192Xts(BlockXts<Camellia192>),
    Camellia256Xts(BlockXts<Camellia256>),
    Camellia128Cbc(BlockCbc<Camellia128>),
    Camellia192Cbc(BlockCbc<Camellia192>),
    Camellia256Cbc(BlockCbc<Camellia256>),
    Sm4Xts(BlockXts<Sm4>),
    Sm4Cbc(BlockCbc<Sm4>),
}

/// `$e` with `$c` bound to the concrete cipher of `$s.inner` (the IV
/// generator is generic over it; `DataUnitCipher` is not object-safe).
macro_rules! with_cipher {
    ($s:ident, $c:ident => $e:expr) => {
        match &$s.inner {
            Inner::Xts128($c) => $e,
            Inner::Xts256($c) => $e,
            Inner::Cbc128($c) => $e,
            Inner::Cbc256($c) => $e,
            Inner::Hctr2Aes128($c) => $e,
            Inner::Hctr2Aes256($c) => $e,
            Inner::Adiantum($c) => $e,
            Inner::SerpentXts($c) => $e,
            Inner::SerpentCbc($c) => $e,
            Inner::TwofishXts($c) => $e,
            Inner::TwofishCbc($c) => $e,
            Inner::Camellia128Xts($c) => $e,
            Inner::Camellia192Xts($c) => $e,
            Inner::Camellia256Xts($c) => $e,
            Inner::Camellia128Cbc($c) => $e,
            Inner::Camellia192Cbc($c) => $e,
            Inner::Camellia256Cbc($c) => $e,
            Inner::Sm4Xts($c) => $e,
            Inner::Sm4Cbc($c) => $e,
        }
    };
}

/// A dm-crypt mapping's cipher, ready to run: the [`CipherSpec`], the key
/// and the [`Geometry`] made into mdu's AES-XTS, AES-CBC, HCTR2 or
/// Adiantum cipher (the fastest backend of this CPU), or the portable XTS
/// or CBC over Serpent, Twofish, Camellia or SM4, and the spec's
/// [`IvGenerator`] over the cipher's IV width.
///
/// This is the one place a spec becomes a cipher: `mdu crypt` (a plain
/// mapping), and LUKS2 keyslot areas and data segments (`mdu-luks2`) all
/// build theirs here. The key is checked by [`CipherSpec::check_key`]: its
/// length against the spec's table row, and the weak-key policy
/// ([`WeakKeys`]): an XTS key with two equal halves is refused unless the
/// caller passes [`WeakKeys::Allow`]. The key material is wiped when the
/// cipher is dropped.
///
/// ```
/// use mdu_dmcrypt::{CipherSpec, Direction, Geometry, SectorCipher, WeakKeys};
///
/// let spec: CipherSpec = "aes-xts-plain64".parse()?;
/// let key: Vec<u8> = (0..64).collect();
/// let c = SectorCipher::new(spec, &key, Geometry::new(4096, 0, false)?, WeakKeys::Refuse)?;
/// let mut buf = vec![0u8; 3 * 4096];
/// c.crypt(Direction::Encrypt, 0, &mut buf)?;
/// // Sector 2 alone, with IV sector 16 (= 2 * 4096 / 512).
/// let mut one = vec![0u8; 4096];
/// c.crypt(Direction::Encrypt, 2, &mut one)?;
/// assert_eq!(one[..], buf[2 * 4096..]);
/// c.crypt(Direction::Decrypt, 0, &mut buf)?;
/// assert!(buf.iter().all(|&b| b == 0));
/// # Ok::<(), mdu_dmcrypt::Error>(())
/// ```
pub struct SectorCipher {
    inner: Inner,
    ivgen: IvGenerator,
    spec: CipherSpec,
}

impl fmt::Debug for SectorCipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SectorCipher")
            .field("spec", &self.spec)
            .field("geometry", &self.ivgen.geometry())
            .finish_non_exhaustive()
    }
}

impl SectorCipher {
    /// The cipher of `spec` with `key` (the whole key: both XTS halves)
    /// over `geometry`; `weak` says whether an XTS key with equal halves
    /// is accepted.
    ///
    /// # Errors
    ///
    /// [`Error::KeyLength`] if the key does not fit the spec,
    /// [`Error::CipherSetup`] with the weak-key error
    /// ([`Error::is_weak_key`]) for a weak key under
    /// [`WeakKeys::Refuse`], [`Error::IvWidth`] for a spec built
    /// with [`CipherSpec::new`] whose IV mode cannot fill its cipher's IVs,
    /// [`Error::CipherSetup`] if the cipher refuses the key.
    ///
    /// ```
    /// use mdu_dmcrypt::{CipherSpec, Error, Geometry, SectorCipher, WeakKeys};
    /// let g = Geometry::new(512, 0, false)?;
    /// let cbc: CipherSpec = "aes-cbc-essiv:sha256".parse()?;
    /// assert!(SectorCipher::new(cbc, &[1u8; 32], g, WeakKeys::Refuse).is_ok());
    /// assert!(matches!(
    ///     SectorCipher::new(cbc, &[1u8; 20], g, WeakKeys::Refuse),
    ///     Err(Error::KeyLength { len: 20, .. })
    /// ));
    /// let xts: CipherSpec = "aes-xts-plain64".parse()?;
    /// assert!(SectorCipher::new(xts, &[1u8; 64], g, WeakKeys::Refuse).unwrap_err().is_weak_key());
    /// assert!(SectorCipher::new(xts, &[1u8; 64], g, WeakKeys::Allow).is_ok());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new(
        spec: CipherSpec,
        key: &[u8],
        geometry: Geometry,
        weak: WeakKeys,
    ) -> Result<SectorCipher, Error> {
        spec.check_key(key, weak)?;
        // The IV width is checked there, for a pair built with
        // `CipherSpec::new` that no row lists.
        let ivgen = IvGenerator::for_spec(spec, geometry, key)?;
        // The policy was applied above, once for every chaining mode: the
        // XTS constructors that take any key are the ones to call here. The
        // key length is one of the row's.
        use ChainMode::{Adiantum as Wide, Cbc, Hctr2, Xts};
        use Cipher::{Aes, Camellia, Serpent, Sm4, Twofish, XChaCha12Aes};
        let inner = match (spec.cipher(), spec.chain(), key.len()) {
            (Aes, Cbc, 16) => Inner::Cbc128(AesCbc128::new(key)?),
            (Aes, Cbc, _) => Inner::Cbc256(AesCbc256::new(key)?),
            (Aes, Xts, 32) => Inner::Xts128(XtsAes128::new_allow_weak_key(key)?),
            (Aes, Xts, _) => Inner::Xts256(XtsAes256::new_allow_weak_key(key)?),
            (_, Hctr2, 16) => Inner::Hctr2Aes128(Hctr2Aes128::new(key)?),
            (_, Hctr2, _) => Inner::Hctr2Aes256(Hctr2Aes256::new(key)?),
            (_, Wide, _) => Inner::Adiantum(Adiantum::new(key)?),
            (Serpent, Xts, _) => Inner::SerpentXts(BlockXts::new_allow_weak_key(key)?),
            (Serpent, _, _) => Inner::SerpentCbc(BlockCbc::new(key)?),
            (Twofish, Xts, _) => Inner::TwofishXts(BlockXts::new_allow_weak_key(key)?),
            (Twofish, _, _) => Inner::TwofishCbc(BlockCbc::new(key)?),
            (Camellia, Xts, 32) => Inner::Camellia128Xts(BlockXts::new_allow_weak_key(key)?),
            (Camellia, Xts, 48) => Inner::Camellia192Xts(BlockXts::new_allow_weak_key(key)?),
            (Camellia, Xts, _) => Inner::Camellia256Xts(BlockXts::new_allow_weak_key(key)?),
            (Camellia, _, 16) => Inner::Camellia128Cbc(BlockCbc::new(key)?),
            (Camellia, _, 24) => Inner::Camellia192Cbc(BlockCbc::new(key)?),
            (Camellia, _, _) => Inner::Camellia256Cbc(BlockCbc::new(key)?),
            (Sm4, Xts, _) => Inner::Sm4Xts(BlockXts::new_allow_weak_key(key)?),
            (Sm4, _, _) => Inner::Sm4Cbc(BlockCbc::new(key)?),
            (XChaCha12Aes, ..) => unreachable!("xchacha12,aes has only the Adiantum row"),
        };
        Ok(SectorCipher { inner, ivgen, spec })
    }

    /// The spec.
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, SectorCipher, WeakKeys};
    /// let g = Geometry::new(512, 0, false)?;
    /// let c = SectorCipher::new("aes-cbc-plain64".parse()?, &[3u8; 16], g, WeakKeys::Refuse)?;
    /// assert_eq!(c.spec().to_string(), "aes-cbc-plain64");
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn spec(&self) -> CipherSpec {
        self.spec
    }

    /// The geometry.
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, SectorCipher, WeakKeys};
    /// let g = Geometry::new(2048, 4, true)?;
    /// let c = SectorCipher::new("aes-cbc-plain64".parse()?, &[3u8; 16], g, WeakKeys::Refuse)?;
    /// assert_eq!(c.geometry(), g);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn geometry(&self) -> Geometry {
        self.ivgen.geometry()
    }

    /// The sector size in bytes.
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, SectorCipher, WeakKeys};
    /// let g = Geometry::new(1024, 0, false)?;
    /// let c = SectorCipher::new("aes-cbc-plain64".parse()?, &[3u8; 32], g, WeakKeys::Refuse)?;
    /// assert_eq!(c.sector_size(), 1024);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn sector_size(&self) -> u32 {
        self.ivgen.geometry().sector_size()
    }

    /// Encrypts or decrypts `buf`, a whole, non-zero number of sectors, in
    /// place; its first sector is sector `first` of the mapping (counted in
    /// sectors of the geometry's size).
    ///
    /// # Errors
    ///
    /// [`Error::Length`] if `buf` is not a whole, non-zero number
    /// of sectors (the buffer is left unchanged).
    ///
    /// ```
    /// use mdu_dmcrypt::{Direction, Geometry, SectorCipher, WeakKeys};
    /// let g = Geometry::new(512, 0, false)?;
    /// let c = SectorCipher::new("aes-cbc-essiv:sha256".parse()?, &[9u8; 16], g, WeakKeys::Refuse)?;
    /// let mut buf = vec![1u8; 1024];
    /// c.crypt(Direction::Encrypt, 7, &mut buf)?;
    /// c.crypt(Direction::Decrypt, 7, &mut buf)?;
    /// assert!(buf.iter().all(|&b| b == 1));
    /// assert!(c.crypt(Direction::Encrypt, 0, &mut buf[..100]).is_err());
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn crypt(&self, dir: Direction, first: u64, buf: &mut [u8]) -> Result<(), Error> {
        with_cipher!(self, c => self.ivgen.crypt(dir, c, first, buf))
    }
}

#[cfg(feature = "rayon")]
impl SectorCipher {
    /// As [`crypt`](Self::crypt), split across the current rayon pool
    /// (same bytes).
    ///
    /// # Errors
    ///
    /// As [`crypt`](Self::crypt).
    ///
    /// ```
    /// use mdu_dmcrypt::{Direction, Geometry, SectorCipher, WeakKeys};
    /// let g = Geometry::new(512, 0, false)?;
    /// let key: Vec<u8> = (0..64).collect();
    /// let c = SectorCipher::new("aes-xts-plain64".parse()?, &key, g, WeakKeys::Refuse)?;
    /// let (mut a, mut b) = (vec![2u8; 4096 * 512], vec![2u8; 4096 * 512]);
    /// c.par_crypt(Direction::Encrypt, 3, &mut a)?;
    /// c.crypt(Direction::Encrypt, 3, &mut b)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn par_crypt(&self, dir: Direction, first: u64, buf: &mut [u8]) -> Result<(), Error> {
        with_cipher!(self, c => self.ivgen.par_crypt(dir, c, first, buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    /// Every spec and key length gives the bytes of the IV generator over
    /// the cipher built by hand, at a geometry with an offset.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "key setups and whole sectors through the interpreted AES take minutes; the portable code is checked under Miri by the IV generators' and the ciphers' own tests"
    )]
    fn same_bytes_as_the_generator_over_the_cipher_built_by_hand() {
        let g = Geometry::new(1024, 6, false).unwrap();
        // The AES rows (the other block ciphers: tests/block_ciphers.rs).
        let aes_rows = crate::SUPPORTED
            .iter()
            .filter(|r| matches!(r.cipher, Cipher::Aes | Cipher::XChaCha12Aes));
        for row in aes_rows {
            for &len in row.key_lens {
                for mode in row.iv_modes {
                    let spec = CipherSpec::new(row.chain, *mode);
                    let key: Vec<u8> = (0..len as u8).map(|b| b.wrapping_mul(7)).collect();
                    let c = SectorCipher::new(spec, &key, g, WeakKeys::Refuse).unwrap();
                    let ivgen = IvGenerator::new(*mode, g, &key).unwrap();
                    let mut a: Vec<u8> = (0..5 * 1024).map(|i| (i % 251) as u8).collect();
                    let mut b = a.clone();
                    c.crypt(Direction::Encrypt, 3, &mut a).unwrap();
                    let r = match (row.chain, len) {
                        (ChainMode::Cbc, 16) => {
                            ivgen.encrypt(&AesCbc128::new(&key).unwrap(), 3, &mut b)
                        }
                        (ChainMode::Cbc, _) => {
                            ivgen.encrypt(&AesCbc256::new(&key).unwrap(), 3, &mut b)
                        }
                        (ChainMode::Xts, 32) => {
                            ivgen.encrypt(&XtsAes128::new(&key).unwrap(), 3, &mut b)
                        }
                        (ChainMode::Xts, _) => {
                            ivgen.encrypt(&XtsAes256::new(&key).unwrap(), 3, &mut b)
                        }
                        (ChainMode::Hctr2, 16) => {
                            ivgen.encrypt(&Hctr2Aes128::new(&key).unwrap(), 3, &mut b)
                        }
                        (ChainMode::Hctr2, _) => {
                            ivgen.encrypt(&Hctr2Aes256::new(&key).unwrap(), 3, &mut b)
                        }
                        _ => ivgen.encrypt(&Adiantum::new(&key).unwrap(), 3, &mut b),
                    };
                    r.unwrap();
                    assert_eq!(a, b, "{spec} {len}");
                }
            }
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "key setups and whole sectors through the interpreted AES take minutes; the portable code is checked under Miri by the IV generators' and the ciphers' own tests"
    )]
    fn an_allowed_weak_key_encrypts_as_xts_with_equal_halves() {
        let g = Geometry::new(512, 0, false).unwrap();
        let key = [0x33u8; 64];
        let c = SectorCipher::new("aes-xts-plain64".parse().unwrap(), &key, g, WeakKeys::Allow)
            .unwrap();
        let x = XtsAes256::new_allow_weak_key(&key).unwrap();
        let ivgen = IvGenerator::new(crate::IvMode::Plain64, g, &key).unwrap();
        let (mut a, mut b) = (vec![5u8; 2048], vec![5u8; 2048]);
        c.crypt(Direction::Encrypt, 9, &mut a).unwrap();
        ivgen.encrypt(&x, 9, &mut b).unwrap();
        assert_eq!(a, b);
    }
}
