//! IEEE 1619 and NIST CAVP XTS-AES vectors (FORMATS.md section 6) on every
//! backend this CPU runs, through the one-message functions and through the
//! multi-unit path.

mod common;

use common::note_backend;
use mdu_xts::{Backend, DataUnitCipher, DataUnitSize, Direction, Iv, XtsAes128, XtsAes256};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit"))
        .collect()
}

/// One of the ciphers under test, run by direction, IV and buffer.
type Runner = Box<dyn Fn(bool, Iv, &mut [u8])>;

fn tweak(bytes: &str) -> Iv {
    let mut iv = [0u8; 16];
    let b = hex(bytes);
    iv[..b.len()].copy_from_slice(&b);
    Iv(iv)
}

/// Checks one vector on every backend: encrypt, decrypt, and the same unit
/// as the only unit of a multi-unit request, in place and out of place.
fn check(test: &str, key: &[u8], iv: Iv, pt: &[u8], ct: &[u8]) {
    for &backend in Backend::available() {
        note_backend(test, backend);
        let ciphers: Vec<Runner> = match key.len() {
            32 => {
                let x = XtsAes128::with_backend_allow_weak_key(key, backend).unwrap();
                assert_eq!(x.backend(), backend);
                vec![Box::new(move |enc, iv, buf: &mut [u8]| {
                    run(&x, enc, iv, buf);
                })]
            }
            64 => {
                let x = XtsAes256::with_backend_allow_weak_key(key, backend).unwrap();
                assert_eq!(x.backend(), backend);
                vec![Box::new(move |enc, iv, buf: &mut [u8]| {
                    run(&x, enc, iv, buf);
                })]
            }
            n => panic!("bad key length {n}"),
        };
        for c in ciphers {
            let mut buf = pt.to_vec();
            c(true, iv, &mut buf);
            assert_eq!(buf, ct, "{backend:?} encrypt, {} bytes", pt.len());
            c(false, iv, &mut buf);
            assert_eq!(buf, pt, "{backend:?} decrypt, {} bytes", pt.len());
        }
    }
}

/// Runs all paths of `cipher` on `buf` and checks they agree, leaving the
/// result of the one-message function in `buf`.
fn run<C: DataUnitCipher<Iv = Iv>>(cipher: &C, enc: bool, iv: Iv, buf: &mut [u8]) {
    let unit = DataUnitSize::new(buf.len()).unwrap();
    let src = buf.to_vec();
    let mut batched = src.clone();
    let mut to = vec![0u8; src.len()];
    // Two copies of the unit with consecutive IVs: the second must equal a
    // one-message call under iv + 1.
    let mut two = [src.clone(), src.clone()].concat();
    if enc {
        cipher.encrypt_unit(iv, buf).unwrap();
        cipher.encrypt_units(iv, 1, unit, &mut batched).unwrap();
        cipher
            .crypt_units_to(Direction::Encrypt, iv, 1, unit, &src, &mut to)
            .unwrap();
        cipher
            .encrypt_units(iv.advance(u128::MAX), 1, unit, &mut two)
            .unwrap();
    } else {
        cipher.decrypt_unit(iv, buf).unwrap();
        cipher.decrypt_units(iv, 1, unit, &mut batched).unwrap();
        cipher
            .crypt_units_to(Direction::Decrypt, iv, 1, unit, &src, &mut to)
            .unwrap();
        cipher
            .decrypt_units(iv.advance(u128::MAX), 1, unit, &mut two)
            .unwrap();
    }
    assert_eq!(batched, buf);
    assert_eq!(to, buf);
    assert_eq!(&two[src.len()..], buf);
}

#[test]
fn ieee_1619_vector_1_equal_halves() {
    check(
        "ieee_1619_vector_1_equal_halves",
        &[0; 32],
        Iv::ZERO,
        &[0; 32],
        &hex("917cf69ebd68b2ec9b9fe9a3eadda692cd43d2f59598ed858c02c2652fbf922e"),
    );
}

#[test]
fn ieee_1619_vectors_2_and_3() {
    let mut key = vec![0x11; 16];
    key.extend([0x22; 16]);
    check(
        "ieee_1619_vectors_2_and_3",
        &key,
        tweak("3333333333"),
        &[0x44; 32],
        &hex("c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0"),
    );
    let mut key = hex("fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0");
    key.extend([0x22; 16]);
    check(
        "ieee_1619_vectors_2_and_3",
        &key,
        tweak("3333333333"),
        &[0x44; 32],
        &hex("af85336b597afc1a900b2eb21ec949d292df4c047e0b21532186a5971a227a89"),
    );
}

#[test]
fn nist_xtsgenaes128_first() {
    check(
        "nist_xtsgenaes128_first",
        &hex("46e6ed9ef42dcdb3c893093c28e1fc0f91f5caa3b6e0bc5a14e783215c1d5b61"),
        tweak("72f3b054cbdc2f9e3c5bc551d44ddba0"),
        &hex("e3778d68e730ef945b4ae3bc5b936bdd"),
        &hex("97409f1f71ae4521cb49a32973de4d05"),
    );
}

#[test]
fn ieee_1619_vectors_15_to_18_stealing() {
    let key = hex("fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0");
    let cases = [
        (17, "6c1625db4671522d3d7599601de7ca09ed"),
        (18, "d069444b7a7e0cab09e24447d24deb1fedbf"),
        (19, "e5df1351c0544ba1350b3363cd8ef4beedbf9d"),
        (20, "9d84c813f719aa2c7be3f66171c7c5c2edbf9dac"),
    ];
    for (len, ct) in cases {
        let pt: Vec<u8> = (0..len as u8).collect();
        check(
            "ieee_1619_vectors_15_to_18_stealing",
            &key,
            tweak("9a78563412"),
            &pt,
            &hex(ct),
        );
    }
}

#[test]
fn nist_xtsgenaes256_count_1() {
    check(
        "nist_xtsgenaes256_count_1",
        &hex(
            "1ea661c58d943a0e4801e42f4b0947149e7f9f8e3e68d0c7505210bd311a0e7c\
             d6e13ffdf2418d8d1911c004cda58da3d619b7e2b9141e58318eea392cf41b08",
        ),
        tweak("adf8d92627464ad2f0428e84a9f87564"),
        &hex("2eedea52cd8215e1acc647e810bbc3642e87287f8d2e57e36c0a24fbc12a202e"),
        &hex("cbaad0e2f6cea3f50b37f934d46a9b130b9d54f07e34f36af793e86f73c6d7db"),
    );
}

const VECTOR_10_KEY: &str = "2718281828459045235360287471352662497757247093699959574966967627\
                             3141592653589793238462643383279502884197169399375105820974944592";

const VECTOR_10_CT: &str = "
   1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b
   5d31e276f8fe4a8d66b317f9ac683f44680a86ac35adfc3345befecb4bb188fd
   5776926c49a3095eb108fd1098baec70aaa66999a72a82f27d848b21d4a741b0
   c5cd4d5fff9dac89aeba122961d03a757123e9870f8acf1000020887891429ca
   2a3e7a7d7df7b10355165c8b9a6d0a7de8b062c4500dc4cd120c0f7418dae3d0
   b5781c34803fa75421c790dfe1de1834f280d7667b327f6c8cd7557e12ac3a0f
   93ec05c52e0493ef31a12d3d9260f79a289d6a379bc70c50841473d1a8cc81ec
   583e9645e07b8d9670655ba5bbcfecc6dc3966380ad8fecb17b6ba02469a020a
   84e18e8f84252070c13e9f1f289be54fbc481457778f616015e1327a02b140f1
   505eb309326d68378f8374595c849d84f4c333ec4423885143cb47bd71c5edae
   9be69a2ffeceb1bec9de244fbe15992b11b77c040f12bd8f6a975a44a0f90c29
   a9abc3d4d893927284c58754cce294529f8614dcd2aba991925fedc4ae74ffac
   6e333b93eb4aff0479da9a410e4450e0dd7ae4c6e2910900575da401fc07059f
   645e8b7e9bfdef33943054ff84011493c27b3429eaedb4ed5376441a77ed4385
   1ad77f16f541dfd269d50d6a5f14fb0aab1cbb4c1550be97f7ab4066193c4caa
   773dad38014bd2092fa755c824bb5e54c4f36ffda9fcea70b9c6e693e148c151";

#[test]
fn ieee_1619_vector_10_aes256_512_bytes() {
    let pt: Vec<u8> = (0..512).map(|i| i as u8).collect();
    check(
        "ieee_1619_vector_10_aes256_512_bytes",
        &hex(VECTOR_10_KEY),
        tweak("ff"),
        &pt,
        &hex(VECTOR_10_CT),
    );
}

#[test]
fn derived_aes256_stealing_37_bytes() {
    let pt: Vec<u8> = (0..37).collect();
    check(
        "derived_aes256_stealing_37_bytes",
        &hex(VECTOR_10_KEY),
        tweak("ff"),
        &pt,
        &hex("1c3b3a102f770386e4836c99e370cf9b d500010cf8fe25a2cf7dce0764caf96c ea00803f5e"),
    );
}

#[test]
fn vector_10_as_many_units() {
    // Vector 10 is data unit 0xff; as unit 3 of a request starting at 0xfc,
    // its bytes must come out unchanged by the units around it.
    let key = hex(VECTOR_10_KEY);
    let pt: Vec<u8> = (0..512).map(|i| i as u8).collect();
    let ct = hex(VECTOR_10_CT);
    let unit = DataUnitSize::new(512).unwrap();
    for &backend in Backend::available() {
        note_backend("vector_10_as_many_units", backend);
        let x = XtsAes256::with_backend(&key, backend).unwrap();
        let mut buf = pt.repeat(40);
        x.encrypt_units(Iv::from_u128(0xfc), 1, unit, &mut buf)
            .unwrap();
        assert_eq!(&buf[3 * 512..4 * 512], &ct[..], "{backend:?}");
        let mut buf = pt.repeat(40);
        x.encrypt_units(Iv::from_u128(0xff - 8 * 20), 8, unit, &mut buf)
            .unwrap();
        assert_eq!(&buf[20 * 512..21 * 512], &ct[..], "{backend:?} step 8");
        x.decrypt_units(Iv::from_u128(0xff - 8 * 20), 8, unit, &mut buf)
            .unwrap();
        assert_eq!(buf, pt.repeat(40), "{backend:?}");
    }
}
