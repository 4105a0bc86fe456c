//! The one output layer, tried as a hostile or unlucky user would: special
//! files, symbolic links, the input given again as the output, read-only
//! outputs, devices too small, full disks, and runs ended by signals.
//!
//! Tests that need root (loop devices, mounts, another user) print a
//! `SKIPPED` line and return when they cannot set up.

mod common;

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{Rng, entries, expect_code, mdu, run, scratch};

/// A small LUKS2 image of `plain` (PBKDF2 with 1000 iterations: fast).
fn luks_image(dir: &Path, plain: &Path, name: &str) -> PathBuf {
    let img = dir.join(name);
    let pass = dir.join("pass");
    if !pass.exists() {
        fs::write(&pass, b"correct horse").unwrap();
    }
    let out = run(mdu()
        .args([
            "luks",
            "encrypt",
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
        ])
        .arg("--key-file")
        .arg(&pass)
        .arg(plain)
        .arg(&img));
    expect_code(&out, 0, "mdu luks encrypt");
    img
}

fn luks_decrypt(dir: &Path, img: &Path, out: &Path) -> Output {
    run(mdu()
        .args(["luks", "decrypt", "--key-file"])
        .arg(dir.join("pass"))
        .arg(img)
        .arg(out))
}

/// Under a user-mode emulator (MDU_EMULATED, set by .ci/qemu-aarch64.toml)
/// the signal tests take smaller inputs and fewer rounds, and say so.
fn emulated() -> bool {
    std::env::var_os("MDU_EMULATED").is_some()
}

/// (MiB of input, rounds per signal) of the signal tests.
fn signal_test_size(test: &str) -> (usize, usize) {
    if emulated() {
        eprintln!("{test}: under emulation: 6 MiB inputs, one round per signal");
        (6, 1)
    } else {
        (24, 3)
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

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
fn the_input_given_again_as_the_output_is_refused_by_every_command() {
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new("the_input_given_again_as_the_output_is_refused_by_every_command");
    let plain = d.join("plain");
    fs::write(&plain, rng.bytes(256 << 10)).unwrap();
    let img = luks_image(d, &plain, "img");
    let key = d.join("key");
    fs::write(&key, rng.bytes(64)).unwrap();
    let hard = d.join("hard");
    fs::hard_link(&img, &hard).unwrap();
    let soft = d.join("soft");
    std::os::unix::fs::symlink(&img, &soft).unwrap();
    let plain_link = d.join("plain-link");
    std::os::unix::fs::symlink(&plain, &plain_link).unwrap();
    let before_img = fs::read(&img).unwrap();
    let before_plain = fs::read(&plain).unwrap();

    let pass = d.join("pass");
    let hash = d.join("hash");
    let luks_dec = ["luks", "decrypt", "--key-file"];
    let cases: Vec<(&str, &[&str], Vec<&Path>)> = vec![
        ("luks decrypt IMG IMG", &luks_dec, vec![&pass, &img, &img]),
        (
            "luks decrypt IMG hard link",
            &luks_dec,
            vec![&pass, &img, &hard],
        ),
        (
            "luks decrypt IMG symlink",
            &luks_dec,
            vec![&pass, &img, &soft],
        ),
        (
            "luks encrypt PLAIN PLAIN",
            &[
                "luks",
                "encrypt",
                "--pbkdf",
                "pbkdf2",
                "--pbkdf-force-iterations",
                "1000",
                "--key-file",
            ],
            vec![&pass, &plain, &plain_link],
        ),
        (
            "crypt decrypt IMG IMG",
            &["crypt", "decrypt", "--key-file"],
            vec![&key, &img, &hard],
        ),
        (
            "fsverity digest --out-merkle-tree FILE",
            &["fsverity", "digest", "--out-merkle-tree"],
            vec![&plain_link, &plain],
        ),
        (
            "fsverity digest --out-descriptor FILE",
            &["fsverity", "digest", "--out-descriptor"],
            vec![&plain, &plain],
        ),
        (
            "verity format --root-hash-file DATA",
            &["verity", "format", "--root-hash-file"],
            vec![&plain_link, &plain, &hash],
        ),
        (
            "verity format --fec-device DATA",
            &["verity", "format", "--fec-device"],
            vec![&plain_link, &plain, &hash],
        ),
    ];
    for (what, words, paths) in cases {
        let out = run(mdu().args(words).args(paths));
        expect_code(&out, 2, what);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("same file") || err.contains("data device"),
            "{what}: the message says why: {err}"
        );
        assert_eq!(
            fs::read(&img).unwrap(),
            before_img,
            "{what} changed the image"
        );
        assert_eq!(
            fs::read(&plain).unwrap(),
            before_plain,
            "{what} changed the plaintext"
        );
    }
    assert!(
        fs::symlink_metadata(&soft)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(!d.join("hash").exists());
    assert!(entries(d).iter().all(|e| !e.starts_with(".mdu-")));
}

#[test]
fn existing_outputs_keep_their_mode_and_read_only_ones_are_refused() {
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new("existing_outputs_keep_their_mode_and_read_only_ones_are_refused");
    let plain = d.join("plain");
    fs::write(&plain, rng.bytes(64 << 10)).unwrap();
    let img = luks_image(d, &plain, "img");

    // An existing output keeps its mode; a new plaintext is 0600.
    let kept = d.join("kept");
    fs::write(&kept, b"old").unwrap();
    fs::set_permissions(&kept, fs::Permissions::from_mode(0o640)).unwrap();
    expect_code(&luks_decrypt(d, &img, &kept), 0, "decrypt over a 0640 file");
    assert_eq!(fs::metadata(&kept).unwrap().mode() & 0o7777, 0o640);
    assert_eq!(fs::read(&kept).unwrap(), fs::read(&plain).unwrap());
    let fresh = d.join("fresh");
    expect_code(&luks_decrypt(d, &img, &fresh), 0, "decrypt to a new file");
    assert_eq!(fs::metadata(&fresh).unwrap().mode() & 0o777, 0o600);

    // A read-only file the user cannot write is refused, as cp refuses it.
    if !is_root() {
        eprintln!("SKIPPED the other-user half: needs root to run as nobody");
        return;
    }
    let shared = d.join("shared");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
    fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
    for f in ["img", "pass"] {
        fs::set_permissions(d.join(f), fs::Permissions::from_mode(0o644)).unwrap();
    }
    let ro = shared.join("ro");
    fs::write(&ro, b"read-only").unwrap();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o444)).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .args(common::mdu_argv())
        .args(["luks", "decrypt", "--key-file"])
        .arg(d.join("pass"))
        .arg(&img)
        .arg(&ro)
        .output();
    let Ok(out) = out else {
        eprintln!("SKIPPED the other-user half: setpriv is missing");
        return;
    };
    expect_code(&out, 2, "decrypt over a read-only file as nobody");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot replace it"));
    assert_eq!(fs::read(&ro).unwrap(), b"read-only");
    assert_eq!(fs::metadata(&ro).unwrap().mode() & 0o7777, 0o444);
    assert_eq!(entries(&shared), ["ro"]);
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
    expect_code(&out, 2, "an output through a dangling link");
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
fn a_sigkill_while_the_output_is_named_leaves_no_temporary_file_for_long() {
    let test = "a_sigkill_while_the_output_is_named_leaves_no_temporary_file_for_long";
    if !common::have_tool("strace", test) {
        return;
    }
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new(test);
    let plain = rng.bytes(64 << 10);
    fs::write(d.join("plain"), &plain).unwrap();
    fs::write(d.join("key"), rng.bytes(64)).unwrap();
    let setup = run(mdu()
        .args(["crypt", "encrypt", "--key-file", "key", "plain", "cipher"])
        .current_dir(d));
    expect_code(&setup, 0, "crypt encrypt");
    let decrypt = |out: &str| strings(&["crypt", "decrypt", "--key-file", "key", "cipher", out]);
    // `mdu crypt decrypt` ended by SIGKILL at the first call of `calls`.
    let killed_at = |calls: &str, out: &str| {
        run(Command::new("strace")
            .args(["-f", "-qq", "-o", "/dev/null", "-e"])
            .arg(format!("trace={calls}"))
            .arg(format!("--inject={calls}:signal=KILL"))
            .args(common::mdu_argv())
            .args(decrypt(out))
            .current_dir(d))
    };
    let temporaries = || -> Vec<String> {
        entries(d)
            .into_iter()
            .filter(|e| e.starts_with(".mdu-"))
            .collect()
    };

    // A new output, killed where it is given its name: there or not,
    // complete if there, and nothing next to it.
    for calls in ["linkat", "/^rename"] {
        let _ = fs::remove_file(d.join("out"));
        killed_at(calls, "out");
        let now = fs::read(d.join("out")).ok();
        assert!(
            now.is_none() || now.as_deref() == Some(&plain[..]),
            "{calls}: a partial output"
        );
        assert_eq!(temporaries(), Vec::<String>::new(), "killed at {calls}");
    }

    // An existing output, killed between naming the temporary file and
    // renaming it over the output: the output as it was, and the named
    // temporary file left (the one window SIGKILL has).
    fs::write(d.join("out"), PREVIOUS).unwrap();
    let r = killed_at("/^rename", "out");
    assert_eq!(r.status.code(), None, "not killed at the rename");
    assert_eq!(fs::read(d.join("out")).unwrap(), PREVIOUS);
    let left = temporaries();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(
        fs::read(d.join(&left[0])).unwrap() == plain,
        "the left file is the output"
    );

    // A file of that name held by a live process stays, and so does one of
    // another name; the left one goes with the next output written there.
    let held = d.join(".mdu-heldheldheld");
    fs::write(&held, b"a run still writing").unwrap();
    let holder = fs::File::open(&held).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    let r = unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&holder),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    };
    assert_eq!(r, 0, "flock");
    fs::write(d.join(".mdu-other"), b"not a name mdu makes").unwrap();
    let again = run(mdu().args(decrypt("out")).current_dir(d));
    expect_code(&again, 0, "decrypt again");
    assert!(fs::read(d.join("out")).unwrap() == plain);
    assert_eq!(temporaries(), [".mdu-heldheldheld", ".mdu-other"]);
    // Once its holder is gone, the next output written there removes it.
    drop(holder);
    let again = run(mdu().args(decrypt("out2")).current_dir(d));
    expect_code(&again, 0, "decrypt to another output");
    assert_eq!(temporaries(), [".mdu-other"]);
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
    expect_code(&out, 2, "decrypt 2 MiB into a 1 MiB device");
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was written"));
    assert!(fs::read(&backing).unwrap().iter().all(|&b| b == 0x5a));
}

/// A tmpfs of `size` mounted on `dir` (unmounted on drop).
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(dir: &Path, size: &str, test: &str) -> Option<Mount> {
        fs::create_dir_all(dir).unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status();
        match st {
            Ok(s) if s.success() => Some(Mount(dir.to_owned())),
            other => {
                eprintln!("SKIPPED {test}: cannot mount a tmpfs (needs root): {other:?}");
                None
            }
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_is_found_before_the_work_and_changes_nothing() {
    let test = "a_full_disk_is_found_before_the_work_and_changes_nothing";
    if !is_root() {
        eprintln!("SKIPPED {test}: needs root to mount a small tmpfs");
        return;
    }
    let dir = scratch();
    let Some(m) = Mount::tmpfs(&dir.path().join("small"), "3m", test) else {
        return;
    };
    let d = &m.0;
    let mut rng = Rng::new(test);
    let key = d.join("key");
    fs::write(&key, rng.bytes(64)).unwrap();
    let plain = d.join("plain");
    let data = rng.bytes(1536 << 10);
    fs::write(&plain, &data).unwrap();

    // Out of place: 1.5 MiB more (after a 2 MiB hole) does not fit in what
    // is left.
    let out = run(mdu()
        .args(["crypt", "encrypt", "--offset", "4096", "--key-file"])
        .arg(&key)
        .arg(&plain)
        .arg(d.join("out")));
    expect_code(&out, 2, "encrypt into a full file system");
    assert!(!d.join("out").exists());
    assert_eq!(entries(d), ["key", "plain"]);

    // In place, the file would grow by the 2 MiB offset area: refused up
    // front, the file as it was (the journal, elsewhere, removed).
    let journal_dir = scratch();
    let out = run(mdu()
        .args([
            "crypt",
            "encrypt",
            "--in-place",
            "--offset",
            "4096",
            "--key-file",
        ])
        .arg(&key)
        .arg("--journal")
        .arg(journal_dir.path().join("journal"))
        .arg(&plain)
        .arg(&plain));
    assert!(
        !journal_dir.path().join("journal").exists(),
        "a refused run leaves no journal"
    );
    expect_code(&out, 2, "in-place growth on a full file system");
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was changed"));
    assert_eq!(fs::read(&plain).unwrap(), data);
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

#[test]
fn a_thread_that_cannot_start_is_an_error_not_a_panic() {
    let test = "a_thread_that_cannot_start_is_an_error_not_a_panic";
    if !is_root() {
        eprintln!("SKIPPED {test}: needs root to run as another user under RLIMIT_NPROC");
        return;
    }
    let dir = scratch();
    let d = dir.path();
    fs::set_permissions(d, fs::Permissions::from_mode(0o777)).unwrap();
    let plain = d.join("plain");
    fs::write(&plain, vec![1u8; 1 << 20]).unwrap();
    let key = d.join("key");
    fs::write(&key, Rng::new(test).bytes(64)).unwrap();
    for f in [&plain, &key] {
        fs::set_permissions(f, fs::Permissions::from_mode(0o644)).unwrap();
    }
    // One process and the one pool thread; the reader cannot start.
    let out = Command::new("prlimit")
        .arg("--nproc=2")
        .args([
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
        ])
        .args(common::mdu_argv())
        .args(["crypt", "encrypt", "--threads", "1", "--key-file"])
        .arg(&key)
        .arg(&plain)
        .arg(d.join("out"))
        .output();
    let Ok(out) = out else {
        eprintln!("SKIPPED {test}: prlimit or setpriv is missing");
        return;
    };
    expect_code(&out, 2, "a thread that cannot start");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot start"), "{err}");
    assert!(!d.join("out").exists());
}

/// One command of the signal test: its arguments (paths relative to the
/// scratch directory) and its outputs (the first one exists before each
/// run, holding other contents; the others do not).
struct Killable {
    name: &'static str,
    args: Vec<String>,
    outputs: Vec<&'static str>,
}

/// What the signal test counted.
#[derive(Default)]
struct Tally {
    kills: usize,
    leftovers: usize,
    partial: usize,
}

const PREVIOUS: &[u8] = b"previous contents";

/// Whether the LUKS2 image `img` in `d` decrypts to `d/plain` (a new image
/// has random salts: it is complete when it opens, not when it equals
/// another run's).
fn luks_opens(d: &Path, img: &str) -> bool {
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", "pass", img, "check"])
        .current_dir(d));
    let ok =
        out.status.success() && fs::read(d.join("check")).ok() == fs::read(d.join("plain")).ok();
    let _ = fs::remove_file(d.join("check"));
    ok
}

/// Runs each command `rounds` times per signal, killed after a random
/// delay below the time a whole run takes, and counts kills that landed
/// mid-run, temporary files left and outputs that are neither what they
/// were nor complete. Prints a line per command.
fn kill_runs(
    d: &Path,
    cmds: &[Killable],
    signals: &[i32],
    rounds: usize,
    rng: &mut Rng,
    wrap: &dyn Fn(&[String]) -> Command,
) -> Tally {
    let mut total = Tally::default();
    let reset = |outs: &[&str]| {
        fs::write(d.join(outs[0]), PREVIOUS).unwrap();
        for o in &outs[1..] {
            let _ = fs::remove_file(d.join(o));
        }
    };
    for c in cmds {
        reset(&c.outputs);
        let t0 = std::time::Instant::now();
        let out = wrap(&c.args).current_dir(d).output().unwrap();
        expect_code(&out, 0, c.name);
        let full = t0.elapsed();
        let good: Vec<Vec<u8>> = c
            .outputs
            .iter()
            .map(|o| fs::read(d.join(o)).unwrap())
            .collect();
        let mut t = Tally::default();
        for &sig in signals {
            for _ in 0..rounds {
                reset(&c.outputs);
                let mut child = wrap(&c.args)
                    .current_dir(d)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                std::thread::sleep(full.mul_f64(rng.below(1000) as f64 / 1000.0));
                // SAFETY: kill(2) on the pid of our own child, not yet reaped.
                let sent = unsafe { libc::kill(child.id() as i32, sig) } == 0;
                let status = child.wait().unwrap();
                if sent && status.code().is_none() {
                    t.kills += 1;
                }
                for e in entries(d).into_iter().filter(|e| e.starts_with(".mdu-")) {
                    t.leftovers += 1;
                    fs::remove_file(d.join(e)).unwrap();
                }
                for (i, o) in c.outputs.iter().enumerate() {
                    let now = fs::read(d.join(o)).ok();
                    let before = if i == 0 { Some(PREVIOUS) } else { None };
                    let complete = now.as_ref() == Some(&good[i])
                        || (c.name == "luks encrypt" && now.is_some() && luks_opens(d, o));
                    if now.as_deref() != before && !complete {
                        t.partial += 1;
                    }
                }
            }
        }
        eprintln!(
            "signal test: {:<32} {:>2} runs, {:>2} killed mid-run, {} temporary files left, {} partial outputs",
            c.name,
            signals.len() * rounds,
            t.kills,
            t.leftovers,
            t.partial
        );
        total.kills += t.kills;
        total.leftovers += t.leftovers;
        total.partial += t.partial;
    }
    total
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// The commands of the signal test, over inputs of `mib` MiB made in `d`.
fn killable(d: &Path, rng: &mut Rng, mib: usize) -> Vec<Killable> {
    fs::write(d.join("plain"), rng.bytes(mib << 20)).unwrap();
    fs::write(d.join("key"), rng.bytes(64)).unwrap();
    fs::write(d.join("pass"), b"pw").unwrap();
    let setup = [
        strings(&["crypt", "encrypt", "--key-file", "key", "plain", "cipher"]),
        strings(&[
            "luks",
            "encrypt",
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
            "pass",
            "plain",
            "img",
        ]),
    ];
    for args in setup {
        let out = run(mdu().args(&args).current_dir(d));
        expect_code(&out, 0, "signal test set-up");
    }
    let one = |v: &[&str]| {
        let mut a = strings(&v[..2]);
        a.extend(strings(&["--threads", "1"]));
        a.extend(strings(&v[2..]));
        a
    };
    vec![
        Killable {
            name: "crypt decrypt",
            args: one(&["crypt", "decrypt", "--key-file", "key", "cipher", "out"]),
            outputs: vec!["out"],
        },
        Killable {
            name: "luks decrypt",
            args: one(&["luks", "decrypt", "--key-file", "pass", "img", "out"]),
            outputs: vec!["out"],
        },
        Killable {
            name: "luks encrypt",
            args: one(&[
                "luks",
                "encrypt",
                "--pbkdf",
                "pbkdf2",
                "--pbkdf-force-iterations",
                "1000",
                "--key-file",
                "pass",
                "plain",
                "out",
            ]),
            outputs: vec!["out"],
        },
        Killable {
            name: "verity format (FEC, root hash)",
            args: one(&[
                "verity",
                "format",
                "--salt",
                "-",
                "--uuid",
                "01234567-89ab-4def-8123-456789abcdef",
                "--fec-device",
                "out-fec",
                "--root-hash-file",
                "out-root",
                "plain",
                "out",
            ]),
            outputs: vec!["out", "out-fec", "out-root"],
        },
        Killable {
            name: "fsverity digest --out-merkle-tree",
            args: one(&[
                "fsverity",
                "digest",
                "--out-merkle-tree",
                "out",
                "--out-descriptor",
                "out-desc",
                "plain",
            ]),
            outputs: vec!["out", "out-desc"],
        },
    ]
}

#[test]
fn interrupted_runs_leave_no_temporary_file_and_no_partial_output() {
    let test = "interrupted_runs_leave_no_temporary_file_and_no_partial_output";
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new(test);
    let (mib, rounds) = signal_test_size(test);
    let cmds = killable(d, &mut rng, mib);
    let signals = [libc::SIGINT, libc::SIGTERM, libc::SIGKILL];
    let t = kill_runs(d, &cmds, &signals, rounds, &mut rng, &|args| {
        let mut c = mdu();
        c.args(args);
        c
    });
    eprintln!(
        "signal test: {} kills mid-run, {} temporary files left, {} partial outputs",
        t.kills, t.leftovers, t.partial
    );
    assert_eq!((t.leftovers, t.partial), (0, 0));
    assert!(
        t.kills > 0,
        "no run was killed mid-way: the inputs are too small"
    );
}

#[test]
fn a_repair_killed_half_way_leaves_what_a_second_repair_mends() {
    let test = "a_repair_killed_half_way_leaves_what_a_second_repair_mends";
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new(test);
    let (mib, rounds) = signal_test_size(test);
    let original = rng.bytes(mib << 20);
    fs::write(d.join("data"), &original).unwrap();
    let out = run(mdu()
        .args([
            "verity",
            "format",
            "--fec-roots",
            "16",
            "--fec-device",
            "fec",
            "--root-hash-file",
            "root",
            "data",
            "hash",
        ])
        .current_dir(d));
    expect_code(&out, 0, "verity format --fec-device");
    let root = fs::read_to_string(d.join("root")).unwrap();
    // Damage one byte in each of many blocks, all within what FEC mends.
    let mut bad = original.clone();
    for i in (100..bad.len()).step_by(300 * 4096) {
        bad[i] ^= 0x80;
    }
    let repair = || {
        let mut c = mdu();
        c.args([
            "verity",
            "repair",
            "--threads",
            "1",
            "--fec-roots",
            "16",
            "--fec-device",
            "fec",
            "data",
            "hash",
            root.trim(),
        ])
        .current_dir(d);
        c
    };
    fs::write(d.join("data"), &bad).unwrap();
    let t0 = std::time::Instant::now();
    expect_code(&run(&mut repair()), 0, "verity repair");
    let full = t0.elapsed();
    assert_eq!(fs::read(d.join("data")).unwrap(), original);
    let mut kills = 0;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        for _ in 0..rounds {
            fs::write(d.join("data"), &bad).unwrap();
            let mut child = repair()
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(full.mul_f64(rng.below(1000) as f64 / 1000.0));
            // SAFETY: kill(2) on the pid of our own child, not yet reaped.
            let sent = unsafe { libc::kill(child.id() as i32, sig) } == 0;
            if sent && child.wait().unwrap().code().is_none() {
                kills += 1;
            }
            assert!(entries(d).iter().all(|e| !e.starts_with(".mdu-")));
            // Every block is either the damaged one or the repaired one.
            let now = fs::read(d.join("data")).unwrap();
            for (i, block) in now.chunks(4096).enumerate() {
                let r = i * 4096..(i + 1) * 4096;
                assert!(
                    block == &bad[r.clone()] || block == &original[r],
                    "block {i} is neither"
                );
            }
            expect_code(&run(&mut repair()), 0, "repair after a killed repair");
            assert_eq!(fs::read(d.join("data")).unwrap(), original);
        }
    }
    eprintln!(
        "signal test: verity repair: {} runs, {kills} killed mid-run, 0 temporary files, every block old or mended",
        3 * rounds
    );
}

#[test]
fn without_o_tmpfile_a_signal_still_removes_the_named_temporary_file() {
    let test = "without_o_tmpfile_a_signal_still_removes_the_named_temporary_file";
    // Without /proc an unnamed temporary file cannot be named later, so the
    // output layer takes a named one and removes it on SIGINT and SIGTERM
    // (SIGKILL cannot be handled: the one case that leaves it).
    if !is_root() || std::env::var_os("MDU_TEST_RUNNER").is_some_and(|r| !r.is_empty()) {
        eprintln!("SKIPPED {test}: needs root for a mount namespace, and a native run");
        return;
    }
    let probe = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            "umount -l /proc && test ! -e /proc/self",
        ])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED {test}: cannot unmount /proc in a private mount namespace");
        return;
    }
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new(test);
    let cmds = killable(d, &mut rng, 24);
    let exe = env!("CARGO_BIN_EXE_mdu");
    let t = kill_runs(
        d,
        &cmds,
        &[libc::SIGINT, libc::SIGTERM],
        2,
        &mut rng,
        &|args| {
            let mut c = Command::new("unshare");
            c.args([
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                "umount -l /proc && exec \"$0\" \"$@\"",
                exe,
            ]);
            c.args(args);
            c
        },
    );
    eprintln!(
        "signal test without O_TMPFILE: {} kills mid-run, {} temporary files left, {} partial outputs",
        t.kills, t.leftovers, t.partial
    );
    assert_eq!((t.leftovers, t.partial), (0, 0));
}
