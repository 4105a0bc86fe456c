//! The Armv8 Crypto Extensions (`AESE`/`AESMC`, `AESD`/`AESIMC`, `PMULL`)
//! on 128-bit vector registers: eight blocks in flight per iteration.
//!
//! The primitives of the XTS driver for one block per register:
//!
//! * Eight AES chains interleaved round by round (the kernel's aes-ce XTS
//!   keeps four or five): 8 state and 8 tweak registers next to the 15
//!   round keys of AES-256 is 31 of the 32 vector registers.
//! * The tweak is folded into round key 0 (`AESE` adds its key first) and
//!   into the last round key, so a block costs two XORs besides the rounds.
//! * A unit's first eight tweaks `T, Tx, .., Tx^7` come from serial
//!   doublings (shift and conditional XOR); after each iteration every one
//!   advances by x^8 independently: a one-byte shift plus a `PMULL` of the
//!   byte shifted out by 0x87.
//! * The first tweaks of eight units are encrypted together.

use core::arch::aarch64::*;

use super::{
    RoundKeys, encrypt_iv, iv_vector, last_round, load_schedule, mul_x, mul_x8, round, xts_block,
};
use mdu_aes::Ivs;
use mdu_core::Iv;

use crate::backend::driver::{self, Lanes};

/// Units whose first tweaks are encrypted together.
const UNITS: usize = 8;
/// Vectors (here blocks) in flight in the main loop.
const WIDTH: usize = 8;

/// The expanded keys in vector registers; made only by [`crypt`].
struct Ce {
    /// K1, in the order of the direction being run.
    rk: [uint8x16_t; 15],
    /// K2, encryption order.
    k2: [uint8x16_t; 15],
}

impl Lanes for Ce {
    type V = uint8x16_t;
    type B = uint8x16_t;
    const BLOCKS: usize = 1;

    #[inline(always)]
    unsafe fn load(src: *const u8) -> uint8x16_t {
        // SAFETY: 16 readable bytes (the caller); NEON is enabled in `crypt`,
        // the only place a `Ce` exists.
        unsafe { vld1q_u8(src) }
    }

    #[inline(always)]
    unsafe fn store(dst: *mut u8, v: uint8x16_t) {
        // SAFETY: 16 writable bytes (the caller); NEON as above.
        unsafe { vst1q_u8(dst, v) }
    }

    #[inline(always)]
    fn xts<const NR: usize, const ENC: bool, const N: usize>(
        &self,
        mut s: [uint8x16_t; N],
        tw: &[uint8x16_t; N],
    ) -> [uint8x16_t; N] {
        let rk = &self.rk;
        // SAFETY: a `Ce` exists only inside `crypt`, which runs with NEON
        // and the AES instructions enabled.
        unsafe {
            for (s, t) in s.iter_mut().zip(tw) {
                *s = round::<ENC>(*s, veorq_u8(rk[0], *t));
            }
            for k in &rk[1..NR - 1] {
                for s in s.iter_mut() {
                    *s = round::<ENC>(*s, *k);
                }
            }
            for (s, t) in s.iter_mut().zip(tw) {
                *s = veorq_u8(last_round::<ENC>(*s, rk[NR - 1]), veorq_u8(rk[NR], *t));
            }
        }
        s
    }

    #[inline(always)]
    fn setup<const W: usize>(&self, t: uint8x16_t) -> [uint8x16_t; W] {
        let mut tw = [t; W];
        for i in 1..W {
            // SAFETY: as in `xts`.
            tw[i] = unsafe { mul_x(tw[i - 1]) };
        }
        tw
    }

    #[inline(always)]
    fn advance<const W: usize>(&self, tw: &mut [uint8x16_t; W]) {
        const { assert!(W == 8, "a step of x^8 is eight blocks") };
        for t in tw.iter_mut() {
            // SAFETY: as in `xts` (PMULL is part of the AES feature).
            *t = unsafe { mul_x8(*t) };
        }
    }

    #[inline(always)]
    fn lane(&self, v: uint8x16_t, _: usize) -> uint8x16_t {
        v
    }

    #[inline(always)]
    unsafe fn load1(src: *const u8) -> uint8x16_t {
        // SAFETY: forwarded from the caller.
        unsafe { Self::load(src) }
    }

    #[inline(always)]
    unsafe fn store1(dst: *mut u8, b: uint8x16_t) {
        // SAFETY: forwarded from the caller.
        unsafe { Self::store(dst, b) }
    }

    #[inline(always)]
    fn xts1<const NR: usize, const ENC: bool>(&self, b: uint8x16_t, t: uint8x16_t) -> uint8x16_t {
        // SAFETY: as in `xts`.
        unsafe { xts_block::<NR, ENC>(&self.rk, b, t) }
    }

    #[inline(always)]
    fn mul_x(&self, t: uint8x16_t) -> uint8x16_t {
        // SAFETY: as in `xts`.
        unsafe { mul_x(t) }
    }

    #[inline(always)]
    fn first_tweak<const NR: usize>(&self, iv: u128) -> uint8x16_t {
        // SAFETY: as in `xts`.
        unsafe { encrypt_iv::<NR>(&self.k2, iv) }
    }

    #[inline(always)]
    fn first_tweaks<const NR: usize, const U: usize>(&self, ivs: &[u128; U]) -> [uint8x16_t; U] {
        let k2 = &self.k2;
        // SAFETY: as in `xts`.
        unsafe {
            let mut s = [vdupq_n_u8(0); U];
            for (s, iv) in s.iter_mut().zip(ivs) {
                *s = round::<true>(iv_vector(*iv), k2[0]);
            }
            for k in &k2[1..NR - 1] {
                for s in s.iter_mut() {
                    *s = round::<true>(*s, *k);
                }
            }
            for s in s.iter_mut() {
                *s = veorq_u8(last_round::<true>(*s, k2[NR - 1]), k2[NR]);
            }
            s
        }
    }
}

/// Encrypts (`ENC`) or decrypts `count` data units of `unit_len` bytes from
/// `src` to `dst`; unit `i` uses IV `i` of `Ivs::from_parts(first, step,
/// list)`.
///
/// # Safety
///
/// The CPU has NEON and the AES and PMULL instructions; `src` and `dst` are
/// valid for `count * unit_len` bytes and are equal or disjoint;
/// `unit_len >= 16`; `NR` is 10 or 14 and matches the schedules in `keys`;
/// a `list` holds `count` IVs.
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "neon,aes")]
pub(crate) unsafe fn crypt<const NR: usize, const ENC: bool>(
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
        rk: load_schedule(if ENC { &keys.k1.enc } else { &keys.k1.dec }),
        k2: load_schedule(&keys.tweak),
    };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `l` holds the matching schedules.
    unsafe { driver::crypt::<Ce, NR, ENC, WIDTH, UNITS>(&l, &ivs, unit_len, count, src, dst) }
}
