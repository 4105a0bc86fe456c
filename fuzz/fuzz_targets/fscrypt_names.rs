//! fscrypt names on untrusted input. CBC-CS3 on any backend equals CS3
//! built here from the RustCrypto `aes` crate block by block (pad with
//! zeros, CBC, swap the last two blocks, cut), both directions, for every
//! length from 16 bytes; shorter inputs are errors that change nothing.
//! Any bytes given to the context parser, the name decryptor and the
//! symlink decryptor give a result or a typed error, never a panic, and a
//! context that parses writes back the same bytes.
#![no_main]

use aes::cipher::consts::U16;
use aes::cipher::{BlockCipherEncrypt, BlockSizeUser, KeyInit};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mdu_cbc::{AesCtsCbc128, AesCtsCbc256, Backend, Iv};
use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::policy::Context;
use mdu_fscrypt::{FsInfo, NamesCipher};

#[derive(Arbitrary, Debug)]
struct Input {
    wide_key: bool,
    key: [u8; 32],
    backend: u8,
    iv: u128,
    data: Vec<u8>,
    context: Vec<u8>,
    master: Vec<u8>,
    ino: u64,
}

fn cs3<A: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16>>(
    a: &A,
    iv: Iv,
    plain: &[u8],
) -> Vec<u8> {
    let blocks = plain.len().div_ceil(16);
    let mut c = plain.to_vec();
    c.resize(16 * blocks, 0);
    let mut prev = iv.0;
    for b in c.chunks_exact_mut(16) {
        let mut x = aes::Block::default();
        for i in 0..16 {
            x[i] = b[i] ^ prev[i];
        }
        a.encrypt_block(&mut x);
        b.copy_from_slice(&x);
        prev.copy_from_slice(&x);
    }
    if blocks == 1 {
        return c;
    }
    let r = plain.len() - 16 * (blocks - 1);
    let mut out = c[..16 * (blocks - 2)].to_vec();
    out.extend_from_slice(&c[16 * (blocks - 1)..]);
    out.extend_from_slice(&c[16 * (blocks - 2)..16 * (blocks - 2) + r]);
    out
}

fuzz_target!(|input: Input| {
    let backends = Backend::available();
    let backend = backends[usize::from(input.backend) % backends.len()];
    let iv = Iv::from_u128(input.iv);
    let (want, got, back) = if input.wide_key {
        let c = AesCtsCbc256::with_backend(&input.key, backend).unwrap();
        let a = aes::Aes256::new_from_slice(&input.key).unwrap();
        run(
            &input.data,
            iv,
            |b| c.encrypt(iv, b),
            |b| c.decrypt(iv, b),
            &a,
        )
    } else {
        let c = AesCtsCbc128::with_backend(&input.key[..16], backend).unwrap();
        let a = aes::Aes128::new_from_slice(&input.key[..16]).unwrap();
        run(
            &input.data,
            iv,
            |b| c.encrypt(iv, b),
            |b| c.decrypt(iv, b),
            &a,
        )
    };
    assert_eq!(got, want, "{backend}: encrypt {} bytes", input.data.len());
    assert_eq!(
        back,
        input.data,
        "{backend}: decrypt {} bytes",
        input.data.len()
    );

    // Untrusted metadata: a context, and names and targets under it.
    if let Ok(ctx) = Context::parse(&input.context) {
        assert_eq!(ctx.to_bytes(), input.context);
        if let Ok(master) = MasterKey::new(&input.master) {
            let fs = FsInfo {
                uuid: input.key[..16].try_into().unwrap(),
                block_size: 4096,
            };
            if let Ok(names) = NamesCipher::new(&master, &ctx, input.ino, &fs) {
                if let Ok(name) = names.decrypt_name(&input.data) {
                    assert!(!name.is_empty() && !name.contains(&0) && !name.contains(&b'/'));
                }
                if let Ok(target) = names.decrypt_symlink(&input.data) {
                    assert!(!target.is_empty() && !target.contains(&0));
                }
            }
        }
    }
});

/// The oracle's ciphertext, the cipher's, and the cipher's decryption of
/// it; for inputs under 16 bytes, both calls must fail and leave the
/// buffer as it was (then all three are the input, or empty).
fn run<A: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16>, E, D>(
    data: &[u8],
    iv: Iv,
    enc: E,
    dec: D,
    a: &A,
) -> (Vec<u8>, Vec<u8>, Vec<u8>)
where
    E: Fn(&mut [u8]) -> Result<(), mdu_cbc::Error>,
    D: Fn(&mut [u8]) -> Result<(), mdu_cbc::Error>,
{
    let mut got = data.to_vec();
    if data.len() < 16 {
        assert!(enc(&mut got).is_err() && dec(&mut got).is_err());
        assert_eq!(got, data);
        return (got.clone(), got, data.to_vec());
    }
    enc(&mut got).unwrap();
    let want = cs3(a, iv, data);
    let mut back = got.clone();
    dec(&mut back).unwrap();
    (want, got, back)
}
