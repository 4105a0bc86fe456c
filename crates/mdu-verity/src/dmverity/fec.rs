//! dm-verity forward error correction, as `veritysetup format --fec-device`
//! writes it: Reed-Solomon parity over the data and hash areas, byte for
//! byte the same.
//!
//! # The code and the layout
//!
//! * RS(255, 255 - `roots`) over GF(2^8) with the field polynomial `0x11d`,
//!   primitive element `x`, first consecutive root `alpha^0`, for
//!   `roots` = 2..=24 parity bytes per codeword ([`MIN_ROOTS`],
//!   [`MAX_ROOTS`]). Systematic: the parity is `m(x) * x^roots mod g(x)`,
//!   highest coefficient first.
//! * The protected input is `I = D || H`: the `data_blocks` whole blocks of
//!   the data device, then the hash device from the tree's first block
//!   (never the superblock) to the end of the area; both areas use one
//!   block size `bs` (data and hash block sizes must be equal).
//! * With `N` blocks in `I` and `rsn = 255 - roots` message bytes per
//!   codeword, there are `R = ceil(N / rsn)` rounds. Codeword `(n, b)`
//!   (round `n`, byte `b` of a block) takes its message byte `i` from byte
//!   `b` of block `i * R + n`, or zero past the end of `I`: the bytes of one
//!   block all land in different codewords, and one codeword takes one byte
//!   from each of `rsn` blocks `R` apart, so a burst of damage spreads over
//!   many codewords.
//! * The parity of codeword `(n, b)` is the `roots` bytes at
//!   `(n * bs + b) * roots` of the parity area, `R * bs * roots` bytes in all.
//!
//! # How it is computed
//!
//! [`Encoder`] takes the blocks of `I` in order, each exactly once, and
//! keeps the `roots`-byte LFSR state of every codeword, `R * bs * roots`
//! bytes: as large as the parity it becomes, and nothing else grows with
//! the input. Block `k` feeds round `k mod R` at position `k div R`, so
//! every codeword still sees its message in order. One block updates the
//! `bs` codewords of its round side by side: the feedback bytes of all of
//! them form one vector, multiplied by each generator coefficient at once
//! (nibble lookups with `vpshufb` on AVX2 or `tbl` on arm64, or the GFNI
//! affine instruction on ymm or zmm, where the CPU has them; 256-entry
//! tables otherwise). A buffer of many blocks holds several of each round
//! (every `R`-th block): the SIMD kernels take a column of 16 to 64
//! codewords through 16 of them at a time with its registers in vector
//! registers, so the registers are read and written once per 16 blocks,
//! and the rounds run on all threads.
//!
//! ```
//! use mdu_verity::dmverity::fec::{Encoder, Layout};
//!
//! // Three 512-byte blocks, two parity bytes per codeword: one round.
//! let layout = Layout::new(3, 512, 2)?;
//! assert_eq!((layout.rounds(), layout.parity_len()), (1, 1024));
//! let mut enc = Encoder::new(layout)?;
//! enc.push(&vec![0u8; 3 * 512])?;
//! assert_eq!(enc.finish()?, vec![0u8; 1024]); // zero data, zero parity
//! # Ok::<(), mdu_verity::Error>(())
//! ```

use crate::Error;

/// Fewest parity bytes per codeword `veritysetup` accepts.
pub const MIN_ROOTS: u8 = 2;
/// Most parity bytes per codeword `veritysetup` accepts.
pub const MAX_ROOTS: u8 = 24;

/// GF(2^8) multiplication modulo `x^8 + x^4 + x^3 + x^2 + 1` (`0x11d`).
const fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let carry = a & 0x80;
        a <<= 1;
        if carry != 0 {
            a ^= 0x1d;
        }
        b >>= 1;
    }
    p
}

/// The generator polynomial `prod (x - alpha^i)`, `i` in `0..roots`, as
/// coefficients highest degree first (`g[0] == 1`); entries past `roots`
/// are zero.
fn generator(roots: usize) -> [u8; MAX_ROOTS as usize + 1] {
    let mut g = [0u8; MAX_ROOTS as usize + 1];
    g[0] = 1;
    let mut root = 1u8; // alpha^0
    for i in 0..roots {
        // Multiply by (x + root): g'[j] = g[j] + root * g[j - 1], with g
        // stored highest degree first and degree i + 1 after this step.
        for j in (1..=i + 1).rev() {
            g[j] ^= gf_mul(root, g[j - 1]);
        }
        root = gf_mul(root, 2);
    }
    g
}

/// Where the blocks of one FEC input go: block count, rounds and the size
/// of the parity area.
///
/// ```
/// use mdu_verity::dmverity::fec::Layout;
///
/// // 256 data blocks and 3 hash blocks of 4 KiB, two parity bytes.
/// let l = Layout::new(259, 4096, 2)?;
/// assert_eq!(l.rounds(), 2);
/// assert_eq!(l.parity_len(), 16384);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    blocks: u64,
    block_size: u32,
    roots: u8,
    rounds: u64,
}

impl Layout {
    /// The layout of `blocks` blocks of `block_size` bytes (a power of two,
    /// 512..=65536) with `roots` parity bytes per codeword (2..=24).
    ///
    /// ```
    /// use mdu_verity::{dmverity::fec::Layout, Error};
    /// assert!(matches!(Layout::new(10, 4096, 25), Err(Error::FecRoots { roots: 25 })));
    /// assert!(matches!(Layout::new(0, 4096, 2), Err(Error::ZeroDataBlocks { .. })));
    /// ```
    pub fn new(blocks: u64, block_size: u32, roots: u8) -> Result<Layout, Error> {
        super::check_block_size("FEC block", block_size)?;
        if !(MIN_ROOTS..=MAX_ROOTS).contains(&roots) {
            return Err(Error::FecRoots { roots });
        }
        if blocks == 0 {
            return Err(Error::ZeroDataBlocks {
                source: "the FEC input",
            });
        }
        let rsn = 255 - u64::from(roots);
        let rounds = blocks.div_ceil(rsn);
        // The parity (and the encoder's state) must be addressable.
        rounds
            .checked_mul(u64::from(block_size) * u64::from(roots))
            .filter(|&len| usize::try_from(len).is_ok())
            .ok_or(Error::TreeTooLarge {
                data_blocks: blocks,
            })?;
        Ok(Layout {
            blocks,
            block_size,
            roots,
            rounds,
        })
    }

    /// Blocks of the protected input `I` (`N`).
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// The block size in bytes.
    pub fn block_size(&self) -> u32 {
        self.block_size
    }

    /// Parity bytes per codeword.
    pub fn roots(&self) -> u8 {
        self.roots
    }

    /// Rounds `R = ceil(N / (255 - roots))`.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Bytes of parity: `R * block_size * roots`.
    pub fn parity_len(&self) -> u64 {
        self.rounds * u64::from(self.block_size) * u64::from(self.roots)
    }

    /// Parity blocks (`veritysetup dump`'s "FEC blocks"): `R * roots`.
    pub fn parity_blocks(&self) -> u64 {
        self.rounds * u64::from(self.roots)
    }
}

/// Multiplication by one generator coefficient: a 256-entry table for the
/// portable kernel, two 16-entry nibble tables for `vpshufb` and `tbl`,
/// and the bit matrix for the GFNI affine instruction.
#[derive(Clone, Copy)]
pub(crate) struct MulBy {
    pub(crate) table: [u8; 256],
    /// Read by the SIMD kernels only.
    #[cfg_attr(not(simd), allow(dead_code))]
    pub(crate) lo: [u8; 16],
    #[cfg_attr(not(simd), allow(dead_code))]
    pub(crate) hi: [u8; 16],
    /// Read by the x86 kernels (and the GFNI test) only.
    #[cfg_attr(not(x86_simd), allow(dead_code))]
    pub(crate) matrix: u64,
}

impl MulBy {
    fn new(c: u8) -> MulBy {
        let mut table = [0u8; 256];
        for (x, t) in table.iter_mut().enumerate() {
            *t = gf_mul(x as u8, c);
        }
        let mut lo = [0u8; 16];
        let mut hi = [0u8; 16];
        for i in 0..16 {
            lo[i] = table[i];
            hi[i] = table[i << 4];
        }
        // GF2P8AFFINEQB: bit i of the result is the parity of
        // (byte 7 - i of the matrix) & x. Multiplying by c is linear: bit
        // k of x contributes c * x^k.
        let mut matrix = 0u64;
        for i in 0..8 {
            let mut row = 0u8;
            for k in 0..8 {
                if gf_mul(c, 1 << k) >> i & 1 != 0 {
                    row |= 1 << k;
                }
            }
            matrix |= u64::from(row) << (8 * (7 - i));
        }
        MulBy {
            table,
            lo,
            hi,
            matrix,
        }
    }
}

/// The code for one number of roots: the multipliers of `g_1..g_roots`.
pub(crate) struct Code {
    pub(crate) roots: usize,
    pub(crate) mul: Vec<MulBy>,
}

impl Code {
    fn new(roots: u8) -> Code {
        let roots = usize::from(roots);
        let g = generator(roots);
        Code {
            roots,
            mul: g[1..=roots].iter().map(|&c| MulBy::new(c)).collect(),
        }
    }
}

/// One LFSR step of the `bs` codewords of a round, for the portable
/// kernel: `state` is `roots` rows of `bs` bytes (row `j` holds register
/// `j` of every codeword), `block` the next message byte of each.
pub(crate) fn step_generic(code: &Code, state: &mut [u8], block: &[u8]) {
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

    fn get(&self, i: usize) -> &[u8] {
        let at = self.first + i * self.stride;
        &self.input[at..at + self.block_size]
    }
}

/// The steps of a run of blocks of one round, one block after the other,
/// for the portable kernel.
fn run_generic(code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
    for i in 0..blocks.count {
        step_generic(code, state, blocks.get(i));
    }
}

/// Computes the parity of a FEC input fed block by block, in order (see
/// the [module documentation](self)).
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

/// The LFSR step implementations, chosen once per encoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
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
    fn detect() -> Kernel {
        #[cfg(x86_simd)]
        {
            if super::fec_x86::has_gfni512() {
                return Kernel::Gfni512;
            }
            if super::fec_x86::has_gfni() {
                return Kernel::Gfni;
            }
            if super::fec_x86::has_avx2() {
                return Kernel::Avx2;
            }
        }
        #[cfg(arm_simd)]
        {
            if super::fec_aarch64::has_neon() {
                return Kernel::Neon;
            }
        }
        Kernel::Generic
    }

    /// The steps of `blocks` on the registers `state` of their round.
    fn run(self, code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
        match self {
            Kernel::Generic => run_generic(code, state, blocks),
            // SAFETY: `detect` (or a test that asked the same question)
            // chose these kernels only where the CPU has their features.
            #[cfg(x86_simd)]
            Kernel::Avx2 => unsafe { super::fec_x86::run_avx2(code, state, blocks) },
            // SAFETY: as above.
            #[cfg(x86_simd)]
            Kernel::Gfni => unsafe { super::fec_x86::run_gfni(code, state, blocks) },
            // SAFETY: as above.
            #[cfg(x86_simd)]
            Kernel::Gfni512 => unsafe { super::fec_x86::run_gfni512(code, state, blocks) },
            // SAFETY: as above.
            #[cfg(arm_simd)]
            Kernel::Neon => unsafe { super::fec_aarch64::run_neon(code, state, blocks) },
        }
    }
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

/// Log and antilog tables of GF(2^8)/0x11d with generator `x`.
struct Gf {
    exp: [u8; 512],
    log: [u8; 256],
}

impl Gf {
    fn new() -> Gf {
        let mut exp = [0u8; 512];
        let mut log = [0u8; 256];
        let mut x = 1u8;
        for i in 0..255 {
            exp[i] = x;
            exp[i + 255] = x;
            log[usize::from(x)] = i as u8;
            x = gf_mul(x, 2);
        }
        exp[510] = exp[0];
        exp[511] = exp[1];
        Gf { exp, log }
    }

    fn mul(&self, a: u8, b: u8) -> u8 {
        if a == 0 || b == 0 {
            0
        } else {
            self.exp[usize::from(self.log[usize::from(a)]) + usize::from(self.log[usize::from(b)])]
        }
    }

    /// `a / b`, `b != 0`.
    fn div(&self, a: u8, b: u8) -> u8 {
        if a == 0 {
            0
        } else {
            let l =
                usize::from(self.log[usize::from(a)]) + 255 - usize::from(self.log[usize::from(b)]);
            self.exp[l]
        }
    }

    /// `x^e` (alpha to the power `e`).
    fn pow_alpha(&self, e: usize) -> u8 {
        self.exp[e % 255]
    }

    /// `p(x)` for a polynomial stored lowest degree first.
    fn eval(&self, p: &[u8], x: u8) -> u8 {
        p.iter().rev().fold(0u8, |acc, &c| self.mul(acc, x) ^ c)
    }
}

/// Decodes one codeword in place: `cw` holds the 255 symbols, highest
/// degree first (message, then parity), `erased` the symbol indexes known
/// to be wrong, `fixed` those that are known to be zero and must stay so
/// (the padding past the end of the input). Returns the number of symbols
/// changed, or `None` if the damage is beyond what the code corrects.
fn decode_codeword(
    gf: &Gf,
    roots: usize,
    cw: &mut [u8; 255],
    erased: &[usize],
    fixed: impl Fn(usize) -> bool,
) -> Option<usize> {
    // Syndromes S_i = c(alpha^i), i = 0..roots (first root alpha^0).
    let mut syn = [0u8; MAX_ROOTS as usize];
    let mut any = false;
    for (i, s) in syn.iter_mut().take(roots).enumerate() {
        let x = gf.pow_alpha(i);
        *s = cw.iter().fold(0u8, |acc, &c| gf.mul(acc, x) ^ c);
        any |= *s != 0;
    }
    if !any {
        return Some(0);
    }
    if erased.len() > roots {
        return None;
    }
    // Symbol index k is the coefficient of x^(254 - k): locator alpha^(254 - k).
    let locator = |k: usize| gf.pow_alpha(254 - k);
    // Errors-and-erasures Berlekamp-Massey, lowest degree first, starting
    // from the erasure locator prod (1 - X_j x).
    let mut lambda = vec![0u8; roots + 1];
    lambda[0] = 1;
    for &k in erased {
        let x = locator(k);
        for j in (1..=roots).rev() {
            lambda[j] ^= gf.mul(lambda[j - 1], x);
        }
    }
    let mut b = lambda.clone();
    let nu = erased.len();
    let mut l = nu;
    for r in nu..roots {
        let delta = (0..=l.min(r)).fold(0u8, |acc, j| acc ^ gf.mul(lambda[j], syn[r - j]));
        // b <- x * b
        b.rotate_right(1);
        b[0] = 0;
        if delta == 0 {
            continue;
        }
        let t: Vec<u8> = lambda
            .iter()
            .zip(&b)
            .map(|(&lam, &bb)| lam ^ gf.mul(delta, bb))
            .collect();
        if 2 * l <= r + nu {
            l = r + 1 + nu - l;
            b = lambda.iter().map(|&lam| gf.div(lam, delta)).collect();
        }
        lambda = t;
    }
    let degree = lambda.iter().rposition(|&c| c != 0).unwrap_or(0);
    if degree != l || 2 * (l - nu) + nu > roots {
        return None;
    }
    // Chien search: the error positions are the k with Lambda(X_k^-1) = 0.
    let mut positions = Vec::with_capacity(degree);
    for k in 0..255 {
        let inv = gf.pow_alpha(255 - (254 - k) % 255);
        if gf.eval(&lambda, inv) == 0 {
            positions.push(k);
        }
    }
    if positions.len() != degree {
        return None;
    }
    // Forney (first root alpha^0): e_k = X_k * Omega(X_k^-1) / Lambda'(X_k^-1),
    // Omega = S * Lambda mod x^roots.
    let mut omega = vec![0u8; roots];
    for (i, o) in omega.iter_mut().enumerate() {
        for j in 0..=i.min(degree) {
            *o ^= gf.mul(syn[i - j], lambda[j]);
        }
    }
    let mut changed = 0;
    for &k in &positions {
        let x = locator(k);
        let inv = gf.div(1, x);
        // The formal derivative keeps the odd powers.
        let mut d = 0u8;
        let mut xp = 1u8; // inv^(j - 1) for odd j
        let inv2 = gf.mul(inv, inv);
        for j in (1..=degree).step_by(2) {
            d ^= gf.mul(lambda[j], xp);
            xp = gf.mul(xp, inv2);
        }
        if d == 0 {
            return None;
        }
        let e = gf.mul(x, gf.div(gf.eval(&omega, inv), d));
        if e != 0 {
            if fixed(k) {
                return None;
            }
            cw[k] ^= e;
            changed += 1;
        }
    }
    // The corrected word must be a codeword.
    for i in 0..roots {
        let x = gf.pow_alpha(i);
        if cw.iter().fold(0u8, |acc, &c| gf.mul(acc, x) ^ c) != 0 {
            return None;
        }
    }
    Some(changed)
}

/// What [`correct_round`] changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundFix {
    /// Bytes corrected.
    pub bytes: u64,
    /// Positions `i` (block `i * R + round` of the input) whose block
    /// changed, in order.
    pub blocks: Vec<usize>,
}

impl Layout {
    /// The input blocks of round `round`, message position by position:
    /// block `i * R + round` for the positions inside the input.
    ///
    /// ```
    /// use mdu_verity::dmverity::fec::Layout;
    /// let l = Layout::new(259, 4096, 2)?; // R = 2
    /// let r1: Vec<u64> = l.round_blocks(1).collect();
    /// assert_eq!((r1[0], r1[1], r1.len()), (1, 3, 129));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn round_blocks(&self, round: u64) -> impl Iterator<Item = u64> + use<> {
        let (rounds, blocks) = (self.rounds, self.blocks);
        let rsn = 255 - u64::from(self.roots);
        (0..rsn)
            .map(move |i| i * rounds + round)
            .take_while(move |&k| k < blocks)
    }
}

/// Corrects one round in place: `blocks` holds the round's input blocks
/// in position order ([`Layout::round_blocks`]), `parity` its
/// `block_size * roots` parity bytes, and `erased` the positions of blocks
/// known to be damaged (from a failed hash check): a known-bad block costs
/// one parity byte per codeword, an unknown bad byte two. Every codeword of
/// the round is decoded; on success the corrected bytes are written back
/// and reported, and if any codeword is beyond repair nothing is changed
/// and [`Error::FecUncorrectable`] names the round.
///
/// ```
/// use mdu_verity::dmverity::fec::{self, Layout};
///
/// let input: Vec<u8> = (0..10 * 512).map(|i| (i * 13) as u8).collect();
/// let parity = fec::encode_bytes(&input, 512, 4)?;
/// let mut damaged = input.clone();
/// damaged[3 * 512 + 7] ^= 0x55; // one byte of block 3
/// let fix = fec::correct_round(&Layout::new(10, 512, 4)?, 0, &mut damaged, &parity, &[])?;
/// assert_eq!((fix.bytes, fix.blocks), (1, vec![3]));
/// assert_eq!(damaged, input);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn correct_round(
    layout: &Layout,
    round: u64,
    blocks: &mut [u8],
    parity: &[u8],
    erased: &[usize],
) -> Result<RoundFix, Error> {
    let bs = layout.block_size as usize;
    let roots = usize::from(layout.roots);
    let present = layout.round_blocks(round).count();
    if round >= layout.rounds
        || blocks.len() != present * bs
        || parity.len() != bs * roots
        || erased.iter().any(|&i| i >= present)
    {
        return Err(Error::FecInput {
            reason: format!(
                "round {round} of {} needs {present} blocks of {bs} bytes and {} parity bytes, \
                 erasures among them; got {} and {} bytes",
                layout.rounds,
                bs * roots,
                blocks.len(),
                parity.len()
            ),
        });
    }
    let gf = Gf::new();
    let rsn = 255 - roots;
    // Most codewords of a damaged round are intact: encode the round's
    // message again with the vector kernel, and decode only the codewords
    // whose parity differs (zero syndromes are the same test).
    let code = Code::new(layout.roots);
    let kernel = Kernel::detect();
    let mut state = vec![0u8; roots * bs];
    let message = Blocks {
        input: blocks,
        first: 0,
        stride: bs,
        count: present,
        block_size: bs,
    };
    if present > 0 {
        kernel.run(&code, &mut state, &message);
    }
    let zero = vec![0u8; bs];
    let padding = Blocks {
        input: &zero,
        first: 0,
        stride: 0,
        count: rsn - present,
        block_size: bs,
    };
    if padding.count > 0 {
        kernel.run(&code, &mut state, &padding);
    }
    let intact = |b: usize| (0..roots).all(|j| state[j * bs + b] == parity[b * roots + j]);
    let mut fixes = Vec::new();
    for b in (0..bs).filter(|&b| !intact(b)) {
        let mut cw = [0u8; 255];
        for i in 0..present {
            cw[i] = blocks[i * bs + b];
        }
        cw[rsn..].copy_from_slice(&parity[b * roots..(b + 1) * roots]);
        let before = cw;
        match decode_codeword(&gf, roots, &mut cw, erased, |k| k >= present && k < rsn) {
            Some(0) => {}
            Some(_) => {
                for i in (0..present).filter(|&i| cw[i] != before[i]) {
                    fixes.push((i, b, cw[i]));
                }
            }
            None => return Err(Error::FecUncorrectable { round, byte: b }),
        }
    }
    let mut fix = RoundFix::default();
    for &(i, b, v) in &fixes {
        blocks[i * bs + b] = v;
        fix.bytes += 1;
        if !fix.blocks.contains(&i) {
            fix.blocks.push(i);
        }
    }
    fix.blocks.sort_unstable();
    Ok(fix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_coefficients_match_the_published_ones() {
        assert_eq!(&generator(2)[..3], &[1, 3, 2]);
        assert_eq!(&generator(3)[..4], &[1, 7, 0x0e, 8]);
        assert_eq!(&generator(4)[..5], &[1, 0x0f, 0x36, 0x78, 0x40]);
        let g24 = [
            0x01, 0x7a, 0x76, 0xa9, 0x46, 0xb2, 0xed, 0xd8, 0x66, 0x73, 0x96, 0xe5, 0x49, 0x82,
            0x48, 0x3d, 0x2b, 0xce, 0x01, 0xed, 0xf7, 0x7f, 0xd9, 0x90, 0x75,
        ];
        assert_eq!(generator(24), g24);
    }

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

    fn kernels() -> Vec<Kernel> {
        #[cfg_attr(not(simd), allow(unused_mut))]
        let mut k = vec![Kernel::Generic];
        #[cfg(x86_simd)]
        {
            if super::super::fec_x86::has_avx2() {
                k.push(Kernel::Avx2);
            }
            if super::super::fec_x86::has_gfni() {
                k.push(Kernel::Gfni);
            }
            if super::super::fec_x86::has_gfni512() {
                k.push(Kernel::Gfni512);
            }
        }
        #[cfg(arm_simd)]
        {
            if super::super::fec_aarch64::has_neon() {
                k.push(Kernel::Neon);
            }
        }
        println!("FEC kernels run here: {k:?}");
        k
    }

    #[test]
    fn published_codewords() {
        for kernel in kernels() {
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
                for k in kernels() {
                    assert!(run(k) == want, "{k:?} roots {roots} blocks {blocks}");
                }
            }
        }
    }

    #[test]
    fn gfni_matrix_multiplies_like_the_table() {
        for c in 0..=255u8 {
            let m = MulBy::new(c);
            for x in 0..=255u8 {
                // The affine product, bit by bit, as GF2P8AFFINEQB defines it.
                let mut y = 0u8;
                for i in 0..8 {
                    let row = (m.matrix >> (8 * (7 - i))) as u8;
                    y |= (((row & x).count_ones() & 1) as u8) << i;
                }
                assert_eq!(y, m.table[usize::from(x)], "c {c} x {x}");
            }
        }
    }

    /// Random damage within and beyond capacity, with and without
    /// erasures: corrected exactly when the code allows, never changed
    /// otherwise.
    #[test]
    fn rounds_are_corrected_within_capacity() {
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut rnd = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for roots in [2u8, 3, 7, 13, 24] {
            let bs = 512usize;
            let n_blocks = 255 - usize::from(roots) + 3; // two rounds
            let input: Vec<u8> = (0..n_blocks * bs).map(|_| rnd(256) as u8).collect();
            let layout = Layout::new(n_blocks as u64, bs as u32, roots).unwrap();
            let parity = encode_bytes(&input, bs as u32, roots).unwrap();
            let round = 1u64;
            let idx: Vec<u64> = layout.round_blocks(round).collect();
            let gather = |src: &[u8]| -> Vec<u8> {
                idx.iter()
                    .flat_map(|&k| src[k as usize * bs..(k as usize + 1) * bs].iter().copied())
                    .collect()
            };
            let clean = gather(&input);
            let rp = &parity[bs * usize::from(roots)..2 * bs * usize::from(roots)];
            let t = usize::from(roots) / 2;
            // Up to t unknown byte errors in every codeword.
            let mut bad = clean.clone();
            for b in 0..bs {
                for _ in 0..t {
                    let i = rnd(idx.len());
                    bad[i * bs + b] ^= 1 + rnd(255) as u8;
                }
            }
            let mut fixed = bad.clone();
            correct_round(&layout, round, &mut fixed, rp, &[]).unwrap();
            assert!(fixed == clean, "roots {roots}: errors");
            // As many whole bad blocks as roots, all known (erasures).
            let mut bad = clean.clone();
            let mut erased = Vec::new();
            while erased.len() < usize::from(roots) {
                let i = rnd(idx.len());
                if !erased.contains(&i) {
                    erased.push(i);
                }
            }
            for &i in &erased {
                for v in &mut bad[i * bs..(i + 1) * bs] {
                    *v = rnd(256) as u8;
                }
            }
            let fix = correct_round(&layout, round, &mut bad, rp, &erased).unwrap();
            assert!(bad == clean, "roots {roots}: erasures");
            assert!(fix.blocks.iter().all(|i| erased.contains(i)));
            // Beyond capacity: one more erasure than roots.
            let mut bad = clean.clone();
            let too_many: Vec<usize> = (0..=usize::from(roots)).collect();
            for &i in &too_many {
                bad[i * bs] ^= 0xff;
            }
            let before = bad.clone();
            assert!(matches!(
                correct_round(&layout, round, &mut bad, rp, &too_many),
                Err(Error::FecInput { .. } | Error::FecUncorrectable { .. })
            ));
            assert!(
                bad == before,
                "roots {roots}: an uncorrectable round changed"
            );
        }
    }
}
