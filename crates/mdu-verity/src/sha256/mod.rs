//! SHA-256 with a resumable prefix state and two-way interleaved finishing.
//!
//! A [`State`] holds whatever common prefix was absorbed (for example a
//! salt). [`State::finup`] finishes one message from it and
//! [`State::finup2x`] finishes two equal-length messages at once, which on a
//! CPU with SHA-256 instructions (x86_64 SHA-NI, arm64 Crypto Extensions)
//! runs two independent compression chains interleaved and costs about as
//! much as one. The state itself is never
//! modified by either call, so it can be reused for every block of a Merkle
//! tree.
//!
//! The backend is chosen once, when the state is created: the best one this
//! CPU runs ([`Backend::detect`], detected once per process), or a pinned one
//! ([`State::with_backend`]) for tests and benchmarks. The state keeps the
//! witness of the CPU features its kernels need (`mdu_platform::cpu`), so no
//! call asks the CPU again.
//!
//! ```
//! use mdu_verity::sha256::State;
//!
//! let mut salted = State::new();
//! salted.update(b"salt");
//! let (a, b) = salted.finup2x(&[1u8; 4096], &[2u8; 4096]);
//! assert_eq!(a, salted.finup(&[1u8; 4096]));
//! assert_eq!(b, salted.finup(&[2u8; 4096]));
//! ```
//!
//! [`Sha256`] is the same hashing behind RustCrypto's `digest` traits
//! (re-exported as [`digest`]), for code generic over `digest::Digest`.

#[cfg(target_arch = "aarch64")]
mod aarch64;
mod generic;
mod hasher;
#[cfg(target_arch = "x86_64")]
mod x86;

/// RustCrypto's hash traits, in the version [`Sha256`] implements.
pub use digest;
pub use hasher::Sha256;

use core::fmt;

use mdu_platform::backend::{BackendSet, Preference};
use mdu_platform::cpu::{Features, Needs, Witness};

/// Size of a SHA-256 digest in bytes.
pub const DIGEST_LEN: usize = 32;
/// Size of a SHA-256 input block in bytes.
pub const BLOCK_LEN: usize = 64;

pub(crate) const H0: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The 64 round constants (FIPS 180-4, 4.2.2), shared by the SIMD kernels,
/// which load them four at a time.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]
pub(crate) static K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// An implementation of the SHA-256 compression function.
///
/// ```
/// use mdu_verity::sha256::Backend;
///
/// let best = Backend::detect();
/// assert!(Backend::available().contains(&best));
/// assert_eq!(Backend::available().last(), Some(&Backend::Generic));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// x86_64 SHA extensions (with SSSE3 and SSE4.1): a one-way kernel and a
    /// two-way interleaved kernel.
    ShaNi,
    /// arm64 Crypto Extensions (the SHA-256 instructions of the `sha2`
    /// feature, with NEON): a one-way kernel and a two-way interleaved
    /// kernel.
    ArmCe,
    /// The `sha2` crate's block function, one message at a time; runs
    /// everywhere.
    Generic,
    /// x86_64 AVX-512 (F and BW): sixteen equal-length messages at once,
    /// one in each 32-bit lane of the zmm registers
    /// ([`State::finup_many`]); one and two messages with the SHA-NI
    /// kernels when the CPU has them, one at a time with the portable code
    /// otherwise.
    Avx512,
}

/// What each SIMD backend needs, declared once: the `#[target_feature]`
/// list of its kernels, written once for both. [`Backend::needs`] (and
/// through it the selection and the test registry) and the [`Witness`]
/// each kernel takes read these.
pub(crate) mod needs {
    mdu_platform::needs! {
        /// `x86/shani.rs`: the SHA extensions with SSE2, SSSE3 and SSE4.1.
        pub(crate) enum ShaNi: x86_64 "sha,sse2,ssse3,sse4.1";
        /// `x86/avx512.rs`: AVX-512 F and BW.
        pub(crate) enum Avx512: x86_64 "avx512f,avx512bw";
        /// `aarch64/ce.rs`: the SHA-256 instructions with NEON.
        pub(crate) enum ArmCe: aarch64 "neon,sha2";
    }
}

impl Backend {
    /// Every backend, in no particular order (which of [`Backend::ShaNi`]
    /// and [`Backend::Avx512`] is better depends on the CPU: see
    /// [`Backend::available`]).
    ///
    /// ```
    /// use mdu_verity::sha256::Backend;
    /// assert!(Backend::ALL.contains(&Backend::detect()));
    /// ```
    pub const ALL: [Backend; 4] = [
        Backend::ShaNi,
        Backend::Avx512,
        Backend::ArmCe,
        Backend::Generic,
    ];

    /// Every backend this CPU runs, best first; always ends with
    /// [`Backend::Generic`]. Which of [`Backend::ShaNi`] and
    /// [`Backend::Avx512`] comes first depends on the vendor: where
    /// SHA-NI's round instructions run two chains side by side (AMD Zen),
    /// the two-way SHA-NI kernel is about twice as fast as one chain and
    /// beats sixteen AVX-512 lanes; on Intel cores they do not (two-way
    /// SHA-NI is about 1.2 times one-way there), and the sixteen lanes are
    /// about twice as fast as SHA-NI. Without SHA-NI the lanes beat the
    /// portable code anywhere.
    ///
    /// ```
    /// use mdu_verity::sha256::Backend;
    /// for b in Backend::available() {
    ///     assert!(b.is_available());
    /// }
    /// ```
    pub fn available() -> &'static [Backend] {
        <Backend as BackendSet>::available()
    }

    /// The best backend this CPU runs (detected once per process).
    ///
    /// ```
    /// use mdu_verity::sha256::Backend;
    /// assert_eq!(Backend::detect(), Backend::available()[0]);
    /// ```
    pub fn detect() -> Backend {
        <Backend as BackendSet>::detect()
    }

    /// Whether this CPU runs the backend.
    ///
    /// ```
    /// use mdu_verity::sha256::Backend;
    /// assert!(Backend::Generic.is_available());
    /// ```
    pub fn is_available(self) -> bool {
        BackendSet::is_available(self)
    }

    /// The CPU features the backend needs, as it declares them once (the
    /// union of its kernels' `#[target_feature]` lists);
    /// [`Features::NONE`](mdu_platform::cpu::Features::NONE) for the portable
    /// one. [`Backend::Avx512`] runs its one- and two-message hashes on
    /// the SHA-NI kernels where the CPU has those too, and on the portable
    /// code otherwise: it needs only AVX-512 F and BW.
    ///
    /// ```
    /// use mdu_verity::sha256::Backend;
    /// assert_eq!(Backend::ShaNi.needs().to_string(), "sse2, ssse3, sse4.1, sha");
    /// assert_eq!(Backend::ArmCe.needs().to_string(), "neon, sha2");
    /// ```
    pub const fn needs(self) -> Features {
        match self {
            Backend::ShaNi => needs::ShaNi::NEEDS,
            Backend::ArmCe => needs::ArmCe::NEEDS,
            Backend::Avx512 => needs::Avx512::NEEDS,
            Backend::Generic => Features::NONE,
        }
    }

    /// Whether a CPU with features `f` runs the backend in this build (the
    /// x86_64 backends are compiled on x86_64 only, the arm64 one on
    /// aarch64 only): a pure function, tested on CPU profiles.
    ///
    /// ```
    /// use mdu_platform::cpu::Features;
    /// use mdu_verity::sha256::Backend;
    ///
    /// let goldmont = Features { sha: true, sse2: true, ssse3: true, sse4_1: true, ..Features::NONE };
    /// assert_eq!(Backend::ShaNi.runs_on(goldmont), cfg!(target_arch = "x86_64"));
    /// assert!(!Backend::Avx512.runs_on(goldmont));
    /// ```
    pub fn runs_on(self, f: Features) -> bool {
        BackendSet::runs_on(self, f)
    }

    /// Whether [`State::finup2x`] runs two interleaved chains (rather than two
    /// sequential hashes) on this backend; false where this CPU does not
    /// run it.
    ///
    /// ```
    /// use mdu_verity::sha256::Backend;
    /// assert!(!Backend::Generic.has_interleaved_2x());
    /// ```
    pub fn has_interleaved_2x(self) -> bool {
        Kernels::of(self).is_some_and(|k| k.two.is_some())
    }

    /// How many equal-length messages [`State::finup_many`] hashes at once
    /// on this backend: 16 on [`Backend::Avx512`], 2 on the backends with
    /// an interleaved two-way kernel, 1 otherwise (and where this CPU does
    /// not run it).
    ///
    /// ```
    /// use mdu_verity::sha256::Backend;
    /// assert_eq!(Backend::Generic.lanes(), 1);
    /// assert!(Backend::detect().lanes() >= 1);
    /// ```
    pub fn lanes(self) -> usize {
        match Kernels::of(self) {
            Some(k) if k.many.is_some() => MANY,
            Some(k) if k.two.is_some() => 2,
            _ => 1,
        }
    }

    /// A short lowercase name (`"shani"`, `"arm-ce"`, `"avx512"`,
    /// `"generic"`).
    ///
    /// ```
    /// assert_eq!(mdu_verity::sha256::Backend::Generic.name(), "generic");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Backend::ShaNi => "shani",
            Backend::ArmCe => "arm-ce",
            Backend::Generic => "generic",
            Backend::Avx512 => "avx512",
        }
    }
}

/// The selection: SHA-NI before the sixteen AVX-512 lanes, except on
/// Intel's cores (see [`Backend::available`]).
impl BackendSet for Backend {
    const PREFERENCE: &'static Preference<Backend> = &Preference::new(&[
        Backend::ShaNi,
        Backend::Avx512,
        Backend::ArmCe,
        Backend::Generic,
    ]);
    const PREFERENCE_ON_INTEL: &'static Preference<Backend> = &Preference::new(&[
        Backend::Avx512,
        Backend::ShaNi,
        Backend::ArmCe,
        Backend::Generic,
    ]);

    fn needs(self) -> Features {
        Backend::needs(self)
    }

    fn compiled(self) -> bool {
        match self {
            Backend::ShaNi | Backend::Avx512 => cfg!(target_arch = "x86_64"),
            Backend::ArmCe => cfg!(target_arch = "aarch64"),
            Backend::Generic => true,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The requested backend cannot run on this CPU: it lacks features the
/// backend needs, or the backend is not compiled for this target.
///
/// ```
/// use mdu_verity::sha256::{Backend, State};
/// for b in [Backend::ShaNi, Backend::ArmCe, Backend::Generic] {
///     assert_eq!(State::with_backend(b).is_ok(), b.is_available());
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackendUnavailable(pub Backend);

impl fmt::Display for BackendUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let backend = self.0;
        let missing = backend.needs().difference(Features::get());
        if !backend.compiled() {
            write!(
                f,
                "SHA-256 backend `{backend}` is not available: it is not compiled for this target"
            )?;
        } else if missing != Features::NONE {
            write!(
                f,
                "SHA-256 backend `{backend}` is not available on this CPU: it lacks {missing} \
                 (the backend needs {})",
                backend.needs()
            )?;
        } else {
            write!(
                f,
                "SHA-256 backend `{backend}` is not available on this CPU"
            )?;
        }
        write!(f, "; available: {:?}", Backend::available())
    }
}

impl std::error::Error for BackendUnavailable {}

/// A SHA-256 state that has absorbed a prefix; finish it once or twice.
///
/// `update` absorbs more prefix bytes; `finup` and `finup2x` finish copies of
/// the state and leave it untouched.
///
/// ```
/// use mdu_verity::sha256::State;
///
/// let mut st = State::new();
/// st.update(b"ab");
/// let d = st.finup(b"c");
/// assert_eq!(d, State::new().finup(b"abc"));
/// assert_eq!(d[..4], [0xba, 0x78, 0x16, 0xbf]);
/// ```
#[derive(Clone)]
pub struct State {
    h: [u32; 8],
    buf: [u8; BLOCK_LEN],
    /// Bytes absorbed so far (the buffered tail is `total % 64` bytes).
    total: u64,
    /// The kernels of the state's backend, with the witnesses they take.
    kernels: Kernels,
}

impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("State")
            .field("absorbed", &self.total)
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}

impl Default for State {
    fn default() -> Self {
        State::new()
    }
}

impl State {
    /// A fresh state (nothing absorbed) on the best backend of this CPU.
    ///
    /// ```
    /// let st = mdu_verity::sha256::State::new();
    /// assert_eq!(st.absorbed(), 0);
    /// ```
    pub fn new() -> State {
        let kernels = Kernels::of(Backend::detect()).unwrap_or(Kernels::GENERIC);
        State::on(kernels)
    }

    /// A fresh state pinned to `backend`, or an error if this CPU cannot run
    /// it.
    ///
    /// ```
    /// use mdu_verity::sha256::{Backend, State};
    /// let st = State::with_backend(Backend::Generic)?;
    /// assert_eq!(st.backend(), Backend::Generic);
    /// # Ok::<(), mdu_verity::sha256::BackendUnavailable>(())
    /// ```
    pub fn with_backend(backend: Backend) -> Result<State, BackendUnavailable> {
        Kernels::of(backend)
            .map(State::on)
            .ok_or(BackendUnavailable(backend))
    }

    fn on(kernels: Kernels) -> State {
        State {
            h: H0,
            buf: [0; BLOCK_LEN],
            total: 0,
            kernels,
        }
    }

    /// The backend this state runs on.
    ///
    /// ```
    /// use mdu_verity::sha256::{Backend, State};
    /// assert_eq!(State::new().backend(), Backend::detect());
    /// ```
    pub fn backend(&self) -> Backend {
        self.kernels.backend
    }

    /// Number of bytes absorbed so far.
    ///
    /// ```
    /// let mut st = mdu_verity::sha256::State::new();
    /// st.update(&[0; 100]);
    /// assert_eq!(st.absorbed(), 100);
    /// ```
    pub fn absorbed(&self) -> u64 {
        self.total
    }

    /// Absorb `data` into the prefix.
    ///
    /// ```
    /// use mdu_verity::sha256::State;
    /// let mut a = State::new();
    /// a.update(b"hello ");
    /// a.update(b"world");
    /// assert_eq!(a.finup(b""), State::new().finup(b"hello world"));
    /// ```
    pub fn update(&mut self, mut data: &[u8]) {
        let used = self.buffered();
        self.total = self.total.wrapping_add(data.len() as u64);
        if used > 0 {
            let take = (BLOCK_LEN - used).min(data.len());
            self.buf[used..used + take].copy_from_slice(&data[..take]);
            data = &data[take..];
            if used + take < BLOCK_LEN {
                return;
            }
            let block = self.buf;
            self.compress(core::slice::from_ref(&block));
        }
        let (blocks, tail) = data.as_chunks::<BLOCK_LEN>();
        self.compress(blocks);
        self.buf[..tail.len()].copy_from_slice(tail);
    }

    /// SHA-256 of (prefix || `msg`); the state is unchanged.
    ///
    /// ```
    /// use mdu_verity::sha256::State;
    /// let empty = State::new().finup(&[]);
    /// assert_eq!(empty[..4], [0xe3, 0xb0, 0xc4, 0x42]);
    /// ```
    pub fn finup(&self, msg: &[u8]) -> [u8; DIGEST_LEN] {
        let mut h = self.h;
        let pending = Pending::new(self, msg);
        pending.run1(&mut h, self.kernels.one);
        to_bytes(&h)
    }

    /// SHA-256 of (prefix || `a`) and of (prefix || `b`); the state is
    /// unchanged.
    ///
    /// For equal lengths the two messages are hashed together (interleaved
    /// on [`Backend::ShaNi`] and [`Backend::ArmCe`]); different lengths fall
    /// back to two [`finup`](State::finup)s. Results are always identical to
    /// two `finup`s.
    ///
    /// ```
    /// use mdu_verity::sha256::State;
    /// let st = State::new();
    /// let (x, y) = st.finup2x(b"abc", b"abcd");
    /// assert_eq!((x, y), (st.finup(b"abc"), st.finup(b"abcd")));
    /// ```
    pub fn finup2x(&self, a: &[u8], b: &[u8]) -> ([u8; DIGEST_LEN], [u8; DIGEST_LEN]) {
        if a.len() != b.len() {
            return (self.finup(a), self.finup(b));
        }
        match self.kernels.two {
            Some(two) => {
                let (mut ha, mut hb) = (self.h, self.h);
                let pa = Pending::new(self, a);
                let pb = Pending::new(self, b);
                Pending::run2(&pa, &pb, &mut ha, &mut hb, two);
                (to_bytes(&ha), to_bytes(&hb))
            }
            None => (self.finup(a), self.finup(b)),
        }
    }

    /// SHA-256 of (prefix || `msgs[i]`) into `out[i]` for every message
    /// (as far as both slices go); the state is unchanged.
    ///
    /// Equal-length messages are hashed [`Backend::lanes`] at a time:
    /// sixteen in the lanes of [`Backend::Avx512`], in pairs on the
    /// interleaved two-way kernels. Messages of other lengths than their
    /// neighbours fall back to pairs or single hashes. Results are always
    /// identical to one [`finup`](State::finup) per message.
    ///
    /// ```
    /// use mdu_verity::sha256::State;
    /// let st = State::new();
    /// let blocks: Vec<Vec<u8>> = (0..20u8).map(|i| vec![i; 4096]).collect();
    /// let msgs: Vec<&[u8]> = blocks.iter().map(Vec::as_slice).collect();
    /// let mut out = vec![[0u8; 32]; msgs.len()];
    /// st.finup_many(&msgs, &mut out);
    /// for (m, d) in msgs.iter().zip(&out) {
    ///     assert_eq!(*d, st.finup(m));
    /// }
    /// ```
    pub fn finup_many(&self, msgs: &[&[u8]], out: &mut [[u8; DIGEST_LEN]]) {
        let n = msgs.len().min(out.len());
        let (mut msgs, mut out) = (&msgs[..n], &mut out[..n]);
        if let Some(many) = self.kernels.many {
            while msgs.len() >= MANY {
                let (group, rest) = msgs.split_at(MANY);
                let (o, orest) = out.split_at_mut(MANY);
                if group.iter().all(|m| m.len() == group[0].len()) {
                    self.finup_lanes(group, o, many);
                } else {
                    self.finup_pairs(group, o);
                }
                (msgs, out) = (rest, orest);
            }
        }
        self.finup_pairs(msgs, out);
    }

    /// `finup_many` two by two.
    fn finup_pairs(&self, msgs: &[&[u8]], out: &mut [[u8; DIGEST_LEN]]) {
        let mut pairs = msgs.chunks_exact(2);
        let mut outs = out.chunks_exact_mut(2);
        for (m, o) in (&mut pairs).zip(&mut outs) {
            (o[0], o[1]) = self.finup2x(m[0], m[1]);
        }
        if let ([m], [o]) = (pairs.remainder(), outs.into_remainder()) {
            *o = self.finup(m);
        }
    }

    /// Sixteen messages of one length through the many-lane kernel.
    fn finup_lanes(&self, msgs: &[&[u8]], out: &mut [[u8; DIGEST_LEN]], many: Many) {
        debug_assert_eq!(msgs.len(), MANY);
        let p: [Pending<'_>; MANY] = core::array::from_fn(|i| Pending::new(self, msgs[i]));
        let mut h: [[u32; MANY]; 8] = core::array::from_fn(|i| [self.h[i]; MANY]);
        // Equal message lengths from one state give equal shapes.
        if p[0].head.is_some() {
            let heads: [&[[u8; BLOCK_LEN]]; MANY] = core::array::from_fn(|i| p[i].head.as_slice());
            many.run(&mut h, &heads);
        }
        many.run(&mut h, &core::array::from_fn(|i| p[i].body));
        many.run(
            &mut h,
            &core::array::from_fn(|i| &p[i].tail[..p[i].tail_blocks]),
        );
        for (lane, o) in out.iter_mut().enumerate() {
            *o = to_bytes(&core::array::from_fn(|i| h[i][lane]));
        }
    }

    fn buffered(&self) -> usize {
        (self.total % BLOCK_LEN as u64) as usize
    }

    fn compress(&mut self, blocks: &[[u8; BLOCK_LEN]]) {
        if blocks.is_empty() {
            return;
        }
        self.kernels.one.run(&mut self.h, blocks);
    }
}

/// Messages of a many-lane kernel.
const MANY: usize = 16;

/// A one-way block function: compress whole blocks into the state.
#[derive(Clone, Copy, Debug)]
enum One {
    Generic,
    #[cfg(target_arch = "x86_64")]
    ShaNi(Witness<needs::ShaNi>),
    #[cfg(target_arch = "aarch64")]
    ArmCe(Witness<needs::ArmCe>),
}

impl One {
    fn run(self, h: &mut [u32; 8], blocks: &[[u8; BLOCK_LEN]]) {
        match self {
            One::Generic => generic::compress(h, blocks),
            #[cfg(target_arch = "x86_64")]
            One::ShaNi(w) => x86::shani::compress(w, h, blocks),
            #[cfg(target_arch = "aarch64")]
            One::ArmCe(w) => aarch64::ce::compress(w, h, blocks),
        }
    }
}

/// A two-way interleaved block function: `(state_a, state_b, blocks_a,
/// blocks_b)`.
#[derive(Clone, Copy, Debug)]
enum Two {
    #[cfg(target_arch = "x86_64")]
    ShaNi(Witness<needs::ShaNi>),
    #[cfg(target_arch = "aarch64")]
    ArmCe(Witness<needs::ArmCe>),
}

impl Two {
    // No two-way kernel off x86_64 and aarch64: the type is empty there.
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        allow(unused_variables)
    )]
    fn run(
        self,
        ha: &mut [u32; 8],
        hb: &mut [u32; 8],
        a: &[[u8; BLOCK_LEN]],
        b: &[[u8; BLOCK_LEN]],
    ) {
        match self {
            #[cfg(target_arch = "x86_64")]
            Two::ShaNi(w) => x86::shani::compress2x(w, ha, hb, a, b),
            #[cfg(target_arch = "aarch64")]
            Two::ArmCe(w) => aarch64::ce::compress2x(w, ha, hb, a, b),
        }
    }
}

/// A many-lane block function: the states word-major (`h[word][lane]`)
/// and the blocks of each lane, every lane with the same number of blocks.
#[derive(Clone, Copy, Debug)]
enum Many {
    #[cfg(target_arch = "x86_64")]
    Avx512(Witness<needs::Avx512>),
}

impl Many {
    // No many-lane kernel off x86_64: the type is empty there.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    fn run(self, h: &mut [[u32; MANY]; 8], blocks: &[&[[u8; BLOCK_LEN]]; MANY]) {
        match self {
            #[cfg(target_arch = "x86_64")]
            Many::Avx512(w) => x86::avx512::compress16(w, h, blocks),
        }
    }
}

/// The block functions of a backend, each SIMD one with the witness of
/// the features it needs: made once per [`State`].
#[derive(Clone, Copy, Debug)]
struct Kernels {
    backend: Backend,
    one: One,
    /// `None` when the backend has no interleaved kernel (two sequential
    /// hashes are then just as fast).
    two: Option<Two>,
    /// `None` when the backend has no many-lane kernel.
    many: Option<Many>,
}

impl Kernels {
    const GENERIC: Kernels = Kernels {
        backend: Backend::Generic,
        one: One::Generic,
        two: None,
        many: None,
    };

    /// The one dispatch point: the kernels of `backend`, or `None` when
    /// this CPU does not run it (the witnesses come from the process-wide
    /// detection).
    fn of(backend: Backend) -> Option<Kernels> {
        match backend {
            Backend::Generic => Some(Kernels::GENERIC),
            #[cfg(target_arch = "x86_64")]
            Backend::ShaNi => {
                let w = Witness::detect()?;
                Some(Kernels {
                    backend,
                    one: One::ShaNi(w),
                    two: Some(Two::ShaNi(w)),
                    many: None,
                })
            }
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => {
                let lanes = Witness::detect()?;
                let sha = Witness::detect();
                Some(Kernels {
                    backend,
                    one: sha.map_or(One::Generic, One::ShaNi),
                    two: sha.map(Two::ShaNi),
                    many: Some(Many::Avx512(lanes)),
                })
            }
            #[cfg(target_arch = "aarch64")]
            Backend::ArmCe => {
                let w = Witness::detect()?;
                Some(Kernels {
                    backend,
                    one: One::ArmCe(w),
                    two: Some(Two::ArmCe(w)),
                    many: None,
                })
            }
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }
}

fn to_bytes(h: &[u32; 8]) -> [u8; DIGEST_LEN] {
    let mut out = [0u8; DIGEST_LEN];
    for (o, w) in out.chunks_exact_mut(4).zip(h) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// The blocks that finish one message from a state: an optional head block
/// (buffered prefix bytes spliced with the start of the message), the whole
/// blocks of the message in place, and one or two padding blocks built on
/// the stack. Two messages of equal length from the same state have the same
/// shape, which is what lets them run side by side.
struct Pending<'a> {
    head: Option<[u8; BLOCK_LEN]>,
    body: &'a [[u8; BLOCK_LEN]],
    tail: [[u8; BLOCK_LEN]; 2],
    tail_blocks: usize,
}

impl<'a> Pending<'a> {
    fn new(st: &State, msg: &'a [u8]) -> Pending<'a> {
        let used = st.buffered();
        let mut rest = msg;
        let mut head = None;
        // Bytes carried into the tail: buffered prefix bytes (when the message
        // does not complete the head block) then the message's last bytes.
        let mut carry = [0u8; BLOCK_LEN];
        let mut carry_len = 0;
        if used > 0 {
            if msg.len() >= BLOCK_LEN - used {
                let mut block = st.buf;
                block[used..].copy_from_slice(&msg[..BLOCK_LEN - used]);
                head = Some(block);
                rest = &msg[BLOCK_LEN - used..];
            } else {
                carry[..used].copy_from_slice(&st.buf[..used]);
                carry_len = used;
            }
        }
        let (body, rem) = rest.as_chunks::<BLOCK_LEN>();
        carry[carry_len..carry_len + rem.len()].copy_from_slice(rem);
        carry_len += rem.len();

        let bits = st.total.wrapping_add(msg.len() as u64).wrapping_mul(8);
        let mut tail = [[0u8; BLOCK_LEN]; 2];
        tail[0][..carry_len].copy_from_slice(&carry[..carry_len]);
        tail[0][carry_len] = 0x80;
        let tail_blocks = if carry_len < BLOCK_LEN - 8 { 1 } else { 2 };
        tail[tail_blocks - 1][BLOCK_LEN - 8..].copy_from_slice(&bits.to_be_bytes());
        Pending {
            head,
            body,
            tail,
            tail_blocks,
        }
    }

    fn run1(&self, h: &mut [u32; 8], one: One) {
        if let Some(head) = &self.head {
            one.run(h, core::slice::from_ref(head));
        }
        one.run(h, self.body);
        one.run(h, &self.tail[..self.tail_blocks]);
    }

    fn run2(a: &Pending<'_>, b: &Pending<'_>, ha: &mut [u32; 8], hb: &mut [u32; 8], two: Two) {
        // Equal message lengths from one state give equal shapes.
        debug_assert_eq!(a.body.len(), b.body.len());
        debug_assert_eq!(a.tail_blocks, b.tail_blocks);
        if let (Some(x), Some(y)) = (&a.head, &b.head) {
            two.run(ha, hb, core::slice::from_ref(x), core::slice::from_ref(y));
        }
        two.run(ha, hb, a.body, b.body);
        two.run(ha, hb, &a.tail[..a.tail_blocks], &b.tail[..b.tail_blocks]);
    }
}

#[cfg(test)]
mod tests;
