//! The portable LFSR kernel: 256-entry tables, one block after the other.
#![deny(unsafe_code)]

use super::Blocks;
use crate::dmverity::fec::gf::Code;

/// One LFSR step of the `bs` codewords of a round, for the portable
/// kernel: `state` is `roots` rows of `bs` bytes (row `j` holds register
/// `j` of every codeword), `block` the next message byte of each.
fn step(code: &Code, state: &mut [u8], block: &[u8]) {
    let bs = block.len();
    let roots = code.roots;
    let mut fb = [0u8; 64];
    for (at, chunk) in block.chunks(64).enumerate() {
        let base = at * 64;
        let n = chunk.len();
        for (f, (&m, &r)) in fb.iter_mut().zip(chunk.iter().zip(&state[base..base + n])) {
            *f = m ^ r;
        }
        for j in 0..roots {
            let t = &code.mul[j].table;
            let (row, next) = state[j * bs..].split_at_mut(bs);
            let row = &mut row[base..base + n];
            if j + 1 < roots {
                let next = &next[base..base + n];
                for ((r, &nx), &f) in row.iter_mut().zip(next).zip(&fb[..n]) {
                    *r = nx ^ t[usize::from(f)];
                }
            } else {
                for (r, &f) in row.iter_mut().zip(&fb[..n]) {
                    *r = t[usize::from(f)];
                }
            }
        }
    }
}

/// The steps of a run of blocks of one round, one block after the other,
/// for the portable kernel.
pub(super) fn run(code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
    for i in 0..blocks.count {
        step(code, state, blocks.get(i));
    }
}
