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

use super::{mul_x, mul_x8};
use mdu_aes::__private::vector::Neon;

use crate::backend::driver::Tweaks;

/// Units whose first tweaks are encrypted together.
const UNITS: usize = 8;
/// Vectors (here blocks) in flight in the main loop.
const WIDTH: usize = 8;

impl Tweaks for Neon {
    /// The 32 registers could hold the tweaks beside the states and the
    /// round keys, but with no Arm hardware to measure the tail-free path
    /// on, this width keeps the general path.
    const WHOLE_GROUPS: bool = false;

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

crate::backend::driver::entry_point!(Neon, WIDTH, UNITS, ArmCe);
