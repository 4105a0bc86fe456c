//! fscrypt, the file-based encryption of ext4, f2fs, ubifs and ceph: its
//! on-disk formats, read and written offline.
//!
//! * [`nokey`]: the no-key names a directory shows to whoever lacks the
//!   key: build one from a ciphertext name, encode it in strict unpadded
//!   base64url ([`mdu_base64::URL_SAFE_NO_PAD`]), parse one as a lookup
//!   does, and match it against a directory entry.
//!
//! `no_std` with `alloc`; the default `std` feature adds
//! `std::error::Error` impls.
//!
//! # Example
//!
//! ```
//! use mdu_fscrypt::nokey::{self, NoKeyName};
//!
//! // A directory entry's encrypted name of 200 bytes: the no-key name keeps
//! // the first 149 and the SHA-256 of the rest.
//! let ciphertext = [0xa5u8; 200];
//! let shown = NoKeyName::new(0, 0, &ciphertext)?.encode();
//! assert_eq!(shown.len(), 252);
//!
//! // A lookup by that name finds the entry, and only that one.
//! let wanted = nokey::decode(shown.as_bytes())?;
//! assert!(wanted.matches(&ciphertext));
//! assert!(!wanted.matches(&ciphertext[..199]));
//! # Ok::<(), nokey::Error>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_auto_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod nokey;

/// The base64 errors a no-key name can meet, from `mdu-base64`.
pub use mdu_base64::{DecodeError, EncodeError};
