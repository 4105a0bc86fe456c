//! Adiantum's ε-almost-∆-universal hash of a (tweak, bulk) pair, as a
//! number mod 2^128 (the paper's section 6.4, the kernel's
//! `adiantum_hash_header` plus `adiantum_hash_message`):
//!
//! ```text
//! H(T, L) = Poly1305_KT(le128(8·|L|) ‖ T) + Poly1305_KM(NH(L_1) ‖ NH(L_2) ‖ …)   mod 2^128
//! ```
//!
//! * `le128(8·|L|)` is the bit length of the bulk as a little-endian
//!   128-bit number: one Poly1305 block. The kernel's 32-byte tweak is two
//!   more; a tweak of another length ends in a partial block, padded as
//!   Poly1305 pads its last block.
//! * `L_1, L_2, …` are the bulk cut into 1024-byte chunks (the last one
//!   shorter, its last 16-byte unit zero-padded); each NH output is 32
//!   bytes, two Poly1305 blocks. An empty bulk hashes to 0.
//! * "Poly1305" here is the polynomial evaluation only: the accumulator
//!   reduced mod 2^130 - 5 and then mod 2^128, with no `s` added
//!   ([`crate::poly1305`]).
//!
//! The two sums are added mod 2^128 (little-endian), as the kernel's
//! `le128_add`. The NH key and both Poly1305 states are wiped on drop.

use zeroize::Zeroize;

use crate::nh::{CHUNK_BYTES, KEY_BYTES as NH_KEY_BYTES, NhKey};
use crate::poly1305::PolyKey;

/// Bytes of the NHPoly1305 key: the Poly1305 `r` then the NH key.
pub(crate) const MESSAGE_KEY_BYTES: usize = 16 + NH_KEY_BYTES;

/// The hash keys: `KT` (the header's Poly1305) and `KM` (NHPoly1305).
#[derive(Clone)]
pub(crate) struct HashKeys {
    header: PolyKey,
    message: PolyKey,
    nh: NhKey,
}

impl HashKeys {
    /// The keys from `KT` (16 bytes) and `KM` (Poly1305 `r`, then the NH
    /// key: [`MESSAGE_KEY_BYTES`]).
    pub(crate) fn new(kt: &[u8; 16], km: &[u8; MESSAGE_KEY_BYTES]) -> HashKeys {
        let (poly_m, nh_key) = km.split_at(16);
        let mut keys = HashKeys {
            header: PolyKey::new(kt),
            message: PolyKey::new(poly_m.try_into().expect("16 bytes")),
            nh: NhKey::ZERO,
        };
        keys.nh.set(nh_key.try_into().expect("the NH key length"));
        keys
    }

    /// `Poly1305_KT(le128(8 · bulk_len) ‖ tweak)`, reduced mod 2^128.
    pub(crate) fn header(&self, bulk_len: usize, tweak: &[u8]) -> u128 {
        let mut p = self.header.start();
        // The bulk is at most 16 MiB, so its bit length fits 64 bits.
        p.blocks(&((bulk_len as u128) * 8).to_le_bytes());
        p.finish_with(tweak)
    }

    /// NHPoly1305 of `bulk`, mod 2^128.
    pub(crate) fn message(&self, bulk: &[u8]) -> u128 {
        let mut p = self.message.start();
        for chunk in bulk.chunks(CHUNK_BYTES) {
            let mut out = self.nh.hash(chunk);
            p.blocks(&out);
            out.zeroize();
        }
        p.finish()
    }

    /// `H(T, L)`: the header hash plus the message hash, mod 2^128.
    pub(crate) fn hash(&self, header: u128, bulk: &[u8]) -> u128 {
        header.wrapping_add(self.message(bulk))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::hex;

    /// The NHPoly1305 vectors of the Adiantum reference (google/adiantum,
    /// `test_vectors/ours/NHPoly1305/NHPoly1305.json`; key = Poly1305 `r`
    /// ‖ NH key, output = the polynomial mod 2^128 with no `s`): messages of
    /// 0, 16, 19, 1024, 1040 and 2048 bytes, so an empty message, a padded
    /// unit and a second chunk.
    #[test]
    fn published_nhpoly1305_vectors() {
        let data: serde_json::Value =
            serde_json::from_str(include_str!("../tests/data/nhpoly1305.json")).unwrap();
        let vectors = data["vectors"].as_array().unwrap();
        assert_eq!(vectors.len(), 12);
        for v in vectors {
            let key = hex(v["key"].as_str().unwrap());
            let msg = hex(v["message"].as_str().unwrap());
            let want = hex(v["hash"].as_str().unwrap());
            let keys = HashKeys::new(&[0; 16], key.as_slice().try_into().unwrap());
            let got = keys.message(&msg).to_le_bytes();
            assert_eq!(got.as_slice(), want, "{} bytes", msg.len());
        }
    }

    #[test]
    fn an_empty_bulk_hashes_to_zero() {
        let keys = HashKeys::new(&[1; 16], &[2; MESSAGE_KEY_BYTES]);
        assert_eq!(keys.message(&[]), 0);
    }
}
