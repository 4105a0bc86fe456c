//! The one error type of every mdu cipher request.

use core::fmt;

/// What was wrong with a request: its length, its data-unit size, its IVs
/// or its segments.
///
/// Every variant names the offending value and the rule it broke. A function
/// that returns `Err` has not written a single byte of its output.
///
/// These are the errors every cipher shares. What can be wrong when a cipher
/// is set up (its key, a backend this CPU cannot run) belongs to the cipher's
/// own crate, in an error type of its own (for the AES modes
/// `mdu_xts::SetupError` and `mdu_cbc::SetupError`).
///
/// ```
/// use mdu_core::{DataUnitSize, Error};
///
/// let err = DataUnitSize::new(8).unwrap_err();
/// assert_eq!(
///     err,
///     Error::UnitSizeOutOfRange { size: 8, min: 16, max: 16 << 20 }
/// );
/// assert!(err.to_string().contains("at least 16"));
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Error {
    /// The request holds no bytes; a request must carry at least one data unit.
    EmptyRequest,
    /// The request length is not a whole number of data units.
    LengthNotMultiple {
        /// Length of the request in bytes.
        len: usize,
        /// The data-unit size in bytes.
        unit: usize,
    },
    /// The data-unit size is outside the range this cipher (or mdu) supports.
    UnitSizeOutOfRange {
        /// The requested data-unit size in bytes.
        size: usize,
        /// The smallest accepted size.
        min: usize,
        /// The largest accepted size.
        max: usize,
    },
    /// Out-of-place request whose source and destination differ in length.
    LengthMismatch {
        /// Source length in bytes.
        src: usize,
        /// Destination length in bytes.
        dst: usize,
    },
    /// The data-unit size is not a multiple of the granularity the cipher
    /// works in (16 bytes for a block mode without ciphertext stealing, such
    /// as CBC).
    UnitSizeMisaligned {
        /// The requested data-unit size in bytes.
        size: usize,
        /// The multiple the cipher needs.
        align: usize,
    },
    /// Explicit-IV request whose IV list does not have one IV per data unit.
    IvCountMismatch {
        /// The number of IVs given.
        ivs: usize,
        /// The number of data units in the buffer.
        units: usize,
    },
    /// Scatter-gather request whose source and destination segments add up to
    /// different totals.
    SegmentTotalMismatch {
        /// Sum of the source segment lengths.
        src: usize,
        /// Sum of the destination segment lengths.
        dst: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::EmptyRequest => {
                f.write_str("empty request: a request must hold at least one data unit")
            }
            Error::LengthNotMultiple { len, unit } => write!(
                f,
                "request length {len} is not a multiple of the data-unit size {unit} \
                 ({} whole units and {} bytes left over)",
                len / unit.max(1),
                len % unit.max(1)
            ),
            Error::UnitSizeOutOfRange { size, min, max } => write!(
                f,
                "data-unit size {size} is out of range: it must be at least {min} \
                 and at most {max} bytes"
            ),
            Error::UnitSizeMisaligned { size, align } => write!(
                f,
                "data-unit size {size} is not a multiple of {align} bytes: this cipher \
                 works on whole {align}-byte blocks"
            ),
            Error::IvCountMismatch { ivs, units } => write!(
                f,
                "{ivs} IVs for {units} data units: an explicit-IV request needs exactly \
                 one IV per unit"
            ),
            Error::LengthMismatch { src, dst } => write!(
                f,
                "source is {src} bytes but destination is {dst} bytes: they must be equal"
            ),
            Error::SegmentTotalMismatch { src, dst } => write!(
                f,
                "source segments add up to {src} bytes but destination segments to \
                 {dst} bytes: the totals must be equal"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
