//! dm-verity FEC: the encoder against a plain reference written here
//! (polynomial division by the generator, one codeword at a time, from the
//! definition of the interleave), and the decoder under arbitrary damage
//! and arbitrary parity: never a panic; damage within the code's capacity
//! (2 * errors + erasures <= roots per codeword) restored exactly; any
//! failure leaves the round unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdu_verity::dmverity::fec::{self, Layout};

fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let c = a & 0x80;
        a <<= 1;
        if c != 0 {
            a ^= 0x1d;
        }
        b >>= 1;
    }
    p
}

/// The parity of one message: the remainder of m(x) * x^roots divided by
/// the generator, by schoolbook long division.
fn reference_parity(message: &[u8], roots: usize) -> Vec<u8> {
    // Generator, highest degree first.
    let mut g = vec![1u8];
    let mut root = 1u8;
    for _ in 0..roots {
        let mut next = vec![0u8; g.len() + 1];
        for (i, &c) in g.iter().enumerate() {
            next[i] ^= c;
            next[i + 1] ^= gf_mul(c, root);
        }
        g = next;
        root = gf_mul(root, 2);
    }
    let mut r: Vec<u8> = message
        .iter()
        .copied()
        .chain(std::iter::repeat_n(0, roots))
        .collect();
    for i in 0..message.len() {
        let f = r[i];
        if f != 0 {
            for (j, &c) in g.iter().enumerate() {
                r[i + j] ^= gf_mul(f, c);
            }
        }
    }
    r[message.len()..].to_vec()
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let roots = 2 + data[0] % 23;
    let bs = 512usize;
    let blocks = 1 + usize::from(data[1]) % 300;
    let seed = data[2];
    let input: Vec<u8> = (0..blocks * bs)
        .map(|i| (i as u8).wrapping_mul(seed | 1) ^ (i >> 9) as u8)
        .collect();
    let layout = Layout::new(blocks as u64, bs as u32, roots).unwrap();
    let parity = fec::encode_bytes(&input, bs as u32, roots).unwrap();
    let r = layout.rounds() as usize;
    let rsn = 255 - usize::from(roots);
    let nr = usize::from(roots);
    // Reference for a few codewords chosen by the input.
    for &pick in data[3..].iter().take(4) {
        let n = usize::from(pick) % r;
        let b = usize::from(pick).wrapping_mul(37) % bs;
        let message: Vec<u8> = (0..rsn)
            .map(|i| {
                let k = i * r + n;
                if k < blocks { input[k * bs + b] } else { 0 }
            })
            .collect();
        let want = reference_parity(&message, nr);
        let at = (n * bs + b) * nr;
        assert_eq!(&parity[at..at + nr], &want[..], "round {n} byte {b}");
    }

    // Damage round 0 as the input says, then decode.
    let round = 0u64;
    let ks: Vec<u64> = layout.round_blocks(round).collect();
    let clean: Vec<u8> = ks
        .iter()
        .flat_map(|&k| {
            input[k as usize * bs..(k as usize + 1) * bs]
                .iter()
                .copied()
        })
        .collect();
    let mut rp = parity[..bs * nr].to_vec();
    let mut bad = clean.clone();
    let mut erased = Vec::new();
    let mut touched = vec![0usize; bs]; // damaged symbols per codeword (by byte)
    let mut unknown = vec![0usize; bs];
    for g in data[3..].chunks_exact(4) {
        let i = usize::from(g[0]) % ks.len();
        let b = (usize::from(g[1]) << 8 | usize::from(g[2])) % bs;
        match g[3] & 3 {
            // An erased block: all its bytes scrambled, position known.
            0 if !erased.contains(&i) => {
                erased.push(i);
                for (j, v) in bad[i * bs..(i + 1) * bs].iter_mut().enumerate() {
                    *v ^= g[3] | 1;
                    touched[j] += 1;
                }
            }
            // A damaged parity byte (untrusted parity).
            1 => rp[b * nr + usize::from(g[0]) % nr] ^= g[3] | 4,
            _ => {
                bad[i * bs + b] ^= g[3] | 8;
                unknown[b] += 1;
            }
        }
    }
    let before = bad.clone();
    let result = fec::correct_round(&layout, round, &mut bad, &rp, &erased);
    let parity_damaged = rp != parity[..bs * nr];
    let within = (0..bs).all(|b| 2 * unknown[b] + touched[b] <= nr);
    match result {
        Ok(_) if within && !parity_damaged => {
            assert!(bad == clean, "within capacity, not restored")
        }
        Ok(_) => {}
        Err(_) => {
            assert!(bad == before, "a failed round changed");
            assert!(!within || parity_damaged, "within capacity, but refused");
        }
    }
});
