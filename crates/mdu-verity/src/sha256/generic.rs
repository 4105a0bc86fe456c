//! Portable backend: the `sha2` crate's block function, no `unsafe`.

use super::BLOCK_LEN;

/// Compress whole 64-byte blocks into `h`.
pub(super) fn compress(h: &mut [u32; 8], blocks: &[[u8; BLOCK_LEN]]) {
    if !blocks.is_empty() {
        sha2::block_api::compress256(h, blocks);
    }
}
