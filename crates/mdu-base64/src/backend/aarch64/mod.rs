//! aarch64 backends: the safe entry points, each taking the witness of the
//! features its kernels are compiled for (so no call asks the CPU again).

use mdu_platform::cpu::Witness;

use crate::alphabet::Alphabet;

use super::{BodyError, needs, scalar};

mod neon;

#[inline]
pub(crate) fn encode_neon(
    _: Witness<needs::Neon>,
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) {
    // SAFETY: the witness proves NEON, the feature the kernel is compiled
    // for; the caller passes `dst.len()` equal to the unpadded encoded
    // length of `src`, the precondition of the kernel.
    unsafe { neon::encode(&alphabet.encode, src, dst) }
}

#[inline]
pub(crate) fn decode_neon(
    _: Witness<needs::Neon>,
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    // SAFETY: the witness proves NEON; the caller passes a body whose
    // length is not 1 mod 4 and a `dst` of its decoded length, the
    // precondition of the kernel.
    unsafe { neon::decode_body(alphabet, src, dst) }
}
