//! Passphrases as cryptsetup takes them, checked against cryptsetup 2.6
//! on the same inputs: key files, standard input, offsets and sizes, a
//! prompt on a pseudo-terminal; the KDF benchmarked to --iter-time; the
//! global options.

use std::io::Write as _;
use std::process::Stdio;

use super::*;

/// `cmd` with `input` on its standard input (a pipe).
fn with_stdin(cmd: &mut Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    // A command that stops reading early closes the pipe: not an error.
    let _ = stdin.write_all(input);
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// Every reading rule of cryptsetup's "notes on passphrase processing",
/// run through both tools on one image made by cryptsetup: the same exit
/// status for each input (0 opened, 1 refused input, 2 wrong passphrase).
#[test]
fn the_same_inputs_open_or_fail_alike_in_both_tools() {
    let test = "luks::passphrase::the_same_inputs_open_or_fail_alike_in_both_tools";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let d = scratch();
    let dir = d.path();
    let img = dir.join("img");
    std::fs::write(&img, vec![0u8; 20 << 20]).unwrap();
    let key = write(dir, "key", b"pw");
    let img_s = img.to_str().unwrap();
    let made = cryptsetup(
        dir,
        &[&["luksFormat", "-q", "--key-file", &key], PBKDF2, &[img_s]].concat(),
    );
    expect_code(&made, 0, "cryptsetup luksFormat");
    let k_nl = write(dir, "k_nl", b"pw\n");
    let k_long = write(dir, "k_long", b"pwxx");
    let k_empty = write(dir, "k_empty", b"");
    let k_off = write(dir, "k_off", b"xxpw");
    let cases: &[(&[u8], &[&str])] = &[
        (b"pw\n", &[]),
        (b"pw", &[]),
        (b"pw\nxx", &[]),
        (b"pw\r\n", &[]),
        (b"\n", &[]),
        (b"", &[]),
        (b"pwxx", &["--keyfile-size", "2"]),
        (b"pw\n", &["--keyfile-size", "5"]),
        (b"xxpw\n", &["--keyfile-offset", "2"]),
        (b"pw\n", &["--key-file", "-"]),
        (b"pw", &["--key-file", "-"]),
        (b"", &["--key-file", "-"]),
        (b"xxpw", &["--key-file", "-", "--keyfile-offset", "2"]),
        (b"pwxx", &["--key-file", "-", "-l", "2"]),
        (b"pw", &["--key-file", "-", "-l", "3"]),
        (b"", &["--key-file", &k_nl]),
        (b"", &["--key-file", &k_long, "-l", "2"]),
        (b"", &["--key-file", &k_empty]),
        (b"", &["--key-file", &k_off, "--keyfile-offset", "2"]),
        (b"", &["--key-file", &k_off, "--keyfile-offset", "4"]),
        (b"", &["--key-file", &k_off, "--keyfile-offset", "5"]),
        (b"", &["--key-file", "/nonexistent/key"]),
    ];
    let mut seen = [false; 3];
    for (input, args) in cases {
        let theirs = with_stdin(
            Command::new("cryptsetup")
                .args(["open", "--test-passphrase", img_s])
                .args(*args),
            input,
        );
        let ours = with_stdin(
            mdu()
                .args(["luks", "dump", "--dump-volume-key"])
                .args(*args)
                .arg(&img),
            input,
        );
        let what = format!("{:?} {args:?}", String::from_utf8_lossy(input));
        let code = theirs.status.code().unwrap();
        expect_code(&ours, code, &format!("{what} (cryptsetup: {code})"));
        seen[code as usize] = true;
    }
    assert_eq!(seen, [true; 3], "every outcome is among the cases");
}

/// A python3 script that runs a command on a pseudo-terminal, types each
/// answer when the output goes quiet, and prints the output and status.
const PTY: &str = r#"
import os, pty, sys, select
i = sys.argv.index('--')
answers, cmd = sys.argv[1:i], sys.argv[i + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
out = b''
def quiet(t):
    global out
    while True:
        r, _, _ = select.select([fd], [], [], t)
        if not r:
            return False
        try:
            d = os.read(fd, 4096)
        except OSError:
            return True
        if not d:
            return True
        out += d
for a in answers:
    if quiet(1.0):
        break
    os.write(fd, a.encode() + b'\n')
quiet(5.0)
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace'))
sys.exit(os.waitstatus_to_exitcode(st))
"#;

/// `argv` run on a pseudo-terminal with `answers` typed in turn.
fn on_terminal(answers: &[&str], argv: &[String]) -> Output {
    run(Command::new("python3")
        .args(["-c", PTY])
        .args(answers)
        .arg("--")
        .args(argv))
}

/// On a terminal: format asks before it overwrites an image, then for the
/// passphrase twice, without echo; a wrong passphrase is asked again up to
/// --tries times; cryptsetup opens what was typed.
#[test]
fn a_passphrase_typed_on_a_terminal() {
    let test = "luks::passphrase::a_passphrase_typed_on_a_terminal";
    if !have_tool("python3", test) || !have_tool("cryptsetup", test) {
        return;
    }
    let d = scratch();
    let dir = d.path();
    let img = dir.join("img");
    std::fs::write(&img, vec![0u8; 20 << 20]).unwrap();
    let img_s = img.to_str().unwrap().to_owned();
    let mut format: Vec<String> = mdu_argv();
    format.extend(["luks", "luksFormat"].map(String::from));
    format.extend(PBKDF2.iter().map(|s| s.to_string()));
    format.push(img_s.clone());

    let out = on_terminal(&["no"], &format);
    expect_code(&out, 1, "format answered no");
    let text = stdout(&out);
    assert!(
        text.contains("Are you sure? (Type 'yes' in capital letters):"),
        "{text}"
    );
    assert_eq!(
        std::fs::read(&img).unwrap(),
        vec![0u8; 20 << 20],
        "nothing written"
    );

    let out = on_terminal(&["YES", "typed-secret", "another"], &format);
    expect_code(&out, 2, "two passphrases that differ");

    let out = on_terminal(&["YES", "typed-secret", "typed-secret"], &format);
    expect_code(&out, 0, "format on a terminal");
    let text = stdout(&out);
    assert!(
        text.contains(&format!("Enter passphrase for {img_s}: "))
            && text.contains("Verify passphrase: "),
        "{text}"
    );
    assert!(
        !text.contains("typed-secret"),
        "the passphrase was echoed: {text}"
    );
    let opened = with_stdin(
        Command::new("cryptsetup").args(["open", "--test-passphrase", &img_s]),
        b"typed-secret\n",
    );
    expect_code(&opened, 0, "cryptsetup opens the typed passphrase");

    let mut dump: Vec<String> = mdu_argv();
    dump.extend(["luks", "dump", "-q", "--dump-volume-key", "--tries", "2"].map(String::from));
    dump.push(img_s.clone());
    let out = on_terminal(&["wrong", "typed-secret"], &dump);
    expect_code(&out, 0, "the second try");
    assert!(stdout(&out).contains("MK dump:"));
    let out = on_terminal(&["wrong", "wrong again"], &dump);
    expect_code(&out, 2, "two wrong tries");
    assert_eq!(stdout(&out).matches("Enter passphrase for").count(), 2);
}

/// Without --pbkdf-force-iterations the cost is benchmarked to
/// --iter-time: at least cryptsetup's floors, and cryptsetup opens it.
#[test]
fn a_benchmarked_keyslot_opens_in_cryptsetup() {
    let test = "luks::passphrase::a_benchmarked_keyslot_opens_in_cryptsetup";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let d = scratch();
    let dir = d.path();
    let key = write(dir, "key", b"bench");
    for (pbkdf, extra) in [
        ("pbkdf2", &[][..]),
        (
            "argon2id",
            &["--pbkdf-memory", "256", "--pbkdf-parallel", "1"][..],
        ),
    ] {
        let img = dir.join(format!("{pbkdf}.img"));
        let out = run(mdu()
            .args([
                "luks",
                "format",
                "--debug",
                "--key-file",
                &key,
                "--iter-time",
                "1",
                "--pbkdf",
                pbkdf,
            ])
            .args(extra)
            .arg(&img));
        expect_code(&out, 0, pbkdf);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("debug:") && err.contains("keyslot 0:"),
            "{err}"
        );
        let json = stdout(&run(mdu().args(["luks", "dump", "--json"]).arg(&img)));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let kdf = &v["metadata"]["keyslots"]["0"]["kdf"];
        match pbkdf {
            "pbkdf2" => assert!(kdf["iterations"].as_u64().unwrap() >= 1000, "{kdf}"),
            _ => {
                assert!(kdf["time"].as_u64().unwrap() >= 4, "{kdf}");
                assert!(
                    (32..=256).contains(&kdf["memory"].as_u64().unwrap()),
                    "{kdf}"
                );
            }
        }
        let opened = cryptsetup(
            dir,
            &[
                "open",
                "--test-passphrase",
                "--key-file",
                &key,
                img.to_str().unwrap(),
            ],
        );
        expect_code(&opened, 0, &format!("cryptsetup opens the {pbkdf} keyslot"));
    }
}

/// -v says what was done; --disable-locks goes on past a held lock with a
/// warning, where the lock makes the same command busy (exit 5).
#[test]
fn verbose_and_disable_locks() {
    let d = scratch();
    let dir = d.path();
    let key = write(dir, "key", b"pw");
    let img = dir.join("img");
    let out = run(mdu()
        .args(["luks", "format", "--key-file", &key])
        .args(PBKDF2)
        .arg(&img));
    expect_code(&out, 0, "format");
    let out = run(mdu()
        .args([
            "luks",
            "-v",
            "dump",
            "--dump-volume-key",
            "--key-file",
            &key,
        ])
        .arg(&img));
    expect_code(&out, 0, "dump -v");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("keyslot 0 unlocked") && err.contains("command successful"),
        "{err}"
    );

    let held = std::fs::File::open(&img).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    let r = unsafe {
        libc::flock(
            std::os::fd::AsRawFd::as_raw_fd(&held),
            libc::LOCK_EX | libc::LOCK_NB,
        )
    };
    assert_eq!(r, 0, "flock");
    let format = |extra: &[&str]| {
        run(mdu()
            .args(["luks", "format", "-q", "--key-file", &key])
            .args(PBKDF2)
            .args(extra)
            .arg(&img))
    };
    expect_code(&format(&[]), 5, "format of a locked image");
    let out = format(&["--disable-locks"]);
    expect_code(&out, 0, "format --disable-locks");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--disable-locks"));
}
