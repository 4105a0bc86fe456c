//! AES-NI on xmm registers: eight units' CBC chains side by side when
//! encrypting, eight blocks in flight when decrypting.
//!
//! One block per register, so a unit's block is a plain load (no gather)
//! and the ciphertext one block back is the previous register. Eight
//! chains at AES-NI's latency of 3 to 4 cycles and throughput of one or two
//! per cycle keep the AES unit busy; the round keys are memory operands
//! (eight states and eight inputs fill the sixteen xmm registers).

use core::arch::x86_64::*;

use mdu_aes::x86::{iv_vector, load_schedule};
use mdu_aes::{Ivs, RoundKeys};
use mdu_core::Iv;

use super::{chain, unchain};
use crate::backend::driver::{self, Lanes};

/// Vectors (here blocks, and units when encrypting) in flight.
const WIDTH: usize = 8;

/// The round keys of one direction as xmm registers; made only by
/// [`encrypt`] and [`decrypt`].
struct Xmm {
    /// Encryption order in `encrypt`, the equivalent inverse cipher's in
    /// `decrypt`.
    rk: [__m128i; 15],
}

impl Lanes for Xmm {
    type V = __m128i;
    type B = __m128i;
    const BLOCKS: usize = 1;

    #[inline(always)]
    fn ivs(&self, ivs: &Ivs<'_>, start: usize) -> __m128i {
        iv_vector(ivs.get(start))
    }

    #[inline(always)]
    unsafe fn gather(src: *const u8, _: usize) -> __m128i {
        // SAFETY: 16 readable bytes (the caller); no alignment need.
        unsafe { _mm_loadu_si128(src.cast()) }
    }

    #[inline(always)]
    unsafe fn scatter(dst: *mut u8, _: usize, v: __m128i) {
        // SAFETY: 16 writable bytes (the caller); no alignment need.
        unsafe { _mm_storeu_si128(dst.cast(), v) }
    }

    #[inline(always)]
    fn chain<const NR: usize, const N: usize>(&self, s: &mut [__m128i; N], x: &[__m128i; N]) {
        // SAFETY: an `Xmm` exists only inside the entry points, which run
        // with AES-NI enabled.
        unsafe { chain::<NR, N>(&self.rk, s, x) }
    }

    #[inline(always)]
    unsafe fn load(src: *const u8) -> __m128i {
        // SAFETY: forwarded from the caller.
        unsafe { Self::gather(src, 0) }
    }

    #[inline(always)]
    unsafe fn store(dst: *mut u8, v: __m128i) {
        // SAFETY: forwarded from the caller.
        unsafe { Self::scatter(dst, 0, v) }
    }

    #[inline(always)]
    fn shift_in(&self, carry: __m128i, _: __m128i) -> __m128i {
        carry
    }

    #[inline(always)]
    fn unchain<const NR: usize, const N: usize>(
        &self,
        c: &[__m128i; N],
        p: &[__m128i; N],
    ) -> [__m128i; N] {
        // SAFETY: as in `chain`.
        unsafe { unchain::<NR, N>(&self.rk, c, p) }
    }

    #[inline(always)]
    fn carry_iv(&self, iv: u128) -> __m128i {
        iv_vector(iv)
    }

    #[inline(always)]
    fn last(&self, v: __m128i) -> __m128i {
        v
    }

    #[inline(always)]
    fn iv1(&self, iv: u128) -> __m128i {
        iv_vector(iv)
    }

    #[inline(always)]
    unsafe fn load1(src: *const u8) -> __m128i {
        // SAFETY: forwarded from the caller.
        unsafe { Self::gather(src, 0) }
    }

    #[inline(always)]
    unsafe fn store1(dst: *mut u8, b: __m128i) {
        // SAFETY: forwarded from the caller.
        unsafe { Self::scatter(dst, 0, b) }
    }

    #[inline(always)]
    fn chain1<const NR: usize, const N: usize>(&self, s: &mut [__m128i; N], x: &[__m128i; N]) {
        // SAFETY: as in `chain`.
        unsafe { chain::<NR, N>(&self.rk, s, x) }
    }

    #[inline(always)]
    fn unchain1<const NR: usize>(&self, c: __m128i, p: __m128i) -> __m128i {
        // SAFETY: as in `chain`.
        unsafe { unchain::<NR, 1>(&self.rk, &[c], &[p])[0] }
    }
}

/// CBC-encrypts `count` data units of `unit_len` bytes from `src` to `dst`;
/// unit `i` uses IV `i` of `Ivs::from_parts(first, step, list)`.
///
/// # Safety
///
/// The CPU has AES-NI; `src` and `dst` are valid for `count * unit_len`
/// bytes and are equal or disjoint; `unit_len` is a non-zero multiple of
/// 16; `NR` is 10 or 14 and matches the schedules in `keys`; a `list`
/// holds `count` IVs.
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes")]
pub(crate) unsafe fn encrypt<const NR: usize>(
    keys: &RoundKeys,
    first: u128,
    step: u64,
    list: Option<&[Iv]>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let l = Xmm {
        rk: load_schedule(&keys.enc),
    };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `l` holds the encryption schedule.
    unsafe { driver::encrypt::<Xmm, NR, WIDTH>(&l, &ivs, unit_len, count, src, dst) }
}

/// CBC-decrypts `count` data units; see [`encrypt`].
///
/// # Safety
///
/// As for [`encrypt`].
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes")]
pub(crate) unsafe fn decrypt<const NR: usize>(
    keys: &RoundKeys,
    first: u128,
    step: u64,
    list: Option<&[Iv]>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let l = Xmm {
        rk: load_schedule(&keys.dec),
    };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `l` holds the decryption schedule.
    unsafe { driver::decrypt::<Xmm, NR, WIDTH>(&l, &ivs, unit_len, count, src, dst) }
}
