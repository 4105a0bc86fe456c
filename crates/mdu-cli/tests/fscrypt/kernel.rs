//! Trees the kernel encrypted, read by `ls`, `cat` and `extract`: what the
//! kernel shows, journals to replay, wrong v1 keys; the help text.

use super::*;

#[test]
fn extract_and_ls_give_what_the_kernel_shows() {
    let test = "fscrypt::kernel::extract_and_ls_give_what_the_kernel_shows";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    for (policy, v1) in [("v2-lblk64", false), ("v1-pad4", true)] {
        let dir = scratch();
        let image = dir.path().join("fs.img");
        let key = dir.path().join("key");
        std::fs::write(
            &key,
            (0u8..64).map(|i| i.wrapping_mul(29)).collect::<Vec<_>>(),
        )
        .unwrap();
        let json = dir.path().join("m.json");
        let out = run(Command::new("python3")
            .arg(FSCRYPT_KERNEL_SCRIPT)
            .arg("make")
            .arg(&image)
            .arg(&json)
            .args(["--policy", policy, "--seed", "5", "--key"])
            .arg(&key));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let m: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let key_arg: Vec<String> = if v1 {
            vec![
                "--key-v1".into(),
                format!("{}:{}", m["v1_descriptor"].as_str().unwrap(), key.display()),
            ]
        } else {
            vec!["--key".into(), key.display().to_string()]
        };

        // Extract, and compare every file, mode, time and symlink.
        let dest = dir.path().join("out");
        let out = run(mdu()
            .args(["fscrypt", "extract"])
            .arg(&image)
            .arg("vault")
            .args(&key_arg)
            .arg("--out")
            .arg(&dest));
        expect_code(&out, 0, "extract");
        let mut files = 0;
        for e in m["with_key"].as_array().unwrap() {
            let rel = unhex(e["path"].as_str().unwrap());
            let p = dest.join(std::ffi::OsStr::from_bytes(&rel));
            let what = format!("{policy}: {}", p.display());
            match e["type"].as_str().unwrap() {
                "file" => {
                    let data = std::fs::read(&p).unwrap_or_else(|err| panic!("{what}: {err}"));
                    assert_eq!(
                        Sha256::digest(&data).to_vec(),
                        unhex(e["sha256"].as_str().unwrap()),
                        "{what}"
                    );
                    let meta = std::fs::metadata(&p).unwrap();
                    // Less setuid and setgid: owners are not restored.
                    assert_eq!(
                        u64::from(meta.permissions().mode() & 0o7777),
                        e["mode"].as_u64().unwrap() & 0o1777,
                        "{what}"
                    );
                    let ns =
                        i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
                    assert_eq!(ns, i128::from(e["mtime_ns"].as_i64().unwrap()), "{what}");
                    files += 1;
                }
                "symlink" => {
                    let target = std::fs::read_link(&p).unwrap();
                    assert_eq!(
                        target.as_os_str().as_bytes(),
                        unhex(e["target"].as_str().unwrap()),
                        "{what}"
                    );
                }
                "dir" => assert!(p.is_dir(), "{what}"),
                // The tree's one special file: a FIFO, recreated.
                _ => {
                    use std::os::unix::fs::FileTypeExt;
                    let meta = std::fs::symlink_metadata(&p).unwrap();
                    assert!(meta.file_type().is_fifo(), "{what}");
                    assert_eq!(
                        u64::from(meta.mode()),
                        e["mode"].as_u64().unwrap(),
                        "{what}"
                    );
                }
            }
        }
        assert!(files > 80, "{policy}: {files} files compared");

        // Without a key: the no-key names of the top directory.
        let out = run(mdu().args(["fscrypt", "ls"]).arg(&image).arg("vault"));
        expect_code(&out, 0, "ls without a key");
        let mut got: Vec<&[u8]> = out
            .stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty() && *l != b"." && *l != b"..")
            .collect();
        let want_owned: Vec<Vec<u8>> = m["without_key"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| unhex(e["path"].as_str().unwrap()))
            .filter(|p| !p.contains(&b'/'))
            .collect();
        let mut want: Vec<&[u8]> = want_owned.iter().map(Vec::as_slice).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{policy}: no-key names");
        println!(
            "{policy}: {files} files extracted equal, {} no-key names equal",
            want.len()
        );

        // A wrong key: refused, naming both keys, nothing written.
        if !v1 {
            let wrong = dir.path().join("wrong");
            std::fs::write(&wrong, [7u8; 64]).unwrap();
            let dest = dir.path().join("never");
            let out = run(mdu()
                .args(["fscrypt", "extract"])
                .arg(&image)
                .arg("--key")
                .arg(&wrong)
                .arg("--out")
                .arg(&dest));
            expect_code(&out, 1, "extract with a wrong key");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(m["identifier"].as_str().unwrap()), "{err}");
            assert!(
                !Path::new(&dest).exists(),
                "a refused extract created its output"
            );
        }
    }
}

#[test]
fn fscrypt_help_explains_keys_and_exit_status() {
    for sub in ["ls", "cat", "extract"] {
        let out = run(mdu().args(["fscrypt", sub, "--help"]));
        expect_code(&out, 0, sub);
        let help = String::from_utf8_lossy(&out.stdout).replace('\n', " ");
        assert!(
            help.contains("--key-v1")
                && help.contains("Exit status")
                && help.contains("checked only through the")
                && help.contains("What cannot be checked"),
            "{sub}: {help}"
        );
    }
}

#[test]
fn an_image_that_needs_journal_recovery_is_refused_until_replayed() {
    let test = "fscrypt::kernel::an_image_that_needs_journal_recovery_is_refused_until_replayed";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    let dir = scratch();
    let key = key_file(dir.path());
    let image = dir.path().join("fs.img");
    let copy = dir.path().join("copy.img");
    let json = dir.path().join("m.json");
    let out = run(Command::new("python3")
        .arg(FSCRYPT_KERNEL_SCRIPT)
        .arg("dirty")
        .args([&image, &copy, &json])
        .args(["--policy", "v2-pad32", "--key"])
        .arg(&key));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let names = |v: &Value| -> Vec<Vec<u8>> {
        let mut n: Vec<Vec<u8>> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|e| unhex(e.as_str().unwrap()))
            .collect();
        n.sort();
        n
    };
    let written = names(&m["written"]);
    // The kernel replays the journal of a copy it mounts: every file is there.
    assert_eq!(names(&m["kernel_after_replay"]), written);

    // The copy taken while mounted: refused, saying what to do.
    let ls = |img: &Path| {
        run(mdu()
            .args(["fscrypt", "ls"])
            .arg(img)
            .arg("vault")
            .arg("--key")
            .arg(&key))
    };
    let out = ls(&copy);
    expect_code(&out, 1, "ls of an image that needs recovery");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs journal recovery")
            && err.contains("e2fsck -fy")
            && err.contains("unmount"),
        "{err}"
    );
    let out = run(mdu()
        .args(["fscrypt", "extract"])
        .arg(&copy)
        .arg("--key")
        .arg(&key)
        .arg("--out")
        .arg(dir.path().join("never")));
    expect_code(&out, 1, "extract of an image that needs recovery");
    assert!(!dir.path().join("never").exists());

    // What the message advises: e2fsck -fy replays the journal, and then
    // mdu lists what the kernel showed.
    let fsck = run(Command::new("e2fsck").arg("-fy").arg(&copy));
    assert!(
        matches!(fsck.status.code(), Some(0..=2)),
        "e2fsck: {}",
        String::from_utf8_lossy(&fsck.stdout)
    );
    let out = ls(&copy);
    expect_code(&out, 0, "ls after e2fsck");
    let mut listed: Vec<Vec<u8>> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty() && *l != b"." && *l != b"..")
        .map(<[u8]>::to_vec)
        .collect();
    listed.sort();
    assert_eq!(listed, written, "after e2fsck");

    // The flag alone, set with debugfs on the clean image: refused too.
    let out = run(Command::new("debugfs")
        .args(["-w", "-R", "feature needs_recovery"])
        .arg(&copy));
    assert!(
        out.status.success(),
        "debugfs: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ls(&copy);
    expect_code(&out, 1, "ls after debugfs set needs_recovery");
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs journal recovery"));
    println!(
        "{} files written while mounted: the kernel shows all after replay; mdu refuses the copy, and lists all after e2fsck -fy",
        written.len()
    );
}

#[test]
fn wrong_v1_keys_are_refused_by_ls_cat_and_extract() {
    let test = "fscrypt::kernel::wrong_v1_keys_are_refused_by_ls_cat_and_extract";
    if !have_tool("the kernel's ext4 encryption", test) {
        return;
    }
    let dir = scratch();
    let image = dir.path().join("fs.img");
    let key = key_file(dir.path());
    let json = dir.path().join("m.json");
    let out = run(Command::new("python3")
        .arg(FSCRYPT_KERNEL_SCRIPT)
        .arg("make")
        .arg(&image)
        .arg(&json)
        .args(["--policy", "v1-pad4", "--seed", "5", "--key"])
        .arg(&key));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let descriptor = m["v1_descriptor"].as_str().unwrap().to_owned();
    let entries = m["with_key"].as_array().unwrap();
    let path_of = |want: &dyn Fn(&Value, &[u8]) -> bool| -> String {
        let e = entries
            .iter()
            .find(|e| want(e, &unhex(e["path"].as_str().unwrap())))
            .unwrap();
        format!(
            "vault/{}",
            String::from_utf8(unhex(e["path"].as_str().unwrap())).unwrap()
        )
    };
    // The smallest directory with names (64 bytes of them: alone, a wrong
    // key would pass them more often than not) and a file in it.
    let deep = path_of(&|e, p| e["type"] == "dir" && p.iter().filter(|&&b| b == b'/').count() == 1);
    let file =
        path_of(&|e, p| e["type"] == "file" && p.iter().filter(|&&b| b == b'/').count() == 2);
    let mut rng = common::Rng::new(test);
    let wrong = dir.path().join("wrong");
    let arg = format!("{descriptor}:{}", wrong.display());
    let (mut ls, mut cat, mut extract) = (0, 0, 0);
    let keys = 100;
    for i in 0..keys {
        std::fs::write(&wrong, rng.bytes(64)).unwrap();
        let out = run(mdu()
            .args(["fscrypt", "ls"])
            .arg(&image)
            .arg(if i % 2 == 0 { "vault" } else { &deep })
            .args(["--key-v1", &arg]));
        ls += usize::from(out.status.success());
        if out.status.code() == Some(1) {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("the key is wrong"), "{err}");
        }
        let dest = dir.path().join(format!("out{i}"));
        let out = run(mdu()
            .args(["fscrypt", "extract"])
            .arg(&image)
            .arg(&deep)
            .args(["--key-v1", &arg])
            .arg("--out")
            .arg(&dest));
        extract += usize::from(out.status.success());
        assert!(
            out.status.success() || !dest.exists(),
            "a refused extract wrote"
        );
        if i % 5 == 0 {
            let out = run(mdu()
                .args(["fscrypt", "cat"])
                .arg(&image)
                .arg(&file)
                .args(["--key-v1", &arg]));
            cat += usize::from(out.status.success());
        }
    }
    println!(
        "wrong v1 keys accepted: ls {ls} of {keys}, extract {extract} of {keys}, cat {cat} of {}",
        keys / 5
    );
    assert_eq!((ls, extract, cat), (0, 0, 0));
    // The right key still reads it.
    let out = run(mdu()
        .args(["fscrypt", "ls"])
        .arg(&image)
        .arg(&deep)
        .args(["--key-v1", &format!("{descriptor}:{}", key.display())]));
    expect_code(&out, 0, "ls with the right v1 key");
}
