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
