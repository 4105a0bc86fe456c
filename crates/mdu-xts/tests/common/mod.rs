//! Shared pieces of the property tests: request strategies, and every path
//! of a request on the cipher of its key's size.

#![allow(dead_code, unreachable_pub)]

use mdu_xts::{
    Backend, DataUnitCipher, DataUnitSize, DataUnits, Direction, Iv, XtsAes128, XtsAes256,
};
use proptest::prelude::*;

pub use mdu_aes::testing::note_backend;

/// A random request: key, geometry, IVs, data, misalignments, segment cuts.
#[derive(Clone, Debug)]
pub struct Request {
    pub key: Vec<u8>,
    pub unit: usize,
    pub count: usize,
    pub iv: Iv,
    pub step: u64,
    pub seed: u64,
    pub src_off: usize,
    pub dst_off: usize,
    pub cuts: Vec<usize>,
}

impl Request {
    pub fn len(&self) -> usize {
        self.unit * self.count
    }

    pub fn plaintext(&self) -> Vec<u8> {
        let mut x = self.seed | 1;
        (0..self.len())
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    /// The cut points scaled into `0..=len`, sorted.
    pub fn cut_points(&self) -> Vec<usize> {
        let len = self.len();
        let mut c: Vec<usize> = self.cuts.iter().map(|&c| c % (len + 1)).collect();
        c.sort_unstable();
        c
    }

    pub fn units(&self) -> DataUnitSize {
        DataUnitSize::new(self.unit).unwrap()
    }
}

/// Keys of both sizes whose halves differ.
pub fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 32),
        proptest::collection::vec(any::<u8>(), 64),
    ]
    .prop_filter("equal halves", |k| k[..k.len() / 2] != k[k.len() / 2..])
}

/// IVs, half of them within a few units of the 2^64 or 2^128 carry.
pub fn iv() -> impl Strategy<Value = Iv> {
    prop_oneof![
        any::<u128>().prop_map(Iv::from_u128),
        (0u128..48).prop_map(|d| Iv::from_u128((1u128 << 64) - d)),
        (0u128..48).prop_map(|d| Iv::from_u128(0u128.wrapping_sub(d))),
        (0u128..48).prop_map(|d| Iv::from_u128(((u64::MAX as u128) << 64) - d)),
    ]
}

/// (unit bytes, unit count): long single units up to 70,000 bytes, and up to
/// 40 units of assorted sizes, ragged (not a multiple of 16) about half the
/// time.
pub fn geometry() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![
        2 => (16usize..=70_000, Just(1usize)),
        3 => (16usize..=700, 1usize..=40),
        3 => ((1usize..=160).prop_map(|b| 16 * b), 1usize..=40),
        2 => ((1usize..=130).prop_map(|b| 16 * b), 1usize..=16, 1usize..=15)
            .prop_map(|(u, c, r)| (u + r, c)),
    ]
}

pub fn request() -> impl Strategy<Value = Request> {
    (
        key(),
        geometry(),
        iv(),
        prop_oneof![Just(1u64), Just(8u64), any::<u64>()],
        any::<u64>(),
        0usize..64,
        0usize..64,
        proptest::collection::vec(any::<usize>(), 0..6),
    )
        .prop_map(
            |(key, (unit, count), iv, step, seed, src_off, dst_off, cuts)| Request {
                key,
                unit,
                count,
                iv,
                step,
                seed,
                src_off,
                dst_off,
                cuts,
            },
        )
}

pub use mdu_core::testing::split_mut;

/// Encrypts with the key of `r` (XTS-AES-128 or -256, by its length) on
/// `backend` along every path of `DataUnits` and the trait, asserts they
/// agree and decrypt back, and returns the ciphertext.
pub fn all_paths(backend: Backend, r: &Request, plain: &[u8]) -> Vec<u8> {
    match r.key.len() {
        32 => paths(&XtsAes128::with_backend(&r.key, backend).unwrap(), r, plain),
        64 => paths(&XtsAes256::with_backend(&r.key, backend).unwrap(), r, plain),
        n => panic!("key length {n}"),
    }
}

fn paths<C: DataUnitCipher<Iv = Iv>>(cipher: &C, r: &Request, plain: &[u8]) -> Vec<u8> {
    let len = r.len();
    let units = DataUnits::new(cipher, r.unit).unwrap().with_iv_step(r.step);

    let mut inplace = plain.to_vec();
    units.encrypt(r.iv, &mut inplace).unwrap();

    let mut trait_path = plain.to_vec();
    cipher
        .encrypt_units(r.iv, r.step, r.units(), &mut trait_path)
        .unwrap();
    assert_eq!(trait_path, inplace, "encrypt_units vs DataUnits::encrypt");

    // Out of place, misaligned source and destination.
    let mut src = vec![0u8; len + 64];
    let mut dst = vec![0xeeu8; len + 64];
    src[r.src_off..r.src_off + len].copy_from_slice(plain);
    units
        .encrypt_to(
            r.iv,
            &src[r.src_off..r.src_off + len],
            &mut dst[r.dst_off..r.dst_off + len],
        )
        .unwrap();
    assert_eq!(&dst[r.dst_off..r.dst_off + len], &inplace[..], "encrypt_to");
    assert!(
        dst[..r.dst_off].iter().all(|&b| b == 0xee),
        "wrote before dst"
    );
    assert!(
        dst[r.dst_off + len..].iter().all(|&b| b == 0xee),
        "wrote after dst"
    );

    // The same IVs as an explicit list, and the list reversed against one
    // unit at a time.
    let ivs: Vec<Iv> = (0..r.count)
        .map(|i| r.iv.advance(i as u128 * u128::from(r.step)))
        .collect();
    let mut listed = plain.to_vec();
    units.encrypt_with_ivs(&ivs, &mut listed).unwrap();
    assert_eq!(listed, inplace, "encrypt_with_ivs (counter IVs)");
    let reversed: Vec<Iv> = ivs.iter().rev().copied().collect();
    let mut rev = plain.to_vec();
    cipher
        .crypt_units_with_ivs(Direction::Encrypt, &reversed, r.units(), &mut rev)
        .unwrap();
    let mut one_by_one = plain.to_vec();
    for (chunk, iv) in one_by_one.chunks_mut(r.unit).zip(&reversed) {
        cipher.encrypt_unit(*iv, chunk).unwrap();
    }
    assert_eq!(rev, one_by_one, "crypt_units_with_ivs (reversed IVs)");
    units.decrypt_with_ivs(&reversed, &mut rev).unwrap();
    assert_eq!(rev, plain, "decrypt_with_ivs");

    // Segments.
    let mut seg = plain.to_vec();
    units
        .encrypt_segments(r.iv, &mut split_mut(&mut seg, &r.cut_points()))
        .unwrap();
    assert_eq!(seg, inplace, "encrypt_segments");

    // Decryption on every path.
    let mut back = inplace.clone();
    units.decrypt(r.iv, &mut back).unwrap();
    assert_eq!(back, plain, "decrypt");
    src[r.src_off..r.src_off + len].copy_from_slice(&inplace);
    units
        .decrypt_to(
            r.iv,
            &src[r.src_off..r.src_off + len],
            &mut dst[r.dst_off..r.dst_off + len],
        )
        .unwrap();
    assert_eq!(&dst[r.dst_off..r.dst_off + len], plain, "decrypt_to");
    let mut seg = inplace.clone();
    units
        .decrypt_segments(r.iv, &mut split_mut(&mut seg, &r.cut_points()))
        .unwrap();
    assert_eq!(seg, plain, "decrypt_segments");
    inplace
}
