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
//!   ([`cpu::Needs`]) and the zero-sized [`cpu::Witness`]es that its
//!   kernels take as proof.
//! * [`simd`] is the register layer those kernels share: one type per SIMD
//!   width whose values prove the width's features, with the loads,
//!   stores, XORs and lane moves written once.
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

pub mod cpu;
pub mod simd;
