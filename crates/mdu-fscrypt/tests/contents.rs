//! Contents paths the kernel on the test machines cannot show: AES-128-
//! CBC-ESSIV (against OpenSSL: AES-256-ECB of each IV under SHA-256 of the
//! file key, then AES-128-CBC), the IV_INO_LBLK_32 counter wrapping at
//! 2^32 inside one request, and the IV_INO_LBLK_64 index limit.

use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::policy::{Context, Flags, KeySpec, Mode, Policy};
use mdu_fscrypt::{ContentsCipher, Error, FsInfo};
use openssl::symm::{Cipher, Crypter, Mode as SslMode};
use sha2::{Digest, Sha256};

const FS: FsInfo = FsInfo {
    uuid: [0x5b; 16],
    block_size: 4096,
};

fn ssl(cipher: Cipher, key: &[u8], iv: Option<&[u8]>, data: &[u8]) -> Vec<u8> {
    let mut c = Crypter::new(cipher, SslMode::Encrypt, key, iv).unwrap();
    c.pad(false);
    let mut out = vec![0u8; data.len() + 16];
    let n = c.update(data, &mut out).unwrap();
    let m = c.finalize(&mut out[n..]).unwrap();
    out.truncate(n + m);
    out
}

fn context(master: &MasterKey, contents: Mode, names: Mode, flags: u8, nonce: u8) -> Context {
    let policy = Policy::new(
        contents,
        names,
        Flags::from_bits(flags).unwrap(),
        0,
        KeySpec::V2 {
            identifier: master.identifier().0,
        },
    )
    .unwrap();
    Context::new(policy, [nonce; 16])
}

#[test]
fn essiv_contents_equal_openssl() {
    let master = MasterKey::new(&[0x31; 32]).unwrap();
    let ctx = context(&master, Mode::Aes128CbcEssiv, Mode::Aes128Cts, 2, 0x44);
    let file = ContentsCipher::new(&master, &ctx, 77, &FS).unwrap();
    let key = master
        .derive(ctx.policy(), Mode::Aes128CbcEssiv, ctx.nonce(), &FS.uuid)
        .unwrap();
    let salt = Sha256::digest(key.as_bytes());
    let plain: Vec<u8> = (0..3 * 4096u32).map(|i| (i % 251) as u8).collect();
    let mut got = plain.clone();
    file.encrypt_blocks(7, &mut got).unwrap();
    for (i, block) in plain.chunks(4096).enumerate() {
        let mut iv = [0u8; 16];
        iv[..8].copy_from_slice(&(7 + i as u64).to_le_bytes());
        let essiv = ssl(Cipher::aes_256_ecb(), &salt, None, &iv);
        let want = ssl(Cipher::aes_128_cbc(), key.as_bytes(), Some(&essiv), block);
        assert_eq!(&got[i * 4096..(i + 1) * 4096], &want[..], "block {}", 7 + i);
    }
    file.decrypt_blocks(7, &mut got).unwrap();
    assert_eq!(got, plain);
}

#[test]
fn iv_ino_lblk_32_wraps_inside_one_request() {
    let master = MasterKey::new(&[0x52; 64]).unwrap();
    let ino = 4242;
    let ctx = context(&master, Mode::Aes256Xts, Mode::Aes256Cts, 0x10, 0x17);
    let file = ContentsCipher::new(&master, &ctx, ino, &FS).unwrap();
    let hashed = master.inode_hash_key().hash(ino);
    // Units whose IVs are 2^32 - 2, 2^32 - 1, 0, 1, 2.
    let first = u64::from(0u32.wrapping_sub(hashed).wrapping_sub(2));
    let plain: Vec<u8> = (0..5 * 4096u32).map(|i| (i * 7 % 253) as u8).collect();
    let mut batched = plain.clone();
    file.encrypt_units(first, &mut batched).unwrap();
    for (i, unit) in plain.chunks(4096).enumerate() {
        let mut one = unit.to_vec();
        file.encrypt_units(first + i as u64, &mut one).unwrap();
        assert_eq!(one, &batched[i * 4096..(i + 1) * 4096], "unit {i}");
    }
    // The unit after the wrap is encrypted under IV 0: the same bytes as
    // the unit whose index makes the sum zero.
    let mut zero = plain[2 * 4096..3 * 4096].to_vec();
    file.encrypt_units(first + 2, &mut zero).unwrap();
    let mut again = plain[2 * 4096..3 * 4096].to_vec();
    file.encrypt_units(first + 2 + (1 << 32), &mut again)
        .unwrap();
    assert_eq!(
        zero, again,
        "the index is taken mod 2^32, as the kernel does"
    );
    file.decrypt_units(first, &mut batched).unwrap();
    assert_eq!(batched, plain);
}

#[test]
fn iv_ino_lblk_64_refuses_indices_past_32_bits_and_changes_nothing() {
    let master = MasterKey::new(&[0x61; 64]).unwrap();
    let ctx = context(&master, Mode::Aes256Xts, Mode::Aes256Cts, 0x08, 0x29);
    let file = ContentsCipher::new(&master, &ctx, 99, &FS).unwrap();
    let mut buf = vec![0xabu8; 2 * 4096];
    let last = u64::from(u32::MAX);
    assert!(file.encrypt_units(last - 1, &mut buf).is_ok());
    let before = buf.clone();
    assert!(matches!(
        file.encrypt_units(last, &mut buf),
        Err(Error::UnitIndex { .. })
    ));
    assert_eq!(buf, before);
    // Inode numbers past 32 bits cannot be put in the IV at all.
    assert_eq!(
        ContentsCipher::new(&master, &ctx, 1 << 32, &FS).unwrap_err(),
        Error::InodeNumber { ino: 1 << 32 }
    );
}

#[test]
fn wrong_keys_and_unsupported_modes_are_named() {
    let master = MasterKey::new(&[0x70; 64]).unwrap();
    let other = MasterKey::new(&[0x71; 64]).unwrap();
    let ctx = context(&master, Mode::Aes256Xts, Mode::Aes256Cts, 3, 1);
    let err = ContentsCipher::new(&other, &ctx, 12, &FS).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&master.identifier().to_string())
            && text.contains(&other.identifier().to_string()),
        "{text}"
    );
    let sm4 = context(&master, Mode::Sm4Xts, Mode::Sm4Cts, 3, 1);
    assert_eq!(
        mdu_fscrypt::NamesCipher::new(&master, &sm4, 12, &FS).unwrap_err(),
        Error::Unsupported { mode: Mode::Sm4Cts }
    );
    assert_eq!(
        ContentsCipher::new(&master, &sm4, 12, &FS).unwrap_err(),
        Error::Unsupported { mode: Mode::Sm4Xts }
    );
    // A buffer that is not whole data units is refused before any change.
    let file = ContentsCipher::new(&master, &ctx, 12, &FS).unwrap();
    let mut odd = vec![1u8; 4096 + 16];
    assert!(matches!(
        file.encrypt_units(0, &mut odd),
        Err(Error::Request(_))
    ));
    assert!(odd.iter().all(|&b| b == 1));
}
