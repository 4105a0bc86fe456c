//! The shared conformance checks (`mdu_aes::testing`) on both key sizes:
//! the mdu-core harness on every AES backend, refused key lengths and
//! backends, `Debug`, clones; and what is HCTR2's own: the lengths it
//! refuses, round trips at every length, and the wide-block property (one
//! changed bit anywhere changes every byte).

use mdu_aes::testing;
use mdu_hctr2::{Backend, DataUnitCipher, Error, Hctr2Aes128, Hctr2Aes256, Iv};
use proptest::prelude::*;

fn key(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed))
        .collect()
}

/// Under qemu (`.ci/qemu-aarch64.toml` sets `MDU_REQUIRE_ARM64_BACKENDS`),
/// the suite must run the arm64 AES backend, never silently the portable
/// one.
#[test]
fn arm64_runs_the_crypto_extensions_backend_when_required() {
    testing::arm64_backend_runs_when_required::<Hctr2Aes256>();
}

#[test]
fn harness_on_every_backend_and_both_key_sizes() {
    testing::harness_on_every_backend::<Hctr2Aes128>(1, 0);
    testing::harness_on_every_backend::<Hctr2Aes256>(2, 0);
}

#[test]
fn key_length_errors() {
    testing::key_lengths_are_refused::<Hctr2Aes128>();
    testing::key_lengths_are_refused::<Hctr2Aes256>();
}

/// HCTR2 runs on the backends of batched AES: their errors name mdu-aes.
#[test]
fn unavailable_backend_is_an_error() {
    testing::unavailable_backends_are_refused::<Hctr2Aes128>("mdu-aes");
    testing::unavailable_backends_are_refused::<Hctr2Aes256>("mdu-aes");
}

#[test]
fn debug_prints_no_key_bytes() {
    testing::debug_prints_no_key_bytes::<Hctr2Aes128>("Hctr2");
    testing::debug_prints_no_key_bytes::<Hctr2Aes256>("Hctr2");
}

#[test]
fn a_clone_encrypts_like_the_original() {
    testing::a_clone_encrypts_like_the_original::<Hctr2Aes128>();
    testing::a_clone_encrypts_like_the_original::<Hctr2Aes256>();
}

#[test]
fn every_backend_gives_the_generic_bytes() {
    let generic = Hctr2Aes256::with_backend(&key(32, 3), Backend::Generic).unwrap();
    for &backend in Backend::available() {
        let c = Hctr2Aes256::with_backend(&key(32, 3), backend).unwrap();
        // Up to 5000 bytes: past the 4 KiB keystream batch.
        for len in (16..=5000).step_by(37).chain([4096, 4097, 4112]) {
            let pt: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
            let tweak = Iv::<32>::from_low_u128(len as u128 * 0x1_0000_0001);
            let (mut a, mut b) = (pt.clone(), pt.clone());
            generic.encrypt(tweak, &mut a).unwrap();
            c.encrypt(tweak, &mut b).unwrap();
            assert_eq!(a, b, "{backend} len {len}");
            c.decrypt(tweak, &mut b).unwrap();
            assert_eq!(b, pt, "{backend} len {len}");
        }
    }
}

#[test]
fn short_units_are_refused_and_left_unchanged() {
    let c = Hctr2Aes256::new(&key(32, 4)).unwrap();
    for len in [0usize, 1, 15] {
        let mut buf = vec![0xa5u8; len];
        let e = c.encrypt(Iv::ZERO, &mut buf).unwrap_err();
        assert!(matches!(e, Error::UnitSizeOutOfRange { size, min: 16, .. } if size == len));
        assert!(c.decrypt(Iv::ZERO, &mut buf).is_err());
        assert!(c.encrypt_with_tweak(&[], &mut buf).is_err());
        assert_eq!(buf, vec![0xa5u8; len]);
    }
}

/// Flipping one bit of the plaintext or of the tweak changes every
/// 16-byte block of the ciphertext.
#[test]
fn wide_block_one_bit_changes_every_block() {
    let c = Hctr2Aes256::new(&key(32, 5)).unwrap();
    for len in [16usize, 17, 31, 32, 255, 4096] {
        let pt: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let mut base = pt.clone();
        c.encrypt(Iv::ZERO, &mut base).unwrap();
        for bit in [0, 7 * 8, (len - 1) * 8 + 7] {
            let mut flipped = pt.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            c.encrypt(Iv::ZERO, &mut flipped).unwrap();
            for (i, (a, b)) in base.chunks(16).zip(flipped.chunks(16)).enumerate() {
                assert_ne!(a, b, "len {len} bit {bit} block {i}");
            }
        }
        for byte in [0usize, 15, 16, 31] {
            let mut tweak = [0u8; 32];
            tweak[byte] = 0x80;
            let mut other = pt.clone();
            c.encrypt(Iv(tweak), &mut other).unwrap();
            for (i, (a, b)) in base.chunks(16).zip(other.chunks(16)).enumerate() {
                assert_ne!(a, b, "len {len} tweak byte {byte} block {i}");
            }
        }
    }
}

proptest! {
    #[test]
    fn round_trip_any_length_and_tweak(
        pt in proptest::collection::vec(any::<u8>(), 16..=600),
        tweak in any::<[u8; 32]>(),
        k in any::<[u8; 32]>(),
    ) {
        let c = Hctr2Aes256::new(&k).unwrap();
        let mut buf = pt.clone();
        c.encrypt_unit(Iv(tweak), &mut buf).unwrap();
        prop_assert_eq!(buf.len(), pt.len());
        c.decrypt_unit(Iv(tweak), &mut buf).unwrap();
        prop_assert_eq!(buf, pt);
    }
}

mod key_traits {
    //! RustCrypto's key traits on the HCTR2 cipher types: `KeyInit` and
    //! `TryKeyInit` build the cipher `new` builds (the same bytes) and refuse
    //! a key of another length; code generic over `KeyInit + DataUnitCipher`
    //! takes both types.

    use mdu_hctr2::crypto_common::{KeyInit, KeySizeUser, TryKeyInit};
    use mdu_hctr2::{
        DataUnitCipher, DataUnits, Hctr2Aes128, Hctr2Aes256, Iv, SetupError, TWEAK_LEN,
    };
    use zeroize::ZeroizeOnDrop;

    /// Bytes with period 251.
    fn painted(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ seed.wrapping_mul(17))
            .collect()
    }

    /// Three 4 KiB units from tweak 7 under `cipher`.
    fn units<C: DataUnitCipher<Iv = Iv<TWEAK_LEN>>>(cipher: C) -> Vec<u8> {
        let mut buf = painted(3 * 4096, 1);
        DataUnits::new(cipher, 4096)
            .unwrap()
            .encrypt(Iv::from_low_u128(7), &mut buf)
            .unwrap();
        buf
    }

    fn check<C>(name: &str, new: impl Fn(&[u8]) -> Result<C, SetupError>)
    where
        C: KeyInit + TryKeyInit + DataUnitCipher<Iv = Iv<TWEAK_LEN>> + ZeroizeOnDrop,
    {
        let n = <C as KeySizeUser>::key_size();
        let key = painted(n, 2);
        let want = units(new(&key).unwrap());
        assert_eq!(
            units(<C as KeyInit>::new_from_slice(&key).unwrap()),
            want,
            "{name}"
        );
        let array = key.as_slice().try_into().unwrap();
        assert_eq!(units(<C as KeyInit>::new(array)), want, "{name}");
        assert_eq!(
            units(<C as TryKeyInit>::new(array).unwrap()),
            want,
            "{name}"
        );
        for bad in [n - 1, n + 1, 0, 24] {
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
    }

    #[test]
    fn key_init_builds_what_new_builds_and_refuses_other_lengths() {
        assert_eq!(Hctr2Aes128::key_size(), 16);
        assert_eq!(Hctr2Aes256::key_size(), 32);
        check("Hctr2Aes128", Hctr2Aes128::new);
        check("Hctr2Aes256", Hctr2Aes256::new);
    }
}
