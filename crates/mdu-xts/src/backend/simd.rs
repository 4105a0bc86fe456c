//! What the x86_64 and arm64 backends share and is not tied to an
//! instruction set: the stored round keys and the scalar bookkeeping of a
//! request (the IVs of a batch of units, the blocks before stealing).

use zeroize::Zeroize;

/// Round keys as stored bytes (`[u8; 16]` each, 15 slots; AES-128 uses 11).
pub(crate) type Schedule = [[u8; 16]; 15];

/// The expanded XTS key: K1's encryption and decryption schedules and K2's
/// encryption schedule. Zeroized on drop.
///
/// It is only ever made on the heap: [`RoundKeys::zeroed`] allocates it
/// empty and each architecture's `RoundKeys::expand_into` writes the round
/// keys straight into that allocation, so no copy of a schedule is built on
/// the stack and moved. For the same reason it is not `Clone`;
/// [`RoundKeys::boxed_clone`] copies heap to heap.
pub(crate) struct RoundKeys {
    /// K1, encryption order.
    pub(crate) enc: Schedule,
    /// K1 for the equivalent inverse cipher (`aesdec` on x86, `AESD` +
    /// `AESIMC` on arm64): reversed, with InvMixColumns applied to the
    /// middle round keys.
    pub(crate) dec: Schedule,
    /// K2, encryption order (tweaks are always encrypted).
    pub(crate) tweak: Schedule,
}

impl RoundKeys {
    /// All-zero schedules in a new heap allocation, for `expand_into` to
    /// fill in place.
    pub(crate) fn zeroed() -> Box<RoundKeys> {
        Box::new(RoundKeys {
            enc: [[0; 16]; 15],
            dec: [[0; 16]; 15],
            tweak: [[0; 16]; 15],
        })
    }

    /// A copy in a new heap allocation, written there directly.
    pub(crate) fn boxed_clone(&self) -> Box<RoundKeys> {
        let mut copy = RoundKeys::zeroed();
        copy.enc.copy_from_slice(&self.enc);
        copy.dec.copy_from_slice(&self.dec);
        copy.tweak.copy_from_slice(&self.tweak);
        copy
    }
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
        self.tweak.zeroize();
    }
}

/// The IVs of units `start .. start + N` of a request: `first + i * step`
/// modulo 2^128, as little-endian integers (the memory layout of an IV).
#[inline(always)]
pub(crate) fn iv_batch<const N: usize>(first: u128, step: u64, start: usize) -> [u128; N] {
    let step = u128::from(step);
    let mut iv = first.wrapping_add((start as u128).wrapping_mul(step));
    let mut out = [0u128; N];
    for slot in out.iter_mut() {
        *slot = iv;
        iv = iv.wrapping_add(step);
    }
    out
}

/// The number of whole blocks of a `len`-byte unit processed before
/// stealing: decryption of a ragged unit keeps its last full block back.
#[inline(always)]
pub(crate) fn bulk_blocks<const ENC: bool>(len: usize) -> usize {
    let full = len / 16;
    if ENC || len.is_multiple_of(16) {
        full
    } else {
        full - 1
    }
}
