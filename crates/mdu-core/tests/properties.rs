//! Property tests: a batched request equals the same units sent one by one,
//! on every path, for arbitrary sizes, counts, IVs (near the carries),
//! steps, alignments and segment splits.

mod common;

use common::{NativeToy, Toy, split, split_mut};
use mdu_core::testing::sample;
use mdu_core::{DataUnitCipher, DataUnits, Iv};
use proptest::prelude::*;

fn per_unit<C: DataUnitCipher<Iv = Iv>>(c: &C, iv: Iv, step: u64, unit: usize, data: &mut [u8]) {
    for (i, chunk) in data.chunks_mut(unit).enumerate() {
        c.encrypt_unit(iv.advance(i as u128 * u128::from(step)), chunk)
            .unwrap();
    }
}

fn iv_strategy() -> impl Strategy<Value = Iv> {
    prop_oneof![
        any::<u128>().prop_map(Iv::from_u128),
        (0u128..64).prop_map(|d| Iv::from_u128((1u128 << 64) - d)),
        (0u128..64).prop_map(|d| Iv::from_u128(0u128.wrapping_sub(d))),
        (0u128..64).prop_map(|d| Iv::from_u128((1u128 << 32) - d)),
    ]
}

fn step_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![Just(1u64), Just(8u64), Just(0u64), any::<u64>()]
}

/// Sorted cut points as fractions of the length (so they fit any length).
fn cuts_strategy() -> impl Strategy<Value = Vec<u16>> {
    prop::collection::vec(any::<u16>(), 0..10)
}

fn cuts(fracs: &[u16], len: usize) -> Vec<usize> {
    let mut c: Vec<usize> = fracs.iter().map(|&f| f as usize * len / 65535).collect();
    c.sort_unstable();
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { sample::proptest_cases("properties.rs", 1000) }))]

    #[test]
    fn batched_equals_per_unit_on_every_path(
        unit in 16usize..600,
        count in 1usize..24,
        iv in iv_strategy(),
        step in step_strategy(),
        key in any::<u64>(),
        native in any::<bool>(),
        src_off in 0usize..16,
        dst_off in 0usize..16,
        in_cuts in cuts_strategy(),
        src_cuts in cuts_strategy(),
        dst_cuts in cuts_strategy(),
    ) {
        let toy = Toy { key };
        let len = unit * count;
        let plain: Vec<u8> = (0..len).map(|i| (i as u64 ^ key).wrapping_mul(0x2545_f491_4f6c_dd1d) as u8).collect();
        let mut want = plain.clone();
        per_unit(&toy, iv, step, unit, &mut want);

        let check = |units_enc: &dyn Fn(&mut [u8]), name: &str| -> Result<(), TestCaseError> {
            let mut buf = plain.clone();
            units_enc(&mut buf);
            prop_assert_eq!(&buf, &want, "{}", name);
            Ok(())
        };

        if native {
            let u = DataUnits::new(NativeToy(toy), unit).unwrap().with_iv_step(step);
            check(&|b| u.encrypt(iv, b).unwrap(), "native in place")?;
        }
        let u = DataUnits::new(toy, unit).unwrap().with_iv_step(step);
        check(&|b| u.encrypt(iv, b).unwrap(), "in place")?;
        check(&|b| u.encrypt_segments(iv, &mut split_mut(b, &cuts(&in_cuts, len))).unwrap(), "segments")?;

        // Out of place, misaligned.
        let mut src = vec![0u8; len + 16];
        let mut dst = vec![0u8; len + 16];
        src[src_off..src_off + len].copy_from_slice(&plain);
        u.encrypt_to(iv, &src[src_off..src_off + len], &mut dst[dst_off..dst_off + len]).unwrap();
        prop_assert_eq!(&dst[dst_off..dst_off + len], &want[..]);

        // Out of place, split differently on each side.
        let mut out = vec![0u8; len];
        u.encrypt_segments_to(
            iv,
            &split(&plain, &cuts(&src_cuts, len)),
            &mut split_mut(&mut out, &cuts(&dst_cuts, len)),
        ).unwrap();
        prop_assert_eq!(&out, &want);

        // And back.
        u.decrypt_segments(iv, &mut split_mut(&mut out, &cuts(&src_cuts, len))).unwrap();
        prop_assert_eq!(&out, &plain);
    }

    #[test]
    fn invalid_lengths_change_nothing(
        unit in 16usize..300,
        count in 0usize..6,
        extra in 1usize..16,
        cut_fracs in cuts_strategy(),
    ) {
        let u = DataUnits::new(Toy { key: 1 }, unit).unwrap();
        let len = unit * count + extra % unit;
        prop_assume!(len % unit != 0 || len == 0);
        let orig: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let mut buf = orig.clone();
        prop_assert!(u.encrypt(Iv::ZERO, &mut buf).is_err());
        prop_assert!(u.decrypt_segments(Iv::ZERO, &mut split_mut(&mut buf, &cuts(&cut_fracs, len))).is_err());
        prop_assert_eq!(&buf, &orig);
    }
}
