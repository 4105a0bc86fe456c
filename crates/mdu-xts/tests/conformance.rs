//! The shared conformance checks (`mdu_aes::testing`) on both key sizes:
//! the mdu-core harness on every backend, refused key lengths and backends,
//! `Debug`, clones; and what is XTS's own: equal halves, and every invalid
//! request's error with an untouched buffer.

mod common;

use common::note_backend;
use mdu_aes::testing;
use mdu_xts::{
    Backend, DataUnitCipher, DataUnitSize, DataUnits, Direction, Error, Iv, SetupError, XtsAes128,
    XtsAes256,
};

fn key(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Under qemu (`.ci/qemu-aarch64.toml` sets `MDU_REQUIRE_ARM64_BACKENDS`),
/// the suite must run the arm64 backend, never silently the portable one.
#[test]
fn arm64_runs_the_crypto_extensions_backend_when_required() {
    testing::arm64_backend_runs_when_required::<XtsAes256>();
}

#[test]
fn harness_xts_aes128_every_backend() {
    testing::harness_on_every_backend::<XtsAes128>(1, 0);
}

#[test]
fn harness_xts_aes256_every_backend() {
    testing::harness_on_every_backend::<XtsAes256>(2, 0);
}

#[test]
fn key_length_errors() {
    testing::key_lengths_are_refused::<XtsAes128>();
    testing::key_lengths_are_refused::<XtsAes256>();
    // The constructors that accept equal halves check the length too.
    for len in [0, 1, 16, 31, 33, 48, 63, 64, 65, 128] {
        for &b in Backend::available() {
            note_backend("key_length_errors", b);
            if len != 32 {
                assert_eq!(
                    XtsAes128::with_backend_allow_weak_key(&key(len, 3), b).unwrap_err(),
                    SetupError::InvalidKeyLength { len, expected: 32 }
                );
            }
        }
    }
}

#[test]
fn equal_halves_are_weak() {
    for seed in [0u8, 1, 0xff] {
        let half = key(32, seed);
        let k = [half.clone(), half].concat();
        assert!(matches!(
            XtsAes256::new(&k),
            Err(SetupError::WeakKey { .. })
        ));
        let k128 = [&k[..16], &k[..16]].concat();
        assert!(matches!(
            XtsAes128::new(&k128),
            Err(SetupError::WeakKey { .. })
        ));
        let msg = XtsAes128::new(&k128).unwrap_err().to_string();
        assert!(msg.contains("halves are equal"), "{msg}");
        for &b in Backend::available() {
            note_backend("equal_halves_are_weak", b);
            assert!(matches!(
                XtsAes256::with_backend(&k, b),
                Err(SetupError::WeakKey { .. })
            ));
            assert_eq!(
                XtsAes256::with_backend_allow_weak_key(&k, b)
                    .unwrap()
                    .backend(),
                b
            );
        }
        assert!(XtsAes256::new_allow_weak_key(&k).is_ok());
    }
    // Halves that differ in one bit of the last byte are accepted.
    let mut k = [9u8; 64];
    k[63] ^= 1;
    assert!(XtsAes256::new(&k).is_ok());
}

#[test]
fn unavailable_backend_is_an_error() {
    testing::unavailable_backends_are_refused::<XtsAes128>("mdu-xts");
    testing::unavailable_backends_are_refused::<XtsAes256>("mdu-xts");
}

#[test]
fn debug_prints_no_key_bytes() {
    testing::debug_prints_no_key_bytes::<XtsAes128>("XtsAes128");
    testing::debug_prints_no_key_bytes::<XtsAes256>("XtsAes256");
}

#[test]
fn a_clone_encrypts_like_the_original() {
    testing::a_clone_encrypts_like_the_original::<XtsAes128>();
    testing::a_clone_encrypts_like_the_original::<XtsAes256>();
}

#[test]
fn bad_requests_leave_buffers_unchanged() {
    for &b in Backend::available() {
        note_backend("bad_requests_leave_buffers_unchanged", b);
        let x = XtsAes256::with_backend(&key(64, 5), b).unwrap();
        let orig: Vec<u8> = (0..200u8).collect();
        let mut buf = orig.clone();
        for len in [0usize, 1, 15] {
            let want = Error::UnitSizeOutOfRange {
                size: len,
                min: 16,
                max: 16 << 20,
            };
            assert_eq!(x.encrypt(Iv::ZERO, &mut buf[..len]), Err(want), "{b:?}");
            assert_eq!(x.decrypt(Iv::ZERO, &mut buf[..len]), Err(want), "{b:?}");
            assert_eq!(
                x.encrypt_unit(Iv::ZERO, &mut buf[..len]),
                Err(want),
                "{b:?}"
            );
            assert_eq!(
                x.decrypt_unit(Iv::ZERO, &mut buf[..len]),
                Err(want),
                "{b:?}"
            );
        }
        assert_eq!(buf, orig);

        // Too long for one message: 16 MiB + 1 (IEEE 1619 allows 2^20 blocks).
        let mut big = vec![7u8; (16 << 20) + 1];
        let want = Error::UnitSizeOutOfRange {
            size: big.len(),
            min: 16,
            max: 16 << 20,
        };
        assert_eq!(x.encrypt(Iv::ZERO, &mut big), Err(want));
        assert_eq!(x.decrypt(Iv::ZERO, &mut big), Err(want));
        assert!(big.iter().all(|&v| v == 7));
        assert!(x.encrypt(Iv::ZERO, &mut big[..16 << 20]).is_ok());

        let unit = DataUnitSize::new(32).unwrap();
        for len in [0usize, 16, 31, 33, 48, 95] {
            let want = if len == 0 {
                Error::EmptyRequest
            } else {
                Error::LengthNotMultiple { len, unit: 32 }
            };
            assert_eq!(
                x.encrypt_units(Iv::ZERO, 1, unit, &mut buf[..len]),
                Err(want)
            );
            assert_eq!(
                x.decrypt_units(Iv::ZERO, 1, unit, &mut buf[..len]),
                Err(want)
            );
            let src = orig[..len].to_vec();
            let mut dst = buf[..len].to_vec();
            assert_eq!(
                x.crypt_units_to(Direction::Encrypt, Iv::ZERO, 1, unit, &src, &mut dst),
                Err(want)
            );
            assert_eq!(
                x.crypt_units_to(Direction::Decrypt, Iv::ZERO, 1, unit, &src, &mut dst),
                Err(want)
            );
            assert_eq!(dst, orig[..len]);
        }
        assert_eq!(buf, orig);

        // Out of place with different lengths.
        let mut dst = vec![1u8; 96];
        let want = Error::LengthMismatch { src: 64, dst: 96 };
        assert_eq!(
            x.crypt_units_to(Direction::Encrypt, Iv::ZERO, 1, unit, &orig[..64], &mut dst),
            Err(want)
        );
        assert_eq!(
            x.crypt_units_to(Direction::Decrypt, Iv::ZERO, 1, unit, &orig[..64], &mut dst),
            Err(want)
        );
        assert!(dst.iter().all(|&v| v == 1));

        // Unit sizes out of range through DataUnits.
        for size in [0usize, 15, (16 << 20) + 1] {
            assert_eq!(
                DataUnits::new(&x, size).unwrap_err(),
                Error::UnitSizeOutOfRange {
                    size,
                    min: 16,
                    max: 16 << 20
                }
            );
        }
        let units = DataUnits::new(&x, 48).unwrap();
        assert_eq!(
            units.encrypt(Iv::ZERO, &mut buf[..100]),
            Err(Error::LengthNotMultiple { len: 100, unit: 48 })
        );
        assert_eq!(
            units.decrypt(Iv::ZERO, &mut buf[..0]),
            Err(Error::EmptyRequest)
        );
        assert_eq!(buf, orig);
    }
}

#[cfg(feature = "rayon")]
#[test]
fn par_encrypt_matches_encrypt_on_every_backend() {
    let plain: Vec<u8> = (0..(3 << 20) + 4096 * 3)
        .map(|i| (i * 7 + i / 4096) as u8)
        .collect();
    for &b in Backend::available() {
        note_backend("par_encrypt_matches_encrypt_on_every_backend", b);
        let units = DataUnits::new(XtsAes256::with_backend(&key(64, 6), b).unwrap(), 4096)
            .unwrap()
            .with_iv_step(8);
        let iv = Iv::from_u128((1u128 << 64) - 100);
        let mut a = plain.clone();
        let mut p = plain.clone();
        units.encrypt(iv, &mut a).unwrap();
        units.par_encrypt(iv, &mut p).unwrap();
        assert!(a == p, "{b:?}: par_encrypt differs from encrypt");
        units.par_decrypt(iv, &mut p).unwrap();
        assert!(p == plain, "{b:?}: par_decrypt does not invert");
        assert_eq!(
            units.par_encrypt(iv, &mut p[..4097]),
            Err(Error::LengthNotMultiple {
                len: 4097,
                unit: 4096
            })
        );
        assert!(p == plain);
    }
}

mod key_traits {
    //! RustCrypto's key traits on the XTS cipher types: `TryKeyInit` builds
    //! the cipher `new` builds (the same bytes) and refuses what `new`
    //! refuses (a wrong length, equal key halves); `KeySizeUser` is the whole
    //! key; code generic over `TryKeyInit + DataUnitCipher` takes every type.

    use mdu_xts::crypto_common::{KeySizeUser, TryKeyInit};
    use mdu_xts::{BlockXts, DataUnitCipher, DataUnits, Iv, SetupError, XtsAes128, XtsAes256};
    use zeroize::ZeroizeOnDrop;

    /// Bytes with period 251, none repeated within a key, so the two halves
    /// of a key always differ.
    fn painted(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i % 251) as u8 ^ seed.wrapping_mul(17))
            .collect()
    }

    /// Three 512-byte sectors from sector 7 under `cipher`, as generic code
    /// over the RustCrypto construction would run them.
    fn sectors<C: DataUnitCipher<Iv = Iv>>(cipher: C) -> Vec<u8> {
        let mut buf = painted(3 * 512, 1);
        DataUnits::new(cipher, 512)
            .unwrap()
            .encrypt(Iv::plain64(7), &mut buf)
            .unwrap();
        buf
    }

    /// What every type is checked for: built through `TryKeyInit` from a key
    /// of `key_size()` bytes, it encrypts as the type's own `new` does; a
    /// key one byte short or long, an empty one and one with equal halves
    /// are refused by both.
    fn check<C>(name: &str, new: impl Fn(&[u8]) -> Result<C, SetupError>)
    where
        C: TryKeyInit + DataUnitCipher<Iv = Iv> + ZeroizeOnDrop,
    {
        let n = C::key_size();
        let key = painted(n, 2);
        let through_trait = C::new_from_slice(&key).expect("a strong key of the right length");
        assert_eq!(
            sectors(through_trait),
            sectors(new(&key).unwrap()),
            "{name}"
        );
        let fixed = <C as TryKeyInit>::new(key.as_slice().try_into().unwrap()).unwrap();
        assert_eq!(sectors(fixed), sectors(new(&key).unwrap()), "{name}");
        for bad in [n - 1, n + 1, 0] {
            let key = painted(bad, 3);
            assert!(C::new_from_slice(&key).is_err(), "{name}: {bad} bytes");
            assert!(
                matches!(new(&key), Err(SetupError::InvalidKeyLength { .. })),
                "{name}: {bad} bytes"
            );
        }
        let mut weak = painted(n / 2, 4);
        weak.extend_from_within(..);
        assert!(C::new_from_slice(&weak).is_err(), "{name}: equal halves");
        assert!(
            matches!(new(&weak), Err(SetupError::WeakKey { .. })),
            "{name}: equal halves"
        );
    }

    #[test]
    fn try_key_init_builds_what_new_builds_and_refuses_what_new_refuses() {
        assert_eq!(XtsAes128::key_size(), 32);
        assert_eq!(XtsAes256::key_size(), 64);
        check("XtsAes128", XtsAes128::new);
        check("XtsAes256", XtsAes256::new);
        assert_eq!(BlockXts::<serpent::Serpent>::key_size(), 32);
        check("BlockXts<Serpent>", BlockXts::<serpent::Serpent>::new);
        check("BlockXts<Twofish>", BlockXts::<twofish::Twofish>::new);
        check("BlockXts<Sm4>", BlockXts::<sm4::Sm4>::new);
        check(
            "BlockXts<Camellia256>",
            BlockXts::<camellia::Camellia256>::new,
        );
    }

    /// `new_from_slice` of `BlockXts` takes every key length its `new` takes:
    /// two Serpent keys of 24 bytes, not only of the nominal 16.
    #[test]
    fn block_xts_takes_the_key_lengths_of_its_cipher() {
        let key = painted(48, 5);
        let xts = BlockXts::<serpent::Serpent>::new_from_slice(&key).unwrap();
        assert_eq!(
            sectors(xts),
            sectors(BlockXts::<serpent::Serpent>::new(&key).unwrap())
        );
    }
}
