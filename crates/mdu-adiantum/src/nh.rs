//! NH, the ε-almost-universal hash that compresses Adiantum's bulk before
//! Poly1305 sees it (Black, Halevi, Krawczyk, Krovetz and Rogaway's NH of
//! UMAC, in the variant of the Adiantum paper, section 6.3).
//!
//! The message is read as little-endian 32-bit words in units of 16 bytes
//! (four words `m0..m3`); a chunk is at most 64 units (1024 bytes). The key
//! is `64 + 3` units of words (1072 bytes). Pass `p` (0 to 3) pairs unit
//! `i` with key words `4(i + p) ..`, so the four passes see the same
//! message under keys shifted by one unit each:
//!
//! ```text
//! NH_p = Σ_i (m0 + k0)(m2 + k2) + (m1 + k1)(m3 + k3)   mod 2^64
//! ```
//!
//! where the sums `m + k` are taken mod 2^32 and the products are full
//! 32 × 32 → 64-bit ones. The output is the four sums as little-endian
//! 64-bit words, 32 bytes. A last unit shorter than 16 bytes is padded
//! with zeros.
//!
//! This is the hot loop of Adiantum on 4 KiB contents. It is written over
//! plain `u32`/`u64` wrapping arithmetic with the two products of each
//! pass in separate accumulators (eight independent multiply-adds per
//! unit, the lane layout of SSE2's `pmuludq` and NEON's `umlal`). On
//! baseline x86-64 the compiler keeps it scalar, at about 4 GB/s, which
//! measured faster than what it vectorizes for AVX2 on its own; a
//! hand-written SIMD kernel is the next step if NH becomes the bound.

use zeroize::Zeroize;

/// Bytes in one NH chunk, the most one NH call compresses.
pub(crate) const CHUNK_BYTES: usize = 1024;
/// Bytes in one NH unit (four message words).
const UNIT_BYTES: usize = 16;
/// Units in one chunk.
const UNITS: usize = CHUNK_BYTES / UNIT_BYTES;
/// Passes over each chunk, each under the key shifted by one more unit.
const PASSES: usize = 4;
/// Key units: one per message unit, and one more per pass after the first.
const KEY_UNITS: usize = UNITS + PASSES - 1;
/// The NH key in bytes (1072).
pub(crate) const KEY_BYTES: usize = KEY_UNITS * UNIT_BYTES;
/// The NH output in bytes: one little-endian `u64` per pass.
pub(crate) const OUTPUT_BYTES: usize = 8 * PASSES;

/// An NH key as little-endian words, four to a unit; wiped on drop.
#[derive(Clone)]
pub(crate) struct NhKey([[u32; 4]; KEY_UNITS]);

impl NhKey {
    /// The all-zero key (to be filled in place with [`NhKey::set`]).
    pub(crate) const ZERO: NhKey = NhKey([[0; 4]; KEY_UNITS]);

    /// Reads the key from its `KEY_BYTES` bytes.
    pub(crate) fn set(&mut self, bytes: &[u8; KEY_BYTES]) {
        for (unit, b) in self.0.iter_mut().zip(bytes.chunks_exact(UNIT_BYTES)) {
            for (w, b) in unit.iter_mut().zip(b.chunks_exact(4)) {
                *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
    }

    /// NH of one chunk of at most [`CHUNK_BYTES`] bytes (a shorter last
    /// unit is zero-padded; longer chunks are cut to `CHUNK_BYTES`).
    pub(crate) fn hash(&self, chunk: &[u8]) -> [u8; OUTPUT_BYTES] {
        let chunk = &chunk[..chunk.len().min(CHUNK_BYTES)];
        // acc[p][0] sums (m0 + k0)(m2 + k2), acc[p][1] sums (m1 + k1)(m3 + k3).
        let mut acc = [[0u64; 2]; PASSES];
        let units = chunk.chunks_exact(UNIT_BYTES);
        let tail = units.remainder();
        let mut i = 0;
        for unit in units {
            self.absorb(&mut acc, i, words(unit));
            i += 1;
        }
        if !tail.is_empty() {
            let mut last = [0u8; UNIT_BYTES];
            last[..tail.len()].copy_from_slice(tail);
            self.absorb(&mut acc, i, words(&last));
        }
        let mut out = [0u8; OUTPUT_BYTES];
        for (o, [a, b]) in out.chunks_exact_mut(8).zip(acc) {
            o.copy_from_slice(&a.wrapping_add(b).to_le_bytes());
        }
        out
    }

    /// Adds unit `i` (`i < UNITS`) of the message, `m`, to every pass.
    #[inline(always)]
    fn absorb(&self, acc: &mut [[u64; 2]; PASSES], i: usize, m: [u32; 4]) {
        let keys: &[[u32; 4]; PASSES] = self.0[i..i + PASSES]
            .try_into()
            .expect("a chunk has at most UNITS units");
        for (acc, k) in acc.iter_mut().zip(keys) {
            for lane in 0..2 {
                let a = m[lane].wrapping_add(k[lane]);
                let b = m[lane + 2].wrapping_add(k[lane + 2]);
                acc[lane] = acc[lane].wrapping_add(u64::from(a) * u64::from(b));
            }
        }
    }
}

impl Drop for NhKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

/// The four little-endian words of a 16-byte unit.
#[inline(always)]
fn words(unit: &[u8]) -> [u32; 4] {
    core::array::from_fn(|j| {
        let b = &unit[4 * j..4 * j + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::hex;
    use alloc::boxed::Box;
    use alloc::vec::Vec;

    fn key(bytes: &[u8]) -> Box<NhKey> {
        let mut k = Box::new(NhKey::ZERO);
        k.set(bytes.try_into().unwrap());
        k
    }

    /// The NH vectors of the Adiantum reference (google/adiantum,
    /// `test_vectors/ours/NH/NH.json`): messages of 16, 1008 and 1024
    /// bytes.
    #[test]
    fn published_nh_vectors() {
        let data: serde_json::Value =
            serde_json::from_str(include_str!("../tests/data/nh.json")).unwrap();
        let vectors = data["vectors"].as_array().unwrap();
        assert_eq!(vectors.len(), 9);
        for v in vectors {
            let k = key(&hex(v["key"].as_str().unwrap()));
            let msg = hex(v["message"].as_str().unwrap());
            let want = hex(v["hash"].as_str().unwrap());
            assert_eq!(k.hash(&msg).as_slice(), want, "{} bytes", msg.len());
        }
    }

    /// A short last unit hashes as if zero-padded to 16 bytes.
    #[test]
    fn a_short_last_unit_is_zero_padded() {
        let k = key(&(0..KEY_BYTES).map(|i| (i * 7) as u8).collect::<Vec<_>>());
        for len in [1usize, 15, 17, 1000, 1023] {
            let msg: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
            let mut padded = msg.clone();
            padded.resize(len.next_multiple_of(16), 0);
            assert_eq!(k.hash(&msg), k.hash(&padded), "{len}");
        }
    }

    /// Each pass is the one-pass NH of the same message under the key
    /// shifted by one more unit: checked against a direct evaluation of
    /// the definition, with sums near 2^32 and products near 2^64.
    #[test]
    fn matches_the_definition_with_carries() {
        let kb: Vec<u8> = (0..KEY_BYTES)
            .map(|i| if i % 5 == 0 { 0xff } else { (i * 31) as u8 })
            .collect();
        let k = key(&kb);
        let msg: Vec<u8> = (0..CHUNK_BYTES)
            .map(|i| if i % 3 == 0 { 0xfe } else { (i * 17) as u8 })
            .collect();
        let w = |b: &[u8], i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
        let got = k.hash(&msg);
        for p in 0..PASSES {
            let mut sum = 0u64;
            for u in 0..UNITS {
                for j in 0..2 {
                    let (mi, ki) = (4 * u + j, 4 * (u + p) + j);
                    let a = w(&msg, mi).wrapping_add(w(&kb, ki)) as u64;
                    let b = w(&msg, mi + 2).wrapping_add(w(&kb, ki + 2)) as u64;
                    sum = sum.wrapping_add(a * b);
                }
            }
            assert_eq!(got[8 * p..8 * p + 8], sum.to_le_bytes(), "pass {p}");
        }
    }
}
