//! XTS written once: the batching of first tweaks across units, the
//! software pipeline, the main loop, the tails and ciphertext stealing, over
//! the primitives of one instruction set and vector width ([`Lanes`]).
//!
//! Every SIMD backend is this driver instantiated by one `#[target_feature]`
//! entry point in its own file (`x86/vaes512.rs`, `x86/vaes256.rs`,
//! `x86/aesni.rs`, `aarch64/ce.rs`), which builds its [`Lanes`] value (the
//! round keys, pre-broadcast to the vector width) and calls [`crypt`]. The
//! primitives are `#[inline(always)]`, so the whole kernel is compiled
//! inside that entry point with its target features.
//!
//! # The contract every backend keeps
//!
//! * A request is `count` units of `unit_len >= 16` bytes; unit `i` has an
//!   IV from [`Ivs`] (`first_iv + i * step` mod 2^128, or entry `i` of a
//!   list) and the first tweak `E_K2(iv)`.
//! * A unit's blocks run `W` vectors (`W * L::BLOCKS` blocks) at a time
//!   under consecutive tweaks; what is left runs as groups of `W/2, W/4,
//!   .., 1` vectors, then single blocks; a ragged end (`len % 16 != 0`) is
//!   finished by ciphertext stealing on single blocks. Decryption of a
//!   ragged unit keeps its last full block back for the stealing.
//! * Every block of a group is loaded before the first is stored, and
//!   stealing reads each source byte before it writes the destination byte
//!   at the same offset, so `src == dst` (in place) is allowed; otherwise
//!   the two do not overlap.
//! * The first tweaks of `U` upcoming units are encrypted together (`U`
//!   independent AES chains instead of one latency-bound chain per unit),
//!   the next batch's while the current batch runs, and each unit's tweak
//!   vectors are set up before the previous unit's blocks, so no unit
//!   waits on AES or multiply latency for its tweaks. A one-unit request
//!   encrypts just its one tweak.
//!
//! The result is byte-identical to the generic backend for every length,
//! IV, step and count; `tests/conformance.rs` and the fuzz targets hold
//! every backend to that.

use mdu_aes::Ivs;

use super::simd::bulk_blocks;

/// The primitives of one instruction set at one vector width.
///
/// A value of an implementing type holds expanded round keys and exists only
/// inside the `#[target_feature]` entry point that made it (making one is
/// `unsafe`, with the CPU features as its condition), so its methods may use
/// those features: they are the "witness" that the CPU has them.
pub(crate) trait Lanes {
    /// A vector of [`Lanes::BLOCKS`] AES blocks.
    type V: Copy;
    /// One AES block (one 128-bit register).
    type B: Copy;
    /// Blocks per vector.
    const BLOCKS: usize;

    /// Loads one vector (unaligned).
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
    /// XTS on `N` vectors: `s[i]` under the tweak vector `tw[i]`, the `N`
    /// AES chains interleaved round by round.
    fn xts<const NR: usize, const ENC: bool, const N: usize>(
        &self,
        s: [Self::V; N],
        tw: &[Self::V; N],
    ) -> [Self::V; N];
    /// The tweaks of a unit's first `W * BLOCKS` blocks, from its first
    /// tweak: `t, t*x, t*x^2, ..`, vector by vector.
    fn setup<const W: usize>(&self, t: Self::B) -> [Self::V; W];
    /// Moves every tweak of `tw` on by `W * BLOCKS` blocks (times
    /// `x^(W * BLOCKS)`).
    fn advance<const W: usize>(&self, tw: &mut [Self::V; W]);
    /// Block `i < BLOCKS` of a vector.
    fn lane(&self, v: Self::V, i: usize) -> Self::B;

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
    /// XTS on one block: `E_K1(b ^ t) ^ t` (or `D_K1`).
    fn xts1<const NR: usize, const ENC: bool>(&self, b: Self::B, t: Self::B) -> Self::B;
    /// `t * x` in GF(2^128).
    fn mul_x(&self, t: Self::B) -> Self::B;
    /// `E_K2(iv)` for one IV.
    fn first_tweak<const NR: usize>(&self, iv: u128) -> Self::B;
    /// `E_K2(iv)` for `U` IVs, as independent chains.
    fn first_tweaks<const NR: usize, const U: usize>(&self, ivs: &[u128; U]) -> [Self::B; U];
}

/// `N` vectors of `src` to `dst` under the tweak vectors `tw[..N]`.
///
/// # Safety
///
/// `src` and `dst` are valid for `16 * BLOCKS * N` bytes and are equal or
/// disjoint; `N <= W`.
#[inline(always)]
unsafe fn group<L: Lanes, const NR: usize, const ENC: bool, const W: usize, const N: usize>(
    l: &L,
    tw: &[L::V; W],
    src: *const u8,
    dst: *mut u8,
) {
    let step = 16 * L::BLOCKS;
    let mut s = [tw[0]; N];
    for (i, s) in s.iter_mut().enumerate() {
        // SAFETY: vector `i < N` lies in the `16 * BLOCKS * N` source bytes.
        *s = unsafe { L::load(src.add(step * i)) };
    }
    let t: &[L::V; N] = tw.first_chunk::<N>().expect("a group is at most W vectors");
    let out = l.xts::<NR, ENC, N>(s, t);
    for (i, v) in out.iter().enumerate() {
        // SAFETY: as for the loads; every vector was loaded before the first
        // store, so an in-place call reads only input.
        unsafe { L::store(dst.add(step * i), *v) };
    }
}

/// One data unit of `len >= 16` bytes whose first `W * BLOCKS` tweaks are
/// `tw` (see [`Lanes::setup`]).
///
/// # Safety
///
/// `src` and `dst` are valid for `len` bytes and are equal or disjoint.
#[inline(always)]
unsafe fn unit<L: Lanes, const NR: usize, const ENC: bool, const W: usize>(
    l: &L,
    mut tw: [L::V; W],
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let per_vector = 16 * L::BLOCKS;
    let bulk = 16 * bulk_blocks::<ENC>(len);
    let mut off = 0;
    while bulk - off >= W * per_vector {
        // SAFETY: `off + W * per_vector <= bulk <= len`.
        unsafe { group::<L, NR, ENC, W, W>(l, &tw, src.add(off), dst.add(off)) };
        off += W * per_vector;
        if off == len {
            // Done: skip advancing tweaks nobody would use.
            return;
        }
        l.advance(&mut tw);
    }
    // Fewer than W vectors left: groups of W/2, .., 1 vectors as the bits
    // of the count say; the tweak vectors of a group done move out of the
    // front.
    let mut vectors = (bulk - off) / per_vector;
    macro_rules! tail {
        ($n:literal) => {
            if $n < W && vectors & $n != 0 {
                // SAFETY: `off + $n * per_vector <= bulk <= len`.
                unsafe { group::<L, NR, ENC, W, $n>(l, &tw, src.add(off), dst.add(off)) };
                tw.rotate_left($n);
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
    // Fewer than BLOCKS blocks left: one at a time, under the lanes of the
    // next tweak vector.
    let mut lane = 0;
    while off < bulk {
        // SAFETY: `off + 16 <= bulk <= len`.
        unsafe {
            let b = L::load1(src.add(off));
            L::store1(dst.add(off), l.xts1::<NR, ENC>(b, l.lane(tw[0], lane)));
        }
        lane += 1;
        off += 16;
    }
    if !len.is_multiple_of(16) {
        // SAFETY: `off` is the end of the bulk blocks of a `len`-byte unit
        // and the lane is the tweak of the block after them.
        unsafe { steal::<L, NR, ENC>(l, l.lane(tw[0], lane), src, dst, off, len % 16) };
    }
}

/// Ciphertext stealing at the ragged end of a unit: `off` bytes are done,
/// `r = len % 16` (1..=15) remain after them (encryption) or after the full
/// block held back at `off` (decryption), and `t` is the tweak of the block
/// at `off`.
///
/// # Safety
///
/// `src` and `dst` are valid for the unit's length (`off + r` bytes when
/// encrypting, with `off >= 16`; `off + 16 + r` when decrypting) and are
/// equal or disjoint.
#[inline(always)]
unsafe fn steal<L: Lanes, const NR: usize, const ENC: bool>(
    l: &L,
    t: L::B,
    src: *const u8,
    dst: *mut u8,
    off: usize,
    r: usize,
) {
    let mut pp = [0u8; 16];
    let mut cc = [0u8; 16];
    // SAFETY: the offsets stay inside the unit as the caller guarantees;
    // every source byte is read before the destination byte at the same
    // offset is written, so an in-place call reads only input.
    unsafe {
        if ENC {
            // CC = the last full block, already encrypted under its tweak;
            // its first r bytes become the partial last block, and the
            // partial plaintext padded with CC's tail is encrypted under t.
            core::ptr::copy_nonoverlapping(src.add(off), pp.as_mut_ptr(), r);
            core::ptr::copy_nonoverlapping(dst.add(off - 16), cc.as_mut_ptr(), 16);
            core::ptr::copy_nonoverlapping(cc.as_ptr(), dst.add(off), r);
            pp[r..].copy_from_slice(&cc[r..]);
            let out = l.xts1::<NR, true>(L::load1(pp.as_ptr()), t);
            L::store1(dst.add(off - 16), out);
        } else {
            // The held-back block decrypts under the next tweak (t * x); its
            // first r bytes are the partial plaintext, and the partial
            // ciphertext padded with its tail decrypts under t.
            let c = L::load1(src.add(off));
            L::store1(pp.as_mut_ptr(), l.xts1::<NR, false>(c, l.mul_x(t)));
            core::ptr::copy_nonoverlapping(src.add(off + 16), cc.as_mut_ptr(), r);
            core::ptr::copy_nonoverlapping(pp.as_ptr(), dst.add(off + 16), r);
            cc[r..].copy_from_slice(&pp[r..]);
            let out = l.xts1::<NR, false>(L::load1(cc.as_ptr()), t);
            L::store1(dst.add(off), out);
        }
    }
}

/// Encrypts (`ENC`) or decrypts `count` data units of `unit_len` bytes from
/// `src` to `dst`; unit `i` uses IV `i` of `ivs`. `W` vectors are in flight
/// in the main loop, `U` units' first tweaks are encrypted together.
///
/// # Safety
///
/// `src` and `dst` are valid for `count * unit_len` bytes and are equal or
/// disjoint; `unit_len >= 16`; `NR` (10 or 14) matches the round keys `l`
/// holds; an [`Ivs::List`] holds `count` IVs.
#[inline(always)]
pub(crate) unsafe fn crypt<
    L: Lanes,
    const NR: usize,
    const ENC: bool,
    const W: usize,
    const U: usize,
>(
    l: &L,
    ivs: &Ivs<'_>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    if count == 1 {
        // One message: one AES chain for its tweak, no batch.
        let tw = l.setup::<W>(l.first_tweak::<NR>(ivs.get(0)));
        // SAFETY: the request is exactly this one unit.
        unsafe { unit::<L, NR, ENC, W>(l, tw, src, dst, unit_len) };
        return;
    }
    let first = |start: usize| l.first_tweaks::<NR, U>(&ivs.batch::<U>(start));
    let mut tweaks = first(0);
    let mut done = 0;
    while done < count {
        let n = U.min(count - done);
        let batch = tweaks;
        if count - done > U {
            tweaks = first(done + U);
        }
        let mut next = l.setup::<W>(batch[0]);
        for j in 0..n {
            let tw = next;
            if j + 1 < n {
                next = l.setup::<W>(batch[j + 1]);
            }
            let at = (done + j) * unit_len;
            // SAFETY: unit `done + j < count` lies inside the request.
            unsafe { unit::<L, NR, ENC, W>(l, tw, src.add(at), dst.add(at), unit_len) };
        }
        done += n;
    }
}
