//! Property tests against outside oracles: OpenSSL EVP aes-cbc one unit at
//! a time, and every backend against the generic one, on random keys, unit
//! sizes, counts, IV sources (counters near the carries, unrelated lists),
//! in place and out of place.

mod common;

use common::{note_backend, openssl};
use mdu_cbc::{AesCbc128, AesCbc256, Backend, DataUnitCipher, DataUnitSize, Direction, Iv};
use mdu_core::testing::sample;
use proptest::prelude::*;

fn iv() -> impl Strategy<Value = u128> {
    prop_oneof![
        any::<u128>(),
        (0u128..48).prop_map(|d| (1u128 << 64).wrapping_sub(d)),
        (0u128..48).prop_map(|d| 0u128.wrapping_sub(d)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(sample::proptest_cases("every_backend_equals_openssl_one_unit_at_a_time", 64)))]

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
            let run = Run { listed, ivs: &ivs, first: Iv::from_u128(first), step, size, dst_off, plain: &plain, want: &want };
            if wide {
                run.on(&AesCbc256::with_backend(&key, backend).unwrap())?;
            } else {
                run.on(&AesCbc128::with_backend(&key, backend).unwrap())?;
            }
        }
    }
}

/// One case of `every_backend_equals_openssl_one_unit_at_a_time`, for a
/// cipher of either key size.
struct Run<'a> {
    listed: bool,
    ivs: &'a [Iv],
    first: Iv,
    step: u64,
    size: DataUnitSize,
    dst_off: usize,
    plain: &'a [u8],
    want: &'a [u8],
}

impl Run<'_> {
    /// `c` encrypts to `want` and back, in place with the listed or the
    /// counter IVs, and (counter IVs) out of place into a misaligned
    /// destination.
    fn on<C: DataUnitCipher<Iv = Iv> + core::fmt::Debug>(
        &self,
        c: &C,
    ) -> Result<(), TestCaseError> {
        let Run {
            listed,
            ivs,
            first,
            step,
            size,
            dst_off,
            plain,
            want,
        } = *self;
        let (unit, count) = (size.get(), plain.len() / size.get());
        let mut got = plain.to_vec();
        if listed {
            c.crypt_units_with_ivs(Direction::Encrypt, ivs, size, &mut got)
                .unwrap();
        } else {
            c.crypt_units(Direction::Encrypt, first, step, size, &mut got)
                .unwrap();
        }
        prop_assert!(got == want, "{:?} encrypt {} x {}", c, count, unit);
        let mut back = got.clone();
        if listed {
            c.crypt_units_with_ivs(Direction::Decrypt, ivs, size, &mut back)
                .unwrap();
        } else {
            c.crypt_units(Direction::Decrypt, first, step, size, &mut back)
                .unwrap();
        }
        prop_assert!(back == plain, "{:?} decrypt {} x {}", c, count, unit);
        if !listed {
            // Out of place into a misaligned destination.
            let mut store = vec![0xeeu8; unit * count + 16];
            let dst = &mut store[dst_off..dst_off + unit * count];
            c.crypt_units_to(Direction::Decrypt, first, step, size, want, dst)
                .unwrap();
            prop_assert!(*dst == *plain, "{:?} decrypt_to", c);
            prop_assert!(store[..dst_off].iter().all(|&b| b == 0xee));
            prop_assert!(store[dst_off + unit * count..].iter().all(|&b| b == 0xee));
        }
        Ok(())
    }
}

/// CBC-CS3 built from OpenSSL's plain CBC: zero-pad to whole blocks,
/// encrypt, swap the last two blocks and cut to the input's length.
fn openssl_cs3(key: &[u8], iv: Iv, plain: &[u8]) -> Vec<u8> {
    let len = plain.len();
    let blocks = len.div_ceil(16);
    let mut padded = plain.to_vec();
    padded.resize(16 * blocks, 0);
    let c = openssl(key, Direction::Encrypt, &[iv], padded.len(), &padded);
    if blocks == 1 {
        return c;
    }
    let r = len - 16 * (blocks - 1);
    let mut out = c[..16 * (blocks - 2)].to_vec();
    out.extend_from_slice(&c[16 * (blocks - 1)..]);
    out.extend_from_slice(&c[16 * (blocks - 2)..16 * (blocks - 2) + r]);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(sample::proptest_cases("cts_every_backend_equals_cs3_from_openssl_cbc", 256)))]

    #[test]
    fn cts_every_backend_equals_cs3_from_openssl_cbc(
        wide in any::<bool>(),
        key_seed in any::<u8>(),
        len in prop_oneof![16usize..=80, 16usize..=600, Just(255usize), Just(4096usize)],
        iv in iv(),
        seed in any::<u8>(),
    ) {
        let key: Vec<u8> = (0..if wide { 32 } else { 16 })
            .map(|i| (i as u8).wrapping_mul(29) ^ key_seed)
            .collect();
        let plain = common::bytes(len, seed);
        let want = openssl_cs3(&key, Iv::from_u128(iv), &plain);
        for &backend in Backend::available() {
            note_backend("cts_every_backend_equals_cs3_from_openssl_cbc", backend);
            let mut got = plain.clone();
            if wide {
                let c = mdu_cbc::AesCtsCbc256::with_backend(&key, backend).unwrap();
                c.encrypt(Iv::from_u128(iv), &mut got).unwrap();
                prop_assert_eq!(&got, &want, "{} encrypt, {} bytes", backend, len);
                c.decrypt(Iv::from_u128(iv), &mut got).unwrap();
            } else {
                let c = mdu_cbc::AesCtsCbc128::with_backend(&key, backend).unwrap();
                c.encrypt(Iv::from_u128(iv), &mut got).unwrap();
                prop_assert_eq!(&got, &want, "{} encrypt, {} bytes", backend, len);
                c.decrypt(Iv::from_u128(iv), &mut got).unwrap();
            }
            prop_assert_eq!(&got, &plain, "{} decrypt, {} bytes", backend, len);
        }
    }
}
