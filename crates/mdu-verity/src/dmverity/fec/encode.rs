//! The parity encoder: the blocks of the FEC input in order, each once,
//! through the LFSR kernels of [`backend`](super::backend).

use super::backend::{Blocks, Kernel};
use super::gf::Code;
use super::layout::Layout;
use crate::Error;

/// Computes the parity of a FEC input fed block by block, in order (see
/// the [module documentation](super)).
///
/// ```
/// use mdu_verity::dmverity::fec::{Encoder, Layout};
///
/// let data: Vec<u8> = (0..259 * 4096).map(|i| (i * 7 + 3) as u8).collect();
/// let mut enc = Encoder::new(Layout::new(259, 4096, 2)?)?;
/// for piece in data.chunks(5 * 4096) {
///     enc.push(piece)?;
/// }
/// assert_eq!(enc.finish()?.len(), 16384);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub struct Encoder {
    layout: Layout,
    code: Code,
    kernel: Kernel,
    /// Round `n`'s registers: rows `j` of `bs` bytes at
    /// `(n * roots + j) * bs`.
    state: Vec<u8>,
    /// Blocks taken so far.
    next: u64,
}

/// `work(n, registers of round n)` for the rounds `first..` whose
/// registers are `states` (`row` bytes each); in parallel with the `rayon`
/// feature, at least `per_task` rounds per task.
fn for_rounds(
    states: &mut [u8],
    first: usize,
    row: usize,
    per_task: usize,
    work: &(dyn Fn(usize, &mut [u8]) + Sync),
) {
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        states
            .par_chunks_mut(row)
            .enumerate()
            .with_min_len(per_task)
            .for_each(|(i, s)| work(first + i, s));
    }
    #[cfg(not(feature = "rayon"))]
    {
        let _ = per_task;
        for (i, s) in states.chunks_exact_mut(row).enumerate() {
            work(first + i, s);
        }
    }
}

impl Encoder {
    /// An encoder for `layout`, with the fastest kernel this CPU runs.
    ///
    /// ```
    /// use mdu_verity::dmverity::fec::{Encoder, Layout};
    /// let enc = Encoder::new(Layout::new(1, 512, 24)?)?;
    /// assert_eq!(enc.layout().parity_len(), 512 * 24);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn new(layout: Layout) -> Result<Encoder, Error> {
        Encoder::with_kernel(layout, Kernel::detect())
    }

    fn with_kernel(layout: Layout, kernel: Kernel) -> Result<Encoder, Error> {
        // Checked addressable by `Layout::new`.
        let len = usize::try_from(layout.parity_len()).map_err(|_| Error::TreeTooLarge {
            data_blocks: layout.blocks,
        })?;
        Ok(Encoder {
            layout,
            code: Code::new(layout.roots),
            kernel,
            state: vec![0u8; len],
            next: 0,
        })
    }

    /// The layout this encoder computes.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Takes the next whole blocks of the input. A length that is not a
    /// multiple of the block size, or blocks past the layout's count, are
    /// refused before any is taken.
    ///
    /// ```
    /// use mdu_verity::{dmverity::fec::{Encoder, Layout}, Error};
    /// let mut enc = Encoder::new(Layout::new(2, 512, 2)?)?;
    /// assert!(matches!(enc.push(&[0u8; 100]), Err(Error::FecInput { .. })));
    /// enc.push(&[0u8; 1024])?;
    /// assert!(matches!(enc.push(&[0u8; 512]), Err(Error::FecInput { .. })));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn push(&mut self, blocks: &[u8]) -> Result<(), Error> {
        let bs = self.layout.block_size as usize;
        if !blocks.len().is_multiple_of(bs) {
            return Err(Error::FecInput {
                reason: format!(
                    "{} bytes is not a whole number of {bs}-byte blocks",
                    blocks.len()
                ),
            });
        }
        let count = (blocks.len() / bs) as u64;
        if self.next + count > self.layout.blocks {
            return Err(Error::FecInput {
                reason: format!(
                    "{} blocks given after {}, but the layout has {}",
                    count, self.next, self.layout.blocks
                ),
            });
        }
        let rounds = self.layout.rounds as usize;
        let row = self.code.roots * bs;
        let count = count as usize;
        let n0 = (self.next % rounds as u64) as usize;
        let (code, kernel) = (&self.code, self.kernel);
        // Block `k` of the buffer feeds round `(n0 + k) mod R`: round `n`
        // takes block `(n - n0) mod R`, then every `R`-th after it, in
        // order, in one run that keeps its registers in vector registers.
        let run_round = |n: usize, state: &mut [u8]| {
            let j0 = (n + rounds - n0) % rounds;
            if j0 < count {
                let run = Blocks {
                    input: blocks,
                    first: j0 * bs,
                    stride: rounds * bs,
                    count: (count - j0).div_ceil(rounds),
                    block_size: bs,
                };
                kernel.run(code, state, &run);
            }
        };
        // Enough blocks per task to pay for the task.
        let per_round = (count / rounds).max(1);
        let per_task = ((256 * 1024 / bs) / per_round).max(1);
        // The rounds the buffer touches: all of them, or those from `n0`
        // on, wrapping around to round 0.
        let ranges = if count >= rounds {
            [0..rounds, 0..0]
        } else if n0 + count <= rounds {
            [n0..n0 + count, 0..0]
        } else {
            [n0..rounds, 0..n0 + count - rounds]
        };
        for r in ranges {
            let states = &mut self.state[r.start * row..r.end * row];
            for_rounds(states, r.start, row, per_task, &run_round);
        }
        self.next += count as u64;
        Ok(())
    }

    /// The parity, once every block of the layout was pushed: the zero
    /// message bytes past the end of the input are fed, and the registers
    /// are written out in `veritysetup`'s order.
    ///
    /// ```
    /// use mdu_verity::{dmverity::fec::{Encoder, Layout}, Error};
    /// let enc = Encoder::new(Layout::new(2, 512, 2)?)?;
    /// assert!(matches!(enc.finish(), Err(Error::FecInput { .. })));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn finish(mut self) -> Result<Vec<u8>, Error> {
        let l = self.layout;
        if self.next != l.blocks {
            return Err(Error::FecInput {
                reason: format!("{} of {} blocks were given", self.next, l.blocks),
            });
        }
        let bs = l.block_size as usize;
        let roots = self.code.roots;
        let rsn = 255 - u64::from(l.roots);
        let zero = vec![0u8; bs];
        // Position i of round n is block i * R + n: past N it is zero.
        let (code, kernel) = (&self.code, self.kernel);
        let pad = |n: usize, state: &mut [u8]| {
            let fed = l.blocks.saturating_sub(n as u64).div_ceil(l.rounds);
            let zeros = Blocks {
                input: &zero,
                first: 0,
                stride: 0,
                count: (rsn - fed) as usize,
                block_size: bs,
            };
            if zeros.count > 0 {
                kernel.run(code, state, &zeros);
            }
        };
        for_rounds(&mut self.state, 0, roots * bs, 1, &pad);
        // Rows (n, j, b) to the on-disk order (n, b, j).
        let mut out = vec![0u8; self.state.len()];
        for (round_out, round_state) in out
            .chunks_exact_mut(roots * bs)
            .zip(self.state.chunks_exact(roots * bs))
        {
            for (j, row) in round_state.chunks_exact(bs).enumerate() {
                for (b, &v) in row.iter().enumerate() {
                    round_out[b * roots + j] = v;
                }
            }
        }
        Ok(out)
    }
}

/// The parity of `input` (whole blocks) with `roots` parity bytes per
/// codeword, in one call.
///
/// ```
/// use mdu_verity::dmverity::fec;
///
/// // One block of zeros but for its first byte, 1: the first codeword
/// // holds 0x01 then zeros (x^252), the others are all zero.
/// let mut block = vec![0u8; 512];
/// block[0] = 1;
/// let parity = fec::encode_bytes(&block, 512, 2)?;
/// assert_eq!(&parity[..2], &[0x8e, 0x8f]);
/// assert!(parity[2..].iter().all(|&b| b == 0));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn encode_bytes(input: &[u8], block_size: u32, roots: u8) -> Result<Vec<u8>, Error> {
    let bs = block_size as usize;
    if bs == 0 || !input.len().is_multiple_of(bs) {
        return Err(Error::FecInput {
            reason: format!(
                "{} bytes is not a whole number of {block_size}-byte blocks",
                input.len()
            ),
        });
    }
    let mut enc = Encoder::new(Layout::new((input.len() / bs) as u64, block_size, roots)?)?;
    enc.push(input)?;
    enc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dmverity::fec::backend::available;
    use crate::dmverity::fec::gf::generator;
    use crate::dmverity::fec::{MAX_ROOTS, MIN_ROOTS};

    /// One codeword of 255 - roots message bytes through the encoder: the
    /// message as byte 0 of consecutive 512-byte blocks (one round).
    fn codeword(message: &[u8], roots: u8, kernel: Kernel) -> Vec<u8> {
        let mut input = vec![0u8; message.len() * 512];
        for (i, &m) in message.iter().enumerate() {
            input[i * 512] = m;
        }
        let layout = Layout::new(message.len() as u64, 512, roots).unwrap();
        let mut enc = Encoder::with_kernel(layout, kernel).unwrap();
        enc.push(&input).unwrap();
        enc.finish().unwrap()[..usize::from(roots)].to_vec()
    }

    #[test]
    fn published_codewords() {
        for kernel in available() {
            let mut m = vec![0u8; 253];
            m[252] = 1;
            assert_eq!(codeword(&m, 2, kernel), [3, 2], "{kernel:?}");
            let mut m = vec![0u8; 253];
            m[0] = 1;
            assert_eq!(codeword(&m, 2, kernel), [0x8e, 0x8f], "{kernel:?}");
            let m: Vec<u8> = (0..253).map(|i| i as u8).collect();
            assert_eq!(codeword(&m, 2, kernel), [0x3e, 0xc2], "{kernel:?}");
            let m: Vec<u8> = (0..231).map(|i| i as u8).collect();
            let want = [
                0x1f, 0x92, 0xa0, 0x6d, 0x1b, 0x59, 0x47, 0xe3, 0x81, 0x99, 0x6f, 0xb8, 0x0b, 0xef,
                0xb8, 0xff, 0x90, 0x10, 0x49, 0xc4, 0xf8, 0xbc, 0x0c, 0x68,
            ];
            assert_eq!(codeword(&m, 24, kernel), want, "{kernel:?}");
            let mut m = vec![0u8; 231];
            m[230] = 1;
            assert_eq!(codeword(&m, 24, kernel), generator(24)[1..], "{kernel:?}");
        }
    }

    /// Every kernel equals the portable one on random blocks, every root
    /// count and block sizes whose rows are not a multiple of the vector.
    #[test]
    fn every_kernel_equals_the_generic_one() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        };
        for roots in MIN_ROOTS..=MAX_ROOTS {
            // Pieces of 7 blocks (fewer than the rounds: one block per
            // round, wrapping), of 2000 (many blocks per round in one run)
            // and of odd sizes.
            for (blocks, bs, piece) in [
                (3u64, 512u32, 7usize),
                (300, 512, 7),
                (40, 4096, 7),
                (1200, 512, 2000),
                (1500, 512, 333),
            ] {
                let input: Vec<u8> = (0..blocks * u64::from(bs)).map(|_| rnd()).collect();
                let layout = Layout::new(blocks, bs, roots).unwrap();
                let run = |k: Kernel| {
                    let mut e = Encoder::with_kernel(layout, k).unwrap();
                    for piece in input.chunks(piece * bs as usize) {
                        e.push(piece).unwrap();
                    }
                    e.finish().unwrap()
                };
                let want = run(Kernel::Generic);
                for k in available() {
                    assert!(run(k) == want, "{k:?} roots {roots} blocks {blocks}");
                }
            }
        }
    }
}
