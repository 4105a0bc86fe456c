//! x86_64 backends: per width, the XTS tweak steps ([`Tweaks`]) and the
//! `#[target_feature]` entry point, and XTS's kernel table on this target
//! (`mdu_aes::__private::Kernels`); the vectors and AES rounds are
//! `mdu_aes::__private::vector`'s, the XTS algorithm itself is `backend::driver`.
//!
//! Conventions: a tweak is a 128-bit little-endian integer in an xmm
//! register (or in each 128-bit lane of a ymm/zmm register); multiplying by
//! x shifts it left by one and folds bit 127 back as 0x87.
//!
//! [`Tweaks`]: super::driver::Tweaks

use core::arch::x86_64::*;

use mdu_aes::__private::vector::Xmm;

use super::XtsMode;

pub(crate) mod aesni;
pub(crate) mod vaes256;
pub(crate) mod vaes512;

/// `t * x` in GF(2^128), one tweak per xmm register.
///
/// Both 64-bit halves are doubled; bit 63 carries into bit 64 and bit 127
/// reduces to 0x87, selected by sign-extended masks of those two bits.
#[inline(always)]
pub(crate) fn mul_x(t: Xmm) -> Xmm {
    // SAFETY: SSE2 is the x86_64 baseline; the result is a register like
    // the input.
    unsafe {
        let t = t.raw();
        let poly = _mm_set_epi64x(1, 0x87);
        let doubled = _mm_add_epi64(t, t);
        let carries = _mm_srai_epi32::<31>(_mm_shuffle_epi32::<0x13>(t));
        Xmm::from_raw(_mm_xor_si128(doubled, _mm_and_si128(carries, poly)))
    }
}

// One entry point per width, each with the witness of its backend.
mdu_aes::__private::kernels!(XtsMode, vaes512, vaes256, aesni);

#[cfg(test)]
mod tests {
    use super::super::tests::features;
    use crate::Backend;
    use mdu_aes::__private::CpuFeatures;

    #[test]
    fn selection_is_a_function_of_the_features() {
        use mdu_aes::Backend::*;
        let zen4 = features(&[
            "aes",
            "pclmulqdq",
            "avx2",
            "avx512f",
            "avx512bw",
            "avx512vl",
            "vaes",
            "vpclmulqdq",
        ]);
        assert_eq!(
            Backend::available_for(zen4),
            [Vaes512, Vaes256, AesNi, Generic]
        );
        // Zen 3 / Alder Lake: VAES on ymm, no AVX-512 at all.
        let zen3 = features(&["aes", "pclmulqdq", "avx2", "vaes", "vpclmulqdq"]);
        assert_eq!(Backend::available_for(zen3), [Vaes256, AesNi, Generic]);
        // VAES without VPCLMULQDQ cannot advance tweaks in vectors.
        let odd = features(&["aes", "pclmulqdq", "avx2", "vaes"]);
        assert_eq!(Backend::available_for(odd), [AesNi, Generic]);
        // AVX-512 without BW (no byte masks) falls back to ymm.
        let no_bw = features(&[
            "aes",
            "pclmulqdq",
            "avx2",
            "avx512f",
            "avx512vl",
            "vaes",
            "vpclmulqdq",
        ]);
        assert_eq!(Backend::available_for(no_bw), [Vaes256, AesNi, Generic]);
        let westmere = features(&["aes", "pclmulqdq"]);
        assert_eq!(Backend::available_for(westmere), [AesNi, Generic]);
        // The x^8 tweak steps of AesNi need the carry-less multiply.
        let no_clmul = features(&["aes"]);
        assert_eq!(Backend::available_for(no_clmul), [Generic]);
        // VAES is useless without AES-NI's key schedule and single blocks.
        let no_aes = features(&["avx2", "vaes", "vpclmulqdq"]);
        assert_eq!(Backend::available_for(no_aes), [Generic]);
        assert_eq!(Backend::available_for(CpuFeatures::default()), [Generic]);
        // The arm64 backend is not compiled for x86_64, whatever the flags.
        let arm = features(&["aes", "pmull", "neon"]);
        assert_eq!(Backend::available_for(arm), [Generic]);
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
        assert_eq!(
            Backend::available_for(all),
            [Vaes512, Vaes256, AesNi, Generic]
        );
    }

    /// The first round keys of AES are the key itself, so a copy of the key
    /// or of a schedule left in a dead stack frame shows as the key's
    /// 16-byte pieces. The key lives on the heap here, so none of its pieces
    /// should be found on the stack after a key setup or a clone.
    #[test]
    fn key_setups_leave_no_key_material_on_the_stack() {
        use crate::{XtsAes128, XtsAes256};
        use aes::cipher::KeyInit;
        use mdu_aes::__private::wipe::{PROBE_DEPTH, contains, dead_stack};
        use std::boxed::Box;
        use std::vec::Vec;

        /// An AES-256 key schedule put in a box without the wipe.
        #[inline(never)]
        fn unwiped(key: &[u8]) -> Box<aes::Aes256> {
            Box::new(aes::Aes256::new_from_slice(key).unwrap())
        }

        let key: Vec<u8> = (0..64u32).map(|i| (i * 37 + 11) as u8).collect();
        let mut seen = std::vec![0u8; PROBE_DEPTH];
        // Control: without the wipe, the `aes` crate's expansion leaves key
        // pieces on the stack, so the probe can see them.
        let control = unwiped(&key[..32]);
        dead_stack(&mut seen);
        drop(control);
        if !contains(&seen, &key[..16]) {
            std::eprintln!(
                "SKIPPED key_setups_leave_no_key_material_on_the_stack: this build leaves no \
                 key copy on the stack even without the wipe, so the test cannot tell"
            );
            return;
        }
        // Start clean, so that whatever is found below comes from the setup
        // under test.
        zeroize::zeroize_stack::<PROBE_DEPTH>();
        for &backend in Backend::available() {
            let xts = XtsAes256::with_backend(&key, backend).unwrap();
            dead_stack(&mut seen);
            for (i, piece) in key.chunks(16).enumerate() {
                assert!(
                    !contains(&seen, piece),
                    "{backend}: XTS-AES-256 key piece {i}"
                );
            }
            let copy = xts.clone();
            dead_stack(&mut seen);
            for (i, piece) in key.chunks(16).enumerate() {
                assert!(!contains(&seen, piece), "{backend}: clone, key piece {i}");
            }
            drop((xts, copy));
            let xts = XtsAes128::with_backend(&key[..32], backend).unwrap();
            dead_stack(&mut seen);
            for (i, piece) in key[..32].chunks(16).enumerate() {
                assert!(
                    !contains(&seen, piece),
                    "{backend}: XTS-AES-128 key piece {i}"
                );
            }
            drop(xts);
        }
        std::eprintln!(
            "key_setups_leave_no_key_material_on_the_stack: checked {PROBE_DEPTH} bytes of dead \
             stack after every setup, backends {:?}",
            Backend::available()
        );
    }
}
