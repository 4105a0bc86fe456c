//! XTS written once: the batching of first tweaks across units, the
//! software pipeline, the main loop, the tails and ciphertext stealing, over
//! the vectors of one instruction set and width (`mdu_aes::__private::vector`) and
//! the tweak steps of that width ([`Tweaks`]).
//!
//! Every SIMD backend is this driver instantiated by one `#[target_feature]`
//! entry point, written by [`entry_point!`] in its own file
//! (`x86/vaes512.rs`, `x86/vaes256.rs`, `x86/aesni.rs`, `aarch64/ce.rs`),
//! which builds its [`Kernel`] (the round keys, pre-broadcast to the vector
//! width) and calls [`crypt`]. The
//! primitives are `#[inline(always)]`, so the whole kernel is compiled
//! inside that entry point with its target features.
//!
//! # The contract every backend keeps
//!
//! * A request is `count` units of `unit_len >= 16` bytes; unit `i` has an
//!   IV from [`Ivs`] (`first_iv + i * step` mod 2^128, or entry `i` of a
//!   list) and the first tweak `E_K2(iv)`.
//! * A unit's blocks run `W` vectors (`W * V::BLOCKS` blocks) at a time
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

use mdu_aes::__private::Ivs;
use mdu_aes::__private::vector::{Keys, Register, Vector};

use super::round_keys::{RoundKeys, bulk_blocks};

/// The XTS tweak steps of one vector width: the only part of the kernel
/// written per width (in `x86/*.rs` and `aarch64/ce.rs`); everything else
/// is this driver over [`Vector`].
pub(crate) trait Tweaks: Vector {
    /// Whether units of whole `W`-vector groups take a path with the tails
    /// compiled out, where the tweak vectors can live in registers. Only
    /// worth it where the register file holds `W` states, `W` tweak
    /// vectors and a round key at once; each width says, from measurement.
    const WHOLE_GROUPS: bool;
    /// The tweaks of a unit's first `W * BLOCKS` blocks, from its first
    /// tweak: `t, t*x, t*x^2, ..`, vector by vector.
    ///
    /// # Safety
    ///
    /// The CPU has the features of this width's XTS entry point (the
    /// carry-less multiply among them); a [`Kernel`] proves it.
    unsafe fn setup<const W: usize>(t: Self::Block) -> [Self; W];
    /// Moves a tweak vector on by `W * BLOCKS` blocks (times `x^(W *
    /// BLOCKS)`).
    ///
    /// # Safety
    ///
    /// As for [`Tweaks::setup`].
    unsafe fn advance<const W: usize>(t: Self) -> Self;
    /// `t * x` in GF(2^128) (baseline instructions only).
    fn mul_x(t: Self::Block) -> Self::Block;
}

/// The expanded keys of one request in registers of width `V`: K1 in the
/// order of the direction being run, K2 in encryption order, each also one
/// block wide. Made only by the `#[target_feature]` entry points, so it is
/// the witness that their features are present.
pub(crate) struct Kernel<V: Vector> {
    k1: Keys<V>,
    k1b: Keys<V::Block>,
    k2: Keys<V>,
    k2b: Keys<V::Block>,
}

impl<V: Tweaks> Kernel<V> {
    /// The kernel of `keys` for direction `ENC`.
    ///
    /// # Safety
    ///
    /// The CPU has the features of `V`'s XTS entry point: the width's AES
    /// instructions and carry-less multiply.
    #[inline(always)]
    pub(crate) unsafe fn new<const ENC: bool>(keys: &RoundKeys) -> Kernel<V> {
        let k1 = if ENC { &keys.k1.enc } else { &keys.k1.dec };
        // SAFETY: forwarded from the caller.
        let (k1, k2) = unsafe { (Keys::<V>::new(k1), Keys::<V>::new(&keys.tweak)) };
        Kernel {
            k1b: k1.blocks(),
            k2b: k2.blocks(),
            k1,
            k2,
        }
    }

    /// The tweaks of a unit's first `W` vectors; see [`Tweaks::setup`].
    #[inline(always)]
    fn setup<const W: usize>(&self, t: V::Block) -> [V; W] {
        // SAFETY: a `Kernel` exists only inside an entry point with the
        // features `setup` needs.
        unsafe { V::setup::<W>(t) }
    }

    /// One block: `E_K1(b ^ t) ^ t` (or `D_K1`).
    #[inline(always)]
    fn xts1<const NR: usize, const ENC: bool>(&self, b: V::Block, t: V::Block) -> V::Block {
        self.k1b.crypt::<NR, ENC, 1>([b], Some(&[t]), Some(&[t]))[0]
    }

    /// `E_K2(iv)` for one IV.
    #[inline(always)]
    fn first_tweak<const NR: usize>(&self, iv: u128) -> V::Block {
        self.k2b
            .encrypt::<NR, 1>([V::lane_from_u128(iv)], None, None)[0]
    }

    /// `E_K2(iv)` for `U = W * BLOCKS` IVs, `W` vectors of independent
    /// chains.
    #[inline(always)]
    fn first_tweaks<const NR: usize, const W: usize, const U: usize>(
        &self,
        ivs: &[u128; U],
    ) -> [V::Block; U] {
        const { assert!(U == W * V::BLOCKS, "one vector group of first tweaks") };
        let mut out = [V::lane_from_u128(0); U];
        // SAFETY: vector `i < W` covers IVs (and outputs) `BLOCKS * i ..
        // BLOCKS * (i + 1)`, inside both arrays; a block is one 16-byte
        // register, as a `u128` is 16 bytes; the kernel proves the width's
        // features.
        unsafe {
            let src = ivs.as_ptr().cast::<u8>();
            let s: [V; W] = mdu_platform::simd::array(|i| V::load(src.add(16 * V::BLOCKS * i)));
            let s = self.k2.encrypt::<NR, W>(s, None, None);
            let dst = out.as_mut_ptr().cast::<u8>();
            for (i, v) in s.iter().enumerate() {
                v.store(dst.add(16 * V::BLOCKS * i));
            }
        }
        out
    }
}

/// `N` vectors of `src` to `dst` under the tweak vectors `tw[..N]`.
///
/// # Safety
///
/// `src` and `dst` are valid for `16 * BLOCKS * N` bytes and are equal or
/// disjoint; `N <= W`.
#[inline(always)]
unsafe fn group<V: Tweaks, const NR: usize, const ENC: bool, const W: usize, const N: usize>(
    k: &Kernel<V>,
    tw: &[V; W],
    src: *const u8,
    dst: *mut u8,
) {
    let step = 16 * V::BLOCKS;
    let mut s = [tw[0]; N];
    for (i, s) in s.iter_mut().enumerate() {
        // SAFETY: vector `i < N` lies in the `16 * BLOCKS * N` source bytes.
        *s = unsafe { V::load(src.add(step * i)) };
    }
    let t: &[V; N] = tw.first_chunk::<N>().expect("a group is at most W vectors");
    let out = k.k1.crypt::<NR, ENC, N>(s, Some(t), Some(t));
    for (i, v) in out.iter().enumerate() {
        // SAFETY: as for the loads; every vector was loaded before the first
        // store, so an in-place call reads only input.
        unsafe { v.store(dst.add(step * i)) };
    }
}

/// One data unit of `len >= 16` bytes whose first `W * BLOCKS` tweaks are
/// `tw` (see [`Tweaks::setup`]); `WHOLE`: `len` is a whole number of
/// `W`-vector groups, so the tails are not compiled in.
///
/// # Safety
///
/// `src` and `dst` are valid for `len` bytes and are equal or disjoint; if
/// `WHOLE`, `W * 16 * BLOCKS` divides `len`.
#[inline(always)]
unsafe fn unit<V: Tweaks, const NR: usize, const ENC: bool, const W: usize, const WHOLE: bool>(
    k: &Kernel<V>,
    mut tw: [V; W],
    src: *const u8,
    dst: *mut u8,
    len: usize,
) {
    let per_vector = 16 * V::BLOCKS;
    let bulk = 16 * bulk_blocks::<ENC>(len);
    let mut off = 0;
    while bulk - off >= W * per_vector {
        // SAFETY: `off + W * per_vector <= bulk <= len`.
        unsafe { group::<V, NR, ENC, W, W>(k, &tw, src.add(off), dst.add(off)) };
        off += W * per_vector;
        if off == len {
            // Done: skip advancing tweaks nobody would use.
            return;
        }
        for t in tw.iter_mut() {
            // SAFETY: a `Kernel` exists only inside an entry point with the
            // features `advance` needs.
            *t = unsafe { V::advance::<W>(*t) };
        }
    }
    if WHOLE {
        // A whole number of groups returns inside the loop above (`off ==
        // len`); only a unit that broke `WHOLE`'s precondition gets here.
        // Without the tails below the tweak vectors are never indexed at
        // run time and stay in registers.
        debug_assert_eq!(off, len, "WHOLE for a unit with a tail");
        return;
    }
    // Fewer than W vectors left: groups of W/2, .., 1 vectors as the bits
    // of the count say; the tweak vectors of a group done move out of the
    // front.
    let mut vectors = (bulk - off) / per_vector;
    macro_rules! tail {
        ($n:literal) => {
            if $n < W && vectors & $n != 0 {
                // SAFETY: `off + $n * per_vector <= bulk <= len`.
                unsafe { group::<V, NR, ENC, W, $n>(k, &tw, src.add(off), dst.add(off)) };
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
            let b = V::Block::load(src.add(off));
            k.xts1::<NR, ENC>(b, tw[0].lane(lane)).store(dst.add(off));
        }
        lane += 1;
        off += 16;
    }
    if !len.is_multiple_of(16) {
        // SAFETY: `off` is the end of the bulk blocks of a `len`-byte unit
        // and the lane is the tweak of the block after them.
        unsafe { steal::<V, NR, ENC>(k, tw[0].lane(lane), src, dst, off, len % 16) };
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
unsafe fn steal<V: Tweaks, const NR: usize, const ENC: bool>(
    k: &Kernel<V>,
    t: V::Block,
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
            let out = k.xts1::<NR, true>(V::Block::load(pp.as_ptr()), t);
            out.store(dst.add(off - 16));
        } else {
            // The held-back block decrypts under the next tweak (t * x); its
            // first r bytes are the partial plaintext, and the partial
            // ciphertext padded with its tail decrypts under t.
            let c = V::Block::load(src.add(off));
            k.xts1::<NR, false>(c, V::mul_x(t)).store(pp.as_mut_ptr());
            core::ptr::copy_nonoverlapping(src.add(off + 16), cc.as_mut_ptr(), r);
            core::ptr::copy_nonoverlapping(pp.as_ptr(), dst.add(off + 16), r);
            cc[r..].copy_from_slice(&pp[r..]);
            let out = k.xts1::<NR, false>(V::Block::load(cc.as_ptr()), t);
            out.store(dst.add(off));
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
/// disjoint; `unit_len >= 16`; `NR` (10 or 14) matches the round keys `k`
/// holds; an [`Ivs::List`] holds `count` IVs.
#[inline(always)]
pub(crate) unsafe fn crypt<
    V: Tweaks,
    const NR: usize,
    const ENC: bool,
    const W: usize,
    const U: usize,
>(
    k: &Kernel<V>,
    ivs: &Ivs<'_>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    if count == 1 {
        // One message: one AES chain for its tweak, no batch.
        let tw = k.setup::<W>(k.first_tweak::<NR>(ivs.get(0)));
        // SAFETY: the request is exactly this one unit.
        unsafe { unit::<V, NR, ENC, W, false>(k, tw, src, dst, unit_len) };
        return;
    }
    // Units of whole groups take a path without tails where the width asks
    // for it (`Tweaks::WHOLE_GROUPS`): there the tweak vectors stay in
    // registers.
    // SAFETY: forwarded.
    unsafe {
        if V::WHOLE_GROUPS && unit_len.is_multiple_of(W * 16 * V::BLOCKS) {
            batches::<V, NR, ENC, W, U, true>(k, ivs, unit_len, count, src, dst)
        } else {
            batches::<V, NR, ENC, W, U, false>(k, ivs, unit_len, count, src, dst)
        }
    }
}

/// The batches of [`crypt`] for `count > 1` units; `WHOLE`: each unit is a
/// whole number of `W`-vector groups.
///
/// # Safety
///
/// As [`crypt`], and `WHOLE` only if `W * 16 * BLOCKS` divides `unit_len`.
#[inline(always)]
unsafe fn batches<
    V: Tweaks,
    const NR: usize,
    const ENC: bool,
    const W: usize,
    const U: usize,
    const WHOLE: bool,
>(
    k: &Kernel<V>,
    ivs: &Ivs<'_>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    // The IVs of a batch are written one batch before their wide loads: a
    // 16- or 64-byte load of data just stored in 8-byte halves cannot be
    // forwarded from the stores and waits until they retire, behind every
    // AES round then in flight.
    let mut tweaks = k.first_tweaks::<NR, W, U>(&ivs.batch::<U>(0));
    let mut ahead = ivs.batch::<U>(U);
    let mut done = 0;
    while done < count {
        let n = U.min(count - done);
        let batch = tweaks;
        if count - done > U {
            tweaks = k.first_tweaks::<NR, W, U>(&ahead);
            ahead = ivs.batch::<U>(done + 2 * U);
        }
        let mut next = k.setup::<W>(batch[0]);
        for j in 0..n {
            let tw = next;
            if j + 1 < n {
                next = k.setup::<W>(batch[j + 1]);
            }
            let at = (done + j) * unit_len;
            // SAFETY: unit `done + j < count` lies inside the request.
            unsafe { unit::<V, NR, ENC, W, WHOLE>(k, tw, src.add(at), dst.add(at), unit_len) };
        }
        done += n;
    }
}

/// The `#[target_feature]` entry point of one width, `crypt`, taking the
/// witness of the backend's needs `$needs`: it builds the width's
/// [`Kernel`] for the request's direction and runs [`crypt`] with `$w`
/// vectors in flight and the first tweaks of `$u` units encrypted
/// together. The request's fields go to the feature-enabled function as
/// plain arguments, in registers (see `Ivs::parts`).
macro_rules! entry_point {
    ($v:ty, $w:expr, $u:expr, $needs:ident) => {
        $crate::backend::needs::target_features!($needs =>
            /// Encrypts (`ENC`) or decrypts `count` data units of `unit_len`
            /// bytes from `src` to `dst`; unit `i` uses IV `i` of
            /// `Ivs::from_parts(first, step, list)`.
            ///
            /// # Safety
            ///
            /// `src` and `dst` are valid for `count * unit_len` bytes and are
            /// equal or disjoint; `unit_len >= 16`; `NR` is 10 or 14 and
            /// matches the schedules in `keys`; a `list` holds `count` IVs.
            /// (The CPU features are the witness's: its type is the backend's
            /// declared needs.)
            #[allow(clippy::too_many_arguments)]
            unsafe fn run<const NR: usize, const ENC: bool>(
                _: mdu_platform::cpu::Witness<$crate::backend::needs::$needs>,
                keys: &$crate::backend::round_keys::RoundKeys,
                first: u128,
                step: u64,
                list: Option<&[mdu_core::Iv]>,
                unit_len: usize,
                count: usize,
                src: *const u8,
                dst: *mut u8,
            ) {
                use $crate::backend::driver::{Kernel, crypt};
                // SAFETY: this function runs with the width's features.
                let k = unsafe { Kernel::<$v>::new::<ENC>(keys) };
                let ivs = mdu_aes::__private::Ivs::from_parts(first, step, list);
                // SAFETY: forwarded from the caller; `k` holds the matching
                // schedules.
                unsafe { crypt::<$v, NR, ENC, { $w }, { $u }>(&k, &ivs, unit_len, count, src, dst) }
            }
        );

        /// The entry point of direction `ENC`, with the request's fields as
        /// its arguments: what the crate's `mdu_aes::__private::Kernels` impl calls.
        ///
        /// # Safety
        ///
        /// As for `run`, for the fields of `r`.
        #[inline]
        pub(crate) unsafe fn crypt<const NR: usize, const ENC: bool>(
            w: mdu_platform::cpu::Witness<$crate::backend::needs::$needs>,
            keys: &$crate::backend::round_keys::RoundKeys,
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
            unsafe { run::<NR, ENC>(w, keys, first, step, list, unit, count, src, dst) }
        }
    };
}
pub(crate) use entry_point;
