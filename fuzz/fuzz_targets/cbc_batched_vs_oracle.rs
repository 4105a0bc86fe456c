//! A batched AES-CBC request on any backend equals an independent CBC
//! written here block by block on the RustCrypto `aes` crate: consecutive
//! IVs (any step, near the carries) and explicit IV lists, encryption and
//! decryption, in place and out of place. Units that are not whole blocks
//! and IV lists of the wrong length are errors that change nothing.
#![no_main]

use aes::cipher::consts::U16;
use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, BlockSizeUser, KeyInit};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mdu_cbc::{AesCbc128, AesCbc256, Backend, DataUnitCipher, DataUnitSize, Direction, Error, Iv};

#[derive(Arbitrary, Debug)]
struct Input {
    wide_key: bool,
    key: [u8; 32],
    backend: u8,
    blocks: u8,
    count: u8,
    listed: bool,
    iv_kind: u8,
    iv_raw: u128,
    step: u64,
    ivs: Vec<u128>,
    fill: u8,
    dst_off: u8,
}

/// CBC of one unit with the `aes` crate, one block at a time.
/// The block ciphers the oracle runs on.
trait Aes: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16> {}
impl<A: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16>> Aes for A {}

fn oracle<A: Aes>(a: &A, enc: bool, iv: Iv, unit: &mut [u8]) {
    let mut prev = iv.0;
    for b in unit.chunks_exact_mut(16) {
        let mut x = aes::Block::default();
        if enc {
            for i in 0..16 {
                x[i] = b[i] ^ prev[i];
            }
            a.encrypt_block(&mut x);
            b.copy_from_slice(&x);
            prev.copy_from_slice(&x);
        } else {
            x.copy_from_slice(b);
            let c: [u8; 16] = b.try_into().unwrap();
            a.decrypt_block(&mut x);
            for i in 0..16 {
                b[i] = x[i] ^ prev[i];
            }
            prev = c;
        }
    }
}

fn run<C: DataUnitCipher<Iv = Iv>, A: Aes>(c: &C, a: &A, input: &Input) {
    // Short units of any block count, and sector sizes whose groups run in
    // phases (1, 2, 4 KiB).
    let (unit, count) = match input.blocks {
        0..=199 => (
            16 * (usize::from(input.blocks % 80) + 1),
            usize::from(input.count % 40) + 1,
        ),
        b => (1024 << (b % 3), usize::from(input.count % 36) + 1),
    };
    let size = DataUnitSize::new(unit).unwrap();
    let first = match input.iv_kind % 3 {
        0 => input.iv_raw,
        1 => (1u128 << 64).wrapping_sub(u128::from(input.iv_kind)),
        _ => 0u128.wrapping_sub(u128::from(input.iv_kind)),
    };
    let step = if input.step % 3 == 0 {
        input.step
    } else {
        input.step % 9
    };
    let ivs: Vec<Iv> = (0..count)
        .map(|i| {
            if input.listed {
                Iv::from_u128(input.ivs.get(i).copied().unwrap_or(i as u128 ^ first))
            } else {
                Iv::from_u128(first.wrapping_add(i as u128 * u128::from(step)))
            }
        })
        .collect();
    let plain: Vec<u8> = (0..unit * count)
        .map(|i| (i as u8).wrapping_mul(31) ^ input.fill)
        .collect();

    let mut want = plain.clone();
    for (u, iv) in want.chunks_mut(unit).zip(&ivs) {
        oracle(a, true, *iv, u);
    }
    let crypt = |dir: Direction, buf: &mut [u8]| {
        if input.listed {
            c.crypt_units_with_ivs(dir, &ivs, size, buf)
        } else {
            c.crypt_units(dir, Iv::from_u128(first), step, size, buf)
        }
    };
    let mut got = plain.clone();
    crypt(Direction::Encrypt, &mut got).unwrap();
    assert_eq!(got, want, "encrypt != oracle");
    crypt(Direction::Decrypt, &mut got).unwrap();
    assert_eq!(got, plain, "decrypt does not invert");
    let mut back = want.clone();
    for (u, iv) in back.chunks_mut(unit).zip(&ivs) {
        oracle(a, false, *iv, u);
    }
    assert_eq!(back, plain, "the oracle does not invert");

    if !input.listed {
        // Out of place into a misaligned destination.
        let off = usize::from(input.dst_off % 16);
        let mut store = vec![0xa5u8; unit * count + 16];
        let dst = &mut store[off..off + unit * count];
        c.crypt_units_to(
            Direction::Decrypt,
            Iv::from_u128(first),
            step,
            size,
            &want,
            dst,
        )
        .unwrap();
        assert_eq!(dst, &plain[..], "decrypt_to != plaintext");
        assert!(store[..off].iter().all(|&b| b == 0xa5));
        assert!(store[off + unit * count..].iter().all(|&b| b == 0xa5));
    } else if count > 1 {
        // One IV too few: an error, nothing written.
        let mut buf = plain.clone();
        let r = c.crypt_units_with_ivs(Direction::Encrypt, &ivs[1..], size, &mut buf);
        assert_eq!(
            r,
            Err(Error::IvCountMismatch {
                ivs: count - 1,
                units: count
            })
        );
        assert_eq!(buf, plain);
    }
    // A unit that is not whole blocks: an error, nothing written.
    let mut ragged = plain[..unit - 1].to_vec();
    if ragged.len() >= 16 {
        assert!(matches!(
            c.encrypt_unit(ivs[0], &mut ragged),
            Err(Error::UnitSizeMisaligned { .. })
        ));
        assert_eq!(ragged, &plain[..unit - 1]);
    }
}

fuzz_target!(|input: Input| {
    let avail = Backend::available();
    let backend = avail[usize::from(input.backend) % avail.len()];
    if input.wide_key {
        let c = AesCbc256::with_backend(&input.key, backend).unwrap();
        let a = aes::Aes256::new_from_slice(&input.key).unwrap();
        run(&c, &a, &input);
    } else {
        let key = &input.key[..16];
        let c = AesCbc128::with_backend(key, backend).unwrap();
        let a = aes::Aes128::new_from_slice(key).unwrap();
        run(&c, &a, &input);
    }
});
