//! Backend choice: what each backend needs, declared once; selection as a
//! pure function of the CPU's features (detected once per process by
//! `mdu_platform::cpu`); and the one dispatch point of each of the two kernels
//! (encode; decode of a body without padding), which hands each SIMD
//! kernel the witness of its features.
//!
//! Contract of the kernels, for every backend:
//!
//! * `encode(alphabet, src, dst)`: `dst.len()` is exactly the unpadded
//!   encoded length of `src`; every byte of `dst` is written.
//! * `decode_body(alphabet, src, dst)`: `src` holds no padding and its length
//!   is not 1 mod 4; `dst.len()` is its decoded length. On success all of
//!   `dst` is written. On error: `InvalidByte(i)`, `i` the index of the first
//!   byte outside the alphabet, with exactly the whole groups before that
//!   byte's group written (`dst[..i / 4 * 3]`); or `NonCanonical(i)`, `i` the
//!   index of the last symbol, with exactly the whole groups written. No
//!   other byte of `dst` is touched.

use mdu_platform::backend::{BackendSet, Preference};
#[cfg(any(x86_simd, arm_cpu))]
use mdu_platform::cpu::Witness;
use mdu_platform::cpu::{Features, Needs};

use crate::alphabet::Alphabet;

#[cfg(arm_cpu)]
pub(crate) mod aarch64;
pub(crate) mod nibble;
pub(crate) mod scalar;
#[cfg(x86_simd)]
pub(crate) mod x86;

/// An implementation of the encode and decode kernels.
///
/// [`Backend::detect`] picks the best one this CPU runs, once per process;
/// [`Engine::with_backend`](crate::Engine::with_backend) pins one (for tests
/// and benchmarks).
///
/// Every backend serves every alphabet, with tables built once when the
/// [`Alphabet`](crate::Alphabet) is made. The AVX-512 VBMI backend
/// translates through 64- and 128-entry byte permutes of the alphabet and
/// its reverse table. The AVX2 backend translates with 16-entry `vpshufb`
/// lookups: encoding takes one where values 0..=25 and 26..=51 are runs of
/// consecutive bytes (RFC 4648, base64url, IMAP) and four otherwise;
/// decoding takes three where each row of 16 bytes holds symbols of at most
/// two offsets (also crypt(3), bcrypt and other alphabets made of runs) and
/// six otherwise. The NEON backend (aarch64) translates with `tbl`/`tbx`
/// lookups in the 64-symbol alphabet and in the first 128 entries of the
/// reverse table.
///
/// ```
/// use mdu_base64::Backend;
///
/// let all = Backend::available();
/// assert_eq!(all.first(), Some(&Backend::detect()));
/// assert_eq!(all.last(), Some(&Backend::Generic));
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// AVX-512 F/BW/VBMI: 48 bytes <-> 64 symbols per step with `vpermb`,
    /// `vpermi2b` and `vpmultishiftqb`, masked loads and stores for the tail.
    Avx512Vbmi,
    /// AVX2: 24 bytes <-> 32 symbols per step, four steps per round in
    /// bulk; the last step overlaps the one before instead of leaving a
    /// scalar tail. Scalar code runs only for the 1 or 2 bytes of a partial
    /// group when encoding, the 2- or 3-symbol tail of a body under 32
    /// symbols when decoding, and inputs under 16 bytes or symbols.
    Avx2,
    /// NEON (aarch64 Advanced SIMD): 48 bytes <-> 64 symbols per step with
    /// `ld3`/`st4` and `ld4`/`st3` (de)interleaving and 64-byte `tbl`/`tbx`
    /// lookups; the last partial step goes through a stack buffer.
    Neon,
    /// Portable block-wise code (3 bytes <-> 4 symbols, 6 bytes per 64-bit
    /// load when encoding); no `unsafe`.
    Generic,
}

/// What each SIMD backend needs, declared once: the `#[target_feature]`
/// list of its kernels, written once for both. [`Backend::needs`] (and through
/// it the selection and the test registry) and the [`Witness`](mdu_platform::cpu::Witness) each kernel
/// takes read these.
pub(crate) mod needs {
    mdu_platform::needs! {
        /// `x86/avx512vbmi.rs`: AVX-512 F/BW/VBMI, and BMI2 for the tail masks.
        pub(crate) enum Avx512Vbmi: x86_64 "avx512f,avx512bw,avx512vbmi,bmi2";
        /// `x86/avx2.rs`.
        pub(crate) enum Avx2: x86_64 "avx2";
        /// `aarch64/neon.rs`.
        pub(crate) enum Neon: aarch64 "neon";
    }
}

impl Backend {
    /// Every backend, best first; [`Backend::Generic`] last.
    ///
    /// ```
    /// use mdu_base64::Backend;
    /// assert_eq!(Backend::ALL.last(), Some(&Backend::Generic));
    /// ```
    pub const ALL: [Backend; 4] = [
        Backend::Avx512Vbmi,
        Backend::Avx2,
        Backend::Neon,
        Backend::Generic,
    ];

    /// Name of the backend, as in messages.
    ///
    /// ```
    /// assert_eq!(mdu_base64::Backend::Avx2.name(), "avx2");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Avx512Vbmi => "avx512vbmi",
            Backend::Avx2 => "avx2",
            Backend::Neon => "neon",
            Backend::Generic => "generic",
        }
    }

    /// The CPU features the backend needs, as it declares them once (the
    /// union of its kernels' `#[target_feature]` lists);
    /// [`Features::NONE`](mdu_platform::cpu::Features::NONE) for the portable
    /// one.
    ///
    /// ```
    /// use mdu_base64::Backend;
    /// assert_eq!(Backend::Avx512Vbmi.needs().to_string(), "bmi2, avx512f, avx512bw, avx512vbmi");
    /// assert_eq!(Backend::Generic.needs(), mdu_platform::cpu::Features::NONE);
    /// ```
    pub const fn needs(self) -> Features {
        match self {
            Backend::Avx512Vbmi => needs::Avx512Vbmi::NEEDS,
            Backend::Avx2 => needs::Avx2::NEEDS,
            Backend::Neon => needs::Neon::NEEDS,
            Backend::Generic => Features::NONE,
        }
    }

    /// Whether a CPU with features `f` runs the backend in this build: a
    /// pure function, tested on the profiles of real CPUs.
    ///
    /// ```
    /// use mdu_base64::Backend;
    /// use mdu_platform::cpu::Features;
    ///
    /// let zen3 = Features { avx2: true, bmi2: true, ..Features::NONE };
    /// assert!(!Backend::Avx512Vbmi.runs_on(zen3));
    /// assert_eq!(Backend::Avx2.runs_on(zen3), cfg!(target_arch = "x86_64") && !cfg!(miri));
    /// assert!(Backend::Generic.runs_on(Features::NONE));
    /// ```
    pub fn runs_on(self, f: Features) -> bool {
        BackendSet::runs_on(self, f)
    }

    /// The backends a CPU with features `f` runs in this build, best first
    /// (always ends with [`Backend::Generic`]).
    ///
    /// ```
    /// use mdu_base64::Backend;
    /// use mdu_platform::cpu::Features;
    /// assert_eq!(Backend::available_for(Features::NONE), [Backend::Generic]);
    /// ```
    pub fn available_for(f: Features) -> &'static [Backend] {
        Backend::available_on(f)
    }

    /// Whether this CPU and build can run the backend.
    ///
    /// ```
    /// assert!(mdu_base64::Backend::Generic.is_available());
    /// ```
    pub fn is_available(self) -> bool {
        BackendSet::is_available(self)
    }

    /// The backends this CPU runs, best first (always ends with
    /// [`Backend::Generic`]). The CPU is asked once per process.
    ///
    /// ```
    /// assert!(mdu_base64::Backend::available().contains(&mdu_base64::Backend::Generic));
    /// ```
    pub fn available() -> &'static [Backend] {
        <Backend as BackendSet>::available()
    }

    /// The best available backend. The CPU is asked on first use, and the
    /// answer cached for the life of the process.
    ///
    /// ```
    /// assert!(mdu_base64::Backend::detect().is_available());
    /// ```
    pub fn detect() -> Backend {
        <Backend as BackendSet>::detect()
    }

    /// Why this CPU or build does not run the backend, for messages; `None`
    /// when it does.
    pub(crate) fn unavailable_reason(self) -> Option<Unavailable> {
        if !self.compiled() {
            Some(Unavailable::NotCompiled)
        } else if self.is_available() {
            None
        } else {
            Some(Unavailable::Lacks(self.needs().difference(Features::get())))
        }
    }
}

/// The selection: [`Backend::ALL`] in its order on every CPU.
impl BackendSet for Backend {
    const PREFERENCE: &'static Preference<Backend> = &Preference::new(&Backend::ALL);

    fn needs(self) -> Features {
        Backend::needs(self)
    }

    /// The x86_64 kernels on x86_64, NEON on aarch64, and only the
    /// portable one under Miri.
    fn compiled(self) -> bool {
        match self {
            Backend::Avx512Vbmi | Backend::Avx2 => cfg!(x86_simd),
            Backend::Neon => cfg!(arm_cpu),
            Backend::Generic => true,
        }
    }
}

/// Why a backend does not run here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unavailable {
    /// Its kernels are not compiled for this target (or under Miri).
    NotCompiled,
    /// The CPU lacks these of the features it needs.
    Lacks(Features),
}

/// A backend with the proof its kernels need: what an engine pinned to a
/// backend keeps, and what the dispatch points take, so that no call asks
/// the CPU again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    #[cfg(x86_simd)]
    Avx512Vbmi(Witness<needs::Avx512Vbmi>),
    #[cfg(x86_simd)]
    Avx2(Witness<needs::Avx2>),
    #[cfg(arm_cpu)]
    Neon(Witness<needs::Neon>),
    Generic,
}

impl Kernel {
    /// The kernels of `backend`, or `None` when this CPU or build does not
    /// run it.
    #[inline]
    pub(crate) fn of(backend: Backend) -> Option<Kernel> {
        match backend {
            #[cfg(x86_simd)]
            Backend::Avx512Vbmi => Witness::detect().map(Kernel::Avx512Vbmi),
            #[cfg(x86_simd)]
            Backend::Avx2 => Witness::detect().map(Kernel::Avx2),
            #[cfg(arm_cpu)]
            Backend::Neon => Witness::detect().map(Kernel::Neon),
            Backend::Generic => Some(Kernel::Generic),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// The kernels of the best backend this CPU runs (the order of
    /// [`Backend::available`]); reads the process-wide detection.
    #[inline]
    pub(crate) fn detect() -> Kernel {
        // Spelled out rather than searched through `Backend::ALL`: engines
        // that are not pinned ask on every call, so this is one load of the
        // cached features and a compare or two.
        #[cfg(x86_simd)]
        if let Some(w) = Witness::detect() {
            return Kernel::Avx512Vbmi(w);
        } else if let Some(w) = Witness::detect() {
            return Kernel::Avx2(w);
        }
        #[cfg(arm_cpu)]
        if let Some(w) = Witness::detect() {
            return Kernel::Neon(w);
        }
        Kernel::Generic
    }

    /// The backend these kernels are.
    pub(crate) fn backend(self) -> Backend {
        match self {
            #[cfg(x86_simd)]
            Kernel::Avx512Vbmi(_) => Backend::Avx512Vbmi,
            #[cfg(x86_simd)]
            Kernel::Avx2(_) => Backend::Avx2,
            #[cfg(arm_cpu)]
            Kernel::Neon(_) => Backend::Neon,
            Kernel::Generic => Backend::Generic,
        }
    }
}

/// Encodes `src` without padding into all of `dst` (see the module contract).
#[inline]
pub(crate) fn encode(kernel: Kernel, alphabet: &Alphabet, src: &[u8], dst: &mut [u8]) {
    debug_assert_eq!(dst.len(), crate::engine::unpadded_len(src.len()));
    match kernel {
        #[cfg(x86_simd)]
        Kernel::Avx512Vbmi(w) => x86::encode_avx512vbmi(w, alphabet, src, dst),
        #[cfg(x86_simd)]
        Kernel::Avx2(w) => x86::encode_avx2(w, alphabet, src, dst),
        #[cfg(arm_cpu)]
        Kernel::Neon(w) => aarch64::encode_neon(w, alphabet, src, dst),
        Kernel::Generic => scalar::encode(&alphabet.encode, src, dst),
    }
}

/// Why a body did not decode (see the module contract).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// Index of the first byte outside the alphabet.
    InvalidByte(usize),
    /// Index of the last symbol, whose unused bits are not zero.
    NonCanonical(usize),
}

impl BodyError {
    /// The same error for a body that starts `offset` bytes later (used by
    /// the SIMD backends when they hand a rest over to the scalar kernel).
    #[cfg(any(x86_simd, arm_cpu))]
    #[inline]
    pub(crate) fn shift(self, offset: usize) -> BodyError {
        match self {
            BodyError::InvalidByte(i) => BodyError::InvalidByte(i + offset),
            BodyError::NonCanonical(i) => BodyError::NonCanonical(i + offset),
        }
    }
}

/// Decodes a body without padding (see the module contract).
#[inline]
pub(crate) fn decode_body(
    kernel: Kernel,
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    debug_assert!(src.len() % 4 != 1 && dst.len() == src.len() * 3 / 4);
    match kernel {
        #[cfg(x86_simd)]
        Kernel::Avx512Vbmi(w) => x86::decode_avx512vbmi(w, alphabet, src, dst),
        #[cfg(x86_simd)]
        Kernel::Avx2(w) => x86::decode_avx2(w, alphabet, src, dst),
        #[cfg(arm_cpu)]
        Kernel::Neon(w) => aarch64::decode_neon(w, alphabet, src, dst),
        Kernel::Generic => scalar::decode_body(&alphabet.decode, src, dst),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn selection_is_a_function_of_the_features() {
        use Backend::*;
        let x86 = cfg!(x86_simd);
        let arm = cfg!(arm_cpu);
        let avx2 = Features {
            avx2: true,
            bmi2: true,
            sse2: true,
            ..Features::NONE
        };
        let skylake_x = Features {
            avx512f: true,
            avx512bw: true,
            avx512vl: true,
            ..avx2
        };
        let ice_lake = Features {
            avx512vbmi: true,
            ..skylake_x
        };
        let no_bmi2 = Features {
            bmi2: false,
            ..ice_lake
        };
        let arm64 = Features {
            neon: true,
            aes: true,
            ..Features::NONE
        };
        let on_x86: [(&str, Features, &[Backend]); 5] = [
            (
                "Intel Ice Lake, AMD Zen 4",
                ice_lake,
                &[Avx512Vbmi, Avx2, Generic],
            ),
            ("Intel Skylake-X (no VBMI)", skylake_x, &[Avx2, Generic]),
            ("AMD Zen 3, Intel Haswell", avx2, &[Avx2, Generic]),
            ("AVX-512 VBMI without BMI2", no_bmi2, &[Avx2, Generic]),
            ("Intel Westmere", Features::NONE, &[Generic]),
        ];
        for (name, f, want) in on_x86 {
            let got = Backend::available_for(f);
            if x86 {
                assert_eq!(got, want, "{name}");
            } else {
                assert_eq!(got, [Generic], "{name}: no x86_64 kernels in this build");
            }
        }
        let want: &[Backend] = if arm { &[Neon, Generic] } else { &[Generic] };
        assert_eq!(Backend::available_for(arm64), want);
    }

    #[test]
    fn a_kernel_exists_exactly_for_the_available_backends() {
        for b in Backend::ALL {
            let kernel = Kernel::of(b);
            assert_eq!(kernel.is_some(), b.is_available(), "{}", b.name());
            assert_eq!(kernel.map(Kernel::backend), kernel.is_some().then_some(b));
            assert_eq!(b.unavailable_reason().is_none(), b.is_available());
        }
        assert_eq!(Kernel::detect().backend(), Backend::detect());
    }

    #[test]
    fn an_unavailable_backend_says_what_is_missing() {
        for b in Backend::ALL {
            let Err(e) = crate::URL_SAFE_NO_PAD.with_backend(b) else {
                continue;
            };
            let msg = e.to_string();
            assert!(
                msg.starts_with(&alloc::format!("backend {} ", b.name())),
                "{msg}"
            );
            match b.unavailable_reason() {
                Some(Unavailable::Lacks(missing)) => {
                    assert_ne!(missing, Features::NONE);
                    assert!(msg.contains("this CPU lacks"), "{msg}");
                }
                Some(Unavailable::NotCompiled) => {
                    assert!(msg.contains("not compiled for this target"), "{msg}")
                }
                None => panic!("{msg}: yet available"),
            }
        }
    }
}
