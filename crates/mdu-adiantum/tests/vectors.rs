//! Known-answer tests.
//!
//! * `data/adiantum-xchacha12-aes256.json`: the published test vectors of
//!   the Adiantum reference (google/adiantum,
//!   `test_vectors/ours/Adiantum/Adiantum_XChaCha12_32_AES256.json`), every
//!   message length of the file with the kernel's 32-byte tweak (16, 31,
//!   128, 512, 1536 and 4096 bytes), plus some with the 0- and 17-byte
//!   tweaks the reference also defines. The first vector of each length
//!   with a 32-byte tweak is also in the reference's kernel-format set
//!   (`benchmark/testvectors/adiantum_testvecs_linux.h`).
//! * `data/adiantum-reference-model.json`: vectors computed with the
//!   reference's Python model (`python/adiantum.py`) at the lengths the
//!   published ones lack: bulks of 1023, 1024, 1025, 2047 and 2048 bytes
//!   (the edges of NH's 1024-byte chunks) and around 64-byte ChaCha blocks.

use mdu_adiantum::{Adiantum, Iv};
use serde_json::Value;

struct Vector {
    key: Vec<u8>,
    tweak: Vec<u8>,
    plaintext: Vec<u8>,
    ciphertext: Vec<u8>,
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn load(json: &str) -> Vec<Vector> {
    let data: Value = serde_json::from_str(json).unwrap();
    data["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| Vector {
            key: hex(v["key"].as_str().unwrap()),
            tweak: hex(v["tweak"].as_str().unwrap()),
            plaintext: hex(v["plaintext"].as_str().unwrap()),
            ciphertext: hex(v["ciphertext"].as_str().unwrap()),
        })
        .collect()
}

fn published() -> Vec<Vector> {
    load(include_str!("data/adiantum-xchacha12-aes256.json"))
}

/// Encrypts and decrypts every vector in place (32-byte tweaks through
/// the `Iv<32>` API, others through the any-length one); returns how many
/// ran.
fn check_all(vectors: &[Vector]) -> usize {
    for (i, v) in vectors.iter().enumerate() {
        let what = format!(
            "vector {i}: {} bytes, tweak {}",
            v.plaintext.len(),
            v.tweak.len()
        );
        let a = Adiantum::new(&v.key).unwrap();
        let mut buf = v.plaintext.clone();
        match Iv::<32>::from_slice(&v.tweak) {
            Some(tweak) => a.encrypt(tweak, &mut buf).unwrap(),
            None => a.encrypt_with_tweak(&v.tweak, &mut buf).unwrap(),
        }
        assert!(buf == v.ciphertext, "{what}: wrong ciphertext");
        match Iv::<32>::from_slice(&v.tweak) {
            Some(tweak) => a.decrypt(tweak, &mut buf).unwrap(),
            None => a.decrypt_with_tweak(&v.tweak, &mut buf).unwrap(),
        }
        assert!(buf == v.plaintext, "{what}: wrong plaintext");
    }
    vectors.len()
}

#[test]
fn published_vectors_with_the_kernels_32_byte_tweak() {
    let vectors: Vec<Vector> = published()
        .into_iter()
        .filter(|v| v.tweak.len() == 32)
        .collect();
    let mut lengths: Vec<usize> = vectors.iter().map(|v| v.plaintext.len()).collect();
    lengths.dedup();
    assert_eq!(lengths, [16, 31, 128, 512, 1536, 4096]);
    assert_eq!(check_all(&vectors), 48);
}

#[test]
fn published_vectors_with_0_and_17_byte_tweaks() {
    let vectors: Vec<Vector> = published()
        .into_iter()
        .filter(|v| v.tweak.len() != 32)
        .collect();
    assert!(vectors.iter().any(|v| v.tweak.is_empty()));
    assert!(vectors.iter().any(|v| v.tweak.len() == 17));
    assert_eq!(check_all(&vectors), 16);
}

/// The 32-byte tweak through `encrypt_with_tweak` gives the same bytes as
/// through `Iv<32>`.
#[test]
fn the_any_length_api_agrees_on_32_byte_tweaks() {
    for v in published().iter().filter(|v| v.tweak.len() == 32).take(12) {
        let a = Adiantum::new(&v.key).unwrap();
        let mut buf = v.plaintext.clone();
        a.encrypt_with_tweak(&v.tweak, &mut buf).unwrap();
        assert_eq!(buf, v.ciphertext);
        a.decrypt_with_tweak(&v.tweak, &mut buf).unwrap();
        assert_eq!(buf, v.plaintext);
    }
}

#[test]
fn reference_model_vectors_at_chunk_and_block_edges() {
    let vectors = load(include_str!("data/adiantum-reference-model.json"));
    let lengths: Vec<usize> = vectors.iter().map(|v| v.plaintext.len()).collect();
    for edge in [1039, 1040, 1041, 2063, 2064] {
        assert!(lengths.contains(&edge), "{edge}");
    }
    assert_eq!(check_all(&vectors), 17);
}

/// Through the `DataUnitCipher` trait (the path `DataUnits` and
/// `mdu-fscrypt` take), one unit per call.
#[test]
fn published_vectors_through_the_data_unit_cipher_trait() {
    use mdu_adiantum::DataUnitCipher;
    for v in published().iter().filter(|v| v.tweak.len() == 32) {
        let a = Adiantum::new(&v.key).unwrap();
        let tweak = Iv::<32>::from_slice(&v.tweak).unwrap();
        let mut buf = v.plaintext.clone();
        a.encrypt_unit(tweak, &mut buf).unwrap();
        assert_eq!(buf, v.ciphertext);
        a.decrypt_unit(tweak, &mut buf).unwrap();
        assert_eq!(buf, v.plaintext);
    }
}
