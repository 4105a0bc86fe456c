//! The expanded AES key of the SIMD backends, on the heap and wiped on drop.

use alloc::boxed::Box;

use zeroize::Zeroize;

use crate::Schedule;

/// One AES key expanded for the SIMD backends: its encryption schedule and
/// the schedule of the equivalent inverse cipher. Zeroized on drop.
///
/// It is only ever made on the heap: [`RoundKeys::zeroed`] allocates it
/// empty and `RoundKeys::expand_into` (where SIMD backends are compiled)
/// writes the round keys straight into that allocation, so no copy of a
/// schedule is built on the stack and moved. For the same reason it is not
/// `Clone`; [`RoundKeys::boxed_clone`] copies heap to heap.
///
/// ```
/// let keys = mdu_aes::__private::RoundKeys::zeroed();
/// assert_eq!(keys.enc, [[0; 16]; 15]);
/// ```
pub struct RoundKeys {
    /// Encryption order.
    pub enc: Schedule,
    /// The equivalent inverse cipher (`aesdec` on x86, `AESD` + `AESIMC` on
    /// arm64): reversed, with InvMixColumns applied to the middle round
    /// keys.
    pub dec: Schedule,
}

impl RoundKeys {
    /// All-zero schedules in a new heap allocation, for `expand_into` to
    /// fill in place.
    ///
    /// ```
    /// assert_eq!(mdu_aes::__private::RoundKeys::zeroed().dec[14], [0; 16]);
    /// ```
    pub fn zeroed() -> Box<RoundKeys> {
        Box::new(RoundKeys {
            enc: [[0; 16]; 15],
            dec: [[0; 16]; 15],
        })
    }

    /// A copy in a new heap allocation, written there directly.
    ///
    /// ```
    /// let a = mdu_aes::__private::RoundKeys::zeroed();
    /// assert_eq!(a.boxed_clone().enc, a.enc);
    /// ```
    pub fn boxed_clone(&self) -> Box<RoundKeys> {
        let mut copy = RoundKeys::zeroed();
        copy.enc.copy_from_slice(&self.enc);
        copy.dec.copy_from_slice(&self.dec);
        copy
    }
}

impl Drop for RoundKeys {
    fn drop(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
    }
}

/// Both schedules are zeroized by `Drop`.
impl zeroize::ZeroizeOnDrop for RoundKeys {}
