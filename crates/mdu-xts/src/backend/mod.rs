//! XTS as an AES mode: what each backend needs, the weak-key rule and the
//! portable implementation, on every target; the SIMD round keys
//! (`round_keys.rs`) and the kernels of each target (`x86/`, `aarch64/`), each
//! in the module compiled for it. The skeleton around them (detection,
//! forced backends, key setup and wiping, the one dispatch point) is
//! `mdu_aes::__private::Engine`'s.

use alloc::boxed::Box;

use mdu_aes::__private::{BlockAes, Ivs, KeyRule, Mode};
use mdu_aes::KeySize;
use mdu_aes::SetupError;
use mdu_core::Direction;

// The only target conditions of the crate: each SIMD module is compiled
// where its kernels can run (never under Miri, which cannot run the vendor
// intrinsics; the arm64 kernels on little-endian aarch64 only), as build.rs
// names them (`x86_simd`, `arm_simd`, `simd`: `mdu_platform::target`).
#[cfg(arm_simd)]
pub(crate) mod aarch64;
#[cfg(simd)]
pub(crate) mod driver;
pub(crate) mod generic;
#[cfg(simd)]
pub(crate) mod round_keys;
#[cfg(x86_simd)]
pub(crate) mod x86;

/// XTS as the AES skeleton sees it: the mode behind [`Backend`] and
/// [`Xts`](crate::Xts).
///
/// ```
/// use mdu_xts::Backend;
/// let best: Backend = Backend::detect();
/// assert!(Backend::available().contains(&best));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct XtsMode;

/// An implementation of XTS-AES.
///
/// Every backend produces the same bytes; they differ only in speed and in
/// the CPU features they need. [`Backend::detect`](mdu_aes::Backend::detect)
/// picks the best one this CPU runs;
/// [`Backend::available`](mdu_aes::Backend::available) lists all of them,
/// best first.
///
/// | backend | target | needs | blocks per vector |
/// |---|---|---|---|
/// | `Vaes512` | x86_64 | AVX-512 F/BW/VL, VAES, VPCLMULQDQ, AES-NI | 4 (zmm) |
/// | `Vaes256` | x86_64 | AVX2, VAES, VPCLMULQDQ, AES-NI | 2 (ymm) |
/// | `AesNi` | x86_64 | AES-NI, PCLMULQDQ | 1 (xmm) |
/// | `ArmCe` | aarch64 (little-endian) | NEON, AES, PMULL (Armv8 Crypto Extensions) | 1 (q register) |
/// | `Generic` | any | nothing (RustCrypto `aes`) | - |
///
/// ```
/// use mdu_xts::Backend;
///
/// for &backend in Backend::available() {
///     println!("{backend} runs here");
/// }
/// assert_eq!(Backend::available().last(), Some(&Backend::Generic));
/// assert_eq!(Backend::Vaes512.name(), "vaes512");
/// ```
pub type Backend = mdu_aes::Backend<XtsMode>;

/// What each backend of XTS needs of the CPU: the `#[target_feature]`
/// list of its kernel, written once for both; the kernel takes a
/// [`Witness`](mdu_platform::cpu::Witness) of it. Unlike CBC, XTS needs a
/// carry-less multiply for its tweak steps.
pub(crate) mod needs {
    mdu_platform::needs! {
        /// `x86/vaes512.rs`: VAES and VPCLMULQDQ on zmm, AVX-512 F, BW (byte
        /// masks) and VL.
        pub enum Vaes512: x86_64 "aes,avx2,avx512f,avx512bw,avx512vl,vaes,vpclmulqdq";
        /// `x86/vaes256.rs`: VAES and VPCLMULQDQ on ymm.
        pub enum Vaes256: x86_64 "aes,avx2,vaes,vpclmulqdq";
        /// `x86/aesni.rs`: AES-NI, and PCLMULQDQ for the x^8 tweak steps.
        pub enum AesNi: x86_64 "aes,pclmulqdq";
        /// `aarch64/ce.rs`: FEAT_AES, and FEAT_PMULL for the x^8 tweak steps
        /// (the compiler's `aes` on arm64 is both).
        pub enum ArmCe: aarch64 "neon,aes";
    }
}

impl Mode for XtsMode {
    const CRATE: &'static str = "mdu-xts";
    type KeyLen<K: KeySize> = K::DoubleLen;
    type KeyRule = XtsMode;
    const UNIT_ALIGN: usize = 1;
    const NAMES: [&'static str; 2] = ["XtsAes128", "XtsAes256"];
    type Vaes512 = needs::Vaes512;
    type Vaes256 = needs::Vaes256;
    type AesNi = needs::AesNi;
    type ArmCe = needs::ArmCe;

    type Portable<A: BlockAes> = generic::Keys<A>;

    fn portable<A: BlockAes>(key: &[u8]) -> Box<generic::Keys<A>> {
        let (k1, k2) = key.split_at(key.len() / 2);
        generic::Keys::boxed(k1, k2)
    }

    fn portable_clone<A: BlockAes>(keys: &generic::Keys<A>) -> Box<generic::Keys<A>> {
        keys.boxed_clone()
    }

    fn portable_crypt<A: BlockAes>(
        keys: &generic::Keys<A>,
        dir: Direction,
        ivs: &Ivs<'_>,
        unit: usize,
        buf: &mut [u8],
    ) {
        generic::crypt(keys, dir, ivs, unit, buf);
    }
}

/// XTS's weak-key rule: the two halves of a key must differ
/// ([`verify_key`](crate::verify_key)).
impl KeyRule for XtsMode {
    fn check(key: &[u8]) -> Result<(), SetupError> {
        crate::verify_key(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mdu_aes::__private::CpuFeatures;

    /// A CPU profile from the feature names of the standard library (the
    /// per-target selection tests use it too).
    pub(crate) fn features(names: &[&str]) -> CpuFeatures {
        let mut f = CpuFeatures::default();
        for name in names {
            match *name {
                "aes" => f.aes = true,
                "avx2" => f.avx2 = true,
                "avx512f" => f.avx512f = true,
                "avx512bw" => f.avx512bw = true,
                "avx512vl" => f.avx512vl = true,
                "vaes" => f.vaes = true,
                "vpclmulqdq" => f.vpclmulqdq = true,
                "pclmulqdq" => f.pclmulqdq = true,
                "pmull" => f.pmull = true,
                "neon" => f.neon = true,
                other => panic!("unknown feature {other}"),
            }
        }
        f
    }

    /// The declarations, read back on any target: what the backend table
    /// of [`Backend`] promises, and what the entry points enable.
    #[test]
    fn each_backend_declares_the_features_of_its_kernel() {
        let vpclmul = ["aes", "avx2", "vaes", "vpclmulqdq"];
        let avx512 = ["avx512f", "avx512bw", "avx512vl"];
        assert_eq!(
            Backend::Vaes512.needs(),
            features(&[&vpclmul[..], &avx512[..]].concat())
        );
        assert_eq!(Backend::Vaes256.needs(), features(&vpclmul));
        assert_eq!(Backend::AesNi.needs(), features(&["aes", "pclmulqdq"]));
        assert_eq!(Backend::ArmCe.needs(), features(&["neon", "aes", "pmull"]));
        assert_eq!(Backend::Generic.needs(), CpuFeatures::NONE);
    }

    #[test]
    fn generic_is_always_last_and_available() {
        let all = Backend::available();
        assert_eq!(all.last(), Some(&Backend::Generic));
        assert_eq!(Backend::detect(), all[0]);
        let mut sorted = all.to_vec();
        sorted.sort();
        assert_eq!(sorted, all, "best first");
        assert_eq!(Backend::available_for(CpuFeatures::detect()), all);
    }
}
