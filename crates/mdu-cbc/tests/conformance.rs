//! The shared conformance checks (`mdu_aes::testing`) on both key sizes of
//! CBC and CBC-CS3: the mdu-core harness on every backend, refused key
//! lengths and backends, `Debug`, clones; and what is CBC's own: every unit
//! count against the generic backend, and the unit lengths CBC refuses.

mod common;

use common::note_backend;
use mdu_aes::testing;
use mdu_cbc::{
    Aes128, Aes256, AesCbc128, AesCbc256, AesCtsCbc128, AesCtsCbc256, Backend, Cbc, DataUnitCipher,
    DataUnits, Error, Iv, KeySize,
};

fn key(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed))
        .collect()
}

/// Under qemu (`.ci/qemu-aarch64.toml` sets `MDU_REQUIRE_ARM64_BACKENDS`),
/// the suite must run the arm64 backend, never silently the portable one.
#[test]
fn arm64_runs_the_crypto_extensions_backend_when_required() {
    testing::arm64_backend_runs_when_required::<AesCbc256>();
}

#[test]
fn harness_on_every_backend_and_both_key_sizes() {
    // 17 and 31 bytes are not whole blocks.
    testing::harness_on_every_backend::<AesCbc128>(1, 2);
    testing::harness_on_every_backend::<AesCbc256>(2, 2);
}

/// CBC-CS3 takes every length from 16 bytes: the harness runs all its
/// sizes (none skipped), batched requests splitting into one call per
/// unit.
#[test]
fn harness_on_cts_on_every_backend_and_both_key_sizes() {
    testing::harness_on_every_backend::<AesCtsCbc128>(3, 0);
    testing::harness_on_every_backend::<AesCtsCbc256>(4, 0);
}

/// Every count of units from 1 to 70 (so every tail of 16-, 8-, 4-, 2- and
/// 1-vector groups and single chains runs) and unit sizes of 1 to 9 blocks,
/// then 1, 2 and 4 KiB and 64 KiB units (whose groups run in phases, see
/// `backend::driver::phases`) with counts around one to four group sizes,
/// batched on each backend, in place and out of place, against one unit at
/// a time on the generic one.
#[test]
fn every_count_and_short_unit_matches_the_generic_backend() {
    every_count_and_short_unit::<Aes128>();
    every_count_and_short_unit::<Aes256>();
}

fn every_count_and_short_unit<K: KeySize>() {
    let k = key(K::LEN, 9);
    let generic = Cbc::<K>::with_backend(&k, Backend::Generic).unwrap();
    for &backend in Backend::available() {
        note_backend(
            "every_count_and_short_unit_matches_the_generic_backend",
            backend,
        );
        let fast = Cbc::<K>::with_backend(&k, backend).unwrap();
        let shapes = (1..=9usize)
            .map(|b| (16 * b, (1..=70usize).collect::<Vec<_>>()))
            .chain([1024usize, 2048, 4096, 65536].map(|u| {
                let mut counts = vec![1, 2, 3, 4, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 35];
                if u < 65536 {
                    // Three and four whole groups, and a tail after them.
                    counts.extend([47, 48, 50, 64, 67]);
                }
                (u, counts)
            }));
        for (unit, counts) in shapes {
            let units = DataUnits::new(&fast, unit).unwrap().with_iv_step(3);
            for count in counts {
                let plain = common::bytes(unit * count, count as u8);
                let iv = Iv::from_u128((u128::MAX - 40).wrapping_add(count as u128));
                let mut want = plain.clone();
                for (i, u) in want.chunks_mut(unit).enumerate() {
                    generic.encrypt_unit(iv.advance(3 * i as u128), u).unwrap();
                }
                let mut got = plain.clone();
                units.encrypt(iv, &mut got).unwrap();
                assert!(got == want, "{backend:?} encrypt {count} x {unit}");
                units.decrypt(iv, &mut got).unwrap();
                assert!(got == plain, "{backend:?} decrypt {count} x {unit}");
                let mut out = vec![0u8; plain.len()];
                units.encrypt_to(iv, &plain, &mut out).unwrap();
                assert!(out == want, "{backend:?} encrypt_to {count} x {unit}");
            }
        }
    }
}

#[test]
fn units_that_are_not_whole_blocks_are_refused_and_left_alone() {
    let c = AesCbc256::new(&key(32, 3)).unwrap();
    for len in [0usize, 1, 15, 17, 31, 33, 520, 4095] {
        let mut buf = vec![5u8; len];
        let r = c.encrypt(Iv::ZERO, &mut buf);
        let want = if len < 16 {
            Error::UnitSizeOutOfRange {
                size: len,
                min: 16,
                max: 16 << 20,
            }
        } else {
            Error::UnitSizeMisaligned {
                size: len,
                align: 16,
            }
        };
        assert_eq!(r, Err(want), "{len}");
        assert_eq!(c.decrypt(Iv::ZERO, &mut buf), Err(want), "{len}");
        assert!(buf.iter().all(|&b| b == 5));
        if len >= 16 {
            assert_eq!(DataUnits::new(&c, len).unwrap_err(), want);
        }
    }
    assert!(DataUnits::new(&c, 528).is_ok());
}

#[test]
fn key_length_errors() {
    testing::key_lengths_are_refused::<AesCbc128>();
    testing::key_lengths_are_refused::<AesCbc256>();
    testing::key_lengths_are_refused::<AesCtsCbc128>();
    testing::key_lengths_are_refused::<AesCtsCbc256>();
}

#[test]
fn unavailable_backend_is_an_error() {
    testing::unavailable_backends_are_refused::<AesCbc128>("mdu-cbc");
    testing::unavailable_backends_are_refused::<AesCbc256>("mdu-cbc");
    testing::unavailable_backends_are_refused::<AesCtsCbc256>("mdu-cbc");
}

#[test]
fn debug_prints_no_key_bytes() {
    testing::debug_prints_no_key_bytes::<AesCbc128>("AesCbc128");
    testing::debug_prints_no_key_bytes::<AesCbc256>("AesCbc256");
    testing::debug_prints_no_key_bytes::<AesCtsCbc128>("CtsCbc");
}

#[test]
fn a_clone_encrypts_like_the_original() {
    testing::a_clone_encrypts_like_the_original::<AesCbc128>();
    testing::a_clone_encrypts_like_the_original::<AesCbc256>();
    testing::a_clone_encrypts_like_the_original::<AesCtsCbc256>();
}

mod key_traits {
    //! RustCrypto's key traits on the CBC cipher types: `KeyInit` and
    //! `TryKeyInit` build the cipher `new` builds (the same bytes) and refuse
    //! a key of another length; `KeySizeUser` is the key; code generic over
    //! `KeyInit + DataUnitCipher` takes every type.

    use mdu_cbc::crypto_common::{KeyInit, KeySizeUser, TryKeyInit};
    use mdu_cbc::{
        AesCbc128, AesCbc256, AesCtsCbc128, AesCtsCbc256, BlockCbc, DataUnitCipher, DataUnits, Iv,
        SetupError,
    };
    use zeroize::ZeroizeOnDrop;

    /// Bytes with period 251.
    fn painted(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ seed.wrapping_mul(17))
            .collect()
    }

    /// Three 512-byte sectors from sector 7 under `cipher`.
    fn sectors<C: DataUnitCipher<Iv = Iv>>(cipher: C) -> Vec<u8> {
        let mut buf = painted(3 * 512, 1);
        DataUnits::new(cipher, 512)
            .unwrap()
            .encrypt(Iv::plain64(7), &mut buf)
            .unwrap();
        buf
    }

    /// Built through `KeyInit` (from a slice and from a key array) and
    /// through `TryKeyInit`, the type encrypts as its own `new` does; a key
    /// one byte short or long and an empty one are refused by all three.
    /// `lens_ok` are other lengths `new` takes (Serpent's and Twofish's),
    /// which `new_from_slice` takes too.
    fn check<C>(name: &str, new: impl Fn(&[u8]) -> Result<C, SetupError>, lens_ok: &[usize])
    where
        C: KeyInit + TryKeyInit + DataUnitCipher<Iv = Iv> + ZeroizeOnDrop,
    {
        let n = <C as KeySizeUser>::key_size();
        let key = painted(n, 2);
        let want = sectors(new(&key).unwrap());
        let from_slice = <C as KeyInit>::new_from_slice(&key).unwrap();
        assert_eq!(sectors(from_slice), want, "{name}");
        let from_array = <C as KeyInit>::new(key.as_slice().try_into().unwrap());
        assert_eq!(sectors(from_array), want, "{name}");
        let fallible = <C as TryKeyInit>::new_from_slice(&key).unwrap();
        assert_eq!(sectors(fallible), want, "{name}");
        for bad in [n - 1, n + 1, 0] {
            if lens_ok.contains(&bad) {
                continue;
            }
            let key = painted(bad, 3);
            assert!(
                <C as KeyInit>::new_from_slice(&key).is_err(),
                "{name}: {bad} bytes"
            );
            assert!(
                <C as TryKeyInit>::new_from_slice(&key).is_err(),
                "{name}: {bad} bytes"
            );
            assert!(new(&key).is_err(), "{name}: {bad} bytes");
        }
        for &len in lens_ok {
            let key = painted(len, 4);
            let from_slice = <C as KeyInit>::new_from_slice(&key).unwrap();
            assert_eq!(
                sectors(from_slice),
                sectors(new(&key).unwrap()),
                "{name}: {len} bytes"
            );
        }
    }

    #[test]
    fn key_init_builds_what_new_builds_and_refuses_other_lengths() {
        assert_eq!(AesCbc128::key_size(), 16);
        assert_eq!(AesCbc256::key_size(), 32);
        check("AesCbc128", AesCbc128::new, &[]);
        check("AesCbc256", AesCbc256::new, &[]);
        check(
            "BlockCbc<Serpent>",
            BlockCbc::<serpent::Serpent>::new,
            &[17, 24, 32],
        );
        check(
            "BlockCbc<Twofish>",
            BlockCbc::<twofish::Twofish>::new,
            &[16, 24],
        );
        check("BlockCbc<Sm4>", BlockCbc::<sm4::Sm4>::new, &[]);
        check(
            "BlockCbc<Camellia128>",
            BlockCbc::<camellia::Camellia128>::new,
            &[],
        );
    }

    /// CBC-CS3 takes units of any length from 16 bytes: a 33-byte one here.
    #[test]
    fn cts_key_init_builds_what_new_builds() {
        fn name<C: KeyInit + DataUnitCipher<Iv = Iv> + ZeroizeOnDrop>(key: &[u8]) -> Vec<u8> {
            let mut name = painted(33, 5);
            C::new_from_slice(key)
                .unwrap()
                .encrypt_unit(Iv::ZERO, &mut name)
                .unwrap();
            name
        }
        for key_len in [16, 32] {
            let key = painted(key_len, 6);
            let mut want = painted(33, 5);
            if key_len == 16 {
                AesCtsCbc128::new(&key)
                    .unwrap()
                    .encrypt(Iv::ZERO, &mut want)
                    .unwrap();
                assert_eq!(name::<AesCtsCbc128>(&key), want);
                assert!(<AesCtsCbc128 as KeyInit>::new_from_slice(&[0; 32]).is_err());
            } else {
                AesCtsCbc256::new(&key)
                    .unwrap()
                    .encrypt(Iv::ZERO, &mut want)
                    .unwrap();
                assert_eq!(name::<AesCtsCbc256>(&key), want);
                assert!(<AesCtsCbc256 as TryKeyInit>::new_from_slice(&[0; 16]).is_err());
            }
        }
    }
}
