//! The FEC encoder's vector driver, written once over the per-ISA
//! [`Lanes`] of `x86` and `aarch64`: the loads, stores and XORs are those
//! of the register types of `mdu_platform::simd`, the GF(2^8) multiply is each
//! backend's own.
//!
//! Every kernel keeps the contract of `generic::run`: `state` holds
//! `roots` rows of `bs` bytes, the blocks are `bs` bytes each, `bs` is a
//! multiple of the vector width, and the result is byte-identical. A
//! column of 16 to 64 codewords keeps its `roots` registers in vector
//! registers while up to [`GROUP`] blocks of the run go through it, so the
//! state is read and written once per group, not once per block.

use mdu_platform::simd::Register;

use super::Blocks;
use crate::dmverity::fec::gf::Code;

/// One vector width and way of multiplying by the generator coefficients.
/// A value exists only inside the `#[target_feature]` entry point that
/// built it, so its methods run with that entry point's features, which
/// include the base features of its register type.
pub(crate) trait Lanes {
    /// The register type: its loads, stores and XORs are
    /// `mdu_platform::simd`'s, and a value of it proves the width's base
    /// features.
    type V: Register;
    /// `f` times generator coefficient `j + 1`, bytewise in GF(2^8).
    fn mul(&self, j: usize, f: Self::V) -> Self::V;
}

/// Blocks of a run that go through a column before the next column: few
/// enough that the hardware prefetchers follow every block's page (a
/// column touches one line of each), many enough that the registers are
/// loaded and stored rarely.
const GROUP: usize = 16;

/// `r0 = r1 ^ g_1 f, r1 = r2 ^ g_2 f, ..., r_last = g_roots f`: one LFSR
/// shift of a column's registers, named so that they stay in vector
/// registers (an array of more than four of them would live on the stack).
macro_rules! shift {
    ($l:ident, $f:ident, $j:expr; $a:ident) => {
        $a = $l.mul($j, $f);
    };
    ($l:ident, $f:ident, $j:expr; $a:ident $b:ident $($rest:ident)*) => {
        $a = $l.mul($j, $f).xor($b);
        shift!($l, $f, $j + 1; $b $($rest)*);
    };
}

/// The steps of a run of blocks, column by column, with one named
/// register variable per root.
#[inline(always)]
pub(crate) fn run_roots<L: Lanes>(lanes: &L, code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
    let bs = blocks.block_size;
    let w = L::V::BYTES;
    assert!(state.len() == code.roots * bs && bs.is_multiple_of(w));
    assert!(blocks.count == 0 || blocks.last_end() <= blocks.input.len());
    let s = state.as_mut_ptr();
    let input = blocks.input.as_ptr();
    macro_rules! by_roots {
        ($($roots:literal => [$r0:ident $($r:ident)*]),* $(,)?) => {
            match code.roots {
                $($roots => for g in (0..blocks.count).step_by(GROUP) {
                let group = GROUP.min(blocks.count - g);
                for c in (0..bs).step_by(w) {
                    // SAFETY: `c + w <= bs`, so every row access lies in
                    // `state` (`roots` rows of `bs` bytes) and every block
                    // access inside block `i` of the run, which lies in
                    // `input` (both checked above); `lanes` exists, so the
                    // CPU has the features of its entry point, which
                    // include `L::V`'s base features.
                    unsafe {
                        let mut row = 0;
                        let mut next = || {
                            row += 1;
                            s.add((row - 1) * bs + c)
                        };
                        let mut $r0 = L::V::load(next());
                        $(let mut $r = L::V::load(next());)*
                        for i in g..g + group {
                            let m = L::V::load(input.add(blocks.first + i * blocks.stride + c));
                            let f = m.xor($r0);
                            shift!(lanes, f, 0; $r0 $($r)*);
                        }
                        let mut row = 0;
                        let mut next = || {
                            row += 1;
                            s.add((row - 1) * bs + c)
                        };
                        $r0.store(next());
                        $($r.store(next());)*
                    }
                }},)*
                r => unreachable!("{r} roots: Code::new takes 2..=24"),
            }
        };
    }
    by_roots! {
        2 => [a0 a1],
        3 => [a0 a1 a2],
        4 => [a0 a1 a2 a3],
        5 => [a0 a1 a2 a3 a4],
        6 => [a0 a1 a2 a3 a4 a5],
        7 => [a0 a1 a2 a3 a4 a5 a6],
        8 => [a0 a1 a2 a3 a4 a5 a6 a7],
        9 => [a0 a1 a2 a3 a4 a5 a6 a7 a8],
        10 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9],
        11 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10],
        12 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11],
        13 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12],
        14 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13],
        15 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14],
        16 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15],
        17 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16],
        18 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17],
        19 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18],
        20 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19],
        21 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20],
        22 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20 a21],
        23 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20 a21 a22],
        24 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20 a21 a22 a23],
    }
}
