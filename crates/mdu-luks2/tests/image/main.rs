//! Images written by `format`, read back, damaged and rejected: every
//! validation rule has a test that breaks it and names the error it gives.

mod binding;
mod copies;
mod format;
mod luks1;
mod validation;

use mdu_luks2::{
    Argon2Variant, CipherSpec, Direction, Error, FormatParams, Geometry, Hash, HeaderCopy, Image,
    KdfParams, Metadata, SectorCipher, WeakKeys, format, header_checksum, os_random,
};
use serde_json::{Value, json};

const HDR: usize = 16384;

fn cheap(kdf: KdfParams) -> FormatParams {
    FormatParams {
        kdf,
        digest_iterations: 1000,
        data_offset: 1 << 20,
        ..FormatParams::default()
    }
}

fn pbkdf2() -> FormatParams {
    cheap(KdfParams::Pbkdf2 {
        hash: Hash::Sha256,
        iterations: 1000,
    })
}

/// A volume key of `len` bytes from `seed` whose XTS halves differ (a
/// key with equal halves is refused unless allowed: see
/// `a_weak_volume_key_is_refused_unless_allowed`).
fn key_bytes(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| seed ^ i as u8).collect()
}

fn image() -> Vec<u8> {
    format(&pbkdf2(), b"pw", &key_bytes(0x11, 64), &mut os_random).unwrap()
}

/// The JSON text of the copy at `at`.
fn json_of(image: &[u8], at: usize) -> Value {
    let area = &image[at + 4096..at + HDR];
    let end = area.iter().position(|&b| b == 0).unwrap();
    serde_json::from_slice(&area[..end]).unwrap()
}

/// Rewrites the JSON area of the copy at `at` with `text` and reseals it.
fn put_json(image: &mut [u8], at: usize, text: &[u8]) {
    let area = &mut image[at + 4096..at + HDR];
    area.fill(0);
    area[..text.len()].copy_from_slice(text);
    reseal(image, at);
}

fn reseal(image: &mut [u8], at: usize) {
    let sum = header_checksum(&image[at..at + HDR]);
    image[at + 448..at + 512].fill(0);
    image[at + 448..at + 480].copy_from_slice(&sum);
}

/// Applies `f` to the JSON of both copies and reseals them.
fn mutate(image: &mut [u8], f: impl Fn(&mut Value)) {
    for at in [0, HDR] {
        let mut v = json_of(image, at);
        f(&mut v);
        put_json(image, at, v.to_string().as_bytes());
    }
}

fn load_err(image: &[u8]) -> Error {
    match Image::load(image) {
        Ok(_) => panic!("a broken image was accepted"),
        Err(Error::NoValidHeader { primary, .. }) => *primary,
        Err(e) => panic!("expected NoValidHeader, got {e}"),
    }
}
