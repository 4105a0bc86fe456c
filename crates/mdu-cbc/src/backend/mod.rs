//! CBC as an AES mode: what each backend needs, the portable
//! implementation and the kernel table. The skeleton around them
//! (detection, forced backends, key setup and wiping, the dispatch point)
//! is `mdu_aes::Engine`'s.

use alloc::boxed::Box;

#[cfg(test)]
pub(crate) use mdu_aes::CpuFeatures;
#[cfg(not(test))]
use mdu_aes::CpuFeatures;
use mdu_aes::{BlockAes, Ivs, Mode};
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
use mdu_aes::{Request, RoundKeys};
use mdu_core::Direction;

#[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
pub(crate) mod aarch64;
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
pub(crate) mod driver;
pub(crate) mod generic;
#[cfg(all(target_arch = "x86_64", not(miri)))]
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

impl Mode for CbcMode {
    const CRATE: &'static str = "mdu-cbc";
    const AES_KEYS: usize = 1;
    const UNIT_ALIGN: usize = 16;
    const NAMES: [&'static str; 2] = ["AesCbc128", "AesCbc256"];
    // CBC needs no carry-less multiply: VAES alone is enough.
    const NEEDS: [CpuFeatures; 4] = [
        CpuFeatures {
            aes: true,
            avx2: true,
            avx512f: true,
            vaes: true,
            ..CpuFeatures::NONE
        },
        CpuFeatures {
            aes: true,
            avx2: true,
            vaes: true,
            ..CpuFeatures::NONE
        },
        CpuFeatures {
            aes: true,
            ..CpuFeatures::NONE
        },
        CpuFeatures {
            neon: true,
            aes: true,
            ..CpuFeatures::NONE
        },
    ];

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

    #[cfg(any(
        all(target_arch = "x86_64", not(miri)),
        all(target_arch = "aarch64", target_endian = "little", not(miri))
    ))]
    type RoundKeys = RoundKeys;

    #[cfg(any(
        all(target_arch = "x86_64", not(miri)),
        all(target_arch = "aarch64", target_endian = "little", not(miri))
    ))]
    unsafe fn expand(key: &[u8]) -> Box<RoundKeys> {
        let mut rk = RoundKeys::zeroed();
        // SAFETY: forwarded from the caller (the CPU has the AES
        // instructions).
        unsafe { rk.expand_into(key) };
        rk
    }

    #[cfg(any(
        all(target_arch = "x86_64", not(miri)),
        all(target_arch = "aarch64", target_endian = "little", not(miri))
    ))]
    fn simd_clone(keys: &RoundKeys) -> Box<RoundKeys> {
        keys.boxed_clone()
    }

    #[cfg(any(
        all(target_arch = "x86_64", not(miri)),
        all(target_arch = "aarch64", target_endian = "little", not(miri))
    ))]
    unsafe fn run<const NR: usize>(
        backend: Backend,
        dir: Direction,
        keys: &RoundKeys,
        r: Request<'_>,
    ) {
        let Request {
            first,
            step,
            list,
            unit,
            count,
            src,
            dst,
        } = r;
        // SAFETY: forwarded from the caller: `backend` runs on this CPU,
        // `keys` holds schedules of `NR` rounds, and the pointers, unit (a
        // multiple of 16) and IV list describe a validated request.
        unsafe {
            match (backend, dir) {
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                (Backend::Vaes512, Direction::Encrypt) => {
                    x86::vaes512::encrypt::<NR>(keys, first, step, list, unit, count, src, dst)
                }
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                (Backend::Vaes512, Direction::Decrypt) => {
                    x86::vaes512::decrypt::<NR>(keys, first, step, list, unit, count, src, dst)
                }
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                (Backend::Vaes256, Direction::Encrypt) => {
                    x86::vaes256::encrypt::<NR>(keys, first, step, list, unit, count, src, dst)
                }
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                (Backend::Vaes256, Direction::Decrypt) => {
                    x86::vaes256::decrypt::<NR>(keys, first, step, list, unit, count, src, dst)
                }
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                (Backend::AesNi, Direction::Encrypt) => {
                    x86::aesni::encrypt::<NR>(keys, first, step, list, unit, count, src, dst)
                }
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                (Backend::AesNi, Direction::Decrypt) => {
                    x86::aesni::decrypt::<NR>(keys, first, step, list, unit, count, src, dst)
                }
                #[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
                (Backend::ArmCe, Direction::Encrypt) => {
                    aarch64::ce::encrypt::<NR>(keys, first, step, list, unit, count, src, dst)
                }
                #[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
                (Backend::ArmCe, Direction::Decrypt) => {
                    aarch64::ce::decrypt::<NR>(keys, first, step, list, unit, count, src, dst)
                }
                #[cfg(not(all(target_arch = "x86_64", not(miri))))]
                (Backend::Vaes512 | Backend::Vaes256 | Backend::AesNi, _) => {
                    unreachable!("x86_64 backends are not compiled for this target")
                }
                #[cfg(not(all(target_arch = "aarch64", target_endian = "little", not(miri))))]
                (Backend::ArmCe, _) => {
                    unreachable!("the arm64 backend is not compiled for this target")
                }
                (Backend::Generic, _) => unreachable!("the portable backend has no SIMD kernel"),
                (Backend::_Mode(never), _) => never.unreachable(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(any(
        all(target_arch = "x86_64", not(miri)),
        all(target_arch = "aarch64", target_endian = "little", not(miri))
    ))]
    fn features(names: &[&str]) -> CpuFeatures {
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

    #[test]
    #[cfg(all(target_arch = "x86_64", not(miri)))]
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

    #[test]
    #[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
    fn selection_is_a_function_of_the_features_on_arm64() {
        use mdu_aes::Backend::*;
        let ce = features(&["aes", "pmull", "neon"]);
        assert_eq!(Backend::available_for(ce), [ArmCe, Generic]);
        // CBC needs no PMULL.
        let no_pmull = features(&["aes", "neon"]);
        assert_eq!(Backend::available_for(no_pmull), [ArmCe, Generic]);
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

    #[test]
    fn generic_is_always_last_and_available() {
        let all = Backend::available();
        assert_eq!(all.last(), Some(&Backend::Generic));
        assert_eq!(Backend::detect(), all[0]);
        let mut sorted = all.to_vec();
        sorted.sort();
        assert_eq!(sorted, all, "best first");
    }

    /// The first round keys of AES are the key itself, so a copy of the key
    /// or of a schedule left in a dead stack frame shows as the key's
    /// 16-byte pieces. None should be found after a key setup or a clone,
    /// on any backend (the generic one expands with the `aes` crate, which
    /// returns its schedule by value).
    #[test]
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    fn key_setups_leave_no_key_material_on_the_stack() {
        use crate::{AesCbc128, AesCbc256};
        use mdu_aes::wipe::{PROBE_DEPTH, contains, dead_stack};
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
    }
}
