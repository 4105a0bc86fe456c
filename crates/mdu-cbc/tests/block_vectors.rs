//! `BlockCbc` against the Linux kernel's own test vectors of cbc(serpent),
//! cbc(twofish), cbc(sm4) and cbc(camellia) (crypto/testmgr.h, every vector
//! of each template: `tests/data/testmgr-cbc.txt` says which commit), both
//! directions, one unit per vector.

use mdu_cbc::{BlockCbc, Iv};
use mdu_core::testing::{CipherVector as Vector, cipher_vectors};

/// Encrypts and decrypts `v` with `BlockCbc<C>`.
fn check<C>(v: &Vector)
where
    BlockCbc<C>: Sized,
    C: mdu_aes::BlockAes + zeroize::ZeroizeOnDrop,
{
    let what = format!("{} vector {} ({} bytes)", v.alg, v.index, v.ptext.len());
    let cbc = BlockCbc::<C>::new(&v.key).unwrap_or_else(|e| panic!("{what}: {e}"));
    let iv = Iv(v.iv);
    let mut buf = v.ptext.clone();
    cbc.encrypt(iv, &mut buf).unwrap();
    assert!(buf == v.ctext, "{what}: encrypt");
    cbc.decrypt(iv, &mut buf).unwrap();
    assert!(buf == v.ptext, "{what}: decrypt");
}

#[test]
fn the_kernels_vectors_of_every_cbc_block_cipher() {
    let all = cipher_vectors(include_str!("data/testmgr-cbc.txt"));
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for v in &all {
        match (v.alg.as_str(), v.key.len()) {
            ("cbc(serpent)", _) => check::<serpent::Serpent>(v),
            ("cbc(twofish)", _) => check::<twofish::Twofish>(v),
            ("cbc(sm4)", _) => check::<sm4::Sm4>(v),
            ("cbc(camellia)", 16) => check::<camellia::Camellia128>(v),
            ("cbc(camellia)", 24) => check::<camellia::Camellia192>(v),
            ("cbc(camellia)", 32) => check::<camellia::Camellia256>(v),
            (alg, len) => panic!("{alg} with a {len}-byte key: no cipher for it"),
        }
        *seen.entry(v.alg.clone()).or_default() += 1;
    }
    println!("testmgr vectors checked: {seen:?}");
    for alg in ["cbc(serpent)", "cbc(twofish)", "cbc(sm4)", "cbc(camellia)"] {
        assert!(seen.contains_key(alg), "{alg}: {seen:?}");
    }
    assert!(all.len() >= 11, "{} vectors", all.len());
}
