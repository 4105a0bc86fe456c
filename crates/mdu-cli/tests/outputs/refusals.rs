//! Outputs refused before the work: the input again, read-only files, a full
//! disk, a thread that cannot start; an existing output keeps its mode.

use super::*;

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
        expect_code(&out, common::bad_input(words), what);
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
    expect_code(&out, 1, "decrypt over a read-only file as nobody");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot replace it"));
    assert_eq!(fs::read(&ro).unwrap(), b"read-only");
    assert_eq!(fs::metadata(&ro).unwrap().mode() & 0o7777, 0o444);
    assert_eq!(entries(&shared), ["ro"]);
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
