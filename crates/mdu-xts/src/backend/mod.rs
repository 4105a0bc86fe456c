//! The backends, their detection and priority order, and the one dispatch
//! point of every request.
//!
//! A key is expanded once for the backend chosen at construction; every call
//! then takes exactly one `match` to reach the kernel, which handles all the
//! data units of the request.

use alloc::boxed::Box;
use core::fmt;

pub(crate) use mdu_aes::CpuFeatures;
use mdu_aes::Ivs;
use mdu_core::{Direction, Error};

#[cfg(arm_simd)]
pub(crate) mod aarch64;
#[cfg(simd)]
pub(crate) mod driver;
pub(crate) mod generic;
#[cfg(simd)]
pub(crate) mod simd;
#[cfg(x86_simd)]
pub(crate) mod x86;

/// An implementation of XTS-AES.
///
/// Every backend produces the same bytes; they differ only in speed and in
/// the CPU features they need. [`Backend::detect`] picks the best one this
/// CPU runs; [`Backend::available`] lists all of them, best first.
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
/// let all = Backend::available();
/// assert_eq!(all.first(), Some(&Backend::detect()));
/// assert_eq!(all.last(), Some(&Backend::Generic));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Backend {
    /// VAES and VPCLMULQDQ on 512-bit zmm registers (AVX-512): sixteen blocks
    /// per main-loop iteration.
    Vaes512,
    /// VAES and VPCLMULQDQ on 256-bit ymm registers (AVX2), for CPUs without
    /// AVX-512 such as Zen 3 and Alder Lake: sixteen blocks per iteration.
    Vaes256,
    /// AES-NI and PCLMULQDQ on 128-bit xmm registers: eight blocks per
    /// iteration.
    AesNi,
    /// The Armv8 Crypto Extensions (`AESE`/`AESMC`, `AESD`/`AESIMC`,
    /// `PMULL`) on 128-bit NEON registers of arm64: eight blocks per
    /// iteration.
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
        let compiled = cfg!(x86_simd);
        let compiled_arm = cfg!(arm_simd);
        match self {
            Backend::Vaes512 => {
                compiled
                    && f.aes
                    && f.avx2
                    && f.avx512f
                    && f.avx512bw
                    && f.avx512vl
                    && f.vaes
                    && f.vpclmulqdq
            }
            Backend::Vaes256 => compiled && f.aes && f.avx2 && f.vaes && f.vpclmulqdq,
            Backend::AesNi => compiled && f.aes && f.pclmulqdq,
            Backend::ArmCe => compiled_arm && f.neon && f.aes && f.pmull,
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
    /// use mdu_xts::Backend;
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
    /// use mdu_xts::Backend;
    ///
    /// assert!(Backend::detect().is_available());
    /// ```
    pub fn detect() -> Backend {
        Backend::available()[0]
    }

    /// Whether this CPU runs the backend.
    ///
    /// ```
    /// use mdu_xts::Backend;
    ///
    /// assert!(Backend::Generic.is_available());
    /// ```
    pub fn is_available(self) -> bool {
        Backend::available().contains(&self)
    }

    /// The backend's name, as used in error messages.
    ///
    /// ```
    /// use mdu_xts::Backend;
    ///
    /// assert_eq!(Backend::Vaes512.name(), "vaes512");
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
}

impl Backend {
    /// The error for asking for this backend where it does not run.
    fn unavailable(self) -> Error {
        Error::BackendUnavailable {
            cipher: "mdu-xts",
            backend: self.name(),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The AES key size of an XTS variant.
pub(crate) trait KeySize: 'static {
    /// AES rounds: 10 or 14 (read by the SIMD backends only).
    #[cfg_attr(not(simd), allow(dead_code))]
    const NR: usize;
    /// Length of the whole XTS key (both halves) in bytes.
    const KEY_LEN: usize;
    /// The portable AES of this key size.
    type Aes: generic::BlockAes;
}

/// XTS-AES-128: two AES-128 keys.
pub(crate) struct Aes128Keys;
/// XTS-AES-256: two AES-256 keys.
pub(crate) struct Aes256Keys;

impl KeySize for Aes128Keys {
    const NR: usize = 10;
    const KEY_LEN: usize = 32;
    type Aes = aes::Aes128;
}

impl KeySize for Aes256Keys {
    const NR: usize = 14;
    const KEY_LEN: usize = 64;
    type Aes = aes::Aes256;
}

/// The keys expanded for one backend.
enum Keys<S: KeySize> {
    Generic(Box<generic::Keys<S::Aes>>),
    /// Round keys for the x86_64 or the arm64 kernels.
    #[cfg(simd)]
    Simd(Box<simd::RoundKeys>),
}

impl<S: KeySize> Clone for Keys<S> {
    /// A copy in a new heap allocation; the caller wipes the stack after it
    /// (see [`Engine::clone`]).
    fn clone(&self) -> Self {
        match self {
            Keys::Generic(k) => Keys::Generic(k.boxed_clone()),
            #[cfg(simd)]
            Keys::Simd(k) => Keys::Simd(k.boxed_clone()),
        }
    }
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

/// An XTS key expanded for one backend: the engine behind `XtsAes128` and
/// `XtsAes256`.
pub(crate) struct Engine<S: KeySize> {
    backend: Backend,
    keys: Keys<S>,
}

impl<S: KeySize> Clone for Engine<S> {
    fn clone(&self) -> Self {
        let keys = self.keys.clone();
        // The `aes` crate's `Clone` (generic backend) returns its key
        // schedule by value: wipe the stack it used.
        mdu_aes::wipe::after_key_setup();
        Engine {
            backend: self.backend,
            keys,
        }
    }
}

/// Whether the two halves of an XTS key are equal, without an early exit.
fn halves_equal(key: &[u8]) -> bool {
    let (k1, k2) = key.split_at(key.len() / 2);
    k1.iter().zip(k2).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

impl<S: KeySize> Engine<S> {
    /// Checks and expands `key` (K1 || K2) for `backend`.
    pub(crate) fn new(key: &[u8], backend: Backend, allow_equal: bool) -> Result<Self, Error> {
        if key.len() != S::KEY_LEN {
            return Err(Error::InvalidKeyLength {
                len: key.len(),
                expected: S::KEY_LEN,
            });
        }
        if !allow_equal && halves_equal(key) {
            return Err(Error::WeakKey {
                reason: "the two key halves are equal, which breaks XTS's security \
                         argument (use new_allow_equal_halves only for test vectors)",
            });
        }
        if !backend.is_available() {
            return Err(backend.unavailable());
        }
        // The key is read where the caller holds it and expanded straight
        // into the heap allocation that keeps the round keys; the setup runs
        // in functions that are not inlined here, and the stack they used
        // (their locals and spilled registers) is wiped once they return.
        let (k1, k2) = key.split_at(S::KEY_LEN / 2);
        let keys = match backend {
            Backend::Generic => Keys::Generic(generic::Keys::boxed(k1, k2)),
            #[cfg(simd)]
            _ => {
                let mut rk = simd::RoundKeys::zeroed();
                // SAFETY: every SIMD backend needs the AES instructions
                // (AES-NI, FEAT_AES), and `backend` was checked to be
                // available on this CPU just above.
                unsafe { rk.expand_into(k1, k2) };
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
    /// `unit >= 16`, `len` a non-zero multiple of `unit`, for [`Io::To`]
    /// equal lengths, and for [`Ivs::List`] one IV per unit.
    pub(crate) fn crypt(&self, dir: Direction, ivs: &Ivs<'_>, unit: usize, io: Io<'_>) {
        let len = io.len();
        debug_assert!(unit >= 16 && len >= unit && len.is_multiple_of(unit));
        match &self.keys {
            Keys::Generic(keys) => generic::crypt(keys, dir, ivs, unit, io),
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
                            (true, Direction::Encrypt) => $($kernel)::+::crypt::<14, true>(
                                keys, first, step, list, unit, count, src, dst,
                            ),
                            (true, Direction::Decrypt) => $($kernel)::+::crypt::<14, false>(
                                keys, first, step, list, unit, count, src, dst,
                            ),
                            (false, Direction::Encrypt) => $($kernel)::+::crypt::<10, true>(
                                keys, first, step, list, unit, count, src, dst,
                            ),
                            (false, Direction::Decrypt) => $($kernel)::+::crypt::<10, false>(
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
                // or two distinct borrows that cannot overlap. An IV list
                // holds `count` IVs (checked by the caller).
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
    #[cfg(arm_simd)]
    fn selection_is_a_function_of_the_features_on_arm64() {
        use Backend::*;
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
        // Every list the table can hand out ends with the portable backend.
        for (list, len) in &LISTS {
            assert_eq!(list[len - 1], Backend::Generic);
        }
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
    #[cfg(x86_simd)]
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
