//! RustCrypto's key traits on the HCTR2 cipher types: `KeyInit` and
//! `TryKeyInit` build the cipher `new` builds (the same bytes) and refuse
//! a key of another length; code generic over `KeyInit + DataUnitCipher`
//! takes both types.

use mdu_hctr2::crypto_common::{KeyInit, KeySizeUser, TryKeyInit};
use mdu_hctr2::{DataUnitCipher, DataUnits, Hctr2Aes128, Hctr2Aes256, Iv, SetupError, TWEAK_LEN};
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
