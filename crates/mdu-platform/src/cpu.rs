//! The one CPU vocabulary of the workspace: [`Features`] as data, detected
//! once per process, and [`Witness`]es, the zero-sized proofs that the
//! SIMD kernels take.
//!
//! * [`Features`] is plain data: one `bool` per instruction-set extension
//!   a kernel of mdu uses, as the OS reports it usable. Each crate's
//!   backend selection is a pure function of a `Features` value (tested on
//!   the profiles of real CPUs) and each backend declares once what it
//!   needs, as the `#[target_feature]` list of its kernels
//!   ([`needs!`](crate::needs) makes both the [`Needs`] type and the
//!   attribute from that one literal); test support reads those
//!   declarations. [`Features::get`] asks the CPU on the first call and
//!   caches the answer in an atomic for the life of the process.
//! * A [`Witness<N>`](Witness) proves that the running CPU has every
//!   feature of `N::NEEDS` ([`Needs`]). Only [`Witness::detect`] builds
//!   one, from the detected features, so a kernel entry point that takes
//!   its witness by value is safe to call and never asks the CPU again:
//!   the crate detects once (when a state or an engine is made) and keeps
//!   the witness next to its backend.
//!
//! Under Miri, and on targets other than x86_64 and aarch64, nothing is
//! detected ([`Features::NONE`]): only the portable backends run there.
//!
//! ```
//! use mdu_platform::cpu::{Features, Needs, Witness};
//!
//! mdu_platform::needs! {
//!     /// What a (hypothetical) AVX2 kernel is compiled for.
//!     enum Avx2: x86_64 "avx2";
//! }
//!
//! // Selection: a pure function of the features.
//! let zen3 = Features { avx2: true, sha: true, ..Features::NONE };
//! assert!(zen3.contains(Avx2::NEEDS));
//!
//! // Proof: only detection makes one.
//! match Witness::<Avx2>::detect() {
//!     Some(w) => assert!(Features::get().contains(w.features())),
//!     None => assert!(!Features::get().avx2),
//! }
//! ```

use core::fmt;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU32, Ordering};

/// Defines [`Features`] from one list of fields, each with the name the
/// standard library's `is_*_feature_detected!` macros give it; the bit of a
/// field in the packed form is its position in the list.
macro_rules! features {
    ($( $(#[$doc:meta])* $field:ident = $name:literal, )*) => {
        /// Instruction-set extensions the kernels of mdu use, as the CPU and
        /// the OS report them usable (AVX2 counts only where the OS saves
        /// the ymm registers, AVX-512 only where it saves zmm and the mask
        /// registers).
        ///
        /// Plain data: a selection function takes a `Features` and a
        /// backend declares what it needs as one, so both can be written
        /// and tested on any CPU. Holding a `Features` with a field set
        /// proves nothing; a kernel takes a [`Witness`] instead.
        ///
        /// ```
        /// use mdu_platform::cpu::Features;
        ///
        /// let westmere = Features { aes: true, pclmulqdq: true, ..Features::default() };
        /// assert!(!westmere.avx2);
        /// assert_eq!(westmere.to_string(), "aes, pclmulqdq");
        /// ```
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct Features {
            $( $(#[$doc])* pub $field: bool, )*
        }

        impl Features {
            /// No feature at all: what the portable backends need.
            ///
            /// ```
            /// use mdu_platform::cpu::Features;
            /// assert_eq!(Features::NONE, Features::default());
            /// assert_eq!(Features::NONE.to_string(), "none");
            /// ```
            pub const NONE: Features = Features { $( $field: false, )* };

            /// The names of the fields, in bit order, as the standard
            /// library spells them.
            const NAMES: &'static [&'static str] = &[$( $name, )*];

            /// The packed form: bit `i` is field `i` of the list.
            const fn pack(self) -> u32 {
                let bits = [$( self.$field, )*];
                let mut acc = 0;
                let mut i = 0;
                while i < bits.len() {
                    acc |= (bits[i] as u32) << i;
                    i += 1;
                }
                acc
            }

            // The last field's step past the end is never read.
            #[allow(unused_assignments)]
            const fn unpack(bits: u32) -> Features {
                let mut next = 0;
                // Struct fields are evaluated in the order written: the
                // order of the list.
                Features {
                    $( $field: {
                        let i = next;
                        next = i + 1;
                        bits & (1 << i) != 0
                    }, )*
                }
            }
        }
    };
}

features! {
    /// The AES round instructions: AES-NI on x86_64, FEAT_AES on aarch64.
    aes = "aes",
    /// x86_64: the 128-bit carry-less multiply (with AES-NI since
    /// Westmere).
    pclmulqdq = "pclmulqdq",
    /// x86_64: SSE2 (part of the x86_64 baseline; detected anyway).
    sse2 = "sse2",
    /// x86_64: SSSE3 (`pshufb`).
    ssse3 = "ssse3",
    /// x86_64: SSE4.1 (`pblendw`, `pextrd`).
    sse4_1 = "sse4.1",
    /// x86_64: the SHA extensions (`sha256rnds2`, `sha256msg1/2`).
    sha = "sha",
    /// x86_64: AVX2 (and the OS saves ymm state).
    avx2 = "avx2",
    /// x86_64: BMI2 (`bzhi`, `pdep`, `shlx`).
    bmi2 = "bmi2",
    /// x86_64: AVX-512 Foundation (and the OS saves zmm and mask state).
    avx512f = "avx512f",
    /// x86_64: AVX-512 byte and word instructions.
    avx512bw = "avx512bw",
    /// x86_64: AVX-512 on 128- and 256-bit registers.
    avx512vl = "avx512vl",
    /// x86_64: AVX-512 vector byte manipulation (`vpermb`, `vpermi2b`,
    /// `vpmultishiftqb`).
    avx512vbmi = "avx512vbmi",
    /// x86_64: AES on ymm and zmm registers.
    vaes = "vaes",
    /// x86_64: carry-less multiply on ymm and zmm registers.
    vpclmulqdq = "vpclmulqdq",
    /// x86_64: the Galois-field instructions (`gf2p8affineqb`), on xmm,
    /// ymm and (with AVX-512) zmm registers.
    gfni = "gfni",
    /// aarch64: the 64-bit carry-less multiply `PMULL` (FEAT_PMULL).
    pmull = "pmull",
    /// aarch64: Advanced SIMD (baseline on arm64 Linux; detected anyway).
    neon = "neon",
    /// aarch64: the SHA-256 instructions (FEAT_SHA256: `sha256h`,
    /// `sha256su0/1`).
    sha2 = "sha2",
}

/// Bit 31 of the cache: detection has run.
const DONE: u32 = 1 << 31;
/// Bits 29 and 30 of the cache: the [`Vendor`].
const VENDOR_SHIFT: u32 = 29;
const _: () = assert!(Features::NAMES.len() < 29, "the packed form has 29 bits");

/// The detected features, packed, and the vendor, with [`DONE`] set once
/// detection ran.
static CACHE: AtomicU32 = AtomicU32::new(0);

/// The packed features and vendor of the running CPU, detected on the
/// first call.
#[inline]
fn detected_bits() -> u32 {
    let bits = CACHE.load(Ordering::Relaxed);
    if bits & DONE != 0 {
        return bits;
    }
    // Two threads may both detect; they store the same value.
    let bits = Features::detect().pack() | (Vendor::detect() as u32) << VENDOR_SHIFT | DONE;
    CACHE.store(bits, Ordering::Relaxed);
    bits
}

/// Who made the CPU, as CPUID's leaf 0 names it on x86_64
/// ([`Vendor::Other`] elsewhere and under Miri): the one thing besides
/// the [`Features`] that a backend selection reads, where which of two
/// backends is faster differs between the vendors' cores.
///
/// ```
/// use mdu_platform::cpu::Vendor;
///
/// let here = Vendor::get();
/// assert_eq!(here, Vendor::detect());
/// if !cfg!(target_arch = "x86_64") {
///     assert_eq!(here, Vendor::Other);
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Vendor {
    /// Another vendor, or a CPU that does not say.
    #[default]
    Other = 0,
    /// `GenuineIntel`.
    Intel = 1,
    /// `AuthenticAMD`.
    Amd = 2,
}

impl Vendor {
    /// The vendor of the running CPU, asked on the first call (with the
    /// features) and cached for the life of the process.
    #[inline]
    pub fn get() -> Vendor {
        Vendor::unpack(detected_bits())
    }

    /// The vendor in the packed form of the cache.
    const fn unpack(bits: u32) -> Vendor {
        match bits >> VENDOR_SHIFT & 0b11 {
            1 => Vendor::Intel,
            2 => Vendor::Amd,
            _ => Vendor::Other,
        }
    }

    /// Asks the CPU, without the cache.
    pub fn detect() -> Vendor {
        #[cfg(x86_simd)]
        {
            #[allow(unused_unsafe)]
            // SAFETY: CPUID leaf 0 exists on every x86_64 CPU (older
            // toolchains declare the intrinsic `unsafe`, newer ones safe).
            let r = unsafe { core::arch::x86_64::__cpuid(0) };
            match (r.ebx, r.edx, r.ecx) {
                (0x756e_6547, 0x4965_6e69, 0x6c65_746e) => Vendor::Intel,
                (0x6874_7541, 0x6974_6e65, 0x444d_4163) => Vendor::Amd,
                _ => Vendor::Other,
            }
        }
        #[cfg(not(x86_simd))]
        {
            Vendor::Other
        }
    }
}

/// A CPU as a backend selection sees it: its [`Features`] and its
/// [`Vendor`]. [`Profile::get`] is the running one; tests write the
/// profiles of other CPUs to check what a selection chooses there (see
/// [`BackendSet`](crate::backend::BackendSet)).
///
/// ```
/// use mdu_platform::cpu::{Features, Profile, Vendor};
///
/// let zen3 = Profile {
///     features: Features { aes: true, avx2: true, sha: true, ..Features::NONE },
///     vendor: Vendor::Amd,
/// };
/// assert!(zen3.features.sha);
/// // Features alone: a CPU of no particular vendor.
/// assert_eq!(Profile::from(Features::NONE).vendor, Vendor::Other);
/// assert_eq!(Profile::get().features, Features::get());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Profile {
    /// What the CPU (and the OS) offers.
    pub features: Features,
    /// Who made it.
    pub vendor: Vendor,
}

impl Profile {
    /// The running CPU, detected once per process.
    #[inline]
    pub fn get() -> Profile {
        let bits = detected_bits();
        Profile {
            features: Features::unpack(bits),
            vendor: Vendor::unpack(bits),
        }
    }
}

impl From<Features> for Profile {
    fn from(features: Features) -> Profile {
        Profile {
            features,
            vendor: Vendor::Other,
        }
    }
}

impl Features {
    /// Whether every feature of `needs` is present here.
    ///
    /// ```
    /// use mdu_platform::cpu::Features;
    /// let aes = Features { aes: true, ..Features::NONE };
    /// let aes_clmul = Features { pclmulqdq: true, ..aes };
    /// assert!(aes_clmul.contains(aes));
    /// assert!(!aes.contains(aes_clmul));
    /// assert!(aes.contains(Features::NONE));
    /// ```
    pub const fn contains(self, needs: Features) -> bool {
        let (have, need) = (self.pack(), needs.pack());
        have & need == need
    }

    /// The features of `self` that `other` lacks: what a CPU with `other`
    /// misses of what a backend needs.
    ///
    /// ```
    /// use mdu_platform::cpu::Features;
    /// let needs = Features { avx512f: true, gfni: true, ..Features::NONE };
    /// let zen3 = Features { avx2: true, ..Features::NONE };
    /// assert_eq!(needs.difference(zen3).to_string(), "avx512f, gfni");
    /// ```
    pub fn difference(self, other: Features) -> Features {
        Features::unpack(self.pack() & !other.pack())
    }

    /// The names of the features present, as the standard library's
    /// `is_x86_feature_detected!` and `is_aarch64_feature_detected!` spell
    /// them, in a fixed order.
    ///
    /// ```
    /// use mdu_platform::cpu::Features;
    /// let sha_ni = Features { sha: true, sse2: true, ssse3: true, sse4_1: true, ..Features::NONE };
    /// assert_eq!(sha_ni.names().collect::<Vec<_>>(), ["sse2", "ssse3", "sse4.1", "sha"]);
    /// ```
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        let bits = self.pack();
        Features::NAMES
            .iter()
            .enumerate()
            .filter(move |(i, _)| bits & (1 << i) != 0)
            .map(|(_, name)| *name)
    }

    /// The features of the running CPU, detected on the first call and
    /// cached in an atomic ([`Features::NONE`] off x86_64 and aarch64, and
    /// under Miri, where the SIMD backends do not run).
    ///
    /// ```
    /// let f = mdu_platform::cpu::Features::get();
    /// if f.vaes {
    ///     assert!(f.avx2);
    /// }
    /// ```
    #[inline]
    pub fn get() -> Features {
        Features::unpack(detected_bits())
    }

    /// Asks the CPU (and the OS), without the cache.
    ///
    /// With the `std` feature, through the standard library's
    /// `is_x86_feature_detected!` / `is_aarch64_feature_detected!`.
    /// Without it: on x86_64, CPUID for what the CPU has and XGETBV for
    /// which register states the OS saves (the same answers); on aarch64,
    /// the features the target enables at compile time (there is no
    /// portable way to ask the OS without the standard library).
    ///
    /// ```
    /// use mdu_platform::cpu::Features;
    /// assert_eq!(Features::detect(), Features::get());
    /// ```
    pub fn detect() -> Features {
        #[cfg(all(x86_simd, feature = "std"))]
        {
            use std::arch::is_x86_feature_detected as has;
            Features {
                aes: has!("aes"),
                pclmulqdq: has!("pclmulqdq"),
                sse2: has!("sse2"),
                ssse3: has!("ssse3"),
                sse4_1: has!("sse4.1"),
                sha: has!("sha"),
                avx2: has!("avx2"),
                bmi2: has!("bmi2"),
                avx512f: has!("avx512f"),
                avx512bw: has!("avx512bw"),
                avx512vl: has!("avx512vl"),
                avx512vbmi: has!("avx512vbmi"),
                vaes: has!("vaes"),
                vpclmulqdq: has!("vpclmulqdq"),
                gfni: has!("gfni"),
                ..Features::NONE
            }
        }
        #[cfg(all(x86_simd, not(feature = "std")))]
        {
            cpuid::features()
        }
        #[cfg(all(arm_cpu, feature = "std"))]
        {
            use std::arch::is_aarch64_feature_detected as has;
            Features {
                aes: has!("aes"),
                pmull: has!("pmull"),
                neon: has!("neon"),
                sha2: has!("sha2"),
                ..Features::NONE
            }
        }
        #[cfg(all(arm_cpu, not(feature = "std")))]
        {
            Features {
                aes: cfg!(target_feature = "aes"),
                // The compiler's `aes` feature on aarch64 is FEAT_AES with
                // FEAT_PMULL.
                pmull: cfg!(target_feature = "aes"),
                neon: cfg!(target_feature = "neon"),
                sha2: cfg!(target_feature = "sha2"),
                ..Features::NONE
            }
        }
        #[cfg(not(any(x86_simd, arm_cpu)))]
        {
            Features::NONE
        }
    }
}

/// The architecture a `#[target_feature]` list is written for: one name
/// can stand for different features on each (the compiler's `aes` on
/// aarch64 is FEAT_AES with FEAT_PMULL).
///
/// ```
/// use mdu_platform::cpu::{Arch, Features};
///
/// let x86 = Features::from_target_features(Arch::X86_64, "aes");
/// let arm = Features::from_target_features(Arch::Aarch64, "aes");
/// assert_eq!(x86.to_string(), "aes");
/// assert_eq!(arm.to_string(), "aes, pmull");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// `target_arch = "x86_64"`.
    X86_64,
    /// `target_arch = "aarch64"`.
    Aarch64,
}

impl Features {
    /// The features a `#[target_feature(enable = "...")]` list for `arch`
    /// enables, as detection reports them: each name is the compiler's
    /// (and the standard library's) name of one field, except aarch64's
    /// `aes`, which the compiler takes as FEAT_AES with FEAT_PMULL.
    ///
    /// # Panics
    ///
    /// On a name that is empty, not a field, or not of `arch` (at compile
    /// time where it is evaluated in a constant, as [`needs!`](crate::needs)
    /// does).
    ///
    /// ```
    /// use mdu_platform::cpu::{Arch, Features};
    ///
    /// let shani = Features::from_target_features(Arch::X86_64, "sha,sse2,ssse3,sse4.1");
    /// assert_eq!(shani, Features { sha: true, sse2: true, ssse3: true, sse4_1: true, ..Features::NONE });
    /// ```
    pub const fn from_target_features(arch: Arch, list: &str) -> Features {
        let list = list.as_bytes();
        let (mut bits, mut start, mut i) = (0u32, 0, 0);
        while i <= list.len() {
            if i == list.len() || list[i] == b',' {
                let (_, rest) = list.split_at(start);
                let (name, _) = rest.split_at(i - start);
                bits |= target_feature_bits(arch, name);
                start = i + 1;
            }
            i += 1;
        }
        Features::unpack(bits)
    }
}

/// The bits one name of a `#[target_feature]` list for `arch` stands for.
const fn target_feature_bits(arch: Arch, name: &[u8]) -> u32 {
    let aarch64_only = bytes_eq(name, b"neon") || bytes_eq(name, b"sha2");
    let of_arch = match arch {
        Arch::X86_64 => !aarch64_only && !bytes_eq(name, b"pmull"),
        Arch::Aarch64 => aarch64_only || bytes_eq(name, b"aes"),
    };
    assert!(
        of_arch,
        "a target feature that mdu does not detect on this architecture"
    );
    let mut j = 0;
    while j < Features::NAMES.len() {
        if bytes_eq(name, Features::NAMES[j].as_bytes()) {
            let bit = 1 << j;
            return match arch {
                Arch::Aarch64 if bytes_eq(name, b"aes") => {
                    bit | Features {
                        pmull: true,
                        ..Features::NONE
                    }
                    .pack()
                }
                _ => bit,
            };
        }
        j += 1;
    }
    panic!("a target feature that mdu does not detect");
}

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl fmt::Display for Features {
    /// The names of the features present, comma-separated, or `none`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names = self.names();
        match names.next() {
            None => f.write_str("none"),
            Some(first) => {
                f.write_str(first)?;
                names.try_for_each(|name| write!(f, ", {name}"))
            }
        }
    }
}

/// A set of CPU features named by a type: what one kernel, or one family
/// of kernels, is compiled for (its `#[target_feature]` list). The crate
/// of the kernel declares it with [`needs!`](crate::needs) for an empty
/// `enum` of its own, next to the kernel's backend, which writes the list
/// once for both the type and the kernel's attribute; the type then names
/// the [`Witness`] the kernel takes.
///
/// ```
/// use mdu_platform::cpu::{Features, Needs};
///
/// mdu_platform::needs! {
///     /// The SHA-NI kernels.
///     enum ShaNi: x86_64 "sha,sse2,ssse3,sse4.1";
/// }
/// assert_eq!(ShaNi::NEEDS.to_string(), "sse2, ssse3, sse4.1, sha");
/// assert_eq!(ShaNi::TARGET_FEATURES, "sha,sse2,ssse3,sse4.1");
/// ```
pub trait Needs {
    /// The `#[target_feature]` list the kernels that take a
    /// `Witness<Self>` are compiled for, as written on them.
    const TARGET_FEATURES: &'static str;
    /// The features; a kernel that takes a `Witness<Self>` may be compiled
    /// for any of them and for nothing else.
    const NEEDS: Features;
}

/// Proof that the running CPU (and OS) has every feature of `N::NEEDS`.
///
/// Zero-sized, `Copy`, and built only by [`Witness::detect`], from the
/// features detected once per process: a kernel entry point that takes a
/// `Witness<N>` by value may call its `#[target_feature]` code (compiled
/// for a subset of `N::NEEDS`) without checking anything again, and its
/// callers hold the witness from the one detection they made.
///
/// ```
/// use mdu_platform::cpu::{Features, Needs, Witness};
///
/// mdu_platform::needs! {
///     /// A kernel of the x86_64 baseline.
///     enum Sse2: x86_64 "sse2";
/// }
/// if let Some(w) = Witness::<Sse2>::detect() {
///     assert_eq!(w.features(), Features { sse2: true, ..Features::NONE });
/// }
///
/// // Every CPU has no feature at all.
/// enum Portable {}
/// impl Needs for Portable {
///     const TARGET_FEATURES: &'static str = "";
///     const NEEDS: Features = Features::NONE;
/// }
/// let w: Witness<Portable> = Witness::detect().unwrap();
/// assert_eq!(w.features(), Features::NONE);
/// assert_eq!(core::mem::size_of_val(&w), 0);
/// ```
pub struct Witness<N: Needs> {
    /// Private: nothing outside this module makes a witness.
    _needs: PhantomData<fn() -> N>,
}

impl<N: Needs> Witness<N> {
    /// A witness if the running CPU has every feature of `N::NEEDS`
    /// (detected on the first call of the process, then read from the
    /// cache: one atomic load).
    ///
    /// ```
    /// use mdu_platform::cpu::{Features, Needs, Witness};
    ///
    /// mdu_platform::needs! {
    ///     /// The GFNI kernel on zmm.
    ///     enum Gfni512: x86_64 "avx512f,gfni";
    /// }
    /// assert_eq!(
    ///     Witness::<Gfni512>::detect().is_some(),
    ///     Features::get().contains(Gfni512::NEEDS)
    /// );
    /// ```
    #[inline]
    pub fn detect() -> Option<Witness<N>> {
        let need = const { N::NEEDS.pack() };
        (detected_bits() & need == need).then_some(Witness {
            _needs: PhantomData,
        })
    }

    /// The features this witness proves: `N::NEEDS`.
    ///
    /// ```
    /// use mdu_platform::cpu::{Features, Needs, Witness};
    ///
    /// enum Nothing {}
    /// impl Needs for Nothing {
    ///     const TARGET_FEATURES: &'static str = "";
    ///     const NEEDS: Features = Features::NONE;
    /// }
    /// let w = Witness::<Nothing>::detect().unwrap();
    /// assert_eq!(w.features(), Nothing::NEEDS);
    /// ```
    pub const fn features(self) -> Features {
        N::NEEDS
    }
}

impl<N: Needs> Clone for Witness<N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<N: Needs> Copy for Witness<N> {}

impl<N: Needs> PartialEq for Witness<N> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<N: Needs> Eq for Witness<N> {}

impl<N: Needs> core::hash::Hash for Witness<N> {
    fn hash<H: core::hash::Hasher>(&self, _: &mut H) {}
}

impl<N: Needs> fmt::Debug for Witness<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Witness({})", N::NEEDS)
    }
}

/// x86_64 detection without the standard library: CPUID for what the CPU
/// has, XGETBV for which register states the OS saves (ymm for AVX2, VAES
/// and VPCLMULQDQ on ymm; zmm and the mask registers for AVX-512). It
/// answers as the standard library does, or more cautiously: VAES,
/// VPCLMULQDQ and BMI2 count only with AVX usable.
#[cfg(x86_simd)]
#[cfg_attr(feature = "std", allow(dead_code))]
mod cpuid {
    use super::Features;
    use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};

    /// The features of the running CPU, as `is_x86_feature_detected!`
    /// reports them.
    pub(super) fn features() -> Features {
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
        // The compiler's `avx512f` implies FMA and F16C; the standard
        // library asks for both before it reports any AVX-512 feature.
        let avx512 = avx && zmm && max7 && bit(leaf1.ecx, 12) && bit(leaf1.ecx, 29);
        Features {
            aes: bit(leaf1.ecx, 25),
            pclmulqdq: bit(leaf1.ecx, 1),
            sse2: bit(leaf1.edx, 26),
            ssse3: bit(leaf1.ecx, 9),
            sse4_1: bit(leaf1.ecx, 19),
            sha: max7 && bit(leaf7.ebx, 29),
            avx2: avx && max7 && bit(leaf7.ebx, 5),
            // Some Skylake parts report BMI2 without it; none of them has
            // AVX.
            bmi2: avx && max7 && bit(leaf7.ebx, 8),
            avx512f: avx512 && bit(leaf7.ebx, 16),
            avx512bw: avx512 && bit(leaf7.ebx, 30),
            avx512vl: avx512 && bit(leaf7.ebx, 31),
            avx512vbmi: avx512 && bit(leaf7.ecx, 1),
            vaes: avx && max7 && bit(leaf7.ecx, 9),
            vpclmulqdq: avx && max7 && bit(leaf7.ecx, 10),
            gfni: max7 && bit(leaf7.ecx, 8),
            ..Features::NONE
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::string::ToString;
    use std::vec::Vec;

    #[test]
    #[cfg(all(x86_simd, feature = "std"))]
    fn cpuid_agrees_with_the_standard_library() {
        assert_eq!(cpuid::features(), Features::detect());
    }

    #[test]
    fn the_cache_round_trips_every_field() {
        for i in 0..Features::NAMES.len() {
            let one = Features::unpack(1 << i);
            assert_eq!(one.pack(), 1 << i);
            assert_eq!(one.names().collect::<Vec<_>>(), [Features::NAMES[i]]);
        }
        let f = Features {
            aes: true,
            avx512bw: true,
            sha2: true,
            ..Features::NONE
        };
        assert_eq!(Features::unpack(f.pack()), f);
        assert_eq!(Features::unpack(0), Features::NONE);
        let features = (1 << VENDOR_SHIFT) - 1;
        assert_eq!(detected_bits() & features, Features::get().pack());
        assert_eq!(Profile::get().vendor, Vendor::detect());
    }

    #[test]
    fn a_target_feature_list_reads_as_its_fields() {
        let f = |arch, list| Features::from_target_features(arch, list).to_string();
        assert_eq!(
            f(Arch::X86_64, "aes,avx2,avx512f,vaes"),
            "aes, avx2, avx512f, vaes"
        );
        assert_eq!(
            f(Arch::X86_64, "sha,sse2,ssse3,sse4.1"),
            "sse2, ssse3, sse4.1, sha"
        );
        assert_eq!(f(Arch::Aarch64, "neon,aes"), "aes, pmull, neon");
        assert_eq!(f(Arch::Aarch64, "neon,sha2"), "neon, sha2");
        // Each name of the list alone is its field (aarch64's `aes` aside).
        for (i, name) in Features::NAMES.iter().enumerate() {
            let arch = match *name {
                "neon" | "sha2" => Arch::Aarch64,
                "pmull" => continue,
                _ => Arch::X86_64,
            };
            assert_eq!(
                Features::from_target_features(arch, name).pack(),
                1 << i,
                "{name}"
            );
        }
    }

    #[test]
    #[should_panic(expected = "does not detect on this architecture")]
    fn a_name_of_the_other_architecture_is_refused() {
        Features::from_target_features(Arch::X86_64, "avx2,neon");
    }

    #[test]
    #[should_panic(expected = "does not detect")]
    fn an_unknown_name_is_refused() {
        Features::from_target_features(Arch::X86_64, "avx2,avx");
    }

    /// What a `#[target_feature]` list enables is what detection must
    /// find: for every name a kernel may list, the field it reads as is
    /// detected exactly when the standard library detects the name.
    #[test]
    #[cfg(all(x86_simd, feature = "std"))]
    fn each_target_feature_is_detected_as_the_standard_library_detects_it() {
        use std::arch::is_x86_feature_detected as has;
        let here = Features::get();
        let std_says = [
            ("aes", has!("aes")),
            ("pclmulqdq", has!("pclmulqdq")),
            ("sse2", has!("sse2")),
            ("ssse3", has!("ssse3")),
            ("sse4.1", has!("sse4.1")),
            ("sha", has!("sha")),
            ("avx2", has!("avx2")),
            ("bmi2", has!("bmi2")),
            ("avx512f", has!("avx512f")),
            ("avx512bw", has!("avx512bw")),
            ("avx512vl", has!("avx512vl")),
            ("avx512vbmi", has!("avx512vbmi")),
            ("vaes", has!("vaes")),
            ("vpclmulqdq", has!("vpclmulqdq")),
            ("gfni", has!("gfni")),
        ];
        assert_eq!(
            std_says.len(),
            Features::NAMES.len() - 3,
            "every x86_64 name"
        );
        for (name, detected) in std_says {
            let needs = Features::from_target_features(Arch::X86_64, name);
            assert_eq!(here.contains(needs), detected, "{name}");
        }
    }

    #[test]
    #[cfg(all(arm_cpu, feature = "std"))]
    fn each_target_feature_is_detected_as_the_standard_library_detects_it() {
        use std::arch::is_aarch64_feature_detected as has;
        let here = Features::get();
        for (name, detected) in [
            ("aes", has!("aes")),
            ("neon", has!("neon")),
            ("sha2", has!("sha2")),
        ] {
            let needs = Features::from_target_features(Arch::Aarch64, name);
            assert_eq!(here.contains(needs), detected, "{name}");
        }
    }

    #[test]
    fn names_are_unique() {
        for (i, a) in Features::NAMES.iter().enumerate() {
            assert!(!Features::NAMES[i + 1..].contains(a), "{a}");
        }
    }

    #[test]
    fn a_witness_exists_exactly_when_the_features_are_detected() {
        crate::needs! {
            /// AVX2.
            enum Avx2: x86_64 "avx2";
            /// The SHA-256 instructions of arm64.
            enum Sha2: aarch64 "neon,sha2";
        }
        let f = Features::get();
        assert_eq!(Witness::<Avx2>::detect().is_some(), f.avx2);
        assert_eq!(Witness::<Sha2>::detect().is_some(), f.neon && f.sha2);
        if !cfg!(any(x86_simd, arm_cpu)) {
            assert_eq!(f, Features::NONE);
        }
        if let Some(w) = Witness::<Avx2>::detect() {
            assert_eq!(format!("{w:?}"), "Witness(avx2)");
        }
    }
}
