//! What the x86_64 and arm64 backends share and is not tied to an
//! instruction set: the stored round keys (XTS's `mdu_aes::__private::SimdKeys`) and
//! the scalar bookkeeping of a request (the blocks before stealing).

use alloc::boxed::Box;

use mdu_aes::__private::{Schedule, SimdKeys};
use zeroize::Zeroize;

use super::XtsMode;

impl SimdKeys for XtsMode {
    type RoundKeys = RoundKeys;

    unsafe fn expand(key: &[u8]) -> Box<RoundKeys> {
        let (k1, k2) = key.split_at(key.len() / 2);
        let mut rk = RoundKeys::zeroed();
        // SAFETY: forwarded from the caller (the CPU has the AES
        // instructions).
        unsafe { rk.expand_into(k1, k2) };
        rk
    }

    fn simd_clone(keys: &RoundKeys) -> Box<RoundKeys> {
        keys.boxed_clone()
    }
}

/// The expanded XTS key: K1's encryption and decryption schedules (the
/// shared [`mdu_aes::__private::RoundKeys`]) and K2's encryption schedule. Zeroized on
/// drop.
///
/// It is only ever made on the heap: [`RoundKeys::zeroed`] allocates it
/// empty and [`RoundKeys::expand_into`] writes the round keys straight into
/// that allocation, so no copy of a schedule is built on the stack and
/// moved. For the same reason it is not `Clone`;
/// [`RoundKeys::boxed_clone`] copies heap to heap.
pub struct RoundKeys {
    /// K1, both directions.
    pub(crate) k1: mdu_aes::__private::RoundKeys,
    /// K2, encryption order (tweaks are always encrypted).
    pub(crate) tweak: Schedule,
}

impl RoundKeys {
    /// All-zero schedules in a new heap allocation, for `expand_into` to
    /// fill in place.
    pub(crate) fn zeroed() -> Box<RoundKeys> {
        Box::new(RoundKeys {
            k1: mdu_aes::__private::RoundKeys {
                enc: [[0; 16]; 15],
                dec: [[0; 16]; 15],
            },
            tweak: [[0; 16]; 15],
        })
    }

    /// Expands the halves `k1` (data) and `k2` (tweak), each 16 or 32
    /// bytes, into these (heap-allocated, zeroed) schedules in place, with
    /// the AES key schedule of `mdu-aes` (no copy outside `self`; the caller
    /// wipes the stack the expansion used).
    ///
    /// # Safety
    ///
    /// The CPU has the AES instructions (AES-NI, FEAT_AES).
    pub(crate) unsafe fn expand_into(&mut self, k1: &[u8], k2: &[u8]) {
        // SAFETY: forwarded from the caller.
        unsafe {
            self.k1.expand_into(k1);
            mdu_aes::__private::expand(k2, &mut self.tweak, None);
        }
    }

    /// A copy in a new heap allocation, written there directly.
    pub(crate) fn boxed_clone(&self) -> Box<RoundKeys> {
        let mut copy = RoundKeys::zeroed();
        copy.k1.enc.copy_from_slice(&self.k1.enc);
        copy.k1.dec.copy_from_slice(&self.k1.dec);
        copy.tweak.copy_from_slice(&self.tweak);
        copy
    }
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        // K1's schedules wipe themselves (`mdu_aes::__private::RoundKeys`).
        self.tweak.zeroize();
    }
}

/// The tweak schedule is zeroized by `Drop`, K1's by its own.
impl zeroize::ZeroizeOnDrop for RoundKeys {}

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
