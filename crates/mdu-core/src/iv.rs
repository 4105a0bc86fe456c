//! The initialization vector (tweak) of a data unit: `N` bytes read as a
//! little-endian counter, `N` a property of the cipher.

use core::fmt;

/// An `N`-byte initialization vector (for XTS, HCTR2 and Adiantum: the
/// tweak) read as a **little-endian** counter of `8 * N` bits.
///
/// The width belongs to the cipher, as the kernel's `ivsize` does: 16 bytes
/// for XTS and CBC (`Iv`, the default), 32 for HCTR2 and Adiantum
/// (`Iv<32>`). A [`DataUnitCipher`](crate::DataUnitCipher) names its width
/// in its associated type `Iv`, and every request, batch and IV list of that
/// cipher carries IVs of that width.
///
/// Batched requests derive the IV of data unit `i` from the first one as
/// `first.advance(i * step)`. The addition is modulo `2^(8 * N)`: a carry out
/// of byte 7 goes on into byte 8 and on through the last byte, and the
/// largest value wraps to zero.
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
///   So must any format counter that wraps at a width smaller than the IV's
///   (fscrypt's `IV_INO_LBLK_32`): the caller splits the run, the counter
///   does not wrap early.
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
///
/// // A 32-byte tweak carries on past byte 15.
/// let wide = Iv::<32>::from_low_u128(u128::MAX).advance(1);
/// assert_eq!(wide.to_bytes()[15..18], [0, 1, 0]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Iv<const N: usize = 16>(pub [u8; N]);

impl<const N: usize> Iv<N> {
    /// The all-zero IV (dm-crypt `null`, and the IV of sector 0 in `plain64`).
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert_eq!(Iv::<32>::ZERO.to_bytes(), [0; 32]);
    /// ```
    pub const ZERO: Self = Iv([0; N]);

    /// The width in bytes, `N`.
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert_eq!(Iv::<32>::LEN, 32);
    /// ```
    pub const LEN: usize = N;

    /// The IV whose little-endian value is `value`: its low
    /// `min(N, 16)` bytes, zeros above (for `N < 16`, the high bytes of
    /// `value` are dropped).
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// let iv = Iv::<32>::from_low_u128(0x0102);
    /// assert_eq!(iv.to_bytes()[..3], [2, 1, 0]);
    /// ```
    #[inline]
    pub const fn from_low_u128(value: u128) -> Self {
        let value = value.to_le_bytes();
        let mut bytes = [0u8; N];
        let mut i = 0;
        while i < N && i < 16 {
            bytes[i] = value[i];
            i += 1;
        }
        Iv(bytes)
    }

    /// The IV `n` counts further on, modulo `2^(8 * N)`.
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert_eq!(Iv::from_u128(u128::MAX).advance(3).to_u128(), 2);
    /// let max = Iv([0xff; 32]);
    /// assert_eq!(max.advance(1), Iv::<32>::ZERO);
    /// ```
    #[inline]
    #[must_use]
    pub const fn advance(self, n: u128) -> Self {
        let mut bytes = self.0;
        // The low 16 bytes (or all of them) as one wide addition, then the
        // carry on through the bytes above.
        let low = if N < 16 { N } else { 16 };
        let mut word = [0u8; 16];
        let mut i = 0;
        while i < low {
            word[i] = bytes[i];
            i += 1;
        }
        let (sum, mut carry) = u128::from_le_bytes(word).overflowing_add(n);
        let sum = sum.to_le_bytes();
        let mut i = 0;
        while i < low {
            bytes[i] = sum[i];
            i += 1;
        }
        // For N < 16 the bits of `sum` above byte N are the part of the
        // counter that wraps away; for N > 16 the carry goes on.
        let mut i = low;
        while carry && i < N {
            let (b, c) = bytes[i].overflowing_add(1);
            bytes[i] = b;
            carry = c;
            i += 1;
        }
        Iv(bytes)
    }

    /// The `N` bytes of the IV.
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert_eq!(Iv::ZERO.to_bytes(), [0; 16]);
    /// ```
    #[inline]
    pub const fn to_bytes(self) -> [u8; N] {
        self.0
    }

    /// The IV made of `bytes`, or `None` unless it is exactly `N` bytes long.
    ///
    /// ```
    /// # use mdu_core::Iv;
    /// assert!(Iv::<32>::from_slice(&[7; 32]).is_some());
    /// assert!(Iv::<32>::from_slice(&[7; 16]).is_none());
    /// ```
    #[inline]
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Iv)
    }
}

impl Iv<16> {
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
}

impl<const N: usize> Default for Iv<N> {
    #[inline]
    fn default() -> Self {
        Self::ZERO
    }
}

impl<const N: usize> From<[u8; N]> for Iv<N> {
    #[inline]
    fn from(bytes: [u8; N]) -> Self {
        Iv(bytes)
    }
}

impl<const N: usize> From<Iv<N>> for [u8; N] {
    #[inline]
    fn from(iv: Iv<N>) -> [u8; N] {
        iv.0
    }
}

impl<const N: usize> AsRef<[u8]> for Iv<N> {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl<const N: usize> AsMut<[u8]> for Iv<N> {
    #[inline]
    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl<const N: usize> fmt::Debug for Iv<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Iv(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

mod sealed {
    pub trait Sealed {}
    impl<const N: usize> Sealed for super::Iv<N> {}
}

/// What a cipher's IV type is: an [`Iv<N>`](Iv) of some width `N`.
///
/// [`DataUnitCipher::Iv`](crate::DataUnitCipher::Iv) is bound by this trait,
/// so that code generic over ciphers (the auto-splitters, [`DataUnits`],
/// the conformance harness) can count, compare and build IVs of any width.
/// It is sealed: `Iv<N>` is its only implementation.
///
/// [`DataUnits`]: crate::DataUnits
///
/// ```
/// use mdu_core::{Iv, Tweak};
///
/// fn last_of_batch<T: Tweak>(first: T, units: u128) -> T {
///     first.advance(units - 1)
/// }
/// assert_eq!(last_of_batch(Iv::plain64(10), 4), Iv::plain64(13));
/// assert_eq!(<Iv<32> as Tweak>::LEN, 32);
/// ```
pub trait Tweak:
    Copy
    + Eq
    + core::hash::Hash
    + Ord
    + fmt::Debug
    + Default
    + Send
    + Sync
    + AsRef<[u8]>
    + AsMut<[u8]>
    + 'static
    + sealed::Sealed
{
    /// The width in bytes.
    const LEN: usize;
    /// The all-zero IV.
    const ZERO: Self;
    /// The IV `n` counts further on (see [`Iv::advance`]).
    #[must_use]
    fn advance(self, n: u128) -> Self;
    /// The IV whose little-endian value is `value` (see
    /// [`Iv::from_low_u128`]).
    fn from_low_u128(value: u128) -> Self;
    /// The IV made of `bytes`, or `None` unless it is exactly
    /// [`LEN`](Self::LEN) bytes long.
    fn from_slice(bytes: &[u8]) -> Option<Self>;
}

impl<const N: usize> Tweak for Iv<N> {
    const LEN: usize = N;
    const ZERO: Self = Iv([0; N]);

    #[inline]
    fn advance(self, n: u128) -> Self {
        Iv::advance(self, n)
    }

    #[inline]
    fn from_low_u128(value: u128) -> Self {
        Iv::from_low_u128(value)
    }

    #[inline]
    fn from_slice(bytes: &[u8]) -> Option<Self> {
        Iv::from_slice(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counter over N bytes, by the schoolbook byte loop.
    fn add_bytewise<const N: usize>(iv: Iv<N>, n: u128) -> Iv<N> {
        let mut bytes = iv.0;
        let addend = n.to_le_bytes();
        let mut carry = 0u16;
        for (i, b) in bytes.iter_mut().enumerate() {
            let a = addend.get(i).copied().unwrap_or(0);
            let s = u16::from(*b) + u16::from(a) + carry;
            *b = s as u8;
            carry = s >> 8;
        }
        Iv(bytes)
    }

    #[test]
    fn advance_matches_the_byte_loop_at_every_width() {
        let samples = [0u128, 1, 0xff, u64::MAX as u128, u128::MAX, 1 << 100];
        for &start in &samples {
            for &n in &samples {
                let s = start.to_le_bytes();
                let mut b32 = [0xffu8; 32];
                b32[..16].copy_from_slice(&s);
                let mut b8 = [0u8; 8];
                b8.copy_from_slice(&s[..8]);
                assert_eq!(Iv(b32).advance(n), add_bytewise(Iv(b32), n));
                assert_eq!(Iv(s).advance(n), add_bytewise(Iv(s), n));
                assert_eq!(Iv(b8).advance(n), add_bytewise(Iv(b8), n));
                assert_eq!(Iv(s).advance(n).to_u128(), start.wrapping_add(n));
            }
        }
    }
}
