//! One register type per SIMD width, with the operations that every kernel
//! of the workspace needs whatever it computes: loads, stores, XORs and
//! moves of 16-byte lanes. The AES modes build their rounds on these types
//! (`mdu-aes`'s vector layer, for XTS, CBC and batched ECB), the dm-verity
//! FEC encoder its GF(2^8) steps (`mdu-verity`); each adds only what is
//! its own.
//!
//! | type   | register | bytes | lanes | base features          |
//! |--------|----------|-------|-------|------------------------|
//! | `Xmm`  | xmm      | 16    | 1     | SSE2 (x86_64 baseline) |
//! | `Ymm`  | ymm      | 32    | 2     | AVX2                   |
//! | `Zmm`  | zmm      | 64    | 4     | AVX-512 F              |
//! | `Neon` | q        | 16    | 1     | NEON (arm64 baseline)  |
//!
//! The x86_64 types exist on x86_64, `Neon` on little-endian aarch64; under
//! Miri, which does not run every vendor intrinsic, none does (only
//! [`Register`], with no implementation).
//!
//! # Values are proofs
//!
//! A register value can only be made by an `unsafe` constructor whose
//! contract is that the CPU has the width's base features
//! ([`Register::load`], [`Register::gather`], `from_raw`, ...), so the
//! operations on a value that exists are safe: its existence is the
//! witness. A kernel that needs more than the base features (AES rounds,
//! GFNI) asks for its own proof.
//!
//! Every method is `#[inline(always)]`: a kernel is compiled inside one
//! `#[target_feature]` entry point, with that entry point's features.
//!
//! ```
//! # #[cfg(all(target_arch = "x86_64", not(miri)))] {
//! use mdu_platform::simd::{Register, Ymm};
//!
//! /// `dst ^= a ^ b`, 32 bytes at a time.
//! #[target_feature(enable = "avx2")]
//! fn xor_into(dst: &mut [u8; 64], a: &[u8; 64], b: &[u8; 64]) {
//!     for i in (0..64).step_by(Ymm::BYTES) {
//!         // SAFETY: 32 bytes from `i < 64 - 31` lie in each array; AVX2 is
//!         // enabled for this function.
//!         unsafe {
//!             let d = Ymm::load(dst.as_ptr().add(i));
//!             let x = d.xor3(Ymm::load(a.as_ptr().add(i)), Ymm::load(b.as_ptr().add(i)));
//!             x.store(dst.as_mut_ptr().add(i));
//!         }
//!     }
//! }
//!
//! if mdu_platform::cpu::Features::get().avx2 {
//!     let (mut dst, a, b) = ([1u8; 64], [2u8; 64], [4u8; 64]);
//!     // SAFETY: AVX2 was detected just above.
//!     unsafe { xor_into(&mut dst, &a, &b) };
//!     assert_eq!(dst, [7u8; 64]);
//! }
//! # }
//! ```

#[cfg(arm_simd)]
mod neon;
#[cfg(x86_simd)]
mod xmm;
#[cfg(x86_simd)]
mod ymm;
#[cfg(x86_simd)]
mod zmm;

#[cfg(arm_simd)]
pub use neon::Neon;
#[cfg(x86_simd)]
pub use xmm::Xmm;
#[cfg(x86_simd)]
pub use ymm::Ymm;
#[cfg(x86_simd)]
pub use zmm::Zmm;

/// `[f(0), f(1), ..., f(N - 1)]`, always inlined: the array constructor of
/// kernel code, for registers and round keys.
///
/// `core::array::from_fn` is an ordinary generic function: inside a
/// `#[target_feature]` kernel the optimizer may leave it out of line (it
/// has none of the kernel's features), and with it every register the
/// closure makes goes through memory behind a call and a `vzeroupper`.
/// That cost ~60 ns per call of the AVX2 XTS kernel, halving its rate on
/// one 512-byte unit at a time. This one is `#[inline(always)]`, so the
/// closure lands in the kernel and the array in registers.
///
/// ```
/// let squares: [usize; 4] = mdu_platform::simd::array(|i| i * i);
/// assert_eq!(squares, [0, 1, 4, 9]);
/// ```
#[inline(always)]
pub fn array<T: Copy, const N: usize>(mut f: impl FnMut(usize) -> T) -> [T; N] {
    const { assert!(N > 0, "an array of at least one element") };
    let mut out = [f(0); N];
    let mut i = 1;
    while i < N {
        out[i] = f(i);
        i += 1;
    }
    out
}

mod sealed {
    pub trait Sealed {}
}
#[cfg(simd)]
use sealed::Sealed;

/// A SIMD register of one width: [`Register::LANES`] lanes of 16 bytes.
///
/// The constructors are `unsafe`: their contract includes that the CPU has
/// the width's base features (see the [module](self) table), so every
/// operation on an existing value is safe. Sealed: the types of this
/// module are its only implementations.
///
/// ```
/// # #[cfg(all(target_arch = "x86_64", not(miri)))] {
/// use mdu_platform::simd::{Register, Xmm};
///
/// let bytes: [u8; 16] = core::array::from_fn(|i| i as u8);
/// // SAFETY: 16 readable bytes; SSE2 is the x86_64 baseline.
/// let v = unsafe { Xmm::load(bytes.as_ptr()) };
/// let mut out = [0u8; 16];
/// // SAFETY: 16 writable bytes.
/// unsafe { v.xor(v).store(out.as_mut_ptr()) };
/// assert_eq!(out, [0; 16]);
///
/// // A lane from a little-endian integer: the same bytes as loaded.
/// let w = Xmm::lane_from_u128(u128::from_le_bytes(bytes));
/// // SAFETY: 16 writable bytes.
/// unsafe { w.xor(v).store(out.as_mut_ptr()) };
/// assert_eq!(out, [0; 16]);
/// # }
/// ```
pub trait Register: Copy + core::fmt::Debug + sealed::Sealed {
    /// 16-byte lanes per register.
    const LANES: usize;
    /// Bytes per register.
    const BYTES: usize = 16 * Self::LANES;
    /// One lane of this instruction set: its 16-byte register type.
    type Lane: Register<Lane = Self::Lane>;

    /// Loads `BYTES` bytes (unaligned).
    ///
    /// # Safety
    ///
    /// `src` is valid for `BYTES` bytes; the CPU has the width's base
    /// features.
    unsafe fn load(src: *const u8) -> Self;
    /// Stores `BYTES` bytes (unaligned).
    ///
    /// # Safety
    ///
    /// `dst` is valid for `BYTES` writable bytes.
    unsafe fn store(self, dst: *mut u8);
    /// Lane `k` from the 16 bytes at `src + k * stride`.
    ///
    /// # Safety
    ///
    /// Every `src + k * stride`, `k < LANES`, is valid for 16 bytes; the
    /// CPU has the width's base features.
    unsafe fn gather(src: *const u8, stride: usize) -> Self;
    /// Lane `k` to the 16 bytes at `dst + k * stride`.
    ///
    /// # Safety
    ///
    /// Every `dst + k * stride`, `k < LANES`, is valid for 16 writable
    /// bytes.
    unsafe fn scatter(self, dst: *mut u8, stride: usize);
    /// `b` in every lane.
    ///
    /// # Safety
    ///
    /// The CPU has the width's base features.
    unsafe fn splat(b: Self::Lane) -> Self;
    /// Lane `k` is `lanes(k)`, each moved in from a register (never through
    /// memory: a wide load of lanes just stored one by one cannot be
    /// forwarded from the store buffer).
    ///
    /// # Safety
    ///
    /// The CPU has the width's base features.
    unsafe fn from_lanes(lanes: impl FnMut(usize) -> Self::Lane) -> Self;
    /// A little-endian 128-bit integer as one lane, moved in from
    /// general-purpose registers (the lane type is the baseline's).
    fn lane_from_u128(x: u128) -> Self::Lane;
    /// Lane `i < LANES`.
    fn lane(self, i: usize) -> Self::Lane;
    /// `self ^ b`.
    fn xor(self, b: Self) -> Self;
    /// `self ^ b ^ c` (one instruction where the width has one).
    fn xor3(self, b: Self, c: Self) -> Self;
    /// The lanes one position back from those of `v`: the last lane of
    /// `carry`, then every lane of `v` but its last.
    fn shift_in(carry: Self, v: Self) -> Self;
}

#[cfg(all(test, feature = "std", simd))]
mod tests {
    use super::*;

    /// Runs the checks of [`moves_follow_the_byte_model`] on `R`.
    ///
    /// # Safety
    ///
    /// The CPU has `R`'s base features.
    unsafe fn check<R: Register>() {
        let n = R::BYTES;
        // Painted with period 251, so that a swapped or shifted lane shows.
        let paint = |seed: usize, len: usize| -> std::vec::Vec<u8> {
            (0..len).map(|i| ((i + seed * 97) % 251) as u8).collect()
        };
        let (a, b, c) = (paint(1, n), paint(2, n), paint(3, n));
        let bytes = |r: R| {
            let mut out = std::vec![0u8; n];
            // SAFETY: `n` writable bytes.
            unsafe { r.store(out.as_mut_ptr()) };
            out
        };
        let lane_bytes = |l: R::Lane| {
            let mut out = [0u8; 16];
            // SAFETY: 16 writable bytes.
            unsafe { l.store(out.as_mut_ptr()) };
            out
        };
        // SAFETY: `n` readable bytes each; the base features are the
        // caller's contract.
        let (ra, rb, rc) = unsafe {
            (
                R::load(a.as_ptr()),
                R::load(b.as_ptr()),
                R::load(c.as_ptr()),
            )
        };
        assert_eq!(bytes(ra), a, "load, store");
        let x: std::vec::Vec<u8> = (0..n).map(|i| a[i] ^ b[i]).collect();
        assert_eq!(bytes(ra.xor(rb)), x, "xor");
        let x3: std::vec::Vec<u8> = (0..n).map(|i| a[i] ^ b[i] ^ c[i]).collect();
        assert_eq!(bytes(ra.xor3(rb, rc)), x3, "xor3");
        for k in 0..R::LANES {
            assert_eq!(lane_bytes(ra.lane(k)), a[16 * k..16 * k + 16], "lane {k}");
        }
        // `shift_in`: the last lane of `carry`, then all but the last of `v`.
        let shifted = bytes(R::shift_in(rb, ra));
        assert_eq!(shifted[..16], b[n - 16..], "shift_in, lane 0");
        assert_eq!(shifted[16..], a[..n - 16], "shift_in, the others");
        // Gather and scatter with a stride of 48 bytes: lane k at 48 * k.
        let stride = 48;
        let spread = paint(4, stride * (R::LANES - 1) + 16);
        // SAFETY: lane k reads 16 bytes at `48 * k`, inside `spread`.
        let g = unsafe { R::gather(spread.as_ptr(), stride) };
        for k in 0..R::LANES {
            assert_eq!(
                lane_bytes(g.lane(k)),
                spread[stride * k..][..16],
                "gather {k}"
            );
        }
        let mut out = std::vec![0xeeu8; spread.len()];
        // SAFETY: as for the gather.
        unsafe { g.scatter(out.as_mut_ptr(), stride) };
        for k in 0..R::LANES {
            assert_eq!(
                out[stride * k..][..16],
                spread[stride * k..][..16],
                "scatter {k}"
            );
            if k + 1 < R::LANES {
                assert!(
                    out[stride * k + 16..stride * (k + 1)]
                        .iter()
                        .all(|&x| x == 0xee)
                );
            }
        }
        // SAFETY: the base features are the caller's contract.
        let (s, f) = unsafe {
            (
                R::splat(ra.lane(0)),
                R::from_lanes(|k| rb.lane(R::LANES - 1 - k)),
            )
        };
        for k in 0..R::LANES {
            assert_eq!(lane_bytes(s.lane(k)), a[..16], "splat {k}");
            let j = R::LANES - 1 - k;
            assert_eq!(
                lane_bytes(f.lane(k)),
                b[16 * j..16 * j + 16],
                "from_lanes {k}"
            );
        }
        let x = 0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0100_u128;
        assert_eq!(
            lane_bytes(R::lane_from_u128(x)),
            x.to_le_bytes(),
            "lane_from_u128"
        );
    }

    /// Every operation of every width this CPU runs against its definition
    /// on bytes; the test says which widths it ran.
    #[test]
    fn moves_follow_the_byte_model() {
        let mut ran: std::vec::Vec<&str> = std::vec::Vec::new();
        #[cfg(x86_simd)]
        {
            let f = crate::cpu::Features::get();
            // SAFETY: SSE2 is the x86_64 baseline.
            unsafe { check::<Xmm>() };
            ran.push("xmm");
            if f.avx2 {
                // SAFETY: AVX2 was detected.
                unsafe { check::<Ymm>() };
                ran.push("ymm");
            }
            if f.avx512f {
                // SAFETY: AVX-512 F was detected.
                unsafe { check::<Zmm>() };
                ran.push("zmm");
            }
        }
        #[cfg(arm_simd)]
        {
            // SAFETY: NEON is the arm64 baseline.
            unsafe { check::<Neon>() };
            ran.push("neon");
        }
        std::println!("simd widths checked here: {ran:?}");
    }
}
