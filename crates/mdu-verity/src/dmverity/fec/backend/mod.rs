//! The encoder's LFSR kernels and their one dispatch point, [`Kernel`].
//!
//! # The contract every kernel keeps
//!
//! A kernel runs the LFSR steps of a run of [`Blocks`] of one round on
//! that round's registers: `state` holds `roots` rows of `bs` bytes (row
//! `j` holds register `j` of every codeword of the round), each block is
//! `bs` bytes and gives the next message byte of each of the `bs`
//! codewords, and the blocks are taken in order. The result is
//! byte-identical to the portable kernel (`generic`) for every root count
//! (2..=24) and every block size the layout accepts; the vector kernels
//! (`simd`, over the per-ISA `Lanes` of `x86` and `aarch64`) need `bs` to
//! be a multiple of their vector width, which every block size (a power
//! of two, at least 512) is. A kernel reads only the blocks of the run and
//! writes only `state`.
//!
//! The CPU is asked once per encoder (or per decoded round):
//! [`Kernel::detect`] picks the best kernel, and [`Kernel::run`] is the
//! one `match` that reaches a `#[target_feature]` entry point.

#[cfg(arm_simd)]
mod aarch64;
mod generic;
#[cfg(simd)]
mod simd;
#[cfg(x86_simd)]
mod x86;

use super::gf::Code;

/// The blocks of one round in a pushed buffer: `count` blocks of
/// `block_size` bytes, the first at byte `first` of `input` and each
/// `stride` bytes after the one before (the blocks between belong to the
/// other rounds; a stride of 0 repeats one block).
pub(crate) struct Blocks<'a> {
    pub(crate) input: &'a [u8],
    pub(crate) first: usize,
    pub(crate) stride: usize,
    pub(crate) count: usize,
    pub(crate) block_size: usize,
}

impl Blocks<'_> {
    /// The byte just past the last block (`count` is not zero).
    #[cfg_attr(not(simd), allow(dead_code))]
    pub(crate) fn last_end(&self) -> usize {
        self.first + (self.count - 1) * self.stride + self.block_size
    }

    pub(super) fn get(&self, i: usize) -> &[u8] {
        let at = self.first + i * self.stride;
        &self.input[at..at + self.block_size]
    }
}

/// The LFSR step implementations, chosen once per encoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    Generic,
    #[cfg(x86_simd)]
    Avx2,
    #[cfg(x86_simd)]
    Gfni,
    #[cfg(x86_simd)]
    Gfni512,
    #[cfg(arm_simd)]
    Neon,
}

impl Kernel {
    pub(crate) fn detect() -> Kernel {
        #[cfg(x86_simd)]
        {
            if x86::has_gfni512() {
                return Kernel::Gfni512;
            }
            if x86::has_gfni() {
                return Kernel::Gfni;
            }
            if x86::has_avx2() {
                return Kernel::Avx2;
            }
        }
        #[cfg(arm_simd)]
        {
            if aarch64::has_neon() {
                return Kernel::Neon;
            }
        }
        Kernel::Generic
    }

    /// The steps of `blocks` on the registers `state` of their round.
    pub(crate) fn run(self, code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
        match self {
            Kernel::Generic => generic::run(code, state, blocks),
            // SAFETY: `detect` (or a test that asked the same question)
            // chose these kernels only where the CPU has their features.
            #[cfg(x86_simd)]
            Kernel::Avx2 => unsafe { x86::run_avx2(code, state, blocks) },
            // SAFETY: as above.
            #[cfg(x86_simd)]
            Kernel::Gfni => unsafe { x86::run_gfni(code, state, blocks) },
            // SAFETY: as above.
            #[cfg(x86_simd)]
            Kernel::Gfni512 => unsafe { x86::run_gfni512(code, state, blocks) },
            // SAFETY: as above.
            #[cfg(arm_simd)]
            Kernel::Neon => unsafe { aarch64::run_neon(code, state, blocks) },
        }
    }
}

/// Every kernel this CPU runs, the portable one first; a test run prints
/// which it exercised.
#[cfg(test)]
pub(crate) fn available() -> Vec<Kernel> {
    #[cfg_attr(not(simd), allow(unused_mut))]
    let mut k = vec![Kernel::Generic];
    #[cfg(x86_simd)]
    {
        if x86::has_avx2() {
            k.push(Kernel::Avx2);
        }
        if x86::has_gfni() {
            k.push(Kernel::Gfni);
        }
        if x86::has_gfni512() {
            k.push(Kernel::Gfni512);
        }
    }
    #[cfg(arm_simd)]
    {
        if aarch64::has_neon() {
            k.push(Kernel::Neon);
        }
    }
    println!("FEC kernels run here: {k:?}");
    k
}
