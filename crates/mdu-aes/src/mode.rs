//! The one skeleton of every AES mode: the backends, their detection and
//! priority order, forced backends, key checks, key setup and wiping, and
//! the one dispatch point of every request ([`Engine`]).
//!
//! A mode crate (XTS, CBC) supplies only what is its own: through [`Mode`],
//! what each backend needs of the CPU (one [`Needs`] type per backend), its
//! weak-key rule and its portable implementation; through `SimdKeys`
//! (where SIMD backends are compiled), its SIMD round keys; through
//! [`Kernels`](crate::Kernels), one entry point per register width, each
//! taking the [`Witness`](mdu_platform::cpu::Witness) of its backend.
//! Everything a key goes through between the caller and a kernel is
//! written once, here and in `dispatch.rs` (the witness of the chosen backend,
//! kept with its round keys, and the one exhaustive `match` that reaches
//! its kernel).

use alloc::boxed::Box;
use core::fmt;
use core::marker::PhantomData;

use aes::cipher::array::ArraySize;
use aes::cipher::consts::{U16, U32, U64};
use aes::cipher::typenum::Unsigned;
use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, BlockSizeUser, KeyInit};
use mdu_core::{DataUnitCipher, DataUnitSize, Direction, Error, Iv};
use mdu_platform::backend::{BackendSet, Preference};
use mdu_platform::cpu::{Features, Needs};
use zeroize::ZeroizeOnDrop;

use crate::dispatch::{Kernels, Simd};
use crate::{CpuFeatures, Ivs, SetupError};

/// What the portable backends need of a 128-bit block cipher: RustCrypto's
/// `aes::Aes128` and `aes::Aes256`, and every other block cipher of its
/// traits with 16-byte blocks (`serpent`, `twofish`, `sm4`, `camellia`),
/// which `mdu_xts::BlockXts` and `mdu_cbc::BlockCbc` run, whose key
/// schedules zeroize themselves on drop (their `zeroize` feature).
/// Implemented for every type that has the bounds.
///
/// ```
/// fn takes<C: mdu_aes::BlockAes>() {}
/// takes::<aes::Aes256>();
/// ```
pub trait BlockAes:
    BlockCipherEncrypt
    + BlockCipherDecrypt
    + BlockSizeUser<BlockSize = U16>
    + KeyInit
    + ZeroizeOnDrop
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<A> BlockAes for A where
    A: BlockCipherEncrypt
        + BlockCipherDecrypt
        + BlockSizeUser<BlockSize = U16>
        + KeyInit
        + ZeroizeOnDrop
        + Clone
        + Send
        + Sync
        + 'static
{
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Aes128 {}
    impl Sealed for super::Aes256 {}
}

/// An AES key size: [`Aes128`] or [`Aes256`]. A mode's cipher type is
/// generic over it (`Xts<Aes256>`, `Ecb<Aes128>`). Sealed: these two are
/// all.
///
/// ```
/// use mdu_aes::{Aes128, Aes256, Ecb, KeySize};
///
/// fn key_bytes<K: KeySize>(_: &Ecb<K>) -> usize {
///     K::LEN
/// }
/// let ecb = Ecb::<Aes256>::new(&[7; 32])?;
/// assert_eq!(key_bytes(&ecb), 32);
/// assert_eq!((Aes128::BITS, Aes256::BITS), (128, 256));
/// # Ok::<(), mdu_aes::SetupError>(())
/// ```
pub trait KeySize: sealed::Sealed + Send + Sync + 'static {
    /// Bytes in one AES key: 16 or 32.
    const LEN: usize;
    /// AES rounds: 10 or 14.
    const NR: usize;
    /// Key bits, for names and `Debug`: 128 or 256.
    const BITS: u32;
    /// [`LEN`](Self::LEN) as a type-level number (`U16`, `U32`), as
    /// RustCrypto's `KeySizeUser` counts key bytes.
    type Len: ArraySize;
    /// Two keys of this size, one after the other (`U32`, `U64`): the
    /// whole key of XTS, its data key then its tweak key.
    type DoubleLen: ArraySize;
    /// The portable AES of this key size.
    type Block: BlockAes;
}

/// AES-128: 16-byte keys, 10 rounds.
///
/// ```
/// use mdu_aes::{Aes128, KeySize};
/// assert_eq!((Aes128::LEN, Aes128::NR), (16, 10));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Aes128;

/// AES-256: 32-byte keys, 14 rounds.
///
/// ```
/// use mdu_aes::{Aes256, KeySize};
/// assert_eq!((Aes256::LEN, Aes256::NR), (32, 14));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Aes256;

impl KeySize for Aes128 {
    const LEN: usize = 16;
    const NR: usize = 10;
    const BITS: u32 = 128;
    type Len = U16;
    type DoubleLen = U32;
    type Block = aes::Aes128;
}

impl KeySize for Aes256 {
    const LEN: usize = 32;
    const NR: usize = 14;
    const BITS: u32 = 256;
    type Len = U32;
    type DoubleLen = U64;
    type Block = aes::Aes256;
}

/// Where a request reads and writes.
pub enum Io<'a> {
    /// Read and write the same buffer.
    InPlace(&'a mut [u8]),
    /// Read the first, write the second (the same length).
    To(&'a [u8], &'a mut [u8]),
}

/// The arguments of a SIMD kernel, as plain values: the IVs go in
/// registers (see [`Ivs::parts`]).
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The IV of unit 0 ([`Ivs::Counter`]), as a little-endian integer.
    pub first: u128,
    /// The IV step per unit ([`Ivs::Counter`]).
    pub step: u64,
    /// One IV per unit ([`Ivs::List`]), or `None` for counters.
    pub list: Option<&'a [Iv]>,
    /// Bytes per data unit.
    pub unit: usize,
    /// Data units in the request.
    pub count: usize,
    /// The first byte read.
    pub src: *const u8,
    /// The first byte written (`src` itself in place).
    pub dst: *mut u8,
}

/// An AES mode as the skeleton sees it: everything about it that is not
/// shared with the other modes and compiles on every target. Its SIMD
/// half, where SIMD backends are compiled, is `SimdKeys` and
/// [`Kernels`](crate::Kernels).
pub trait Mode: Copy + Eq + Ord + core::hash::Hash + fmt::Debug + Send + Sync + 'static {
    /// The crate, as errors name it (`"mdu-xts"`).
    const CRATE: &'static str;

    /// The length of a whole key of this mode with AES key size `K`, as a
    /// type-level number: `K::Len` for one AES key (CBC, ECB),
    /// `K::DoubleLen` for two (XTS: the data key, then the tweak key). The
    /// cipher type's `KEY_LEN` and its RustCrypto `KeySizeUser::KeySize`.
    type KeyLen<K: KeySize>: ArraySize;

    /// Data-unit lengths must be a multiple of this (1 for XTS, with
    /// ciphertext stealing; 16 for CBC): the cipher type's
    /// [`DataUnitCipher::UNIT_ALIGN`].
    const UNIT_ALIGN: usize;

    /// The names of the cipher type for AES-128 and AES-256 keys, as
    /// `Debug` prints them (`["XtsAes128", "XtsAes256"]`).
    const NAMES: [&'static str; 2];

    /// What [`Backend::Vaes512`] needs of the CPU in this mode: the union
    /// of the `#[target_feature]` lists of its kernels, declared once. The
    /// selection ([`Backend::needs`], [`Backend::runs_on`]), the forced
    /// backends, the test registry and the witness its kernel takes all
    /// read it. Every SIMD backend needs `aes` (checked at compile time
    /// where a witness of it is made).
    type Vaes512: Needs;
    /// What [`Backend::Vaes256`] needs of the CPU in this mode.
    type Vaes256: Needs;
    /// What [`Backend::AesNi`] needs of the CPU in this mode.
    type AesNi: Needs;
    /// What [`Backend::ArmCe`] needs of the CPU in this mode.
    type ArmCe: Needs;

    /// The keys of the right length that this mode refuses as weak:
    /// [`EveryKey`] for a mode that refuses none (CBC, ECB), whose cipher
    /// type then implements RustCrypto's infallible `KeyInit`.
    type KeyRule: KeyRule;

    /// The key expanded for the portable backend, zeroized on drop.
    type Portable<A: BlockAes>: Send + Sync + ZeroizeOnDrop;

    /// Expands `key` (whose length has been checked) into a new heap
    /// allocation for the portable backend. Not inlined: the caller wipes
    /// the stack it used.
    fn portable<A: BlockAes>(key: &[u8]) -> Box<Self::Portable<A>>;

    /// A copy of portable keys in a new heap allocation (not inlined; the
    /// caller wipes the stack).
    fn portable_clone<A: BlockAes>(keys: &Self::Portable<A>) -> Box<Self::Portable<A>>;

    /// Runs a validated request in place with the portable backend:
    /// `buf` holds whole units of `unit` bytes, unit `i` under IV `i` of
    /// `ivs`.
    fn portable_crypt<A: BlockAes>(
        keys: &Self::Portable<A>,
        dir: Direction,
        ivs: &Ivs<'_>,
        unit: usize,
        buf: &mut [u8],
    );
}

/// A mode's weak-key rule: which keys of the right length its checked
/// constructors refuse (unless built with `new_allow_weak_key`). A mode
/// with a rule (XTS: equal halves) can only be built fallibly, so its
/// cipher type implements RustCrypto's `TryKeyInit` but not `KeyInit`.
///
/// ```
/// use mdu_aes::__private::{EveryKey, KeyRule};
/// assert!(EveryKey::check(&[0; 32]).is_ok());
/// ```
pub trait KeyRule {
    /// Refuses `key` (whose length has been checked) if the rule calls it
    /// weak.
    ///
    /// # Errors
    ///
    /// [`SetupError::WeakKey`].
    fn check(key: &[u8]) -> Result<(), SetupError>;
}

/// The rule of a mode without weak keys: every key of the right length is
/// accepted. No value of it exists.
///
/// ```
/// use mdu_aes::__private::{EveryKey, KeyRule};
/// assert!(EveryKey::check(&[7; 16]).is_ok());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EveryKey {}

impl KeyRule for EveryKey {
    fn check(key: &[u8]) -> Result<(), SetupError> {
        let _ = key;
        Ok(())
    }
}

/// An uninhabited value that ties a [`Backend`] to its mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ForMode<M>(Never, PhantomData<M>);

impl<M> ForMode<M> {
    /// No value of this type exists, so code that holds one is dead.
    pub const fn unreachable(self) -> ! {
        match self.0 {}
    }
}

/// No value has this type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Never {}

/// An implementation of an AES mode `M`: `Backend<EcbMode>` for [`Ecb`],
/// and `mdu_xts::Backend` is `Backend<XtsMode>`, `mdu_cbc::Backend`
/// `Backend<CbcMode>`.
///
/// Every backend produces the same bytes; they differ only in speed and in
/// the CPU features they need, which the mode declares once, one [`Needs`]
/// type per backend ([`Backend::needs`]). [`Backend::detect`] picks the
/// best one this CPU runs; [`Backend::available`] lists all of them, best
/// first (the selection is `mdu_platform`'s one `BackendSet`, the same
/// order in every mode).
///
/// [`Ecb`]: crate::Ecb
///
/// ```
/// use mdu_aes::{Aes256, Backend, Ecb, EcbMode, SetupError};
///
/// let best = Backend::<EcbMode>::detect();
/// assert_eq!(Backend::<EcbMode>::available().last(), Some(&Backend::Generic));
/// assert_eq!(Ecb::<Aes256>::new(&[1; 32])?.backend(), best);
/// // Pinned: the portable backend runs everywhere; one this CPU lacks is
/// // an error, not a fallback.
/// assert!(Ecb::<Aes256>::with_backend(&[1; 32], Backend::Generic).is_ok());
/// if !Backend::<EcbMode>::ArmCe.is_available() {
///     assert!(matches!(
///         Ecb::<Aes256>::with_backend(&[1; 32], Backend::ArmCe),
///         Err(SetupError::BackendUnavailable { backend: "arm-ce", .. })
///     ));
/// }
/// # Ok::<(), SetupError>(())
/// ```
///
/// | backend | target | registers |
/// |---|---|---|
/// | `Vaes512` | x86_64 | 512-bit zmm (AVX-512, VAES) |
/// | `Vaes256` | x86_64 | 256-bit ymm (AVX2, VAES) |
/// | `AesNi` | x86_64 | 128-bit xmm (AES-NI) |
/// | `ArmCe` | aarch64 (little-endian) | 128-bit NEON (Armv8 Crypto Extensions) |
/// | `Generic` | any | none: RustCrypto `aes` |
///
/// A `match` outside mdu needs a wildcard arm: the hidden variant stands
/// for the backends to come. The mode crates' kernel tables match every
/// variant by name, so a new backend cannot fall through to an old one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Backend<M> {
    /// VAES (and the mode's other needs) on 512-bit zmm registers.
    Vaes512,
    /// VAES on 256-bit ymm registers (AVX2), for CPUs without AVX-512 such
    /// as Zen 3 and Alder Lake.
    Vaes256,
    /// AES-NI on 128-bit xmm registers.
    AesNi,
    /// The Armv8 Crypto Extensions on 128-bit NEON registers of arm64.
    ArmCe,
    /// The portable implementation on top of the RustCrypto `aes` crate.
    Generic,
    #[doc(hidden)]
    _Mode(ForMode<M>),
}

impl<M: Mode> Backend<M> {
    /// The CPU features this backend needs in mode `M`, as the mode
    /// declares them ([`Mode::Vaes512`] and its siblings);
    /// [`Features::NONE`] for `Generic`.
    ///
    /// ```
    /// use mdu_xts::Backend;
    /// assert!(Backend::AesNi.needs().pclmulqdq);
    /// assert!(!mdu_cbc::Backend::AesNi.needs().pclmulqdq);
    /// assert_eq!(Backend::Generic.needs().to_string(), "none");
    /// ```
    pub const fn needs(self) -> Features {
        match self {
            Backend::Vaes512 => M::Vaes512::NEEDS,
            Backend::Vaes256 => M::Vaes256::NEEDS,
            Backend::AesNi => M::AesNi::NEEDS,
            Backend::ArmCe => M::ArmCe::NEEDS,
            Backend::Generic => Features::NONE,
            Backend::_Mode(never) => never.unreachable(),
        }
    }

    /// Whether a CPU with features `f` runs this backend: it is compiled
    /// for this target and `f` has every feature it [`needs`](Self::needs).
    /// A pure function of `f` (and of what this build compiled), so that
    /// the selection is tested for CPUs other than the one running the
    /// tests.
    ///
    /// ```
    /// use mdu_platform::cpu::Features;
    /// use mdu_xts::Backend;
    ///
    /// let westmere = Features { aes: true, pclmulqdq: true, ..Features::NONE };
    /// assert_eq!(Backend::AesNi.runs_on(westmere), cfg!(all(target_arch = "x86_64", not(miri))));
    /// assert!(!Backend::Vaes256.runs_on(westmere));
    /// assert!(Backend::Generic.runs_on(Features::NONE));
    /// ```
    pub fn runs_on(self, f: CpuFeatures) -> bool {
        BackendSet::runs_on(self, f)
    }

    /// The backends a CPU with features `f` runs, best first; `Generic` is
    /// always last.
    ///
    /// ```
    /// use mdu_platform::cpu::Features;
    /// use mdu_xts::Backend;
    ///
    /// let zen3 = Features { aes: true, pclmulqdq: true, avx2: true, vaes: true, vpclmulqdq: true, ..Features::NONE };
    /// if cfg!(all(target_arch = "x86_64", not(miri))) {
    ///     assert_eq!(Backend::available_for(zen3), [Backend::Vaes256, Backend::AesNi, Backend::Generic]);
    /// }
    /// assert_eq!(Backend::available_for(Features::NONE), [Backend::Generic]);
    /// ```
    pub fn available_for(f: CpuFeatures) -> &'static [Backend<M>] {
        Self::available_on(f)
    }

    /// The backends this CPU runs, best first; `Generic` is always last.
    /// The CPU is asked once per process.
    ///
    /// ```
    /// use mdu_xts::Backend;
    /// assert_eq!(Backend::available().last(), Some(&Backend::Generic));
    /// ```
    pub fn available() -> &'static [Backend<M>] {
        <Self as BackendSet>::available()
    }

    /// The best backend this CPU runs.
    ///
    /// ```
    /// use mdu_xts::Backend;
    /// assert_eq!(Backend::detect(), Backend::available()[0]);
    /// ```
    pub fn detect() -> Backend<M> {
        <Self as BackendSet>::detect()
    }

    /// Whether this CPU runs this backend.
    ///
    /// ```
    /// assert!(mdu_cbc::Backend::Generic.is_available());
    /// ```
    pub fn is_available(self) -> bool {
        BackendSet::is_available(self)
    }

    /// A short lowercase name: `vaes512`, `vaes256`, `aesni`, `arm-ce`,
    /// `generic`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Vaes512 => "vaes512",
            Backend::Vaes256 => "vaes256",
            Backend::AesNi => "aesni",
            Backend::ArmCe => "arm-ce",
            Backend::Generic => "generic",
            Backend::_Mode(never) => never.unreachable(),
        }
    }

    /// Its place in the priority order, 0 for the best (`Vaes512`) to 4
    /// for `Generic`: a stable small number per backend (for seeds, table
    /// rows and sorting).
    pub fn rank(self) -> usize {
        match self {
            Backend::Vaes512 => 0,
            Backend::Vaes256 => 1,
            Backend::AesNi => 2,
            Backend::ArmCe => 3,
            Backend::Generic => 4,
            Backend::_Mode(never) => never.unreachable(),
        }
    }

    /// The error for asking for this backend where it does not run.
    fn unavailable(self) -> SetupError {
        SetupError::BackendUnavailable {
            cipher: M::CRATE,
            backend: self.name(),
        }
    }
}

/// The selection: the same order on every CPU, in every mode.
impl<M: Mode> BackendSet for Backend<M> {
    const PREFERENCE: &'static Preference<Backend<M>> = &Preference::new(&[
        Backend::Vaes512,
        Backend::Vaes256,
        Backend::AesNi,
        Backend::ArmCe,
        Backend::Generic,
    ]);

    fn needs(self) -> Features {
        Backend::needs(self)
    }

    fn compiled(self) -> bool {
        crate::dispatch::compiled(self)
    }
}

impl<M: Mode> fmt::Display for Backend<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The keys expanded for one backend.
enum Expanded<M: Kernels, K: KeySize> {
    Portable(Box<M::Portable<K::Block>>),
    /// Round keys for the x86_64 or the arm64 kernels, with the witness of
    /// the backend they were expanded for (uninhabited where no SIMD
    /// backend is compiled).
    Simd(Simd<M>),
}

/// A key of mode `M` and AES key size `K`, checked and expanded for one
/// backend: what every cipher type of every AES mode holds. A SIMD
/// backend's keys are kept with the [`Witness`](mdu_platform::cpu::Witness)
/// of its features, made once here, which its kernels take.
pub struct Engine<M: Kernels, K: KeySize> {
    keys: Expanded<M, K>,
}

impl<M: Kernels, K: KeySize> Engine<M, K> {
    /// Bytes in a whole key of this mode and size.
    pub const KEY_LEN: usize = <M::KeyLen<K> as Unsigned>::USIZE;

    /// Checks `key` (length, then the mode's weak-key rule unless
    /// `allow_weak`) and expands it for `backend`.
    ///
    /// The key is read where the caller holds it and expanded straight into
    /// the heap allocation that keeps the round keys; the setup runs in
    /// functions that are not inlined here, and the stack they used (their
    /// locals and spilled registers) is wiped once they return.
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`], the mode's
    /// [`SetupError::WeakKey`], or [`SetupError::BackendUnavailable`] if
    /// this CPU cannot run `backend` (no witness of its features can be
    /// made, or it is not compiled for this target).
    pub fn new(key: &[u8], backend: Backend<M>, allow_weak: bool) -> Result<Self, SetupError> {
        if key.len() != Self::KEY_LEN {
            return Err(SetupError::InvalidKeyLength {
                len: key.len(),
                expected: Self::KEY_LEN,
            });
        }
        if !allow_weak {
            M::KeyRule::check(key)?;
        }
        Self::expand(key, backend).ok_or_else(|| backend.unavailable())
    }

    /// `key`, whose length the caller has checked (or its type fixes) and
    /// whose weak-key rule it has applied (or the mode has none), expanded
    /// for the best backend this CPU runs: the infallible construction of
    /// RustCrypto's `KeyInit`. Should that backend's witness not be made
    /// after all, the keys are expanded for the portable backend, which
    /// gives the same bytes.
    pub fn best(key: &[u8]) -> Self {
        debug_assert_eq!(key.len(), Self::KEY_LEN);
        Self::expand(key, Backend::detect()).unwrap_or_else(|| {
            let keys = Expanded::Portable(M::portable::<K::Block>(key));
            crate::wipe::after_key_setup();
            Engine { keys }
        })
    }

    /// `key` (checked) expanded for `backend`, or `None` if this CPU does
    /// not run it; the stack of the setup is wiped.
    fn expand(key: &[u8], backend: Backend<M>) -> Option<Self> {
        let keys = match backend {
            Backend::Generic => Expanded::Portable(M::portable::<K::Block>(key)),
            // The witness of the backend's needs, if this CPU has them
            // and the backend is compiled here, and the keys expanded for
            // it.
            Backend::Vaes512 | Backend::Vaes256 | Backend::AesNi | Backend::ArmCe => {
                Expanded::Simd(Simd::new(backend, key)?)
            }
            Backend::_Mode(never) => never.unreachable(),
        };
        crate::wipe::after_key_setup();
        Some(Engine { keys })
    }

    /// The backend the keys were expanded for.
    pub fn backend(&self) -> Backend<M> {
        match &self.keys {
            Expanded::Portable(_) => Backend::Generic,
            Expanded::Simd(simd) => simd.backend(),
        }
    }

    /// One data unit in place under `iv`, after `cipher`'s unit-length
    /// check: the one-unit path of a mode's cipher type.
    ///
    /// # Errors
    ///
    /// As for [`DataUnitCipher::check_unit_len`].
    #[inline]
    pub fn one<C: DataUnitCipher + ?Sized>(
        &self,
        cipher: &C,
        dir: Direction,
        iv: Iv,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        cipher.check_unit_len(buf.len())?;
        let ivs = Ivs::Counter {
            first: iv.to_u128(),
            step: 0,
        };
        let len = buf.len();
        self.crypt(dir, &ivs, len, Io::InPlace(buf));
        Ok(())
    }

    /// Consecutive units under `first + i * step`, validated as `C`'s
    /// requests are ([`mdu_core::check_request`], equal lengths): the
    /// native path of [`DataUnitCipher::crypt_units`] and
    /// [`DataUnitCipher::crypt_units_to`].
    ///
    /// # Errors
    ///
    /// As for [`mdu_core::check_request`], then [`Error::LengthMismatch`].
    #[inline]
    pub fn units<C: DataUnitCipher + ?Sized>(
        &self,
        dir: Direction,
        first: Iv,
        step: u64,
        unit: DataUnitSize,
        io: Io<'_>,
    ) -> Result<(), Error> {
        let len = match &io {
            Io::InPlace(buf) => buf.len(),
            Io::To(src, dst) => {
                if src.len() != dst.len() {
                    mdu_core::check_request::<C>(unit, src.len())?;
                    return Err(Error::LengthMismatch {
                        src: src.len(),
                        dst: dst.len(),
                    });
                }
                src.len()
            }
        };
        mdu_core::check_request::<C>(unit, len)?;
        let ivs = Ivs::Counter {
            first: first.to_u128(),
            step,
        };
        self.crypt(dir, &ivs, unit.get(), io);
        Ok(())
    }

    /// Units in place, unit `i` under `ivs[i]`, validated as `C`'s
    /// explicit-IV requests are: the native path of
    /// [`DataUnitCipher::crypt_units_with_ivs`].
    ///
    /// # Errors
    ///
    /// As for [`mdu_core::check_request_with_ivs`].
    #[inline]
    pub fn units_with_ivs<C: DataUnitCipher + ?Sized>(
        &self,
        dir: Direction,
        ivs: &[Iv],
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        mdu_core::check_request_with_ivs::<C>(unit, ivs.len(), buf.len())?;
        self.crypt(dir, &Ivs::List(ivs), unit.get(), Io::InPlace(buf));
        Ok(())
    }

    /// Encrypts (`dir`) or decrypts the `len / unit` data units of `io`;
    /// unit `i` uses the IV `ivs` gives it. The caller has validated the
    /// request for the mode: `unit` one the mode accepts, the length a
    /// non-zero multiple of `unit`, and for [`Ivs::List`] one IV per unit.
    ///
    /// # Panics
    ///
    /// If the two sides of an [`Io::To`] differ in length, or `unit` is one
    /// the mode refuses (caller bugs the request checks rule out).
    pub fn crypt(&self, dir: Direction, ivs: &Ivs<'_>, unit: usize, io: Io<'_>) {
        let (src, buf) = match io {
            Io::InPlace(buf) => (None, buf),
            Io::To(src, dst) => {
                assert_eq!(src.len(), dst.len(), "out-of-place lengths differ");
                (Some(src), dst)
            }
        };
        let len = buf.len();
        // What the kernels rely on for their memory accesses, checked
        // without a division (a partial last unit is left alone by every
        // backend; the request checks have ruled it out anyway).
        assert!(
            unit >= 16 && len >= unit && unit.is_multiple_of(M::UNIT_ALIGN),
            "a request the mode's checks should have refused"
        );
        debug_assert!(len.is_multiple_of(unit));
        match &self.keys {
            Expanded::Portable(keys) => {
                if let Some(src) = src {
                    buf.copy_from_slice(src);
                }
                M::portable_crypt(keys, dir, ivs, unit, buf);
            }
            Expanded::Simd(simd) => {
                let (first, step, list) = ivs.parts();
                let req = Request {
                    first,
                    step,
                    list,
                    unit,
                    count: len / unit,
                    src: src.map_or(buf.as_ptr(), <[u8]>::as_ptr),
                    dst: buf.as_mut_ptr(),
                };
                // SAFETY: the keys were expanded for a key of `K::NR`
                // rounds. `src` and `dst` cover `count * unit == len` bytes
                // of live slices (checked equal above); they are the same
                // buffer or two distinct borrows that cannot overlap. The
                // caller checked the unit and the IV list. (The CPU
                // features are the witness's, which `simd` holds.)
                unsafe {
                    if K::NR == 14 {
                        simd.crypt::<14>(dir, req);
                    } else {
                        simd.crypt::<10>(dir, req);
                    }
                }
            }
        }
    }
}

impl<M: Kernels, K: KeySize> Clone for Engine<M, K> {
    fn clone(&self) -> Self {
        let keys = match &self.keys {
            Expanded::Portable(k) => Expanded::Portable(M::portable_clone::<K::Block>(k)),
            Expanded::Simd(simd) => Expanded::Simd(simd.boxed_clone()),
        };
        // The `aes` crate's `Clone` (portable backend) returns its key
        // schedule by value: wipe the stack it used.
        crate::wipe::after_key_setup();
        Engine { keys }
    }
}

impl<M: Kernels, K: KeySize> fmt::Debug for Engine<M, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("bits", &K::BITS)
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}
