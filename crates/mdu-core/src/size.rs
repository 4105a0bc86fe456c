//! The validated size of one data unit.

use crate::Error;

/// The size of one data unit (a sector, a file-contents block, ...), in bytes.
///
/// Valid sizes run from [`DataUnitSize::MIN`] (16 bytes, one cipher block) to
/// [`DataUnitSize::MAX`] (16 MiB). They need not be powers of two nor
/// multiples of 16: XTS handles a ragged tail with ciphertext stealing; a
/// cipher that works on whole blocks (CBC) says so once, with
/// [`DataUnitCipher::UNIT_ALIGN`](crate::DataUnitCipher::UNIT_ALIGN).
///
/// ```
/// use mdu_core::DataUnitSize;
///
/// let sector = DataUnitSize::new(4096)?;
/// assert_eq!(sector.get(), 4096);
/// assert_eq!(sector.units_in(3 * 4096)?, 3);
/// assert!(DataUnitSize::new(15).is_err());
/// assert!(DataUnitSize::new(4096 + 17).is_ok());
/// # Ok::<(), mdu_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DataUnitSize(usize);

impl DataUnitSize {
    /// The smallest data unit: one 16-byte cipher block.
    pub const MIN: usize = 16;
    /// The largest data unit: 16 MiB.
    pub const MAX: usize = 16 << 20;

    /// A validated data-unit size of `bytes` bytes.
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeOutOfRange`] unless `MIN <= bytes <= MAX`.
    ///
    /// ```
    /// # use mdu_core::DataUnitSize;
    /// assert!(DataUnitSize::new(512).is_ok());
    /// assert!(DataUnitSize::new((16 << 20) + 1).is_err());
    /// ```
    pub const fn new(bytes: usize) -> Result<DataUnitSize, Error> {
        if bytes < Self::MIN || bytes > Self::MAX {
            return Err(Error::UnitSizeOutOfRange {
                size: bytes,
                min: Self::MIN,
                max: Self::MAX,
            });
        }
        Ok(DataUnitSize(bytes))
    }

    /// The size in bytes.
    ///
    /// ```
    /// # use mdu_core::DataUnitSize;
    /// assert_eq!(DataUnitSize::new(512)?.get(), 512);
    /// # Ok::<(), mdu_core::Error>(())
    /// ```
    #[inline]
    pub const fn get(self) -> usize {
        self.0
    }

    /// The number of whole units in a request of `len` bytes.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyRequest`] for `len == 0`, [`Error::LengthNotMultiple`] if
    /// `len` is not a whole number of units.
    ///
    /// ```
    /// # use mdu_core::{DataUnitSize, Error};
    /// let unit = DataUnitSize::new(512)?;
    /// assert_eq!(unit.units_in(1024)?, 2);
    /// assert_eq!(unit.units_in(0), Err(Error::EmptyRequest));
    /// # Ok::<(), mdu_core::Error>(())
    /// ```
    #[inline]
    pub const fn units_in(self, len: usize) -> Result<usize, Error> {
        if len == 0 {
            return Err(Error::EmptyRequest);
        }
        if !len.is_multiple_of(self.0) {
            return Err(Error::LengthNotMultiple { len, unit: self.0 });
        }
        Ok(len / self.0)
    }
}

impl TryFrom<usize> for DataUnitSize {
    type Error = Error;

    fn try_from(bytes: usize) -> Result<DataUnitSize, Error> {
        DataUnitSize::new(bytes)
    }
}

impl From<DataUnitSize> for usize {
    fn from(size: DataUnitSize) -> usize {
        size.0
    }
}
