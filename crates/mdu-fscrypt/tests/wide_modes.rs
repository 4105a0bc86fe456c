//! The modes with 32-byte IVs, which the kernel on the test machines does
//! not build (ENOPKG): AES-256-HCTR2 names, and Adiantum contents and
//! names with and without DIRECT_KEY (v1 and v2). Their ciphers are checked
//! against published vectors in their own crates; here, that fscrypt
//! feeds them the key and the IV the kernel does (the key derivation is
//! the one the kernel tests prove for the AES modes) and that names of
//! every length round-trip through the padding rules.

use mdu_adiantum::Adiantum;
use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::policy::{Context, Flags, KeySpec, Mode, Policy};
use mdu_fscrypt::{ContentsCipher, FsInfo, NamesCipher};
use mdu_hctr2::{Hctr2Aes256, Iv};

const FS: FsInfo = FsInfo {
    uuid: [0x5b; 16],
    block_size: 4096,
};

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

/// The HCTR2 name of a per-file-key directory is HCTR2 under the
/// directory's derived key with an all-zero tweak, over the name
/// NUL-padded to the policy's padding.
#[test]
fn hctr2_names_are_hctr2_under_the_derived_key_and_zero_tweak() {
    let master = MasterKey::new(&[0x42; 64]).unwrap();
    for (flags, pad) in [(0u8, 4usize), (1, 8), (2, 16), (3, 32)] {
        let ctx = context(&master, Mode::Aes256Xts, Mode::Aes256Hctr2, flags, 9);
        let dir = NamesCipher::new(&master, &ctx, 12, &FS).unwrap();
        let key = master
            .derive(ctx.policy(), Mode::Aes256Hctr2, ctx.nonce(), &FS.uuid)
            .unwrap();
        let raw = Hctr2Aes256::new(key.as_bytes()).unwrap();
        for len in [1usize, 15, 16, 17, 31, 33, 100, 200, 224, 240, 255] {
            let name: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let stored = dir.encrypt_name(&name).unwrap();
            let mut want = name.clone();
            want.resize(len.max(16).next_multiple_of(pad).min(255), 0);
            raw.encrypt(Iv::ZERO, &mut want).unwrap();
            assert_eq!(stored, want, "flags {flags} len {len}");
            assert_eq!(dir.decrypt_name(&stored).unwrap(), name);
        }
    }
}

/// Under IV_INO_LBLK_64 the tweak is `le32(0) || le32(ino)`, zero-filled
/// to 32 bytes, and the key is the per-mode key of the file system.
#[test]
fn hctr2_names_under_iv_ino_lblk_64_take_the_inode_in_the_tweak() {
    let master = MasterKey::new(&[0x43; 64]).unwrap();
    let ctx = context(&master, Mode::Aes256Xts, Mode::Aes256Hctr2, 0x08 | 3, 7);
    let ino = 0x0102_0304u64;
    let dir = NamesCipher::new(&master, &ctx, ino, &FS).unwrap();
    let key = master
        .derive(ctx.policy(), Mode::Aes256Hctr2, ctx.nonce(), &FS.uuid)
        .unwrap();
    let raw = Hctr2Aes256::new(key.as_bytes()).unwrap();
    let mut want = *b"lblk64 directory entry name.....";
    let stored = dir.encrypt_name(&want).unwrap();
    raw.encrypt(Iv::from_low_u128(u128::from(ino) << 32), &mut want)
        .unwrap();
    assert_eq!(stored, want);
    // Another directory's inode number gives another name.
    let other = NamesCipher::new(&master, &ctx, ino + 1, &FS).unwrap();
    assert_ne!(
        other
            .encrypt_name(b"lblk64 directory entry name.....")
            .unwrap(),
        stored
    );
}

/// Symlink targets up to the block size less 3 round-trip under HCTR2.
#[test]
fn hctr2_symlink_targets_round_trip() {
    let master = MasterKey::new(&[0x44; 64]).unwrap();
    let ctx = context(&master, Mode::Aes256Xts, Mode::Aes256Hctr2, 2, 5);
    let link = NamesCipher::new(&master, &ctx, 20, &FS).unwrap();
    for len in [1usize, 16, 17, 255, 1000, 4093] {
        let target: Vec<u8> = (0..len).map(|i| b'/' + (i % 70) as u8).collect();
        let payload = link.encrypt_symlink(&target).unwrap();
        assert_eq!(link.decrypt_symlink(&payload).unwrap(), target, "len {len}");
    }
}

fn v1_context(contents: Mode, names: Mode, flags: u8, nonce: u8) -> Context {
    let policy = Policy::new(
        contents,
        names,
        Flags::from_bits(flags).unwrap(),
        0,
        KeySpec::V1 {
            descriptor: [0x0d; 8],
        },
    )
    .unwrap();
    Context::new(policy, [nonce; 16])
}

/// The Adiantum tweak of data unit `index`: `le64(index)`, then the nonce
/// under DIRECT_KEY, zeros to 32 bytes.
fn adiantum_tweak(index: u64, nonce: Option<[u8; 16]>) -> Iv<32> {
    let mut t = [0u8; 32];
    t[..8].copy_from_slice(&index.to_le_bytes());
    if let Some(n) = nonce {
        t[8..24].copy_from_slice(&n);
    }
    Iv(t)
}

/// Adiantum contents with per-file keys: each 4 KiB block is one Adiantum
/// message under the file's derived key and the tweak `le64(lblk)`.
#[test]
fn adiantum_contents_with_per_file_keys() {
    let master = MasterKey::new(&[0x51; 64]).unwrap();
    let ctx = context(&master, Mode::Adiantum, Mode::Adiantum, 2, 3);
    let file = ContentsCipher::new(&master, &ctx, 14, &FS).unwrap();
    let key = master
        .derive(ctx.policy(), Mode::Adiantum, ctx.nonce(), &FS.uuid)
        .unwrap();
    let raw = Adiantum::new(key.as_bytes()).unwrap();
    let plain: Vec<u8> = (0..3 * 4096).map(|i| (i * 13 + 1) as u8).collect();
    let mut blocks = plain.clone();
    file.encrypt_blocks(1000, &mut blocks).unwrap();
    for (i, block) in blocks.chunks(4096).enumerate() {
        let mut want = plain[i * 4096..(i + 1) * 4096].to_vec();
        raw.encrypt(adiantum_tweak(1000 + i as u64, None), &mut want)
            .unwrap();
        assert_eq!(block, &want[..], "block {i}");
    }
    file.decrypt_blocks(1000, &mut blocks).unwrap();
    assert_eq!(blocks, plain);
}

/// DIRECT_KEY (v2): one key per mode for the whole file system, derived
/// with HKDF context 3; the file's nonce is in the tweak, so two files
/// with equal contents still differ. Names use index 0 with the nonce.
#[test]
fn adiantum_direct_key_v2_puts_the_nonce_in_the_tweak() {
    let master = MasterKey::new(&[0x52; 64]).unwrap();
    let a = context(&master, Mode::Adiantum, Mode::Adiantum, 0x04 | 3, 0xa1);
    let b = context(&master, Mode::Adiantum, Mode::Adiantum, 0x04 | 3, 0xb2);
    let key = master
        .derive(a.policy(), Mode::Adiantum, a.nonce(), &FS.uuid)
        .unwrap();
    let key_b = master
        .derive(b.policy(), Mode::Adiantum, b.nonce(), &FS.uuid)
        .unwrap();
    assert_eq!(key.as_bytes(), key_b.as_bytes(), "one key per mode");
    let raw = Adiantum::new(key.as_bytes()).unwrap();

    let plain = vec![0x33u8; 4096];
    let (mut x, mut y) = (plain.clone(), plain.clone());
    ContentsCipher::new(&master, &a, 20, &FS)
        .unwrap()
        .encrypt_blocks(7, &mut x)
        .unwrap();
    ContentsCipher::new(&master, &b, 21, &FS)
        .unwrap()
        .encrypt_blocks(7, &mut y)
        .unwrap();
    assert_ne!(x, y);
    let mut want = plain.clone();
    raw.encrypt(adiantum_tweak(7, Some([0xa1; 16])), &mut want)
        .unwrap();
    assert_eq!(x, want);

    let dir = NamesCipher::new(&master, &a, 20, &FS).unwrap();
    let stored = dir.encrypt_name(b"adiantum.txt").unwrap();
    let mut want = *b"adiantum.txt\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
    raw.encrypt(adiantum_tweak(0, Some([0xa1; 16])), &mut want)
        .unwrap();
    assert_eq!(stored, want);
    assert_eq!(dir.decrypt_name(&stored).unwrap(), b"adiantum.txt");
}

/// v1 with DIRECT_KEY: the master key itself is the Adiantum key (no
/// per-file derivation), the nonce in the tweak.
#[test]
fn adiantum_direct_key_v1_uses_the_master_key() {
    let raw_key = [0x53u8; 32];
    let master = MasterKey::new(&raw_key).unwrap();
    let ctx = v1_context(Mode::Adiantum, Mode::Adiantum, 0x04 | 3, 0x5c);
    let raw = Adiantum::new(&raw_key).unwrap();
    let mut block = vec![0x44u8; 4096];
    ContentsCipher::new(&master, &ctx, 30, &FS)
        .unwrap()
        .encrypt_blocks(2, &mut block)
        .unwrap();
    let mut want = vec![0x44u8; 4096];
    raw.encrypt(adiantum_tweak(2, Some([0x5c; 16])), &mut want)
        .unwrap();
    assert_eq!(block, want);
    let dir = NamesCipher::new(&master, &ctx, 30, &FS).unwrap();
    for len in [1usize, 16, 17, 100, 255] {
        let name = vec![b'q'; len];
        let stored = dir.encrypt_name(&name).unwrap();
        assert_eq!(stored.len(), len.max(16).next_multiple_of(32).min(255));
        assert_eq!(dir.decrypt_name(&stored).unwrap(), name);
    }
}

/// Adiantum with IV_INO_LBLK_64 (v2): the per-mode key of the file system
/// and `le32(lblk) || le32(ino)` in the tweak.
#[test]
fn adiantum_iv_ino_lblk_64() {
    let master = MasterKey::new(&[0x54; 64]).unwrap();
    let ctx = context(&master, Mode::Adiantum, Mode::Adiantum, 0x08 | 2, 9);
    let key = master
        .derive(ctx.policy(), Mode::Adiantum, ctx.nonce(), &FS.uuid)
        .unwrap();
    let raw = Adiantum::new(key.as_bytes()).unwrap();
    let mut block = vec![0x45u8; 4096];
    ContentsCipher::new(&master, &ctx, 77, &FS)
        .unwrap()
        .encrypt_blocks(5, &mut block)
        .unwrap();
    let mut want = vec![0x45u8; 4096];
    raw.encrypt(Iv::from_low_u128(77 << 32 | 5), &mut want)
        .unwrap();
    assert_eq!(block, want);
}
