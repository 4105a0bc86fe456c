//! Two-way interleaved SHA-256 and fs-verity / dm-verity Merkle trees.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod sha256;
