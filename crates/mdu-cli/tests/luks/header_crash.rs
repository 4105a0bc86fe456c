//! Each header-changing verb killed at every write and at every sync
//! (strace's fault injection: SIGKILL on entry to the n-th `pwrite64`, and
//! to the n-th `fdatasync`): cryptsetup and mdu both load what is left,
//! agree on it, and find the old header or the new one.

use super::header::{Img, TPM2_TOKEN};
use super::*;

/// `argv` under strace, killed on entry to its `n`-th `syscall`; whether
/// it was killed (`false`: it ended by itself, having fewer).
fn killed_on(syscall: &str, n: usize, argv: &[String]) -> bool {
    let out = run(Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "-e"])
        .arg(format!("trace={syscall}"))
        .arg(format!("--inject={syscall}:signal=KILL:when={n}"))
        .args(argv));
    out.status.code() != Some(0)
}

/// What both tools see: cryptsetup's luksDump without its Epoch line, mdu
/// loading the header too, token 0 (byte-identical in both), and which of
/// the passphrases `pws` opens (both tools agreeing).
fn state(v: &Img, pws: &[&str]) -> String {
    // mdu first: cryptsetup's load rewrites a damaged copy.
    expect_code(&v.mdu(&["dump", &v.img]), 0, "mdu dump");
    let dump = v.cs(&["luksDump", &v.img]);
    expect_code(&dump, 0, "cryptsetup luksDump");
    let mut s: String = stdout(&dump)
        .lines()
        .filter(|l| !l.starts_with("Epoch:"))
        .map(|l| format!("{l}\n"))
        .collect();
    s.push_str(&String::from_utf8_lossy(&v.token("0").unwrap_or_default()));
    for pw in pws {
        let a = ["open", "--test-passphrase", "--key-file", pw, &v.img];
        let (c, m) = (v.cs(&a).status.success(), v.mdu(&a).status.success());
        assert_eq!(c, m, "{pw}: cryptsetup opens: {c}, mdu: {m}");
        s.push_str(&format!("\n{pw}: {c}"));
    }
    s
}

struct Case {
    what: &'static str,
    /// Brings the fresh image to the state the verb starts from; returns
    /// extra passphrase files to try.
    prepare: fn(&Img) -> Vec<String>,
    /// The verb's arguments after `mdu luks` (`IMG` is the image).
    args: fn(&Img) -> Vec<String>,
    /// A state between old and new is allowed as long as one of the
    /// passphrases opens (restore with keyslots in the way).
    between: bool,
}

fn luks_args(v: &Img, args: &[&str]) -> Vec<String> {
    args.iter()
        .map(|a| {
            if *a == "IMG" {
                v.img.clone()
            } else {
                (*a).to_owned()
            }
        })
        .collect()
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            what: "uuid --uuid",
            prepare: |_| vec![],
            args: |v| {
                luks_args(
                    v,
                    &[
                        "uuid",
                        "--uuid",
                        "0b5e8a3c-2f41-4c1e-9d3a-7f10a2b3c4d5",
                        "IMG",
                    ],
                )
            },
            between: false,
        },
        Case {
            what: "config --label --subsystem",
            prepare: |_| vec![],
            args: |v| luks_args(v, &["config", "--label", "L", "--subsystem", "S", "IMG"]),
            between: false,
        },
        Case {
            what: "config --priority",
            prepare: |_| vec![],
            args: |v| luks_args(v, &["config", "--priority", "prefer", "-S", "0", "IMG"]),
            between: false,
        },
        Case {
            what: "token import --key-slot",
            prepare: |v| {
                write(v.dir.path(), "tpm2.json", TPM2_TOKEN.as_bytes());
                vec![]
            },
            args: |v| {
                let tpm = v.path("tpm2.json");
                luks_args(
                    v,
                    &["token", "import", "--json-file", &tpm, "-S", "0", "IMG"],
                )
            },
            between: false,
        },
        Case {
            what: "token remove",
            prepare: |v| {
                let tpm = write(v.dir.path(), "tpm2.json", TPM2_TOKEN.as_bytes());
                expect_code(
                    &v.cs(&["token", "import", "--json-file", &tpm, &v.img]),
                    0,
                    "import",
                );
                vec![]
            },
            args: |v| luks_args(v, &["token", "remove", "--token-id", "0", "IMG"]),
            between: false,
        },
        Case {
            what: "erase",
            prepare: |_| vec![],
            args: |v| luks_args(v, &["erase", "IMG"]),
            between: false,
        },
        Case {
            what: "header-restore over an erased header",
            prepare: |v| {
                let b = v.path("backup");
                expect_code(
                    &v.cs(&["luksHeaderBackup", "--header-backup-file", &b, &v.img]),
                    0,
                    "backup",
                );
                expect_code(&v.cs(&["luksErase", "-q", &v.img]), 0, "erase");
                vec![]
            },
            args: |v| {
                let b = v.path("backup");
                luks_args(v, &["header-restore", "--header-backup-file", &b, "IMG"])
            },
            between: false,
        },
        Case {
            what: "header-restore over other keyslots in the same area",
            prepare: |v| {
                let b = v.path("backup");
                expect_code(
                    &v.cs(&["luksHeaderBackup", "--header-backup-file", &b, &v.img]),
                    0,
                    "backup",
                );
                let (pw2, pw3) = (
                    write(v.dir.path(), "pw2", b"two"),
                    write(v.dir.path(), "pw3", b"three"),
                );
                let add = |new: &str, old: &str| {
                    let a = [
                        &["luksAddKey", "-q"][..],
                        PBKDF2,
                        &["--key-file", old, &v.img, new],
                    ]
                    .concat();
                    expect_code(&v.cs(&a), 0, "luksAddKey");
                };
                add(&pw2, &v.pw);
                expect_code(
                    &v.cs(&["luksKillSlot", "-q", &v.img, "0"]),
                    0,
                    "luksKillSlot",
                );
                // Keyslot 0 again, in the area the backup's keyslot 0 has.
                add(&pw3, &pw2);
                vec![pw2, pw3]
            },
            args: |v| {
                let b = v.path("backup");
                luks_args(v, &["header-restore", "--header-backup-file", &b, "IMG"])
            },
            between: true,
        },
        Case {
            what: "repair of a damaged primary",
            prepare: |v| {
                use std::os::unix::fs::FileExt;
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&v.img)
                    .unwrap();
                f.write_all_at(&[0xa5; 32], 4200).unwrap();
                vec![]
            },
            args: |v| luks_args(v, &["repair", "IMG"]),
            between: false,
        },
    ]
}

#[test]
fn a_kill_at_any_header_write_leaves_the_old_or_the_new_header() {
    let test = "luks::header_crash::a_kill_at_any_header_write_leaves_the_old_or_the_new_header";
    if !have_tool("cryptsetup", test) || !have_tool("strace", test) {
        return;
    }
    if emulated() {
        eprintln!(
            "SKIPPED: {test}: the crash sweep runs on the host only (not under the emulator)"
        );
        return;
    }
    let mut report = Vec::new();
    let mut total = 0;
    for case in cases() {
        let v = Img::new();
        let mut pws = vec![v.pw.clone()];
        pws.extend((case.prepare)(&v));
        let pws: Vec<&str> = pws.iter().map(String::as_str).collect();
        let orig = std::fs::read(&v.img).unwrap();
        let old = state(&v, &pws);
        let mut argv = common::mdu_argv();
        argv.push("luks".into());
        argv.extend((case.args)(&v));
        let done = run(Command::new(&argv[0]).args(&argv[1..]));
        expect_code(&done, 0, case.what);
        let new = state(&v, &pws);
        // A repair changes no metadata: old and new read the same.
        if !case.what.starts_with("repair") {
            assert_ne!(old, new, "{}: changed nothing", case.what);
        }
        let (mut points, mut between) = (0, 0);
        for syscall in ["pwrite64", "fdatasync"] {
            let sweep = common::KillSweep {
                first: 1,
                stride: 1,
                tail: 0,
            };
            points += sweep.run(test, &format!("{}, {syscall}", case.what), |n| {
                std::fs::write(&v.img, &orig).unwrap();
                if !killed_on(syscall, n, &argv) {
                    return false;
                }
                let got = state(&v, &pws);
                let opens = got.lines().any(|l| l.ends_with(": true"));
                assert!(
                    got == old || got == new || (case.between && opens),
                    "{}: killed at {syscall} {n}: neither the old nor the new header:\n{got}",
                    case.what
                );
                between += usize::from(got != old && got != new);
                true
            });
        }
        report.push(match between {
            0 => format!("{}: {points}", case.what),
            b => format!(
                "{}: {points} ({b} between, a passphrase opening)",
                case.what
            ),
        });
        total += points;
    }
    eprintln!(
        "{test}: {total} kill points, each left a header both tools load and agree on (old, new, or between with a passphrase opening): {}",
        report.join("; ")
    );
}
