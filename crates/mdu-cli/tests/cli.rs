//! Usage: `--help` on every subcommand, exit status 2 on bad usage (1
//! under `mdu luks`, as cryptsetup), and the README's exit-status table.

mod common;

use common::{expect_code, mdu, run};

#[test]
fn help_on_every_subcommand() {
    for path in [
        &[][..],
        &["fsverity"],
        &["fsverity", "digest"],
        &["verity"],
        &["verity", "format"],
        &["verity", "verify"],
        &["crypt"],
        &["crypt", "encrypt"],
        &["crypt", "decrypt"],
        &["base64"],
        &["base64", "encode"],
        &["base64", "decode"],
    ] {
        let out = run(mdu().args(path).arg("--help"));
        expect_code(&out, 0, &format!("{path:?} --help"));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Usage: mdu"), "{path:?}: {text}");
    }
    let out = run(mdu().args(["crypt", "encrypt", "--help"]));
    let text = String::from_utf8_lossy(&out.stdout);
    for opt in [
        "--cipher",
        "--key-file",
        "--sector-size",
        "--iv-large-sectors",
        "--iv-offset",
        "--offset",
        "--threads",
    ] {
        assert!(
            text.contains(opt),
            "{opt} missing from crypt encrypt --help"
        );
    }
}

#[test]
fn bad_usage_exits_2() {
    for args in [
        &[][..],
        &["nope"],
        &["fsverity", "digest"],
        &["verity", "format", "only-one-arg"],
        &["verity", "verify", "a", "b"],
        &["crypt", "encrypt", "in", "out"],
        &["fsverity", "digest", "--block-size", "x", "f"],
        &["base64", "encode", "--bogus"],
    ] {
        let out = run(mdu().args(args));
        expect_code(&out, 2, &format!("{args:?}"));
    }
}

/// Under `mdu luks`, bad usage exits 1, as cryptsetup; cryptsetup's verb
/// names are accepted and --help shows one name per verb.
#[test]
fn luks_usage_exits_1_and_takes_cryptsetups_names() {
    for args in [
        &["luks"][..],
        &["luks", "nope"],
        &["luks", "dump"],
        &["luks", "luksDump", "--bogus", "x"],
        &["luks", "format", "--type", "plain", "x"],
        &["luks", "-q", "format", "--iter-time", "0", "x"],
    ] {
        let out = run(mdu().args(args));
        expect_code(&out, 1, &format!("{args:?}"));
    }
    let help = run(mdu().args(["luks", "luksFormat", "--help"]));
    expect_code(&help, 0, "luksFormat --help");
    let text = String::from_utf8_lossy(&help.stdout);
    for opt in [
        "--type",
        "--batch-mode",
        "--verify-passphrase",
        "--keyfile-offset",
        "--iter-time",
        "--tries",
    ] {
        assert!(text.contains(opt), "{opt} missing from luks format --help");
    }
    let verbs = run(mdu().args(["luks", "--help"]));
    let text = String::from_utf8_lossy(&verbs.stdout);
    let verb = |name: &str| {
        text.lines()
            .any(|l| l.trim_start().starts_with(&format!("{name} ")))
    };
    assert!(verb("format") && verb("dump"), "{text}");
    assert!(
        !verb("luksFormat") && !verb("luksDump"),
        "one name per verb: {text}"
    );
}

/// `mdu completions SHELL` writes a completion script of every command for
/// bash, zsh and fish (bash's completes `mdu luks re` to `reencrypt` when
/// sourced); `mdu man --dir` writes a page per command; `--version` names
/// the commit, the target and the backends this CPU selects.
#[test]
fn completions_man_pages_and_version_come_from_the_parser() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(mdu().args(["completions", shell]));
        expect_code(&out, 0, shell);
        let text = String::from_utf8_lossy(&out.stdout);
        for word in ["reencrypt", "fsverity", "hotzone-size"] {
            assert!(text.contains(word), "{shell} completions lack {word}");
        }
    }
    let dir = common::scratch();
    let r = run(mdu().args(["man", "--dir"]).arg(dir.path()));
    expect_code(&r, 0, "man --dir");
    let pages = common::entries(dir.path());
    for page in [
        "mdu.1",
        "mdu-luks.1",
        "mdu-luks-reencrypt.1",
        "mdu-verity-verify.1",
    ] {
        assert!(pages.iter().any(|p| p == page), "no {page} in {pages:?}");
    }
    let page = std::fs::read_to_string(dir.path().join("mdu-luks-reencrypt.1")).unwrap();
    assert!(page.contains(".TH") && page.contains("hotzone"), "{page}");
    let v = run(mdu().arg("--version"));
    expect_code(&v, 0, "--version");
    let v = String::from_utf8_lossy(&v.stdout);
    assert!(
        v.contains("commit ") && v.contains("backends on this CPU: xts "),
        "{v}"
    );
    // Bash sources it and completes a subcommand.
    if std::process::Command::new("bash")
        .arg("--version")
        .output()
        .is_ok()
        && std::env::var("MDU_TEST_RUNNER").is_err()
    {
        let exe = env!("CARGO_BIN_EXE_mdu");
        let script = format!(
            "source <({exe} completions bash); COMP_WORDS=(mdu luks ree); COMP_CWORD=2; _mdu mdu ree luks; echo \"${{COMPREPLY[@]}}\""
        );
        let r = run(std::process::Command::new("bash").args(["-c", &script]));
        assert_eq!(String::from_utf8_lossy(&r.stdout).trim(), "reencrypt");
    }
}

/// A file this test holds an exclusive `flock` on (mdu's and cryptsetup's
/// lock), released when dropped.
fn locked(path: &std::path::Path) -> std::fs::File {
    let f = std::fs::File::open(path).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    let r = unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    };
    assert_eq!(r, 0, "flock");
    f
}

/// The README's exit-status table, read from README.md: for each
/// namespace column, the codes whose cell is not `-`.
fn readme_exit_table() -> Vec<(String, Vec<i32>)> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let mut lines = readme
        .lines()
        .skip_while(|l| !l.starts_with("| exit | `mdu luks`"));
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect()
    };
    let head = cells(lines.next().expect("the exit-status table"));
    let mut table: Vec<(String, Vec<i32>)> =
        head[1..].iter().map(|h| (h.clone(), Vec::new())).collect();
    for row in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let row = cells(row);
        let code: i32 = row[0].parse().expect("an exit status");
        for (col, cell) in table.iter_mut().zip(&row[1..]) {
            if cell != "-" {
                col.1.push(code);
            }
        }
    }
    table
}

/// Every cell of the README's exit-status table, one command per code and
/// namespace through the binary: `mdu luks` exits as cryptsetup does, the
/// other namespaces with mdu's own codes.
#[test]
fn every_exit_status_of_the_readme_table() {
    use std::os::unix::process::CommandExt as _;
    let dir = common::scratch();
    let d = dir.path();
    let p = |name: &str| d.join(name);
    let key = p("key");
    std::fs::write(&key, b"passphrase").unwrap();
    std::fs::write(p("wrong"), b"not it").unwrap();
    std::fs::write(p("junk"), vec![7u8; 1 << 20]).unwrap();
    std::fs::write(p("k64"), (0..64u8).collect::<Vec<u8>>()).unwrap();
    std::fs::write(p("plain"), vec![5u8; 65536]).unwrap();
    let pbkdf2 = ["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"];
    let made = run(mdu()
        .args(["luks", "format", "--key-file"])
        .arg(&key)
        .args(pbkdf2)
        .arg(p("img")));
    expect_code(&made, 0, "luks format");
    let made = run(mdu()
        .args(["verity", "format"])
        .arg(p("plain"))
        .arg(p("hash")));
    expect_code(&made, 0, "verity format");
    let text = String::from_utf8_lossy(&made.stdout).into_owned();
    let root = text
        .lines()
        .find_map(|l| l.strip_prefix("Root hash:"))
        .expect("a root hash")
        .trim()
        .to_owned();
    let wrong_root = format!("{:0>64}", "1");

    // Each case: namespace column, the code, what it is, the command.
    let path = |name: &str| p(name).to_str().unwrap().to_owned();
    let (img, junk, plain, hash) = (path("img"), path("junk"), path("plain"), path("hash"));
    let (wrong, missing, k64, out) = (path("wrong"), path("missing"), path("k64"), path("out"));
    let luks = "`mdu luks` (cryptsetup's)";
    let verity = "`mdu verity`";
    let fsverity = "`mdu fsverity` (fsverity's)";
    let others = "`mdu crypt`, `fscrypt`, `base64`";
    #[rustfmt::skip]
    let table: &[(&str, i32, &str, &[&str])] = &[
        (luks, 0, "dump", &["luks", "dump", &img]),
        (luks, 1, "not a LUKS device", &["luks", "luksDump", &junk]),
        (luks, 1, "an unknown option", &["luks", "dump", "--bogus", &img]),
        (luks, 2, "a wrong passphrase", &["luks", "dump", "--dump-volume-key", "--key-file", &wrong, &img]),
        (luks, 4, "a missing image", &["luks", "dump", &missing]),
        (verity, 0, "verify", &["verity", "verify", &plain, &hash, &root]),
        (verity, 1, "a wrong root hash", &["verity", "verify", &plain, &hash, &wrong_root]),
        (verity, 2, "a root hash that is not hex", &["verity", "verify", &plain, &hash, "zz"]),
        (fsverity, 0, "digest", &["fsverity", "digest", &plain]),
        (fsverity, 1, "a missing file", &["fsverity", "digest", &missing]),
        (fsverity, 2, "a hash fsverity lacks", &["fsverity", "digest", "--hash-alg", "md5", &plain]),
        (others, 0, "crypt encrypt", &["crypt", "encrypt", "--key-file", &k64, &plain, &out]),
        (others, 1, "fscrypt ls of no ext4", &["fscrypt", "ls", &junk]),
        (others, 2, "a base64 option misspelt", &["base64", "encode", "--bogus"]),
    ];
    let mut cases: Vec<(&str, i32, &str, std::process::Command)> = table
        .iter()
        .map(|(col, code, what, args)| {
            let mut cmd = mdu();
            cmd.args(*args);
            (*col, *code, *what, cmd)
        })
        .collect();
    // 3: an Argon2 memory of 4 GiB in an address space of 1 GiB.
    let mut oom = mdu();
    oom.args([
        "luks",
        "format",
        "--pbkdf",
        "argon2id",
        "--pbkdf-memory",
        "4194304",
    ])
    .args([
        "--pbkdf-force-iterations",
        "4",
        "--pbkdf-parallel",
        "1",
        "--key-file",
    ])
    .arg(&key)
    .arg(p("big.img"));
    // SAFETY: setrlimit is async-signal-safe, and the closure touches no
    // memory of the parent.
    unsafe {
        oom.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    // Under an emulator the limit would bind the emulator itself.
    let emulated = std::env::var("MDU_TEST_RUNNER").is_ok_and(|r| !r.trim().is_empty());
    if emulated {
        eprintln!(
            "SKIPPED exit status 3 under an emulator: the address-space limit binds the emulator"
        );
    } else {
        cases.push((luks, 3, "an Argon2 memory the process cannot allocate", oom));
    }

    let mut done = Vec::new();
    for (col, code, what, mut cmd) in cases {
        expect_code(&run(&mut cmd), code, &format!("{col}: {what}"));
        done.push((col.to_owned(), code));
    }
    // 5: busy, each with the file it writes held.
    let (img, plain, out) = (p("img"), p("plain"), p("out"));
    let busy = |path: &std::path::Path, cmd: &mut std::process::Command, what: &str| {
        let _held = locked(path);
        let out = run(cmd);
        expect_code(&out, 5, what);
    };
    busy(
        &img,
        mdu()
            .args(["luks", "format", "-q", "--key-file"])
            .arg(&key)
            .args(pbkdf2)
            .arg(&img),
        "luks format of a locked image",
    );
    done.push((luks.to_owned(), 5));
    std::fs::write(p("fec"), b"").unwrap();
    busy(
        &plain,
        mdu()
            .args(["verity", "repair", "--fec-device"])
            .arg(p("fec"))
            .arg(&plain)
            .arg(&hash)
            .arg(&root),
        "verity repair of a locked image",
    );
    done.push((verity.to_owned(), 5));
    busy(
        &out,
        mdu()
            .args(["crypt", "encrypt", "--key-file"])
            .arg(&k64)
            .args(["--in-place", "--journal"])
            .arg(p("journal"))
            .arg(&out)
            .arg(&out),
        "crypt --in-place of a locked image",
    );
    done.push((others.to_owned(), 5));

    // The table and the cases agree, cell by cell.
    let mut want: Vec<(String, i32)> = readme_exit_table()
        .into_iter()
        .flat_map(|(col, codes)| codes.into_iter().map(move |c| (col.clone(), c)))
        .filter(|(col, code)| !(emulated && col == luks && *code == 3))
        .collect();
    want.sort();
    done.sort();
    done.dedup();
    assert_eq!(
        done, want,
        "the README's exit-status table and the cases run"
    );
}
