//! Outputs that are not regular files: devices, FIFOs, symbolic links and the
//! process's own standard output are written in place, never renamed over.

use super::*;

/// A loop device over `file` (detached on drop), or `None` when this
/// process cannot make one.
struct Loop(String);

impl Loop {
    fn new(file: &Path, test: &str) -> Option<Loop> {
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(file)
            .output();
        match out {
            Ok(o) if o.status.success() => {
                Some(Loop(String::from_utf8_lossy(&o.stdout).trim().to_owned()))
            }
            other => {
                eprintln!("SKIPPED {test}: cannot attach a loop device (needs root): {other:?}");
                None
            }
        }
    }

    fn path(&self) -> &Path {
        Path::new(&self.0)
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// A FIFO in `dir` and a thread that reads it to the end.
fn fifo_reader(dir: &Path, name: &str) -> (PathBuf, std::thread::JoinHandle<Vec<u8>>) {
    let path = dir.join(name);
    let st = Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(st.success(), "mkfifo");
    let p = path.clone();
    let reader = std::thread::spawn(move || fs::read(&p).unwrap());
    (path, reader)
}

#[test]
fn special_outputs_are_written_in_place_never_renamed_over() {
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new("special_outputs_are_written_in_place_never_renamed_over");
    let plain = d.join("plain");
    fs::write(&plain, rng.bytes(1 << 20)).unwrap();
    let img = luks_image(d, &plain, "img");

    // A character device (a private node of the null device when root can
    // make one, so that a tool that renames over it harms nothing else;
    // /dev/null otherwise) and a symbolic link to it.
    let null = d.join("null");
    let made = is_root()
        && Command::new("mknod")
            .arg(&null)
            .args(["c", "1", "3"])
            .status()
            .is_ok_and(|s| s.success());
    let null = if made {
        null
    } else {
        PathBuf::from("/dev/null")
    };
    let link = d.join("null-link");
    std::os::unix::fs::symlink(&null, &link).unwrap();
    for out in [null.as_path(), link.as_path()] {
        expect_code(
            &luks_decrypt(d, &img, out),
            0,
            "luks decrypt to a null device",
        );
    }
    assert!(fs::metadata(&null).unwrap().file_type().is_char_device());
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // A FIFO read by another process gets the plaintext, and stays a FIFO.
    let (fifo, reader) = fifo_reader(d, "fifo");
    expect_code(&luks_decrypt(d, &img, &fifo), 0, "luks decrypt to a FIFO");
    assert_eq!(reader.join().unwrap(), fs::read(&plain).unwrap());
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());

    // Every other command's outputs into FIFOs: the bytes that a regular
    // file would get.
    let key = d.join("key");
    fs::write(&key, rng.bytes(64)).unwrap();
    let reference = d.join("reference");
    let crypt = |out: &Path| {
        run(mdu()
            .args(["crypt", "encrypt", "--key-file"])
            .arg(&key)
            .arg(&plain)
            .arg(out))
    };
    expect_code(&crypt(&reference), 0, "crypt encrypt to a file");
    let (fifo, reader) = fifo_reader(d, "crypt-fifo");
    expect_code(&crypt(&fifo), 0, "crypt encrypt to a FIFO");
    assert_eq!(reader.join().unwrap(), fs::read(&reference).unwrap());

    let tree = d.join("tree");
    let desc = d.join("desc");
    let fsv = |t: &Path, de: &Path| {
        run(mdu()
            .args(["fsverity", "digest", "--out-merkle-tree"])
            .arg(t)
            .arg("--out-descriptor")
            .arg(de)
            .arg(&plain))
    };
    expect_code(&fsv(&tree, &desc), 0, "fsverity digest to files");
    let (tf, tr) = fifo_reader(d, "tree-fifo");
    let (df, dr) = fifo_reader(d, "desc-fifo");
    expect_code(&fsv(&tf, &df), 0, "fsverity digest to FIFOs");
    assert_eq!(tr.join().unwrap(), fs::read(&tree).unwrap());
    assert_eq!(dr.join().unwrap(), fs::read(&desc).unwrap());

    let (rf, rr) = fifo_reader(d, "root-fifo");
    let out = run(mdu()
        .args(["verity", "format", "--salt", "-", "--uuid"])
        .arg("01234567-89ab-cdef-0123-456789abcdef")
        .arg("--root-hash-file")
        .arg(&rf)
        .arg(&plain)
        .arg(d.join("hash")));
    expect_code(&out, 0, "verity format --root-hash-file FIFO");
    let root = rr.join().unwrap();
    assert_eq!(root.len(), 64, "the root hash as hex");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&*String::from_utf8_lossy(&root)));

    // A loop device, and a symbolic link to it: written in place.
    if !is_root() {
        eprintln!("SKIPPED the loop-device half: needs root");
        return;
    }
    let backing = d.join("backing");
    fs::write(&backing, vec![0xa5u8; 2 << 20]).unwrap();
    let Some(lo) = Loop::new(
        &backing,
        "special_outputs_are_written_in_place_never_renamed_over",
    ) else {
        return;
    };
    let dev_link = d.join("dev-link");
    std::os::unix::fs::symlink(lo.path(), &dev_link).unwrap();
    for out in [lo.path(), dev_link.as_path()] {
        fs::write(&backing, vec![0xa5u8; 2 << 20]).unwrap();
        expect_code(
            &luks_decrypt(d, &img, out),
            0,
            "luks decrypt to a loop device",
        );
        let got = fs::read(&backing).unwrap();
        assert_eq!(&got[..1 << 20], &fs::read(&plain).unwrap()[..]);
        assert!(
            got[1 << 20..].iter().all(|&b| b == 0xa5),
            "bytes past the output kept"
        );
        assert!(
            fs::metadata(lo.path())
                .unwrap()
                .file_type()
                .is_block_device()
        );
    }
    assert!(
        fs::symlink_metadata(&dev_link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_dangling_symbolic_link_is_not_replaced_by_a_file() {
    let dir = scratch();
    let d = dir.path();
    let plain = d.join("plain");
    fs::write(&plain, vec![7u8; 8192]).unwrap();
    let link = d.join("link");
    std::os::unix::fs::symlink(d.join("nowhere"), &link).unwrap();
    let out = run(mdu()
        .args(["fsverity", "digest", "--out-merkle-tree"])
        .arg(&link)
        .arg(&plain));
    expect_code(&out, 1, "an output through a dangling link (fsverity's 1)");
    assert!(String::from_utf8_lossy(&out.stderr).contains("dangling"));
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!d.join("nowhere").exists());
}

/// The names of this process's standard output that the help lists as
/// stream outputs.
const STDOUT_NAMES: [&str; 3] = ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"];

#[test]
fn outputs_naming_the_process_own_stdout_are_written_through_it_never_renamed_over() {
    let dir = scratch();
    let d = dir.path();
    let mut rng =
        Rng::new("outputs_naming_the_process_own_stdout_are_written_through_it_never_renamed_over");
    let plain = d.join("plain");
    fs::write(&plain, rng.bytes(40960)).unwrap();
    let key = d.join("key");
    fs::write(&key, rng.bytes(64)).unwrap();
    let desc = d.join("desc");
    let reference = run(mdu()
        .args(["fsverity", "digest", "--out-descriptor"])
        .arg(&desc)
        .arg(&plain));
    expect_code(&reference, 0, "fsverity digest to a file");
    // What `fsverity digest --out-descriptor /dev/stdout` prints: the
    // descriptor, then the digest line.
    let mut want = fs::read(&desc).unwrap();
    want.extend_from_slice(&reference.stdout);
    let digest_to = |name: &str| {
        let mut c = mdu();
        c.args(["fsverity", "digest", "--out-descriptor", name])
            .arg(&plain);
        c
    };
    let cipher = d.join("cipher");
    let encrypt_to = |name: &Path| {
        let mut c = mdu();
        c.args(["crypt", "encrypt", "--key-file"])
            .arg(&key)
            .arg(&plain)
            .arg(name);
        c
    };
    expect_code(&run(&mut encrypt_to(&cipher)), 0, "crypt encrypt to a file");
    let cipher = fs::read(&cipher).unwrap();

    for name in STDOUT_NAMES {
        // Standard output a pipe.
        let out = run(&mut digest_to(name));
        expect_code(
            &out,
            0,
            &format!("fsverity digest --out-descriptor {name} | ..."),
        );
        assert!(out.stdout == want, "{name} into a pipe: other bytes");
        let out = run(&mut encrypt_to(Path::new(name)));
        expect_code(&out, 0, &format!("crypt encrypt to {name} | ..."));
        assert!(out.stdout == cipher, "crypt encrypt to {name}: other bytes");

        // Standard output a file the shell opened (`>>`, then `>`): written
        // through the descriptor, from where it stands; the file is the
        // same inode, not a new one renamed over it.
        let sub = d.join("sub");
        fs::create_dir_all(&sub).unwrap();
        let log = sub.join("log");
        fs::write(&log, PREVIOUS).unwrap();
        let ino = fs::metadata(&log).unwrap().ino();
        let append = fs::OpenOptions::new().append(true).open(&log).unwrap();
        let out = run(digest_to(name).stdout(append));
        expect_code(
            &out,
            0,
            &format!("fsverity digest --out-descriptor {name} >> log"),
        );
        let mut appended = PREVIOUS.to_vec();
        appended.extend_from_slice(&want);
        assert!(
            fs::read(&log).unwrap() == appended,
            "{name} >> log: other bytes"
        );
        assert_eq!(
            fs::metadata(&log).unwrap().ino(),
            ino,
            "{name} >> log: renamed over"
        );
        let truncated = fs::File::create(&log).unwrap();
        let out = run(digest_to(name).stdout(truncated));
        expect_code(
            &out,
            0,
            &format!("fsverity digest --out-descriptor {name} > log"),
        );
        assert!(fs::read(&log).unwrap() == want, "{name} > log: other bytes");
        assert_eq!(
            fs::metadata(&log).unwrap().ino(),
            ino,
            "{name} > log: renamed over"
        );
        assert_eq!(entries(&sub), ["log"], "{name}: something left next to log");

        // Standard output the input itself: refused, nothing written.
        let before = fs::read(&plain).unwrap();
        let inout = fs::OpenOptions::new().write(true).open(&plain).unwrap();
        let out = run(encrypt_to(Path::new(name)).stdout(inout));
        expect_code(&out, 2, &format!("crypt encrypt plain {name} 1<>plain"));
        assert!(String::from_utf8_lossy(&out.stderr).contains("same file"));
        assert!(
            fs::read(&plain).unwrap() == before,
            "{name}: the input changed"
        );

        // An output written at positions cannot be a stream.
        let out = run(mdu().args(["verity", "format"]).arg(&plain).arg(name));
        expect_code(&out, 2, &format!("verity format plain {name}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("file descriptor 1") && err.contains("positions"),
            "{err}"
        );
    }
}

#[test]
fn a_device_too_small_is_refused_before_anything_is_written() {
    let test = "a_device_too_small_is_refused_before_anything_is_written";
    if !is_root() {
        eprintln!("SKIPPED {test}: needs root for a loop device");
        return;
    }
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new(test);
    let plain = d.join("plain");
    fs::write(&plain, rng.bytes(2 << 20)).unwrap();
    let img = luks_image(d, &plain, "img");
    let backing = d.join("backing");
    fs::write(&backing, vec![0x5au8; 1 << 20]).unwrap();
    let Some(lo) = Loop::new(&backing, test) else {
        return;
    };
    let out = luks_decrypt(d, &img, lo.path());
    expect_code(&out, 1, "decrypt 2 MiB into a 1 MiB device");
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was written"));
    assert!(fs::read(&backing).unwrap().iter().all(|&b| b == 0x5a));
}

#[test]
fn repair_writes_the_corrected_blocks_in_place_through_a_symbolic_link() {
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new("repair_writes_the_corrected_blocks_in_place_through_a_symbolic_link");
    let data = d.join("data");
    let original = rng.bytes(64 * 4096);
    fs::write(&data, &original).unwrap();
    fs::set_permissions(&data, fs::Permissions::from_mode(0o640)).unwrap();
    let (hash, fec) = (d.join("hash"), d.join("fec"));
    let out = run(mdu()
        .args([
            "verity",
            "format",
            "--json",
            "--fec-roots",
            "8",
            "--fec-device",
        ])
        .arg(&fec)
        .arg(&data)
        .arg(&hash));
    expect_code(&out, 0, "verity format --fec-device");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let root = v["root_hash"].as_str().unwrap().to_owned();

    let mut bad = original.clone();
    bad[5 * 4096 + 17] ^= 0x40;
    fs::write(&data, &bad).unwrap();
    let other_link = d.join("hard");
    fs::hard_link(&data, &other_link).unwrap();
    let ino = fs::metadata(&data).unwrap().ino();
    let link = d.join("link");
    std::os::unix::fs::symlink(&data, &link).unwrap();

    let out = run(mdu()
        .args(["verity", "repair", "--fec-roots", "8", "--fec-device"])
        .arg(&fec)
        .arg(&link)
        .arg(&hash)
        .arg(&root));
    expect_code(&out, 0, "verity repair through a symbolic link");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        fs::read(&data).unwrap(),
        original,
        "the real file is repaired"
    );
    assert_eq!(
        fs::read(&other_link).unwrap(),
        original,
        "hard links see it"
    );
    let meta = fs::metadata(&data).unwrap();
    assert_eq!((meta.ino(), meta.mode() & 0o7777), (ino, 0o640));
    assert!(entries(d).iter().all(|e| !e.starts_with(".mdu-")));
}
