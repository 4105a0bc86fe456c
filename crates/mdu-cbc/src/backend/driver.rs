//! CBC written once: many units' chains interleaved for encryption, the
//! blocks of a unit in parallel for decryption, with the tails of both,
//! over the vectors of one instruction set and width (`mdu_aes::__private::vector`).
//!
//! Every SIMD backend is this driver instantiated by two
//! `#[target_feature]` entry points (encrypt, decrypt) in its own file
//! (`x86/vaes512.rs`, `x86/vaes256.rs`, `x86/aesni.rs`, `aarch64/ce.rs`),
//! which build its [`Kernel`] (the round keys of the direction, loaded
//! or broadcast to the vector width) and call [`encrypt`] or [`decrypt`].
//! The primitives are `#[inline(always)]`, so the whole kernel is compiled
//! inside that entry point with its target features.
//!
//! # The contract every backend keeps
//!
//! * A request is `count` units of `unit_len` bytes, a non-zero multiple of
//!   16; unit `i` has an IV from [`Ivs`] (`first + i * step` mod 2^128, or
//!   entry `i` of a list). Units are independent CBC messages: block 0 is
//!   chained to the unit's IV, block `j` to block `j - 1`'s ciphertext.
//! * **Encryption interleaves units, not blocks.** Each block of a unit
//!   waits for the previous one (`C_j = E(P_j ^ C_{j-1})`), so one unit is
//!   one serial AES chain, bound by the AES latency. The driver runs `W`
//!   vectors of chains side by side, one unit per 128-bit lane: block `j` of
//!   `W * BLOCKS` units is gathered into `W` vectors (lane `k` of vector
//!   `i` is unit `i * BLOCKS + k`), encrypted round by round together, and
//!   scattered back, then block `j + 1`. `W * BLOCKS` chains cover the AES
//!   latency times its throughput: 8 on xmm, 16 on ymm and zmm. The units
//!   left over run as groups of `W/2, W/4, .., 1` vectors, then fewer than
//!   `BLOCKS` units as single-block chains side by side.
//! * **Units of a large power of two run in phases.** In lockstep, block
//!   `j` of 16 units of 4 KiB lies at one offset modulo 4 KiB, so every
//!   step asks one L1 set for 16 cache lines (32 out of place) and misses:
//!   AES-256 on zmm fell from 12.8 GB/s at 512-byte units to 4.2 GB/s at 4
//!   KiB. The vectors of such a group run in 2 or 4 phases instead, each a
//!   cache line behind the one before ([`phases`]), at the cost of a ramp
//!   of 4 blocks per phase per group: 12.6 GB/s at 4 KiB.
//! * **Decryption is parallel within a unit** (`P_j = D(C_j) ^ C_{j-1}`
//!   needs only ciphertext): a unit's blocks run `W` vectors at a time, then
//!   `W/2, .., 1` vectors, then single blocks, each vector XORed with the
//!   ciphertext one block back, which [`Register::shift_in`] builds in
//!   registers from the vector and the one before it (the IV before the
//!   first); the XOR is folded into the last round key.
//! * Every block of a group is loaded before the first is stored, and the
//!   ciphertext a later group chains to is kept in registers, so `src ==
//!   dst` (in place) is allowed; otherwise the two do not overlap.
//!
//! The result is byte-identical to the generic backend for every length,
//! IV source and count; `tests/conformance.rs` and the fuzz target hold
//! every backend to that.

use alloc::boxed::Box;

use mdu_aes::__private::vector::{Keys, Register, Vector};
use mdu_aes::__private::{Ivs, RoundKeys, Schedule, SimdKeys};

use super::CbcMode;

/// The round keys of every SIMD backend: one AES key's schedules of both
/// directions, `mdu_aes::__private::RoundKeys`.
impl SimdKeys for CbcMode {
    type RoundKeys = RoundKeys;

    unsafe fn expand(key: &[u8]) -> Box<RoundKeys> {
        let mut rk = RoundKeys::zeroed();
        // SAFETY: forwarded from the caller (the CPU has the AES
        // instructions).
        unsafe { rk.expand_into(key) };
        rk
    }

    fn simd_clone(keys: &RoundKeys) -> Box<RoundKeys> {
        keys.boxed_clone()
    }
}

/// The round keys of one direction in registers of width `V` (encryption
/// order for [`encrypt`], the equivalent inverse cipher's for
/// [`decrypt`]), also one block wide. Made only by the `#[target_feature]`
/// entry points, so it is the witness that their features are present.
pub(crate) struct Kernel<V: Vector> {
    rk: Keys<V>,
    rkb: Keys<V::Block>,
}

impl<V: Vector> Kernel<V> {
    /// The kernel of the schedule `s`.
    ///
    /// # Safety
    ///
    /// The CPU has the width's base features and its AES instructions.
    #[inline(always)]
    pub(crate) unsafe fn new(s: &Schedule) -> Kernel<V> {
        // SAFETY: forwarded from the caller.
        let rk = unsafe { Keys::<V>::new(s) };
        Kernel {
            rkb: rk.blocks(),
            rk,
        }
    }

    /// The IVs of units `start .. start + BLOCKS`, one per lane.
    #[inline(always)]
    fn ivs(&self, ivs: &Ivs<'_>, start: usize) -> V {
        self.rk
            .from_lanes(|k| V::lane_from_u128(ivs.get(start + k)))
    }
}

/// Encrypts `N * V::BLOCKS` units starting with unit `first` (of
/// `unit_len` bytes each), their chains side by side; vector `i` runs in
/// phase `i * phases / N`, [`LAG`] bytes behind the phase before (see
/// [`phases`]). While a phase has not started or has finished, its vectors
/// compute on, their states put back and nothing loaded or stored.
///
/// # Safety
///
/// `src` and `dst` are valid for the units `first .. first + N * BLOCKS`
/// of `unit_len` bytes (a non-zero multiple of 16) and are equal or
/// disjoint; `phases` divides `N`, and `unit_len >= LAG * phases` when
/// `phases > 1`.
#[inline(always)]
unsafe fn chains<V: Vector, const NR: usize, const N: usize>(
    k: &Kernel<V>,
    ivs: &Ivs<'_>,
    first: usize,
    unit_len: usize,
    src: *const u8,
    dst: *mut u8,
    phases: usize,
) {
    let group = V::BLOCKS * unit_len;
    let mut s = [k.ivs(ivs, first); N];
    for (i, s) in s.iter_mut().enumerate().skip(1) {
        *s = k.ivs(ivs, first + i * V::BLOCKS);
    }
    // SAFETY: unit `first + k` starts at `k * unit_len` past these, inside
    // the request for every `k < N * BLOCKS`.
    let (src, dst) = unsafe { (src.add(first * unit_len), dst.add(first * unit_len)) };
    if phases == 1 {
        // Lockstep: block `t / 16` of every unit.
        let mut t = 0;
        while t < unit_len {
            let mut x = s;
            for (i, x) in x.iter_mut().enumerate() {
                // SAFETY: block `t / 16` of units `i * BLOCKS + k`, `k <
                // BLOCKS`: offset `i * group + k * unit_len + t`, and `t + 16
                // <= unit_len`.
                *x = unsafe { V::gather(src.add(i * group + t), unit_len) };
            }
            s = k.rk.encrypt::<NR, N>(s, Some(&x), None);
            for (i, s) in s.iter().enumerate() {
                // SAFETY: as for the gathers; every block of this step was
                // loaded before the first store, so an in-place call reads
                // only input.
                unsafe { s.scatter(dst.add(i * group + t), unit_len) };
            }
            t += 16;
        }
        return;
    }
    // The byte offset vector `i` lags behind the first phase.
    let mut lags = [0usize; N];
    for (i, lag) in lags.iter_mut().enumerate() {
        *lag = LAG * (i * phases / N);
    }
    let ramp = LAG * (phases - 1);
    let mut t = 0;
    while t < unit_len + ramp {
        if t >= ramp && t < unit_len {
            // Every phase is inside its units: no checks, no states kept.
            let mut x = s;
            for (i, x) in x.iter_mut().enumerate() {
                // SAFETY: block `(t - lags[i]) / 16` of units `i * BLOCKS +
                // k`, `k < BLOCKS`: `lags[i] <= ramp <= t` and
                // `t - lags[i] + 16 <= unit_len`.
                *x = unsafe { V::gather(src.add(i * group + t - lags[i]), unit_len) };
            }
            s = k.rk.encrypt::<NR, N>(s, Some(&x), None);
            for (i, s) in s.iter().enumerate() {
                // SAFETY: as for the gathers; every block of this step was
                // loaded before the first store.
                unsafe { s.scatter(dst.add(i * group + t - lags[i]), unit_len) };
            }
            t += 16;
            continue;
        }
        // The ramps: a phase has not started or has ended.
        // Vector `i` is at byte `t - lags[i]` of its units, if inside them.
        let live = |i: usize| t >= lags[i] && t - lags[i] < unit_len;
        let kept = s;
        let mut x = s;
        for (i, x) in x.iter_mut().enumerate() {
            if live(i) {
                // SAFETY: block `(t - lags[i]) / 16` of units `i * BLOCKS +
                // k`, `k < BLOCKS`, inside them as `live` checked.
                *x = unsafe { V::gather(src.add(i * group + t - lags[i]), unit_len) };
            }
        }
        s = k.rk.encrypt::<NR, N>(s, Some(&x), None);
        for (i, s) in s.iter_mut().enumerate() {
            if live(i) {
                // SAFETY: as for the gathers; every block of this step was
                // loaded before the first store.
                unsafe { s.scatter(dst.add(i * group + t - lags[i]), unit_len) };
            } else {
                // A phase that has not started or has ended keeps its state.
                *s = kept[i];
            }
        }
        t += 16;
    }
}

/// How many phases the vectors of a group run in (1, 2 or 4), so that no
/// more than 4 lanes of one phase touch the same L1 set.
///
/// Block `j` of every unit lies at the same offset modulo 4 KiB when the
/// unit length is a multiple of a large power of two (every 4 KiB sector),
/// so 16 lanes in lockstep would ask one L1 set (8 to 12 ways) for 16 cache
/// lines at once, 32 out of place, and miss on nearly every block. Phase
/// `p` runs 4 blocks (one cache line) behind phase `p - 1`, which spreads
/// the lanes over `phases` sets.
#[inline(always)]
pub(crate) fn phases(unit_len: usize, lanes: usize, vectors: usize) -> usize {
    // How many different sets the lanes' lines spread over: 4096 / the
    // largest power of two (up to 4096) dividing the unit length.
    let sets = 4096usize >> (unit_len | 4096).trailing_zeros().min(12);
    let per_set = lanes / sets.max(1);
    let want = per_set.div_ceil(4).next_power_of_two().min(4);
    want.min(vectors).max(1)
}

/// The lag of each phase behind the one before, in bytes: one cache line.
const LAG: usize = 64;

/// Encrypts `N < BLOCKS` units starting with unit `first` as single-block
/// chains side by side.
///
/// # Safety
///
/// As for [`chains`], for the units `first .. first + N`.
#[inline(always)]
unsafe fn single_chains<V: Vector, const NR: usize, const N: usize>(
    k: &Kernel<V>,
    ivs: &Ivs<'_>,
    first: usize,
    unit_len: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let mut s = [V::lane_from_u128(ivs.get(first)); N];
    for (i, s) in s.iter_mut().enumerate().skip(1) {
        *s = V::lane_from_u128(ivs.get(first + i));
    }
    // SAFETY: unit `first` lies inside the request.
    let (src, dst) = unsafe { (src.add(first * unit_len), dst.add(first * unit_len)) };
    let mut off = 0;
    while off < unit_len {
        let mut x = s;
        for (i, x) in x.iter_mut().enumerate() {
            // SAFETY: block `off / 16` of unit `first + i < first + N`.
            *x = unsafe { V::Block::load(src.add(i * unit_len + off)) };
        }
        s = k.rkb.encrypt::<NR, N>(s, Some(&x), None);
        for (i, s) in s.iter().enumerate() {
            // SAFETY: as for the loads, all done before the first store.
            unsafe { s.store(dst.add(i * unit_len + off)) };
        }
        off += 16;
    }
}

/// CBC-encrypts `count` data units of `unit_len` bytes from `src` to
/// `dst`; unit `i` uses IV `i` of `ivs`. `W` vectors of chains (`W *
/// BLOCKS` units) run side by side.
///
/// # Safety
///
/// `src` and `dst` are valid for `count * unit_len` bytes and are equal or
/// disjoint; `unit_len` is a non-zero multiple of 16; `NR` (10 or 14)
/// matches the round keys `k` holds (encryption order); an [`Ivs::List`]
/// holds `count` IVs.
#[inline(always)]
pub(crate) unsafe fn encrypt<V: Vector, const NR: usize, const W: usize>(
    k: &Kernel<V>,
    ivs: &Ivs<'_>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let mut done = 0;
    macro_rules! group {
        ($n:expr) => {
            let p = phases(unit_len, $n * V::BLOCKS, $n);
            // SAFETY: units `done .. done + $n * BLOCKS` lie inside the
            // request; `p` is a power of two up to `$n` (so it divides `$n`)
            // and more than 1 only for units of 1 KiB or more.
            unsafe { chains::<V, NR, { $n }>(k, ivs, done, unit_len, src, dst, p) }
        };
    }
    while count - done >= W * V::BLOCKS {
        group!(W);
        done += W * V::BLOCKS;
    }
    // Fewer than W vectors of units left: groups of W/2, .., 1 vectors as
    // the bits of the count say, then single-block chains.
    macro_rules! tail {
        ($n:literal) => {
            if $n < W && count - done >= $n * V::BLOCKS {
                group!($n);
                done += $n * V::BLOCKS;
            }
        };
    }
    tail!(8);
    tail!(4);
    tail!(2);
    tail!(1);
    debug_assert!(count - done < V::BLOCKS);
    // SAFETY: the last `count - done` units of the request.
    unsafe {
        match count - done {
            0 => {}
            1 => single_chains::<V, NR, 1>(k, ivs, done, unit_len, src, dst),
            2 => single_chains::<V, NR, 2>(k, ivs, done, unit_len, src, dst),
            _ => single_chains::<V, NR, 3>(k, ivs, done, unit_len, src, dst),
        }
    }
}

/// Decrypts `N` vectors of one unit's consecutive blocks at `src`, chained
/// to the last block of `carry`, which becomes their last vector.
///
/// # Safety
///
/// `src` and `dst` are valid for `16 * BLOCKS * N` bytes and are equal or
/// disjoint.
#[inline(always)]
unsafe fn group<V: Vector, const NR: usize, const N: usize>(
    k: &Kernel<V>,
    carry: &mut V,
    src: *const u8,
    dst: *mut u8,
) {
    let step = 16 * V::BLOCKS;
    let mut c = [*carry; N];
    for (i, c) in c.iter_mut().enumerate() {
        // SAFETY: vector `i < N` lies in the `16 * BLOCKS * N` source bytes.
        *c = unsafe { V::load(src.add(step * i)) };
    }
    let mut p = c;
    p[0] = V::shift_in(*carry, c[0]);
    for i in 1..N {
        p[i] = V::shift_in(c[i - 1], c[i]);
    }
    let out = k.rk.decrypt::<NR, N>(c, None, Some(&p));
    for (i, v) in out.iter().enumerate() {
        // SAFETY: as for the loads; every vector was loaded before the
        // first store, so an in-place call reads only input.
        unsafe { v.store(dst.add(step * i)) };
    }
    *carry = c[N - 1];
}

/// Decrypts one unit of `len` bytes (a non-zero multiple of 16) whose IV is
/// the last block of `carry`.
///
/// # Safety
///
/// `src` and `dst` are valid for `len` bytes and are equal or disjoint.
#[inline(always)]
unsafe fn unit<V: Vector, const NR: usize, const W: usize>(
    k: &Kernel<V>,
    mut carry: V,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let per_vector = 16 * V::BLOCKS;
    let mut off = 0;
    while len - off >= W * per_vector {
        // SAFETY: `off + W * per_vector <= len`.
        unsafe { group::<V, NR, W>(k, &mut carry, src.add(off), dst.add(off)) };
        off += W * per_vector;
    }
    let mut vectors = (len - off) / per_vector;
    macro_rules! tail {
        ($n:literal) => {
            if $n < W && vectors & $n != 0 {
                // SAFETY: `off + $n * per_vector <= len`.
                unsafe { group::<V, NR, $n>(k, &mut carry, src.add(off), dst.add(off)) };
                off += $n * per_vector;
                vectors -= $n;
            }
        };
    }
    tail!(8);
    tail!(4);
    tail!(2);
    tail!(1);
    debug_assert_eq!(vectors, 0);
    // Fewer than BLOCKS blocks left: one at a time (they are independent,
    // so they still overlap in the pipeline).
    let mut prev = carry.lane(V::BLOCKS - 1);
    while off < len {
        // SAFETY: `off + 16 <= len`; the block is loaded before the
        // destination block at the same offset is written.
        unsafe {
            let c = V::Block::load(src.add(off));
            k.rkb.decrypt::<NR, 1>([c], None, Some(&[prev]))[0].store(dst.add(off));
            prev = c;
        }
        off += 16;
    }
}

/// CBC-decrypts `count` data units of `unit_len` bytes from `src` to
/// `dst`; unit `i` uses IV `i` of `ivs`. `W` vectors are in flight.
///
/// # Safety
///
/// `src` and `dst` are valid for `count * unit_len` bytes and are equal or
/// disjoint; `unit_len` is a non-zero multiple of 16; `NR` (10 or 14)
/// matches the round keys `k` holds (the equivalent inverse cipher's); an
/// [`Ivs::List`] holds `count` IVs.
#[inline(always)]
pub(crate) unsafe fn decrypt<V: Vector, const NR: usize, const W: usize>(
    k: &Kernel<V>,
    ivs: &Ivs<'_>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    for i in 0..count {
        let at = i * unit_len;
        let carry = k.rk.splat(V::lane_from_u128(ivs.get(i)));
        // SAFETY: unit `i < count` lies inside the request.
        unsafe { unit::<V, NR, W>(k, carry, src.add(at), dst.add(at), unit_len) };
    }
}

/// The two `#[target_feature]` entry points of one width, `encrypt` and
/// `decrypt`, each taking the witness of the backend's needs `$needs`:
/// each builds the width's [`Kernel`] from the schedule of its direction
/// and runs the driver with `$w` vectors in flight. The IVs come as plain
/// arguments, in registers (see `Ivs::parts`).
macro_rules! entry_points {
    ($v:ty, $w:literal, $needs:ident) => {
        $crate::backend::needs::target_features!($needs =>
            /// CBC-encrypts `count` data units of `unit_len` bytes from `src` to
            /// `dst`; unit `i` uses IV `i` of `Ivs::from_parts(first, step,
            /// list)`.
            ///
            /// # Safety
            ///
            /// `src` and `dst` are valid for `count * unit_len` bytes and are
            /// equal or disjoint; `unit_len` is a non-zero multiple of 16; `NR`
            /// is 10 or 14 and matches the schedules in `keys`; a `list` holds
            /// `count` IVs. (The CPU features are the witness's: its type is
            /// the backend's declared needs.)
            #[allow(clippy::too_many_arguments)]
            pub(crate) unsafe fn encrypt<const NR: usize>(
                _: mdu_platform::cpu::Witness<$crate::backend::needs::$needs>,
                keys: &mdu_aes::__private::RoundKeys,
                first: u128,
                step: u64,
                list: Option<&[mdu_core::Iv]>,
                unit_len: usize,
                count: usize,
                src: *const u8,
                dst: *mut u8,
            ) {
                use $crate::backend::driver::{Kernel, encrypt};
                // SAFETY: this function runs with the width's features.
                let k = unsafe { Kernel::<$v>::new(&keys.enc) };
                let ivs = mdu_aes::__private::Ivs::from_parts(first, step, list);
                // SAFETY: forwarded from the caller; `k` holds the encryption
                // schedule.
                unsafe { encrypt::<$v, NR, $w>(&k, &ivs, unit_len, count, src, dst) }
            }

            /// CBC-decrypts `count` data units; see [`encrypt`].
            ///
            /// # Safety
            ///
            /// As for [`encrypt`].
            #[allow(clippy::too_many_arguments)]
            pub(crate) unsafe fn decrypt<const NR: usize>(
                _: mdu_platform::cpu::Witness<$crate::backend::needs::$needs>,
                keys: &mdu_aes::__private::RoundKeys,
                first: u128,
                step: u64,
                list: Option<&[mdu_core::Iv]>,
                unit_len: usize,
                count: usize,
                src: *const u8,
                dst: *mut u8,
            ) {
                use $crate::backend::driver::{Kernel, decrypt};
                // SAFETY: this function runs with the width's features.
                let k = unsafe { Kernel::<$v>::new(&keys.dec) };
                let ivs = mdu_aes::__private::Ivs::from_parts(first, step, list);
                // SAFETY: forwarded from the caller; `k` holds the decryption
                // schedule.
                unsafe { decrypt::<$v, NR, $w>(&k, &ivs, unit_len, count, src, dst) }
            }
        );

        /// The entry point of direction `ENC`, with the request's fields as
        /// its arguments: what the crate's `mdu_aes::__private::Kernels` impl calls.
        ///
        /// # Safety
        ///
        /// As for [`encrypt`], for the fields of `r`.
        #[inline]
        pub(crate) unsafe fn crypt<const NR: usize, const ENC: bool>(
            w: mdu_platform::cpu::Witness<$crate::backend::needs::$needs>,
            keys: &mdu_aes::__private::RoundKeys,
            r: mdu_aes::__private::Request<'_>,
        ) {
            let mdu_aes::__private::Request {
                first,
                step,
                list,
                unit,
                count,
                src,
                dst,
            } = r;
            // SAFETY: forwarded from the caller.
            unsafe {
                if ENC {
                    encrypt::<NR>(w, keys, first, step, list, unit, count, src, dst)
                } else {
                    decrypt::<NR>(w, keys, first, step, list, unit, count, src, dst)
                }
            }
        }
    };
}
pub(crate) use entry_points;
