//! The platform layer of the mdu crates: what their SIMD kernels share.
//!
//! **No stability promise.** This crate is published because `mdu-aes`,
//! `mdu-xts`, `mdu-cbc`, `mdu-verity` and `mdu-base64` depend on it; its
//! items change with the kernels that use them, between any two versions.
//! The crates above hide what they re-export of it. Depend on them, or on
//! the `mdu` facade, instead.
//!
//! * [`cpu`] is the CPU vocabulary every crate with SIMD backends speaks:
//!   [`cpu::Features`] detected once per process, what each kernel needs
//!   ([`cpu::Needs`], declared with [`needs!`] from the same literal as
//!   the kernel's `#[target_feature]`) and the zero-sized
//!   [`cpu::Witness`]es that its kernels take as proof.
//! * [`backend`] is the one shape of backend selection: a family of
//!   backends ([`backend::BackendSet`]) lists them best first with what
//!   each needs, and gets `available`, `detect` and `is_available`, for
//!   the running CPU or a simulated [`cpu::Profile`].
//! * [`simd`] is the register layer those kernels share: one type per SIMD
//!   width whose values prove the width's features, with the loads,
//!   stores, XORs and lane moves written once.
//! * [`target`] names the target conditions of those kernels once
//!   (`x86_simd`, `arm_simd`, ...) for the build scripts of the crates.
//!
//! ```
//! use mdu_platform::cpu::Features;
//!
//! // Detected once per process, then read from a cache.
//! let here = Features::get();
//! assert_eq!(here, Features::detect());
//! ```
//!
//! # Features
//!
//! * `std` (default): CPU detection through the standard library's
//!   `is_x86_feature_detected!` / `is_aarch64_feature_detected!`. Without
//!   it, CPUID and XGETBV on x86_64, and the target's compile-time
//!   features on aarch64.
#![no_std]

#[cfg(any(feature = "std", test))]
extern crate std;

pub mod backend;
pub mod cpu;
pub mod simd;
#[cfg(feature = "std")]
pub mod target;

/// Declares what kernels need of the CPU, each list written once: for
/// every `enum Name: arch "list";` an empty `enum Name` whose
/// [`Needs`](cpu::Needs) are `list` (the features it enables, as
/// [`Features::from_target_features`](cpu::Features::from_target_features)
/// reads it for `arch`, `x86_64` or `aarch64`), and one macro of the
/// module, `target_features!`, that puts `#[target_feature(enable =
/// "list")]` on the items it is given:
/// `target_features!(Name => fn kernel() { ... })`. The kernel that takes a
/// `Witness<Name>` is compiled for exactly the features the witness
/// proves, because both come from the one literal.
///
/// ```
/// # #[cfg(all(target_arch = "x86_64", not(miri)))] {
/// mod needs {
///     mdu_platform::needs! {
///         /// The AVX2 kernel.
///         pub enum Avx2: x86_64 "avx2";
///         /// The GFNI kernel on ymm.
///         pub enum Gfni: x86_64 "avx2,gfni";
///     }
/// }
///
/// use mdu_platform::cpu::{Features, Needs, Witness};
///
/// needs::target_features!(Avx2 =>
///     /// Adds 1 to every byte, 32 at a time.
///     fn add_one(bytes: &mut [u8; 32]) {
///         use core::arch::x86_64::*;
///         // SAFETY: 32 readable and writable bytes.
///         unsafe {
///             let v = _mm256_loadu_si256(bytes.as_ptr().cast());
///             let v = _mm256_add_epi8(v, _mm256_set1_epi8(1));
///             _mm256_storeu_si256(bytes.as_mut_ptr().cast(), v);
///         }
///     }
/// );
///
/// /// The kernel's safe entry point: the witness proves AVX2.
/// fn run(_: Witness<needs::Avx2>, bytes: &mut [u8; 32]) {
///     // SAFETY: `add_one` is compiled for `needs::Avx2`'s list.
///     unsafe { add_one(bytes) }
/// }
///
/// assert_eq!(needs::Gfni::NEEDS, Features { avx2: true, gfni: true, ..Features::NONE });
/// assert_eq!(needs::Gfni::TARGET_FEATURES, "avx2,gfni");
/// if let Some(w) = Witness::<needs::Avx2>::detect() {
///     let mut bytes = [7; 32];
///     run(w, &mut bytes);
///     assert_eq!(bytes, [8; 32]);
/// }
/// # }
/// ```
#[macro_export]
macro_rules! needs {
    ($($(#[$attr:meta])* $vis:vis enum $name:ident: $arch:ident $features:literal;)+) => {
        $crate::needs!(@with ($) $($(#[$attr])* $vis enum $name: $arch $features;)+);
    };
    (@with ($d:tt) $($(#[$attr:meta])* $vis:vis enum $name:ident: $arch:ident $features:literal;)+) => {
        $(
            $(#[$attr])*
            $vis enum $name {}
            impl $crate::cpu::Needs for $name {
                const TARGET_FEATURES: &'static str = $features;
                const NEEDS: $crate::cpu::Features = $crate::cpu::Features::from_target_features(
                    $crate::needs!(@arch $arch),
                    $features,
                );
            }
        )+

        /// Puts the `#[target_feature]` list of one of this module's
        /// needs on the items that follow: `target_features!(Name => fn ...)`.
        #[allow(unused_macros)]
        macro_rules! target_features {
            $(
                ($name => $d($d item:item)+) => {
                    $d(#[target_feature(enable = $features)] $d item)+
                };
            )+
        }
        #[allow(unused_imports)]
        pub(crate) use target_features;
    };
    (@arch x86_64) => {
        $crate::cpu::Arch::X86_64
    };
    (@arch aarch64) => {
        $crate::cpu::Arch::Aarch64
    };
}
