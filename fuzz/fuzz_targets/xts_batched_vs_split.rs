//! A batched XTS request equals the same units sent one by one with derived
//! IVs, on the chosen backend, and equals the generic backend; in place,
//! over arbitrary segment splits, and as an explicit-IV batch (the same IVs
//! as a list, and the list reversed). Invalid requests are errors that
//! change nothing.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mdu_xts::{Backend, DataUnitCipher, DataUnits, Direction, Error, Iv, XtsAes128, XtsAes256};

#[derive(Arbitrary, Debug)]
struct Input {
    wide_key: bool,
    key: [u8; 64],
    backend: u8,
    unit: u16,
    count: u8,
    iv_kind: u8,
    iv_delta: u16,
    iv_raw: u128,
    step: u64,
    cuts: Vec<u16>,
    fill: u8,
}

fn iv_of(input: &Input) -> Iv {
    let d = u128::from(input.iv_delta % 64);
    match input.iv_kind % 4 {
        0 => Iv::from_u128((1u128 << 64).wrapping_sub(d)),
        1 => Iv::from_u128(0u128.wrapping_sub(d)),
        2 => Iv::from_u128((1u128 << 32).wrapping_sub(d)),
        _ => Iv::from_u128(input.iv_raw),
    }
}

fn run<C: DataUnitCipher<Iv = Iv> + Clone>(fast: C, generic: C, input: &Input) {
    let unit = usize::from(input.unit % 4200);
    let count = usize::from(input.count % 12) + 1;
    let iv = iv_of(input);
    let step = if input.step % 3 == 0 {
        input.step
    } else {
        input.step % 9
    };
    let len = unit * count;
    let plain: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ input.fill)
        .collect();

    let units = match DataUnits::new(fast.clone(), unit) {
        Ok(u) => u.with_iv_step(step),
        Err(e) => {
            assert!(unit < 16, "unit {unit} refused: {e}");
            // A unit that short is refused one unit at a time too, untouched.
            let mut short = plain[..unit].to_vec();
            assert!(fast.encrypt_unit(iv, &mut short).is_err());
            assert_eq!(short, &plain[..unit]);
            return;
        }
    };

    // Per unit, by hand.
    let mut want = plain.clone();
    for (i, chunk) in want.chunks_mut(unit).enumerate() {
        fast.encrypt_unit(iv.advance(i as u128 * u128::from(step)), chunk)
            .unwrap();
    }
    // Batched on the chosen backend.
    let mut got = plain.clone();
    units.encrypt(iv, &mut got).unwrap();
    assert_eq!(got, want, "batched != per unit");
    // Batched on the generic backend.
    let g = DataUnits::new(generic, unit).unwrap().with_iv_step(step);
    let mut gen_out = plain.clone();
    g.encrypt(iv, &mut gen_out).unwrap();
    assert_eq!(gen_out, want, "backend != generic");
    // Segments.
    let mut cuts: Vec<usize> = input
        .cuts
        .iter()
        .take(12)
        .map(|&c| usize::from(c) % (len + 1))
        .collect();
    cuts.sort_unstable();
    let mut seg = plain.clone();
    {
        let mut parts: Vec<&mut [u8]> = Vec::new();
        let mut rest: &mut [u8] = &mut seg;
        let mut prev = 0;
        for &c in &cuts {
            let (a, b) = std::mem::take(&mut rest).split_at_mut(c - prev);
            parts.push(a);
            rest = b;
            prev = c;
        }
        parts.push(rest);
        units.encrypt_segments(iv, &mut parts).unwrap();
    }
    assert_eq!(seg, want, "segments != per unit");
    // The same IVs as an explicit list, and the list reversed.
    let ivs: Vec<Iv> = (0..count)
        .map(|i| iv.advance(i as u128 * u128::from(step)))
        .collect();
    let mut listed = plain.clone();
    units.encrypt_with_ivs(&ivs, &mut listed).unwrap();
    assert_eq!(listed, want, "explicit IVs != per unit");
    let rev: Vec<Iv> = ivs.iter().rev().copied().collect();
    let mut by_hand = plain.clone();
    for (chunk, iv) in by_hand.chunks_mut(unit).zip(&rev) {
        fast.encrypt_unit(*iv, chunk).unwrap();
    }
    let mut rev_out = plain.clone();
    units
        .crypt_with_ivs(Direction::Encrypt, &rev, &mut rev_out)
        .unwrap();
    assert_eq!(rev_out, by_hand, "reversed explicit IVs != per unit");
    // And back.
    units.decrypt(iv, &mut got).unwrap();
    assert_eq!(got, plain, "decrypt does not invert");
    // A ragged request is an error and changes nothing.
    if len > 1 {
        let mut ragged = want.clone();
        let r = units.encrypt(iv, &mut ragged[..len - 1]);
        assert!(matches!(r, Err(Error::LengthNotMultiple { .. })));
        assert_eq!(ragged, want);
    }
}

fuzz_target!(|input: Input| {
    let avail = Backend::available();
    let backend = avail[usize::from(input.backend) % avail.len()];
    if input.wide_key {
        let (Ok(f), Ok(g)) = (
            XtsAes256::with_backend_allow_weak_key(&input.key, backend),
            XtsAes256::with_backend_allow_weak_key(&input.key, Backend::Generic),
        ) else {
            panic!("a 64-byte key must be accepted");
        };
        run(f, g, &input);
    } else {
        let key = &input.key[..32];
        let (Ok(f), Ok(g)) = (
            XtsAes128::with_backend_allow_weak_key(key, backend),
            XtsAes128::with_backend_allow_weak_key(key, Backend::Generic),
        ) else {
            panic!("a 32-byte key must be accepted");
        };
        run(f, g, &input);
    }
});
