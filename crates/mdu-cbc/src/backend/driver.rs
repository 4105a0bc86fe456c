//! CBC written once: many units' chains interleaved for encryption, the
//! blocks of a unit in parallel for decryption, with the tails of both,
//! over the primitives of one instruction set and vector width ([`Lanes`]).
//!
//! Every SIMD backend is this driver instantiated by two
//! `#[target_feature]` entry points (encrypt, decrypt) in its own file
//! (`x86/vaes512.rs`, `x86/vaes256.rs`, `x86/aesni.rs`, `aarch64/ce.rs`),
//! which build its [`Lanes`] value (the round keys of the direction, loaded
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
//!   `W * L::BLOCKS` units is gathered into `W` vectors (lane `k` of vector
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
//!   ciphertext one block back, which [`Lanes::shift_in`] builds in
//!   registers from the vector and the one before it (the IV before the
//!   first); the XOR is folded into the last round key.
//! * Every block of a group is loaded before the first is stored, and the
//!   ciphertext a later group chains to is kept in registers, so `src ==
//!   dst` (in place) is allowed; otherwise the two do not overlap.
//!
//! The result is byte-identical to the generic backend for every length,
//! IV source and count; `tests/conformance.rs` and the fuzz target hold
//! every backend to that.

use mdu_aes::Ivs;

/// The primitives of one instruction set at one vector width.
///
/// A value of an implementing type holds the round keys of one direction
/// (encryption order for [`Lanes::chain`], the equivalent inverse cipher's
/// for [`Lanes::unchain`]) and exists only inside the `#[target_feature]`
/// entry point that made it, so its methods may use those features: it is
/// the "witness" that the CPU has them.
pub(crate) trait Lanes {
    /// A vector of [`Lanes::BLOCKS`] AES blocks.
    type V: Copy;
    /// One AES block (one 128-bit register).
    type B: Copy;
    /// Blocks per vector.
    const BLOCKS: usize;

    /// The IVs of units `start .. start + BLOCKS`, one per lane.
    fn ivs(&self, ivs: &Ivs<'_>, start: usize) -> Self::V;
    /// Block `j` of `BLOCKS` units, lane `k` from `src + k * stride`.
    ///
    /// # Safety
    ///
    /// `src + k * stride` is valid for 16 bytes for every lane `k`.
    unsafe fn gather(src: *const u8, stride: usize) -> Self::V;
    /// The inverse of [`gather`](Lanes::gather).
    ///
    /// # Safety
    ///
    /// `dst + k * stride` is valid for 16 writable bytes for every lane `k`.
    unsafe fn scatter(dst: *mut u8, stride: usize, v: Self::V);
    /// One CBC encryption step of `N` vectors of chains:
    /// `s[i] = E(x[i] ^ s[i])`, the chains interleaved round by round.
    fn chain<const NR: usize, const N: usize>(&self, s: &mut [Self::V; N], x: &[Self::V; N]);

    /// Loads one vector of consecutive blocks (unaligned).
    ///
    /// # Safety
    ///
    /// `src` is valid for `16 * BLOCKS` bytes.
    unsafe fn load(src: *const u8) -> Self::V;
    /// Stores one vector (unaligned).
    ///
    /// # Safety
    ///
    /// `dst` is valid for `16 * BLOCKS` writable bytes.
    unsafe fn store(dst: *mut u8, v: Self::V);
    /// The blocks one position back from those of `v`: the last block of
    /// `carry`, then every block of `v` but its last.
    fn shift_in(&self, carry: Self::V, v: Self::V) -> Self::V;
    /// CBC decryption of `N` vectors: `D(c[i]) ^ p[i]`.
    fn unchain<const NR: usize, const N: usize>(
        &self,
        c: &[Self::V; N],
        p: &[Self::V; N],
    ) -> [Self::V; N];
    /// A vector whose last block is the IV `iv` (what a unit's first
    /// vector is shifted against).
    fn carry_iv(&self, iv: u128) -> Self::V;
    /// The last block of a vector.
    fn last(&self, v: Self::V) -> Self::B;

    /// An IV as one block.
    fn iv1(&self, iv: u128) -> Self::B;
    /// Loads one block.
    ///
    /// # Safety
    ///
    /// `src` is valid for 16 bytes.
    unsafe fn load1(src: *const u8) -> Self::B;
    /// Stores one block.
    ///
    /// # Safety
    ///
    /// `dst` is valid for 16 writable bytes.
    unsafe fn store1(dst: *mut u8, b: Self::B);
    /// One CBC encryption step of `N` single-block chains.
    fn chain1<const NR: usize, const N: usize>(&self, s: &mut [Self::B; N], x: &[Self::B; N]);
    /// CBC decryption of one block: `D(c) ^ p`.
    fn unchain1<const NR: usize>(&self, c: Self::B, p: Self::B) -> Self::B;
}

/// Encrypts `N * L::BLOCKS` units starting with unit `first` (of
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
unsafe fn chains<L: Lanes, const NR: usize, const N: usize>(
    l: &L,
    ivs: &Ivs<'_>,
    first: usize,
    unit_len: usize,
    src: *const u8,
    dst: *mut u8,
    phases: usize,
) {
    let group = L::BLOCKS * unit_len;
    let mut s = [l.ivs(ivs, first); N];
    for (i, s) in s.iter_mut().enumerate().skip(1) {
        *s = l.ivs(ivs, first + i * L::BLOCKS);
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
                *x = unsafe { L::gather(src.add(i * group + t), unit_len) };
            }
            l.chain::<NR, N>(&mut s, &x);
            for (i, s) in s.iter().enumerate() {
                // SAFETY: as for the gathers; every block of this step was
                // loaded before the first store, so an in-place call reads
                // only input.
                unsafe { L::scatter(dst.add(i * group + t), unit_len, *s) };
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
                *x = unsafe { L::gather(src.add(i * group + t - lags[i]), unit_len) };
            }
            l.chain::<NR, N>(&mut s, &x);
            for (i, s) in s.iter().enumerate() {
                // SAFETY: as for the gathers; every block of this step was
                // loaded before the first store.
                unsafe { L::scatter(dst.add(i * group + t - lags[i]), unit_len, *s) };
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
                *x = unsafe { L::gather(src.add(i * group + t - lags[i]), unit_len) };
            }
        }
        l.chain::<NR, N>(&mut s, &x);
        for (i, s) in s.iter_mut().enumerate() {
            if live(i) {
                // SAFETY: as for the gathers; every block of this step was
                // loaded before the first store.
                unsafe { L::scatter(dst.add(i * group + t - lags[i]), unit_len, *s) };
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
unsafe fn single_chains<L: Lanes, const NR: usize, const N: usize>(
    l: &L,
    ivs: &Ivs<'_>,
    first: usize,
    unit_len: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let mut s = [l.iv1(ivs.get(first)); N];
    for (i, s) in s.iter_mut().enumerate().skip(1) {
        *s = l.iv1(ivs.get(first + i));
    }
    // SAFETY: unit `first` lies inside the request.
    let (src, dst) = unsafe { (src.add(first * unit_len), dst.add(first * unit_len)) };
    let mut off = 0;
    while off < unit_len {
        let mut x = s;
        for (i, x) in x.iter_mut().enumerate() {
            // SAFETY: block `off / 16` of unit `first + i < first + N`.
            *x = unsafe { L::load1(src.add(i * unit_len + off)) };
        }
        l.chain1::<NR, N>(&mut s, &x);
        for (i, s) in s.iter().enumerate() {
            // SAFETY: as for the loads, all done before the first store.
            unsafe { L::store1(dst.add(i * unit_len + off), *s) };
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
/// matches the round keys `l` holds (encryption order); an [`Ivs::List`]
/// holds `count` IVs.
#[inline(always)]
pub(crate) unsafe fn encrypt<L: Lanes, const NR: usize, const W: usize>(
    l: &L,
    ivs: &Ivs<'_>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let mut done = 0;
    macro_rules! group {
        ($n:expr) => {
            let p = phases(unit_len, $n * L::BLOCKS, $n);
            // SAFETY: units `done .. done + $n * BLOCKS` lie inside the
            // request; `p` is a power of two up to `$n` (so it divides `$n`)
            // and more than 1 only for units of 1 KiB or more.
            unsafe { chains::<L, NR, { $n }>(l, ivs, done, unit_len, src, dst, p) }
        };
    }
    while count - done >= W * L::BLOCKS {
        group!(W);
        done += W * L::BLOCKS;
    }
    // Fewer than W vectors of units left: groups of W/2, .., 1 vectors as
    // the bits of the count say, then single-block chains.
    macro_rules! tail {
        ($n:literal) => {
            if $n < W && count - done >= $n * L::BLOCKS {
                group!($n);
                done += $n * L::BLOCKS;
            }
        };
    }
    tail!(8);
    tail!(4);
    tail!(2);
    tail!(1);
    debug_assert!(count - done < L::BLOCKS);
    // SAFETY: the last `count - done` units of the request.
    unsafe {
        match count - done {
            0 => {}
            1 => single_chains::<L, NR, 1>(l, ivs, done, unit_len, src, dst),
            2 => single_chains::<L, NR, 2>(l, ivs, done, unit_len, src, dst),
            _ => single_chains::<L, NR, 3>(l, ivs, done, unit_len, src, dst),
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
unsafe fn group<L: Lanes, const NR: usize, const N: usize>(
    l: &L,
    carry: &mut L::V,
    src: *const u8,
    dst: *mut u8,
) {
    let step = 16 * L::BLOCKS;
    let mut c = [*carry; N];
    for (i, c) in c.iter_mut().enumerate() {
        // SAFETY: vector `i < N` lies in the `16 * BLOCKS * N` source bytes.
        *c = unsafe { L::load(src.add(step * i)) };
    }
    let mut p = c;
    p[0] = l.shift_in(*carry, c[0]);
    for i in 1..N {
        p[i] = l.shift_in(c[i - 1], c[i]);
    }
    let out = l.unchain::<NR, N>(&c, &p);
    for (i, v) in out.iter().enumerate() {
        // SAFETY: as for the loads; every vector was loaded before the
        // first store, so an in-place call reads only input.
        unsafe { L::store(dst.add(step * i), *v) };
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
unsafe fn unit<L: Lanes, const NR: usize, const W: usize>(
    l: &L,
    mut carry: L::V,
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let per_vector = 16 * L::BLOCKS;
    let mut off = 0;
    while len - off >= W * per_vector {
        // SAFETY: `off + W * per_vector <= len`.
        unsafe { group::<L, NR, W>(l, &mut carry, src.add(off), dst.add(off)) };
        off += W * per_vector;
    }
    let mut vectors = (len - off) / per_vector;
    macro_rules! tail {
        ($n:literal) => {
            if $n < W && vectors & $n != 0 {
                // SAFETY: `off + $n * per_vector <= len`.
                unsafe { group::<L, NR, $n>(l, &mut carry, src.add(off), dst.add(off)) };
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
    let mut prev = l.last(carry);
    while off < len {
        // SAFETY: `off + 16 <= len`; the block is loaded before the
        // destination block at the same offset is written.
        unsafe {
            let c = L::load1(src.add(off));
            L::store1(dst.add(off), l.unchain1::<NR>(c, prev));
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
/// matches the round keys `l` holds (the equivalent inverse cipher's); an
/// [`Ivs::List`] holds `count` IVs.
#[inline(always)]
pub(crate) unsafe fn decrypt<L: Lanes, const NR: usize, const W: usize>(
    l: &L,
    ivs: &Ivs<'_>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    for i in 0..count {
        let at = i * unit_len;
        let carry = l.carry_iv(ivs.get(i));
        // SAFETY: unit `i < count` lies inside the request.
        unsafe { unit::<L, NR, W>(l, carry, src.add(at), dst.add(at), unit_len) };
    }
}
