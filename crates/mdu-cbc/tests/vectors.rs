//! NIST SP 800-38A F.2 (CBC-AES128 and CBC-AES256, encrypt and decrypt) on
//! every backend, as one four-block unit, as four one-block units chained
//! by hand through explicit IVs, and inside a batch of many units.

mod common;

use common::note_backend;
use mdu_cbc::{AesCbc128, AesCbc256, Backend, DataUnitCipher, DataUnitSize, Direction, Iv};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const PLAIN: &str = "6bc1bee22e409f96e93d7e117393172a\
                     ae2d8a571e03ac9c9eb76fac45af8e51\
                     30c81c46a35ce411e5fbc1191a0a52ef\
                     f69f2445df4f9b17ad2b417be66c3710";
const IV: &str = "000102030405060708090a0b0c0d0e0f";

/// (key, ciphertext) of F.2.1 and F.2.5.
const CASES: [(&str, &str); 2] = [
    (
        "2b7e151628aed2a6abf7158809cf4f3c",
        "7649abac8119b246cee98e9b12e9197d\
         5086cb9b507219ee95db113a917678b2\
         73bed6b8e3c1743b7116e69e22229516\
         3ff1caa1681fac09120eca307586e1a7",
    ),
    (
        "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
        "f58c4c04d6e5f1ba779eabfb5f7bfbd6\
         9cfc4e967edb808d679f777bc6702c7d\
         39f23369a9d9bacfa530e26304231461\
         b2eb05e2c39be9fcda6c19078c6a9d1b",
    ),
];

fn check<C: DataUnitCipher<Iv = Iv>>(c: &C, what: &str, plain: &[u8], cipher: &[u8], iv: Iv) {
    // One four-block unit.
    let mut buf = plain.to_vec();
    c.encrypt_unit(iv, &mut buf).unwrap();
    assert_eq!(buf, cipher, "{what}: encrypt");
    c.decrypt_unit(iv, &mut buf).unwrap();
    assert_eq!(buf, plain, "{what}: decrypt");

    // Four one-block units: CBC is a chain of one-block CBC messages, block
    // j's IV being ciphertext block j - 1.
    let mut ivs = vec![iv];
    ivs.extend(cipher.chunks(16).take(3).map(|b| Iv(b.try_into().unwrap())));
    let one = DataUnitSize::new(16).unwrap();
    let mut buf = plain.to_vec();
    c.crypt_units_with_ivs(Direction::Encrypt, &ivs, one, &mut buf)
        .unwrap();
    assert_eq!(buf, cipher, "{what}: four one-block units, encrypt");
    c.crypt_units_with_ivs(Direction::Decrypt, &ivs, one, &mut buf)
        .unwrap();
    assert_eq!(buf, plain, "{what}: four one-block units, decrypt");

    // Unit 37 of a batch of 53 four-block units (a unit in a tail group);
    // under Miri, unit 3 of 5.
    let (count, at) = if cfg!(miri) { (5, 3) } else { (53, 37) };
    let unit = DataUnitSize::new(64).unwrap();
    let first = Iv::from_u128(iv.to_u128().wrapping_sub(at as u128));
    let mut batch = common::bytes(count * 64, 3);
    batch[at * 64..(at + 1) * 64].copy_from_slice(plain);
    c.crypt_units(Direction::Encrypt, first, 1, unit, &mut batch)
        .unwrap();
    assert_eq!(
        &batch[at * 64..(at + 1) * 64],
        cipher,
        "{what}: inside a batch"
    );
    c.crypt_units(Direction::Decrypt, first, 1, unit, &mut batch)
        .unwrap();
    assert_eq!(
        &batch[at * 64..(at + 1) * 64],
        plain,
        "{what}: batch decrypt"
    );
}

#[test]
fn nist_sp_800_38a_f2_on_every_backend() {
    let plain = hex(PLAIN);
    let iv = Iv(hex(IV).try_into().unwrap());
    for &backend in Backend::available() {
        note_backend("nist_sp_800_38a_f2_on_every_backend", backend);
        for (key, cipher) in CASES {
            let (key, cipher) = (hex(key), hex(cipher));
            if key.len() == 16 {
                let c = AesCbc128::with_backend(&key, backend).unwrap();
                check(&c, &format!("F.2.1 {backend:?}"), &plain, &cipher, iv);
            } else {
                let c = AesCbc256::with_backend(&key, backend).unwrap();
                check(&c, &format!("F.2.5 {backend:?}"), &plain, &cipher, iv);
            }
        }
    }
}
