//! The Armv8 Crypto Extensions (`AESE`/`AESMC`, `AESD`/`AESIMC`, `PMULL`)
//! on 128-bit vector registers: eight blocks in flight per iteration.
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

use super::{RoundKeys, mul_x, mul_x8};
use mdu_aes::Ivs;
use mdu_aes::vector::Neon;
use mdu_core::Iv;
use mdu_core::cpu::Witness;

use crate::backend::driver::{self, Kernel, Tweaks};
use crate::backend::needs;

/// Units whose first tweaks are encrypted together.
const UNITS: usize = 8;
/// Vectors (here blocks) in flight in the main loop.
const WIDTH: usize = 8;

impl Tweaks for Neon {
    #[inline(always)]
    unsafe fn setup<const W: usize>(t: Neon) -> [Neon; W] {
        let mut tw = [t; W];
        for i in 1..W {
            tw[i] = Neon::mul_x(tw[i - 1]);
        }
        tw
    }

    #[inline(always)]
    unsafe fn advance<const W: usize>(t: Neon) -> Neon {
        const { assert!(W == 8, "a step of x^8 is eight blocks") };
        // SAFETY: PMULL, part of FEAT_AES here (the caller).
        unsafe { Neon::from_raw(mul_x8(t.raw())) }
    }

    #[inline(always)]
    fn mul_x(t: Neon) -> Neon {
        // SAFETY: NEON is the arm64 baseline.
        unsafe { Neon::from_raw(mul_x(t.raw())) }
    }
}

/// Encrypts (`ENC`) or decrypts `count` data units of `unit_len` bytes from
/// `src` to `dst`; unit `i` uses IV `i` of `Ivs::from_parts(first, step,
/// list)`.
///
/// # Safety
///
/// `src` and `dst` are valid for `count * unit_len` bytes and are equal or
/// disjoint; `unit_len >= 16`; `NR` is 10 or 14 and matches the schedules
/// in `keys`; a `list` holds `count` IVs. (The CPU features are the
/// witness's: its type is the backend's declared needs.)
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "neon,aes")]
pub(crate) unsafe fn crypt<const NR: usize, const ENC: bool>(
    _: Witness<needs::ArmCe>,
    keys: &RoundKeys,
    first: u128,
    step: u64,
    list: Option<&[Iv]>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    // SAFETY: this function runs with NEON, AES and PMULL.
    let k = unsafe { Kernel::<Neon>::new::<ENC>(keys) };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `k` holds the matching schedules.
    unsafe { driver::crypt::<Neon, NR, ENC, WIDTH, UNITS>(&k, &ivs, unit_len, count, src, dst) }
}
