//! **Internal to mdu.** The AES primitives that the cipher crates share, so
//! that each exists once: key schedules written straight into their heap
//! slots, round keys loaded into (and broadcast across) vector registers,
//! the arm64 round functions, CPU feature detection as data, the IV
//! sources of a batch, the wiping of the stack after a key setup, and the
//! error of a cipher's setup ([`SetupError`], which the mode crates
//! re-export).
//!
//! The vector layer (`vector`: loads, stores and AES rounds per register
//! width) is here, and so is batched ECB (`Ecb`), the building block of
//! counter modes and of ESSIV (`Essiv`, the one IV encryption of dm-crypt's
//! `essiv:sha256` and of fscrypt's AES-128-CBC-ESSIV). The data-unit modes (XTS in
//! `mdu-xts`, CBC in `mdu-cbc`) live in their crates, each as one driver
//! over the vector layer. This crate has
//! no stability promise of its own and its items are hidden from the
//! documentation: depend on `mdu-xts` or `mdu-cbc`.
//!
//! ```
//! use mdu_aes::{CpuFeatures, Ivs};
//!
//! // Detection is data, cached once per process.
//! let f = CpuFeatures::get();
//! assert_eq!(f, CpuFeatures::get());
//!
//! // The IVs of a batch: consecutive counters or a flat list.
//! let ivs = Ivs::Counter { first: 7, step: 8 };
//! assert_eq!(ivs.batch::<3>(1), [15, 23, 31]);
//! ```
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

// The SIMD code is compiled on x86_64 and on little-endian aarch64, never
// under Miri (it cannot run the vendor intrinsics). The modules declared
// under these conditions need no more than a `target_arch` inside; the
// rest of the crate reaches the SIMD half through `dispatch`, which has a
// stand-in everywhere else.
#[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
#[doc(hidden)]
pub mod aarch64;
mod cipher;
mod detect;
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
mod dispatch;
mod ecb;
mod error;
mod essiv;
mod ivs;
mod keys;
mod mode;
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
#[doc(hidden)]
pub mod vector;
#[doc(hidden)]
pub mod wipe;
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[doc(hidden)]
pub mod x86;

/// Where no SIMD backend is compiled (other targets, Miri): the stand-ins
/// of the SIMD half of the skeleton. Every mode has the (empty) kernel
/// list of this target, and no SIMD backend value can exist.
#[cfg(not(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
)))]
mod dispatch {
    use mdu_core::Direction;

    use crate::mode::{Backend, ForMode, Mode, Request};

    /// An AES mode's kernels on this target: none, so every mode has
    /// them. (On x86_64 and arm64 this trait lists one entry point per
    /// SIMD backend of the target.)
    pub trait Kernels: Mode {}

    impl<M: Mode> Kernels for M {}

    /// Only the portable backend is compiled here.
    pub(crate) const fn compiled<M>(backend: Backend<M>) -> bool {
        matches!(backend, Backend::Generic)
    }

    /// No SIMD backend runs here: an uninhabited type.
    pub(crate) struct Simd<M>(ForMode<M>);

    impl<M: Mode> Simd<M> {
        pub(crate) fn new(backend: Backend<M>, key: &[u8]) -> Option<Simd<M>> {
            let _ = (backend, key);
            None
        }

        pub(crate) fn backend(&self) -> Backend<M> {
            self.0.unreachable()
        }

        pub(crate) fn boxed_clone(&self) -> Simd<M> {
            self.0.unreachable()
        }

        /// # Safety
        ///
        /// None: no value exists.
        pub(crate) unsafe fn crypt<const NR: usize>(&self, dir: Direction, req: Request<'_>) {
            let _ = (dir, req);
            self.0.unreachable()
        }
    }
}

pub use cipher::Cipher;
pub use detect::{CpuFeatures, subsets};
pub use dispatch::Kernels;
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
pub use dispatch::{SimdKeys, ecb_kernels, expand};
pub use ecb::{Ecb, EcbMode};
pub use error::SetupError;
pub use essiv::Essiv;
pub use ivs::Ivs;
pub use keys::RoundKeys;
pub use mode::{Aes128, Aes256, Backend, BlockAes, Engine, ForMode, Io, KeySize, Mode, Request};

/// Round keys as stored bytes: `[u8; 16]` each, 15 slots (AES-128 uses
/// 11).
///
/// ```
/// let s: mdu_aes::Schedule = [[0; 16]; 15];
/// assert_eq!(s.len(), 15);
/// ```
pub type Schedule = [[u8; 16]; 15];

/// The number of AES rounds for a key of `key_len` bytes: 10 for 16, 14 for
/// 32 (the only two lengths the cipher crates use).
///
/// ```
/// assert_eq!(mdu_aes::rounds(16), 10);
/// assert_eq!(mdu_aes::rounds(32), 14);
/// ```
pub const fn rounds(key_len: usize) -> usize {
    if key_len == 32 { 14 } else { 10 }
}

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
