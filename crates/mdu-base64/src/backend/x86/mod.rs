//! x86_64 backends: CPU detection and the safe entry points that check it.

use crate::alphabet::Alphabet;

use super::nibble::{DecodeLayout, EncodeLayout};
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
    let (t, enc) = (&alphabet.nibble, &alphabet.encode);
    if !has_avx2() {
        return scalar::encode(enc, src, dst);
    }
    // SAFETY: `has_avx2` confirmed AVX2 at run time; `t` and `enc` are the
    // tables of one alphabet and the kernel's layout flag is the one its
    // tables were built for; the caller passes `dst.len()` equal to the
    // unpadded encoded length of `src`.
    unsafe {
        match t.encode_layout {
            EncodeLayout::Runs => avx2::encode::<false>(t, enc, src, dst),
            EncodeLayout::Any => avx2::encode::<true>(t, enc, src, dst),
        }
    }
}

#[inline]
pub(crate) fn decode_avx2(
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    let (t, dec) = (&alphabet.nibble, &alphabet.decode);
    if !has_avx2() {
        return scalar::decode_body(dec, src, dst);
    }
    // SAFETY: `has_avx2` confirmed AVX2 at run time; `t` and `dec` are the
    // tables of one alphabet and the kernel's layout flag is the one its
    // tables were built for; the caller passes a body whose length is not
    // 1 mod 4 and a `dst` of its decoded length.
    let done = unsafe {
        match t.decode_layout {
            DecodeLayout::Rows => avx2::decode_body::<false>(t, dec, src, dst),
            DecodeLayout::Any => avx2::decode_body::<true>(t, dec, src, dst),
        }
    };
    // The one scalar hand-over: from the first vector with an error on.
    done.or_else(|si| scalar::decode_body_from(dec, src, dst, si))
}
