//! XTS as an AES mode: what each backend needs, the weak-key rule, the
//! portable implementation, the round keys and the kernel table. The
//! skeleton around them (detection, forced backends, key setup and
//! wiping, the dispatch point) is `mdu_aes::Engine`'s.

use alloc::boxed::Box;

#[cfg(test)]
pub(crate) use mdu_aes::CpuFeatures;
#[cfg(not(test))]
use mdu_aes::CpuFeatures;
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
use mdu_aes::Request;
use mdu_aes::{BlockAes, Ivs, Mode, SetupError};
use mdu_core::Direction;

#[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
pub(crate) mod aarch64;
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
pub(crate) mod driver;
pub(crate) mod generic;
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
pub(crate) mod simd;
#[cfg(all(target_arch = "x86_64", not(miri)))]
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

/// Whether the two halves of an XTS key are equal, without an early exit.
fn halves_equal(key: &[u8]) -> bool {
    let (k1, k2) = key.split_at(key.len() / 2);
    k1.iter().zip(k2).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

const fn needs(aes: bool, clmul: bool, avx2: bool, vaes: bool, avx512: bool) -> CpuFeatures {
    CpuFeatures {
        aes,
        pclmulqdq: clmul && !vaes,
        vpclmulqdq: clmul && vaes,
        avx2,
        vaes,
        avx512f: avx512,
        avx512bw: avx512,
        avx512vl: avx512,
        ..CpuFeatures::NONE
    }
}

impl Mode for XtsMode {
    const CRATE: &'static str = "mdu-xts";
    const AES_KEYS: usize = 2;
    const UNIT_ALIGN: usize = 1;
    const NAMES: [&'static str; 2] = ["XtsAes128", "XtsAes256"];
    const NEEDS: [CpuFeatures; 4] = [
        // VAES and VPCLMULQDQ on zmm: AVX-512 F, BW (byte masks) and VL.
        needs(true, true, true, true, true),
        // VAES and VPCLMULQDQ on ymm.
        needs(true, true, true, true, false),
        // AES-NI, and PCLMULQDQ for the x^8 tweak steps.
        needs(true, true, false, false, false),
        // FEAT_AES, and FEAT_PMULL for the x^8 tweak steps.
        CpuFeatures {
            neon: true,
            aes: true,
            pmull: true,
            ..CpuFeatures::NONE
        },
    ];

    fn check_key(key: &[u8], allow_weak: bool) -> Result<(), SetupError> {
        if !allow_weak && halves_equal(key) {
            return Err(SetupError::WeakKey {
                reason: "the two key halves are equal, which breaks XTS's security \
                         argument (use new_allow_weak_key only for test vectors)",
            });
        }
        Ok(())
    }

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

    #[cfg(any(
        all(target_arch = "x86_64", not(miri)),
        all(target_arch = "aarch64", target_endian = "little", not(miri))
    ))]
    type RoundKeys = simd::RoundKeys;

    #[cfg(any(
        all(target_arch = "x86_64", not(miri)),
        all(target_arch = "aarch64", target_endian = "little", not(miri))
    ))]
    unsafe fn expand(key: &[u8]) -> Box<simd::RoundKeys> {
        let (k1, k2) = key.split_at(key.len() / 2);
        let mut rk = simd::RoundKeys::zeroed();
        // SAFETY: forwarded from the caller (the CPU has the AES
        // instructions).
        unsafe { rk.expand_into(k1, k2) };
        rk
    }

    #[cfg(any(
        all(target_arch = "x86_64", not(miri)),
        all(target_arch = "aarch64", target_endian = "little", not(miri))
    ))]
    fn simd_clone(keys: &simd::RoundKeys) -> Box<simd::RoundKeys> {
        keys.boxed_clone()
    }

    #[cfg(any(
        all(target_arch = "x86_64", not(miri)),
        all(target_arch = "aarch64", target_endian = "little", not(miri))
    ))]
    unsafe fn run<const NR: usize>(
        backend: Backend,
        dir: Direction,
        keys: &simd::RoundKeys,
        req: Request<'_>,
    ) {
        // SAFETY: forwarded from the caller.
        unsafe {
            match dir {
                Direction::Encrypt => kernel::<NR, true>(backend, keys, req),
                Direction::Decrypt => kernel::<NR, false>(backend, keys, req),
            }
        }
    }
}

/// The kernel table: one arm per backend, by name.
///
/// # Safety
///
/// As for [`Mode::run`].
#[cfg(any(
    all(target_arch = "x86_64", not(miri)),
    all(target_arch = "aarch64", target_endian = "little", not(miri))
))]
#[inline(always)]
unsafe fn kernel<const NR: usize, const ENC: bool>(
    backend: Backend,
    keys: &simd::RoundKeys,
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
    // SAFETY: forwarded from the caller: `backend` runs on this CPU, `keys`
    // holds schedules of `NR` rounds, and the pointers, unit and IV list
    // describe a validated request.
    unsafe {
        match backend {
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Backend::Vaes512 => {
                x86::vaes512::crypt::<NR, ENC>(keys, first, step, list, unit, count, src, dst)
            }
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Backend::Vaes256 => {
                x86::vaes256::crypt::<NR, ENC>(keys, first, step, list, unit, count, src, dst)
            }
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Backend::AesNi => {
                x86::aesni::crypt::<NR, ENC>(keys, first, step, list, unit, count, src, dst)
            }
            #[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
            Backend::ArmCe => {
                aarch64::ce::crypt::<NR, ENC>(keys, first, step, list, unit, count, src, dst)
            }
            #[cfg(not(all(target_arch = "x86_64", not(miri))))]
            Backend::Vaes512 | Backend::Vaes256 | Backend::AesNi => {
                unreachable!("x86_64 backends are not compiled for this target")
            }
            #[cfg(not(all(target_arch = "aarch64", target_endian = "little", not(miri))))]
            Backend::ArmCe => unreachable!("the arm64 backend is not compiled for this target"),
            Backend::Generic => unreachable!("the portable backend has no SIMD kernel"),
            Backend::_Mode(never) => never.unreachable(),
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

    #[test]
    #[cfg(all(target_arch = "aarch64", target_endian = "little", not(miri)))]
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

    #[test]
    fn halves() {
        assert!(halves_equal(&[7; 64]));
        let mut k = [7u8; 64];
        k[63] = 8;
        assert!(!halves_equal(&k));
        k[63] = 7;
        k[0] = 1;
        assert!(!halves_equal(&k));
    }

    /// The first round keys of AES are the key itself, so a copy of the key
    /// or of a schedule left in a dead stack frame shows as the key's
    /// 16-byte pieces. The key lives on the heap here, so none of its pieces
    /// should be found on the stack after a key setup or a clone.
    #[test]
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    fn key_setups_leave_no_key_material_on_the_stack() {
        use crate::{XtsAes128, XtsAes256};
        use aes::cipher::KeyInit;
        use mdu_aes::wipe::{PROBE_DEPTH, contains, dead_stack};
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
