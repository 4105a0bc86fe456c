//! Shared pieces of the tests: a one-sector-at-a-time OpenSSL oracle,
//! deterministic bytes, and which backends a test ran.

#![allow(dead_code, unreachable_pub)]

use mdu_cbc::{Direction, Iv};
use openssl::symm::{Cipher, Crypter, Mode};

pub use mdu_aes::testing::note_backend;

/// OpenSSL EVP aes-cbc without padding, one unit at a time: unit `i` of
/// `data` (whole units of `unit` bytes) under `ivs[i]`.
pub fn openssl(key: &[u8], dir: Direction, ivs: &[Iv], unit: usize, data: &[u8]) -> Vec<u8> {
    let cipher = match key.len() {
        16 => Cipher::aes_128_cbc(),
        _ => Cipher::aes_256_cbc(),
    };
    let mode = match dir {
        Direction::Encrypt => Mode::Encrypt,
        Direction::Decrypt => Mode::Decrypt,
    };
    let mut out = Vec::with_capacity(data.len());
    for (chunk, iv) in data.chunks(unit).zip(ivs) {
        let mut c = Crypter::new(cipher, mode, key, Some(&iv.0)).unwrap();
        c.pad(false);
        let mut buf = vec![0u8; unit + 16];
        let n = c.update(chunk, &mut buf).unwrap();
        let m = c.finalize(&mut buf[n..]).unwrap();
        assert_eq!(n + m, unit);
        out.extend_from_slice(&buf[..unit]);
    }
    out
}

/// Deterministic bytes (period 251, so swapped blocks show).
pub fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i % 251) as u8).wrapping_mul(7) ^ seed)
        .collect()
}
