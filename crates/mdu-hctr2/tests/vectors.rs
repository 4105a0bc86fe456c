//! The published HCTR2 test vectors (AES-128 and AES-256; tweaks of 0, 1,
//! 16, 32 and 47 bytes; messages of 16 to 512 bytes) on every AES backend
//! this CPU runs, in both directions; the 32-byte-tweak ones also through
//! the `DataUnitCipher` contract.

use mdu_hctr2::{Backend, DataUnitCipher, Hctr2, Hctr2Aes128, Hctr2Aes256, Iv, KeySize};
use serde_json::Value;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

struct Vector {
    key: Vec<u8>,
    tweak: Vec<u8>,
    pt: Vec<u8>,
    ct: Vec<u8>,
}

fn load(json: &str) -> Vec<Vector> {
    let v: Value = serde_json::from_str(json).expect("vector file");
    v["vectors"]
        .as_array()
        .expect("vectors")
        .iter()
        .map(|t| Vector {
            key: hex(t["key"].as_str().unwrap()),
            tweak: hex(t["tweak"].as_str().unwrap()),
            pt: hex(t["pt"].as_str().unwrap()),
            ct: hex(t["ct"].as_str().unwrap()),
        })
        .collect()
}

/// Runs `vectors` on every backend; returns how many ran per backend and
/// how many of them had the kernel's 32-byte tweak.
fn check<K: KeySize>(name: &str, vectors: &[Vector]) -> (usize, usize) {
    let (mut ran, mut wide) = (0, 0);
    for &backend in Backend::available() {
        for (i, v) in vectors.iter().enumerate() {
            let c = Hctr2::<K>::with_backend(&v.key, backend).unwrap();
            let mut buf = v.pt.clone();
            c.encrypt_with_tweak(&v.tweak, &mut buf).unwrap();
            assert_eq!(buf, v.ct, "{name} vector {i} encrypt on {backend}");
            c.decrypt_with_tweak(&v.tweak, &mut buf).unwrap();
            assert_eq!(buf, v.pt, "{name} vector {i} decrypt on {backend}");
            if let Some(tweak) = Iv::<32>::from_slice(&v.tweak) {
                c.encrypt_unit(tweak, &mut buf).unwrap();
                assert_eq!(buf, v.ct, "{name} vector {i} encrypt_unit on {backend}");
                c.decrypt_unit(tweak, &mut buf).unwrap();
                assert_eq!(buf, v.pt, "{name} vector {i} decrypt_unit on {backend}");
                wide += 1;
            }
            ran += 1;
        }
        println!("{name}: backend {backend}");
    }
    let every = [
        Backend::Vaes512,
        Backend::Vaes256,
        Backend::AesNi,
        Backend::ArmCe,
        Backend::Generic,
    ];
    let missing: Vec<&str> = every
        .iter()
        .filter(|b| !Backend::available().contains(b))
        .map(|b| b.name())
        .collect();
    println!("{name}: AES backends this CPU does not run: {missing:?}");
    (ran, wide)
}

#[test]
fn published_vectors_aes256() {
    let vectors = load(include_str!("data/hctr2-aes256.json"));
    assert_eq!(vectors.len(), 105);
    let (ran, wide) = check::<mdu_hctr2::Aes256>("HCTR2-AES-256", &vectors);
    assert_eq!(ran, 105 * Backend::available().len());
    assert_eq!(wide, 21 * Backend::available().len());
}

#[test]
fn published_vectors_aes128() {
    let vectors = load(include_str!("data/hctr2-aes128.json"));
    assert_eq!(vectors.len(), 60);
    let (ran, _) = check::<mdu_hctr2::Aes128>("HCTR2-AES-128", &vectors);
    assert_eq!(ran, 60 * Backend::available().len());
}

/// The two aliases are the generic type at each key size.
#[test]
fn aliases_take_their_key_sizes() {
    assert!(Hctr2Aes128::new(&[0; 16]).is_ok());
    assert!(Hctr2Aes256::new(&[0; 32]).is_ok());
    assert!(Hctr2Aes128::new(&[0; 32]).is_err());
    assert!(Hctr2Aes256::new(&[0; 24]).is_err());
}
