//! The running kernel as the oracle: it encrypts trees under every policy
//! it supports, and mdu-fscrypt reads them offline byte for byte, with the
//! key (names, contents, targets, modes, times) and without it (the no-key
//! names `ls` shows). The other way, the kernel reads back contents that
//! mdu-fscrypt encrypted into a file's blocks.
//!
//! Needs root, loop devices, mkfs.ext4 and ext4 encryption; without them
//! each test prints a `SKIPPED` line, counted by the summary test.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use mdu_fscrypt::ContentsCipher;
use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::volume::{Keyring, NameForm, Volume};
use mdu_testkit::tools::{self, FSCRYPT_KERNEL_SCRIPT, Search, Tool};
use mdu_testkit::{Rng, hex, unhex};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Every policy this kernel accepts that the script builds (block size,
/// inode size, flags and data-unit size vary with them).
const POLICIES: [&str; 5] = [
    "v2-pad32",
    "v2-lblk64",
    "v2-lblk32",
    "v2-du512-ino128",
    "v1-pad4",
];

struct Made {
    _dir: tempfile::TempDir,
    image: PathBuf,
    key_file: PathBuf,
    key: Vec<u8>,
    manifest: Value,
}

/// Has the kernel encrypt a random tree under `policy`: a small one, or
/// the script's large one (seven files of up to 96 MiB and 400 small
/// ones more) when `MDU_FSCRYPT_SCALE=large`.
fn make(policy: &str, seed: u64) -> Made {
    let scale = std::env::var("MDU_FSCRYPT_SCALE").unwrap_or_else(|_| "small".to_string());
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("fs.img");
    let key_file = dir.path().join("key");
    let key: Vec<u8> = (0..64u64).map(|i| (i * 37 + seed * 11) as u8).collect();
    std::fs::write(&key_file, &key).unwrap();
    let json = dir.path().join("manifest.json");
    let out = Command::new("python3")
        .arg(FSCRYPT_KERNEL_SCRIPT)
        .args(["make"])
        .arg(&image)
        .arg(&json)
        .args([
            "--policy",
            policy,
            "--scale",
            &scale,
            "--seed",
            &seed.to_string(),
        ])
        .arg("--key")
        .arg(&key_file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{policy}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    Made {
        _dir: dir,
        image,
        key_file,
        key,
        manifest,
    }
}

fn keyring(m: &Made) -> Keyring {
    let mut keys = Keyring::new();
    let master = MasterKey::new(&m.key).unwrap();
    if m.manifest["version"] == 1 {
        let d: [u8; 8] = unhex(m.manifest["v1_descriptor"].as_str().unwrap())
            .try_into()
            .unwrap();
        keys.add_v1(d, master);
    } else {
        let id = keys.add(master);
        assert_eq!(
            id.0.to_vec(),
            unhex(m.manifest["identifier"].as_str().unwrap())
        );
    }
    keys
}

fn kernel(test: &str) -> bool {
    // Under qemu-user these would drive the host's kernel with the host's
    // tools: nothing architecture-dependent to learn that the host run
    // did not.
    if std::env::var("MDU_EMULATED").as_deref() == Ok("1") {
        eprintln!("SKIPPED {test}: the kernel tests run on the host, not under emulation");
        return false;
    }
    tools::require(Tool::KernelFscrypt, Search::PathOnly, test).is_some()
}

/// Checks one view (with or without the key) against the kernel's, entry by
/// entry; returns (files compared, names compared).
fn compare(m: &Made, vol: &Volume<File>, view: &str) -> (usize, usize) {
    let policy = m.manifest["policy"].as_str().unwrap();
    let top = unhex(m.manifest["dir"].as_str().unwrap());
    let entries = m.manifest[view].as_array().unwrap();
    let mut children: BTreeMap<Vec<u8>, Vec<Vec<u8>>> = BTreeMap::new();
    let mut files = 0;
    for e in entries {
        let rel = unhex(e["path"].as_str().unwrap());
        let (parent, name) = match rel.iter().rposition(|&b| b == b'/') {
            Some(i) => (rel[..i].to_vec(), rel[i + 1..].to_vec()),
            None => (Vec::new(), rel.clone()),
        };
        children.entry(parent).or_default().push(name);
        let mut path = top.clone();
        path.push(b'/');
        path.extend_from_slice(&rel);
        let what = format!("{policy} {view} {}", String::from_utf8_lossy(&path));
        let ino = vol
            .lookup(&path)
            .unwrap_or_else(|err| panic!("{what}: {err}"));
        assert_eq!(u64::from(ino), e["ino"].as_u64().unwrap(), "{what}");
        let inode = vol.inode(ino).unwrap();
        assert_eq!(u64::from(inode.mode), e["mode"].as_u64().unwrap(), "{what}");
        match e["type"].as_str().unwrap() {
            "file" => {
                assert_eq!(inode.size, e["size"].as_u64().unwrap(), "{what}");
                if let Some(sum) = e.get("sha256") {
                    let data = vol.contents(&inode).unwrap().read_to_vec().unwrap();
                    assert_eq!(
                        unhex(sum.as_str().unwrap()),
                        Sha256::digest(&data).to_vec(),
                        "{what}"
                    );
                    let ns = i128::from(inode.mtime.secs) * 1_000_000_000
                        + i128::from(inode.mtime.nsecs);
                    assert_eq!(ns, i128::from(e["mtime_ns"].as_i64().unwrap()), "{what}");
                    files += 1;
                } else {
                    assert!(
                        vol.contents(&inode).is_err(),
                        "{what}: contents without the key"
                    );
                }
            }
            "symlink" => {
                let target = vol
                    .read_link(&inode)
                    .unwrap_or_else(|err| panic!("{what}: {err}"));
                assert_eq!(target, unhex(e["target"].as_str().unwrap()), "{what}");
            }
            _ => {}
        }
    }
    // Every directory lists exactly what the kernel listed.
    let mut names = 0;
    for (parent, mut want) in children {
        let mut path = top.clone();
        if !parent.is_empty() {
            path.push(b'/');
            path.extend_from_slice(&parent);
        }
        let listed = vol.list(vol.lookup(&path).unwrap()).unwrap();
        let mut got: Vec<Vec<u8>> = listed
            .into_iter()
            .filter(|e| e.form != NameForm::Clear)
            .map(|e| e.name)
            .collect();
        got.sort();
        want.sort();
        names += want.len();
        assert_eq!(
            got,
            want,
            "{policy} {view}: the names of {}",
            String::from_utf8_lossy(&path)
        );
    }
    (files, names)
}

#[test]
fn kernel_encrypted_trees_read_offline_byte_for_byte() {
    if !kernel("kernel_encrypted_trees_read_offline_byte_for_byte") {
        return;
    }
    for (seed, policy) in POLICIES.iter().enumerate() {
        let m = make(policy, seed as u64 + 1);
        let vol = Volume::open(File::open(&m.image).unwrap(), keyring(&m)).unwrap();
        let (files, names) = compare(&m, &vol, "with_key");
        let bare = Volume::open(File::open(&m.image).unwrap(), Keyring::new()).unwrap();
        let (_, nokey) = compare(&m, &bare, "without_key");
        println!(
            "{policy}: {files} files and {names} names equal with the key, {nokey} no-key names equal without it"
        );
        assert!(
            files > 10 && names > 90 && nokey == names,
            "{policy}: too little compared"
        );
    }
}

#[test]
fn a_wrong_key_is_named_and_refused() {
    if !kernel("a_wrong_key_is_named_and_refused") {
        return;
    }
    let m = make("v2-pad32", 7);
    let mut keys = Keyring::new();
    let given = keys.add(MasterKey::new(&[0x55; 64]).unwrap());
    let vol = Volume::open(File::open(&m.image).unwrap(), keys).unwrap();
    let err = vol.lookup(b"vault/sub").unwrap_err().to_string();
    assert!(err.contains(&given.to_string()), "{err}");
    assert!(
        err.contains(m.manifest["identifier"].as_str().unwrap()),
        "{err}"
    );
}

#[test]
fn wrong_v1_keys_are_refused_through_the_names_they_decrypt() {
    if !kernel("wrong_v1_keys_are_refused_through_the_names_they_decrypt") {
        return;
    }
    let m = make("v1-pad4", 5);
    let descriptor: [u8; 8] = unhex(m.manifest["v1_descriptor"].as_str().unwrap())
        .try_into()
        .unwrap();
    let right = Volume::open(File::open(&m.image).unwrap(), keyring(&m)).unwrap();
    let top = right
        .lookup(&unhex(m.manifest["dir"].as_str().unwrap()))
        .unwrap();
    // Every directory (and the bytes of stored names in it) and symlink.
    let entries = m.manifest["with_key"].as_array().unwrap();
    let mut dirs = vec![(String::from("vault"), top)];
    let mut links = Vec::new();
    for e in entries {
        let ino = e["ino"].as_u64().unwrap() as u32;
        let path = String::from_utf8_lossy(&unhex(e["path"].as_str().unwrap())).into_owned();
        match e["type"].as_str().unwrap() {
            "dir" => dirs.push((path, ino)),
            "symlink" => links.push(ino),
            _ => {}
        }
    }
    let stored_bytes: Vec<usize> = dirs
        .iter()
        .map(|(_, ino)| {
            right
                .list(*ino)
                .unwrap()
                .iter()
                .filter(|e| e.form != NameForm::Clear)
                .map(|e| e.stored.len())
                .sum()
        })
        .collect();
    let keys = 100;
    let mut accepted = vec![0usize; dirs.len()];
    let mut tree_accepted = 0;
    let mut rng = Rng::with_seed(0x9e37_79b9_7f4a_7c15);
    for _ in 0..keys {
        let wrong = rng.bytes(64);
        let mut ring = Keyring::new();
        ring.add_v1(descriptor, MasterKey::new(&wrong).unwrap());
        let vol = Volume::open(File::open(&m.image).unwrap(), ring).unwrap();
        let mut whole = true;
        for (i, (_, ino)) in dirs.iter().enumerate() {
            if vol.list(*ino).is_ok() {
                accepted[i] += 1;
            } else {
                whole = false;
            }
        }
        for ino in &links {
            whole &= vol.read_link(&vol.inode(*ino).unwrap()).is_ok();
        }
        tree_accepted += usize::from(whole);
    }
    for (i, (path, _)) in dirs.iter().enumerate() {
        // Alone, a directory's names would pass a wrong key with a
        // probability of about (254/256)^L for L bytes of stored names (no
        // NUL, no '/' in random bytes); the key's check reads more names.
        let alone = (254.0f64 / 256.0).powi(stored_bytes[i] as i32) * keys as f64;
        println!(
            "{path}: {} of {keys} wrong v1 keys list it ({} bytes of stored names: about {alone:.1} if checked alone)",
            accepted[i], stored_bytes[i]
        );
    }
    println!("the whole tree: {tree_accepted} of {keys} wrong v1 keys read it");
    assert_eq!(tree_accepted, 0, "a wrong v1 key read the whole tree");
    assert!(
        accepted.iter().all(|&n| n == 0),
        "a wrong v1 key listed a directory: {accepted:?}"
    );
}

#[test]
fn the_kernel_reads_contents_mdu_encrypted() {
    if !kernel("the_kernel_reads_contents_mdu_encrypted") {
        return;
    }
    for policy in ["v2-lblk32", "v2-du512-ino128", "v1-pad4"] {
        let m = make(policy, 40);
        let vol = Volume::open(File::open(&m.image).unwrap(), keyring(&m)).unwrap();
        // The largest file of the tree: new plaintext for its blocks.
        let top = unhex(m.manifest["dir"].as_str().unwrap());
        let biggest = m.manifest["with_key"]
            .as_array()
            .unwrap()
            .iter()
            // Not the sparse file: one with many blocks of data.
            .filter(|e| e["type"] == "file" && e["path"] != "737061727365")
            .max_by_key(|e| e["size"].as_u64().unwrap())
            .unwrap();
        let rel = unhex(biggest["path"].as_str().unwrap());
        let path = [&top[..], b"/", &rel[..]].concat();
        let inode = vol.inode(vol.lookup(&path).unwrap()).unwrap();
        let ctx = vol.context(&inode).unwrap().unwrap();
        let master = MasterKey::new(&m.key).unwrap();
        let cipher = ContentsCipher::new(&master, &ctx, u64::from(inode.ino), vol.info()).unwrap();
        let bs = u64::from(vol.ext4().block_size());
        let extents = vol.ext4().extents(&inode).unwrap();
        let mut want = vec![0u8; inode.size.div_ceil(bs) as usize * bs as usize];
        let image = OpenOptions::new().write(true).open(&m.image).unwrap();
        for (i, e) in extents.iter().enumerate().filter(|(_, e)| !e.unwritten) {
            let start = (e.logical * bs) as usize;
            let run = &mut want[start..start + (e.len * bs) as usize];
            run.iter_mut()
                .enumerate()
                .for_each(|(j, b)| *b = (j as u64 * 31 + i as u64 * 7 + 3) as u8);
            let mut ct = run.to_vec();
            cipher.encrypt_blocks(e.logical, &mut ct).unwrap();
            image.write_all_at(&ct, e.physical * bs).unwrap();
        }
        drop(image);
        want.truncate(inode.size as usize);
        let out = Command::new("python3")
            .args([Path::new(FSCRYPT_KERNEL_SCRIPT).as_os_str()])
            .arg("cat")
            .arg(&m.image)
            .arg(hex(&path))
            .args(["--policy", policy, "--key"])
            .arg(&m.key_file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = unhex(std::str::from_utf8(&out.stdout).unwrap());
        assert!(
            got == want,
            "{policy}: the kernel read other bytes than mdu encrypted"
        );
        println!(
            "{policy}: the kernel read back {} bytes mdu encrypted into {} extents",
            want.len(),
            extents.len()
        );
    }
}

#[test]
fn reference_tools_of_the_interop_tests_are_installed() {
    if std::env::var("MDU_EMULATED").as_deref() == Ok("1") {
        println!("mdu-fscrypt: emulated; the kernel tests run on the host");
        return;
    }
    tools::check_installed(
        "mdu-fscrypt",
        Search::PathOnly,
        &[(
            Tool::KernelFscrypt,
            &[
                "kernel_encrypted_trees_read_offline_byte_for_byte",
                "a_wrong_key_is_named_and_refused",
                "wrong_v1_keys_are_refused_through_the_names_they_decrypt",
                "the_kernel_reads_contents_mdu_encrypted",
            ],
        )],
    );
}
