//! CPU features as data, detected once per process; and the table of
//! backend lists that `Backend::available` hands out without `std`.

use core::sync::atomic::{AtomicU32, Ordering};

/// The CPU features the AES backends depend on, as the OS reports them
/// usable. Each crate's selection (`Backend::runs_on`) is a pure function
/// of this value, tested on the profiles of real CPUs.
///
/// ```
/// use mdu_aes::CpuFeatures;
///
/// let westmere = CpuFeatures { aes: true, pclmulqdq: true, ..CpuFeatures::default() };
/// assert!(!westmere.avx2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CpuFeatures {
    /// The AES instructions: AES-NI on x86_64, FEAT_AES on aarch64.
    pub aes: bool,
    /// x86_64: AVX2 (and the OS saves ymm state).
    pub avx2: bool,
    /// x86_64: AVX-512 Foundation (and the OS saves zmm state).
    pub avx512f: bool,
    /// x86_64: AVX-512 byte and word instructions.
    pub avx512bw: bool,
    /// x86_64: AVX-512 on 128- and 256-bit registers.
    pub avx512vl: bool,
    /// x86_64: AES on ymm and zmm registers.
    pub vaes: bool,
    /// x86_64: carry-less multiply on ymm and zmm registers.
    pub vpclmulqdq: bool,
    /// x86_64: the 128-bit carry-less multiply (with AES-NI since Westmere).
    pub pclmulqdq: bool,
    /// aarch64: the 64-bit carry-less multiply `PMULL` (FEAT_PMULL).
    pub pmull: bool,
    /// aarch64: Advanced SIMD (baseline on arm64 Linux, detected anyway).
    pub neon: bool,
}

/// Bit 31 of the cache: detection has run.
const DONE: u32 = 1 << 31;

impl CpuFeatures {
    /// No feature at all: what the portable backends need.
    ///
    /// ```
    /// assert_eq!(mdu_aes::CpuFeatures::NONE, mdu_aes::CpuFeatures::default());
    /// ```
    pub const NONE: CpuFeatures = CpuFeatures {
        aes: false,
        avx2: false,
        avx512f: false,
        avx512bw: false,
        avx512vl: false,
        vaes: false,
        vpclmulqdq: false,
        pclmulqdq: false,
        pmull: false,
        neon: false,
    };

    /// Whether every feature of `needs` is present here.
    ///
    /// ```
    /// use mdu_aes::CpuFeatures;
    /// let aes = CpuFeatures { aes: true, ..CpuFeatures::NONE };
    /// let aes_clmul = CpuFeatures { pclmulqdq: true, ..aes };
    /// assert!(aes_clmul.contains(aes));
    /// assert!(!aes.contains(aes_clmul));
    /// ```
    pub const fn contains(self, needs: CpuFeatures) -> bool {
        let (have, need) = (self.pack(), needs.pack());
        have & need == need
    }

    const fn pack(self) -> u32 {
        let bits = [
            self.aes,
            self.avx2,
            self.avx512f,
            self.avx512bw,
            self.avx512vl,
            self.vaes,
            self.vpclmulqdq,
            self.pclmulqdq,
            self.pmull,
            self.neon,
        ];
        let mut acc = DONE;
        let mut i = 0;
        while i < bits.len() {
            acc |= (bits[i] as u32) << i;
            i += 1;
        }
        acc
    }

    fn unpack(bits: u32) -> CpuFeatures {
        let on = |i: u32| bits & (1 << i) != 0;
        CpuFeatures {
            aes: on(0),
            avx2: on(1),
            avx512f: on(2),
            avx512bw: on(3),
            avx512vl: on(4),
            vaes: on(5),
            vpclmulqdq: on(6),
            pclmulqdq: on(7),
            pmull: on(8),
            neon: on(9),
        }
    }

    /// The features of the running CPU, detected on the first call and
    /// cached in an atomic (all false off x86_64 and aarch64, and under
    /// Miri, where the SIMD backends are not compiled).
    ///
    /// ```
    /// let f = mdu_aes::CpuFeatures::get();
    /// if f.vaes {
    ///     assert!(f.avx2);
    /// }
    /// ```
    pub fn get() -> CpuFeatures {
        static CACHE: AtomicU32 = AtomicU32::new(0);
        let bits = CACHE.load(Ordering::Relaxed);
        if bits & DONE != 0 {
            return CpuFeatures::unpack(bits);
        }
        let f = CpuFeatures::detect();
        CACHE.store(f.pack(), Ordering::Relaxed);
        f
    }

    /// Asks the CPU (and the OS), without the cache.
    ///
    /// ```
    /// assert_eq!(mdu_aes::CpuFeatures::detect(), mdu_aes::CpuFeatures::get());
    /// ```
    pub fn detect() -> CpuFeatures {
        #[cfg(all(x86_simd, feature = "std"))]
        {
            use std::arch::is_x86_feature_detected as has;
            CpuFeatures {
                aes: has!("aes"),
                avx2: has!("avx2"),
                avx512f: has!("avx512f"),
                avx512bw: has!("avx512bw"),
                avx512vl: has!("avx512vl"),
                vaes: has!("vaes"),
                vpclmulqdq: has!("vpclmulqdq"),
                pclmulqdq: has!("pclmulqdq"),
                ..CpuFeatures::default()
            }
        }
        #[cfg(all(x86_simd, not(feature = "std")))]
        {
            cpuid::features()
        }
        #[cfg(all(arm_simd, feature = "std"))]
        {
            use std::arch::is_aarch64_feature_detected as has;
            CpuFeatures {
                aes: has!("aes"),
                pmull: has!("pmull"),
                neon: has!("neon"),
                ..CpuFeatures::default()
            }
        }
        #[cfg(all(arm_simd, not(feature = "std")))]
        {
            // Without the standard library there is no portable way to ask
            // the OS: use what the target promises at compile time.
            CpuFeatures {
                aes: cfg!(target_feature = "aes"),
                pmull: cfg!(target_feature = "aes"),
                neon: cfg!(target_feature = "neon"),
                ..CpuFeatures::default()
            }
        }
        #[cfg(not(simd))]
        {
            CpuFeatures::default()
        }
    }
}

/// x86_64 detection without the standard library: CPUID for what the CPU
/// has, XGETBV for which register states the OS saves (ymm for AVX2 and
/// VAES on ymm, zmm and the mask registers for AVX-512).
#[cfg(x86_simd)]
#[cfg_attr(feature = "std", allow(dead_code))]
pub(crate) mod cpuid {
    use super::CpuFeatures;
    use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};

    /// The features of the running CPU, as `is_x86_feature_detected!`
    /// reports them.
    pub(crate) fn features() -> CpuFeatures {
        let leaf1 = __cpuid(1);
        let max = __cpuid(0).eax;
        let leaf7 = if max >= 7 {
            __cpuid_count(7, 0)
        } else {
            __cpuid(0)
        };
        let bit = |reg: u32, i: u32| reg & (1 << i) != 0;
        let osxsave = bit(leaf1.ecx, 27);
        let xcr0 = if osxsave {
            // SAFETY: OSXSAVE says the OS enabled XGETBV; XCR0 (index 0)
            // is always readable then.
            unsafe { xgetbv0() }
        } else {
            0
        };
        let ymm = xcr0 & 0b110 == 0b110;
        let zmm = ymm && xcr0 & 0b1110_0000 == 0b1110_0000;
        let avx = ymm && bit(leaf1.ecx, 28);
        let max7 = max >= 7;
        CpuFeatures {
            aes: bit(leaf1.ecx, 25),
            pclmulqdq: bit(leaf1.ecx, 1),
            avx2: avx && max7 && bit(leaf7.ebx, 5),
            avx512f: avx && zmm && max7 && bit(leaf7.ebx, 16),
            avx512bw: avx && zmm && max7 && bit(leaf7.ebx, 30),
            avx512vl: avx && zmm && max7 && bit(leaf7.ebx, 31),
            vaes: avx && max7 && bit(leaf7.ecx, 9),
            vpclmulqdq: avx && max7 && bit(leaf7.ecx, 10),
            ..CpuFeatures::default()
        }
    }

    /// XCR0.
    ///
    /// # Safety
    ///
    /// CPUID reports OSXSAVE.
    #[target_feature(enable = "xsave")]
    unsafe fn xgetbv0() -> u64 {
        // SAFETY: XSAVE is enabled for this function, and the caller checked
        // OSXSAVE, which makes XGETBV legal.
        unsafe { _xgetbv(0) }
    }
}

/// Every list of backends a CPU can have: entry `mask` holds the first
/// four of `all` whose bit is set in `mask`, in order, then `all[4]` (the
/// portable backend, always available), and its length.
///
/// A crate keeps the table in a `static` and hands out
/// `&TABLE[mask].0[..TABLE[mask].1]` as its `&'static [Backend]`, with no
/// allocation and no `std`.
///
/// ```
/// let t = mdu_aes::subsets(['a', 'b', 'c', 'd', 'g']);
/// assert_eq!(&t[0b0101].0[..t[0b0101].1], ['a', 'c', 'g']);
/// assert_eq!(&t[0].0[..t[0].1], ['g']);
/// ```
pub const fn subsets<T: Copy>(all: [T; 5]) -> [([T; 5], usize); 16] {
    let mut out = [(all, 0); 16];
    let mut mask = 0;
    while mask < 16 {
        let mut n = 0;
        let mut i = 0;
        while i < 4 {
            if mask & (1 << i) != 0 {
                out[mask].0[n] = all[i];
                n += 1;
            }
            i += 1;
        }
        out[mask].0[n] = all[4];
        out[mask].1 = n + 1;
        mask += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(all(x86_simd, feature = "std"))]
    fn cpuid_agrees_with_the_standard_library() {
        assert_eq!(cpuid::features(), CpuFeatures::detect());
    }

    #[test]
    fn the_cache_round_trips_every_field() {
        let f = CpuFeatures {
            aes: true,
            avx512bw: true,
            pmull: true,
            ..CpuFeatures::default()
        };
        assert_eq!(CpuFeatures::unpack(f.pack()), f);
        assert_eq!(
            CpuFeatures::unpack(CpuFeatures::default().pack()),
            CpuFeatures::default()
        );
    }
}
