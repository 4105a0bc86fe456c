//! The mdu-core conformance harness, the key lengths refused (the shared
//! check of `mdu_aes::testing`; Adiantum has no choice of backend), the
//! lengths Adiantum refuses, round trips at every length, and the wide-block property (one changed bit of
//! the message or of the tweak changes the whole output).

use mdu_adiantum::{Adiantum, DataUnitCipher, DataUnitSize, DataUnits, Error, Iv, SetupError};
use mdu_aes::testing;
use proptest::prelude::*;

fn key(seed: u8) -> [u8; 32] {
    core::array::from_fn(|i| (i as u8).wrapping_mul(29).wrapping_add(seed))
}

fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i % 251) as u8).wrapping_mul(7).wrapping_add(seed))
        .collect()
}

/// Bytes at which `a` and `b` agree.
fn equal_bytes(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x == y).count()
}

/// `a` and `b` (outputs of the same length) look unrelated: every whole
/// 16-byte block differs, and no more bytes agree than chance allows
/// (1 in 256 expected; the bound is loose and the inputs are fixed).
fn assert_unrelated(a: &[u8], b: &[u8], what: &str) {
    for (i, (x, y)) in a.chunks_exact(16).zip(b.chunks_exact(16)).enumerate() {
        assert_ne!(x, y, "{what}: block {i} unchanged");
    }
    let same = equal_bytes(a, b);
    assert!(
        same <= 4 + a.len() / 32,
        "{what}: {same} of {} bytes unchanged",
        a.len()
    );
}

#[test]
fn harness_with_two_keys() {
    for seed in [1u8, 2] {
        let a = Adiantum::new(&key(seed)).unwrap();
        let report = mdu_core::testing::check_cipher_seeded(&a, u64::from(seed) << 8 | 0xad);
        // Every harness size (16, 17, 31, 512, 4096, 4112) is a valid unit.
        assert_eq!(report.skipped_sizes, 0, "{report:?}");
        assert!(report.requests > 1000, "{report:?}");
    }
}

#[test]
fn short_and_empty_units_are_refused_and_left_unchanged() {
    let a = Adiantum::new(&key(3)).unwrap();
    for len in [0usize, 1, 15] {
        let mut buf = vec![0xa5u8; len];
        let want = Error::UnitSizeOutOfRange {
            size: len,
            min: 16,
            max: DataUnitSize::MAX,
        };
        assert_eq!(a.encrypt(Iv::ZERO, &mut buf), Err(want), "{len}");
        assert_eq!(a.decrypt(Iv::ZERO, &mut buf), Err(want), "{len}");
        assert_eq!(a.encrypt_with_tweak(&[], &mut buf), Err(want), "{len}");
        assert_eq!(a.decrypt_with_tweak(&[1; 17], &mut buf), Err(want), "{len}");
        assert_eq!(a.encrypt_unit(Iv::ZERO, &mut buf), Err(want), "{len}");
        assert_eq!(buf, vec![0xa5u8; len]);
    }
}

#[test]
fn units_over_16_mib_are_refused_and_the_largest_round_trips() {
    let a = Adiantum::new(&key(4)).unwrap();
    let mut buf = vec![0x3cu8; DataUnitSize::MAX + 1];
    assert!(matches!(
        a.encrypt(Iv::ZERO, &mut buf),
        Err(Error::UnitSizeOutOfRange { size, .. }) if size == DataUnitSize::MAX + 1
    ));
    assert!(a.decrypt(Iv::ZERO, &mut buf).is_err());
    assert!(buf.iter().all(|&b| b == 0x3c));

    let max = &mut buf[..DataUnitSize::MAX];
    a.encrypt(Iv([9; 32]), max).unwrap();
    assert!(equal_bytes(max, &vec![0x3c; max.len()]) < max.len() / 128);
    a.decrypt(Iv([9; 32]), max).unwrap();
    assert!(max.iter().all(|&b| b == 0x3c));
}

#[test]
fn key_length_errors_name_the_lengths() {
    testing::key_lengths_are_refused_by("Adiantum", 32, Adiantum::new);
    for len in [0usize, 16, 31, 33, 64] {
        let err = Adiantum::new(&vec![1; len]).unwrap_err();
        assert_eq!(err, SetupError::InvalidKeyLength { len, expected: 32 });
        assert!(err.to_string().contains("needs exactly 32"), "{err}");
    }
}

/// Flipping one bit of the plaintext (in the bulk or in the AES block) or
/// of the tweak changes the whole ciphertext, and one bit of the
/// ciphertext the whole plaintext.
#[test]
fn one_changed_bit_changes_the_whole_output() {
    let a = Adiantum::new(&key(5)).unwrap();
    let tweak = Iv([0x11; 32]);
    for len in [16usize, 17, 31, 32, 255, 1040, 4096] {
        let pt = bytes(len, len as u8);
        let mut ct = pt.clone();
        a.encrypt(tweak, &mut ct).unwrap();
        for bit in [0, 7 * 8 + 3, (len - 16) * 8, (len - 1) * 8 + 7] {
            let what = format!("len {len}, plaintext bit {bit}");
            let mut other = pt.clone();
            other[bit / 8] ^= 1 << (bit % 8);
            a.encrypt(tweak, &mut other).unwrap();
            assert_unrelated(&ct, &other, &what);

            let what = format!("len {len}, ciphertext bit {bit}");
            let mut other = ct.clone();
            other[bit / 8] ^= 1 << (bit % 8);
            a.decrypt(tweak, &mut other).unwrap();
            assert_unrelated(&pt, &other, &what);
        }
        for byte in [0usize, 7, 8, 15, 16, 23, 24, 31] {
            let what = format!("len {len}, tweak byte {byte}");
            let mut t = tweak;
            t.0[byte] ^= 0x40;
            let mut other = pt.clone();
            a.encrypt(t, &mut other).unwrap();
            assert_unrelated(&ct, &other, &what);
        }
    }
}

/// Different keys, different ciphertexts; equal keys, equal ones.
#[test]
fn the_key_changes_everything_and_a_clone_changes_nothing() {
    let pt = bytes(4096, 1);
    let a = Adiantum::new(&key(6)).unwrap();
    let mut k = key(6);
    k[31] ^= 1;
    let b = Adiantum::new(&k).unwrap();
    let (mut x, mut y) = (pt.clone(), pt.clone());
    a.encrypt(Iv::ZERO, &mut x).unwrap();
    b.encrypt(Iv::ZERO, &mut y).unwrap();
    assert_unrelated(&x, &y, "key bit");

    let c = a.clone();
    drop(a);
    let mut z = pt.clone();
    c.encrypt(Iv::ZERO, &mut z).unwrap();
    assert_eq!(x, z);
}

#[test]
fn debug_prints_no_key_material() {
    let s = format!("{:?}", Adiantum::new(&[0xab; 32]).unwrap());
    assert!(s.starts_with("Adiantum"), "{s}");
    assert!(
        !s.contains("171") && !s.to_lowercase().contains("ab, ab"),
        "{s}"
    );
}

/// `DataUnits` over Adiantum: 4 KiB fscrypt blocks, tweaks counting up
/// through all 32 bytes, the same bytes as one call per block.
#[test]
fn batched_blocks_match_one_call_per_block() {
    let a = Adiantum::new(&key(7)).unwrap();
    let units = DataUnits::new(&a, 4096).unwrap();
    let first = Iv::<32>::from_low_u128(u128::MAX - 1);
    let pt = bytes(5 * 4096, 2);
    let mut batched = pt.clone();
    units.encrypt(first, &mut batched).unwrap();
    let mut single = pt.clone();
    for (i, block) in single.chunks_mut(4096).enumerate() {
        a.encrypt(first.advance(i as u128), block).unwrap();
    }
    assert_eq!(batched, single);
    units.decrypt(first, &mut batched).unwrap();
    assert_eq!(batched, pt);
}

proptest! {
    #[test]
    fn round_trip_any_length_and_tweak(
        len in 16usize..=4096,
        seed in any::<u8>(),
        tweak in any::<[u8; 32]>(),
        k in any::<[u8; 32]>(),
    ) {
        let a = Adiantum::new(&k).unwrap();
        let pt = bytes(len, seed);
        let mut buf = pt.clone();
        a.encrypt_unit(Iv(tweak), &mut buf).unwrap();
        prop_assert_eq!(buf.len(), len);
        prop_assert!(buf != pt);
        a.decrypt_unit(Iv(tweak), &mut buf).unwrap();
        prop_assert_eq!(buf, pt);
    }
}

mod key_traits {
    //! RustCrypto's key traits on Adiantum: `KeyInit` and `TryKeyInit` build
    //! the cipher `new` builds (the same bytes) and refuse a key of another
    //! length; code generic over `KeyInit + DataUnitCipher` takes it.

    use mdu_adiantum::crypto_common::{KeyInit, KeySizeUser, TryKeyInit};
    use mdu_adiantum::{Adiantum, DataUnitCipher, DataUnits, Iv, KEY_LEN, TWEAK_LEN};
    use zeroize::ZeroizeOnDrop;

    /// Bytes with period 251.
    fn painted(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ seed.wrapping_mul(17))
            .collect()
    }

    /// Three 4 KiB units from tweak 7, built from `key` through `KeyInit`.
    fn units<C>(key: &[u8]) -> Option<Vec<u8>>
    where
        C: KeyInit + DataUnitCipher<Iv = Iv<TWEAK_LEN>> + ZeroizeOnDrop,
    {
        let mut buf = painted(3 * 4096, 1);
        DataUnits::new(C::new_from_slice(key).ok()?, 4096)
            .unwrap()
            .encrypt(Iv::from_low_u128(7), &mut buf)
            .unwrap();
        Some(buf)
    }

    #[test]
    fn key_init_builds_what_new_builds_and_refuses_other_lengths() {
        assert_eq!(Adiantum::key_size(), KEY_LEN);
        let key = painted(KEY_LEN, 2);
        let mut want = painted(3 * 4096, 1);
        DataUnits::new(Adiantum::new(&key).unwrap(), 4096)
            .unwrap()
            .encrypt(Iv::from_low_u128(7), &mut want)
            .unwrap();
        assert_eq!(units::<Adiantum>(&key), Some(want.clone()));
        let array = key.as_slice().try_into().unwrap();
        let mut again = painted(3 * 4096, 1);
        DataUnits::new(<Adiantum as TryKeyInit>::new(array).unwrap(), 4096)
            .unwrap()
            .encrypt(Iv::from_low_u128(7), &mut again)
            .unwrap();
        assert_eq!(again, want);
        for bad in [KEY_LEN - 1, KEY_LEN + 1, 0, 16] {
            let key = painted(bad, 3);
            assert_eq!(units::<Adiantum>(&key), None, "{bad} bytes");
            assert!(
                <Adiantum as TryKeyInit>::new_from_slice(&key).is_err(),
                "{bad} bytes"
            );
            assert!(Adiantum::new(&key).is_err(), "{bad} bytes");
        }
    }
}
