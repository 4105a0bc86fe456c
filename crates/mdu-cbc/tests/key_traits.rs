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
