//! OpenSSL's EVP aes-128-xts / aes-256-xts (through the `openssl` crate) as
//! an outside oracle, unit by unit, in both directions.

mod common;

use common::{Request, all_paths, note_backend, request};
use mdu_core::testing::sample;
use mdu_xts::{Backend, Iv};
use openssl::symm::{Cipher, Crypter, Mode};
use proptest::prelude::*;

fn openssl_unit(key: &[u8], iv: Iv, unit: &[u8], mode: Mode) -> Vec<u8> {
    let cipher = match key.len() {
        32 => Cipher::aes_128_xts(),
        _ => Cipher::aes_256_xts(),
    };
    let mut c = Crypter::new(cipher, mode, key, Some(&iv.0)).expect("OpenSSL XTS context");
    let mut out = vec![0u8; unit.len() + 16];
    let n = c.update(unit, &mut out).expect("OpenSSL XTS update");
    let m = c.finalize(&mut out[n..]).expect("OpenSSL XTS final");
    out.truncate(n + m);
    out
}

fn openssl_agrees(test: &str, r: &Request) {
    let plain = r.plaintext();
    let mut want = Vec::with_capacity(plain.len());
    for (i, unit) in plain.chunks(r.unit).enumerate() {
        let iv = r.iv.advance(i as u128 * u128::from(r.step));
        want.extend(openssl_unit(&r.key, iv, unit, Mode::Encrypt));
    }
    assert_eq!(want.len(), plain.len());
    for &backend in Backend::available() {
        note_backend(test, backend);
        let got = all_paths(backend, r, &plain);
        assert!(got == want, "{backend:?} differs from OpenSSL");
    }
    let mut back = Vec::with_capacity(plain.len());
    for (i, unit) in want.chunks(r.unit).enumerate() {
        let iv = r.iv.advance(i as u128 * u128::from(r.step));
        back.extend(openssl_unit(&r.key, iv, unit, Mode::Decrypt));
    }
    assert!(back == plain, "OpenSSL does not decrypt our ciphertext");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(sample::proptest_cases("openssl_evp_agrees", 300)))]

    #[test]
    fn openssl_evp_agrees(r in request()) {
        openssl_agrees("openssl_evp_agrees", &r);
    }
}

#[test]
fn openssl_agrees_on_stealing_lengths_and_sector_sizes() {
    for unit in (16..=80).chain([496, 511, 512, 513, 4095, 4096, 4097, 65536]) {
        for key_len in [32, 64] {
            openssl_agrees(
                "openssl_agrees_on_stealing_lengths_and_sector_sizes",
                &Request {
                    key: (0..key_len).map(|i| (i * 13 + unit + 1) as u8).collect(),
                    unit,
                    count: 3,
                    iv: Iv::from_u128(u128::MAX - 1),
                    step: 1,
                    seed: unit as u64 + 99,
                    src_off: 3,
                    dst_off: 5,
                    cuts: vec![unit + 1],
                },
            );
        }
    }
}
