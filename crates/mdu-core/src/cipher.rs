//! The [`DataUnitCipher`] trait, [`Direction`] and the auto-splitters.

use crate::{DataUnitSize, Error, Tweak};

/// Which way a request goes.
///
/// Every multi-unit entry point of [`DataUnitCipher`] takes one, so that a
/// cipher writes each path once and a caller that holds a direction (a
/// dm-crypt mapping reading or writing) passes it on instead of branching.
///
/// ```
/// use mdu_core::Direction;
///
/// assert_eq!(Direction::Encrypt.inverse(), Direction::Decrypt);
/// assert_eq!(Direction::Decrypt.to_string(), "decrypt");
/// assert!(Direction::Encrypt.is_encrypt());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Plaintext to ciphertext.
    Encrypt,
    /// Ciphertext to plaintext.
    Decrypt,
}

impl Direction {
    /// Both directions, encryption first.
    ///
    /// ```
    /// assert_eq!(mdu_core::Direction::BOTH.len(), 2);
    /// ```
    pub const BOTH: [Direction; 2] = [Direction::Encrypt, Direction::Decrypt];

    /// `true` for [`Direction::Encrypt`].
    ///
    /// ```
    /// assert!(!mdu_core::Direction::Decrypt.is_encrypt());
    /// ```
    #[inline]
    pub const fn is_encrypt(self) -> bool {
        matches!(self, Direction::Encrypt)
    }

    /// The other direction.
    ///
    /// ```
    /// use mdu_core::Direction;
    /// assert_eq!(Direction::Decrypt.inverse(), Direction::Encrypt);
    /// ```
    #[inline]
    pub const fn inverse(self) -> Direction {
        match self {
            Direction::Encrypt => Direction::Decrypt,
            Direction::Decrypt => Direction::Encrypt,
        }
    }

    /// `"encrypt"` or `"decrypt"`.
    ///
    /// ```
    /// assert_eq!(mdu_core::Direction::Encrypt.name(), "encrypt");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Direction::Encrypt => "encrypt",
            Direction::Decrypt => "decrypt",
        }
    }
}

impl core::fmt::Display for Direction {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A length-preserving cipher that encrypts one data unit under one IV, and
/// optionally many data units in one call.
///
/// Implementors provide the one-unit methods, [`encrypt_unit`] and
/// [`decrypt_unit`]. The many-unit methods default to the *auto-splitters*,
/// which call the one-unit methods once per unit:
///
/// * [`crypt_units`](Self::crypt_units): consecutive units under one
///   starting IV, unit `i` under `first_iv + i * iv_step`
///   ([`split_units`]);
/// * [`crypt_units_to`](Self::crypt_units_to): the same out of place;
/// * [`crypt_units_with_ivs`](Self::crypt_units_with_ivs): equal units,
///   each with its own IV from a flat list ([`split_units_with_ivs`]).
///
/// A cipher with a faster path of its own overrides them, sets
/// [`NATIVE_MULTI_UNIT`](Self::NATIVE_MULTI_UNIT) to `true`, and must
/// produce exactly the bytes of the split path (the conformance harness in
/// [`testing`](crate) checks that). [`encrypt_units`](Self::encrypt_units)
/// and [`decrypt_units`](Self::decrypt_units) are shorthands for
/// `crypt_units` and are not meant to be overridden.
///
/// Which unit lengths a cipher accepts is said once, by
/// [`MIN_UNIT_BYTES`](Self::MIN_UNIT_BYTES) and
/// [`UNIT_ALIGN`](Self::UNIT_ALIGN), and checked by
/// [`check_unit_len`](Self::check_unit_len) and [`check_request`].
///
/// Every method validates its arguments first and leaves the buffer untouched
/// when it returns `Err`.
///
/// # The IV width is the cipher's
///
/// The associated type [`Iv`](Self::Iv) names it: [`Iv`](crate::Iv)
/// (`Iv<16>`) for XTS and CBC, `Iv<32>` for a cipher with a 32-byte tweak
/// such as HCTR2 or Adiantum. Counter IVs are little-endian over the whole
/// width ([`Iv::advance`](crate::Iv::advance)); a format whose counter wraps
/// at a narrower width (dm-crypt `plain`, fscrypt `IV_INO_LBLK_32`) splits
/// its runs at the wrap itself.
///
/// # Units of different lengths
///
/// A many-unit request is units of one length. Units whose lengths differ
/// (file names, 16 to 255 bytes each, padded per name) go one call each
/// through [`encrypt_unit`] / [`decrypt_unit`], which take any length the
/// cipher accepts: a name is one short message, so a batch of them would save
/// a call, not work, and a list of lengths per batch would burden every
/// cipher's native path with a shape only names need.
///
/// [`encrypt_unit`]: Self::encrypt_unit
/// [`decrypt_unit`]: Self::decrypt_unit
///
/// # Examples
///
/// A cipher with the 16-byte IV of XTS and CBC:
///
/// ```
/// use mdu_core::{DataUnitCipher, DataUnitSize, Error, Iv};
///
/// /// A toy (insecure!) cipher: adds the low IV byte to every byte.
/// struct AddIv;
///
/// impl DataUnitCipher for AddIv {
///     type Iv = Iv;
///     fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
///         self.check_unit_len(unit.len())?;
///         unit.iter_mut().for_each(|b| *b = b.wrapping_add(iv.0[0]));
///         Ok(())
///     }
///     fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
///         self.check_unit_len(unit.len())?;
///         unit.iter_mut().for_each(|b| *b = b.wrapping_sub(iv.0[0]));
///         Ok(())
///     }
/// }
///
/// let mut buf = [0u8; 48];
/// let unit = DataUnitSize::new(16)?;
/// AddIv.encrypt_units(Iv::from_u128(1), 1, unit, &mut buf)?;
/// assert_eq!((buf[0], buf[16], buf[32]), (1, 2, 3));
///
/// // Three units with IVs of their own.
/// let ivs = [Iv::from_u128(9), Iv::from_u128(4), Iv::from_u128(7)];
/// let mut buf = [0u8; 48];
/// AddIv.crypt_units_with_ivs(mdu_core::Direction::Encrypt, &ivs, unit, &mut buf)?;
/// assert_eq!((buf[0], buf[16], buf[32]), (9, 4, 7));
/// # Ok::<(), Error>(())
/// ```
///
/// A cipher with a 32-byte tweak: every request of it carries `Iv<32>`, and
/// batches count over all 32 bytes.
///
/// ```
/// use mdu_core::{DataUnitCipher, DataUnits, Error, Iv};
///
/// /// A toy (insecure!) cipher: XORs each byte with the tweak byte under it.
/// struct XorTweak;
///
/// impl DataUnitCipher for XorTweak {
///     type Iv = Iv<32>;
///     fn encrypt_unit(&self, tweak: Iv<32>, unit: &mut [u8]) -> Result<(), Error> {
///         self.check_unit_len(unit.len())?;
///         unit.iter_mut().zip(tweak.0.iter().cycle()).for_each(|(b, t)| *b ^= t);
///         Ok(())
///     }
///     fn decrypt_unit(&self, tweak: Iv<32>, unit: &mut [u8]) -> Result<(), Error> {
///         self.encrypt_unit(tweak, unit)
///     }
/// }
///
/// // Two 32-byte units; the second tweak carries out of byte 15 into byte 16.
/// let units = DataUnits::new(XorTweak, 32)?;
/// let mut buf = [0u8; 64];
/// units.encrypt(Iv::<32>::from_low_u128(u128::MAX), &mut buf)?;
/// assert_eq!((buf[15], buf[16]), (0xff, 0));
/// assert_eq!((buf[32 + 15], buf[32 + 16]), (0, 1));
/// # Ok::<(), Error>(())
/// ```
pub trait DataUnitCipher {
    /// The IV (tweak) of one data unit, whose width is the cipher's:
    /// [`Iv`](crate::Iv) (16 bytes) for XTS and CBC, `Iv<32>` for HCTR2
    /// and Adiantum. Batches, explicit-IV lists and the conformance harness
    /// all carry IVs of this type.
    type Iv: Tweak;

    /// `true` when the many-unit methods are a native multi-unit path rather
    /// than the auto-splitters.
    const NATIVE_MULTI_UNIT: bool = false;

    /// The smallest data unit this cipher accepts, in bytes (at least
    /// [`DataUnitSize::MIN`]).
    const MIN_UNIT_BYTES: usize = DataUnitSize::MIN;

    /// Data-unit lengths must be a multiple of this many bytes: 1 for a
    /// cipher that takes any length (XTS, with ciphertext stealing), 16 for
    /// one that works on whole blocks (CBC). A power of two.
    const UNIT_ALIGN: usize = 1;

    /// Encrypts one data unit in place under `iv`.
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeOutOfRange`] if `unit` is shorter than
    /// [`MIN_UNIT_BYTES`](Self::MIN_UNIT_BYTES) or longer than
    /// [`DataUnitSize::MAX`]; [`Error::UnitSizeMisaligned`] if its length is
    /// not a multiple of [`UNIT_ALIGN`](Self::UNIT_ALIGN).
    fn encrypt_unit(&self, iv: Self::Iv, unit: &mut [u8]) -> Result<(), Error>;

    /// Decrypts one data unit in place under `iv`.
    ///
    /// # Errors
    ///
    /// As for [`encrypt_unit`](Self::encrypt_unit).
    fn decrypt_unit(&self, iv: Self::Iv, unit: &mut [u8]) -> Result<(), Error>;

    /// One data unit in place, in the direction `dir`.
    ///
    /// # Errors
    ///
    /// As for [`encrypt_unit`](Self::encrypt_unit).
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, Direction, Error, Iv};
    /// # struct Inc;
    /// # impl DataUnitCipher for Inc {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, _: Iv, u: &mut [u8]) -> Result<(), Error> { u[0] += 1; Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, u: &mut [u8]) -> Result<(), Error> { u[0] -= 1; Ok(()) }
    /// # }
    /// let mut unit = [5u8; 16];
    /// Inc.crypt_unit(Direction::Decrypt, Iv::ZERO, &mut unit)?;
    /// assert_eq!(unit[0], 4);
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    fn crypt_unit(&self, dir: Direction, iv: Self::Iv, unit: &mut [u8]) -> Result<(), Error> {
        match dir {
            Direction::Encrypt => self.encrypt_unit(iv, unit),
            Direction::Decrypt => self.decrypt_unit(iv, unit),
        }
    }

    /// Checks that a data unit of `len` bytes is acceptable to this cipher.
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeOutOfRange`] unless
    /// `MIN_UNIT_BYTES <= len <= DataUnitSize::MAX`;
    /// [`Error::UnitSizeMisaligned`] unless `len` is a multiple of
    /// [`UNIT_ALIGN`](Self::UNIT_ALIGN).
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnitSize, Error, Iv};
    /// # struct Nop;
    /// # impl DataUnitCipher for Nop {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// # }
    /// assert!(Nop.check_unit_len(16).is_ok());
    /// assert!(Nop.check_unit_len(15).is_err());
    /// ```
    #[inline]
    fn check_unit_len(&self, len: usize) -> Result<(), Error> {
        check_unit_len::<Self>(len)
    }

    /// Encrypts (`dir`) or decrypts `buf.len() / unit` consecutive data units
    /// in place; unit `i` uses IV `first_iv.advance(i * iv_step)`.
    ///
    /// The default is the auto-splitter, [`split_units`].
    ///
    /// # Errors
    ///
    /// As for [`check_request`]: [`Error::EmptyRequest`],
    /// [`Error::LengthNotMultiple`], or a unit size this cipher refuses.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnitSize, Direction, Error, Iv};
    /// # struct Mark;
    /// # impl DataUnitCipher for Mark {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { u[0] = iv.0[0]; Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// # }
    /// let mut buf = [0u8; 64];
    /// let unit = DataUnitSize::new(16)?;
    /// Mark.crypt_units(Direction::Encrypt, Iv::from_u128(3), 8, unit, &mut buf)?;
    /// assert_eq!((buf[0], buf[16], buf[32], buf[48]), (3, 11, 19, 27));
    /// # Ok::<(), Error>(())
    /// ```
    fn crypt_units(
        &self,
        dir: Direction,
        first_iv: Self::Iv,
        iv_step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        split_units(self, dir, first_iv, iv_step, unit, buf)
    }

    /// The units of `src` into `dst` (equal lengths); otherwise as
    /// [`crypt_units`](Self::crypt_units).
    ///
    /// The default copies `src` to `dst` and runs `crypt_units` in place; a
    /// cipher with a fused out-of-place path overrides it.
    ///
    /// # Errors
    ///
    /// As for [`check_request`], then [`Error::LengthMismatch`].
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnitSize, Direction, Error, Iv};
    /// # struct Inc;
    /// # impl DataUnitCipher for Inc {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, _: Iv, u: &mut [u8]) -> Result<(), Error> { u[0] += 1; Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, u: &mut [u8]) -> Result<(), Error> { u[0] -= 1; Ok(()) }
    /// # }
    /// let src = [0u8; 32];
    /// let mut dst = [9u8; 32];
    /// let unit = DataUnitSize::new(16)?;
    /// Inc.crypt_units_to(Direction::Encrypt, Iv::ZERO, 1, unit, &src, &mut dst)?;
    /// assert_eq!((dst[0], dst[1], dst[16]), (1, 0, 1));
    /// # Ok::<(), Error>(())
    /// ```
    fn crypt_units_to(
        &self,
        dir: Direction,
        first_iv: Self::Iv,
        iv_step: u64,
        unit: DataUnitSize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        check_request::<Self>(unit, src.len())?;
        check_same_len(src.len(), dst.len())?;
        dst.copy_from_slice(src);
        self.crypt_units(dir, first_iv, iv_step, unit, dst)
    }

    /// Encrypts (`dir`) or decrypts `ivs.len()` data units of `unit` bytes
    /// in place, unit `i` under `ivs[i]`: a batch of equal units whose IVs
    /// are not consecutive counters.
    ///
    /// This is the path of the IV modes that are not affine in the unit
    /// index (dm-crypt `essiv`, `benbi`, `eboiv`, `plain64be`), of callers
    /// that encrypt scattered units (a cache writing back dirty sectors), and
    /// the shape of a descriptor batch for an offload engine: one flat
    /// buffer of equal units and one flat list of IVs, many requests per
    /// submission. A cipher with a native multi-unit path runs it here
    /// too; the default is the auto-splitter, [`split_units_with_ivs`].
    ///
    /// # Errors
    ///
    /// As for [`check_request`], then [`Error::IvCountMismatch`] unless
    /// `buf` holds exactly `ivs.len()` units.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnitSize, Direction, Error, Iv};
    /// # struct Mark;
    /// # impl DataUnitCipher for Mark {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { u[0] = iv.0[0]; Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// # }
    /// let unit = DataUnitSize::new(16)?;
    /// let ivs = [Iv::from_u128(200), Iv::from_u128(3)];
    /// let mut buf = [0u8; 32];
    /// Mark.crypt_units_with_ivs(Direction::Encrypt, &ivs, unit, &mut buf)?;
    /// assert_eq!((buf[0], buf[16]), (200, 3));
    /// assert_eq!(
    ///     Mark.crypt_units_with_ivs(Direction::Encrypt, &ivs[..1], unit, &mut buf),
    ///     Err(Error::IvCountMismatch { ivs: 1, units: 2 })
    /// );
    /// # Ok::<(), Error>(())
    /// ```
    fn crypt_units_with_ivs(
        &self,
        dir: Direction,
        ivs: &[Self::Iv],
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        split_units_with_ivs(self, dir, ivs, unit, buf)
    }

    /// Shorthand for [`crypt_units`](Self::crypt_units) with
    /// [`Direction::Encrypt`]; override `crypt_units`, not this.
    ///
    /// # Errors
    ///
    /// As for [`crypt_units`](Self::crypt_units).
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnitSize, Error, Iv};
    /// # struct Mark;
    /// # impl DataUnitCipher for Mark {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { u[0] = iv.0[0]; Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// # }
    /// let mut buf = [0u8; 32];
    /// Mark.encrypt_units(Iv::from_u128(7), 1, DataUnitSize::new(16)?, &mut buf)?;
    /// assert_eq!((buf[0], buf[16]), (7, 8));
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    fn encrypt_units(
        &self,
        first_iv: Self::Iv,
        iv_step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.crypt_units(Direction::Encrypt, first_iv, iv_step, unit, buf)
    }

    /// Shorthand for [`crypt_units`](Self::crypt_units) with
    /// [`Direction::Decrypt`]; override `crypt_units`, not this.
    ///
    /// # Errors
    ///
    /// As for [`crypt_units`](Self::crypt_units).
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnitSize, Error, Iv};
    /// # struct Nop;
    /// # impl DataUnitCipher for Nop {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// # }
    /// let mut buf = [0u8; 40];
    /// assert!(Nop.decrypt_units(Iv::ZERO, 1, DataUnitSize::new(16)?, &mut buf).is_err());
    /// # Ok::<(), Error>(())
    /// ```
    #[inline]
    fn decrypt_units(
        &self,
        first_iv: Self::Iv,
        iv_step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.crypt_units(Direction::Decrypt, first_iv, iv_step, unit, buf)
    }
}

impl<C: DataUnitCipher + ?Sized> DataUnitCipher for &C {
    type Iv = C::Iv;
    const NATIVE_MULTI_UNIT: bool = C::NATIVE_MULTI_UNIT;
    const MIN_UNIT_BYTES: usize = C::MIN_UNIT_BYTES;
    const UNIT_ALIGN: usize = C::UNIT_ALIGN;

    #[inline]
    fn encrypt_unit(&self, iv: Self::Iv, unit: &mut [u8]) -> Result<(), Error> {
        (**self).encrypt_unit(iv, unit)
    }
    #[inline]
    fn decrypt_unit(&self, iv: Self::Iv, unit: &mut [u8]) -> Result<(), Error> {
        (**self).decrypt_unit(iv, unit)
    }
    #[inline]
    fn crypt_unit(&self, dir: Direction, iv: Self::Iv, unit: &mut [u8]) -> Result<(), Error> {
        (**self).crypt_unit(dir, iv, unit)
    }
    #[inline]
    fn crypt_units(
        &self,
        dir: Direction,
        iv: Self::Iv,
        step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        (**self).crypt_units(dir, iv, step, unit, buf)
    }
    #[inline]
    fn crypt_units_to(
        &self,
        dir: Direction,
        iv: Self::Iv,
        step: u64,
        unit: DataUnitSize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        (**self).crypt_units_to(dir, iv, step, unit, src, dst)
    }
    #[inline]
    fn crypt_units_with_ivs(
        &self,
        dir: Direction,
        ivs: &[Self::Iv],
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        (**self).crypt_units_with_ivs(dir, ivs, unit, buf)
    }
}

/// The unit-length rule of cipher `C`, checked in one place.
#[inline]
fn check_unit_len<C: DataUnitCipher + ?Sized>(len: usize) -> Result<(), Error> {
    let min = if C::MIN_UNIT_BYTES > DataUnitSize::MIN {
        C::MIN_UNIT_BYTES
    } else {
        DataUnitSize::MIN
    };
    if len < min || len > DataUnitSize::MAX {
        return Err(Error::UnitSizeOutOfRange {
            size: len,
            min,
            max: DataUnitSize::MAX,
        });
    }
    let align = C::UNIT_ALIGN;
    if align > 1 && !len.is_multiple_of(align) {
        return Err(Error::UnitSizeMisaligned { size: len, align });
    }
    Ok(())
}

/// Validates a many-unit request of `len` bytes for cipher `C` and returns
/// the number of units.
///
/// Native multi-unit implementations call this first, so that they reject
/// exactly what the auto-splitters reject.
///
/// # Errors
///
/// [`Error::UnitSizeOutOfRange`] or [`Error::UnitSizeMisaligned`] if `C`
/// refuses units of `unit` bytes (see
/// [`DataUnitCipher::check_unit_len`]), [`Error::EmptyRequest`],
/// [`Error::LengthNotMultiple`].
///
/// ```
/// # use mdu_core::{check_request, DataUnitCipher, DataUnitSize, Error, Iv};
/// # struct Nop;
/// # impl DataUnitCipher for Nop {
/// #     type Iv = Iv;
/// #     fn encrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
/// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
/// # }
/// let unit = DataUnitSize::new(512)?;
/// assert_eq!(check_request::<Nop>(unit, 2048)?, 4);
/// assert!(check_request::<Nop>(unit, 2047).is_err());
/// # Ok::<(), Error>(())
/// ```
#[inline]
pub fn check_request<C: DataUnitCipher + ?Sized>(
    unit: DataUnitSize,
    len: usize,
) -> Result<usize, Error> {
    check_unit_len::<C>(unit.get())?;
    unit.units_in(len)
}

/// Validates an explicit-IV request: [`check_request`], then one IV per
/// unit. Returns the number of units.
///
/// # Errors
///
/// As for [`check_request`], then [`Error::IvCountMismatch`].
///
/// ```
/// # use mdu_core::{check_request_with_ivs, DataUnitCipher, DataUnitSize, Error, Iv};
/// # struct Nop;
/// # impl DataUnitCipher for Nop {
/// #     type Iv = Iv;
/// #     fn encrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
/// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
/// # }
/// let unit = DataUnitSize::new(512)?;
/// assert_eq!(check_request_with_ivs::<Nop>(unit, 3, 1536)?, 3);
/// assert_eq!(
///     check_request_with_ivs::<Nop>(unit, 2, 1536),
///     Err(Error::IvCountMismatch { ivs: 2, units: 3 })
/// );
/// # Ok::<(), Error>(())
/// ```
#[inline]
pub fn check_request_with_ivs<C: DataUnitCipher + ?Sized>(
    unit: DataUnitSize,
    ivs: usize,
    len: usize,
) -> Result<usize, Error> {
    let units = check_request::<C>(unit, len)?;
    if ivs != units {
        return Err(Error::IvCountMismatch { ivs, units });
    }
    Ok(units)
}

/// Out-of-place requests need equal lengths.
///
/// # Errors
///
/// [`Error::LengthMismatch`] unless `src == dst`.
#[inline]
pub(crate) fn check_same_len(src: usize, dst: usize) -> Result<(), Error> {
    if src != dst {
        return Err(Error::LengthMismatch { src, dst });
    }
    Ok(())
}

/// The auto-splitter: each unit of `buf` through
/// [`DataUnitCipher::crypt_unit`] under IV `first_iv + i * iv_step`.
///
/// This is the default of [`DataUnitCipher::crypt_units`] and the
/// reference a native multi-unit path must match byte for byte.
///
/// # Errors
///
/// As for [`check_request`]; nothing is written on error.
///
/// ```
/// # use mdu_core::{split_units, DataUnitCipher, DataUnitSize, Direction, Error, Iv};
/// # struct Mark;
/// # impl DataUnitCipher for Mark {
/// #     type Iv = Iv;
/// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { u[0] = iv.0[0]; Ok(()) }
/// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
/// # }
/// let mut buf = [0u8; 64];
/// split_units(&Mark, Direction::Encrypt, Iv::from_u128(10), 8, DataUnitSize::new(32)?, &mut buf)?;
/// assert_eq!((buf[0], buf[32]), (10, 18));
/// # Ok::<(), Error>(())
/// ```
pub fn split_units<C: DataUnitCipher + ?Sized>(
    cipher: &C,
    dir: Direction,
    first_iv: C::Iv,
    iv_step: u64,
    unit: DataUnitSize,
    buf: &mut [u8],
) -> Result<(), Error> {
    check_request::<C>(unit, buf.len())?;
    let mut iv = first_iv;
    for chunk in buf.chunks_exact_mut(unit.get()) {
        cipher.crypt_unit(dir, iv, chunk)?;
        iv = iv.advance(u128::from(iv_step));
    }
    Ok(())
}

/// The auto-splitter of explicit-IV batches: unit `i` of `buf` through
/// [`DataUnitCipher::crypt_unit`] under `ivs[i]`.
///
/// This is the default of [`DataUnitCipher::crypt_units_with_ivs`].
///
/// # Errors
///
/// As for [`check_request_with_ivs`]; nothing is written on error.
///
/// ```
/// # use mdu_core::{split_units_with_ivs, DataUnitCipher, DataUnitSize, Direction, Error, Iv};
/// # struct Mark;
/// # impl DataUnitCipher for Mark {
/// #     type Iv = Iv;
/// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { u[0] = iv.0[0]; Ok(()) }
/// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
/// # }
/// let mut buf = [0u8; 64];
/// let ivs = [Iv::from_u128(5), Iv::from_u128(1)];
/// split_units_with_ivs(&Mark, Direction::Encrypt, &ivs, DataUnitSize::new(32)?, &mut buf)?;
/// assert_eq!((buf[0], buf[32]), (5, 1));
/// # Ok::<(), Error>(())
/// ```
pub fn split_units_with_ivs<C: DataUnitCipher + ?Sized>(
    cipher: &C,
    dir: Direction,
    ivs: &[C::Iv],
    unit: DataUnitSize,
    buf: &mut [u8],
) -> Result<(), Error> {
    check_request_with_ivs::<C>(unit, ivs.len(), buf.len())?;
    for (chunk, iv) in buf.chunks_exact_mut(unit.get()).zip(ivs) {
        cipher.crypt_unit(dir, *iv, chunk)?;
    }
    Ok(())
}
