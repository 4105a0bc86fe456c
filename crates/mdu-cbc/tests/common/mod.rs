//! Shared pieces of the tests: a cipher of either key size behind one type,
//! a one-sector-at-a-time OpenSSL oracle, and which backends a test ran.

#![allow(dead_code, unreachable_pub)]

use mdu_cbc::{AesCbc128, AesCbc256, Backend, DataUnitCipher, DataUnitSize, Direction, Error, Iv};
use openssl::symm::{Cipher, Crypter, Mode};
use std::collections::BTreeSet;
use std::sync::Mutex;

/// Prints which backend a test exercised, once per (test, backend). The
/// backends this CPU does not run, and why, are `tests/backends.rs`'s.
pub fn note_backend(test: &str, backend: Backend) {
    static SEEN: Mutex<BTreeSet<(String, Backend)>> = Mutex::new(BTreeSet::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen.insert((test.to_owned(), backend)) {
        println!("{test}: backend {backend}");
    }
}

/// AES-CBC-128 or -256 behind one type.
#[derive(Clone, Debug)]
pub enum Cbc {
    A128(AesCbc128),
    A256(AesCbc256),
}

impl Cbc {
    pub fn new(key: &[u8], backend: Backend) -> Cbc {
        match key.len() {
            16 => Cbc::A128(AesCbc128::with_backend(key, backend).unwrap()),
            32 => Cbc::A256(AesCbc256::with_backend(key, backend).unwrap()),
            n => panic!("key length {n}"),
        }
    }
}

impl DataUnitCipher for Cbc {
    type Iv = Iv;
    const NATIVE_MULTI_UNIT: bool = true;
    const UNIT_ALIGN: usize = 16;

    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        match self {
            Cbc::A128(c) => c.encrypt(iv, unit),
            Cbc::A256(c) => c.encrypt(iv, unit),
        }
    }
    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        match self {
            Cbc::A128(c) => c.decrypt(iv, unit),
            Cbc::A256(c) => c.decrypt(iv, unit),
        }
    }
    fn crypt_units(
        &self,
        dir: Direction,
        iv: Iv,
        step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        match self {
            Cbc::A128(c) => c.crypt_units(dir, iv, step, unit, buf),
            Cbc::A256(c) => c.crypt_units(dir, iv, step, unit, buf),
        }
    }
    fn crypt_units_to(
        &self,
        dir: Direction,
        iv: Iv,
        step: u64,
        unit: DataUnitSize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), Error> {
        match self {
            Cbc::A128(c) => c.crypt_units_to(dir, iv, step, unit, src, dst),
            Cbc::A256(c) => c.crypt_units_to(dir, iv, step, unit, src, dst),
        }
    }
    fn crypt_units_with_ivs(
        &self,
        dir: Direction,
        ivs: &[Iv],
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        match self {
            Cbc::A128(c) => c.crypt_units_with_ivs(dir, ivs, unit, buf),
            Cbc::A256(c) => c.crypt_units_with_ivs(dir, ivs, unit, buf),
        }
    }
}

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
