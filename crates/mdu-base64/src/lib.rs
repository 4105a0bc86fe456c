//! Block-wise base64: one generic engine for any alphabet and padding mode,
//! strict typed decoding, and SIMD backends.
//!
//! * [`Engine`] = an [`Alphabet`] (RFC 4648 [`STANDARD`](Alphabet::STANDARD),
//!   [`URL_SAFE`](Alphabet::URL_SAFE), RFC 3501 [`IMAP`](Alphabet::IMAP), or
//!   any 64 distinct printable ASCII bytes) and a [`Padding`] mode, like the
//!   Linux kernel's generic `base64_encode/base64_decode(.., padding,
//!   variant)`. Ready-made engines: [`STANDARD`], [`URL_SAFE`] and
//!   [`URL_SAFE_NO_PAD`] (fscrypt's encoding of no-key names, which
//!   `mdu-fscrypt` builds and parses).
//! * Decoding is strict and every rejection is a [`DecodeError`] naming the
//!   index: bytes outside the alphabet, a symbol count of 1 mod 4, padding
//!   that is not exactly canonical (or not allowed), and non-zero unused
//!   bits in the last symbol.
//! * The [`Backend`] (AVX-512 VBMI or AVX2 on x86-64, NEON on aarch64, or
//!   portable scalar) is detected once per process; every backend gives
//!   byte-identical results and errors.
//!
//! * `stream` (with `std`): a reader encoded to a writer, or base64 text
//!   of any length (line breaks dropped) decoded, a block at a time in
//!   bounded memory, an error naming the byte offset in the whole input.
//!
//! `no_std` with `alloc`; the default `std` feature adds
//! `std::error::Error` impls and `stream`.
//!
//! # Example
//!
//! ```
//! use mdu_base64::{DecodeError, STANDARD, URL_SAFE_NO_PAD};
//!
//! assert_eq!(STANDARD.encode_to_string(b"Hello, world!"), "SGVsbG8sIHdvcmxkIQ==");
//! assert_eq!(URL_SAFE_NO_PAD.encode_to_string(b"Hello, world!"), "SGVsbG8sIHdvcmxkIQ");
//! assert_eq!(URL_SAFE_NO_PAD.decode_to_vec(b"SGVsbG8sIHdvcmxkIQ")?, b"Hello, world!");
//!
//! // Strict: the unused bits of the last symbol must be zero.
//! assert_eq!(URL_SAFE_NO_PAD.decode_to_vec(b"Zh"), Err(DecodeError::NonCanonical { index: 1 }));
//! # Ok::<(), DecodeError>(())
//! ```
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod alphabet;
mod backend;
mod engine;
mod error;
#[cfg(feature = "std")]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub mod stream;

pub use alphabet::{Alphabet, AlphabetError, PAD, Padding};
pub use backend::Backend;
pub use engine::Engine;
pub use error::{BackendUnavailable, DecodeError, EncodeError};

/// RFC 4648 section 4 base64 with `=` padding required.
///
/// ```
/// assert_eq!(mdu_base64::STANDARD.encode_to_string(b"fooba"), "Zm9vYmE=");
/// ```
pub const STANDARD: Engine = Engine::new(&Alphabet::STANDARD, Padding::Required);

/// RFC 4648 section 5 base64url with `=` padding required.
///
/// ```
/// assert_eq!(mdu_base64::URL_SAFE.encode_to_string(b"\xfb\xff"), "-_8=");
/// ```
pub const URL_SAFE: Engine = Engine::new(&Alphabet::URL_SAFE, Padding::Required);

/// RFC 4648 section 5 base64url without padding: fscrypt's no-key name
/// encoding (no `=` emitted, any `=` rejected).
///
/// ```
/// assert_eq!(mdu_base64::URL_SAFE_NO_PAD.encode_to_string(b"\xfb\xff"), "-_8");
/// ```
pub const URL_SAFE_NO_PAD: Engine = Engine::new(&Alphabet::URL_SAFE, Padding::None);

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
