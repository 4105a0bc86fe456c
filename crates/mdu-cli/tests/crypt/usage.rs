//! Bad input refused with nothing written: arguments, the input given as the
//! output without `--in-place`, key files of the wrong length.

use super::*;

fn base_cmd(op: &str, key: &Path) -> Command {
    let mut cmd = mdu();
    cmd.args(["crypt", op, "--cipher", "aes-xts-plain64", "--key-file"])
        .arg(key);
    cmd
}

#[test]
fn bad_input_is_refused_and_leaves_nothing() {
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, (0..64u8).collect::<Vec<_>>()).unwrap();
    let input = d.join("in");
    std::fs::write(&input, vec![1u8; 3 * 512 + 100]).unwrap();
    let out_path = d.join("out");
    let before = entries(d);

    // Not a whole number of sectors: the file, the offset and the rule.
    let out = run(base_cmd("encrypt", &key).arg(&input).arg(&out_path));
    expect_code(&out, 2, "partial sector");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/in"), "{err}");
    assert!(err.contains("offset 1536"), "{err}");
    assert!(err.contains("whole number of 512-byte sectors"), "{err}");
    assert_eq!(entries(d), before);

    // The same through a pipe (found while streaming, after output began).
    let mut child = base_cmd("encrypt", &key)
        .arg("/dev/stdin")
        .arg(&out_path)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&vec![0u8; (9 << 20) + 700])
        .unwrap();
    let out = child.wait_with_output().unwrap();
    expect_code(&out, 2, "partial sector on a pipe");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("offset {}", (9 << 20) + 512)),
        "{err}"
    );
    assert_eq!(entries(d), before);

    // An existing output stays as it was.
    std::fs::write(&out_path, b"keep me").unwrap();
    let out = run(base_cmd("decrypt", &key).arg(&input).arg(&out_path));
    expect_code(&out, 2, "partial sector, existing output");
    assert_eq!(std::fs::read(&out_path).unwrap(), b"keep me");
    std::fs::remove_file(&out_path).unwrap();

    // Key of the wrong length.
    let short = d.join("short");
    std::fs::write(&short, [7u8; 48]).unwrap();
    let good = d.join("good");
    std::fs::write(&good, vec![0u8; 4096]).unwrap();
    let before = entries(d);
    let out = run(base_cmd("encrypt", &short).arg(&good).arg(&out_path));
    expect_code(&out, 2, "48-byte key");
    assert!(String::from_utf8_lossy(&out.stderr).contains("exactly 32"));

    // Key with equal halves.
    let weak = d.join("weak");
    std::fs::write(&weak, [7u8; 64]).unwrap();
    let out = run(base_cmd("encrypt", &weak).arg(&good).arg(&out_path));
    expect_code(&out, 2, "weak key");
    std::fs::remove_file(&weak).unwrap();

    // Unknown cipher or IV mode, bad sector size, misaligned iv_offset.
    for args in [
        &["--cipher", "aes-ecb-plain64"][..],
        &["--cipher", "aes-cbc-lmk"],
        &["--cipher", "aes-xts-lmk"],
        &["--sector-size", "8192"],
        &["--sector-size", "1000"],
        &["--sector-size", "4096", "--iv-offset", "4"],
    ] {
        let out = run(mdu()
            .args(["crypt", "encrypt", "--key-file"])
            .arg(&key)
            .args(args)
            .arg(&good)
            .arg(&out_path));
        expect_code(&out, 2, &format!("{args:?}"));
    }

    // Decrypt of a file shorter than --offset; empty input.
    let out = run(base_cmd("decrypt", &key)
        .args(["--offset", "100"])
        .arg(&good)
        .arg(&out_path));
    expect_code(&out, 2, "input shorter than --offset");
    let empty = d.join("empty");
    std::fs::write(&empty, b"").unwrap();
    let out = run(base_cmd("encrypt", &key).arg(&empty).arg(&out_path));
    expect_code(&out, 2, "empty input");
    std::fs::remove_file(&empty).unwrap();
    let _ = std::fs::remove_file(d.join("manifest.json"));
    assert_eq!(entries(d), before);
}

/// `mdu crypt OP` with `args` (before IN and OUT) from `input` to `output`.
fn crypt_cmd(op: &str, key: &Path, args: &[&str], input: &Path, output: &Path) -> Command {
    let mut cmd = base_cmd(op, key);
    cmd.args(args).arg(input).arg(output);
    cmd
}

#[test]
fn the_input_as_output_is_refused_without_in_place() {
    use std::os::unix::fs::MetadataExt;

    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, (0..64u8).collect::<Vec<_>>()).unwrap();
    let input = d.join("in");
    let data: Vec<u8> = (0..8 * 512).map(|i| (i % 251) as u8).collect();
    std::fs::write(&input, &data).unwrap();
    let hard = d.join("hard");
    std::fs::hard_link(&input, &hard).unwrap();
    let soft = d.join("soft");
    std::os::unix::fs::symlink(&input, &soft).unwrap();
    // The same file under another spelling of its path.
    let dotted = d.join(".").join("in");
    let before = entries(d);
    let ino = std::fs::metadata(&input).unwrap().ino();

    for op in ["encrypt", "decrypt"] {
        for out in [&input, &hard, &soft, &dotted] {
            let what = format!("{op} onto {}", out.display());
            let res = run(&mut crypt_cmd(op, &key, &[], &input, out));
            expect_code(&res, 2, &what);
            let err = String::from_utf8_lossy(&res.stderr);
            assert!(err.contains("same file or device"), "{what}: {err}");
            assert!(err.contains("--in-place"), "{what}: {err}");
            assert_eq!(std::fs::read(&input).unwrap(), data, "{what}");
            assert_eq!(entries(d), before, "{what}");
            assert_eq!(std::fs::metadata(&input).unwrap().ino(), ino, "{what}");
        }
        // Reading the input through a symlink changes nothing either.
        let res = run(&mut crypt_cmd(op, &key, &[], &soft, &hard));
        expect_code(
            &res,
            2,
            &format!("{op} from the symlink onto the hard link"),
        );
        assert_eq!(std::fs::read(&input).unwrap(), data);
    }

    // --in-place with an OUT that is another file: refused, nothing made.
    let other = d.join("other");
    let res = run(&mut crypt_cmd(
        "encrypt",
        &key,
        &["--in-place"],
        &input,
        &other,
    ));
    expect_code(&res, 2, "--in-place with a different OUT");
    assert!(String::from_utf8_lossy(&res.stderr).contains("not the same file"));
    assert_eq!(entries(d), before);

    // The same character device: refused without --in-place, and --in-place
    // takes only regular files and block devices.
    let null = Path::new("/dev/null");
    let res = run(&mut crypt_cmd("encrypt", &key, &[], null, null));
    expect_code(&res, 2, "/dev/null onto itself");
    let res = run(&mut crypt_cmd("encrypt", &key, &["--in-place"], null, null));
    expect_code(&res, 2, "--in-place on /dev/null");
    assert!(String::from_utf8_lossy(&res.stderr).contains("regular file or a block device"));
    assert_eq!(std::fs::read(&input).unwrap(), data);
}

/// The key is read into a fixed buffer one byte longer than the longest
/// key: files of 31, 33, 63, 65 and 100 bytes are refused with their
/// length, a key of 32 or 64 bytes works.
#[test]
fn key_files_of_any_other_length_are_refused_with_their_length() {
    let dir = scratch();
    let d = dir.path();
    let data = d.join("data");
    std::fs::write(&data, vec![3u8; 1024]).unwrap();
    let out_path = d.join("out");
    for len in [0usize, 31, 33, 63, 65, 100, 32, 64] {
        let key = d.join(format!("key{len}"));
        std::fs::write(&key, (0..len).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
        let res = run(&mut crypt_cmd("encrypt", &key, &[], &data, &out_path));
        if len == 32 || len == 64 {
            expect_code(&res, 0, &format!("{len}-byte key"));
            continue;
        }
        expect_code(&res, 2, &format!("{len}-byte key"));
        let err = String::from_utf8_lossy(&res.stderr);
        assert!(err.contains(&format!("holds {len} bytes")), "{err}");
    }
    // aes-cbc takes 16 or 32 bytes.
    for len in [0usize, 15, 17, 24, 31, 33, 64, 16, 32] {
        let key = d.join(format!("cbc{len}"));
        std::fs::write(&key, (0..len).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
        let res = run(mdu()
            .args([
                "crypt",
                "encrypt",
                "--cipher",
                "aes-cbc-essiv:sha256",
                "--key-file",
            ])
            .arg(&key)
            .arg(&data)
            .arg(&out_path));
        if len == 16 || len == 32 {
            expect_code(&res, 0, &format!("{len}-byte aes-cbc key"));
            continue;
        }
        expect_code(&res, 2, &format!("{len}-byte aes-cbc key"));
        let err = String::from_utf8_lossy(&res.stderr);
        assert!(err.contains(&format!("holds {len} bytes")), "{err}");
        assert!(err.contains("aes-cbc needs exactly 16"), "{err}");
    }
}
