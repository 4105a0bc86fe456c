//! `extract` as `cp -a` makes it: holes, FIFOs and devices, setuid bits
//! dropped, nothing written without a needed key, inline files refused.

use super::*;

/// A tmpfs mounted for the life of the value (unmounted on drop).
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = scratch();
        let out = run(Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path()));
        assert!(
            out.status.success(),
            "mount -t tmpfs: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// The kernel's `special` tree (sparse files, setuid and setgid files,
/// FIFO, devices, socket) in an image, `cp -a` of it from the mount in
/// `tmpfs/kernel`, and its manifest's entries by path.
struct Special {
    _dir: tempfile::TempDir,
    image: std::path::PathBuf,
    key: std::path::PathBuf,
    entries: Vec<(Vec<u8>, Value)>,
}

fn special_scene(tmpfs: &Tmpfs) -> Special {
    let dir = scratch();
    let key = key_file(dir.path());
    let image = dir.path().join("fs.img");
    let json = dir.path().join("m.json");
    let out = run(Command::new("python3")
        .arg(FSCRYPT_KERNEL_SCRIPT)
        .arg("special")
        .args([&image, &json])
        .args(["--policy", "v2-pad32", "--key"])
        .arg(&key)
        .arg("--cp-to")
        .arg(tmpfs.path()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let entries = m["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (unhex(e["path"].as_str().unwrap()), e.clone()))
        .collect();
    Special {
        _dir: dir,
        image,
        key,
        entries,
    }
}

fn extract_special(s: &Special, out: &Path) -> std::process::Output {
    run(mdu()
        .args(["fscrypt", "extract"])
        .arg(&s.image)
        .arg("vault")
        .arg("--key")
        .arg(&s.key)
        .arg("--out")
        .arg(out))
}

#[test]
fn extract_keeps_holes_and_takes_the_space_cp_a_takes() {
    let test = "fscrypt::extract::extract_keeps_holes_and_takes_the_space_cp_a_takes";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    // 16 MiB: a 100 MiB file with 4 KiB of data and a 1 TiB one fit only
    // with their holes kept.
    let tmpfs = Tmpfs::mount("16m");
    let s = special_scene(&tmpfs);
    let dest = tmpfs.path().join("mdu");
    let out = extract_special(&s, &dest);
    expect_code(&out, 0, "extract");
    let kernel = tmpfs.path().join("kernel");
    let (mut ours, mut theirs) = (0, 0);
    for (rel, e) in &s.entries {
        if e["mode"].as_u64().unwrap() & 0o170000 != 0o100000 {
            continue;
        }
        let rel = std::ffi::OsStr::from_bytes(rel);
        let (m, k) = (
            std::fs::metadata(dest.join(rel)).unwrap(),
            std::fs::metadata(kernel.join(rel)).unwrap(),
        );
        let what = rel.to_string_lossy();
        assert_eq!(m.len(), e["size"].as_u64().unwrap(), "{what}");
        // Never more than `cp -a` (which copies a preallocated range whole).
        assert!(
            m.blocks() <= k.blocks(),
            "{what}: {} blocks, cp -a {}",
            m.blocks(),
            k.blocks()
        );
        if what.starts_with("sparse") {
            assert_eq!(m.blocks(), k.blocks(), "{what}");
        }
        match e.get("sha256") {
            Some(sum) => assert_eq!(
                Sha256::digest(std::fs::read(dest.join(rel)).unwrap()).to_vec(),
                unhex(sum.as_str().unwrap()),
                "{what}"
            ),
            None => {
                use std::os::unix::fs::FileExt;
                let tail = |p: &Path| {
                    let mut b = vec![0u8; 8192];
                    std::fs::File::open(p)
                        .unwrap()
                        .read_exact_at(&mut b, m.len() - 8192)
                        .unwrap();
                    b
                };
                assert_eq!(tail(&dest.join(rel)), tail(&kernel.join(rel)), "{what}");
            }
        }
        println!(
            "{what}: {} bytes, {} KiB allocated (cp -a: {} KiB)",
            m.len(),
            m.blocks() / 2,
            k.blocks() / 2
        );
        ours += m.blocks();
        theirs += k.blocks();
    }
    println!(
        "regular files: {} KiB extracted, {} KiB by cp -a",
        ours / 2,
        theirs / 2
    );
}

#[test]
fn extract_without_a_needed_key_writes_nothing() {
    let test = "fscrypt::extract::extract_without_a_needed_key_writes_nothing";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    let tmpfs = Tmpfs::mount("16m");
    let s = special_scene(&tmpfs);
    let dest = tmpfs.path().join("mdu");
    let out = run(mdu()
        .args(["fscrypt", "extract"])
        .arg(&s.image)
        .arg("vault")
        .arg("--out")
        .arg(&dest));
    expect_code(&out, 1, "extract without the key");
    assert!(
        !dest.exists(),
        "OUT was created: {:?}",
        std::fs::read_dir(&dest).map(|d| d.count())
    );
}

#[test]
fn extract_recreates_fifos_and_devices_as_cp_a_does() {
    let test = "fscrypt::extract::extract_recreates_fifos_and_devices_as_cp_a_does";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    use std::os::unix::fs::FileTypeExt;
    let tmpfs = Tmpfs::mount("16m");
    let s = special_scene(&tmpfs);
    let dest = tmpfs.path().join("mdu");
    let out = extract_special(&s, &dest);
    expect_code(&out, 0, "extract");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("skipped socket (socket)"), "{err}");
    let kernel = tmpfs.path().join("kernel");
    for name in ["fifo", "chardev", "blockdev"] {
        let (m, k) = (
            std::fs::symlink_metadata(dest.join(name)).unwrap(),
            std::fs::symlink_metadata(kernel.join(name)).unwrap(),
        );
        let e = &s
            .entries
            .iter()
            .find(|(p, _)| p == name.as_bytes())
            .unwrap()
            .1;
        assert_eq!(u64::from(m.mode()), e["mode"].as_u64().unwrap(), "{name}");
        assert_eq!(m.mode(), k.mode(), "{name}");
        assert_eq!(m.rdev(), k.rdev(), "{name}");
        assert_eq!(m.rdev(), e["rdev"].as_u64().unwrap(), "{name}");
        assert_eq!(
            (
                m.file_type().is_fifo(),
                m.file_type().is_char_device(),
                m.file_type().is_block_device()
            ),
            (name == "fifo", name == "chardev", name == "blockdev")
        );
        assert_eq!(m.mtime(), k.mtime(), "{name}");
        println!(
            "{name}: mode {:o}, rdev {:#x}, as cp -a",
            m.mode(),
            m.rdev()
        );
    }
    assert!(!dest.join("socket").exists());
}

#[test]
fn extract_drops_setuid_and_setgid_bits() {
    let test = "fscrypt::extract::extract_drops_setuid_and_setgid_bits";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    let tmpfs = Tmpfs::mount("16m");
    let s = special_scene(&tmpfs);
    let dest = tmpfs.path().join("mdu");
    let out = extract_special(&s, &dest);
    expect_code(&out, 0, "extract");
    let me = std::fs::metadata("/proc/self").unwrap().uid();
    for (name, image_mode, want) in [
        ("setuid", 0o4755, 0o755),
        ("setgid", 0o2755, 0o755),
        ("sub", 0o2775, 0o775),
        ("plain", 0o640, 0o640),
    ] {
        let e = &s
            .entries
            .iter()
            .find(|(p, _)| p == name.as_bytes())
            .unwrap()
            .1;
        assert_eq!(e["mode"].as_u64().unwrap() & 0o7777, image_mode, "{name}");
        let meta = std::fs::symlink_metadata(dest.join(name)).unwrap();
        assert_eq!(meta.mode() & 0o7777, want, "{name}");
        assert_eq!(meta.uid(), me, "{name}: owned by whoever extracts");
        println!(
            "{name}: {image_mode:o} in the image, {:o} extracted",
            meta.mode() & 0o7777
        );
    }
}

#[test]
fn an_encrypted_file_flagged_inline_is_refused() {
    let test = "fscrypt::extract::an_encrypted_file_flagged_inline_is_refused";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    let tmpfs = Tmpfs::mount("16m");
    let s = special_scene(&tmpfs);
    let out = run(mdu()
        .args(["fscrypt", "ls", "--json"])
        .arg(&s.image)
        .arg("vault")
        .arg("--key")
        .arg(&s.key));
    expect_code(&out, 0, "ls");
    let ino = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<Value>(l).unwrap())
        .find(|e| e["name"] == "plain")
        .unwrap()["ino"]
        .as_u64()
        .unwrap();
    // Extents and encryption as the kernel wrote them, plus INLINE_DATA
    // and a size that i_block holds: its bytes (an extent header and one
    // extent, or whatever a hostile image puts there) would be the data.
    for set in ["flags 0x10080800", "size 40"] {
        let out = run(Command::new("debugfs")
            .args(["-w", "-R", &format!("sif <{ino}> {set}")])
            .arg(&s.image));
        assert!(out.status.success());
    }
    let cat = run(mdu()
        .args(["fscrypt", "cat"])
        .arg(&s.image)
        .arg("vault/plain")
        .arg("--key")
        .arg(&s.key));
    expect_code(&cat, 1, "cat");
    let err = String::from_utf8_lossy(&cat.stderr);
    assert!(
        err.contains(&format!("inode {ino}: encrypted and flagged inline data")),
        "{err}"
    );
    assert!(cat.stdout.is_empty());
    let dest = tmpfs.path().join("mdu");
    let out = extract_special(&s, &dest);
    expect_code(&out, 1, "extract");
    assert!(!dest.exists());
}
