//! The encoder's LFSR kernels and their one dispatch point, [`Kernel`].
//!
//! # The contract every kernel keeps
//!
//! A kernel runs the LFSR steps of a run of [`Blocks`] of one round on
//! that round's registers: `state` holds `roots` rows of `bs` bytes (row
//! `j` holds register `j` of every codeword of the round), each block is
//! `bs` bytes and gives the next message byte of each of the `bs`
//! codewords, and the blocks are taken in order. The result is
//! byte-identical to the portable kernel (`generic`) for every root count
//! (2..=24) and every block size the layout accepts; the vector kernels
//! (`driver`, over the per-ISA `Lanes` of `x86` and `aarch64`) need `bs` to
//! be a multiple of their vector width, which every block size (a power
//! of two, at least 512) is. A kernel reads only the blocks of the run and
//! writes only `state`.
//!
//! Each backend declares once what it needs ([`Backend::needs`], read
//! from the `needs` types, which also name the witness each kernel
//! takes). The CPU's features are detected once per process
//! (`mdu_platform::cpu`); an encoder (or a decoded round) picks its [`Kernel`]
//! once, with the witness of its features, and [`Kernel::run`] is the one
//! `match` that reaches a `#[target_feature]` entry point.

// The vector kernels are compiled where `mdu_platform::simd` has their
// register types: x86_64 and little-endian aarch64, not under Miri
// (`cfg(x86_simd)`, `cfg(arm_simd)`, either: `cfg(simd)`, named by build.rs).
#[cfg(arm_simd)]
mod aarch64;
#[cfg(simd)]
mod driver;
mod generic;
#[cfg(x86_simd)]
mod x86;

use std::fmt;

use mdu_platform::backend::{BackendSet, Preference};
#[cfg(simd)]
use mdu_platform::cpu::Witness;
use mdu_platform::cpu::{Features, Needs};

use super::gf::Code;

/// The blocks of one round in a pushed buffer: `count` blocks of
/// `block_size` bytes, the first at byte `first` of `input` and each
/// `stride` bytes after the one before (the blocks between belong to the
/// other rounds; a stride of 0 repeats one block).
pub(crate) struct Blocks<'a> {
    pub(crate) input: &'a [u8],
    pub(crate) first: usize,
    pub(crate) stride: usize,
    pub(crate) count: usize,
    pub(crate) block_size: usize,
}

impl Blocks<'_> {
    /// The byte just past the last block (`count` is not zero).
    #[cfg_attr(not(simd), allow(dead_code))]
    pub(crate) fn last_end(&self) -> usize {
        self.first + (self.count - 1) * self.stride + self.block_size
    }

    pub(super) fn get(&self, i: usize) -> &[u8] {
        let at = self.first + i * self.stride;
        &self.input[at..at + self.block_size]
    }
}

/// What each SIMD backend needs, declared once: the `#[target_feature]`
/// list of its kernel, written once for both. [`Backend::needs`] (and through
/// it the selection and the test registry) and the
/// [`Witness`](mdu_platform::cpu::Witness) each kernel takes read these.
pub(crate) mod needs {
    mdu_platform::needs! {
        /// `x86.rs`, `run_gfni512`: the GFNI affine transform on zmm.
        pub(crate) enum Gfni512: x86_64 "avx512f,gfni";
        /// `x86.rs`, `run_gfni`: the GFNI affine transform on ymm.
        pub(crate) enum Gfni: x86_64 "avx2,gfni";
        /// `x86.rs`, `run_avx2`: `vpshufb` nibble lookups.
        pub(crate) enum Avx2: x86_64 "avx2";
        /// `aarch64.rs`, `run_neon`: `tbl` nibble lookups.
        pub(crate) enum Neon: aarch64 "neon";
    }
}

/// An implementation of the FEC encoder's LFSR steps (the parity of
/// [`Encoder`](super::Encoder) and the re-encoding of a damaged round).
///
/// Every backend gives the same parity. [`Backend::detect`] picks the best
/// one this CPU runs, once per process.
///
/// ```
/// use mdu_verity::dmverity::fec::Backend;
///
/// let all = Backend::available();
/// assert_eq!(all.first(), Some(&Backend::detect()));
/// assert_eq!(all.last(), Some(&Backend::Generic));
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// x86_64 GFNI with AVX-512 F: 64 codewords per step, one
    /// `vgf2p8affineqb` per generator coefficient on zmm.
    Gfni512,
    /// x86_64 GFNI with AVX2: 32 codewords per step, one `vgf2p8affineqb`
    /// per generator coefficient on ymm.
    Gfni,
    /// x86_64 AVX2: 32 codewords per step, two `vpshufb` nibble lookups per
    /// generator coefficient.
    Avx2,
    /// aarch64 NEON: 16 codewords per step, two `tbl` nibble lookups per
    /// generator coefficient.
    Neon,
    /// Portable: 256-entry tables, one block after the other; no `unsafe`.
    Generic,
}

impl Backend {
    /// Every backend, best first; [`Backend::Generic`] last.
    ///
    /// ```
    /// use mdu_verity::dmverity::fec::Backend;
    /// assert_eq!(Backend::ALL.last(), Some(&Backend::Generic));
    /// ```
    pub const ALL: [Backend; 5] = [
        Backend::Gfni512,
        Backend::Gfni,
        Backend::Avx2,
        Backend::Neon,
        Backend::Generic,
    ];

    /// A short lowercase name (`"gfni512"`, `"gfni"`, `"avx2"`, `"neon"`,
    /// `"generic"`).
    ///
    /// ```
    /// assert_eq!(mdu_verity::dmverity::fec::Backend::Gfni512.name(), "gfni512");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Gfni512 => "gfni512",
            Backend::Gfni => "gfni",
            Backend::Avx2 => "avx2",
            Backend::Neon => "neon",
            Backend::Generic => "generic",
        }
    }

    /// The CPU features the backend needs, as it declares them once (the
    /// union of its kernel's `#[target_feature]` lists);
    /// [`Features::NONE`](mdu_platform::cpu::Features::NONE) for the portable
    /// one.
    ///
    /// ```
    /// use mdu_verity::dmverity::fec::Backend;
    /// assert_eq!(Backend::Gfni512.needs().to_string(), "avx512f, gfni");
    /// ```
    pub const fn needs(self) -> Features {
        match self {
            Backend::Gfni512 => needs::Gfni512::NEEDS,
            Backend::Gfni => needs::Gfni::NEEDS,
            Backend::Avx2 => needs::Avx2::NEEDS,
            Backend::Neon => needs::Neon::NEEDS,
            Backend::Generic => Features::NONE,
        }
    }

    /// Whether a CPU with features `f` runs the backend in this build (the
    /// x86_64 kernels are compiled on x86_64 only, NEON on little-endian
    /// aarch64 only, neither under Miri): a pure function, tested on CPU
    /// profiles.
    ///
    /// ```
    /// use mdu_platform::cpu::Features;
    /// use mdu_verity::dmverity::fec::Backend;
    ///
    /// let zen3 = Features { avx2: true, ..Features::NONE };
    /// assert_eq!(Backend::Avx2.runs_on(zen3), cfg!(target_arch = "x86_64"));
    /// assert!(!Backend::Gfni.runs_on(zen3));
    /// ```
    pub fn runs_on(self, f: Features) -> bool {
        BackendSet::runs_on(self, f)
    }

    /// Whether this CPU runs the backend.
    ///
    /// ```
    /// assert!(mdu_verity::dmverity::fec::Backend::Generic.is_available());
    /// ```
    pub fn is_available(self) -> bool {
        BackendSet::is_available(self)
    }

    /// The backends this CPU runs, best first (always ends with
    /// [`Backend::Generic`]).
    ///
    /// ```
    /// use mdu_verity::dmverity::fec::Backend;
    /// assert!(Backend::available().iter().all(|b| b.is_available()));
    /// ```
    pub fn available() -> &'static [Backend] {
        <Backend as BackendSet>::available()
    }

    /// The best backend this CPU runs: the one encoders use.
    ///
    /// ```
    /// use mdu_verity::dmverity::fec::Backend;
    /// assert_eq!(Backend::detect(), Backend::available()[0]);
    /// ```
    pub fn detect() -> Backend {
        <Backend as BackendSet>::detect()
    }
}

/// The selection: [`Backend::ALL`] in its order on every CPU.
impl BackendSet for Backend {
    const PREFERENCE: &'static Preference<Backend> = &Preference::new(&Backend::ALL);

    fn needs(self) -> Features {
        Backend::needs(self)
    }

    fn compiled(self) -> bool {
        match self {
            Backend::Gfni512 | Backend::Gfni | Backend::Avx2 => {
                cfg!(x86_simd)
            }
            Backend::Neon => cfg!(arm_simd),
            Backend::Generic => true,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend's LFSR kernel with the witness of the features it needs:
/// chosen once per encoder (or per decoded round).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    Generic,
    #[cfg(x86_simd)]
    Avx2(Witness<needs::Avx2>),
    #[cfg(x86_simd)]
    Gfni(Witness<needs::Gfni>),
    #[cfg(x86_simd)]
    Gfni512(Witness<needs::Gfni512>),
    #[cfg(arm_simd)]
    Neon(Witness<needs::Neon>),
}

impl Kernel {
    /// The kernel of `backend`, or `None` when this CPU does not run it.
    pub(crate) fn of(backend: Backend) -> Option<Kernel> {
        match backend {
            Backend::Generic => Some(Kernel::Generic),
            #[cfg(x86_simd)]
            Backend::Gfni512 => Witness::detect().map(Kernel::Gfni512),
            #[cfg(x86_simd)]
            Backend::Gfni => Witness::detect().map(Kernel::Gfni),
            #[cfg(x86_simd)]
            Backend::Avx2 => Witness::detect().map(Kernel::Avx2),
            #[cfg(arm_simd)]
            Backend::Neon => Witness::detect().map(Kernel::Neon),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// The kernel of the best backend this CPU runs.
    pub(crate) fn detect() -> Kernel {
        Kernel::of(Backend::detect()).unwrap_or(Kernel::Generic)
    }

    /// The backend this kernel is.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn backend(self) -> Backend {
        match self {
            Kernel::Generic => Backend::Generic,
            #[cfg(x86_simd)]
            Kernel::Avx2(_) => Backend::Avx2,
            #[cfg(x86_simd)]
            Kernel::Gfni(_) => Backend::Gfni,
            #[cfg(x86_simd)]
            Kernel::Gfni512(_) => Backend::Gfni512,
            #[cfg(arm_simd)]
            Kernel::Neon(_) => Backend::Neon,
        }
    }

    /// The steps of `blocks` on the registers `state` of their round.
    pub(crate) fn run(self, code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
        match self {
            Kernel::Generic => generic::run(code, state, blocks),
            #[cfg(x86_simd)]
            Kernel::Avx2(w) => x86::run_avx2(w, code, state, blocks),
            #[cfg(x86_simd)]
            Kernel::Gfni(w) => x86::run_gfni(w, code, state, blocks),
            #[cfg(x86_simd)]
            Kernel::Gfni512(w) => x86::run_gfni512(w, code, state, blocks),
            #[cfg(arm_simd)]
            Kernel::Neon(w) => aarch64::run_neon(w, code, state, blocks),
        }
    }
}

/// Every kernel this CPU runs, the portable one first; a test run prints
/// which it exercised.
#[cfg(test)]
pub(crate) fn available() -> Vec<Kernel> {
    let mut k = vec![Kernel::Generic];
    k.extend(
        Backend::available()
            .iter()
            .rev()
            .filter_map(|&b| Kernel::of(b))
            .filter(|k| *k != Kernel::Generic),
    );
    println!("FEC kernels run here: {k:?}");
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_is_a_function_of_the_features() {
        use Backend::*;
        let x86 = cfg!(x86_simd);
        let haswell = Features {
            avx2: true,
            ..Features::NONE
        };
        let alder_lake = Features {
            gfni: true,
            ..haswell
        };
        let ice_lake = Features {
            avx512f: true,
            avx512bw: true,
            ..alder_lake
        };
        let skylake_x = Features {
            gfni: false,
            ..ice_lake
        };
        let profiles: [(&str, Features, &[Backend]); 5] = [
            (
                "Intel Ice Lake, AMD Zen 4",
                ice_lake,
                &[Gfni512, Gfni, Avx2, Generic],
            ),
            ("Intel Alder Lake", alder_lake, &[Gfni, Avx2, Generic]),
            ("Intel Skylake-X (no GFNI)", skylake_x, &[Avx2, Generic]),
            ("AMD Zen 3, Intel Haswell", haswell, &[Avx2, Generic]),
            ("Intel Westmere", Features::NONE, &[Generic]),
        ];
        for (name, f, want) in profiles {
            let got = Backend::available_on(f);
            assert_eq!(got, if x86 { want } else { &[Generic] }, "{name}");
        }
        let arm64 = Features {
            neon: true,
            ..Features::NONE
        };
        assert_eq!(Neon.runs_on(arm64), cfg!(arm_simd));
        assert!(Generic.runs_on(Features::NONE));
    }

    #[test]
    fn a_kernel_exists_exactly_for_the_available_backends() {
        for b in Backend::ALL {
            let k = Kernel::of(b);
            assert_eq!(k.is_some(), b.is_available(), "{b}");
            assert_eq!(k.map(Kernel::backend), k.is_some().then_some(b));
        }
        assert_eq!(Kernel::detect().backend(), Backend::detect());
    }
}
