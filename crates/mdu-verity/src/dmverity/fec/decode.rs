//! The Reed-Solomon decoder: errors and erasures of one codeword
//! (Berlekamp-Massey, Chien search, Forney), and the correction of one
//! round of blocks.

use super::MAX_ROOTS;
use super::backend::{Blocks, Kernel};
use super::gf::{Code, Gf};
use super::layout::Layout;
use crate::Error;

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
    use crate::dmverity::fec::encode_bytes;

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
