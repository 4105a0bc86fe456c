//! Where the IVs of a batch come from.

use mdu_core::Iv;

/// The IVs of the units of one request, as little-endian integers (the
/// memory layout of an [`Iv`]).
///
/// A kernel asks for them a batch at a time ([`Ivs::batch`]); the source is
/// matched once per batch, never per block.
///
/// ```
/// use mdu_aes::__private::Ivs;
/// use mdu_core::Iv;
///
/// let list = [Iv::from_u128(9), Iv::from_u128(4)];
/// assert_eq!(Ivs::List(&list).batch::<3>(0), [9, 4, 0]);
/// assert_eq!(Ivs::Counter { first: u128::MAX, step: 1 }.batch::<2>(0), [u128::MAX, 0]);
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Ivs<'a> {
    /// Unit `i` has IV `first + i * step` (mod 2^128).
    Counter {
        /// The IV of unit 0.
        first: u128,
        /// How far the IV advances per unit.
        step: u64,
    },
    /// Unit `i` has IV `list[i]`.
    List(&'a [Iv]),
}

impl Ivs<'_> {
    /// The IVs of units `start .. start + N`; slots past the end of a
    /// [`Ivs::List`] are zero (a kernel's last batch may be partial).
    ///
    /// ```
    /// use mdu_aes::__private::Ivs;
    /// assert_eq!(Ivs::Counter { first: 1, step: 2 }.batch::<2>(3), [7, 9]);
    /// ```
    #[inline(always)]
    pub fn batch<const N: usize>(&self, start: usize) -> [u128; N] {
        let mut out = [0u128; N];
        match *self {
            Ivs::Counter { first, step } => {
                let step = u128::from(step);
                let mut iv = first.wrapping_add((start as u128).wrapping_mul(step));
                for slot in out.iter_mut() {
                    *slot = iv;
                    iv = iv.wrapping_add(step);
                }
            }
            Ivs::List(list) => {
                let rest = list.get(start..).unwrap_or_default();
                for (slot, iv) in out.iter_mut().zip(rest) {
                    *slot = iv.to_u128();
                }
            }
        }
        out
    }

    /// The source as plain arguments, `(first, step, list)`: what a
    /// kernel's `#[target_feature]` entry point takes, so that the first IV
    /// reaches it in registers (through memory, a 16-byte load of a value
    /// just stored as two halves stalls the one-unit path) and the kernel
    /// rebuilds the source with [`Ivs::from_parts`].
    ///
    /// ```
    /// use mdu_aes::__private::Ivs;
    /// let (first, step, list) = Ivs::Counter { first: 5, step: 2 }.parts();
    /// assert_eq!((first, step, list.is_none()), (5, 2, true));
    /// ```
    #[inline(always)]
    pub fn parts(&self) -> (u128, u64, Option<&[Iv]>) {
        match *self {
            Ivs::Counter { first, step } => (first, step, None),
            Ivs::List(list) => (0, 0, Some(list)),
        }
    }

    /// The inverse of [`parts`](Self::parts).
    ///
    /// ```
    /// use mdu_aes::__private::Ivs;
    /// assert_eq!(Ivs::from_parts(5, 2, None).get(1), 7);
    /// ```
    #[inline(always)]
    pub fn from_parts(first: u128, step: u64, list: Option<&[Iv]>) -> Ivs<'_> {
        match list {
            Some(list) => Ivs::List(list),
            None => Ivs::Counter { first, step },
        }
    }

    /// The IV of unit `i` (zero past the end of a list).
    ///
    /// ```
    /// use mdu_aes::__private::Ivs;
    /// assert_eq!(Ivs::Counter { first: 1, step: 2 }.get(3), 7);
    /// ```
    #[inline(always)]
    pub fn get(&self, i: usize) -> u128 {
        self.batch::<1>(i)[0]
    }
}
