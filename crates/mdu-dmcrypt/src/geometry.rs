//! The geometry of a dm-crypt mapping: sector size, `iv_offset`,
//! `iv_large_sectors`, and the sector numbers the IV generators see.

use crate::Error;

/// The sector sizes dm-crypt accepts.
///
/// ```
/// assert_eq!(mdu_dmcrypt::SECTOR_SIZES, [512, 1024, 2048, 4096]);
/// ```
pub const SECTOR_SIZES: [u32; 4] = [512, 1024, 2048, 4096];

/// Sector size, `iv_offset` and `iv_large_sectors` of a dm-crypt mapping.
///
/// ```
/// use mdu_dmcrypt::Geometry;
/// let g = Geometry::new(4096, 16, false)?;
/// assert_eq!((g.iv_sector(0), g.iv_sector(1), g.iv_step()), (16, 24, 8));
/// let g = Geometry::new(4096, 16, true)?;
/// assert_eq!((g.iv_sector(0), g.iv_sector(1), g.iv_step()), (2, 3, 1));
/// # Ok::<(), mdu_dmcrypt::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    sector_size: u32,
    iv_offset: u64,
    iv_large_sectors: bool,
}

impl Geometry {
    /// A mapping with `sector_size`-byte sectors whose first sector has
    /// `cc_sector = iv_offset` (512-byte units).
    ///
    /// # Errors
    ///
    /// [`Error::SectorSize`] unless `sector_size` is one of
    /// [`SECTOR_SIZES`]; [`Error::IvOffsetAlignment`] unless
    /// `iv_offset` is a multiple of `sector_size / 512`.
    ///
    /// ```
    /// use mdu_dmcrypt::{Error, Geometry};
    /// assert!(Geometry::new(2048, 4, true).is_ok());
    /// assert_eq!(Geometry::new(8192, 0, false).unwrap_err(), Error::SectorSize { size: 8192 });
    /// ```
    pub fn new(
        sector_size: u32,
        iv_offset: u64,
        iv_large_sectors: bool,
    ) -> Result<Geometry, Error> {
        if !SECTOR_SIZES.contains(&sector_size) {
            return Err(Error::SectorSize { size: sector_size });
        }
        if !iv_offset.is_multiple_of(u64::from(sector_size / 512)) {
            return Err(Error::IvOffsetAlignment {
                iv_offset,
                sector_size,
            });
        }
        Ok(Geometry {
            sector_size,
            iv_offset,
            iv_large_sectors,
        })
    }

    /// The sector size in bytes.
    ///
    /// ```
    /// use mdu_dmcrypt::Geometry;
    /// assert_eq!(Geometry::new(1024, 0, false)?.sector_size(), 1024);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn sector_size(&self) -> u32 {
        self.sector_size
    }

    /// `iv_offset` in 512-byte sectors.
    ///
    /// ```
    /// use mdu_dmcrypt::Geometry;
    /// assert_eq!(Geometry::new(512, 7, false)?.iv_offset(), 7);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn iv_offset(&self) -> u64 {
        self.iv_offset
    }

    /// Whether `iv_large_sectors` is set.
    ///
    /// ```
    /// use mdu_dmcrypt::Geometry;
    /// assert!(Geometry::new(512, 0, true)?.iv_large_sectors());
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn iv_large_sectors(&self) -> bool {
        self.iv_large_sectors
    }

    /// log2(sector_size / 512).
    pub(crate) const fn shift(&self) -> u32 {
        (self.sector_size / 512).trailing_zeros()
    }

    /// `cc_sector` of sector `index` (counted in sectors of `sector_size`
    /// from the start of the mapping): `iv_offset + index * sector_size/512`,
    /// modulo 2^64 like the kernel's `sector_t`.
    ///
    /// ```
    /// use mdu_dmcrypt::Geometry;
    /// assert_eq!(Geometry::new(2048, 4, true)?.cc_sector(2), 12);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn cc_sector(&self, index: u64) -> u64 {
        self.iv_offset
            .wrapping_add(index.wrapping_shl(self.shift()))
    }

    /// The sector number fed to the IV generator for sector `index`:
    /// [`cc_sector`](Self::cc_sector), shifted down by log2(sector_size/512)
    /// only with `iv_large_sectors`.
    ///
    /// ```
    /// use mdu_dmcrypt::Geometry;
    /// assert_eq!(Geometry::new(4096, 0, false)?.iv_sector(5), 40);
    /// assert_eq!(Geometry::new(4096, 0, true)?.iv_sector(5), 5);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn iv_sector(&self, index: u64) -> u64 {
        let cc = self.cc_sector(index);
        if self.iv_large_sectors {
            cc >> self.shift()
        } else {
            cc
        }
    }

    /// How far `iv_sector` advances from one sector to the next:
    /// sector_size/512 without `iv_large_sectors`, 1 with it.
    ///
    /// ```
    /// use mdu_dmcrypt::Geometry;
    /// assert_eq!(Geometry::new(4096, 0, false)?.iv_step(), 8);
    /// assert_eq!(Geometry::new(4096, 0, true)?.iv_step(), 1);
    /// # Ok::<(), mdu_dmcrypt::Error>(())
    /// ```
    pub const fn iv_step(&self) -> u64 {
        if self.iv_large_sectors {
            1
        } else {
            1 << self.shift()
        }
    }

    /// Number of sectors from `index` on (at most `max`) before `cc_sector`
    /// wraps past 2^64.
    pub(crate) fn sectors_before_wrap(&self, index: u64, max: u64) -> u64 {
        let cc = u128::from(self.cc_sector(index));
        let room = ((1u128 << 64) - cc - 1) >> self.shift();
        (room + 1).min(u128::from(max)) as u64
    }
}
