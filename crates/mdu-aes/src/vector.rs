//! One vector layer per register width: the AES rounds that every AES mode
//! is written over, on the register types of `mdu_platform::simd` (whose
//! loads, stores, XORs and lane moves the FEC encoder shares), implemented
//! once per instruction set and width.
//!
//! | type     | register | blocks | needs                                 |
//! |----------|----------|--------|---------------------------------------|
//! | `Xmm`    | xmm      | 1      | SSE2 (baseline); AES-NI for the rounds |
//! | `Ymm`    | ymm      | 2      | AVX2; VAES for the rounds              |
//! | `Zmm`    | zmm      | 4      | AVX-512 F; VAES for the rounds         |
//! | `Neon`   | q        | 1      | NEON (baseline); FEAT_AES for the rounds |
//!
//! The register types and [`Register`] are re-exported from
//! `mdu_platform::simd`; [`Vector`] adds the AES view of a register (its
//! 16-byte lanes are AES blocks) and [`Keys`] the rounds. A mode's driver
//! is generic over [`Vector`]; only what is genuinely the mode's own (an
//! XTS tweak multiply) is written per width, in the mode's crate, on the
//! raw registers (`Ymm::raw` and friends). XTS, CBC and batched ECB
//! (`crate::Ecb`) run on it.
//!
//! Two shapes keep the generated code as fast as hand-written rounds (each
//! measured on Zen 3 against the per-width code it replaced): the rounds
//! match their optional whitenings once, outside the loops over the
//! registers, and a main loop whose states fill the register file reads
//! its keys through [`Keys::per_round`]. Without either, the compiler runs
//! the chains one after the other instead of round by round.
//!
//! # Values are proofs
//!
//! A vector value can only be made by an `unsafe` constructor whose
//! contract is that the CPU has the width's base features
//! ([`Register::load`], [`Register::gather`], ...), so the operations on a
//! value that exists are safe: its existence is the witness. The AES
//! rounds need more (AES-NI, VAES, FEAT_AES): they are methods of [`Keys`],
//! a round-key schedule that only [`Keys::new`] builds, under the contract
//! that the CPU has them.
//!
//! Every method is `#[inline(always)]`: a kernel is compiled inside one
//! `#[target_feature]` entry point, with that entry point's features.
//!
//! ```
//! # #[cfg(all(target_arch = "x86_64", not(miri)))] {
//! use mdu_aes::__private::vector::{Keys, Register, Ymm};
//!
//! #[target_feature(enable = "aes,avx2,vaes")]
//! fn ecb_encrypt_two_vectors(schedule: &mdu_aes::__private::Schedule, data: &mut [u8; 64]) {
//!     // SAFETY: this function runs with AES-NI, AVX2 and VAES enabled.
//!     let keys = unsafe { Keys::<Ymm>::new(schedule) };
//!     // SAFETY: `data` holds two 32-byte vectors; AVX2 is enabled.
//!     let s = unsafe { [Ymm::load(data.as_ptr()), Ymm::load(data.as_ptr().add(32))] };
//!     let out = keys.encrypt::<10, 2>(s, None, None);
//!     // SAFETY: as for the loads.
//!     unsafe {
//!         out[0].store(data.as_mut_ptr());
//!         out[1].store(data.as_mut_ptr().add(32));
//!     }
//! }
//!
//! let f = mdu_aes::__private::CpuFeatures::get();
//! if f.aes && f.avx2 && f.vaes {
//!     let mut enc = [[0u8; 16]; 15];
//!     // SAFETY: AES-NI was detected just above.
//!     unsafe { mdu_aes::__private::expand(&[0u8; 16], &mut enc, None) };
//!     let mut data = [0u8; 64];
//!     // SAFETY: the features were detected just above.
//!     unsafe { ecb_encrypt_two_vectors(&enc, &mut data) };
//!     // FIPS 197: AES-128 of the zero block under the zero key.
//!     assert_eq!(data[..4], [0x66, 0xe9, 0x4b, 0xd4]);
//!     assert_eq!(data[..16], data[48..]);
//! }
//! # }
//! ```

use crate::Schedule;

#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "aarch64")]
pub use mdu_platform::simd::Neon;
pub use mdu_platform::simd::Register;
#[cfg(target_arch = "x86_64")]
pub use mdu_platform::simd::{Xmm, Ymm, Zmm};

mod sealed {
    pub trait Sealed {}
}
pub(crate) use sealed::Sealed;

/// A register of [`Vector::BLOCKS`] AES blocks of one instruction set:
/// the AES view of a [`Register`], whose 16-byte lanes are blocks.
///
/// The constructors are [`Register`]'s and `unsafe`: their contract
/// includes that the CPU has the width's base features (see the table of
/// `mdu_aes::__private::vector`), so every operation on an existing value
/// is safe.
/// See [`Keys`] for the rounds.
///
/// ```
/// # #[cfg(all(target_arch = "x86_64", not(miri)))] {
/// use mdu_aes::__private::vector::{Register, Vector, Xmm};
///
/// assert_eq!(Xmm::BLOCKS, 1);
/// let bytes: [u8; 16] = core::array::from_fn(|i| i as u8);
/// // SAFETY: 16 readable bytes; SSE2 is the x86_64 baseline.
/// let v = unsafe { Xmm::load(bytes.as_ptr()) };
/// let mut out = [0u8; 16];
/// // SAFETY: 16 writable bytes.
/// unsafe { v.xor(v).store(out.as_mut_ptr()) };
/// assert_eq!(out, [0; 16]);
/// # }
/// ```
pub trait Vector: Register<Lane = <Self as Vector>::Block> + Sealed {
    /// AES blocks (16-byte lanes) per register.
    const BLOCKS: usize = <Self as Register>::LANES;
    /// One block of this instruction set: the 16-byte register type (the
    /// register's [`Register::Lane`]).
    type Block: Vector<Block = Self::Block>;

    /// The cipher (`ENC`) or the equivalent inverse cipher on `N` registers,
    /// interleaved round by round: `E(s[i] ^ pre[i]) ^ post[i]`, a missing
    /// whitening left out. `rk` is the schedule in the direction's order.
    ///
    /// # Safety
    ///
    /// The CPU has the AES instructions of this width (see [`Keys`], the
    /// safe way in).
    unsafe fn aes<const NR: usize, const ENC: bool, const N: usize>(
        rk: &[Self; 15],
        s: [Self; N],
        pre: Option<&[Self; N]>,
        post: Option<&[Self; N]>,
    ) -> [Self; N];
}

/// A round-key schedule in registers of one width (each round key in every
/// lane); its existence proves the CPU has that width's AES instructions,
/// so the rounds it offers are safe.
///
/// See the example of `mdu_aes::__private::vector`.
#[derive(Clone, Copy)]
pub struct Keys<V: Vector> {
    rk: [V; 15],
}

impl<V: Vector> Keys<V> {
    /// Loads `schedule` (in the order of the direction it will run) and
    /// broadcasts each round key to every lane.
    ///
    /// # Safety
    ///
    /// The CPU has the width's base features and its AES instructions (see
    /// the [module](self) table).
    #[inline(always)]
    pub unsafe fn new(schedule: &Schedule) -> Keys<V> {
        // Every round key straight from its slot to its register (an
        // unrolled array: an iterator chain here was left as calls, and so
        // can `core::array::from_fn` be; see `mdu_platform::simd::array`).
        let rk = mdu_platform::simd::array(|i| {
            // SAFETY: 16 readable bytes per round key; the features are the
            // caller's contract.
            unsafe { V::splat(<V::Block as Register>::load(schedule[i].as_ptr())) }
        });
        Keys { rk }
    }

    /// The same keys behind a reference the optimizer cannot see through,
    /// so that the rounds after it read each round key from memory in its
    /// round (one load shared by every register of the round) instead of
    /// holding all fifteen in registers. A kernel calls it once per
    /// iteration of a main loop whose states alone fill the register file:
    /// with the keys held in registers, the states spill and the chains run
    /// one after the other (batched ECB on ymm, AES-256: 0.82 of the AES
    /// bound, 0.96-1.0 with this; Zen 3). It costs one pointer move.
    ///
    /// ```
    /// # #[cfg(all(target_arch = "x86_64", not(miri)))] {
    /// use mdu_aes::__private::vector::{Keys, Register, Xmm};
    ///
    /// /// AES-128 of every block of `data`, eight chains per iteration.
    /// #[target_feature(enable = "aes")]
    /// fn ecb_encrypt(schedule: &mdu_aes::__private::Schedule, data: &mut [[u8; 16]]) {
    ///     // SAFETY: this function runs with AES-NI enabled.
    ///     let keys = unsafe { Keys::<Xmm>::new(schedule) };
    ///     for chunk in data.chunks_exact_mut(8) {
    ///         // SAFETY: each block is 16 readable bytes; SSE2 is baseline.
    ///         let s = core::array::from_fn(|i| unsafe { Xmm::load(chunk[i].as_ptr()) });
    ///         // Sixteen round keys and eight states would not fit in the
    ///         // sixteen xmm registers: read the keys round by round.
    ///         let out = keys.per_round().encrypt::<10, 8>(s, None, None);
    ///         for (block, v) in chunk.iter_mut().zip(out) {
    ///             // SAFETY: 16 writable bytes.
    ///             unsafe { v.store(block.as_mut_ptr()) };
    ///         }
    ///     }
    /// }
    ///
    /// if mdu_aes::__private::CpuFeatures::get().aes {
    ///     let mut enc = [[0u8; 16]; 15];
    ///     // SAFETY: AES-NI was detected just above.
    ///     unsafe { mdu_aes::__private::expand(&[0u8; 16], &mut enc, None) };
    ///     let mut data = [[0u8; 16]; 16];
    ///     // SAFETY: AES-NI was detected just above.
    ///     unsafe { ecb_encrypt(&enc, &mut data) };
    ///     // FIPS 197: AES-128 of the zero block under the zero key.
    ///     assert!(data.iter().all(|b| b[..4] == [0x66, 0xe9, 0x4b, 0xd4]));
    /// }
    /// # }
    /// ```
    #[inline(always)]
    pub fn per_round(&self) -> &Keys<V> {
        core::hint::black_box(self)
    }

    /// The same schedule one block wide, for single blocks.
    #[inline(always)]
    pub fn blocks(&self) -> Keys<V::Block> {
        Keys {
            rk: mdu_platform::simd::array(|i| self.rk[i].lane(0)),
        }
    }

    /// `b` in every lane (the keys prove the width's features).
    #[inline(always)]
    pub fn splat(&self, b: V::Block) -> V {
        // SAFETY: a `Keys<V>` exists only where the CPU has V's features.
        unsafe { V::splat(b) }
    }

    /// Lane `k` is `lanes(k)`; see [`Register::from_lanes`].
    #[inline(always)]
    pub fn from_lanes(&self, lanes: impl FnMut(usize) -> V::Block) -> V {
        // SAFETY: as in `splat`.
        unsafe { V::from_lanes(lanes) }
    }

    /// `E(s[i] ^ pre[i]) ^ post[i]` for `N` registers, interleaved round by
    /// round; a missing whitening is left out.
    #[inline(always)]
    pub fn encrypt<const NR: usize, const N: usize>(
        &self,
        s: [V; N],
        pre: Option<&[V; N]>,
        post: Option<&[V; N]>,
    ) -> [V; N] {
        // SAFETY: a `Keys<V>` exists only where the CPU has V's AES.
        unsafe { V::aes::<NR, true, N>(&self.rk, s, pre, post) }
    }

    /// The equivalent inverse cipher (the keys hold its schedule):
    /// `D(s[i] ^ pre[i]) ^ post[i]`.
    #[inline(always)]
    pub fn decrypt<const NR: usize, const N: usize>(
        &self,
        s: [V; N],
        pre: Option<&[V; N]>,
        post: Option<&[V; N]>,
    ) -> [V; N] {
        // SAFETY: as in `encrypt`.
        unsafe { V::aes::<NR, false, N>(&self.rk, s, pre, post) }
    }

    /// [`encrypt`](Keys::encrypt) or [`decrypt`](Keys::decrypt) as `ENC`
    /// says.
    #[inline(always)]
    pub fn crypt<const NR: usize, const ENC: bool, const N: usize>(
        &self,
        s: [V; N],
        pre: Option<&[V; N]>,
        post: Option<&[V; N]>,
    ) -> [V; N] {
        // SAFETY: as in `encrypt`.
        unsafe { V::aes::<NR, ENC, N>(&self.rk, s, pre, post) }
    }
}
