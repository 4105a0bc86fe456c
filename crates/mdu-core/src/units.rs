//! [`DataUnits`]: a cipher bound to a data-unit size and an IV step.

use crate::cipher::{check_request, check_request_with_ivs, check_same_len};
use crate::{DataUnitCipher, DataUnitSize, Direction, Error, Tweak};

/// Runs a validated, non-empty run of whole units in place. A run of one
/// unit goes straight to the one-unit method.
#[inline]
pub(crate) fn run<C: DataUnitCipher + ?Sized>(
    cipher: &C,
    dir: Direction,
    iv: C::Iv,
    step: u64,
    unit: DataUnitSize,
    buf: &mut [u8],
) -> Result<(), Error> {
    if buf.len() == unit.get() {
        return cipher.crypt_unit(dir, iv, buf);
    }
    cipher.crypt_units(dir, iv, step, unit, buf)
}

/// A [`DataUnitCipher`] bound to a data-unit size and an IV step, validated
/// once at construction.
///
/// Every request is a whole, non-empty number of data units. Unit `i` of a
/// request is processed under IV `first_iv + i * iv_step` (a 128-bit
/// little-endian counter, see [`Iv`](crate::Iv)). The step is 1 by default; dm-crypt
/// without `iv_large_sectors` counts 512-byte sectors, so a volume with
/// 4096-byte sectors (every such LUKS2 volume) needs a step of 8.
///
/// A request that is invalid returns `Err` before any byte is touched.
///
/// ```
/// use mdu_core::{DataUnitCipher, DataUnits, Error, Iv};
///
/// // Any DataUnitCipher works; this toy one is NOT a real cipher.
/// struct Toy;
/// impl DataUnitCipher for Toy {
///     type Iv = Iv;
///     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
///         self.check_unit_len(u.len())?;
///         u.iter_mut().for_each(|b| *b ^= iv.0[0]);
///         Ok(())
///     }
///     fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
///         self.encrypt_unit(iv, u)
///     }
/// }
///
/// // 4 KiB sectors of a LUKS2 volume: plain64 IVs step by 8.
/// let units = DataUnits::new(Toy, 4096)?.with_iv_step(8);
/// let mut buf = vec![0u8; 3 * 4096];
/// units.encrypt(Iv::plain64(16), &mut buf)?;
/// assert_eq!((buf[0], buf[4096], buf[8192]), (16, 24, 32));
///
/// // Invalid requests are errors, and the buffer is left as it was.
/// let before = buf.clone();
/// assert_eq!(
///     units.encrypt(Iv::ZERO, &mut buf[..4000]),
///     Err(Error::LengthNotMultiple { len: 4000, unit: 4096 })
/// );
/// assert_eq!(buf, before);
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct DataUnits<C> {
    cipher: C,
    unit: DataUnitSize,
    step: u64,
}

impl<C: DataUnitCipher> DataUnits<C> {
    /// Binds `cipher` to data units of `unit_bytes` bytes, IV step 1.
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeOutOfRange`] if `unit_bytes` is below the cipher's
    /// minimum ([`DataUnitCipher::MIN_UNIT_BYTES`], at least 16) or above
    /// 16 MiB.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnits, Error, Iv};
    /// # struct Nop;
    /// # impl DataUnitCipher for Nop {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// # }
    /// assert!(DataUnits::new(Nop, 512).is_ok());
    /// assert!(DataUnits::new(Nop, 8).is_err());
    /// ```
    pub fn new(cipher: C, unit_bytes: usize) -> Result<Self, Error> {
        cipher.check_unit_len(unit_bytes)?;
        let unit = DataUnitSize::new(unit_bytes)?;
        Ok(DataUnits {
            cipher,
            unit,
            step: 1,
        })
    }

    /// Sets how far the IV advances from one data unit to the next (default
    /// 1). A step of 0 gives every unit the same IV.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnits, Error, Iv};
    /// # struct Nop;
    /// # impl DataUnitCipher for Nop {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// # }
    /// let units = DataUnits::new(Nop, 4096)?.with_iv_step(4096 / 512);
    /// assert_eq!(units.iv_step(), 8);
    /// # Ok::<(), Error>(())
    /// ```
    #[must_use]
    pub fn with_iv_step(mut self, step: u64) -> Self {
        self.step = step;
        self
    }

    /// The cipher.
    pub fn cipher(&self) -> &C {
        &self.cipher
    }

    /// Gives the cipher back.
    pub fn into_inner(self) -> C {
        self.cipher
    }

    /// The data-unit size.
    pub fn unit_size(&self) -> DataUnitSize {
        self.unit
    }

    /// The IV step between consecutive units.
    pub fn iv_step(&self) -> u64 {
        self.step
    }

    /// The IV of unit `index` of a request that starts at `first_iv`.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnits, Error, Iv};
    /// # struct Nop;
    /// # impl DataUnitCipher for Nop {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// #     fn decrypt_unit(&self, _: Iv, _: &mut [u8]) -> Result<(), Error> { Ok(()) }
    /// # }
    /// let units = DataUnits::new(Nop, 4096)?.with_iv_step(8);
    /// assert_eq!(units.iv_of(Iv::plain64(0), 3), Iv::plain64(24));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn iv_of(&self, first_iv: C::Iv, index: u64) -> C::Iv {
        first_iv.advance(u128::from(index) * u128::from(self.step))
    }

    /// Encrypts (`dir`) or decrypts the data units of `buf` in place; unit
    /// `i` under `first_iv + i * step`.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyRequest`] or [`Error::LengthNotMultiple`]; `buf` is then
    /// unchanged.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnits, Direction, Error, Iv};
    /// # struct Toy;
    /// # impl DataUnitCipher for Toy {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
    /// #         u.iter_mut().for_each(|b| *b ^= iv.0[0]); Ok(())
    /// #     }
    /// #     fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { self.encrypt_unit(iv, u) }
    /// # }
    /// let units = DataUnits::new(Toy, 16)?;
    /// let mut buf = [0u8; 32];
    /// for dir in Direction::BOTH {
    ///     units.crypt(dir, Iv::from_u128(4), &mut buf)?;
    /// }
    /// assert_eq!(buf, [0u8; 32]);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn crypt(&self, dir: Direction, first_iv: C::Iv, buf: &mut [u8]) -> Result<(), Error> {
        check_request::<C>(self.unit, buf.len())?;
        run(&self.cipher, dir, first_iv, self.step, self.unit, buf)
    }

    /// Encrypts (`dir`) or decrypts the data units of `src` into `dst`,
    /// which must be as long.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyRequest`], [`Error::LengthNotMultiple`] or
    /// [`Error::LengthMismatch`]; `dst` is then unchanged.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnits, Direction, Error, Iv};
    /// # struct Toy;
    /// # impl DataUnitCipher for Toy {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
    /// #         u.iter_mut().for_each(|b| *b ^= iv.0[0]); Ok(())
    /// #     }
    /// #     fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { self.encrypt_unit(iv, u) }
    /// # }
    /// let units = DataUnits::new(Toy, 16)?;
    /// let mut out = [0u8; 16];
    /// units.crypt_to(Direction::Encrypt, Iv::from_u128(4), &[1; 16], &mut out)?;
    /// assert_eq!(out, [5; 16]);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn crypt_to(
        &self,
        dir: Direction,
        first_iv: C::Iv,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        check_request::<C>(self.unit, src.len())?;
        check_same_len(src.len(), dst.len())?;
        self.cipher
            .crypt_units_to(dir, first_iv, self.step, self.unit, src, dst)
    }

    /// Encrypts (`dir`) or decrypts the data units of `buf` in place, unit
    /// `i` under `ivs[i]`: a batch whose IVs are not consecutive (the IV
    /// step does not apply). See
    /// [`DataUnitCipher::crypt_units_with_ivs`].
    ///
    /// # Errors
    ///
    /// [`Error::EmptyRequest`], [`Error::LengthNotMultiple`] or
    /// [`Error::IvCountMismatch`]; `buf` is then unchanged.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnits, Direction, Error, Iv};
    /// # struct Toy;
    /// # impl DataUnitCipher for Toy {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
    /// #         u.iter_mut().for_each(|b| *b ^= iv.0[0]); Ok(())
    /// #     }
    /// #     fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { self.encrypt_unit(iv, u) }
    /// # }
    /// let units = DataUnits::new(Toy, 16)?;
    /// let mut buf = [0u8; 48];
    /// let ivs = [Iv::from_u128(9), Iv::from_u128(2), Iv::from_u128(9)];
    /// units.crypt_with_ivs(Direction::Encrypt, &ivs, &mut buf)?;
    /// assert_eq!((buf[0], buf[16], buf[32]), (9, 2, 9));
    /// assert!(units.crypt_with_ivs(Direction::Encrypt, &ivs[..2], &mut buf).is_err());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn crypt_with_ivs(
        &self,
        dir: Direction,
        ivs: &[C::Iv],
        buf: &mut [u8],
    ) -> Result<(), Error> {
        check_request_with_ivs::<C>(self.unit, ivs.len(), buf.len())?;
        if buf.len() == self.unit.get() {
            return self.cipher.crypt_unit(dir, ivs[0], buf);
        }
        self.cipher.crypt_units_with_ivs(dir, ivs, self.unit, buf)
    }

    /// Encrypts the data units of `buf` in place, unit `i` under `ivs[i]`;
    /// see [`crypt_with_ivs`](Self::crypt_with_ivs).
    ///
    /// # Errors
    ///
    /// As for [`crypt_with_ivs`](Self::crypt_with_ivs).
    pub fn encrypt_with_ivs(&self, ivs: &[C::Iv], buf: &mut [u8]) -> Result<(), Error> {
        self.crypt_with_ivs(Direction::Encrypt, ivs, buf)
    }

    /// Decrypts the data units of `buf` in place, unit `i` under `ivs[i]`;
    /// see [`crypt_with_ivs`](Self::crypt_with_ivs).
    ///
    /// # Errors
    ///
    /// As for [`crypt_with_ivs`](Self::crypt_with_ivs).
    pub fn decrypt_with_ivs(&self, ivs: &[C::Iv], buf: &mut [u8]) -> Result<(), Error> {
        self.crypt_with_ivs(Direction::Decrypt, ivs, buf)
    }

    /// Encrypts the data units of `buf` in place.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyRequest`] or [`Error::LengthNotMultiple`]; `buf` is then
    /// unchanged.
    pub fn encrypt(&self, first_iv: C::Iv, buf: &mut [u8]) -> Result<(), Error> {
        self.crypt(Direction::Encrypt, first_iv, buf)
    }

    /// Decrypts the data units of `buf` in place.
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt).
    pub fn decrypt(&self, first_iv: C::Iv, buf: &mut [u8]) -> Result<(), Error> {
        self.crypt(Direction::Decrypt, first_iv, buf)
    }

    /// Encrypts the data units of `src` into `dst`, which must be as long.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyRequest`], [`Error::LengthNotMultiple`] or
    /// [`Error::LengthMismatch`]; `dst` is then unchanged.
    pub fn encrypt_to(&self, first_iv: C::Iv, src: &[u8], dst: &mut [u8]) -> Result<(), Error> {
        self.crypt_to(Direction::Encrypt, first_iv, src, dst)
    }

    /// Decrypts the data units of `src` into `dst`, which must be as long.
    ///
    /// # Errors
    ///
    /// As for [`encrypt_to`](Self::encrypt_to).
    pub fn decrypt_to(&self, first_iv: C::Iv, src: &[u8], dst: &mut [u8]) -> Result<(), Error> {
        self.crypt_to(Direction::Decrypt, first_iv, src, dst)
    }

    /// Encrypts a request scattered over `segments`, in place.
    ///
    /// The request is the concatenation of the segments; a data unit may
    /// straddle segment boundaries, and segments may be empty. Runs of whole
    /// units inside one segment go to the cipher's multi-unit path; only a
    /// unit that straddles a boundary is gathered into a bounce buffer.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyRequest`] or [`Error::LengthNotMultiple`] for the total
    /// length; no segment is then changed.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnits, Error, Iv};
    /// # struct Toy;
    /// # impl DataUnitCipher for Toy {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
    /// #         u.iter_mut().enumerate().for_each(|(i, b)| *b ^= iv.0[0] ^ i as u8); Ok(())
    /// #     }
    /// #     fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { self.encrypt_unit(iv, u) }
    /// # }
    /// let units = DataUnits::new(Toy, 32)?;
    /// let mut whole = [7u8; 96];
    /// units.encrypt(Iv::ZERO, &mut whole)?;
    ///
    /// let mut a = [7u8; 40];
    /// let mut b = [7u8; 50];
    /// let mut c = [7u8; 6];
    /// units.encrypt_segments(Iv::ZERO, &mut [&mut a, &mut b, &mut c])?;
    /// assert_eq!([&a[..], &b[..], &c[..]].concat(), whole);
    /// # Ok::<(), Error>(())
    /// ```
    #[cfg(feature = "alloc")]
    pub fn encrypt_segments(
        &self,
        first_iv: C::Iv,
        segments: &mut [&mut [u8]],
    ) -> Result<(), Error> {
        crate::segments::in_place(self, Direction::Encrypt, first_iv, segments)
    }

    /// Decrypts a request scattered over `segments`, in place; see
    /// [`encrypt_segments`](Self::encrypt_segments).
    ///
    /// # Errors
    ///
    /// As for [`encrypt_segments`](Self::encrypt_segments).
    #[cfg(feature = "alloc")]
    pub fn decrypt_segments(
        &self,
        first_iv: C::Iv,
        segments: &mut [&mut [u8]],
    ) -> Result<(), Error> {
        crate::segments::in_place(self, Direction::Decrypt, first_iv, segments)
    }

    /// Encrypts the request scattered over `src` into the segments of `dst`.
    ///
    /// Source and destination may be split at different places; only their
    /// totals must agree. Units whose destination is contiguous are gathered
    /// straight into it; a unit that straddles a destination boundary goes
    /// through a bounce buffer.
    ///
    /// # Errors
    ///
    /// [`Error::SegmentTotalMismatch`], [`Error::EmptyRequest`] or
    /// [`Error::LengthNotMultiple`]; no destination byte is then written.
    ///
    /// ```
    /// # use mdu_core::{DataUnitCipher, DataUnits, Error, Iv};
    /// # struct Toy;
    /// # impl DataUnitCipher for Toy {
    /// #     type Iv = Iv;
    /// #     fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
    /// #         u.iter_mut().enumerate().for_each(|(i, b)| *b ^= iv.0[0] ^ i as u8); Ok(())
    /// #     }
    /// #     fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> { self.encrypt_unit(iv, u) }
    /// # }
    /// let units = DataUnits::new(Toy, 16)?;
    /// let plain = [1u8; 48];
    /// let mut whole = [0u8; 48];
    /// units.encrypt_to(Iv::ZERO, &plain, &mut whole)?;
    ///
    /// let (mut x, mut y) = ([0u8; 20], [0u8; 28]);
    /// units.encrypt_segments_to(Iv::ZERO, &[&plain[..5], &plain[5..]], &mut [&mut x, &mut y])?;
    /// assert_eq!([&x[..], &y[..]].concat(), whole);
    /// # Ok::<(), Error>(())
    /// ```
    #[cfg(feature = "alloc")]
    pub fn encrypt_segments_to(
        &self,
        first_iv: C::Iv,
        src: &[&[u8]],
        dst: &mut [&mut [u8]],
    ) -> Result<(), Error> {
        crate::segments::out_of_place(self, Direction::Encrypt, first_iv, src, dst)
    }

    /// Decrypts the request scattered over `src` into the segments of `dst`;
    /// see [`encrypt_segments_to`](Self::encrypt_segments_to).
    ///
    /// # Errors
    ///
    /// As for [`encrypt_segments_to`](Self::encrypt_segments_to).
    #[cfg(feature = "alloc")]
    pub fn decrypt_segments_to(
        &self,
        first_iv: C::Iv,
        src: &[&[u8]],
        dst: &mut [&mut [u8]],
    ) -> Result<(), Error> {
        crate::segments::out_of_place(self, Direction::Decrypt, first_iv, src, dst)
    }
}

#[cfg(feature = "rayon")]
impl<C: DataUnitCipher + Sync> DataUnits<C> {
    fn par(&self, dir: Direction, first_iv: C::Iv, buf: &mut [u8]) -> Result<(), Error> {
        use rayon::prelude::*;

        let units = check_request::<C>(self.unit, buf.len())?;
        // Enough chunks to balance the threads, each large enough (>= 256 KiB
        // or one unit) that the per-chunk setup stays invisible.
        let threads = rayon::current_num_threads().max(1);
        let by_balance = units.div_ceil(threads * 4);
        let by_size = (256usize << 10).div_ceil(self.unit.get());
        let per_chunk = by_balance.max(by_size).max(1);
        if per_chunk >= units {
            return run(&self.cipher, dir, first_iv, self.step, self.unit, buf);
        }
        let chunk_bytes = per_chunk * self.unit.get();
        buf.par_chunks_mut(chunk_bytes)
            .enumerate()
            .try_for_each(|(i, chunk)| {
                let iv = self.iv_of(first_iv, (i * per_chunk) as u64);
                run(&self.cipher, dir, iv, self.step, self.unit, chunk)
            })
    }

    /// Encrypts `buf` in place on the rayon thread pool, split on unit
    /// boundaries; the bytes are exactly those of [`encrypt`](Self::encrypt).
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt); `buf` is then unchanged.
    pub fn par_encrypt(&self, first_iv: C::Iv, buf: &mut [u8]) -> Result<(), Error> {
        self.par(Direction::Encrypt, first_iv, buf)
    }

    /// Decrypts `buf` in place on the rayon thread pool; see
    /// [`par_encrypt`](Self::par_encrypt).
    ///
    /// # Errors
    ///
    /// As for [`decrypt`](Self::decrypt); `buf` is then unchanged.
    pub fn par_decrypt(&self, first_iv: C::Iv, buf: &mut [u8]) -> Result<(), Error> {
        self.par(Direction::Decrypt, first_iv, buf)
    }
}
