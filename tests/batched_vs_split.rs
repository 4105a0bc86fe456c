//! Through the `mdu` facade, for every XTS and CBC backend this CPU runs and
//! both key sizes: a batched request equals the same units sent one by one
//! with derived IVs — in place, out of place, over segments split
//! differently for source and destination, and as an explicit-IV batch.

use mdu::cbc::{AesCbc128, AesCbc256};
use mdu::xts::{Backend, XtsAes128, XtsAes256};
use mdu::{DataUnitCipher, DataUnits, Direction, Iv};
use mdu_core::testing::sample;
use mdu_core::testing::{split, split_mut};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Case {
    key: Vec<u8>,
    unit: usize,
    count: usize,
    iv: Iv,
    step: u64,
    src_cuts: Vec<usize>,
    dst_cuts: Vec<usize>,
    seed: u8,
}

fn cuts(len: usize, fracs: &[u16]) -> Vec<usize> {
    let mut c: Vec<usize> = fracs
        .iter()
        .map(|&f| usize::from(f) * len / 65535)
        .collect();
    c.sort_unstable();
    c
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop_oneof![Just(32usize), Just(64usize)],
        prop_oneof![
            16usize..100,
            Just(512usize),
            Just(4096usize),
            500usize..5000
        ],
        1usize..12,
        prop_oneof![
            any::<u128>(),
            (0u128..16).prop_map(|d| (1u128 << 64) - d),
            (0u128..16).prop_map(|d| 0u128.wrapping_sub(d)),
        ],
        prop_oneof![Just(1u64), Just(8u64), any::<u64>()],
        prop::collection::vec(any::<u16>(), 0..6),
        prop::collection::vec(any::<u16>(), 0..6),
        any::<u8>(),
    )
        .prop_map(|(klen, unit, count, iv, step, sc, dc, seed)| {
            let len = unit * count;
            Case {
                key: (0..klen)
                    .map(|i| (i as u8).wrapping_mul(41) ^ seed)
                    .collect(),
                unit,
                count,
                iv: Iv::from_u128(iv),
                step,
                src_cuts: cuts(len, &sc),
                dst_cuts: cuts(len, &dc),
                seed,
            }
        })
}

fn check<C: DataUnitCipher<Iv = Iv> + Clone>(cipher: C, c: &Case) -> Result<(), TestCaseError> {
    let len = c.unit * c.count;
    let plain: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(13) ^ c.seed)
        .collect();
    let mut want = plain.clone();
    for (i, u) in want.chunks_mut(c.unit).enumerate() {
        cipher
            .encrypt_unit(c.iv.advance(i as u128 * u128::from(c.step)), u)
            .unwrap();
    }
    let units = DataUnits::new(cipher, c.unit).unwrap().with_iv_step(c.step);

    let mut buf = plain.clone();
    units.encrypt(c.iv, &mut buf).unwrap();
    prop_assert_eq!(&buf, &want, "in place");

    let mut out = vec![0u8; len];
    units.encrypt_to(c.iv, &plain, &mut out).unwrap();
    prop_assert_eq!(&out, &want, "out of place");

    let mut seg = vec![0u8; len];
    units
        .encrypt_segments_to(
            c.iv,
            &split(&plain, &c.src_cuts),
            &mut split_mut(&mut seg, &c.dst_cuts),
        )
        .unwrap();
    prop_assert_eq!(&seg, &want, "segments");

    units
        .decrypt_segments(c.iv, &mut split_mut(&mut seg, &c.src_cuts))
        .unwrap();
    prop_assert_eq!(&seg, &plain, "decrypt segments");

    // The IVs as an explicit list, reversed: one unit at a time agrees.
    let ivs: Vec<Iv> = (0..c.count)
        .rev()
        .map(|i| c.iv.advance(i as u128 * u128::from(c.step)))
        .collect();
    let mut listed = plain.clone();
    units
        .crypt_with_ivs(Direction::Encrypt, &ivs, &mut listed)
        .unwrap();
    for (i, (u, iv)) in listed.chunks_mut(c.unit).zip(&ivs).enumerate() {
        units.cipher().decrypt_unit(*iv, u).unwrap();
        prop_assert_eq!(&u[..], &plain[i * c.unit..(i + 1) * c.unit], "explicit IVs");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { sample::proptest_cases("batched_equals_split_for_every_backend", 300) }))]

    #[test]
    fn batched_equals_split_for_every_backend(c in case()) {
        static SHOWN: std::sync::Once = std::sync::Once::new();
        SHOWN.call_once(|| {
            for backend in Backend::available() {
                println!("batched_equals_split_for_every_backend: backend {backend}");
            }
        });
        for &backend in Backend::available() {
            if c.key.len() == 32 {
                check(XtsAes128::with_backend(&c.key, backend).unwrap(), &c)?;
            } else {
                check(XtsAes256::with_backend(&c.key, backend).unwrap(), &c)?;
            }
        }
        // CBC takes whole blocks: the same case with the unit rounded up.
        let cbc_case = Case { unit: c.unit.next_multiple_of(16), ..c.clone() };
        for &backend in mdu::cbc::Backend::available() {
            if c.key.len() == 32 {
                check(AesCbc256::with_backend(&c.key, backend).unwrap(), &cbc_case)?;
            } else {
                check(AesCbc128::with_backend(&c.key[..16], backend).unwrap(), &cbc_case)?;
            }
        }
    }
}
