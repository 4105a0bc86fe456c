//! The AES rounds of the three x86_64 widths, written once over the four
//! round instructions each width supplies ([`Rounds`]): the whitening
//! before is XORed with round key 0 (one `vpternlogq` on zmm), the one
//! after is folded into the last round key. The registers and their moves
//! are `mdu_platform::simd`'s: xmm needs AES-NI for the rounds, ymm (AVX2) and
//! zmm (AVX-512 F) need VAES.

use core::arch::x86_64::*;

use super::{Sealed, Vector, Xmm, Ymm, Zmm};

/// The x86 round instructions of one width (`aesenc`, `aesenclast`,
/// `aesdec`, `aesdeclast` or their VAES forms): a round, then the XOR of
/// `k`.
pub(crate) trait Rounds: Vector {
    /// One round of the cipher (`ENC`) or the equivalent inverse cipher.
    ///
    /// # Safety
    ///
    /// The CPU has this width's AES instructions.
    unsafe fn round<const ENC: bool>(self, k: Self) -> Self;
    /// The last round (no MixColumns).
    ///
    /// # Safety
    ///
    /// As for [`Rounds::round`].
    unsafe fn last<const ENC: bool>(self, k: Self) -> Self;
}

/// [`Vector::aes`] for an x86 width.
///
/// # Safety
///
/// The CPU has this width's AES instructions.
#[inline(always)]
pub(crate) unsafe fn aes<V: Rounds, const NR: usize, const ENC: bool, const N: usize>(
    rk: &[V; 15],
    mut s: [V; N],
    pre: Option<&[V; N]>,
    post: Option<&[V; N]>,
) -> [V; N] {
    // Each whitening is matched once, outside its loop. Matched per
    // register inside the loop, the same arithmetic led the compiler to run
    // the chains one after the other instead of round by round (XTS
    // AES-128 on ymm at 0.72 of the interleaved speed, Zen 3).
    match pre {
        Some(pre) => {
            for (s, t) in s.iter_mut().zip(pre) {
                *s = s.xor3(*t, rk[0]);
            }
        }
        None => {
            for s in s.iter_mut() {
                *s = s.xor(rk[0]);
            }
        }
    }
    for k in &rk[1..NR] {
        for s in s.iter_mut() {
            // SAFETY: the caller's contract.
            *s = unsafe { s.round::<ENC>(*k) };
        }
    }
    match post {
        Some(post) => {
            for (s, t) in s.iter_mut().zip(post) {
                // SAFETY: the caller's contract.
                *s = unsafe { s.last::<ENC>(rk[NR].xor(*t)) };
            }
        }
        None => {
            for s in s.iter_mut() {
                // SAFETY: the caller's contract.
                *s = unsafe { s.last::<ENC>(rk[NR]) };
            }
        }
    }
    s
}

/// The AES view of one x86 width: [`Vector`] through [`aes`], [`Rounds`]
/// from its four round instructions.
macro_rules! width {
    ($v:ident: $enc:ident, $enclast:ident, $dec:ident, $declast:ident) => {
        impl Sealed for $v {}

        impl Vector for $v {
            type Block = Xmm;

            #[inline(always)]
            unsafe fn aes<const NR: usize, const ENC: bool, const N: usize>(
                rk: &[$v; 15],
                s: [$v; N],
                pre: Option<&[$v; N]>,
                post: Option<&[$v; N]>,
            ) -> [$v; N] {
                // SAFETY: the caller's contract.
                unsafe { aes::<$v, NR, ENC, N>(rk, s, pre, post) }
            }
        }

        impl Rounds for $v {
            #[inline(always)]
            unsafe fn round<const ENC: bool>(self, k: $v) -> $v {
                // SAFETY: the caller's contract: the CPU has this width's
                // AES (and so its base features, which `from_raw` needs).
                unsafe {
                    $v::from_raw(if ENC {
                        $enc(self.raw(), k.raw())
                    } else {
                        $dec(self.raw(), k.raw())
                    })
                }
            }

            #[inline(always)]
            unsafe fn last<const ENC: bool>(self, k: $v) -> $v {
                // SAFETY: as in `round`.
                unsafe {
                    $v::from_raw(if ENC {
                        $enclast(self.raw(), k.raw())
                    } else {
                        $declast(self.raw(), k.raw())
                    })
                }
            }
        }
    };
}

width!(Xmm: _mm_aesenc_si128, _mm_aesenclast_si128, _mm_aesdec_si128, _mm_aesdeclast_si128);
width!(Ymm: _mm256_aesenc_epi128, _mm256_aesenclast_epi128, _mm256_aesdec_epi128, _mm256_aesdeclast_epi128);
width!(Zmm: _mm512_aesenc_epi128, _mm512_aesenclast_epi128, _mm512_aesdec_epi128, _mm512_aesdeclast_epi128);
