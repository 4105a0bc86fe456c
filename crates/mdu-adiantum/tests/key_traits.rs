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
