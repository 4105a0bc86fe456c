//! arm64 backends: the tweak doublings of the kernel, and XTS's kernel
//! table on this target (`mdu_aes::__private::Kernels`); the key schedule, the
//! vectors and the AES rounds are `mdu-aes`'s (`mdu_aes::__private::vector::Neon`),
//! the XTS algorithm itself is `backend::driver`.
//!
//! Conventions: a tweak is a 128-bit little-endian integer in a vector
//! register (byte `i` of the tweak in lane `i`, so the 64-bit lane 0 holds
//! the low half); multiplying by x shifts it left by one and folds bit 127
//! back as 0x87.
//!
//! The instructions split an AES round differently from the x86 ones:
//! `AESE` is AddRoundKey, SubBytes, ShiftRows (the key comes first) and
//! `AESMC` is MixColumns, so a cipher is `AESE`+`AESMC` with round keys 0 to
//! NR-2, `AESE` with round key NR-1 and a plain XOR with round key NR.
//! Decryption runs the equivalent inverse cipher the same way with `AESD`
//! and `AESIMC`.

use core::arch::aarch64::*;

use super::XtsMode;

pub(crate) mod ce;

/// `t * x` in GF(2^128), by shifts and a conditional XOR.
///
/// Both 64-bit halves are doubled; the sign masks of bits 63 and 127, with
/// the halves swapped, select the carry into bit 64 and the reduction 0x87.
#[inline]
#[target_feature(enable = "neon")]
pub(crate) fn mul_x(t: uint8x16_t) -> uint8x16_t {
    let t = vreinterpretq_u64_u8(t);
    let poly = vcombine_u64(vcreate_u64(0x87), vcreate_u64(1));
    let signs = vreinterpretq_u64_s64(vshrq_n_s64::<63>(vreinterpretq_s64_u64(t)));
    let carries = vandq_u64(vextq_u64::<1>(signs, signs), poly);
    vreinterpretq_u8_u64(veorq_u64(vaddq_u64(t, t), carries))
}

/// `t * x^8` in GF(2^128): a one-byte shift of the whole tweak, and the
/// byte shifted out reduced by a carry-less multiply with 0x87 (`PMULL`).
#[inline]
#[target_feature(enable = "aes")]
pub(crate) fn mul_x8(t: uint8x16_t) -> uint8x16_t {
    let zero = vdupq_n_u8(0);
    let shifted = vextq_u8::<15>(zero, t);
    let top = vgetq_lane_u64::<0>(vreinterpretq_u64_u8(vextq_u8::<15>(t, zero)));
    let reduced = vreinterpretq_u8_p128(vmull_p64(top, 0x87));
    veorq_u8(shifted, reduced)
}

// The one entry point, with the witness of its backend.
mdu_aes::__private::kernels!(XtsMode, ce);

#[cfg(test)]
mod tests {
    use super::super::tests::features;
    use super::*;
    use crate::Backend;
    use mdu_aes::__private::CpuFeatures;
    use mdu_aes::__private::aarch64::{bytes, iv_vector};

    fn detected() -> bool {
        std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull")
    }

    #[test]
    fn tweak_doubling() {
        if !detected() {
            return;
        }
        let scalar = |t: u128| (t << 1) ^ ((t >> 127) * 0x87);
        let from = |v: uint8x16_t| u128::from_le_bytes(bytes(v));
        for t in [
            1u128,
            1 << 63,
            1 << 64,
            1 << 127,
            u128::MAX,
            0x8000_0000_0000_0000_8000_0000_0000_0000,
            0x0123_4567_89ab_cdef_fedc_ba98_7654_3210,
            0xff00_0000_0000_0000_0000_0000_0000_00ff,
        ] {
            // SAFETY: the AES instructions (and PMULL, the same feature) were
            // detected just above.
            let (x1, x8) = unsafe { (mul_x(iv_vector(t)), mul_x8(iv_vector(t))) };
            assert_eq!(from(x1), scalar(t), "{t:#x}");
            let eight = (0..8).fold(t, |t, _| scalar(t));
            assert_eq!(from(x8), eight, "{t:#x}");
        }
    }

    #[test]
    fn selection_is_a_function_of_the_features_on_arm64() {
        use mdu_aes::Backend::*;
        // Cortex-A53 and later with the Crypto Extensions, Apple M1, Neoverse.
        let ce = features(&["aes", "pmull", "neon"]);
        assert_eq!(Backend::available_for(ce), [ArmCe, Generic]);
        // FEAT_AES without FEAT_PMULL cannot advance tweaks by x^8.
        let no_pmull = features(&["aes", "neon"]);
        assert_eq!(Backend::available_for(no_pmull), [Generic]);
        // Raspberry Pi 4 (Cortex-A72 without the Crypto Extensions).
        let pi4 = features(&["neon"]);
        assert_eq!(Backend::available_for(pi4), [Generic]);
        let no_neon = features(&["aes", "pmull"]);
        assert_eq!(Backend::available_for(no_neon), [Generic]);
        // The x86 backends are not compiled for arm64, whatever the flags.
        let all = features(&[
            "aes",
            "pclmulqdq",
            "avx2",
            "avx512f",
            "avx512bw",
            "avx512vl",
            "vaes",
            "vpclmulqdq",
            "pmull",
            "neon",
        ]);
        assert_eq!(Backend::available_for(all), [ArmCe, Generic]);
        assert_eq!(Backend::available_for(CpuFeatures::default()), [Generic]);
    }
}
