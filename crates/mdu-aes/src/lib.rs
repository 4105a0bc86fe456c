//! AES for mdu's disk-encryption ciphers: the one cipher type of every
//! AES data-unit mode ([`Cipher`], which `mdu-xts` names `Xts<K>` and
//! `mdu-cbc` names `Cbc<K>`), batched AES on independent blocks ([`Ecb`],
//! the building block of dm-crypt's `essiv` IVs, of HCTR2 and of
//! Adiantum), the backends they run on ([`Backend`]) and the errors of
//! their setup ([`SetupError`]).
//!
//! Each key is checked, expanded once for the best backend this CPU runs
//! (VAES on zmm or ymm, or AES-NI on x86_64; the Armv8 Crypto Extensions
//! on arm64; RustCrypto's constant-time `aes` everywhere else) or for one
//! pinned with `with_backend`, and zeroized on drop; the stack of the key
//! setup is wiped too. Every backend gives the same bytes.
//!
//! It also holds the one ESSIV IV encryption ([`Essiv`]: dm-crypt's
//! `essiv:sha256` and fscrypt's AES-128-CBC-ESSIV) and the bound of the
//! generic block ciphers that `mdu-xts` and `mdu-cbc` run besides AES
//! ([`BlockAes`]).
//!
//! ```
//! use mdu_aes::{Aes128, Backend, Ecb, EcbMode};
//!
//! let ecb = Ecb::<Aes128>::new(&[0u8; 16])?;
//! let mut blocks = [0u8; 32];
//! ecb.encrypt_blocks(&mut blocks);
//! // FIPS 197: AES-128 of the zero block under the zero key.
//! assert_eq!(blocks[..4], [0x66, 0xe9, 0x4b, 0xd4]);
//!
//! // The same bytes on every backend this CPU runs, best first.
//! for &backend in Backend::<EcbMode>::available() {
//!     let mut again = [0u8; 32];
//!     Ecb::<Aes128>::with_backend(&[0u8; 16], backend)?.encrypt_blocks(&mut again);
//!     assert_eq!(again, blocks);
//! }
//! # Ok::<(), mdu_aes::SetupError>(())
//! ```
//!
//! The data-unit modes live in their crates (`mdu-xts`, `mdu-cbc`), each
//! as one driver over this crate's vector layer; what they build it from
//! (the mode skeleton, key schedules, the vector layer and the wiping of
//! the stack) is in the hidden `__private` module, with no stability
//! promise: it changes with the modes that use it.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

// The SIMD code is compiled on x86_64 (`cfg(x86_simd)`) and on
// little-endian aarch64 (`cfg(arm_simd)`; either: `cfg(simd)`), never under
// Miri (it cannot run the vendor intrinsics): build.rs names these
// conditions, as `mdu_platform::target` defines them. The modules declared
// under these conditions need no more than a `target_arch` inside; the
// rest of the crate reaches the SIMD half through `dispatch`, which has a
// stand-in everywhere else.
#[cfg(arm_simd)]
mod aarch64;
mod cipher;
mod detect;
#[cfg(simd)]
mod dispatch;
mod ecb;
mod error;
mod essiv;
mod ivs;
mod keyed;
mod keys;
mod mode;
#[cfg(simd)]
mod vector;
mod wipe;
#[cfg(x86_simd)]
mod x86;

/// Where no SIMD backend is compiled (other targets, Miri): the stand-ins
/// of the SIMD half of the skeleton. Every mode has the (empty) kernel
/// list of this target, and no SIMD backend value can exist.
#[cfg(not(simd))]
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
/// RustCrypto's key traits, in the version the cipher types implement
/// (`KeySizeUser`, `KeyInit`, `TryKeyInit`).
pub use crypto_common;
pub use ecb::{Ecb, EcbMode};
pub use error::SetupError;
pub use essiv::Essiv;
pub use keyed::WithBackend;
pub use mode::{Aes128, Aes256, Backend, BlockAes, KeySize};

#[cfg(feature = "testing")]
pub mod testing;

// The crate's own paths to what it keeps behind `__private`.
#[cfg(simd)]
use __private::SimdKeys;
// Where no SIMD backend is compiled (other targets, Miri) the portable
// half alone leaves some of these unused.
#[cfg_attr(not(simd), allow(unused_imports))]
use __private::{CpuFeatures, Engine, Io, Ivs, Kernels, Request, RoundKeys, Schedule, rounds};

/// What the mode crates (`mdu-xts`, `mdu-cbc`, `mdu-hctr2`,
/// `mdu-adiantum`) and mdu's dm-crypt and benchmarks build on: the mode
/// skeleton ([`Mode`](__private::Mode), [`Engine`](__private::Engine), the
/// kernel tables), the key schedules, the vector layer per register width
/// with its `mdu_platform` registers, and the wiping of the stack. No
/// stability promise: it changes with the modes that use it.
#[doc(hidden)]
pub mod __private {
    pub use crate::detect::CpuFeatures;
    pub use crate::dispatch::Kernels;
    #[cfg(simd)]
    pub use crate::dispatch::{SimdKeys, ecb_kernels, expand};
    pub use crate::ivs::Ivs;
    #[cfg(simd)]
    pub use crate::kernels;
    pub use crate::keys::RoundKeys;
    pub use crate::mode::{BlockAes, Engine, EveryKey, ForMode, Io, KeyRule, Mode, Request};

    /// Round keys as stored bytes: `[u8; 16]` each, 15 slots (AES-128
    /// uses 11).
    ///
    /// ```
    /// let s: mdu_aes::__private::Schedule = [[0; 16]; 15];
    /// assert_eq!(s.len(), 15);
    /// ```
    pub type Schedule = [[u8; 16]; 15];

    /// The number of AES rounds for a key of `key_len` bytes: 10 for 16,
    /// 14 for 32 (the only two lengths the cipher crates use).
    ///
    /// ```
    /// assert_eq!(mdu_aes::__private::rounds(16), 10);
    /// assert_eq!(mdu_aes::__private::rounds(32), 14);
    /// ```
    pub const fn rounds(key_len: usize) -> usize {
        if key_len == 32 { 14 } else { 10 }
    }

    /// The arm64 AES primitives: key expansion, loads and stores, rounds.
    #[cfg(arm_simd)]
    pub mod aarch64 {
        pub use crate::aarch64::*;
    }

    /// The vector layer: the AES view of each register width.
    #[cfg(simd)]
    pub mod vector {
        pub use crate::vector::*;
    }

    /// The wiping of the stack after a key setup, and its test probes.
    pub mod wipe {
        pub use crate::wipe::*;
    }

    /// The x86_64 AES primitives: key expansion, loads and stores.
    #[cfg(x86_simd)]
    pub mod x86 {
        pub use crate::x86::*;
    }
}

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
