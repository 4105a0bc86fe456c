//! The modes with 32-byte IVs, which the kernel on the test machines does
//! not build (ENOPKG): AES-256-HCTR2 names. Their ciphers are checked
//! against published vectors in their own crates; here, that fscrypt
//! feeds them the key and the IV the kernel does (the key derivation is
//! the one the kernel tests prove for the AES modes) and that names of
//! every length round-trip through the padding rules.

use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::policy::{Context, Flags, KeySpec, Mode, Policy};
use mdu_fscrypt::{FsInfo, NamesCipher};
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
