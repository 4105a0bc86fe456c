//! XTS over the other 128-bit block ciphers of dm-crypt and LUKS
//! (`BlockXts`): the xts-mode crate over the same RustCrypto cipher at
//! every unit length from 16 to 100 bytes and at sector sizes, batched
//! requests against one unit at a time, the mdu-core harness, and the key
//! rules. The kernel's own vectors are in `block_vectors.rs`.

use mdu_core::testing::{self, Rng};
use mdu_xts::{BlockXts, DataUnits, Iv, SetupError};
use serpent::cipher::KeyInit;
use xts_mode::Xts128;

/// The harness runs once, on Camellia-128 (the fastest of these ciphers
/// here; under a user-mode emulator not at all, as the generic path is
/// architecture-independent code, and the AES types run it there): the request handling it checks is the same generic code for
/// every cipher, and each cipher is checked against the oracle at every
/// length.
///
/// For one cipher type: every check of this file, with keys of each
/// length in `$key_lens` (K1 || K2).
macro_rules! every_check {
    ($name:ident, $cipher:ty, $key_lens:expr, harness: $harness:expr) => {
        #[test]
        fn $name() {
            let mut rng = Rng::new(u64::from(line!()));
            for key_len in $key_lens {
                let key = rng.bytes(key_len);
                let (k1, k2) = key.split_at(key_len / 2);
                let xts = BlockXts::<$cipher>::new(&key).unwrap();
                let oracle = Xts128::<$cipher>::new(
                    <$cipher>::new_from_slice(k1).unwrap(),
                    <$cipher>::new_from_slice(k2).unwrap(),
                );
                // Every length from one block to six and a quarter, and
                // sector sizes, whole and not: the same bytes as xts-mode.
                let lens = (16..=100).chain([512, 512 + 7, 4096, 4096 + 15]);
                for len in lens {
                    let plain = rng.bytes(len);
                    let iv = Iv::from_u128(rng.next_u64() as u128 | (rng.next_u64() as u128) << 64);
                    let mut want = plain.clone();
                    oracle.encrypt_sector(&mut want, iv.0.into());
                    let mut got = plain.clone();
                    xts.encrypt(iv, &mut got).unwrap();
                    assert!(
                        got == want,
                        "{} {key_len}-byte key, {len} bytes: encrypt",
                        stringify!($cipher)
                    );
                    xts.decrypt(iv, &mut got).unwrap();
                    assert!(
                        got == plain,
                        "{} {key_len}-byte key, {len} bytes: decrypt",
                        stringify!($cipher)
                    );
                }
                // Batched (the auto-splitter) against one unit at a time,
                // with an IV step, both directions.
                let units = DataUnits::new(&xts, 512).unwrap().with_iv_step(8);
                let plain = rng.bytes(9 * 512);
                let first = Iv::plain64(u64::MAX - 20);
                let mut got = plain.clone();
                units.encrypt(first, &mut got).unwrap();
                let mut want = plain.clone();
                for (i, unit) in want.chunks_mut(512).enumerate() {
                    oracle.encrypt_sector(unit, first.advance(8 * i as u128).0.into());
                }
                assert!(got == want, "{}: batched encrypt", stringify!($cipher));
                units.decrypt(first, &mut got).unwrap();
                assert!(got == plain, "{}: batched decrypt", stringify!($cipher));
                // The harness (every size, count, split and error), with
                // the cipher's own key size: the mode's code is the same
                // for every key length.
                if $harness
                    && key_len == BlockXts::<$cipher>::KEY_LEN
                    && !testing::sample::skipped_under_emulation(
                        stringify!($name),
                        "harness runs",
                        "the generic block-cipher path is architecture-independent",
                    )
                {
                    let report = testing::check_cipher(&xts);
                    assert_eq!(report.skipped_sizes, 0, "{report:?}");
                    assert!(report.requests > 1000, "{report:?}");
                }
                // Clones encrypt alike; Debug shows no key byte.
                let mut a = plain.clone();
                let mut b = plain.clone();
                xts.encrypt(first, &mut a).unwrap();
                xts.clone().encrypt(first, &mut b).unwrap();
                assert_eq!(a, b);
                let debug = format!("{xts:?}");
                assert!(debug.starts_with("BlockXts"), "{debug}");
                assert!(
                    !debug.contains(&format!("{}", key[0])) || key[0] < 10,
                    "{debug}"
                );
            }
        }
    };
}

every_check!(serpent_matches_xts_mode, serpent::Serpent, [32, 48, 64], harness: false);
every_check!(twofish_matches_xts_mode, twofish::Twofish, [32, 48, 64], harness: false);
every_check!(sm4_matches_xts_mode, sm4::Sm4, [32], harness: false);
every_check!(camellia128_matches_xts_mode, camellia::Camellia128, [32], harness: true);
every_check!(camellia192_matches_xts_mode, camellia::Camellia192, [48], harness: false);
every_check!(camellia256_matches_xts_mode, camellia::Camellia256, [64], harness: false);

#[test]
fn keys_the_cipher_refuses_and_equal_halves_are_refused() {
    // An odd length, and halves Serpent refuses (16 to 32 bytes each).
    for len in [0, 30, 31, 33, 65, 66, 80] {
        assert_eq!(
            BlockXts::<serpent::Serpent>::new(&vec![1u8; len]).unwrap_err(),
            SetupError::InvalidKeyLength { len, expected: 32 },
            "{len}"
        );
    }
    // SM4 takes 16-byte keys only.
    for len in [16, 30, 34, 64] {
        assert!(matches!(
            BlockXts::<sm4::Sm4>::new(&vec![1u8; len]),
            Err(SetupError::InvalidKeyLength { expected: 32, .. })
        ));
    }
    for len in [32, 48, 64] {
        let weak = vec![9u8; len];
        assert!(matches!(
            BlockXts::<twofish::Twofish>::new(&weak),
            Err(SetupError::WeakKey { .. })
        ));
        assert!(BlockXts::<twofish::Twofish>::new_allow_weak_key(&weak).is_ok());
    }
    let msg = BlockXts::<sm4::Sm4>::new(&[3; 32]).unwrap_err().to_string();
    assert!(msg.contains("halves are equal"), "{msg}");
}

#[test]
fn short_units_are_refused_untouched() {
    let key: Vec<u8> = (0..64).collect();
    let xts = BlockXts::<serpent::Serpent>::new(&key).unwrap();
    let mut short = [5u8; 15];
    assert!(xts.encrypt(Iv::ZERO, &mut short).is_err());
    assert!(xts.decrypt(Iv::ZERO, &mut short).is_err());
    assert_eq!(short, [5u8; 15]);
}
