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
//! the `essiv` IVs and of counter modes. The data-unit modes (XTS in
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

#[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
#[doc(hidden)]
pub mod aarch64;
mod cipher;
mod detect;
mod ecb;
mod error;
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

pub use cipher::Cipher;
pub use detect::{CpuFeatures, subsets};
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
pub use ecb::kernels as ecb_kernels;
pub use ecb::{Ecb, EcbMode};
pub use error::SetupError;
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

/// Writes the encryption schedule of the 16- or 32-byte AES key `key` into
/// `enc` and, when `dec` is given, the schedule of the equivalent inverse
/// cipher (reversed, InvMixColumns on the middle round keys) into `dec`.
///
/// No copy of the key or of a schedule is made outside `enc` and `dec`: the
/// round keys go from registers to their slots. What the compiler spills
/// meanwhile lies in this function's frame, below its caller's, which the
/// caller wipes with [`wipe::after_key_setup`] once it has returned (hence
/// `inline(never)`).
///
/// # Safety
///
/// The CPU has the AES instructions (AES-NI on x86_64, FEAT_AES on arm64).
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
#[doc(hidden)]
#[inline(never)]
pub unsafe fn expand(key: &[u8], enc: &mut Schedule, dec: Option<&mut Schedule>) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: forwarded from the caller.
    unsafe {
        x86::expand(key, enc, dec)
    }
    #[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
    // SAFETY: forwarded from the caller.
    unsafe {
        aarch64::expand(key, enc, dec)
    }
}
