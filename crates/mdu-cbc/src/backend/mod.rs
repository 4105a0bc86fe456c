//! CBC as an AES mode: what each backend needs and the portable
//! implementation, on every target; the SIMD round keys and the CBC driver
//! (`driver.rs`) and the kernels of each target (`x86/`, `aarch64/`), each
//! in the module compiled for it. The skeleton around them (detection,
//! forced backends, key setup and wiping, the one dispatch point) is
//! `mdu_aes::__private::Engine`'s.

use alloc::boxed::Box;

use mdu_aes::__private::{BlockAes, EveryKey, Ivs, Mode};
use mdu_aes::KeySize;
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
#[cfg(x86_simd)]
pub(crate) mod x86;

/// CBC as the AES skeleton sees it: the mode behind [`Backend`] and
/// [`Cbc`](crate::Cbc).
///
/// ```
/// use mdu_cbc::Backend;
/// let best: Backend = Backend::detect();
/// assert!(Backend::available().contains(&best));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CbcMode;

/// An implementation of AES-CBC.
///
/// Every backend produces the same bytes; they differ only in speed and in
/// the CPU features they need. [`Backend::detect`](mdu_aes::Backend::detect)
/// picks the best one this CPU runs;
/// [`Backend::available`](mdu_aes::Backend::available) lists all of them,
/// best first.
///
/// CBC encryption is one serial AES chain per data unit, so the SIMD
/// backends encrypt many units side by side, one chain per unit and 128-bit
/// lane; decryption is parallel within a unit and runs at the ECB rate.
///
/// | backend | target | needs | units encrypted side by side | blocks per vector |
/// |---|---|---|---|---|
/// | `Vaes512` | x86_64 | AVX-512 F, VAES, AVX2, AES-NI | 16 (4 zmm) | 4 |
/// | `Vaes256` | x86_64 | AVX2, VAES, AES-NI | 16 (8 ymm) | 2 |
/// | `AesNi` | x86_64 | AES-NI | 8 (8 xmm) | 1 |
/// | `ArmCe` | aarch64 (little-endian) | NEON, AES (Armv8 Crypto Extensions) | 8 | 1 |
/// | `Generic` | any | nothing (RustCrypto `aes`) | 1 | - |
///
/// ```
/// use mdu_cbc::Backend;
///
/// for &backend in Backend::available() {
///     println!("{backend} runs here");
/// }
/// assert_eq!(Backend::available().last(), Some(&Backend::Generic));
/// assert_eq!(Backend::Vaes256.name(), "vaes256");
/// ```
pub type Backend = mdu_aes::Backend<CbcMode>;

/// What each backend of CBC needs of the CPU: the `#[target_feature]`
/// list of its entry points, written once for both; they take a
/// [`Witness`](mdu_platform::cpu::Witness) of it. CBC needs no carry-less
/// multiply: VAES alone is enough.
pub(crate) mod needs {
    mdu_platform::needs! {
        /// `x86/vaes512.rs`: VAES on zmm (AVX-512 F), AES-NI for single
        /// blocks.
        pub enum Vaes512: x86_64 "aes,avx2,avx512f,vaes";
        /// `x86/vaes256.rs`: VAES on ymm (AVX2), AES-NI for single blocks.
        pub enum Vaes256: x86_64 "aes,avx2,vaes";
        /// `x86/aesni.rs`: AES-NI.
        pub enum AesNi: x86_64 "aes";
        /// `aarch64/ce.rs`: FEAT_AES (with FEAT_PMULL, as the compiler's
        /// `aes` on arm64).
        pub enum ArmCe: aarch64 "neon,aes";
    }
}

impl Mode for CbcMode {
    const CRATE: &'static str = "mdu-cbc";
    type KeyLen<K: KeySize> = K::Len;
    type KeyRule = EveryKey;
    const UNIT_ALIGN: usize = 16;
    const NAMES: [&'static str; 2] = ["AesCbc128", "AesCbc256"];
    type Vaes512 = needs::Vaes512;
    type Vaes256 = needs::Vaes256;
    type AesNi = needs::AesNi;
    type ArmCe = needs::ArmCe;

    type Portable<A: BlockAes> = A;

    fn portable<A: BlockAes>(key: &[u8]) -> Box<A> {
        generic::boxed::<A>(key)
    }

    fn portable_clone<A: BlockAes>(keys: &A) -> Box<A> {
        generic::boxed_clone(keys)
    }

    fn portable_crypt<A: BlockAes>(
        keys: &A,
        dir: Direction,
        ivs: &Ivs<'_>,
        unit: usize,
        buf: &mut [u8],
    ) {
        generic::crypt(keys, dir, ivs, unit, buf);
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
        assert_eq!(
            Backend::Vaes512.needs(),
            features(&["aes", "avx2", "avx512f", "vaes"])
        );
        assert_eq!(Backend::Vaes256.needs(), features(&["aes", "avx2", "vaes"]));
        assert_eq!(Backend::AesNi.needs(), features(&["aes"]));
        // The compiler's `aes` on arm64 is FEAT_AES with FEAT_PMULL.
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
    }
}
