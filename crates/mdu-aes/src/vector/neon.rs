//! One block per 128-bit NEON register: NEON (the arm64 baseline) for the
//! moves, the Armv8 AES instructions for the rounds.
//!
//! `AESE` adds its round key before SubBytes and ShiftRows, so a cipher is
//! `AESE`+`AESMC` with round keys 0 to NR-2, `AESE` with round key NR-1 and
//! a plain XOR with round key NR; a whitening before folds into round key
//! 0, one after into round key NR.

use core::arch::aarch64::*;

use super::{Sealed, Vector};
use crate::aarch64::{last_round, round};

/// One AES block in a NEON register; see the [module](super) docs.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Neon(uint8x16_t);

impl Neon {
    /// The register.
    #[inline(always)]
    pub fn raw(self) -> uint8x16_t {
        self.0
    }

    /// A register as a vector.
    ///
    /// # Safety
    ///
    /// None beyond the baseline: kept `unsafe` like every constructor of
    /// the layer.
    #[inline(always)]
    pub unsafe fn from_raw(v: uint8x16_t) -> Neon {
        Neon(v)
    }
}

impl Sealed for Neon {}

impl Vector for Neon {
    const BLOCKS: usize = 1;
    type Block = Neon;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> Neon {
        // SAFETY: 16 readable bytes (the caller); no alignment need.
        Neon(unsafe { vld1q_u8(src) })
    }

    #[inline(always)]
    unsafe fn store(self, dst: *mut u8) {
        // SAFETY: 16 writable bytes (the caller); no alignment need.
        unsafe { vst1q_u8(dst, self.0) }
    }

    #[inline(always)]
    unsafe fn gather(src: *const u8, _: usize) -> Neon {
        // SAFETY: forwarded from the caller.
        unsafe { Neon::load(src) }
    }

    #[inline(always)]
    unsafe fn scatter(self, dst: *mut u8, _: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { self.store(dst) }
    }

    #[inline(always)]
    unsafe fn splat(b: Neon) -> Neon {
        b
    }

    #[inline(always)]
    unsafe fn from_lanes(mut lanes: impl FnMut(usize) -> Neon) -> Neon {
        lanes(0)
    }

    #[inline(always)]
    fn block(x: u128) -> Neon {
        // SAFETY: NEON is the arm64 baseline.
        Neon(unsafe { crate::aarch64::iv_vector(x) })
    }

    #[inline(always)]
    fn lane(self, _: usize) -> Neon {
        self
    }

    #[inline(always)]
    fn xor(self, b: Neon) -> Neon {
        // SAFETY: NEON is the arm64 baseline.
        Neon(unsafe { veorq_u8(self.0, b.0) })
    }

    #[inline(always)]
    fn xor3(self, b: Neon, c: Neon) -> Neon {
        self.xor(b).xor(c)
    }

    #[inline(always)]
    fn shift_in(carry: Neon, _: Neon) -> Neon {
        carry
    }

    #[inline(always)]
    unsafe fn aes<const NR: usize, const ENC: bool, const N: usize>(
        rk: &[Neon; 15],
        mut s: [Neon; N],
        pre: Option<&[Neon; N]>,
        post: Option<&[Neon; N]>,
    ) -> [Neon; N] {
        // Each whitening is matched once, outside its loop (see the x86
        // rounds: matched per register, the chains stopped interleaving).
        // SAFETY: the caller's contract: the CPU has FEAT_AES.
        unsafe {
            match pre {
                Some(pre) => {
                    for (s, t) in s.iter_mut().zip(pre) {
                        s.0 = round::<ENC>(s.0, rk[0].xor(*t).0);
                    }
                }
                None => {
                    for s in s.iter_mut() {
                        s.0 = round::<ENC>(s.0, rk[0].0);
                    }
                }
            }
            for k in &rk[1..NR - 1] {
                for s in s.iter_mut() {
                    s.0 = round::<ENC>(s.0, k.0);
                }
            }
            for s in s.iter_mut() {
                s.0 = last_round::<ENC>(s.0, rk[NR - 1].0);
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
        }
        s
    }
}
