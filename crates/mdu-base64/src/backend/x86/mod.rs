//! x86_64 backends: the safe entry points, each taking the witness of the
//! features its kernels are compiled for (so no call asks the CPU again).

use mdu_platform::cpu::Witness;

use crate::alphabet::Alphabet;

use super::nibble::{DecodeLayout, EncodeLayout};
use super::{BodyError, needs, scalar};

mod avx2;
mod avx512vbmi;

#[inline]
pub(crate) fn encode_avx512vbmi(
    _: Witness<needs::Avx512Vbmi>,
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) {
    // SAFETY: the witness proves AVX-512 F/BW/VBMI and BMI2, the features
    // the kernel is compiled for; the caller passes `dst.len()` equal to
    // the unpadded encoded length of `src`, the precondition of the kernel.
    unsafe { avx512vbmi::encode(&alphabet.encode, src, dst) }
}

#[inline]
pub(crate) fn decode_avx512vbmi(
    _: Witness<needs::Avx512Vbmi>,
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    // SAFETY: the witness proves AVX-512 F/BW/VBMI and BMI2; the caller
    // passes a body whose length is not 1 mod 4 and a `dst` of its decoded
    // length, the precondition of the kernel.
    unsafe { avx512vbmi::decode_body(&alphabet.decode, src, dst) }
}

#[inline]
pub(crate) fn encode_avx2(
    _: Witness<needs::Avx2>,
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) {
    let (t, enc) = (&alphabet.nibble, &alphabet.encode);
    // SAFETY: the witness proves AVX2; `t` and `enc` are the tables of one
    // alphabet and the kernel's layout flag is the one its tables were
    // built for; the caller passes `dst.len()` equal to the unpadded
    // encoded length of `src`.
    unsafe {
        match t.encode_layout {
            EncodeLayout::Runs => avx2::encode::<false>(t, enc, src, dst),
            EncodeLayout::Any => avx2::encode::<true>(t, enc, src, dst),
        }
    }
}

#[inline]
pub(crate) fn decode_avx2(
    _: Witness<needs::Avx2>,
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    let (t, dec) = (&alphabet.nibble, &alphabet.decode);
    // SAFETY: the witness proves AVX2; `t` and `dec` are the tables of one
    // alphabet and the kernel's layout flag is the one its tables were
    // built for; the caller passes a body whose length is not 1 mod 4 and
    // a `dst` of its decoded length.
    let done = unsafe {
        match t.decode_layout {
            DecodeLayout::Rows => avx2::decode_body::<false>(t, dec, src, dst),
            DecodeLayout::Any => avx2::decode_body::<true>(t, dec, src, dst),
        }
    };
    // The one scalar hand-over: from the first vector with an error on.
    done.or_else(|si| scalar::decode_body_from(dec, src, dst, si))
}
