//! x86_64 backends: one `#[target_feature]` entry point pair per width, and
//! CBC's kernel table on this target (`mdu_aes::__private::Kernels`); the vectors and
//! AES rounds are `mdu_aes::__private::vector`'s, the key schedule `mdu-aes`'s, the
//! CBC algorithm itself is `backend::driver`.

use super::CbcMode;

pub(crate) mod aesni;
pub(crate) mod vaes256;
pub(crate) mod vaes512;

// One entry point pair per width, each with the witness of its backend.
mdu_aes::__private::kernels!(CbcMode, vaes512, vaes256, aesni);

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
        // CBC needs no carry-less multiply: VAES alone is enough.
        let no_clmul = features(&["aes", "avx2", "avx512f", "vaes"]);
        assert_eq!(
            Backend::available_for(no_clmul),
            [Vaes512, Vaes256, AesNi, Generic]
        );
        // AVX-512 without VAES (Skylake-X): xmm AES-NI.
        let skx = features(&[
            "aes",
            "pclmulqdq",
            "avx2",
            "avx512f",
            "avx512bw",
            "avx512vl",
        ]);
        assert_eq!(Backend::available_for(skx), [AesNi, Generic]);
        let westmere = features(&["aes", "pclmulqdq"]);
        assert_eq!(Backend::available_for(westmere), [AesNi, Generic]);
        // VAES is useless without AES-NI's key schedule and single blocks.
        let no_aes = features(&["avx2", "avx512f", "vaes"]);
        assert_eq!(Backend::available_for(no_aes), [Generic]);
        assert_eq!(Backend::available_for(CpuFeatures::default()), [Generic]);
        // The arm64 backend is not compiled for x86_64, whatever the flags
        // (FEAT_AES reads as AES-NI here).
        let arm = features(&["aes", "pmull", "neon"]);
        assert_eq!(Backend::available_for(arm), [AesNi, Generic]);
        assert_eq!(
            Backend::available_for(features(&["neon", "pmull"])),
            [Generic]
        );
    }

    /// The first round keys of AES are the key itself, so a copy of the key
    /// or of a schedule left in a dead stack frame shows as the key's
    /// 16-byte pieces. None should be found after a key setup or a clone,
    /// on any backend (the generic one expands with the `aes` crate, which
    /// returns its schedule by value).
    #[test]
    fn key_setups_leave_no_key_material_on_the_stack() {
        use crate::{AesCbc128, AesCbc256};
        use mdu_aes::__private::wipe::{PROBE_DEPTH, contains, dead_stack};
        use std::vec::Vec;

        let key: Vec<u8> = (0..32u32).map(|i| (i * 37 + 11) as u8).collect();
        let mut seen = std::vec![0u8; PROBE_DEPTH];
        zeroize::zeroize_stack::<PROBE_DEPTH>();
        for &backend in Backend::available() {
            let cbc = AesCbc256::with_backend(&key, backend).unwrap();
            dead_stack(&mut seen);
            for (i, piece) in key.chunks(16).enumerate() {
                assert!(!contains(&seen, piece), "{backend}: AES-256 key piece {i}");
            }
            let copy = cbc.clone();
            dead_stack(&mut seen);
            for (i, piece) in key.chunks(16).enumerate() {
                assert!(!contains(&seen, piece), "{backend}: clone, key piece {i}");
            }
            drop((cbc, copy));
            let cbc = AesCbc128::with_backend(&key[..16], backend).unwrap();
            dead_stack(&mut seen);
            assert!(!contains(&seen, &key[..16]), "{backend}: AES-128 key");
            drop(cbc);
        }
        // RustCrypto's infallible construction, on the best backend.
        let cbc = <AesCbc256 as mdu_aes::crypto_common::KeyInit>::new_from_slice(&key).unwrap();
        dead_stack(&mut seen);
        for (i, piece) in key.chunks(16).enumerate() {
            assert!(!contains(&seen, piece), "KeyInit: AES-256 key piece {i}");
        }
        drop(cbc);
    }
}
