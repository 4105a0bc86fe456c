//! Property tests against outside oracles: OpenSSL EVP aes-cbc one unit at
//! a time, and every backend against the generic one, on random keys, unit
//! sizes, counts, IV sources (counters near the carries, unrelated lists),
//! in place and out of place.

mod common;

use common::{Cbc, note_backend, openssl};
use mdu_cbc::{Backend, DataUnitCipher, DataUnitSize, Direction, Iv};
use proptest::prelude::*;

fn iv() -> impl Strategy<Value = u128> {
    prop_oneof![
        any::<u128>(),
        (0u128..48).prop_map(|d| (1u128 << 64).wrapping_sub(d)),
        (0u128..48).prop_map(|d| 0u128.wrapping_sub(d)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_backend_equals_openssl_one_unit_at_a_time(
        wide in any::<bool>(),
        key_seed in any::<u8>(),
        blocks in prop_oneof![1usize..=40, Just(32usize), Just(256usize)],
        count in 1usize..=40,
        first in iv(),
        step in prop_oneof![Just(1u64), Just(8u64), any::<u64>()],
        listed in any::<bool>(),
        seed in any::<u8>(),
        dst_off in 0usize..16,
    ) {
        let key: Vec<u8> = (0..if wide { 32 } else { 16 })
            .map(|i| (i as u8).wrapping_mul(53) ^ key_seed)
            .collect();
        let unit = 16 * blocks;
        let size = DataUnitSize::new(unit).unwrap();
        let plain = common::bytes(unit * count, seed);
        let ivs: Vec<Iv> = (0..count)
            .map(|i| {
                if listed {
                    // Unrelated IVs: a hash of the index.
                    Iv::from_u128((i as u128 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ first)
                } else {
                    Iv::from_u128(first.wrapping_add(i as u128 * u128::from(step)))
                }
            })
            .collect();
        let want = openssl(&key, Direction::Encrypt, &ivs, unit, &plain);
        prop_assert_eq!(openssl(&key, Direction::Decrypt, &ivs, unit, &want), plain.clone());
        for &backend in Backend::available() {
            note_backend("every_backend_equals_openssl_one_unit_at_a_time", backend);
            let c = Cbc::new(&key, backend);
            let mut got = plain.clone();
            if listed {
                c.crypt_units_with_ivs(Direction::Encrypt, &ivs, size, &mut got).unwrap();
            } else {
                c.crypt_units(Direction::Encrypt, Iv::from_u128(first), step, size, &mut got).unwrap();
            }
            prop_assert!(got == want, "{:?} encrypt {} x {}", backend, count, unit);
            let mut back = got.clone();
            if listed {
                c.crypt_units_with_ivs(Direction::Decrypt, &ivs, size, &mut back).unwrap();
            } else {
                c.crypt_units(Direction::Decrypt, Iv::from_u128(first), step, size, &mut back).unwrap();
            }
            prop_assert!(back == plain, "{:?} decrypt {} x {}", backend, count, unit);
            if !listed {
                // Out of place into a misaligned destination.
                let mut store = vec![0xeeu8; unit * count + 16];
                let dst = &mut store[dst_off..dst_off + unit * count];
                c.crypt_units_to(Direction::Decrypt, Iv::from_u128(first), step, size, &want, dst).unwrap();
                prop_assert!(*dst == plain[..], "{:?} decrypt_to", backend);
                prop_assert!(store[..dst_off].iter().all(|&b| b == 0xee));
                prop_assert!(store[dst_off + unit * count..].iter().all(|&b| b == 0xee));
            }
        }
    }
}
