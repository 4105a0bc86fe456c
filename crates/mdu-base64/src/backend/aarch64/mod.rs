//! aarch64 backends: CPU detection and the safe entry points that check it.

use crate::alphabet::Alphabet;

use super::{BodyError, scalar};

mod neon;

/// NEON (Advanced SIMD) usable. With `std`, asked of the CPU at run time
/// (cached by the standard library); without it, known at compile time
/// (NEON is part of every aarch64 target that enables it).
#[inline]
pub(crate) fn has_neon() -> bool {
    #[cfg(feature = "std")]
    {
        std::arch::is_aarch64_feature_detected!("neon")
    }
    #[cfg(not(feature = "std"))]
    {
        cfg!(target_feature = "neon")
    }
}

#[inline]
pub(crate) fn encode_neon(alphabet: &Alphabet, src: &[u8], dst: &mut [u8]) {
    if has_neon() {
        // SAFETY: `has_neon` confirmed NEON (at run time, or at compile time
        // for the target); the caller passes `dst.len()` equal to the
        // unpadded encoded length of `src`, the precondition of the kernel.
        unsafe { neon::encode(&alphabet.encode, src, dst) }
    } else {
        scalar::encode(&alphabet.encode, src, dst)
    }
}

#[inline]
pub(crate) fn decode_neon(
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    if has_neon() {
        // SAFETY: `has_neon` confirmed NEON; the caller passes a body whose
        // length is not 1 mod 4 and a `dst` of its decoded length, the
        // precondition of the kernel.
        unsafe { neon::decode_body(alphabet, src, dst) }
    } else {
        scalar::decode_body(&alphabet.decode, src, dst)
    }
}
