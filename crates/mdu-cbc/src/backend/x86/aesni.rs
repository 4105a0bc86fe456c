//! AES-NI on xmm registers: eight units' CBC chains side by side when
//! encrypting, eight blocks in flight when decrypting.
//!
//! One block per register, so a unit's block is a plain load (no gather)
//! and the ciphertext one block back is the previous register. Eight
//! chains at AES-NI's latency of 3 to 4 cycles and throughput of one or two
//! per cycle keep the AES unit busy; the round keys are memory operands
//! (eight states and eight inputs fill the sixteen xmm registers).

use mdu_aes::vector::Xmm;
use mdu_aes::{Ivs, RoundKeys};
use mdu_core::Iv;

use crate::backend::driver::{self, Kernel};

/// Vectors (here blocks, and units when encrypting) in flight.
const WIDTH: usize = 8;

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
    // SAFETY: this function runs with AES-NI.
    let k = unsafe { Kernel::<Xmm>::new(&keys.enc) };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `k` holds the encryption schedule.
    unsafe { driver::encrypt::<Xmm, NR, WIDTH>(&k, &ivs, unit_len, count, src, dst) }
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
    // SAFETY: this function runs with AES-NI.
    let k = unsafe { Kernel::<Xmm>::new(&keys.dec) };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `k` holds the decryption schedule.
    unsafe { driver::decrypt::<Xmm, NR, WIDTH>(&k, &ivs, unit_len, count, src, dst) }
}
