//! `BlockCbc` against the Linux kernel's own test vectors of cbc(serpent),
//! cbc(twofish), cbc(sm4) and cbc(camellia) (crypto/testmgr.h, every vector
//! of each template: `tests/data/testmgr-cbc.txt` says which commit), both
//! directions, one unit per vector.

use mdu_cbc::{BlockCbc, Iv};

struct Vector {
    alg: String,
    index: String,
    key: Vec<u8>,
    iv: [u8; 16],
    ptext: Vec<u8>,
    ctext: Vec<u8>,
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn vectors() -> Vec<Vector> {
    let text = include_str!("data/testmgr-cbc.txt");
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let field = |name: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(" = "))
                .map(str::to_owned)
        };
        let Some(alg) = field("alg") else { continue };
        let v = Vector {
            alg,
            index: field("index").expect("index"),
            key: unhex(&field("key").expect("key")),
            iv: unhex(&field("iv").expect("iv"))
                .try_into()
                .expect("16-byte iv"),
            ptext: unhex(&field("ptext").expect("ptext")),
            ctext: unhex(&field("ctext").expect("ctext")),
        };
        assert_eq!(v.key.len().to_string(), field("klen").expect("klen"));
        assert_eq!(v.ptext.len().to_string(), field("len").expect("len"));
        assert_eq!(v.ptext.len(), v.ctext.len());
        out.push(v);
    }
    out
}

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
    let all = vectors();
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
