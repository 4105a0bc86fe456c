//! The AES rounds of the three x86_64 widths, written once over the four
//! round instructions each width supplies ([`Rounds`]): the whitening
//! before is XORed with round key 0 (one `vpternlogq` on zmm), the one
//! after is folded into the last round key.

use super::Vector;

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
