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

use mdu_aes::vector::Neon;
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
/// The CPU has NEON and the AES instructions; `src` and `dst` are valid for `count * unit_len`
/// bytes and are equal or disjoint; `unit_len` is a non-zero multiple of
/// 16; `NR` is 10 or 14 and matches the schedules in `keys`; a `list`
/// holds `count` IVs.
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
    // SAFETY: this function runs with NEON and the AES instructions.
    let k = unsafe { Kernel::<Neon>::new(&keys.enc) };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `k` holds the encryption schedule.
    unsafe { driver::encrypt::<Neon, NR, WIDTH>(&k, &ivs, unit_len, count, src, dst) }
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
    // SAFETY: this function runs with NEON and the AES instructions.
    let k = unsafe { Kernel::<Neon>::new(&keys.dec) };
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `k` holds the decryption schedule.
    unsafe { driver::decrypt::<Neon, NR, WIDTH>(&k, &ivs, unit_len, count, src, dst) }
}
