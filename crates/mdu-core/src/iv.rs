//! The initialization vector of a data unit: a 128-bit little-endian counter.

use core::fmt;

/// A 16-byte initialization vector (for XTS: the tweak input) read as a
/// 128-bit **little-endian** counter.
///
/// Batched requests derive the IV of data unit `i` from the first one as
/// `first.advance(i * step)`. The addition is modulo 2^128: a carry out of
/// byte 7 goes on into byte 8, and `u128::MAX` wraps to zero.
///
/// # How this differs from dm-crypt's IV generators
///
/// * `plain64` ([`Iv::plain64`]) stores the sector as a 64-bit value and so
///   wraps at 2^64, where this counter carries into byte 8 instead. The two
///   agree for every batch whose last sector number is below 2^64, which is
///   every real device unless an `iv_offset` pushes it there.
/// * `plain` ([`Iv::plain`]) keeps only the low 32 bits of the sector and wraps
///   at 2^32 sectors (2 TiB of 512-byte sectors). A batch that crosses a
///   multiple of 2^32 is not affine in this counter and must be split there.
/// * dm-crypt without `iv_large_sectors` counts 512-byte sectors even when
///   the encryption sector is larger, so consecutive 4 KiB units have IVs 8
///   apart: use [`DataUnits::with_iv_step`](crate::DataUnits::with_iv_step)
///   with `sector_size / 512`.
///
/// ```
/// use mdu_core::Iv;
///
/// let iv = Iv::from_u128(u64::MAX as u128);
/// let next = iv.advance(1);
/// // The carry leaves byte 7 and lands in byte 8.
/// assert_eq!(next.to_bytes()[..9], [0, 0, 0, 0, 0, 0, 0, 0, 1]);
/// assert_eq!(Iv::from_u128(u128::MAX).advance(1), Iv::ZERO);
/// assert_eq!(Iv::plain64(0x1234).to_bytes()[..2], [0x34, 0x12]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Iv(pub [u8; 16]);

impl Iv {
    /// The all-zero IV (dm-crypt `null`, and the IV of sector 0 in `plain64`).
    pub const ZERO: Iv = Iv([0; 16]);

    /// The IV whose little-endian value is `value`.
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert_eq!(Iv::from_u128(1).to_bytes()[0], 1);
    /// ```
    #[inline]
    pub const fn from_u128(value: u128) -> Iv {
        Iv(value.to_le_bytes())
    }

    /// The little-endian value of the IV.
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert_eq!(Iv::from_u128(42).to_u128(), 42);
    /// ```
    #[inline]
    pub const fn to_u128(self) -> u128 {
        u128::from_le_bytes(self.0)
    }

    /// dm-crypt's `plain64` IV: the sector number as a little-endian 64-bit
    /// integer in bytes 0..8, zeros after.
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert_eq!(Iv::plain64(7).to_u128(), 7);
    /// ```
    #[inline]
    pub const fn plain64(sector: u64) -> Iv {
        Iv::from_u128(sector as u128)
    }

    /// dm-crypt's `plain` IV: the low 32 bits of the sector number,
    /// little-endian, in bytes 0..4, zeros after.
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert_eq!(Iv::plain((1 << 32) + 5).to_u128(), 5);
    /// ```
    #[inline]
    pub const fn plain(sector: u64) -> Iv {
        Iv::from_u128(sector as u32 as u128)
    }

    /// The IV `n` counts further on, modulo 2^128.
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert_eq!(Iv::from_u128(u128::MAX).advance(3).to_u128(), 2);
    /// ```
    #[inline]
    #[must_use]
    pub const fn advance(self, n: u128) -> Iv {
        Iv::from_u128(self.to_u128().wrapping_add(n))
    }

    /// The 16 bytes of the IV.
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert_eq!(Iv::ZERO.to_bytes(), [0; 16]);
    /// ```
    #[inline]
    pub const fn to_bytes(self) -> [u8; 16] {
        self.0
    }
}

impl From<[u8; 16]> for Iv {
    #[inline]
    fn from(bytes: [u8; 16]) -> Iv {
        Iv(bytes)
    }
}

impl From<Iv> for [u8; 16] {
    #[inline]
    fn from(iv: Iv) -> [u8; 16] {
        iv.0
    }
}

impl AsRef<[u8]> for Iv {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Iv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Iv(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}
