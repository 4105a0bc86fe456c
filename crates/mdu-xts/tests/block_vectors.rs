//! `BlockXts` against the Linux kernel's own test vectors of xts(serpent),
//! xts(twofish), xts(sm4) and xts(camellia) (crypto/testmgr.h, every vector
//! of each template: `tests/data/testmgr-xts.txt` says which commits),
//! both directions, one unit per vector.

use mdu_core::testing::{CipherVector as Vector, cipher_vectors};
use mdu_xts::{BlockXts, Iv};

/// Encrypts and decrypts `v` with `BlockXts<C>` (test vectors may have
/// equal halves: the weak-key rule is not what they test).
fn check<C>(v: &Vector)
where
    BlockXts<C>: Sized,
    C: mdu_aes::BlockAes + zeroize::ZeroizeOnDrop,
{
    let what = format!("{} vector {} ({} bytes)", v.alg, v.index, v.ptext.len());
    let xts = BlockXts::<C>::new_allow_weak_key(&v.key).unwrap_or_else(|e| panic!("{what}: {e}"));
    let iv = Iv(v.iv);
    let mut buf = v.ptext.clone();
    xts.encrypt(iv, &mut buf).unwrap();
    assert!(buf == v.ctext, "{what}: encrypt");
    xts.decrypt(iv, &mut buf).unwrap();
    assert!(buf == v.ptext, "{what}: decrypt");
}

#[test]
fn the_kernels_vectors_of_every_xts_block_cipher() {
    let all = cipher_vectors(include_str!("data/testmgr-xts.txt"));
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for v in &all {
        match (v.alg.as_str(), v.key.len()) {
            ("xts(serpent)", _) => check::<serpent::Serpent>(v),
            ("xts(twofish)", _) => check::<twofish::Twofish>(v),
            ("xts(sm4)", _) => check::<sm4::Sm4>(v),
            ("xts(camellia)", 32) => check::<camellia::Camellia128>(v),
            ("xts(camellia)", 48) => check::<camellia::Camellia192>(v),
            ("xts(camellia)", 64) => check::<camellia::Camellia256>(v),
            (alg, len) => panic!("{alg} with a {len}-byte key: no cipher for it"),
        }
        *seen.entry(v.alg.clone()).or_default() += 1;
    }
    println!("testmgr vectors checked: {seen:?}");
    for alg in ["xts(serpent)", "xts(twofish)", "xts(sm4)", "xts(camellia)"] {
        assert!(seen.get(alg).is_some_and(|&n| n >= 4), "{alg}: {seen:?}");
    }
    // The one vector that is not a whole number of blocks (stealing).
    assert!(all.iter().any(|v| !v.ptext.len().is_multiple_of(16)));
}
