//! fscrypt, the file-based encryption of ext4, f2fs, ubifs and ceph: its
//! on-disk formats, read and written offline.
//!
//! * [`policy`]: policies v1 and v2 and the contexts stored with each
//!   inode, parsed from untrusted bytes under the kernel's rules.
//! * [`key`]: master keys, v2 key identifiers and every key the kernel
//!   derives (HKDF-SHA512 for v2, AES-128-ECB for v1), zeroed on drop.
//! * [`ContentsCipher`]: a regular file's data units, decrypted and
//!   encrypted in batches (AES-256-XTS, AES-128-CBC-ESSIV, Adiantum) with
//!   the IVs of every policy (per-file keys, DIRECT_KEY, IV_INO_LBLK_64,
//!   IV_INO_LBLK_32, sub-block data units).
//! * [`NamesCipher`]: directory entry names and symlink targets
//!   (AES-256-CTS-CBC, AES-128-CTS-CBC, AES-256-HCTR2 through
//!   `mdu-hctr2`, Adiantum through `mdu-adiantum`).
//! * [`ext4`]: a read-only ext4 reader for untrusted images (extent trees,
//!   block maps, htree and inline directories, extended attributes, the
//!   directory hashes).
//! * [`volume`]: an image read as the kernel shows it: names decrypted or
//!   as no-key names, file contents decrypted run by run, symlinks.
//! * [`nokey`]: the no-key names a directory shows to whoever lacks the
//!   key: build one from a ciphertext name, encode it in strict unpadded
//!   base64url ([`mdu_base64::URL_SAFE_NO_PAD`]), parse one as a lookup
//!   does, and match it against a directory entry.
//!
//! Not implemented: the SM4 modes (SM4-XTS contents, SM4-CTS names); they
//! are refused with [`Error::Unsupported`].
//!
//! `no_std` with `alloc`; the default `std` feature adds
//! `std::error::Error` impls and CPU detection through the standard
//! library.
//!
//! # Example: a file and its name, as the kernel stores them
//!
//! ```
//! use mdu_fscrypt::{ContentsCipher, FsInfo, NamesCipher};
//! use mdu_fscrypt::key::MasterKey;
//! use mdu_fscrypt::policy::Context;
//!
//! let master = MasterKey::new(&(0u8..64).collect::<Vec<_>>())?;
//! let fs = FsInfo { uuid: [0x5b; 16], block_size: 4096 };
//! // The context xattr of a directory (inode 12) and of a file in it (13).
//! let dir = Context::parse(&hex("02010403000000008699c2c53707405da5aba5ae4d8583c0\
//!                                82709220649ba190f648f68a5ff1eaba"))?;
//! let file = Context::parse(&hex("02010403000000008699c2c53707405da5aba5ae4d8583c0\
//!                                 1bd2c54ff2e89cf6ee43faee1c516e34"))?;
//!
//! // The directory entry the kernel wrote for the name "a".
//! let names = NamesCipher::new(&master, &dir, 12, &fs)?;
//! let stored = hex("5eecc7abee9cc15b2a49302a39f9202aaf2e0f39ecaacf851864e4d14cc7a219");
//! assert_eq!(names.decrypt_name(&stored)?, b"a");
//!
//! // The file's one byte, 0x00, at the start of its first block.
//! let contents = ContentsCipher::new(&master, &file, 13, &fs)?;
//! let mut block = vec![0u8; 4096];
//! contents.encrypt_blocks(0, &mut block)?;
//! assert_eq!(block[..4], [0xe5, 0xac, 0xe5, 0xbc]);
//!
//! # fn hex(s: &str) -> Vec<u8> {
//! #     let s: Vec<u8> = s.bytes().filter(|b| b.is_ascii_hexdigit()).collect();
//! #     s.chunks(2).map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap()).collect()
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Example: no-key names
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
//! # Ok::<(), nokey::NoKeyError>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod contents;
mod error;
pub mod ext4;
mod inode;
pub mod key;
pub mod names;
pub mod nokey;
pub mod policy;
pub mod volume;

pub use contents::ContentsCipher;
pub use error::Error;
pub use inode::FsInfo;
pub use names::NamesCipher;

/// The base64 errors a no-key name can meet, from `mdu-base64`.
pub use mdu_base64::{DecodeError, EncodeError};

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
