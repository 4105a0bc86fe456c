//! The AES rounds on 128-bit NEON registers (`mdu_platform::simd`'s `Neon`):
//! the Armv8 AES instructions.
//!
//! `AESE` adds its round key before SubBytes and ShiftRows, so a cipher is
//! `AESE`+`AESMC` with round keys 0 to NR-2, `AESE` with round key NR-1 and
//! a plain XOR with round key NR; a whitening before folds into round key
//! 0, one after into round key NR.

use super::{Neon, Register, Sealed, Vector};
use crate::aarch64::{last_round, round};

impl Sealed for Neon {}

impl Vector for Neon {
    type Block = Neon;

    #[inline(always)]
    unsafe fn aes<const NR: usize, const ENC: bool, const N: usize>(
        rk: &[Neon; 15],
        mut s: [Neon; N],
        pre: Option<&[Neon; N]>,
        post: Option<&[Neon; N]>,
    ) -> [Neon; N] {
        // One round, as `round` on the raw registers.
        let r = |s: Neon, k: Neon| {
            // SAFETY: the caller's contract: the CPU has FEAT_AES (and NEON,
            // the baseline, for `from_raw`).
            unsafe { Neon::from_raw(round::<ENC>(s.raw(), k.raw())) }
        };
        // Each whitening is matched once, outside its loop (see the x86
        // rounds: matched per register, the chains stopped interleaving).
        match pre {
            Some(pre) => {
                for (s, t) in s.iter_mut().zip(pre) {
                    *s = r(*s, rk[0].xor(*t));
                }
            }
            None => {
                for s in s.iter_mut() {
                    *s = r(*s, rk[0]);
                }
            }
        }
        for k in &rk[1..NR - 1] {
            for s in s.iter_mut() {
                *s = r(*s, *k);
            }
        }
        for s in s.iter_mut() {
            // SAFETY: as in `r`.
            *s = unsafe { Neon::from_raw(last_round::<ENC>(s.raw(), rk[NR - 1].raw())) };
        }
        match post {
            Some(post) => {
                for (s, t) in s.iter_mut().zip(post) {
                    *s = s.xor3(rk[NR], *t);
                }
            }
            None => {
                for s in s.iter_mut() {
                    *s = s.xor(rk[NR]);
                }
            }
        }
        s
    }
}
