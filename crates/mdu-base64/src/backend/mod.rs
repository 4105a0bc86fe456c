//! Backend choice: detection once per process, and the one dispatch point of
//! each of the two kernels (encode; decode of a body without padding).
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

use core::sync::atomic::{AtomicU8, Ordering};

use crate::alphabet::Alphabet;

#[cfg(all(target_arch = "aarch64", not(miri)))]
pub(crate) mod aarch64;
pub(crate) mod nibble;
pub(crate) mod scalar;
#[cfg(all(target_arch = "x86_64", not(miri)))]
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

/// Every backend, best first; [`Backend::Generic`] last.
const ALL: [Backend; 4] = [
    Backend::Avx512Vbmi,
    Backend::Avx2,
    Backend::Neon,
    Backend::Generic,
];

impl Backend {
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

    /// Whether this CPU and build can run the backend.
    ///
    /// ```
    /// assert!(mdu_base64::Backend::Generic.is_available());
    /// ```
    pub fn is_available(self) -> bool {
        match self {
            Backend::Generic => true,
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Backend::Avx2 => x86::has_avx2(),
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Backend::Avx512Vbmi => x86::has_avx512vbmi(),
            #[cfg(all(target_arch = "aarch64", not(miri)))]
            Backend::Neon => aarch64::has_neon(),
            _ => false,
        }
    }

    /// The backends this CPU runs, best first (always ends with
    /// [`Backend::Generic`]). Detected once per process.
    ///
    /// ```
    /// assert!(mdu_base64::Backend::available().contains(&mdu_base64::Backend::Generic));
    /// ```
    pub fn available() -> &'static [Backend] {
        use Backend::*;
        // Every subset of the SIMD backends, best first, indexed by the
        // bits of the ones this CPU runs (no allocation: `no_std`).
        const SUBSETS: [&[Backend]; 8] = [
            &[Generic],
            &[Avx512Vbmi, Generic],
            &[Avx2, Generic],
            &[Avx512Vbmi, Avx2, Generic],
            &[Neon, Generic],
            &[Avx512Vbmi, Neon, Generic],
            &[Avx2, Neon, Generic],
            &[Avx512Vbmi, Avx2, Neon, Generic],
        ];
        static CACHE: AtomicU8 = AtomicU8::new(u8::MAX);
        let mut bits = CACHE.load(Ordering::Relaxed);
        if usize::from(bits) >= SUBSETS.len() {
            bits = [Avx512Vbmi, Avx2, Neon]
                .iter()
                .enumerate()
                .filter(|(_, b)| b.is_available())
                .fold(0u8, |acc, (i, _)| acc | 1 << i);
            CACHE.store(bits, Ordering::Relaxed);
        }
        SUBSETS[usize::from(bits)]
    }

    /// The best available backend. Detected on first use and cached in an
    /// atomic for the life of the process.
    ///
    /// ```
    /// assert!(mdu_base64::Backend::detect().is_available());
    /// ```
    pub fn detect() -> Backend {
        static CACHE: AtomicU8 = AtomicU8::new(u8::MAX);
        let cached = CACHE.load(Ordering::Relaxed);
        if let Some(b) = ALL.get(usize::from(cached)) {
            return *b;
        }
        let pos = ALL
            .iter()
            .position(|b| b.is_available())
            .unwrap_or(ALL.len() - 1);
        CACHE.store(pos as u8, Ordering::Relaxed);
        ALL[pos]
    }
}

/// Encodes `src` without padding into all of `dst` (see the module contract).
/// `backend` must be available.
#[inline]
pub(crate) fn encode(backend: Backend, alphabet: &Alphabet, src: &[u8], dst: &mut [u8]) {
    debug_assert_eq!(dst.len(), crate::engine::unpadded_len(src.len()));
    match backend {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx512Vbmi => x86::encode_avx512vbmi(alphabet, src, dst),
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx2 => x86::encode_avx2(alphabet, src, dst),
        #[cfg(all(target_arch = "aarch64", not(miri)))]
        Backend::Neon => aarch64::encode_neon(alphabet, src, dst),
        _ => scalar::encode(&alphabet.encode, src, dst),
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
    #[cfg(all(any(target_arch = "x86_64", target_arch = "aarch64"), not(miri)))]
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
    backend: Backend,
    alphabet: &Alphabet,
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    debug_assert!(src.len() % 4 != 1 && dst.len() == src.len() * 3 / 4);
    match backend {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx512Vbmi => x86::decode_avx512vbmi(alphabet, src, dst),
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        Backend::Avx2 => x86::decode_avx2(alphabet, src, dst),
        #[cfg(all(target_arch = "aarch64", not(miri)))]
        Backend::Neon => aarch64::decode_neon(alphabet, src, dst),
        _ => scalar::decode_body(&alphabet.decode, src, dst),
    }
}
