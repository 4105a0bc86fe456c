//! arm64 backends, and CBC's kernel table on this target
//! (`mdu_aes::__private::Kernels`); the key schedule, the vectors and the AES rounds
//! are `mdu-aes`'s, the CBC algorithm itself is `backend::driver`.

use super::CbcMode;

pub(crate) mod ce;

// The one entry point pair, with the witness of its backend.
mdu_aes::__private::kernels!(CbcMode, ce);

#[cfg(test)]
mod tests {
    use super::super::tests::features;
    use crate::Backend;

    #[test]
    fn selection_is_a_function_of_the_features_on_arm64() {
        use mdu_aes::Backend::*;
        let ce = features(&["aes", "pmull", "neon"]);
        assert_eq!(Backend::available_for(ce), [ArmCe, Generic]);
        // CBC uses no PMULL, but its kernels are compiled for the
        // compiler's `aes`, which on arm64 is FEAT_AES with FEAT_PMULL.
        let no_pmull = features(&["aes", "neon"]);
        assert_eq!(Backend::available_for(no_pmull), [Generic]);
        // Raspberry Pi 4 (Cortex-A72 without the Crypto Extensions).
        let pi4 = features(&["neon"]);
        assert_eq!(Backend::available_for(pi4), [Generic]);
        let all = features(&[
            "aes",
            "pclmulqdq",
            "avx2",
            "avx512f",
            "vaes",
            "pmull",
            "neon",
        ]);
        assert_eq!(Backend::available_for(all), [ArmCe, Generic]);
    }
}
