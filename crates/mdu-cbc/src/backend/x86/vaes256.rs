//! VAES on ymm registers (AVX2, no AVX-512 needed): sixteen units' CBC
//! chains side by side when encrypting, sixteen blocks in flight when
//! decrypting.
//!
//! * Encryption: lane `k` of a ymm register is one unit, so block `j` of
//!   units `u` and `u + 1` are gathered into one register (two loads and a
//!   `vinserti128`) and scattered back (a store of each half). Eight
//!   registers are sixteen independent chains: AES latency times throughput
//!   on the cores with VAES on ymm if the latency is 4 cycles at two
//!   instructions per cycle; where it is longer, eight chains leave part of
//!   the ymm AES throughput idle (measured on a Xeon with AVX-512: 75 to 80%
//!   of the ymm ECB rate, where zmm's four chains at one per cycle reach
//!   93%). The gathers and scatters run on the
//!   load, store and shuffle ports, away from the AES unit, which stays the
//!   bottleneck: encryption measures at the rate of decryption (the ECB
//!   rate), so transposing two consecutive blocks of each unit instead
//!   (fewer loads, more live registers where ymm has only sixteen) has
//!   nothing left to win.
//! * Decryption: two consecutive blocks per register; the ciphertext one
//!   block back is `vperm2i128` of the register and the one before it.
//! * Eight states and eight inputs fill the sixteen ymm registers: the
//!   round keys (broadcast to both lanes once per request) are memory
//!   operands, one fused load per round.

use mdu_aes::vector::Ymm;
use mdu_aes::{Ivs, RoundKeys};
use mdu_core::Iv;

use crate::backend::driver::{self, Kernel};

/// Vectors in flight: sixteen units or blocks.
const WIDTH: usize = 8;

/// CBC-encrypts `count` data units of `unit_len` bytes from `src` to `dst`;
/// unit `i` uses IV `i` of `Ivs::from_parts(first, step, list)`.
///
/// # Safety
///
/// The CPU has AES-NI, AVX2 and VAES; `src` and `dst` are valid for `count * unit_len`
/// bytes and are equal or disjoint; `unit_len` is a non-zero multiple of
/// 16; `NR` is 10 or 14 and matches the schedules in `keys`; a `list`
/// holds `count` IVs.
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,avx2,vaes")]
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
    // SAFETY: this function runs with AVX2 and VAES.
    let k = unsafe { Kernel::<Ymm>::new(&keys.enc) };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `k` holds the encryption schedule.
    unsafe { driver::encrypt::<Ymm, NR, WIDTH>(&k, &ivs, unit_len, count, src, dst) }
}

/// CBC-decrypts `count` data units; see [`encrypt`].
///
/// # Safety
///
/// As for [`encrypt`].
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,avx2,vaes")]
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
    // SAFETY: this function runs with AVX2 and VAES.
    let k = unsafe { Kernel::<Ymm>::new(&keys.dec) };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `k` holds the decryption schedule.
    unsafe { driver::decrypt::<Ymm, NR, WIDTH>(&k, &ivs, unit_len, count, src, dst) }
}
