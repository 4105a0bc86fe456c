//! Two-way interleaved SHA-256 and fs-verity / dm-verity Merkle trees.
//!
//! Merkle trees hash huge numbers of equal-length blocks from one salted
//! starting state. This crate builds them two blocks at a time:
//!
//! * [`sha256`]: a resumable prefix [`sha256::State`] with `finup` (one
//!   message) and `finup2x` (two equal-length messages, interleaved on
//!   x86_64 SHA-NI and on the arm64 SHA-256 instructions), backend chosen
//!   once per state.
//! * [`merkle`]: the tree builder shared by both formats; it streams the data
//!   from any [`std::io::Read`] (memory bounded by the tree, not the data) and
//!   hashes data blocks and tree blocks in pairs.
//! * [`fsverity`]: the fs-verity file digest, descriptor and Merkle tree,
//!   byte-identical to `fsverity digest` (fsverity-utils).
//! * [`dmverity`]: `veritysetup format`-compatible hash areas and
//!   superblocks, and verification that names the first bad block.
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
//! * `rayon`: hash large inputs on all threads of the current rayon pool.
//!   The bytes out are the same with and without it.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod dmverity;
mod error;
pub mod fsverity;
mod hash;
pub mod merkle;
pub mod sha256;

pub use error::Error;
pub use hash::{Digest, HashAlg};
