//! Two-way interleaved SHA-256 and fs-verity / dm-verity Merkle trees.
//!
//! Merkle trees hash huge numbers of equal-length blocks from one salted
//! starting state. This crate builds them two blocks at a time:
//!
//! * [`sha256`]: a resumable prefix [`sha256::State`] with `finup` (one
//!   message) and `finup2x` (two equal-length messages, interleaved on
//!   x86_64 SHA-NI and on the arm64 SHA-256 instructions), backend chosen
//!   once per state.
//! * [`Source`]: the one input type of every entry point: bytes in memory,
//!   pieces in memory (windows of a mapped file), a reader or a path. Data
//!   in memory is hashed where it lies; readers are read through a ring of
//!   reused buffers while the last one is hashed.
//! * [`merkle`]: the tree shared by both formats; data blocks and tree
//!   blocks are hashed in pairs (memory bounded by the tree, not the data).
//! * [`fsverity`]: the fs-verity file digest, descriptor and Merkle tree,
//!   byte-identical to `fsverity digest` (fsverity-utils), of one input, of
//!   many ([`fsverity::digest_many`], small files paired across files) or of
//!   data produced on the fly ([`fsverity::Hasher`]).
//! * [`dmverity`]: `veritysetup format`-compatible hash areas and
//!   superblocks (also streamed, [`dmverity::Hasher`]), and verification
//!   that names the first bad block.
//!
//! Every bad parameter or input is an [`Error`] naming the value and the rule.
//!
//! ```
//! use mdu_verity::fsverity;
//!
//! let d = fsverity::digest(&b"abc"[..], &fsverity::Params::default())?;
//! assert_eq!(
//!     d.to_string(),
//!     "sha256:700b6bd8510f0b4f9bac8b9cf0459151a1c4a99f467892bb4bd289a67df8e19c"
//! );
//! # Ok::<(), mdu_verity::Error>(())
//! ```
//!
//! # Features
//!
//! * `rayon`: hash large inputs, verify trees and digest many inputs on all
//!   threads of the current rayon pool. The bytes out (and the block an
//!   error names) are the same with and without it.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod dmverity;
mod error;
pub mod fsverity;
mod hash;
pub mod merkle;
pub mod sha256;
mod source;

pub use error::Error;
pub use hash::{Digest, HashAlg};
pub use source::{READ_BUF_LEN, Source};

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
