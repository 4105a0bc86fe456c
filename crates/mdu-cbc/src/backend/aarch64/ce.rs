//! The Armv8 Crypto Extensions (`AESE`/`AESMC`, `AESD`/`AESIMC`) on 128-bit
//! vector registers: eight units' CBC chains side by side when encrypting,
//! eight blocks in flight when decrypting.
//!
//! One block per register, so a unit's block is a plain load and the
//! ciphertext one block back is the previous register. `AESE` adds its
//! round key first, so a chain step is `AESE(x ^ s, rk0)`, `AESMC`, ...,
//! `AESE(.., rk[NR-1])` and a plain XOR with the last round key; decryption
//! folds the previous ciphertext into that last XOR. Eight states, eight
//! inputs and the fifteen round keys of AES-256 fit the 32 vector
//! registers.

use core::arch::aarch64::*;

use mdu_aes::aarch64::{iv_vector, last_round, load_schedule, round};
use mdu_aes::{Ivs, RoundKeys};
use mdu_core::Iv;

use crate::backend::driver::{self, Lanes};

/// Vectors (here blocks, and units when encrypting) in flight.
const WIDTH: usize = 8;

/// The round keys of one direction in vector registers; made only by
/// [`encrypt`] and [`decrypt`].
struct Ce {
    /// Encryption order in `encrypt`, the equivalent inverse cipher's in
    /// `decrypt`.
    rk: [uint8x16_t; 15],
}

impl Ce {
    /// One CBC encryption step of `N` chains.
    #[inline(always)]
    fn step<const NR: usize, const N: usize>(&self, s: &mut [uint8x16_t; N], x: &[uint8x16_t; N]) {
        let rk = &self.rk;
        // SAFETY: a `Ce` exists only inside the entry points, which run
        // with NEON and the AES instructions enabled.
        unsafe {
            for (s, x) in s.iter_mut().zip(x) {
                *s = round::<true>(veorq_u8(*s, *x), rk[0]);
            }
            for k in &rk[1..NR - 1] {
                for s in s.iter_mut() {
                    *s = round::<true>(*s, *k);
                }
            }
            for s in s.iter_mut() {
                *s = veorq_u8(last_round::<true>(*s, rk[NR - 1]), rk[NR]);
            }
        }
    }

    /// CBC decryption of `N` blocks.
    #[inline(always)]
    fn back<const NR: usize, const N: usize>(
        &self,
        c: &[uint8x16_t; N],
        p: &[uint8x16_t; N],
    ) -> [uint8x16_t; N] {
        let rk = &self.rk;
        let mut s = *c;
        // SAFETY: as in `step`.
        unsafe {
            for k in &rk[..NR - 1] {
                for s in s.iter_mut() {
                    *s = round::<false>(*s, *k);
                }
            }
            for (s, p) in s.iter_mut().zip(p) {
                *s = veorq_u8(last_round::<false>(*s, rk[NR - 1]), veorq_u8(rk[NR], *p));
            }
        }
        s
    }
}

impl Lanes for Ce {
    type V = uint8x16_t;
    type B = uint8x16_t;
    const BLOCKS: usize = 1;

    #[inline(always)]
    fn ivs(&self, ivs: &Ivs<'_>, start: usize) -> uint8x16_t {
        self.iv1(ivs.get(start))
    }

    #[inline(always)]
    unsafe fn gather(src: *const u8, _: usize) -> uint8x16_t {
        // SAFETY: 16 readable bytes (the caller); NEON is enabled wherever
        // a `Ce` exists.
        unsafe { vld1q_u8(src) }
    }

    #[inline(always)]
    unsafe fn scatter(dst: *mut u8, _: usize, v: uint8x16_t) {
        // SAFETY: 16 writable bytes (the caller); NEON as above.
        unsafe { vst1q_u8(dst, v) }
    }

    #[inline(always)]
    fn chain<const NR: usize, const N: usize>(&self, s: &mut [uint8x16_t; N], x: &[uint8x16_t; N]) {
        self.step::<NR, N>(s, x);
    }

    #[inline(always)]
    unsafe fn load(src: *const u8) -> uint8x16_t {
        // SAFETY: forwarded from the caller.
        unsafe { Self::gather(src, 0) }
    }

    #[inline(always)]
    unsafe fn store(dst: *mut u8, v: uint8x16_t) {
        // SAFETY: forwarded from the caller.
        unsafe { Self::scatter(dst, 0, v) }
    }

    #[inline(always)]
    fn shift_in(&self, carry: uint8x16_t, _: uint8x16_t) -> uint8x16_t {
        carry
    }

    #[inline(always)]
    fn unchain<const NR: usize, const N: usize>(
        &self,
        c: &[uint8x16_t; N],
        p: &[uint8x16_t; N],
    ) -> [uint8x16_t; N] {
        self.back::<NR, N>(c, p)
    }

    #[inline(always)]
    fn carry_iv(&self, iv: u128) -> uint8x16_t {
        self.iv1(iv)
    }

    #[inline(always)]
    fn last(&self, v: uint8x16_t) -> uint8x16_t {
        v
    }

    #[inline(always)]
    fn iv1(&self, iv: u128) -> uint8x16_t {
        // SAFETY: NEON is enabled wherever a `Ce` exists.
        unsafe { iv_vector(iv) }
    }

    #[inline(always)]
    unsafe fn load1(src: *const u8) -> uint8x16_t {
        // SAFETY: forwarded from the caller.
        unsafe { Self::gather(src, 0) }
    }

    #[inline(always)]
    unsafe fn store1(dst: *mut u8, b: uint8x16_t) {
        // SAFETY: forwarded from the caller.
        unsafe { Self::scatter(dst, 0, b) }
    }

    #[inline(always)]
    fn chain1<const NR: usize, const N: usize>(
        &self,
        s: &mut [uint8x16_t; N],
        x: &[uint8x16_t; N],
    ) {
        self.step::<NR, N>(s, x);
    }

    #[inline(always)]
    fn unchain1<const NR: usize>(&self, c: uint8x16_t, p: uint8x16_t) -> uint8x16_t {
        self.back::<NR, 1>(&[c], &[p])[0]
    }
}

/// CBC-encrypts `count` data units of `unit_len` bytes from `src` to `dst`;
/// unit `i` uses IV `i` of `Ivs::from_parts(first, step, list)`.
///
/// # Safety
///
/// The CPU has NEON and the AES instructions; `src` and `dst` are valid for
/// `count * unit_len` bytes and are equal or disjoint; `unit_len` is a
/// non-zero multiple of 16; `NR` is 10 or 14 and matches the schedules in
/// `keys`; a `list` holds `count` IVs.
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "neon,aes")]
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
    let l = Ce {
        rk: load_schedule(&keys.enc),
    };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `l` holds the encryption schedule.
    unsafe { driver::encrypt::<Ce, NR, WIDTH>(&l, &ivs, unit_len, count, src, dst) }
}

/// CBC-decrypts `count` data units; see [`encrypt`].
///
/// # Safety
///
/// As for [`encrypt`].
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "neon,aes")]
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
    let l = Ce {
        rk: load_schedule(&keys.dec),
    };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `l` holds the decryption schedule.
    unsafe { driver::decrypt::<Ce, NR, WIDTH>(&l, &ivs, unit_len, count, src, dst) }
}
