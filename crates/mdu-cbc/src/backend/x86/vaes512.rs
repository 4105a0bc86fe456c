//! VAES on zmm registers (AVX-512): sixteen units' CBC chains side by side
//! when encrypting, sixteen blocks in flight when decrypting.
//!
//! * Encryption: lane `k` of a zmm register is one unit, so block `j` of
//!   four units is gathered into one register (four loads, three
//!   `vinserti32x4`) and scattered back (a store and three
//!   `vextracti32x4` to memory). Four registers are sixteen independent
//!   chains: VAES on zmm issues one instruction per cycle at a latency of
//!   about four, so four registers of chains keep it busy. The gathers run
//!   on the load and shuffle ports, away from the AES unit, which stays the
//!   bottleneck: encryption measures within a few percent of decryption,
//!   which runs at the ECB rate, so transposing four consecutive blocks of
//!   each unit instead (fewer loads, sixteen more live registers) cannot
//!   gain more than those few percent.
//!   "Block `j` of the input ^ state ^ round key 0" is one `vpternlogq`.
//! * Decryption: four consecutive blocks per register; the ciphertext one
//!   block back is one `valignq` of the register and the one before it.
//! * Four states, four inputs and the fifteen round keys (broadcast to all
//!   lanes once per request) fit the 32 zmm registers.

use mdu_aes::vector::Zmm;
use mdu_aes::{Ivs, RoundKeys};
use mdu_core::Iv;

use crate::backend::driver::{self, Kernel};

/// Vectors in flight: sixteen units or blocks.
const WIDTH: usize = 4;

/// CBC-encrypts `count` data units of `unit_len` bytes from `src` to `dst`;
/// unit `i` uses IV `i` of `Ivs::from_parts(first, step, list)`.
///
/// # Safety
///
/// The CPU has AES-NI, AVX2, AVX-512 F and VAES; `src` and `dst` are valid for `count * unit_len`
/// bytes and are equal or disjoint; `unit_len` is a non-zero multiple of
/// 16; `NR` is 10 or 14 and matches the schedules in `keys`; a `list`
/// holds `count` IVs.
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,avx2,avx512f,vaes")]
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
    // SAFETY: this function runs with AVX-512 F and VAES.
    let k = unsafe { Kernel::<Zmm>::new(&keys.enc) };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `k` holds the encryption schedule.
    unsafe { driver::encrypt::<Zmm, NR, WIDTH>(&k, &ivs, unit_len, count, src, dst) }
}

/// CBC-decrypts `count` data units; see [`encrypt`].
///
/// # Safety
///
/// As for [`encrypt`].
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,avx2,avx512f,vaes")]
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
    // SAFETY: this function runs with AVX-512 F and VAES.
    let k = unsafe { Kernel::<Zmm>::new(&keys.dec) };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `k` holds the decryption schedule.
    unsafe { driver::decrypt::<Zmm, NR, WIDTH>(&k, &ivs, unit_len, count, src, dst) }
}
