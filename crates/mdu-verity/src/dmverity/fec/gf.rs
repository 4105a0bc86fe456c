//! GF(2^8) with the field polynomial `0x11d` and primitive element `x`:
//! the multiplication, the generator polynomial of the code, the
//! per-coefficient multipliers the encoder kernels use, and the log tables
//! of the decoder.

use super::MAX_ROOTS;

/// GF(2^8) multiplication modulo `x^8 + x^4 + x^3 + x^2 + 1` (`0x11d`).
pub(crate) const fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let carry = a & 0x80;
        a <<= 1;
        if carry != 0 {
            a ^= 0x1d;
        }
        b >>= 1;
    }
    p
}

/// The generator polynomial `prod (x - alpha^i)`, `i` in `0..roots`, as
/// coefficients highest degree first (`g[0] == 1`); entries past `roots`
/// are zero.
pub(crate) fn generator(roots: usize) -> [u8; MAX_ROOTS as usize + 1] {
    let mut g = [0u8; MAX_ROOTS as usize + 1];
    g[0] = 1;
    let mut root = 1u8; // alpha^0
    for i in 0..roots {
        // Multiply by (x + root): g'[j] = g[j] + root * g[j - 1], with g
        // stored highest degree first and degree i + 1 after this step.
        for j in (1..=i + 1).rev() {
            g[j] ^= gf_mul(root, g[j - 1]);
        }
        root = gf_mul(root, 2);
    }
    g
}

/// Multiplication by one generator coefficient: a 256-entry table for the
/// portable kernel, two 16-entry nibble tables for `vpshufb` and `tbl`,
/// and the bit matrix for the GFNI affine instruction.
#[derive(Clone, Copy)]
pub(crate) struct MulBy {
    pub(crate) table: [u8; 256],
    /// Read by the SIMD kernels only.
    #[cfg_attr(not(simd), allow(dead_code))]
    pub(crate) lo: [u8; 16],
    #[cfg_attr(not(simd), allow(dead_code))]
    pub(crate) hi: [u8; 16],
    /// Read by the x86 kernels (and the GFNI test) only.
    #[cfg_attr(not(x86_simd), allow(dead_code))]
    pub(crate) matrix: u64,
}

impl MulBy {
    pub(crate) fn new(c: u8) -> MulBy {
        let mut table = [0u8; 256];
        for (x, t) in table.iter_mut().enumerate() {
            *t = gf_mul(x as u8, c);
        }
        let mut lo = [0u8; 16];
        let mut hi = [0u8; 16];
        for i in 0..16 {
            lo[i] = table[i];
            hi[i] = table[i << 4];
        }
        // GF2P8AFFINEQB: bit i of the result is the parity of
        // (byte 7 - i of the matrix) & x. Multiplying by c is linear: bit
        // k of x contributes c * x^k.
        let mut matrix = 0u64;
        for i in 0..8 {
            let mut row = 0u8;
            for k in 0..8 {
                if gf_mul(c, 1 << k) >> i & 1 != 0 {
                    row |= 1 << k;
                }
            }
            matrix |= u64::from(row) << (8 * (7 - i));
        }
        MulBy {
            table,
            lo,
            hi,
            matrix,
        }
    }
}

/// The code for one number of roots: the multipliers of `g_1..g_roots`.
pub(crate) struct Code {
    pub(crate) roots: usize,
    pub(crate) mul: Vec<MulBy>,
}

impl Code {
    pub(crate) fn new(roots: u8) -> Code {
        let roots = usize::from(roots);
        let g = generator(roots);
        Code {
            roots,
            mul: g[1..=roots].iter().map(|&c| MulBy::new(c)).collect(),
        }
    }
}

/// Log and antilog tables of GF(2^8)/0x11d with generator `x`.
pub(crate) struct Gf {
    exp: [u8; 512],
    log: [u8; 256],
}

impl Gf {
    pub(crate) fn new() -> Gf {
        let mut exp = [0u8; 512];
        let mut log = [0u8; 256];
        let mut x = 1u8;
        for i in 0..255 {
            exp[i] = x;
            exp[i + 255] = x;
            log[usize::from(x)] = i as u8;
            x = gf_mul(x, 2);
        }
        exp[510] = exp[0];
        exp[511] = exp[1];
        Gf { exp, log }
    }

    pub(crate) fn mul(&self, a: u8, b: u8) -> u8 {
        if a == 0 || b == 0 {
            0
        } else {
            self.exp[usize::from(self.log[usize::from(a)]) + usize::from(self.log[usize::from(b)])]
        }
    }

    /// `a / b`, `b != 0`.
    pub(crate) fn div(&self, a: u8, b: u8) -> u8 {
        if a == 0 {
            0
        } else {
            let l =
                usize::from(self.log[usize::from(a)]) + 255 - usize::from(self.log[usize::from(b)]);
            self.exp[l]
        }
    }

    /// `x^e` (alpha to the power `e`).
    pub(crate) fn pow_alpha(&self, e: usize) -> u8 {
        self.exp[e % 255]
    }

    /// `p(x)` for a polynomial stored lowest degree first.
    pub(crate) fn eval(&self, p: &[u8], x: u8) -> u8 {
        p.iter().rev().fold(0u8, |acc, &c| self.mul(acc, x) ^ c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_coefficients_match_the_published_ones() {
        assert_eq!(&generator(2)[..3], &[1, 3, 2]);
        assert_eq!(&generator(3)[..4], &[1, 7, 0x0e, 8]);
        assert_eq!(&generator(4)[..5], &[1, 0x0f, 0x36, 0x78, 0x40]);
        let g24 = [
            0x01, 0x7a, 0x76, 0xa9, 0x46, 0xb2, 0xed, 0xd8, 0x66, 0x73, 0x96, 0xe5, 0x49, 0x82,
            0x48, 0x3d, 0x2b, 0xce, 0x01, 0xed, 0xf7, 0x7f, 0xd9, 0x90, 0x75,
        ];
        assert_eq!(generator(24), g24);
    }

    #[test]
    fn gfni_matrix_multiplies_like_the_table() {
        for c in 0..=255u8 {
            let m = MulBy::new(c);
            for x in 0..=255u8 {
                // The affine product, bit by bit, as GF2P8AFFINEQB defines it.
                let mut y = 0u8;
                for i in 0..8 {
                    let row = (m.matrix >> (8 * (7 - i))) as u8;
                    y |= (((row & x).count_ones() & 1) as u8) << i;
                }
                assert_eq!(y, m.table[usize::from(x)], "c {c} x {x}");
            }
        }
    }
}
