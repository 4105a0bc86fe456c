//! CBC over the other 128-bit block ciphers of dm-crypt and LUKS
//! (`BlockCbc`): a CBC chain written here over the same RustCrypto cipher
//! at every whole-block length up to 20 blocks and at sector sizes,
//! batched requests against one unit at a time, the mdu-core harness, and
//! the key rules. The kernel's own vectors are in `block_vectors.rs`.

use mdu_cbc::{BlockCbc, DataUnits, Iv, SetupError};
use mdu_core::testing::{self, Rng};
use serpent::cipher::{Array, BlockCipherEncrypt, KeyInit};

/// CBC encryption by its definition: C_i = E(P_i ^ C_{i-1}), C_0 = IV.
fn chain<C: BlockCipherEncrypt>(c: &C, iv: [u8; 16], data: &mut [u8]) {
    let mut prev = iv;
    for block in data.chunks_mut(16) {
        let mut b = Array::default();
        for (o, (p, q)) in b.iter_mut().zip(block.iter().zip(prev)) {
            *o = p ^ q;
        }
        c.encrypt_block(&mut b);
        block.copy_from_slice(&b);
        prev.copy_from_slice(&b);
    }
}

/// The harness runs once, on Camellia-128 (the fastest of these ciphers
/// here; under a user-mode emulator not at all, as the generic path is
/// architecture-independent code, and the AES types run it there): the request handling it checks is the same generic code for
/// every cipher, and each cipher is checked against the oracle at every
/// length.
///
/// For one cipher type: every check of this file, with keys of each
/// length in `$key_lens`.
macro_rules! every_check {
    ($name:ident, $cipher:ty, $key_lens:expr, harness: $harness:expr) => {
        #[test]
        fn $name() {
            let mut rng = Rng::new(u64::from(line!()));
            for key_len in $key_lens {
                let key = rng.bytes(key_len);
                let cbc = BlockCbc::<$cipher>::new(&key).unwrap();
                let oracle = <$cipher>::new_from_slice(&key).unwrap();
                let lens = (1..=20).map(|b| 16 * b).chain([512, 4096]);
                for len in lens {
                    let plain = rng.bytes(len);
                    let iv = Iv::from_u128(rng.next_u64() as u128 | (rng.next_u64() as u128) << 64);
                    let mut want = plain.clone();
                    chain(&oracle, iv.0, &mut want);
                    let mut got = plain.clone();
                    cbc.encrypt(iv, &mut got).unwrap();
                    assert!(
                        got == want,
                        "{} {key_len}-byte key, {len} bytes: encrypt",
                        stringify!($cipher)
                    );
                    cbc.decrypt(iv, &mut got).unwrap();
                    assert!(
                        got == plain,
                        "{} {key_len}-byte key, {len} bytes: decrypt",
                        stringify!($cipher)
                    );
                }
                // Batched (the auto-splitter) against one unit at a time.
                let units = DataUnits::new(&cbc, 512).unwrap();
                let plain = rng.bytes(9 * 512);
                let first = Iv::plain64(u64::MAX - 4);
                let mut got = plain.clone();
                units.encrypt(first, &mut got).unwrap();
                let mut want = plain.clone();
                for (i, unit) in want.chunks_mut(512).enumerate() {
                    chain(&oracle, first.advance(i as u128).0, unit);
                }
                assert!(got == want, "{}: batched encrypt", stringify!($cipher));
                units.decrypt(first, &mut got).unwrap();
                assert!(got == plain, "{}: batched decrypt", stringify!($cipher));
                if $harness
                    && key_len == BlockCbc::<$cipher>::KEY_LEN
                    && !testing::sample::skipped_under_emulation(
                        stringify!($name),
                        "harness runs",
                        "the generic block-cipher path is architecture-independent",
                    )
                {
                    // 17 and 31 bytes are not whole blocks.
                    let report = testing::check_cipher(&cbc);
                    assert_eq!(report.skipped_sizes, 2, "{report:?}");
                    assert!(report.requests > 1000, "{report:?}");
                }
                let mut a = plain.clone();
                let mut b = plain.clone();
                cbc.encrypt(first, &mut a).unwrap();
                cbc.clone().encrypt(first, &mut b).unwrap();
                assert_eq!(a, b);
                assert!(format!("{cbc:?}").starts_with("BlockCbc"));
            }
        }
    };
}

every_check!(serpent_matches_the_chain, serpent::Serpent, [16, 24, 32], harness: false);
every_check!(twofish_matches_the_chain, twofish::Twofish, [16, 24, 32], harness: false);
every_check!(sm4_matches_the_chain, sm4::Sm4, [16], harness: false);
every_check!(camellia128_matches_the_chain, camellia::Camellia128, [16], harness: true);
every_check!(camellia256_matches_the_chain, camellia::Camellia256, [32], harness: false);

#[test]
fn key_lengths_the_cipher_refuses_and_partial_blocks_are_refused() {
    for len in [0, 15, 33] {
        assert_eq!(
            BlockCbc::<serpent::Serpent>::new(&vec![1u8; len]).unwrap_err(),
            SetupError::InvalidKeyLength { len, expected: 16 }
        );
    }
    for len in [15, 17, 20, 31] {
        assert!(
            BlockCbc::<twofish::Twofish>::new(&vec![1u8; len]).is_err(),
            "{len}"
        );
    }
    let cbc = BlockCbc::<sm4::Sm4>::new(&[4; 16]).unwrap();
    for len in [0, 15, 17, 31] {
        let mut buf = vec![6u8; len];
        assert!(cbc.encrypt(Iv::ZERO, &mut buf).is_err(), "{len}");
        assert!(buf.iter().all(|&b| b == 6));
    }
}
