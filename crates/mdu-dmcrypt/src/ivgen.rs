//! IV generators bound to a geometry and a volume key, and the batching of
//! sector requests.

use core::fmt;

use mdu_aes::Essiv;
use mdu_core::{DataUnitCipher, DataUnitSize, Direction, Iv, Tweak};

use crate::{Cipher, CipherSpec, Error, Geometry, IvMode};

/// Sectors per explicit-IV batch: their IVs are computed together (one ECB
/// pass for `essiv`, one cipher call for `eboiv`) into a stack array, and
/// the sectors go to the cipher's native path in one call. 64 is a multiple
/// of every backend's unit group (8 or 16) and keeps the arrays at 1 KiB.
const BATCH: usize = 64;

/// An IV generator bound to a mapping's geometry and volume key.
///
/// Sectors are named by their index (in `sector_size` units) from the start
/// of the mapping. The `essiv` IV key is zeroized on drop.
///
/// # How a request is batched
///
/// [`crypt`](Self::crypt) hands the cipher as few calls as the IV mode
/// allows, always with the same bytes as one sector at a time:
///
/// * `plain64` and `plain` are affine in the 128-bit little-endian counter
///   of [`Iv`] as long as `iv_sector` does not wrap (past 2^64, or past a
///   multiple of 2^32 for `plain`): every maximal affine run is one
///   [`DataUnitCipher::crypt_units`] call with one starting IV and the IV
///   step of the geometry ([`affine_run_len`](Self::affine_run_len)).
/// * every other mode (`essiv`, `benbi`, `eboiv`, `plain64be`, `null`) goes
///   in explicit-IV batches of 64 sectors: their IVs are computed together
///   ([`ivs`](Self::ivs): one AES-256-ECB pass for `essiv`, one cipher call
///   of 16-byte units for `eboiv`) and the sectors are one
///   [`DataUnitCipher::crypt_units_with_ivs`] call, the cipher's native
///   multi-unit path.
///
/// ```
/// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
/// use mdu_xts::{Iv, XtsAes128};
///
/// let key: Vec<u8> = (1..=32).collect();
/// let xts = XtsAes128::new(&key)?;
/// let g = IvGenerator::new(IvMode::Plain64Be, Geometry::new(512, 0, false)?, &key)?;
/// let mut expect = [0u8; 16];
/// expect[15] = 9;
/// assert_eq!(g.iv(&xts, 9)?, Iv(expect));
/// # Ok::<(), mdu_dmcrypt::Error>(())
/// ```
#[derive(Clone)]
pub struct IvGenerator {
    mode: IvMode,
    geometry: Geometry,
    /// The `essiv` IV cipher (its setup and its clone wipe the stack they
    /// used, like every key setup of mdu-aes).
    essiv: Option<Essiv>,
}

/// Replaces each of the (at most [`BATCH`]) byte offsets in `ivs` by the
/// encryption of one zero block under the volume's `cipher` with the offset
/// as IV, in one explicit-IV call (16-byte IVs only: [`IvMode::iv_len_fits`]).
fn eboiv_ivs<C: DataUnitCipher + ?Sized>(cipher: &C, ivs: &mut [C::Iv]) -> Result<(), Error> {
    let mut blocks = [0u8; 16 * BATCH];
    let blocks = &mut blocks[..16 * ivs.len()];
    if let [one] = ivs {
        cipher.encrypt_unit(*one, blocks)?;
    } else {
        cipher.crypt_units_with_ivs(Direction::Encrypt, ivs, DataUnitSize::new(16)?, blocks)?;
    }
    for (iv, b) in ivs.iter_mut().zip(blocks.chunks_exact(16)) {
        iv.as_mut().copy_from_slice(b);
    }
    Ok(())
}

/// Replaces each of the (at most [`BATCH`]) 16-byte IVs in `ivs` by its
/// ESSIV encryption.
fn essiv_ivs<T: Tweak>(essiv: &Essiv, ivs: &mut [T]) {
    let mut plain = [Iv::ZERO; BATCH];
    let plain = &mut plain[..ivs.len()];
    for (p, iv) in plain.iter_mut().zip(ivs.iter()) {
        p.0.copy_from_slice(iv.as_ref());
    }
    essiv.encrypt_ivs(plain);
    for (iv, p) in ivs.iter_mut().zip(plain.iter()) {
        iv.as_mut().copy_from_slice(&p.0);
    }
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
    /// A generator for `mode` over `geometry`, for an AES data cipher.
    /// `volume_key` is the full key of the volume (K1 || K2 for XTS); only
    /// `essiv` reads it (its salt is `SHA-256(volume_key)`, its IV cipher
    /// AES-256). [`for_spec`](Self::for_spec) builds the generator of any
    /// spec.
    ///
    /// # Errors
    ///
    /// None for the modes listed (the `essiv` IV cipher takes any volume
    /// key); the `Result` leaves room for generators that check their key.
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let g = IvGenerator::new(IvMode::Null, Geometry::new(512, 0, false)?, &[])?;
    /// assert_eq!(g.mode(), IvMode::Null);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn new(mode: IvMode, geometry: Geometry, volume_key: &[u8]) -> Result<IvGenerator, Error> {
        let essiv = match mode {
            IvMode::EssivSha256 => Some(Essiv::new(volume_key)?),
            _ => None,
        };
        Ok(IvGenerator {
            mode,
            geometry,
            essiv,
        })
    }

    /// The generator of `spec` over `geometry`: as [`new`](Self::new),
    /// with the `essiv` IV cipher the kernel's `essiv` template runs for
    /// the spec's cipher, that cipher keyed with the 32-byte salt (AES-256
    /// for `aes-*`, Serpent-256 for `serpent-*`, Camellia-256 for
    /// `camellia-*`, ...).
    ///
    /// # Errors
    ///
    /// [`Error::IvWidth`] if the spec's IV mode cannot fill its
    /// cipher's IVs (a spec built with [`CipherSpec::new`] that no row
    /// lists); [`Error::CipherSetup`] if the cipher takes no 32-byte
    /// key for `essiv` (SM4: [`SUPPORTED`](crate::SUPPORTED) lists no such
    /// spec).
    ///
    /// ```
    /// use mdu_dmcrypt::{CipherSpec, Geometry, IvGenerator, IvMode};
    /// let spec: CipherSpec = "serpent-cbc-essiv:sha256".parse()?;
    /// let g = IvGenerator::for_spec(spec, Geometry::new(512, 0, false)?, &[7; 32])?;
    /// assert_eq!(g.mode(), IvMode::EssivSha256);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn for_spec(
        spec: CipherSpec,
        geometry: Geometry,
        volume_key: &[u8],
    ) -> Result<IvGenerator, Error> {
        let mode = spec.iv_mode();
        if !mode.iv_len_fits(spec.iv_len()) {
            return Err(Error::IvWidth {
                mode,
                len: spec.iv_len(),
            });
        }
        if mode != IvMode::EssivSha256 {
            return IvGenerator::new(mode, geometry, volume_key);
        }
        let essiv = match spec.cipher() {
            Cipher::Aes | Cipher::XChaCha12Aes => Essiv::new(volume_key)?,
            Cipher::Serpent => Essiv::with_cipher::<serpent::Serpent>(volume_key)?,
            Cipher::Twofish => Essiv::with_cipher::<twofish::Twofish>(volume_key)?,
            Cipher::Camellia => Essiv::with_cipher::<camellia::Camellia256>(volume_key)?,
            Cipher::Sm4 => Essiv::with_cipher::<sm4::Sm4>(volume_key)?,
        };
        Ok(IvGenerator {
            mode,
            geometry,
            essiv: Some(essiv),
        })
    }

    /// The IV mode.
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let g = IvGenerator::new(IvMode::Benbi, Geometry::new(512, 0, false)?, &[])?;
    /// assert_eq!(g.mode(), IvMode::Benbi);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn mode(&self) -> IvMode {
        self.mode
    }

    /// The geometry.
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let geo = Geometry::new(1024, 2, false)?;
    /// assert_eq!(IvGenerator::new(IvMode::Plain, geo, &[])?.geometry(), geo);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// The IV of sector `index`, as wide as `cipher`'s IVs. `cipher` is
    /// the volume's cipher, used only by `eboiv`.
    ///
    /// # Errors
    ///
    /// [`Error::IvWidth`] if the mode cannot fill IVs of the
    /// cipher's width ([`IvMode::iv_len_fits`]); what `cipher` returns for
    /// a one-block `eboiv` request (never, for the XTS and CBC ciphers of
    /// mdu).
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// use mdu_xts::{Iv, XtsAes128};
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Plain, Geometry::new(512, (1 << 32) - 1, false)?, &key)?;
    /// assert_eq!(g.iv(&xts, 1)?, Iv::ZERO); // plain wraps at 2^32
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn iv<C: DataUnitCipher + ?Sized>(&self, cipher: &C, index: u64) -> Result<C::Iv, Error> {
        let mut iv = C::Iv::ZERO;
        self.ivs(cipher, index, core::slice::from_mut(&mut iv))?;
        Ok(iv)
    }

    /// The IVs of sectors `first, first + 1, ...` (modulo 2^64), one per
    /// slot of `out`, computed together: `essiv` encrypts them in one
    /// AES-256 pass per 64 sectors (16 blocks side by side on VAES), `eboiv`
    /// in one explicit-IV call of `cipher` per 64 sectors.
    ///
    /// Every mode writes its counter where dm-crypt does over the cipher's
    /// IV width (`iv_size`), zeros elsewhere: `plain` and `plain64` (and
    /// the plain value `essiv` encrypts) in the first bytes, `plain64be`
    /// and `benbi` in the last 8. So a 32-byte tweak (HCTR2, Adiantum)
    /// under `plain64` is `le64(iv_sector)` followed by 24 zero bytes.
    ///
    /// # Errors
    ///
    /// [`Error::IvWidth`] if the mode cannot fill IVs of the
    /// cipher's width (nothing is written); what `cipher` returns for the
    /// 16-byte units of `eboiv` (never, for the XTS and CBC ciphers of
    /// mdu; `out` is then partly written).
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// use mdu_xts::{Iv, XtsAes256};
    /// let key: Vec<u8> = (0..64).collect();
    /// let xts = XtsAes256::new(&key)?;
    /// let g = IvGenerator::new(IvMode::EssivSha256, Geometry::new(4096, 0, false)?, &key)?;
    /// let mut ivs = [Iv::ZERO; 3];
    /// g.ivs(&xts, 5, &mut ivs)?;
    /// assert_eq!(ivs[2], g.iv(&xts, 7)?);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn ivs<C: DataUnitCipher + ?Sized>(
        &self,
        cipher: &C,
        first: u64,
        out: &mut [C::Iv],
    ) -> Result<(), Error> {
        self.check_iv_len(<C::Iv as Tweak>::LEN)?;
        let mut index = first;
        for chunk in out.chunks_mut(BATCH) {
            self.ivs_batch(cipher, index, chunk)?;
            index = index.wrapping_add(chunk.len() as u64);
        }
        Ok(())
    }

    /// Refuses an IV width the mode cannot fill.
    fn check_iv_len(&self, len: usize) -> Result<(), Error> {
        if self.mode.iv_len_fits(len) {
            return Ok(());
        }
        Err(Error::IvWidth {
            mode: self.mode,
            len,
        })
    }

    /// [`ivs`](Self::ivs) for at most [`BATCH`] sectors, of a checked width.
    fn ivs_batch<C: DataUnitCipher + ?Sized>(
        &self,
        cipher: &C,
        first: u64,
        out: &mut [C::Iv],
    ) -> Result<(), Error> {
        let ss = u64::from(self.geometry.sector_size());
        for (i, slot) in out.iter_mut().enumerate() {
            let s = self.geometry.iv_sector(first.wrapping_add(i as u64));
            let mut iv = C::Iv::ZERO;
            let bytes = iv.as_mut();
            let end = bytes.len() - 8;
            match self.mode {
                IvMode::Plain => bytes[..4].copy_from_slice(&(s as u32).to_le_bytes()),
                IvMode::Plain64 | IvMode::EssivSha256 => {
                    bytes[..8].copy_from_slice(&s.to_le_bytes())
                }
                IvMode::Plain64Be => bytes[end..].copy_from_slice(&s.to_be_bytes()),
                IvMode::Benbi => {
                    bytes[end..].copy_from_slice(&((s << 5).wrapping_add(1)).to_be_bytes())
                }
                IvMode::Null => {}
                // The byte offset, the tweak of the zero block below.
                IvMode::Eboiv => bytes[..8].copy_from_slice(&s.wrapping_mul(ss).to_le_bytes()),
            }
            *slot = iv;
        }
        match (self.mode, &self.essiv) {
            (IvMode::EssivSha256, Some(essiv)) => {
                essiv_ivs(essiv, out);
                Ok(())
            }
            (IvMode::Eboiv, _) => eboiv_ivs(cipher, out),
            _ => Ok(()),
        }
    }

    /// The IV step of a batched run when this mode is affine in the 128-bit
    /// little-endian counter (`plain64`, `plain`), `None` otherwise. Where
    /// the run may start and how long it may be is
    /// [`affine_run_len`](Self::affine_run_len).
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let geo = Geometry::new(4096, 0, false)?;
    /// assert_eq!(IvGenerator::new(IvMode::Plain64, geo, &[])?.affine_step(), Some(8));
    /// assert_eq!(IvGenerator::new(IvMode::Plain64Be, geo, &[])?.affine_step(), None);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
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
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let geo = Geometry::new(512, (1 << 32) - 3, false)?;
    /// let plain = IvGenerator::new(IvMode::Plain, geo, &[])?;
    /// assert_eq!(plain.affine_run_len(0, 100), 3);
    /// assert_eq!(plain.affine_run_len(3, 100), 100);
    /// let plain64 = IvGenerator::new(IvMode::Plain64, geo, &[])?;
    /// assert_eq!(plain64.affine_run_len(0, 100), 100);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
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
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// let geo = Geometry::new(512, (1 << 32) - 3, false)?;
    /// let plain = IvGenerator::new(IvMode::Plain, geo, &[])?;
    /// assert_eq!(plain.affine(0, 3), Some(1));
    /// assert_eq!(plain.affine(0, 4), None);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn affine(&self, index: u64, count: u64) -> Option<u64> {
        let step = self.affine_step()?;
        (count > 0 && self.affine_run_len(index, count) == count).then_some(step)
    }

    /// The number of sectors in `len` bytes, and the sector size as a
    /// [`DataUnitSize`], for cipher `C`.
    fn check<C: DataUnitCipher + ?Sized>(&self, len: usize) -> Result<(u64, DataUnitSize), Error> {
        let sector_size = self.geometry.sector_size();
        let ss = sector_size as usize;
        if len == 0 || !len.is_multiple_of(ss) {
            return Err(Error::Length { len, sector_size });
        }
        self.check_iv_len(<C::Iv as Tweak>::LEN)?;
        let unit = DataUnitSize::new(ss)?;
        mdu_core::check_request::<C>(unit, len)?;
        if self.mode == IvMode::Eboiv {
            // The IVs are the cipher's own 16-byte encryptions.
            mdu_core::check_request::<C>(DataUnitSize::new(16)?, 16)?;
        }
        Ok(((len / ss) as u64, unit))
    }

    /// Encrypts (`dir`) or decrypts `buf`, whole sectors starting with
    /// sector `first` of the mapping, in place: every maximal affine run in
    /// one batched call, every other sector in explicit-IV batches (see the
    /// [type docs](Self)). The bytes are those of one sector at a time.
    ///
    /// # Errors
    ///
    /// [`Error::Length`] unless `buf` is a whole, non-zero number of
    /// sectors; [`Error::IvWidth`] if the mode cannot fill the
    /// cipher's IVs; a cipher error if `cipher` refuses the sector size
    /// (not the ciphers of mdu). `buf` is then unchanged.
    ///
    /// ```
    /// use mdu_dmcrypt::{Direction, Geometry, IvGenerator, IvMode};
    /// use mdu_xts::XtsAes128;
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Benbi, Geometry::new(1024, 0, false)?, &key)?;
    /// let mut buf = vec![7u8; 3 * 1024];
    /// g.crypt(Direction::Encrypt, &xts, 4, &mut buf)?;
    /// g.crypt(Direction::Decrypt, &xts, 4, &mut buf)?;
    /// assert!(buf.iter().all(|&b| b == 7));
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn crypt<C: DataUnitCipher + ?Sized>(
        &self,
        dir: Direction,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        let (n, unit) = self.check::<C>(buf.len())?;
        let ss = unit.get();
        let mut i = 0u64;
        let mut rest = buf;
        while i < n {
            let index = first.wrapping_add(i);
            let taken = if let Some(step) = self.affine_step() {
                let run = self.affine_run_len(index, n - i).max(1);
                let (head, tail) = rest.split_at_mut(run as usize * ss);
                let iv = self.iv(cipher, index)?;
                if run > 1 {
                    cipher.crypt_units(dir, iv, step, unit, head)?;
                } else {
                    cipher.crypt_unit(dir, iv, head)?;
                }
                rest = tail;
                run
            } else {
                let k = (n - i).min(BATCH as u64) as usize;
                let mut ivs = [C::Iv::ZERO; BATCH];
                let ivs = &mut ivs[..k];
                self.ivs(cipher, index, ivs)?;
                let (head, tail) = rest.split_at_mut(k * ss);
                if k > 1 {
                    cipher.crypt_units_with_ivs(dir, ivs, unit, head)?;
                } else {
                    cipher.crypt_unit(dir, ivs[0], head)?;
                }
                rest = tail;
                k as u64
            };
            i += taken;
        }
        Ok(())
    }

    /// Encrypts `buf`, whole sectors starting with sector `first` of the
    /// mapping, in place; see [`crypt`](Self::crypt).
    ///
    /// # Errors
    ///
    /// As for [`crypt`](Self::crypt).
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
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
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn encrypt<C: DataUnitCipher + ?Sized>(
        &self,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.crypt(Direction::Encrypt, cipher, first, buf)
    }

    /// Decrypts `buf` in place; the inverse of [`encrypt`](Self::encrypt).
    ///
    /// # Errors
    ///
    /// As for [`crypt`](Self::crypt).
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// use mdu_xts::XtsAes128;
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Eboiv, Geometry::new(1024, 0, false)?, &key)?;
    /// let mut buf = vec![7u8; 3 * 1024];
    /// g.encrypt(&xts, 0, &mut buf)?;
    /// g.decrypt(&xts, 0, &mut buf)?;
    /// assert!(buf.iter().all(|&b| b == 7));
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn decrypt<C: DataUnitCipher + ?Sized>(
        &self,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.crypt(Direction::Decrypt, cipher, first, buf)
    }
}

#[cfg(feature = "rayon")]
impl IvGenerator {
    /// As [`crypt`](Self::crypt), split on sector boundaries across the
    /// current rayon pool (same bytes).
    ///
    /// # Errors
    ///
    /// As for [`crypt`](Self::crypt); `buf` is unchanged on a length error.
    ///
    /// ```
    /// use mdu_dmcrypt::{Direction, Geometry, IvGenerator, IvMode};
    /// use mdu_xts::XtsAes128;
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Benbi, Geometry::new(512, 0, false)?, &key)?;
    /// let (mut a, mut b) = (vec![1u8; 4096 * 512], vec![1u8; 4096 * 512]);
    /// g.par_crypt(Direction::Encrypt, &xts, 5, &mut a)?;
    /// g.encrypt(&xts, 5, &mut b)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn par_crypt<C: DataUnitCipher + Sync + ?Sized>(
        &self,
        dir: Direction,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        use rayon::prelude::*;

        let (n, unit) = self.check::<C>(buf.len())?;
        let (n, ss) = (n as usize, unit.get());
        let threads = rayon::current_num_threads().max(1);
        // Enough chunks to balance the threads, each at least 256 KiB so the
        // per-chunk setup stays invisible.
        let per_chunk = n.div_ceil(threads * 4).max((256usize << 10) / ss).max(1);
        if threads == 1 || per_chunk >= n {
            return self.crypt(dir, cipher, first, buf);
        }
        buf.par_chunks_mut(per_chunk * ss)
            .enumerate()
            .try_for_each(|(i, chunk)| {
                let index = first.wrapping_add((i * per_chunk) as u64);
                self.crypt(dir, cipher, index, chunk)
            })
    }

    /// As [`encrypt`](Self::encrypt), across the current rayon pool.
    ///
    /// # Errors
    ///
    /// As for [`crypt`](Self::crypt).
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// use mdu_xts::XtsAes128;
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Plain, Geometry::new(512, 0, false)?, &key)?;
    /// let mut a = vec![1u8; 2048 * 512];
    /// g.par_encrypt(&xts, 0, &mut a)?;
    /// g.par_decrypt(&xts, 0, &mut a)?;
    /// assert!(a.iter().all(|&b| b == 1));
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn par_encrypt<C: DataUnitCipher + Sync + ?Sized>(
        &self,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.par_crypt(Direction::Encrypt, cipher, first, buf)
    }

    /// As [`decrypt`](Self::decrypt), across the current rayon pool.
    ///
    /// # Errors
    ///
    /// As for [`crypt`](Self::crypt).
    ///
    /// ```
    /// use mdu_dmcrypt::{Geometry, IvGenerator, IvMode};
    /// use mdu_xts::XtsAes128;
    /// let key: Vec<u8> = (1..=32).collect();
    /// let xts = XtsAes128::new(&key)?;
    /// let g = IvGenerator::new(IvMode::Null, Geometry::new(512, 0, false)?, &key)?;
    /// let mut a = vec![1u8; 2048 * 512];
    /// g.par_encrypt(&xts, 0, &mut a)?;
    /// g.par_decrypt(&xts, 0, &mut a)?;
    /// assert!(a.iter().all(|&b| b == 1));
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub fn par_decrypt<C: DataUnitCipher + Sync + ?Sized>(
        &self,
        cipher: &C,
        first: u64,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.par_crypt(Direction::Decrypt, cipher, first, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eboiv_of_a_value_is_its_aes_encryption() {
        // CBC of a zero block with the value as IV is E(value).
        let key = [0x24u8; 32];
        let ecb = mdu_aes::Ecb::<mdu_aes::Aes256>::new(&key).unwrap();
        let mut want = [7u8; 16];
        ecb.encrypt_blocks(&mut want);
        let cbc = mdu_cbc::AesCbc256::new(&key).unwrap();
        let mut ivs = [Iv([7u8; 16]), Iv([7u8; 16])];
        eboiv_ivs(&cbc, &mut ivs).unwrap();
        assert_eq!(ivs, [Iv(want), Iv(want)]);
    }

    /// The essiv salt and its AES key are wiped like the volume keys of the
    /// cipher crates: no 16-byte piece of the salt is left on the stack
    /// after the setup or a clone.
    #[test]
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    fn essiv_setup_leaves_no_salt_on_the_stack() {
        use mdu_aes::__private::wipe::{PROBE_DEPTH, contains, dead_stack};

        let key: alloc::vec::Vec<u8> = (0..64u32).map(|i| (i * 37 + 11) as u8).collect();
        use sha2::{Digest, Sha256};

        let salt: alloc::vec::Vec<u8> = Sha256::digest(&key).to_vec();
        let mut seen = alloc::vec![0u8; PROBE_DEPTH];
        zeroize::zeroize_stack::<PROBE_DEPTH>();
        let geometry = Geometry::new(512, 0, false).unwrap();
        let essiv = IvGenerator::new(IvMode::EssivSha256, geometry, &key).unwrap();
        dead_stack(&mut seen);
        for (i, piece) in salt.chunks(16).enumerate() {
            assert!(!contains(&seen, piece), "essiv salt piece {i}");
        }
        let copy = essiv.clone();
        dead_stack(&mut seen);
        for (i, piece) in salt.chunks(16).enumerate() {
            assert!(!contains(&seen, piece), "clone: essiv salt piece {i}");
        }
        drop((essiv, copy));
    }
}
