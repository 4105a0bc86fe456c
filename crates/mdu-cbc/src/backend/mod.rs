//! The backends, their detection and priority order, and the one dispatch
//! point of every request.
//!
//! A key is expanded once for the backend chosen at construction; every call
//! then takes exactly one `match` to reach the kernel, which handles all the
//! data units of the request.

use alloc::boxed::Box;
use core::fmt;

use mdu_aes::{CpuFeatures, Ivs};
use mdu_core::Direction;
use mdu_core::Error;

#[cfg(arm_simd)]
pub(crate) mod aarch64;
#[cfg(simd)]
pub(crate) mod driver;
pub(crate) mod generic;
#[cfg(x86_simd)]
pub(crate) mod x86;

/// An implementation of AES-CBC.
///
/// Every backend produces the same bytes; they differ only in speed and in
/// the CPU features they need. [`Backend::detect`] picks the best one this
/// CPU runs; [`Backend::available`] lists all of them, best first.
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
/// let all = Backend::available();
/// assert_eq!(all.first(), Some(&Backend::detect()));
/// assert_eq!(all.last(), Some(&Backend::Generic));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Backend {
    /// VAES on 512-bit zmm registers (AVX-512): sixteen units encrypted
    /// side by side, four per register.
    Vaes512,
    /// VAES on 256-bit ymm registers (AVX2), for CPUs without AVX-512 such
    /// as Zen 3 and Alder Lake: sixteen units side by side, two per
    /// register.
    Vaes256,
    /// AES-NI on 128-bit xmm registers: eight units side by side.
    AesNi,
    /// The Armv8 Crypto Extensions (`AESE`/`AESMC`, `AESD`/`AESIMC`) on
    /// 128-bit NEON registers of arm64: eight units side by side.
    ArmCe,
    /// The portable implementation on top of the RustCrypto `aes` crate.
    Generic,
}

/// Every backend, best first.
const ALL: [Backend; 5] = [
    Backend::Vaes512,
    Backend::Vaes256,
    Backend::AesNi,
    Backend::ArmCe,
    Backend::Generic,
];

/// Every list of backends a CPU can have, indexed by the set of SIMD
/// backends it runs (bit `i` for `ALL[i]`).
static LISTS: [([Backend; 5], usize); 16] = mdu_aes::subsets(ALL);

impl Backend {
    /// Whether a CPU with features `f` runs this backend. A pure function of
    /// `f`, so that the selection logic can be tested for CPUs other than the
    /// one running the tests.
    pub(crate) fn runs_on(self, f: CpuFeatures) -> bool {
        let x86 = cfg!(x86_simd);
        let arm = cfg!(arm_simd);
        match self {
            Backend::Vaes512 => x86 && f.aes && f.avx2 && f.avx512f && f.vaes,
            Backend::Vaes256 => x86 && f.aes && f.avx2 && f.vaes,
            Backend::AesNi => x86 && f.aes,
            Backend::ArmCe => arm && f.neon && f.aes,
            Backend::Generic => true,
        }
    }

    /// The backends a CPU with features `f` runs, best first.
    pub(crate) fn available_for(f: CpuFeatures) -> &'static [Backend] {
        let mask = ALL[..4]
            .iter()
            .enumerate()
            .fold(0, |m, (i, b)| m | (usize::from(b.runs_on(f)) << i));
        let (list, len) = &LISTS[mask];
        &list[..*len]
    }

    /// The backends this CPU runs, best first; [`Backend::Generic`] is always
    /// last. Detected once per process.
    ///
    /// ```
    /// use mdu_cbc::Backend;
    ///
    /// for &backend in Backend::available() {
    ///     assert!(backend.is_available());
    /// }
    /// ```
    pub fn available() -> &'static [Backend] {
        Backend::available_for(CpuFeatures::get())
    }

    /// The best backend this CPU runs.
    ///
    /// ```
    /// use mdu_cbc::Backend;
    ///
    /// assert!(Backend::detect().is_available());
    /// ```
    pub fn detect() -> Backend {
        Backend::available()[0]
    }

    /// Whether this CPU runs the backend.
    ///
    /// ```
    /// use mdu_cbc::Backend;
    ///
    /// assert!(Backend::Generic.is_available());
    /// ```
    pub fn is_available(self) -> bool {
        Backend::available().contains(&self)
    }

    /// The backend's name, as used in error messages.
    ///
    /// ```
    /// use mdu_cbc::Backend;
    ///
    /// assert_eq!(Backend::Vaes256.name(), "vaes256");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Vaes512 => "vaes512",
            Backend::Vaes256 => "vaes256",
            Backend::AesNi => "aesni",
            Backend::ArmCe => "arm-ce",
            Backend::Generic => "generic",
        }
    }

    /// The error for asking for this backend where it does not run.
    fn unavailable(self) -> Error {
        Error::BackendUnavailable {
            cipher: "mdu-cbc",
            backend: self.name(),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The AES key size of a CBC variant.
pub(crate) trait KeySize: 'static {
    /// AES rounds: 10 or 14 (read by the SIMD backends only).
    #[cfg_attr(not(simd), allow(dead_code))]
    const NR: usize;
    /// Length of the key in bytes.
    const KEY_LEN: usize;
    /// The portable AES of this key size.
    type Aes: generic::BlockAes;
}

/// AES-128-CBC.
pub(crate) struct Aes128Key;
/// AES-256-CBC.
pub(crate) struct Aes256Key;

impl KeySize for Aes128Key {
    const NR: usize = 10;
    const KEY_LEN: usize = 16;
    type Aes = aes::Aes128;
}

impl KeySize for Aes256Key {
    const NR: usize = 14;
    const KEY_LEN: usize = 32;
    type Aes = aes::Aes256;
}

/// The key expanded for one backend.
enum Keys<S: KeySize> {
    Generic(Box<S::Aes>),
    /// Round keys for the x86_64 or the arm64 kernels.
    #[cfg(simd)]
    Simd(Box<mdu_aes::RoundKeys>),
}

/// Where a request reads and writes.
pub(crate) enum Io<'a> {
    /// Read and write the same buffer.
    InPlace(&'a mut [u8]),
    /// Read `src`, write `dst` (same length).
    To(&'a [u8], &'a mut [u8]),
}

impl Io<'_> {
    fn len(&self) -> usize {
        match self {
            Io::InPlace(buf) => buf.len(),
            Io::To(src, _) => src.len(),
        }
    }

    /// The source and destination pointers of a SIMD kernel: the same
    /// pointer in place, two non-overlapping borrows out of place; `None`
    /// for different lengths (the callers have checked them equal).
    #[cfg(simd)]
    fn pointers(self) -> Option<(*const u8, *mut u8)> {
        match self {
            Io::InPlace(buf) => {
                let p = buf.as_mut_ptr();
                Some((p.cast_const(), p))
            }
            Io::To(src, dst) => {
                (src.len() == dst.len()).then_some((src.as_ptr(), dst.as_mut_ptr()))
            }
        }
    }
}

/// A CBC key expanded for one backend: the engine behind `AesCbc128` and
/// `AesCbc256`.
pub(crate) struct Engine<S: KeySize> {
    backend: Backend,
    keys: Keys<S>,
}

impl<S: KeySize> Clone for Engine<S> {
    fn clone(&self) -> Self {
        let keys = match &self.keys {
            Keys::Generic(k) => Keys::Generic(generic::boxed_clone::<S::Aes>(k)),
            #[cfg(simd)]
            Keys::Simd(k) => Keys::Simd(k.boxed_clone()),
        };
        // The `aes` crate's `Clone` (generic backend) returns its key
        // schedule by value: wipe the stack it used.
        mdu_aes::wipe::after_key_setup();
        Engine {
            backend: self.backend,
            keys,
        }
    }
}

impl<S: KeySize> Engine<S> {
    /// Checks and expands `key` for `backend`.
    pub(crate) fn new(key: &[u8], backend: Backend) -> Result<Self, Error> {
        if key.len() != S::KEY_LEN {
            return Err(Error::InvalidKeyLength {
                len: key.len(),
                expected: S::KEY_LEN,
            });
        }
        if !backend.is_available() {
            return Err(backend.unavailable());
        }
        // The key is read where the caller holds it and expanded straight
        // into the heap allocation that keeps the round keys; the setup runs
        // in functions that are not inlined here, and the stack they used
        // (their locals and spilled registers) is wiped once they return.
        let keys = match backend {
            Backend::Generic => Keys::Generic(generic::boxed::<S::Aes>(key)),
            #[cfg(simd)]
            _ => {
                let mut rk = mdu_aes::RoundKeys::zeroed();
                // SAFETY: every SIMD backend needs the AES instructions
                // (AES-NI, FEAT_AES), and `backend` was checked to be
                // available on this CPU just above.
                unsafe { rk.expand_into(key) };
                Keys::Simd(rk)
            }
            // Only the portable backend is compiled for this target, and it
            // is the only one available.
            #[cfg(not(simd))]
            _ => return Err(backend.unavailable()),
        };
        mdu_aes::wipe::after_key_setup();
        Ok(Engine { backend, keys })
    }

    /// The backend the keys were expanded for.
    pub(crate) fn backend(&self) -> Backend {
        self.backend
    }

    /// Encrypts (`dir`) or decrypts the `len / unit` data units of `io`; unit
    /// `i` uses the IV `ivs` gives it. The caller has validated the request:
    /// `unit` a multiple of 16 and at least 16, `len` a non-zero multiple of
    /// `unit`, for [`Io::To`] equal lengths, and for [`Ivs::List`] one IV
    /// per unit.
    pub(crate) fn crypt(&self, dir: Direction, ivs: &Ivs<'_>, unit: usize, io: Io<'_>) {
        let len = io.len();
        debug_assert!(
            unit >= 16 && unit.is_multiple_of(16) && len >= unit && len.is_multiple_of(unit)
        );
        match &self.keys {
            Keys::Generic(keys) => generic::crypt(&**keys, dir, ivs, unit, io),
            #[cfg(simd)]
            Keys::Simd(keys) => {
                let count = len / unit;
                let Some((src, dst)) = io.pointers() else {
                    return;
                };
                // The IVs go to the kernel as plain arguments, in registers.
                let (first, step, list) = ivs.parts();
                macro_rules! run {
                    ($($kernel:ident)::+) => {
                        match (S::NR == 14, dir) {
                            (true, Direction::Encrypt) => $($kernel)::+::encrypt::<14>(
                                keys, first, step, list, unit, count, src, dst,
                            ),
                            (true, Direction::Decrypt) => $($kernel)::+::decrypt::<14>(
                                keys, first, step, list, unit, count, src, dst,
                            ),
                            (false, Direction::Encrypt) => $($kernel)::+::encrypt::<10>(
                                keys, first, step, list, unit, count, src, dst,
                            ),
                            (false, Direction::Decrypt) => $($kernel)::+::decrypt::<10>(
                                keys, first, step, list, unit, count, src, dst,
                            ),
                        }
                    };
                }
                // SAFETY: the keys were expanded for `self.backend` only after
                // `Backend::is_available` confirmed that this CPU has every
                // feature the backend's kernels enable. `src` and `dst` cover
                // `count * unit == len` bytes of live slices (checked equal
                // for out-of-place requests); they are either the same buffer
                // or two distinct borrows that cannot overlap. `unit` is a
                // multiple of 16 and an IV list holds `count` IVs (checked
                // by the caller).
                unsafe {
                    match self.backend {
                        #[cfg(x86_simd)]
                        Backend::Vaes512 => run!(x86::vaes512),
                        #[cfg(x86_simd)]
                        Backend::Vaes256 => run!(x86::vaes256),
                        #[cfg(x86_simd)]
                        _ => run!(x86::aesni),
                        #[cfg(arm_simd)]
                        _ => run!(aarch64::ce),
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(simd)]
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
    #[cfg(x86_simd)]
    fn selection_is_a_function_of_the_features() {
        use Backend::*;
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
    #[cfg(arm_simd)]
    fn selection_is_a_function_of_the_features_on_arm64() {
        use Backend::*;
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
        for (list, len) in &LISTS {
            assert_eq!(list[len - 1], Backend::Generic);
        }
    }

    /// The first round keys of AES are the key itself, so a copy of the key
    /// or of a schedule left in a dead stack frame shows as the key's
    /// 16-byte pieces. None should be found after a key setup or a clone,
    /// on any backend (the generic one expands with the `aes` crate, which
    /// returns its schedule by value).
    #[test]
    #[cfg(x86_simd)]
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
