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
    for (i, s) in s.iter_mut().enumerate() {
        *s = match pre {
            Some(pre) => s.xor3(pre[i], rk[0]),
            None => s.xor(rk[0]),
        };
    }
    for k in &rk[1..NR] {
        for s in s.iter_mut() {
            // SAFETY: the caller's contract.
            *s = unsafe { s.round::<ENC>(*k) };
        }
    }
    for (i, s) in s.iter_mut().enumerate() {
        let last = match post {
            Some(post) => rk[NR].xor(post[i]),
            None => rk[NR],
        };
        // SAFETY: the caller's contract.
        *s = unsafe { s.last::<ENC>(last) };
    }
    s
}
