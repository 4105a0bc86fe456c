//! The Armv8 Crypto Extensions (`AESE`/`AESMC`, `AESD`/`AESIMC`, `PMULL`)
//! on 128-bit vector registers: eight blocks in flight per iteration.
//!
//! * The first tweaks of eight upcoming data units are encrypted together
//!   (eight independent AES chains instead of one latency-bound chain per
//!   unit), and the next batch's while the current batch runs.
//! * A unit's first eight tweaks `T, Tx, .., Tx^7` come from serial
//!   doublings (shift and conditional XOR), set up before the previous
//!   unit's blocks; after each iteration every one of the eight advances by
//!   x^8 independently: a one-byte shift plus a `PMULL` of the byte shifted
//!   out by 0x87.
//! * The tweak is folded into round key 0 (`AESE` adds its key first) and
//!   into the last round key, so a block costs two XORs besides the rounds.
//! * Eight blocks in flight (the kernel's aes-ce XTS keeps four or five):
//!   8 state and 8 tweak registers next to the 15 round keys of AES-256 is
//!   31 of the 32 vector registers.
//! * Fewer than eight blocks at the end of a unit run as a group of four,
//!   two and one; a ragged end uses ciphertext stealing.

use core::arch::aarch64::*;

use super::{
    RoundKeys, bulk_blocks, finish_unit, iv_batch, iv_vector, last_round, load_schedule, mul_x,
    mul_x8, round,
};

/// Data units whose first tweaks are computed together.
const BATCH: usize = 8;

/// Blocks per main-loop iteration.
const LANES: usize = 8;

/// `E_K2(iv)` for eight IVs at once.
#[inline]
#[target_feature(enable = "aes")]
fn first_tweaks<const NR: usize>(
    k2: &[uint8x16_t; 15],
    ivs: &[u128; BATCH],
) -> [uint8x16_t; BATCH] {
    let mut s = [vdupq_n_u8(0); BATCH];
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

/// The tweaks of a unit's first eight blocks: `t, t*x, .., t*x^7`.
#[inline]
#[target_feature(enable = "neon")]
fn setup(t: uint8x16_t) -> [uint8x16_t; LANES] {
    let mut tw = [t; LANES];
    for i in 1..LANES {
        tw[i] = mul_x(tw[i - 1]);
    }
    tw
}

/// `N` consecutive blocks of `src` to `dst`, block `i` under tweak `tw[i]`.
///
/// # Safety
///
/// `src` and `dst` are valid for `16 * N` bytes and are equal or disjoint;
/// the CPU has the AES instructions; `N <= LANES`.
#[inline]
#[target_feature(enable = "aes")]
unsafe fn blocks<const NR: usize, const ENC: bool, const N: usize>(
    rk: &[uint8x16_t; 15],
    tw: &[uint8x16_t; LANES],
    src: *const u8,
    dst: *mut u8,
) {
    let mut s = [vdupq_n_u8(0); N];
    for (i, s) in s.iter_mut().enumerate() {
        // SAFETY: block `i < N` lies in the `16 * N` valid source bytes.
        let b = unsafe { vld1q_u8(src.add(16 * i)) };
        *s = round::<ENC>(b, veorq_u8(rk[0], tw[i]));
    }
    for k in &rk[1..NR - 1] {
        for s in s.iter_mut() {
            *s = round::<ENC>(*s, *k);
        }
    }
    for (i, s) in s.iter().enumerate() {
        let out = veorq_u8(last_round::<ENC>(*s, rk[NR - 1]), veorq_u8(rk[NR], tw[i]));
        // SAFETY: as for the loads; every block was loaded before the first
        // store, so an in-place call reads only input.
        unsafe { vst1q_u8(dst.add(16 * i), out) };
    }
}

/// One data unit of `len >= 16` bytes whose first eight tweaks are `tw`
/// (see [`setup`]).
///
/// # Safety
///
/// `src` and `dst` are valid for `len` bytes and are equal or disjoint; the
/// CPU has the AES and PMULL instructions.
#[inline]
#[target_feature(enable = "aes")]
unsafe fn unit<const NR: usize, const ENC: bool>(
    rk: &[uint8x16_t; 15],
    mut tw: [uint8x16_t; LANES],
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let mut left = bulk_blocks::<ENC>(len);
    let mut off = 0;
    while left >= LANES {
        // SAFETY: `off + 16 * LANES <= 16 * bulk <= len`.
        unsafe { blocks::<NR, ENC, LANES>(rk, &tw, src.add(off), dst.add(off)) };
        off += 16 * LANES;
        left -= LANES;
        if left == 0 && len.is_multiple_of(16) {
            // Done: skip advancing tweaks nobody would use.
            return;
        }
        for t in tw.iter_mut() {
            *t = mul_x8(*t);
        }
    }
    // Fewer than eight blocks left: groups of four, two and one as the bits
    // of `left` say; the tweaks of the blocks done move out of the front.
    macro_rules! tail {
        ($n:literal) => {
            if left & $n != 0 {
                // SAFETY: `off + 16 * left <= 16 * bulk <= len`, and the
                // groups still to come are the lower bits of `left`.
                unsafe { blocks::<NR, ENC, $n>(rk, &tw, src.add(off), dst.add(off)) };
                tw.rotate_left($n);
                off += 16 * $n;
            }
        };
    }
    tail!(4);
    tail!(2);
    tail!(1);
    // SAFETY: `off` is the end of the bulk blocks of a `len`-byte unit and
    // `tw[0]` the tweak of the block after them.
    unsafe { finish_unit::<NR, ENC>(rk, tw[0], src, dst, off, len % 16) };
}

/// Encrypts (`ENC`) or decrypts `count` data units of `unit_len` bytes from
/// `src` to `dst`; unit `i` uses IV `first_iv + i * step`.
///
/// # Safety
///
/// The CPU has NEON and the AES and PMULL instructions; `src` and `dst` are
/// valid for `count * unit_len` bytes and are equal or disjoint;
/// `unit_len >= 16`; `NR` is 10 or 14 and matches the schedules in `keys`.
#[target_feature(enable = "neon,aes")]
pub(crate) unsafe fn crypt<const NR: usize, const ENC: bool>(
    keys: &RoundKeys,
    first_iv: u128,
    step: u64,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let rk = load_schedule(if ENC { &keys.enc } else { &keys.dec });
    let k2 = load_schedule(&keys.tweak);
    if count == 1 {
        // One message: one AES chain for its tweak, no batch.
        let t = super::encrypt_iv::<NR>(&k2, first_iv);
        // SAFETY: the request is exactly this one unit.
        unsafe { unit::<NR, ENC>(&rk, setup(t), src, dst, unit_len) };
        return;
    }
    let first = |start: usize| first_tweaks::<NR>(&k2, &iv_batch::<BATCH>(first_iv, step, start));
    // Software pipeline: the next batch's first tweaks are encrypted while
    // this batch runs, and each unit's tweaks are set up before the previous
    // unit's blocks, so no unit waits on AES latency for its tweaks.
    let mut tweaks = first(0);
    let mut done = 0;
    while done < count {
        let n = BATCH.min(count - done);
        let batch = tweaks;
        if count - done > BATCH {
            tweaks = first(done + BATCH);
        }
        let mut next = setup(batch[0]);
        for j in 0..n {
            let tw = next;
            if j + 1 < n {
                next = setup(batch[j + 1]);
            }
            let at = (done + j) * unit_len;
            // SAFETY: unit `done + j < count` lies inside the request.
            unsafe { unit::<NR, ENC>(&rk, tw, src.add(at), dst.add(at), unit_len) };
        }
        done += n;
    }
}
