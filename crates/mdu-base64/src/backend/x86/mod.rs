//! x86_64 backends: CPU detection and the safe entry points that check it.

use crate::alphabet::Alphabet;

use super::{BodyError, scalar};

mod avx2;
mod avx512vbmi;

cpufeatures::new!(cpu_avx2, "avx2");
cpufeatures::new!(cpu_avx512vbmi, "avx512f", "avx512bw", "avx512vbmi", "bmi2");

/// AVX2 usable (CPU and OS); cached by `cpufeatures` in an atomic.
#[inline]
pub(crate) fn has_avx2() -> bool {
    cpu_avx2::get()
}

/// AVX-512 F/BW/VBMI (and BMI2) usable (CPU and OS, zmm state enabled); cached.
#[inline]
pub(crate) fn has_avx512vbmi() -> bool {
    cpu_avx512vbmi::get()
}

#[inline]
pub(crate) fn encode_avx512vbmi(alphabet: &Alphabet, src: &[u8], dst: &mut [u8]) {
    if has_avx512vbmi() {
        // SAFETY: `has_avx512vbmi` confirmed AVX-512 F/BW/VBMI and BMI2 at run time;
        // the caller passes `dst.len()` equal to the unpadded encoded length
        // of `src`, the precondition of the kernel.
        unsafe { avx512vbmi::encode(&alphabet.encode, src, dst) }
    } else {
        scalar::encode(&alphabet.encode, src, dst)
    }
}

#[inline]
pub(crate) fn decode_avx512vbmi(
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    if has_avx512vbmi() {
        // SAFETY: `has_avx512vbmi` confirmed AVX-512 F/BW/VBMI and BMI2 at run time;
        // the caller passes a body whose length is not 1 mod 4 and a `dst`
        // of its decoded length, the precondition of the kernel.
        unsafe { avx512vbmi::decode_body(&alphabet.decode, src, dst) }
    } else {
        scalar::decode_body(&alphabet.decode, src, dst)
    }
}

#[inline]
pub(crate) fn encode_avx2(alphabet: &Alphabet, src: &[u8], dst: &mut [u8]) {
    if has_avx2() && alphabet.rfc_prefix {
        // SAFETY: `has_avx2` confirmed AVX2 at run time; the alphabet has the
        // RFC 4648 layout for symbols 0..=61 the kernel's offsets assume; the
        // kernel bounds every access by `src.len()` and `dst.len()`.
        unsafe { avx2::encode(&alphabet.encode, src, dst) }
    } else {
        scalar::encode(&alphabet.encode, src, dst)
    }
}

#[inline]
pub(crate) fn decode_avx2(
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    if has_avx2() && alphabet.rfc_prefix {
        // SAFETY: `has_avx2` confirmed AVX2 at run time; the alphabet has the
        // RFC 4648 layout for symbols 0..=61; the caller passes a body whose
        // length is not 1 mod 4 and a `dst` of its decoded length.
        unsafe { avx2::decode_body(&alphabet.encode, &alphabet.decode, src, dst) }
    } else {
        scalar::decode_body(&alphabet.decode, src, dst)
    }
}
