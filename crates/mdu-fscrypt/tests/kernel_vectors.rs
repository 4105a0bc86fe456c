//! Every key, IV, ciphertext block, encrypted name, symlink payload and
//! no-key name of five ext4 trees the kernel encrypted (Linux 6.18, one
//! per policy: v2 with 32-byte name padding, IV_INO_LBLK_64,
//! IV_INO_LBLK_32, 512-byte data units with 4-byte padding, and v1),
//! re-derived and checked in both directions. The ciphertexts, contexts
//! and names in `data/kernel-vectors.json` were read from the kernel's
//! image; the derived keys there come from a model that reproduced all of
//! them.

use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::nokey::NoKeyName;
use mdu_fscrypt::policy::{Context, KeySpec};
use mdu_fscrypt::{ContentsCipher, FsInfo, NamesCipher};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex: {s}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn hex16(s: &str) -> [u8; 16] {
    hex(s).try_into().unwrap()
}

fn vectors() -> Value {
    let text = include_str!("data/kernel-vectors.json");
    serde_json::from_str(text).unwrap()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

#[derive(Default, Debug)]
struct Counts {
    blocks: usize,
    files: usize,
    names: usize,
    symlinks: usize,
}

#[test]
fn every_tree_matches_the_kernel_in_both_directions() {
    let v = vectors();
    let fs = FsInfo {
        uuid: hex16(str_of(&v, "fs_uuid")),
        block_size: v["block_size"].as_u64().unwrap() as u32,
    };
    let v2 = MasterKey::new(&hex(str_of(&v, "v2_master_key"))).unwrap();
    let v1 = MasterKey::new(&hex(str_of(&v, "v1_master_key"))).unwrap();
    assert_eq!(v2.identifier().0, hex16(str_of(&v, "v2_key_identifier")));
    assert_eq!(
        v1.v1_descriptor().to_vec(),
        hex(str_of(&v, "v1_descriptor"))
    );
    for tree in v["trees"].as_array().unwrap() {
        let name = str_of(tree, "name");
        let mut counts = Counts::default();
        for inode in tree["inodes"].as_array().unwrap() {
            let ino = inode["ino"].as_u64().unwrap();
            let what = format!("{name}: inode {ino}");
            let context = hex(str_of(inode, "context"));
            let ctx = Context::parse(&context).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(ctx.to_bytes(), context, "{what}: context round trip");
            assert_eq!(ctx.nonce(), &hex16(str_of(inode, "nonce")), "{what}");
            let master = match ctx.policy().key() {
                KeySpec::V1 { .. } => &v1,
                KeySpec::V2 { .. } => &v2,
            };
            let policy = ctx.policy();
            let kind = str_of(inode, "type");
            let mode = if kind == "reg" {
                policy.contents()
            } else {
                policy.filenames()
            };
            let key = master.derive(policy, mode, ctx.nonce(), &fs.uuid).unwrap();
            assert_eq!(key.as_bytes(), hex(str_of(inode, "key")), "{what}: key");
            if let Some(h) = inode["hashed_ino"].as_str() {
                let want = u32::from_str_radix(h, 16).unwrap();
                assert_eq!(
                    master.inode_hash_key().hash(ino),
                    want,
                    "{what}: hashed_ino"
                );
            }
            match kind {
                "reg" => {
                    check_file(master, &ctx, ino, &fs, inode, &what, &mut counts);
                }
                "dir" => {
                    let names = NamesCipher::new(master, &ctx, ino, &fs).unwrap();
                    for e in inode["entries"].as_array().unwrap() {
                        let plain = str_of(e, "name").as_bytes();
                        let disk = hex(str_of(e, "disk_name"));
                        let what = format!("{what}: entry {:?}", str_of(e, "name"));
                        assert_eq!(disk.len() as u64, e["disk_len"].as_u64().unwrap());
                        assert_eq!(names.decrypt_name(&disk).unwrap(), plain, "{what}");
                        assert_eq!(names.encrypt_name(plain).unwrap(), disk, "{what}");
                        let hash = u32::from_str_radix(str_of(e, "dirhash"), 16).unwrap();
                        let minor = u32::from_str_radix(str_of(e, "minor_hash"), 16).unwrap();
                        let nokey = NoKeyName::new(hash, minor, &disk).unwrap().encode();
                        assert_eq!(nokey, str_of(e, "nokey"), "{what}: no-key name");
                        counts.names += 1;
                    }
                }
                "lnk" => {
                    let link = NamesCipher::new(master, &ctx, ino, &fs).unwrap();
                    let payload = hex(str_of(inode, "on_disk"));
                    let target = str_of(inode, "target").as_bytes();
                    assert_eq!(
                        payload.len() as u64,
                        inode["i_size"].as_u64().unwrap() + 1,
                        "{what}"
                    );
                    assert_eq!(link.decrypt_symlink(&payload).unwrap(), target, "{what}");
                    assert_eq!(link.encrypt_symlink(target).unwrap(), payload, "{what}");
                    let nokey = NoKeyName::new(0, 0, &payload[2..payload.len() - 1])
                        .unwrap()
                        .encode();
                    assert_eq!(nokey, str_of(inode, "nokey_target"), "{what}");
                    counts.symlinks += 1;
                }
                other => panic!("{what}: unknown type {other}"),
            }
        }
        println!("{name}: {counts:?}");
        assert!(
            counts.files >= 5 && counts.names >= 8 && counts.symlinks >= 2,
            "{name}: {counts:?}"
        );
    }
}

/// Decrypts every block the kernel wrote for the file, checks the
/// plaintext's SHA-256 and that the bytes past the end are zeros, then
/// encrypts it back to the same ciphertext: per block, and for files of
/// several blocks also in one call.
fn check_file(
    master: &MasterKey,
    ctx: &Context,
    ino: u64,
    fs: &FsInfo,
    inode: &Value,
    what: &str,
    counts: &mut Counts,
) {
    let file = ContentsCipher::new(master, ctx, ino, fs).unwrap();
    let size = inode["size"].as_u64().unwrap() as usize;
    let block = fs.block_size as usize;
    let blocks = inode["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), size.div_ceil(block), "{what}: blocks");
    let mut ciphertext = Vec::new();
    let mut plain = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let lblk = b["lblk"].as_u64().unwrap();
        assert_eq!(lblk, i as u64, "{what}: blocks in order");
        let c = hex(str_of(b, "ciphertext"));
        let mut p = c.clone();
        file.decrypt_blocks(lblk, &mut p).unwrap();
        let mut again = p.clone();
        file.encrypt_blocks(lblk, &mut again).unwrap();
        assert_eq!(again, c, "{what}: block {lblk} encrypts back");
        ciphertext.extend_from_slice(&c);
        plain.extend_from_slice(&p);
        counts.blocks += 1;
    }
    assert!(
        plain[size..].iter().all(|&b| b == 0),
        "{what}: bytes past i_size decrypt to zeros"
    );
    let digest = Sha256::digest(&plain[..size]);
    assert_eq!(
        digest.to_vec(),
        hex(str_of(inode, "sha256")),
        "{what}: plaintext"
    );
    let mut whole = ciphertext.clone();
    file.decrypt_units(0, &mut whole).unwrap();
    assert_eq!(whole, plain, "{what}: all units in one call");
    file.encrypt_units(0, &mut whole).unwrap();
    assert_eq!(whole, ciphertext, "{what}: all units in one call");
    counts.files += 1;
}
