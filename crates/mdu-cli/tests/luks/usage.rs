//! Exit statuses, help, and the inputs refused before any work: wrong keys,
//! damaged headers, format parameters, key files and weak keys.

use super::*;

#[test]
fn a_wrong_key_exits_2_damaged_headers_and_bad_usage_exit_1() {
    let mut rng = Rng::new("luks::usage::a_wrong_key_exits_2_damaged_headers_and_bad_usage_exit_1");
    let d = scratch();
    let dir = d.path();
    let key = write(dir, "key.bin", &rng.bytes(20));
    let wrong = write(dir, "wrong.bin", &rng.bytes(20));
    let plain_bytes = rng.bytes(64 * 512);
    let plain = write(dir, "plain.bin", &plain_bytes);
    let img = dir.join("img").to_str().unwrap().to_owned();
    let out = run(mdu()
        .args([
            "luks",
            "encrypt",
            "--key-file",
            &key,
            "--sector-size",
            "512",
        ])
        .args(PBKDF2)
        .args([&plain, &img]));
    expect_code(&out, 0, "encrypt");
    let dec = dir.join("dec");

    // A file system that refuses direct I/O (tmpfs) gets buffered writes.
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        let on_tmpfs = tempfile::Builder::new()
            .prefix("mdu-cli-test-")
            .tempdir_in(shm)
            .unwrap();
        let out_path = on_tmpfs.path().join("plain");
        let out = run(mdu()
            .args(["luks", "decrypt", "--key-file", &key, &img])
            .arg(&out_path));
        expect_code(&out, 0, "decrypt onto tmpfs");
        assert_eq!(std::fs::read(&out_path).unwrap(), plain_bytes);
    }

    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &wrong, &img])
        .arg(&dec));
    expect_code(&out, 2, "wrong passphrase");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no key available"));
    assert!(!dec.exists());

    // A damaged primary header: a warning, and the secondary opens it.
    let good = std::fs::read(&img).unwrap();
    let mut bad = good.clone();
    bad[4096 + 20] ^= 0x40;
    std::fs::write(&img, &bad).unwrap();
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &key, &img])
        .arg(&dec));
    expect_code(&out, 0, "damaged primary");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning") && err.contains("secondary"),
        "{err}"
    );
    assert_eq!(std::fs::read(&dec).unwrap(), plain_bytes);
    let dump = run(mdu().args(["luks", "dump", "--json", &img]));
    expect_code(&dump, 0, "dump --json");
    let v: serde_json::Value = serde_json::from_slice(&dump.stdout).unwrap();
    assert_eq!(v["header_copy"], "secondary");
    assert!(v["primary_error"].as_str().unwrap().contains("checksum"));

    // Both copies damaged: exit 1, nothing written.
    bad[16384 + 4096 + 20] ^= 0x40;
    std::fs::write(&img, &bad).unwrap();
    std::fs::remove_file(&dec).unwrap();
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &key, &img])
        .arg(&dec));
    expect_code(&out, 1, "both headers damaged");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no valid LUKS2 header"));
    assert!(!dec.exists());

    // A payload cut short of a whole sector: damaged, exit 1.
    std::fs::write(&img, &good[..good.len() - 100]).unwrap();
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &key, &img])
        .arg(&dec));
    expect_code(&out, 1, "truncated payload");

    // Bad usage.
    let out = run(mdu()
        .args(["luks", "encrypt", "--key-file", &key, "--key-size", "384"])
        .args([&plain, &img]));
    expect_code(&out, 1, "--key-size 384");
    let odd = write(dir, "odd.bin", &rng.bytes(1000));
    let out = run(mdu()
        .args(["luks", "encrypt", "--key-file", &key])
        .args(PBKDF2)
        .args([&odd, &img]));
    expect_code(&out, 1, "a plaintext of partial sectors");
    let out = run(mdu()
        .args([
            "luks",
            "encrypt",
            "--key-file",
            &key,
            "--pbkdf-force-iterations",
            "10",
        ])
        .args(["--pbkdf", "pbkdf2", &plain, &img]));
    expect_code(&out, 1, "too few iterations");
    // Without --key-file, the passphrase is the first line of standard
    // input: here none.
    let out = run(mdu().args(["luks", "dump", "--dump-volume-key", &img]));
    expect_code(&out, 1, "--dump-volume-key without --key-file");
    // No temporary file was left behind.
    let left: Vec<String> = common::entries(dir)
        .into_iter()
        .filter(|n| n.starts_with(".mdu-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn help_names_every_luks_subcommand_and_option() {
    for path in [
        &["luks"][..],
        &["luks", "format"],
        &["luks", "encrypt"],
        &["luks", "decrypt"],
        &["luks", "dump"],
    ] {
        let out = run(mdu().args(path).arg("--help"));
        expect_code(&out, 0, &format!("{path:?} --help"));
        assert!(stdout(&out).contains("Usage: mdu luks"), "{path:?}");
    }
    let text = stdout(&run(mdu().args(["luks", "encrypt", "--help"])));
    for opt in [
        "--key-file",
        "--cipher",
        "--key-size",
        "--sector-size",
        "--pbkdf",
        "--pbkdf-force-iterations",
        "--pbkdf-memory",
        "--pbkdf-parallel",
        "--hash",
        "--uuid",
        "--label",
        "--subsystem",
        "--volume-key-file",
        "--offset",
        "--threads",
    ] {
        assert!(text.contains(opt), "luks encrypt --help lacks {opt}");
    }
    let text = stdout(&run(mdu().args(["luks", "dump", "--help"])));
    for opt in ["--json", "--dump-volume-key", "--key-file"] {
        assert!(text.contains(opt), "luks dump --help lacks {opt}");
    }
    let out = run(mdu().args(["luks", "encrypt", "--pbkdf", "scrypt", "a", "b"]));
    expect_code(&out, 1, "an unknown --pbkdf");
}

#[test]
fn format_parameters_are_refused_before_the_passphrase_is_read() {
    let d = scratch();
    let dir = d.path();
    let img = dir.join("img");
    // The key file does not exist: each bad parameter must be named first.
    let missing = dir.join("no-such-key-file");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--offset", "36028797018963968"],
            "--offset 36028797018963968",
        ),
        (
            &["--offset", "18446744073709551608"],
            "--offset 18446744073709551608",
        ),
        (&["--offset", "12"], "multiple of 8"),
        (&["--offset", "64"], "keyslot"),
        (&["--label", &"x".repeat(48)], "label"),
        (&["--subsystem", &"s".repeat(48)], "subsystem"),
        (&["--uuid", "not-a-uuid"], "UUID"),
        (&["--sector-size", "8192"], "sector"),
        (&["--key-size", "384"], "--key-size 384"),
        (
            &["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "999"],
            "1000 iterations",
        ),
        (&["--pbkdf", "argon2id", "--pbkdf-memory", "16"], "Argon2"),
        (&["--pbkdf", "argon2id", "--pbkdf-parallel", "0"], "Argon2"),
    ];
    for (args, want) in cases {
        let out = run(mdu()
            .args(["luks", "format", "--key-file"])
            .arg(&missing)
            .args(*args)
            .arg(&img));
        expect_code(&out, 1, &format!("{args:?}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            !err.contains("key file"),
            "{args:?} read the key file first: {err}"
        );
        assert!(!img.exists());
    }
}

#[test]
fn a_data_offset_of_512_tib_is_never_allocated() {
    // 2^40 sectors: the header region is written, the data offset is only
    // recorded. Where the file system cannot hold a file that large, a
    // clean error (not an abort) is the other acceptable outcome.
    let d = scratch();
    let dir = d.path();
    let key = write(dir, "key.bin", b"passphrase");
    let img = dir.join("img");
    let out = run(mdu()
        .args([
            "luks",
            "format",
            "--key-file",
            &key,
            "--offset",
            "1099511627776",
        ])
        .args(PBKDF2)
        .arg(&img));
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "format --offset 2^40 sectors: {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    if code == Some(0) {
        let json = run(mdu().args(["luks", "dump", "--json"]).arg(&img));
        expect_code(&json, 0, "dump --json");
        let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(
            v["metadata"]["segments"]["0"]["offset"],
            serde_json::json!("562949953421312")
        );
    }
}

#[test]
fn a_key_file_that_stat_calls_empty_is_read_to_its_end() {
    // procfs files report size 0; a pipe has no size.
    let proc_file = Path::new("/proc/sys/kernel/ostype");
    if !proc_file.exists() {
        eprintln!("SKIPPED: no {}", proc_file.display());
        return;
    }
    let pass = std::fs::read(proc_file).unwrap();
    assert!(!pass.is_empty());
    let d = scratch();
    let dir = d.path();
    let copy = write(dir, "copy.bin", &pass);
    let mut rng = Rng::new("luks::usage::a_key_file_that_stat_calls_empty_is_read_to_its_end");
    let plain_bytes = rng.bytes(8192);
    let plain = write(dir, "plain.bin", &plain_bytes);
    let img = dir.join("img").to_str().unwrap().to_owned();
    let out = run(mdu()
        .args(["luks", "encrypt", "--key-file"])
        .arg(proc_file)
        .args(PBKDF2)
        .args([&plain, &img]));
    expect_code(&out, 0, "encrypt with a procfs key file");
    let dec = dir.join("dec");
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &copy, &img])
        .arg(&dec));
    expect_code(&out, 0, "decrypt with a regular copy of the passphrase");
    assert_eq!(std::fs::read(&dec).unwrap(), plain_bytes);
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file"])
        .arg(proc_file)
        .arg(&img)
        .arg(&dec));
    expect_code(&out, 0, "decrypt with the procfs key file");
    // A pipe.
    let mut child = mdu()
        .args(["luks", "decrypt", "--key-file", "/dev/stdin", &img])
        .arg(&dec)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&pass).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    expect_code(&out, 0, "decrypt with the passphrase on a pipe");
}

#[test]
fn a_weak_xts_key_gets_one_answer_from_crypt_and_luks() {
    // A volume key whose two aes-xts halves are equal: `mdu crypt` (a raw
    // key file) and `mdu luks` (a volume key file, then the image's key)
    // both refuse it naming --allow-weak-key, and with the option write the
    // same ciphertext.
    let d = scratch();
    let dir = d.path();
    let weak = write(dir, "weak.key", &[0x42; 64]);
    let pass = write(dir, "pass", b"pw");
    let plain_bytes = Rng::new("weak_xts_key").bytes(16 * 4096);
    let plain = write(dir, "plain", &plain_bytes);
    let crypt_out = dir.join("crypt.out").to_str().unwrap().to_owned();
    let img = dir.join("img.luks").to_str().unwrap().to_owned();
    let crypt = |weak_opt: &[&str]| {
        run(mdu()
            .args([
                "crypt",
                "encrypt",
                "--key-file",
                &weak,
                "--sector-size",
                "4096",
            ])
            .args(weak_opt)
            .args([&plain, &crypt_out]))
    };
    let luks = |weak_opt: &[&str]| {
        run(mdu()
            .args([
                "luks",
                "encrypt",
                "--key-file",
                &pass,
                "--volume-key-file",
                &weak,
            ])
            .args(["--sector-size", "4096", "--offset", "4096"])
            .args(PBKDF2)
            .args(weak_opt)
            .args([&plain, &img]))
    };
    // The same answer; each namespace's exit status (cryptsetup's 1 under
    // luks).
    for (what, out, code) in [("crypt", crypt(&[]), 2), ("luks", luks(&[]), 1)] {
        expect_code(&out, code, &format!("{what} encrypt with a weak key"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--allow-weak-key"), "{what}: {err}");
        assert!(err.contains("halves"), "{what}: {err}");
    }
    assert!(!Path::new(&crypt_out).exists() && !Path::new(&img).exists());

    expect_code(
        &crypt(&["--allow-weak-key"]),
        0,
        "crypt encrypt --allow-weak-key",
    );
    expect_code(
        &luks(&["--allow-weak-key"]),
        0,
        "luks encrypt --allow-weak-key",
    );
    let image = std::fs::read(&img).unwrap();
    assert_eq!(
        image[2 << 20..],
        std::fs::read(&crypt_out).unwrap()[..],
        "the data segment is the plain mapping's ciphertext"
    );

    // Opening the image: refused without the option, the plaintext with it.
    let back = dir.join("back").to_str().unwrap().to_owned();
    let decrypt = |weak_opt: &[&str]| {
        run(mdu()
            .args(["luks", "decrypt", "--key-file", &pass])
            .args(weak_opt)
            .args([&img, &back]))
    };
    let out = decrypt(&[]);
    expect_code(&out, 1, "luks decrypt of a weak volume key");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-weak-key"));
    assert!(!Path::new(&back).exists());
    expect_code(
        &decrypt(&["--allow-weak-key"]),
        0,
        "luks decrypt --allow-weak-key",
    );
    assert_eq!(std::fs::read(&back).unwrap(), plain_bytes);
    for cmd in [
        &["crypt", "encrypt"][..],
        &["luks", "encrypt"],
        &["luks", "decrypt"],
    ] {
        let help = stdout(&run(mdu().args(cmd).arg("--help")));
        assert!(help.contains("--allow-weak-key"), "{cmd:?} --help");
    }
}
