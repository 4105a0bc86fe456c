//! Poly1305's polynomial evaluation without the final addition of `s`:
//! what Adiantum hashes with (the kernel's `poly1305_core_*`, the
//! reference's `poly1305_h_rbar`).
//!
//! For 16-byte blocks `c_1 .. c_q` of a message, each read as a
//! little-endian number with `2^128` added (a last block of `n < 16` bytes
//! gets `2^(8n)` instead: Poly1305's padding), and `r` the clamped key,
//!
//! ```text
//! h = (((c_1 · r + c_2) · r + …) + c_q) · r   mod 2^130 − 5
//! ```
//!
//! and the result is `h mod 2^128`. Adiantum adds no `s`: its two hashes
//! are summed, and the sum is added to a block, mod 2^128.
//!
//! Five 26-bit limbs with 32 × 32 → 64-bit products (the layout of
//! poly1305-donna-32): portable, branch-free and free of data-dependent
//! indexing on every target, 32-bit ARM included. Adiantum runs it over
//! three blocks of header and two blocks per KiB of message, so its speed
//! hardly shows; NH is the hot loop.

use zeroize::Zeroize;

const MASK26: u32 = (1 << 26) - 1;

/// A clamped Poly1305 key `r` in 26-bit limbs, with `5 · r_1 .. 5 · r_4`
/// precomputed; wiped on drop.
#[derive(Clone)]
pub(crate) struct PolyKey {
    r: [u32; 5],
    /// `5 · r[i + 1]`: the factor of the limbs that wrap past 2^130.
    r5: [u32; 4],
}

impl PolyKey {
    /// The key `r` (16 bytes, clamped here).
    pub(crate) fn new(r: &[u8; 16]) -> PolyKey {
        let t = |i: usize| u32::from_le_bytes([r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]]);
        let (t0, t1, t2, t3) = (t(0), t(1), t(2), t(3));
        // r &= 0x0ffffffc_0ffffffc_0ffffffc_0fffffff, split into 26-bit limbs.
        let r = [
            t0 & 0x03ff_ffff,
            ((t0 >> 26) | (t1 << 6)) & 0x03ff_ff03,
            ((t1 >> 20) | (t2 << 12)) & 0x03ff_c0ff,
            ((t2 >> 14) | (t3 << 18)) & 0x03f0_3fff,
            (t3 >> 8) & 0x000f_ffff,
        ];
        PolyKey {
            r,
            r5: [r[1] * 5, r[2] * 5, r[3] * 5, r[4] * 5],
        }
    }

    /// A fresh evaluation under this key (`h = 0`).
    pub(crate) fn start(&self) -> Poly<'_> {
        Poly {
            key: self,
            h: [0; 5],
        }
    }
}

impl Drop for PolyKey {
    fn drop(&mut self) {
        self.r.zeroize();
        self.r5.zeroize();
    }
}

/// One evaluation in progress: the accumulator `h`, wiped on drop.
pub(crate) struct Poly<'k> {
    key: &'k PolyKey,
    h: [u32; 5],
}

impl Poly<'_> {
    /// Absorbs `data`, a whole number of 16-byte blocks (a trailing partial
    /// block is ignored: use [`finish_with`](Self::finish_with)).
    pub(crate) fn blocks(&mut self, data: &[u8]) {
        for block in data.chunks_exact(16) {
            self.block(block.try_into().expect("16 bytes"), 1 << 24);
        }
    }

    /// Absorbs `data` of any length, its last partial block padded with
    /// `1` then zeros, and returns the evaluation.
    pub(crate) fn finish_with(mut self, data: &[u8]) -> u128 {
        self.blocks(data);
        let tail = data.chunks_exact(16).remainder();
        if !tail.is_empty() {
            let mut last = [0u8; 16];
            last[..tail.len()].copy_from_slice(tail);
            last[tail.len()] = 1;
            self.block(&last, 0);
            last.zeroize();
        }
        self.finish()
    }

    /// `h mod 2^130 − 5`, then mod 2^128.
    pub(crate) fn finish(mut self) -> u128 {
        let [mut h0, mut h1, mut h2, mut h3, mut h4] = self.h;
        // Carry fully: every limb below 2^26, h below 2^130 + small.
        let mut c;
        c = h1 >> 26;
        h1 &= MASK26;
        h2 += c;
        c = h2 >> 26;
        h2 &= MASK26;
        h3 += c;
        c = h3 >> 26;
        h3 &= MASK26;
        h4 += c;
        c = h4 >> 26;
        h4 &= MASK26;
        h0 += c * 5;
        c = h0 >> 26;
        h0 &= MASK26;
        h1 += c;

        // g = h + 5 − 2^130; take g when it does not go negative (h ≥ p).
        let mut g0 = h0.wrapping_add(5);
        c = g0 >> 26;
        g0 &= MASK26;
        let mut g1 = h1.wrapping_add(c);
        c = g1 >> 26;
        g1 &= MASK26;
        let mut g2 = h2.wrapping_add(c);
        c = g2 >> 26;
        g2 &= MASK26;
        let mut g3 = h3.wrapping_add(c);
        c = g3 >> 26;
        g3 &= MASK26;
        let g4 = h4.wrapping_add(c).wrapping_sub(1 << 26);
        // All ones when g4 did not borrow (h ≥ p), else zero.
        let take_g = (g4 >> 31).wrapping_sub(1);
        let pick = |h: u32, g: u32| (h & !take_g) | (g & take_g);
        let limbs = [
            pick(h0, g0),
            pick(h1, g1),
            pick(h2, g2),
            pick(h3, g3),
            pick(h4, g4 & MASK26),
        ];
        self.h.zeroize();
        limbs
            .iter()
            .enumerate()
            .fold(0u128, |acc, (i, &l)| acc | (u128::from(l) << (26 * i)))
    }

    /// `h = (h + block + hibit · 2^104) · r`, partly reduced.
    #[inline(always)]
    fn block(&mut self, m: &[u8; 16], hibit: u32) {
        let w = |i: usize| u32::from_le_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
        let [r0, r1, r2, r3, r4] = self.key.r.map(u64::from);
        let [s1, s2, s3, s4] = self.key.r5.map(u64::from);
        let h0 = u64::from(self.h[0] + (w(0) & MASK26));
        let h1 = u64::from(self.h[1] + ((w(3) >> 2) & MASK26));
        let h2 = u64::from(self.h[2] + ((w(6) >> 4) & MASK26));
        let h3 = u64::from(self.h[3] + ((w(9) >> 6) & MASK26));
        let h4 = u64::from(self.h[4] + ((w(12) >> 8) | hibit));

        let d0 = h0 * r0 + h1 * s4 + h2 * s3 + h3 * s2 + h4 * s1;
        let mut d1 = h0 * r1 + h1 * r0 + h2 * s4 + h3 * s3 + h4 * s2;
        let mut d2 = h0 * r2 + h1 * r1 + h2 * r0 + h3 * s4 + h4 * s3;
        let mut d3 = h0 * r3 + h1 * r2 + h2 * r1 + h3 * r0 + h4 * s4;
        let mut d4 = h0 * r4 + h1 * r3 + h2 * r2 + h3 * r1 + h4 * r0;

        // The limbs stay below 2^26 + small, so the sums above fit 64 bits.
        let mut c = d0 >> 26;
        let mut h0 = (d0 as u32) & MASK26;
        d1 += c;
        c = d1 >> 26;
        let h1 = (d1 as u32) & MASK26;
        d2 += c;
        c = d2 >> 26;
        let h2 = (d2 as u32) & MASK26;
        d3 += c;
        c = d3 >> 26;
        let h3 = (d3 as u32) & MASK26;
        d4 += c;
        c = d4 >> 26;
        let h4 = (d4 as u32) & MASK26;
        h0 += (c as u32) * 5;
        let c = h0 >> 26;
        h0 &= MASK26;
        self.h = [h0, h1 + c, h2, h3, h4];
    }
}

impl Drop for Poly<'_> {
    fn drop(&mut self) {
        self.h.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::hex;
    use alloc::vec::Vec;

    /// RFC 8439, 2.5.2: the tag is the evaluation plus `s`, mod 2^128.
    #[test]
    fn rfc8439_tag() {
        let key = hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b");
        let msg = b"Cryptographic Forum Research Group";
        let k = PolyKey::new(key[..16].try_into().unwrap());
        let s = u128::from_le_bytes(key[16..].try_into().unwrap());
        let tag = k.start().finish_with(msg).wrapping_add(s);
        assert_eq!(
            tag.to_le_bytes().as_slice(),
            hex("a8061dc1305136c6c22b8baf0c0127a9")
        );
    }

    /// RFC 8439, appendix A.3, tests 6 to 11: accumulators that reach
    /// or pass 2^130 − 5, where the final reduction must subtract p, and
    /// carries through every limb.
    #[test]
    fn rfc8439_final_reduction_cases() {
        // (r, s, message, tag).
        let cases = [
            (
                "02000000000000000000000000000000",
                "00000000000000000000000000000000",
                "ffffffffffffffffffffffffffffffff",
                "03000000000000000000000000000000",
            ),
            (
                "02000000000000000000000000000000",
                "ffffffffffffffffffffffffffffffff",
                "02000000000000000000000000000000",
                "03000000000000000000000000000000",
            ),
            (
                "01000000000000000000000000000000",
                "00000000000000000000000000000000",
                "fffffffffffffffffffffffffffffffff0ffffffffffffffffffffffffffffff\
                 11000000000000000000000000000000",
                "05000000000000000000000000000000",
            ),
            (
                "01000000000000000000000000000000",
                "00000000000000000000000000000000",
                "fffffffffffffffffffffffffffffffffbfefefefefefefefefefefefefefefe\
                 01010101010101010101010101010101",
                "00000000000000000000000000000000",
            ),
            (
                "02000000000000000000000000000000",
                "00000000000000000000000000000000",
                "fdffffffffffffffffffffffffffffff",
                "faffffffffffffffffffffffffffffff",
            ),
            (
                "01000000000000000400000000000000",
                "00000000000000000000000000000000",
                "e33594d7505e43b900000000000000003394d7505e4379cd01000000000000000000000000000000000000000000000001000000000000000000000000000000",
                "14000000000000005500000000000000",
            ),
        ];
        for (i, (r, s, m, tag)) in cases.iter().enumerate() {
            let k = PolyKey::new(hex(r).as_slice().try_into().unwrap());
            let s = u128::from_le_bytes(hex(s).try_into().unwrap());
            let m: Vec<u8> = hex(&m.replace(char::is_whitespace, ""));
            let got = k.start().finish_with(&m).wrapping_add(s);
            assert_eq!(got.to_le_bytes().as_slice(), hex(tag), "case {i}");
        }
    }

    /// Against RustCrypto's Poly1305 keyed with `s = 0` (an independent
    /// implementation), over lengths 0 to 100 (partial last blocks) and
    /// keys and messages of all-ones bytes (the largest limbs).
    #[test]
    fn matches_rustcrypto_poly1305_with_a_zero_s() {
        use ::poly1305::Poly1305;
        use ::poly1305::universal_hash::KeyInit;
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        };
        for len in 0..=100usize {
            for fill in [None, Some(0xffu8)] {
                let r: [u8; 16] = core::array::from_fn(|_| fill.unwrap_or_else(&mut next));
                let m: Vec<u8> = (0..len).map(|_| fill.unwrap_or_else(&mut next)).collect();
                let mut key = [0u8; 32];
                key[..16].copy_from_slice(&r);
                let want = Poly1305::new(&key.into()).compute_unpadded(&m);
                let got = PolyKey::new(&r).start().finish_with(&m);
                assert_eq!(got.to_le_bytes(), <[u8; 16]>::from(want), "len {len}");
            }
        }
    }
}
