//! The [`DataUnitCipher`] trait and the auto-splitter.

use crate::{DataUnitSize, Error, Iv};

/// A length-preserving cipher that encrypts one data unit under one IV, and
/// optionally many consecutive data units in one call.
///
/// Implementors provide the one-unit methods. The many-unit methods default
/// to the *auto-splitter* ([`split_encrypt_units`]), which calls the one-unit
/// method once per unit with IV `first_iv + i * iv_step`. A cipher with a
/// faster path of its own overrides them, sets
/// [`NATIVE_MULTI_UNIT`](Self::NATIVE_MULTI_UNIT) to `true`, and must produce
/// exactly the bytes of the split path (the conformance harness in
/// [`testing`](crate) checks that).
///
/// Every method validates its arguments first and leaves the buffer untouched
/// when it returns `Err`.
///
/// ```
/// use mdu_core::{DataUnitCipher, DataUnitSize, Error, Iv};
///
/// /// A toy (insecure!) cipher: adds the low IV byte to every byte.
/// struct AddIv;
///
/// impl DataUnitCipher for AddIv {
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
/// # Ok::<(), Error>(())
/// ```
pub trait DataUnitCipher {
    /// `true` when [`encrypt_units`](Self::encrypt_units) and
    /// [`decrypt_units`](Self::decrypt_units) are a native multi-unit path
    /// rather than the auto-splitter.
    const NATIVE_MULTI_UNIT: bool = false;

    /// The smallest data unit this cipher accepts, in bytes (at least
    /// [`DataUnitSize::MIN`]).
    const MIN_UNIT_BYTES: usize = DataUnitSize::MIN;

    /// Encrypts one data unit in place under `iv`.
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeOutOfRange`] if `unit` is shorter than
    /// [`MIN_UNIT_BYTES`](Self::MIN_UNIT_BYTES) or longer than
    /// [`DataUnitSize::MAX`].
    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error>;

    /// Decrypts one data unit in place under `iv`.
    ///
    /// # Errors
    ///
    /// As for [`encrypt_unit`](Self::encrypt_unit).
    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error>;

    /// Checks that a data unit of `len` bytes is acceptable to this cipher.
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeOutOfRange`] unless
    /// `MIN_UNIT_BYTES <= len <= DataUnitSize::MAX`.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnitSize, Error, Iv};
    /// # struct Nop;
    /// # impl DataUnitCipher for Nop {
    /// #     fn encrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// # }
    /// assert!(Nop.check_unit_len(16).is_ok());
    /// assert!(Nop.check_unit_len(15).is_err());
    /// ```
    #[inline]
    fn check_unit_len(&self, len: usize) -> Result<(), Error> {
        let min = if Self::MIN_UNIT_BYTES > DataUnitSize::MIN {
            Self::MIN_UNIT_BYTES
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
        Ok(())
    }

    /// Encrypts `buf.len() / unit` consecutive data units in place; unit `i`
    /// uses IV `first_iv.advance(i * iv_step)`.
    ///
    /// The default is the auto-splitter, [`split_encrypt_units`].
    ///
    /// # Errors
    ///
    /// [`Error::EmptyRequest`], [`Error::LengthNotMultiple`], or
    /// [`Error::UnitSizeOutOfRange`] if `unit` is below
    /// [`MIN_UNIT_BYTES`](Self::MIN_UNIT_BYTES).
    fn encrypt_units(
        &self,
        first_iv: Iv,
        iv_step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        split_encrypt_units(self, first_iv, iv_step, unit, buf)
    }

    /// Decrypts `buf.len() / unit` consecutive data units in place; the
    /// inverse of [`encrypt_units`](Self::encrypt_units).
    ///
    /// # Errors
    ///
    /// As for [`encrypt_units`](Self::encrypt_units).
    fn decrypt_units(
        &self,
        first_iv: Iv,
        iv_step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        split_decrypt_units(self, first_iv, iv_step, unit, buf)
    }

    /// Encrypts the units of `src` into `dst` (equal lengths).
    ///
    /// The default copies `src` to `dst` and encrypts in place; a cipher with
    /// a fused out-of-place path overrides it.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`], then as for
    /// [`encrypt_units`](Self::encrypt_units).
    fn encrypt_units_to(
        &self,
        first_iv: Iv,
        iv_step: u64,
        unit: DataUnitSize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        check_request::<Self>(unit, src.len())?;
        check_same_len(src.len(), dst.len())?;
        dst.copy_from_slice(src);
        self.encrypt_units(first_iv, iv_step, unit, dst)
    }

    /// Decrypts the units of `src` into `dst` (equal lengths).
    ///
    /// # Errors
    ///
    /// As for [`encrypt_units_to`](Self::encrypt_units_to).
    fn decrypt_units_to(
        &self,
        first_iv: Iv,
        iv_step: u64,
        unit: DataUnitSize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        check_request::<Self>(unit, src.len())?;
        check_same_len(src.len(), dst.len())?;
        dst.copy_from_slice(src);
        self.decrypt_units(first_iv, iv_step, unit, dst)
    }
}

impl<C: DataUnitCipher + ?Sized> DataUnitCipher for &C {
    const NATIVE_MULTI_UNIT: bool = C::NATIVE_MULTI_UNIT;
    const MIN_UNIT_BYTES: usize = C::MIN_UNIT_BYTES;

    #[inline]
    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        (**self).encrypt_unit(iv, unit)
    }
    #[inline]
    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        (**self).decrypt_unit(iv, unit)
    }
    #[inline]
    fn encrypt_units(
        &self,
        iv: Iv,
        step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        (**self).encrypt_units(iv, step, unit, buf)
    }
    #[inline]
    fn decrypt_units(
        &self,
        iv: Iv,
        step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        (**self).decrypt_units(iv, step, unit, buf)
    }
    #[inline]
    fn encrypt_units_to(
        &self,
        iv: Iv,
        step: u64,
        unit: DataUnitSize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        (**self).encrypt_units_to(iv, step, unit, src, dst)
    }
    #[inline]
    fn decrypt_units_to(
        &self,
        iv: Iv,
        step: u64,
        unit: DataUnitSize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        (**self).decrypt_units_to(iv, step, unit, src, dst)
    }
}

/// Validates a many-unit request of `len` bytes for cipher `C` and returns
/// the number of units.
///
/// Native multi-unit implementations call this first, so that they reject
/// exactly what the auto-splitter rejects.
///
/// # Errors
///
/// [`Error::UnitSizeOutOfRange`] if `unit` is below `C::MIN_UNIT_BYTES`,
/// [`Error::EmptyRequest`], [`Error::LengthNotMultiple`].
///
/// ```
/// # use mdu_core::{check_request, DataUnitCipher, DataUnitSize, Error, Iv};
/// # struct Nop;
/// # impl DataUnitCipher for Nop {
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
    if unit.get() < C::MIN_UNIT_BYTES {
        return Err(Error::UnitSizeOutOfRange {
            size: unit.get(),
            min: C::MIN_UNIT_BYTES,
            max: DataUnitSize::MAX,
        });
    }
    unit.units_in(len)
}

#[inline]
pub(crate) fn check_same_len(src: usize, dst: usize) -> Result<(), Error> {
    if src != dst {
        return Err(Error::LengthMismatch { src, dst });
    }
    Ok(())
}

/// The auto-splitter: encrypts each unit of `buf` with
/// [`DataUnitCipher::encrypt_unit`] under IV `first_iv + i * iv_step`.
///
/// This is the default of [`DataUnitCipher::encrypt_units`] and the
/// reference a native multi-unit path must match byte for byte.
///
/// # Errors
///
/// As for [`check_request`]; nothing is written on error.
///
/// ```
/// # use mdu_core::{split_encrypt_units, DataUnitCipher, DataUnitSize, Error, Iv};
/// # struct Mark;
/// # impl DataUnitCipher for Mark {
/// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { u[0] = iv.0[0]; Ok(()) }
/// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
/// # }
/// let mut buf = [0u8; 64];
/// split_encrypt_units(&Mark, Iv::from_u128(10), 8, DataUnitSize::new(32)?, &mut buf)?;
/// assert_eq!((buf[0], buf[32]), (10, 18));
/// # Ok::<(), Error>(())
/// ```
pub fn split_encrypt_units<C: DataUnitCipher + ?Sized>(
    cipher: &C,
    first_iv: Iv,
    iv_step: u64,
    unit: DataUnitSize,
    buf: &mut [u8],
) -> Result<(), Error> {
    check_request::<C>(unit, buf.len())?;
    let mut iv = first_iv;
    for chunk in buf.chunks_exact_mut(unit.get()) {
        cipher.encrypt_unit(iv, chunk)?;
        iv = iv.advance(u128::from(iv_step));
    }
    Ok(())
}

/// The auto-splitter for decryption; see [`split_encrypt_units`].
///
/// # Errors
///
/// As for [`check_request`]; nothing is written on error.
///
/// ```
/// # use mdu_core::{split_decrypt_units, DataUnitCipher, DataUnitSize, Error, Iv};
/// # struct Nop;
/// # impl DataUnitCipher for Nop {
/// #     fn encrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
/// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
/// # }
/// let mut buf = [0u8; 40];
/// assert!(split_decrypt_units(&Nop, Iv::ZERO, 1, DataUnitSize::new(32)?, &mut buf).is_err());
/// # Ok::<(), Error>(())
/// ```
pub fn split_decrypt_units<C: DataUnitCipher + ?Sized>(
    cipher: &C,
    first_iv: Iv,
    iv_step: u64,
    unit: DataUnitSize,
    buf: &mut [u8],
) -> Result<(), Error> {
    check_request::<C>(unit, buf.len())?;
    let mut iv = first_iv;
    for chunk in buf.chunks_exact_mut(unit.get()) {
        cipher.decrypt_unit(iv, chunk)?;
        iv = iv.advance(u128::from(iv_step));
    }
    Ok(())
}
