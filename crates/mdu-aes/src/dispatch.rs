//! The SIMD half of the AES-mode skeleton, compiled where SIMD backends are
//! (x86_64, and little-endian aarch64; never under Miri, which cannot run
//! the vendor intrinsics): the round keys of a mode's SIMD backends
//! ([`SimdKeys`]), its kernels on this target ([`Kernels`]), the witness of
//! the chosen backend, and the one exhaustive `match` that reaches a
//! kernel.
//!
//! `arch` is this target's module (one for x86_64, one for aarch64, each
//! declared under its condition): the backends compiled here and the
//! kernels a mode implements for them. Apart from the per-ISA code
//! (`x86`, `aarch64`, `vector`, ECB's kernels), nothing else in the
//! skeleton names a target.

use alloc::boxed::Box;

use mdu_core::Direction;

use crate::mode::{Backend, Mode, Request};
use crate::{RoundKeys, Schedule, ecb};

use arch::Kernel;
pub use arch::Kernels;

/// The round keys of a mode's SIMD backends, on every SIMD target.
pub trait SimdKeys: Mode {
    /// The key expanded for the SIMD backends; zeroized on drop.
    type RoundKeys: Send + Sync + zeroize::ZeroizeOnDrop;

    /// Expands `key` (whose length has been checked) into a new heap
    /// allocation for the SIMD backends, writing the round keys in place
    /// (with [`expand`], which is not inlined: the caller wipes the stack
    /// it used).
    ///
    /// # Safety
    ///
    /// The CPU has the AES instructions (AES-NI, FEAT_AES).
    unsafe fn expand(key: &[u8]) -> Box<Self::RoundKeys>;

    /// A copy of SIMD round keys in a new heap allocation, heap to heap.
    fn simd_clone(keys: &Self::RoundKeys) -> Box<Self::RoundKeys>;
}

/// Whether `backend` is compiled for this target (the x86_64 ones on
/// x86_64, the arm64 one on little-endian aarch64, the portable one
/// everywhere).
pub(crate) const fn compiled<M>(backend: Backend<M>) -> bool {
    matches!(backend, Backend::Generic) || arch::compiled(backend)
}

/// A SIMD backend of mode `M` that this CPU runs, with the witness of its
/// features and the round keys expanded for it: what an
/// [`Engine`](crate::Engine) keeps.
pub(crate) struct Simd<M: Kernels> {
    kernel: Kernel<M>,
    keys: Box<M::RoundKeys>,
}

impl<M: Kernels> Simd<M> {
    /// `key` expanded for `backend`, or `None` if this CPU does not run it
    /// (no witness of its features) or it is not compiled here.
    pub(crate) fn new(backend: Backend<M>, key: &[u8]) -> Option<Simd<M>> {
        let kernel = Kernel::detect(backend)?;
        // SAFETY: `kernel` holds the witness of `backend`'s needs, and the
        // needs of every SIMD backend include the AES instructions
        // (asserted at compile time by `Kernel::detect`).
        let keys = unsafe { M::expand(key) };
        Some(Simd { kernel, keys })
    }

    /// The backend the keys were expanded for.
    pub(crate) fn backend(&self) -> Backend<M> {
        self.kernel.backend()
    }

    /// A copy, keys heap to heap; the witness is `Copy`.
    pub(crate) fn boxed_clone(&self) -> Simd<M> {
        Simd {
            kernel: self.kernel,
            keys: M::simd_clone(&self.keys),
        }
    }

    /// Runs `req` in direction `dir` with the kernel of the backend.
    ///
    /// # Safety
    ///
    /// The keys were expanded for a key of `NR` rounds; `req.src` and
    /// `req.dst` cover `count * unit` bytes of live memory, equal or
    /// disjoint; `unit` is one this mode accepts; a `list` holds `count`
    /// IVs.
    #[inline]
    pub(crate) unsafe fn crypt<const NR: usize>(&self, dir: Direction, req: Request<'_>) {
        // SAFETY: forwarded from the caller.
        unsafe {
            match dir {
                Direction::Encrypt => self.kernel.run::<NR, true>(&self.keys, req),
                Direction::Decrypt => self.kernel.run::<NR, false>(&self.keys, req),
            }
        }
    }
}

/// Writes the encryption schedule of the 16- or 32-byte AES key `key` into
/// `enc` and, when `dec` is given, the schedule of the equivalent inverse
/// cipher (reversed, InvMixColumns on the middle round keys) into `dec`.
///
/// No copy of the key or of a schedule is made outside `enc` and `dec`: the
/// round keys go from registers to their slots. What the compiler spills
/// meanwhile lies in this function's frame, below its caller's, which the
/// caller wipes with [`wipe::after_key_setup`](crate::wipe::after_key_setup)
/// once it has returned (hence `inline(never)`).
///
/// # Safety
///
/// The CPU has the AES instructions (AES-NI on x86_64, FEAT_AES on arm64).
#[doc(hidden)]
#[inline(never)]
pub unsafe fn expand(key: &[u8], enc: &mut Schedule, dec: Option<&mut Schedule>) {
    // SAFETY: forwarded from the caller.
    unsafe { arch::expand(key, enc, dec) }
}

impl RoundKeys {
    /// Expands the 16- or 32-byte AES key `key` into these schedules in
    /// place (see [`expand`]; the caller wipes the stack the expansion used
    /// with [`wipe::after_key_setup`](crate::wipe::after_key_setup)).
    ///
    /// # Safety
    ///
    /// The CPU has the AES instructions (AES-NI on x86_64, FEAT_AES on
    /// arm64).
    pub unsafe fn expand_into(&mut self, key: &[u8]) {
        // SAFETY: forwarded from the caller.
        unsafe { expand(key, &mut self.enc, Some(&mut self.dec)) };
    }
}

/// The batched ECB kernels, one entry point per width (see `Ecb`).
pub use ecb::kernels as ecb_kernels;

/// x86_64: the backends `Vaes512`, `Vaes256` and `AesNi`.
#[cfg(target_arch = "x86_64")]
mod arch {
    use mdu_platform::cpu::{Needs, Witness};

    use super::SimdKeys;
    use crate::mode::{Backend, Mode, Request};

    pub(super) use crate::x86::expand;

    /// An AES mode's kernels on x86_64: one entry point per register
    /// width, each taking the witness of its backend's needs, so that the
    /// CPU half of its contract is its argument's type. (On aarch64 this
    /// trait has the one arm64 entry point instead; where no SIMD backend
    /// is compiled, it has none and every mode implements it.) A mode
    /// writes its impl with `mdu_aes::__private::kernels!` from its per-width modules.
    pub trait Kernels: SimdKeys {
        /// The kernel of [`Backend::Vaes512`] (zmm registers): encrypts
        /// (`ENC`) or decrypts `req` with `keys`.
        ///
        /// # Safety
        ///
        /// `keys` were expanded for a key of `NR` rounds; `req.src` and
        /// `req.dst` cover `count * unit` bytes of live memory, equal or
        /// disjoint; `unit` is one this mode accepts; a `list` holds
        /// `count` IVs.
        unsafe fn vaes512<const NR: usize, const ENC: bool>(
            w: Witness<Self::Vaes512>,
            keys: &Self::RoundKeys,
            req: Request<'_>,
        );

        /// The kernel of [`Backend::Vaes256`] (ymm registers).
        ///
        /// # Safety
        ///
        /// As for [`Kernels::vaes512`].
        unsafe fn vaes256<const NR: usize, const ENC: bool>(
            w: Witness<Self::Vaes256>,
            keys: &Self::RoundKeys,
            req: Request<'_>,
        );

        /// The kernel of [`Backend::AesNi`] (xmm registers).
        ///
        /// # Safety
        ///
        /// As for [`Kernels::vaes512`].
        unsafe fn aesni<const NR: usize, const ENC: bool>(
            w: Witness<Self::AesNi>,
            keys: &Self::RoundKeys,
            req: Request<'_>,
        );
    }

    /// Writes a mode's [`Kernels`] impl on x86_64 from its per-width
    /// modules, each of which has the entry point `crypt::<NR, ENC>(witness,
    /// keys, request)` with the [`Kernels`] method's contract:
    /// `mdu_aes::__private::kernels!(XtsMode, vaes512, vaes256, aesni)`.
    #[macro_export]
    #[doc(hidden)]
    macro_rules! kernels {
        ($mode:ty, $vaes512:ident, $vaes256:ident, $aesni:ident) => {
            impl $crate::__private::Kernels for $mode {
                #[inline]
                unsafe fn vaes512<const NR: usize, const ENC: bool>(
                    w: ::mdu_platform::cpu::Witness<Self::Vaes512>,
                    keys: &Self::RoundKeys,
                    r: $crate::__private::Request<'_>,
                ) {
                    // SAFETY: forwarded from the caller.
                    unsafe { $vaes512::crypt::<NR, ENC>(w, keys, r) }
                }

                #[inline]
                unsafe fn vaes256<const NR: usize, const ENC: bool>(
                    w: ::mdu_platform::cpu::Witness<Self::Vaes256>,
                    keys: &Self::RoundKeys,
                    r: $crate::__private::Request<'_>,
                ) {
                    // SAFETY: forwarded from the caller.
                    unsafe { $vaes256::crypt::<NR, ENC>(w, keys, r) }
                }

                #[inline]
                unsafe fn aesni<const NR: usize, const ENC: bool>(
                    w: ::mdu_platform::cpu::Witness<Self::AesNi>,
                    keys: &Self::RoundKeys,
                    r: $crate::__private::Request<'_>,
                ) {
                    // SAFETY: forwarded from the caller.
                    unsafe { $aesni::crypt::<NR, ENC>(w, keys, r) }
                }
            }
        };
    }

    /// Whether `backend` is one of this target's.
    pub(super) const fn compiled<M>(backend: Backend<M>) -> bool {
        matches!(
            backend,
            Backend::Vaes512 | Backend::Vaes256 | Backend::AesNi
        )
    }

    /// A backend of this target with the witness that this CPU runs it.
    pub(super) enum Kernel<M: Mode> {
        Vaes512(Witness<M::Vaes512>),
        Vaes256(Witness<M::Vaes256>),
        AesNi(Witness<M::AesNi>),
    }

    // Not derived: the derives would ask the `Needs` types to be `Copy`.
    impl<M: Mode> Clone for Kernel<M> {
        fn clone(&self) -> Self {
            *self
        }
    }

    impl<M: Mode> Copy for Kernel<M> {}

    impl<M: Kernels> Kernel<M> {
        /// The witness of `backend` from the detected features; `None`
        /// where this CPU lacks one of them or `backend` is not one of
        /// this target's.
        pub(super) fn detect(backend: Backend<M>) -> Option<Kernel<M>> {
            const {
                assert!(
                    M::Vaes512::NEEDS.aes && M::Vaes256::NEEDS.aes && M::AesNi::NEEDS.aes,
                    "every SIMD backend of an AES mode needs the AES instructions"
                );
            }
            match backend {
                Backend::Vaes512 => Witness::detect().map(Kernel::Vaes512),
                Backend::Vaes256 => Witness::detect().map(Kernel::Vaes256),
                Backend::AesNi => Witness::detect().map(Kernel::AesNi),
                Backend::ArmCe | Backend::Generic => None,
                Backend::_Mode(never) => never.unreachable(),
            }
        }

        pub(super) fn backend(self) -> Backend<M> {
            match self {
                Kernel::Vaes512(_) => Backend::Vaes512,
                Kernel::Vaes256(_) => Backend::Vaes256,
                Kernel::AesNi(_) => Backend::AesNi,
            }
        }

        /// The one dispatch point: the kernel of the backend, by name.
        ///
        /// # Safety
        ///
        /// As for [`Kernels::vaes512`].
        #[inline]
        pub(super) unsafe fn run<const NR: usize, const ENC: bool>(
            self,
            keys: &M::RoundKeys,
            req: Request<'_>,
        ) {
            // SAFETY: forwarded from the caller; the witness is the
            // kernel's.
            unsafe {
                match self {
                    Kernel::Vaes512(w) => M::vaes512::<NR, ENC>(w, keys, req),
                    Kernel::Vaes256(w) => M::vaes256::<NR, ENC>(w, keys, req),
                    Kernel::AesNi(w) => M::aesni::<NR, ENC>(w, keys, req),
                }
            }
        }
    }
}

/// Little-endian aarch64: the backend `ArmCe`.
#[cfg(target_arch = "aarch64")]
mod arch {
    use mdu_platform::cpu::{Needs, Witness};

    use super::SimdKeys;
    use crate::mode::{Backend, Mode, Request};

    pub(super) use crate::aarch64::expand;

    /// An AES mode's kernels on arm64: its entry point for the Armv8 Crypto
    /// Extensions, taking the witness of the backend's needs, so that the
    /// CPU half of its contract is its argument's type. (On x86_64 this
    /// trait has one entry point per x86 register width instead; where no
    /// SIMD backend is compiled, it has none and every mode implements
    /// it.) A mode writes its impl with `mdu_aes::__private::kernels!`.
    pub trait Kernels: SimdKeys {
        /// The kernel of [`Backend::ArmCe`]: encrypts (`ENC`) or decrypts
        /// `req` with `keys`.
        ///
        /// # Safety
        ///
        /// `keys` were expanded for a key of `NR` rounds; `req.src` and
        /// `req.dst` cover `count * unit` bytes of live memory, equal or
        /// disjoint; `unit` is one this mode accepts; a `list` holds
        /// `count` IVs.
        unsafe fn arm_ce<const NR: usize, const ENC: bool>(
            w: Witness<Self::ArmCe>,
            keys: &Self::RoundKeys,
            req: Request<'_>,
        );
    }

    /// Writes a mode's [`Kernels`] impl on aarch64 from its module whose
    /// entry point is `crypt::<NR, ENC>(witness, keys, request)`:
    /// `mdu_aes::__private::kernels!(XtsMode, ce)`.
    #[macro_export]
    #[doc(hidden)]
    macro_rules! kernels {
        ($mode:ty, $arm_ce:ident) => {
            impl $crate::__private::Kernels for $mode {
                #[inline]
                unsafe fn arm_ce<const NR: usize, const ENC: bool>(
                    w: ::mdu_platform::cpu::Witness<Self::ArmCe>,
                    keys: &Self::RoundKeys,
                    r: $crate::__private::Request<'_>,
                ) {
                    // SAFETY: forwarded from the caller.
                    unsafe { $arm_ce::crypt::<NR, ENC>(w, keys, r) }
                }
            }
        };
    }

    /// Whether `backend` is one of this target's.
    pub(super) const fn compiled<M>(backend: Backend<M>) -> bool {
        matches!(backend, Backend::ArmCe)
    }

    /// A backend of this target with the witness that this CPU runs it.
    pub(super) enum Kernel<M: Mode> {
        ArmCe(Witness<M::ArmCe>),
    }

    // Not derived: the derives would ask the `Needs` types to be `Copy`.
    impl<M: Mode> Clone for Kernel<M> {
        fn clone(&self) -> Self {
            *self
        }
    }

    impl<M: Mode> Copy for Kernel<M> {}

    impl<M: Kernels> Kernel<M> {
        /// The witness of `backend` from the detected features; `None`
        /// where this CPU lacks one of them or `backend` is not one of
        /// this target's.
        pub(super) fn detect(backend: Backend<M>) -> Option<Kernel<M>> {
            const {
                assert!(
                    M::ArmCe::NEEDS.aes,
                    "every SIMD backend of an AES mode needs the AES instructions"
                );
            }
            match backend {
                Backend::ArmCe => Witness::detect().map(Kernel::ArmCe),
                Backend::Vaes512 | Backend::Vaes256 | Backend::AesNi | Backend::Generic => None,
                Backend::_Mode(never) => never.unreachable(),
            }
        }

        pub(super) fn backend(self) -> Backend<M> {
            match self {
                Kernel::ArmCe(_) => Backend::ArmCe,
            }
        }

        /// The one dispatch point: the kernel of the backend, by name.
        ///
        /// # Safety
        ///
        /// As for [`Kernels::arm_ce`].
        #[inline]
        pub(super) unsafe fn run<const NR: usize, const ENC: bool>(
            self,
            keys: &M::RoundKeys,
            req: Request<'_>,
        ) {
            // SAFETY: forwarded from the caller; the witness is the
            // kernel's.
            unsafe {
                match self {
                    Kernel::ArmCe(w) => M::arm_ce::<NR, ENC>(w, keys, req),
                }
            }
        }
    }
}
