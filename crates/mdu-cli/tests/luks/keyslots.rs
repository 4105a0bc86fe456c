//! The keyslot verbs (`add-key`, `change-key`, `convert-key`, `kill-slot`,
//! `remove-key`) against cryptsetup 2.6: each verb run by mdu is read by
//! cryptsetup and each run by cryptsetup by mdu, alternating on one image;
//! mdu places keyslots where cryptsetup does; a kill (or an I/O error) at
//! any write or sync of each verb leaves an image both tools open with the
//! old keyslots or the new ones; and the refusals write nothing.

use std::fs::File;

use mdu_luks2::Image;

use crate::common::KillSweep;

use super::*;

/// A scratch directory with passphrase files `p0`, `p1`, ... and an
/// image made by `cryptsetup luksFormat` with `p0` in keyslot 0.
struct Fixture {
    dir: tempfile::TempDir,
    img: String,
    pass: Vec<String>,
}

impl Fixture {
    /// `extra`: luksFormat options (an offset, a key size); `len`: the
    /// image's length.
    fn new(test: &str, extra: &[&str], len: u64) -> Fixture {
        let mut rng = Rng::new(test);
        let dir = scratch();
        let pass = (0..10)
            .map(|i| {
                let len = 1 + rng.below(40) as usize;
                write(dir.path(), &format!("p{i}"), &rng.bytes(len))
            })
            .collect::<Vec<_>>();
        let img = dir.path().join("img").to_str().unwrap().to_owned();
        let f = File::create(&img).unwrap();
        f.set_len(len).unwrap();
        let out = cryptsetup(
            dir.path(),
            &[
                &[
                    "luksFormat",
                    "-q",
                    "--type",
                    "luks2",
                    "--key-file",
                    &pass[0],
                ][..],
                PBKDF2,
                extra,
                &[&img],
            ]
            .concat(),
        );
        expect_code(&out, 0, "luksFormat");
        Fixture { dir, img, pass }
    }

    fn cs(&self, args: &[&str]) -> Output {
        cryptsetup(self.dir.path(), args)
    }

    /// A copy of the image.
    fn copy(&self, name: &str) -> String {
        let p = self.dir.path().join(name).to_str().unwrap().to_owned();
        std::fs::copy(&self.img, &p).unwrap();
        p
    }
}

/// An image with the default 16 MiB header and one sector of data.
const FULL: u64 = (16 << 20) + 4096;

fn luks(args: &[&str]) -> Output {
    run(mdu().arg("luks").args(args))
}

/// Whether cryptsetup opens `img` with the passphrase in `key` (through
/// keyslot `slot` only, if given).
fn cs_opens(dir: &Path, img: &str, key: &str, slot: Option<u32>) -> bool {
    let slot = slot.map(|s| s.to_string());
    let mut args = vec!["open", "--test-passphrase", "--key-file", key];
    if let Some(s) = &slot {
        args.extend(["--key-slot", s]);
    }
    args.push(img);
    let out = cryptsetup(dir, &args);
    match out.status.code() {
        Some(0) => true,
        Some(1 | 2) => false,
        _ => panic!(
            "cryptsetup open --test-passphrase {img}: {:?}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// The keyslot that opens `img` with the passphrase in `key`, as the
/// library sees it (`Image::load`, then any keyslot, bound or not).
fn mdu_opens(img: &str, key: &str) -> Option<u32> {
    let f = File::open(img).unwrap();
    let image = Image::load(&f).unwrap_or_else(|e| panic!("{img} does not load in mdu: {e}"));
    let pass = std::fs::read(key).unwrap();
    match image.unlock_any(&f, None, &pass) {
        Ok(k) => Some(k.slot),
        Err(e) if e.is_wrong_passphrase() || matches!(e, mdu_luks2::Error::NoKeyslot) => None,
        Err(e) => panic!("{img}: {e}"),
    }
}

/// cryptsetup's luksDump with what differs between two runs of the same
/// change taken out: salts, digests and the sequence id.
fn dump_shape(dir: &Path, img: &str) -> String {
    let out = cryptsetup(dir, &["luksDump", img]);
    expect_code(&out, 0, "luksDump");
    let hex_only = |l: &str| {
        l.split_whitespace()
            .all(|w| w.len() == 2 && w.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    stdout(&out)
        .lines()
        .filter(|l| {
            !(l.starts_with("Epoch:")
                || l.contains("Salt:")
                || l.contains("Digest:")
                || hex_only(l))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// mdu's dump is cryptsetup's, byte for byte.
fn same_dump(fx: &Fixture, img: &str, what: &str) {
    let ours = luks(&["dump", img]);
    expect_code(&ours, 0, what);
    assert_eq!(
        stdout(&ours),
        stdout(&fx.cs(&["luksDump", img])),
        "{what}: mdu dump differs from luksDump"
    );
}

#[test]
fn each_verb_of_either_tool_is_honoured_by_the_other() {
    let test = "luks::keyslots::each_verb_of_either_tool_is_honoured_by_the_other";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let fx = Fixture::new(test, &[], FULL);
    let (img, p, dir) = (fx.img.as_str(), &fx.pass, fx.dir.path());
    let ok = |out: Output, what: &str| expect_code(&out, 0, what);
    // mdu adds, cryptsetup opens keyslot 1 with it.
    ok(
        luks(&[&["add-key", "--key-file", &p[0]][..], PBKDF2, &[img, &p[1]]].concat()),
        "mdu add-key",
    );
    assert!(cs_opens(dir, img, &p[1], Some(1)));
    same_dump(&fx, img, "after mdu add-key");
    // cryptsetup adds at 2, mdu opens it.
    ok(
        fx.cs(&[
            &["luksAddKey", "-q", "--key-file", &p[1]][..],
            PBKDF2,
            &[img, &p[2]],
        ]
        .concat()),
        "luksAddKey",
    );
    assert_eq!(mdu_opens(img, &p[2]), Some(2));
    // mdu adds an unbound keyslot at 7: cryptsetup opens it as unbound.
    ok(
        luks(
            &[
                &["add-key", "--unbound", "--key-size", "256", "-S", "7"][..],
                PBKDF2,
                &[img, &p[3]],
            ]
            .concat(),
        ),
        "mdu add-key --unbound",
    );
    assert!(stdout(&fx.cs(&["luksDump", img])).contains("  7: luks2 (unbound)"));
    let t = fx.cs(&[
        "open",
        "--test-passphrase",
        "--unbound",
        "-S",
        "7",
        "--key-file",
        &p[3],
        img,
    ]);
    ok(t, "cryptsetup opens the unbound keyslot");
    assert!(
        !cs_opens(dir, img, &p[3], None),
        "an unbound key opens no data"
    );
    // mdu changes keyslot 2, whose priority (prefer) stays.
    ok(
        fx.cs(&["config", "--priority", "prefer", "-S", "2", img]),
        "config",
    );
    ok(
        luks(
            &[
                &["change-key", "--key-file", &p[2]][..],
                PBKDF2,
                &[img, &p[4]],
            ]
            .concat(),
        ),
        "mdu change-key",
    );
    assert!(cs_opens(dir, img, &p[4], Some(2)));
    assert!(!cs_opens(dir, img, &p[2], None));
    let dump = stdout(&fx.cs(&["luksDump", img]));
    let slot2 = &dump[dump.find("  2: luks2").unwrap()..];
    assert!(
        slot2.lines().nth(2).unwrap().contains("preferred"),
        "{dump}"
    );
    same_dump(&fx, img, "after mdu change-key");
    // cryptsetup changes it again, mdu follows.
    ok(
        fx.cs(&[
            &["luksChangeKey", "-q", "--key-file", &p[4]][..],
            PBKDF2,
            &[img, &p[5]],
        ]
        .concat()),
        "luksChangeKey",
    );
    assert_eq!(mdu_opens(img, &p[5]), Some(2));
    assert_eq!(mdu_opens(img, &p[4]), None);
    // mdu converts keyslot 1 to Argon2id, cryptsetup keyslot 2 to Argon2i.
    ok(
        luks(&[&["convert-key", "--key-file", &p[1]][..], ARGON2ID, &[img]].concat()),
        "mdu convert-key",
    );
    assert!(cs_opens(dir, img, &p[1], Some(1)));
    ok(
        fx.cs(&[
            &["luksConvertKey", "-q", "--key-file", &p[5]][..],
            ARGON2I,
            &[img],
        ]
        .concat()),
        "luksConvertKey",
    );
    assert_eq!(mdu_opens(img, &p[5]), Some(2));
    let f = File::open(img).unwrap();
    let m = Image::load(&f).unwrap().metadata;
    assert_eq!(
        (m.keyslots[&1].kdf.name(), m.keyslots[&2].kdf.name()),
        ("argon2id", "argon2i")
    );
    same_dump(&fx, img, "after the conversions");
    // mdu kills the unbound keyslot (its digest goes with it), cryptsetup
    // keyslot 1.
    ok(
        luks(&["kill-slot", "--key-file", &p[0], img, "7"]),
        "mdu kill-slot",
    );
    let dump = stdout(&fx.cs(&["luksDump", img]));
    assert!(
        !dump.contains("  7: luks2") && !dump.contains("  1: pbkdf2"),
        "{dump}"
    );
    ok(
        fx.cs(&["luksKillSlot", "-q", "--key-file", &p[0], img, "1"]),
        "luksKillSlot",
    );
    assert_eq!(mdu_opens(img, &p[1]), None);
    // mdu removes keyslot 2 by its passphrase; cryptsetup the last one.
    ok(
        luks(&["remove-key", "--key-file", &p[5], img]),
        "mdu remove-key",
    );
    assert!(!cs_opens(dir, img, &p[5], None));
    let vk = fx.dir.path().join("vk").to_str().unwrap().to_owned();
    let out = fx.cs(&[
        "luksDump",
        "--dump-volume-key",
        "--volume-key-file",
        &vk,
        "-q",
        "--key-file",
        &p[0],
        img,
    ]);
    ok(out, "luksDump --dump-volume-key");
    ok(
        fx.cs(&["luksRemoveKey", "-q", "--key-file", &p[0], img]),
        "luksRemoveKey",
    );
    assert_eq!(mdu_opens(img, &p[0]), None);
    // No keyslot left: mdu adds one from the volume key.
    ok(
        luks(
            &[
                &["add-key", "--volume-key-file", &vk, "--key-size", "512"][..],
                PBKDF2,
                &[img, &p[6]],
            ]
            .concat(),
        ),
        "mdu add-key --volume-key-file",
    );
    assert!(cs_opens(dir, img, &p[6], Some(0)));
    same_dump(&fx, img, "at the end");
}

const S5: &[&str] = &["-S", "5"];

#[test]
fn mdu_places_keyslots_where_cryptsetup_does() {
    let test = "luks::keyslots::mdu_places_keyslots_where_cryptsetup_does";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let fx = Fixture::new(test, &[], FULL);
    let (a, b) = (fx.copy("a"), fx.copy("b"));
    let p = &fx.pass;
    let sha512 = ["--hash", "sha512"];
    let cipher = [
        "--keyslot-cipher",
        "aes-cbc-essiv:sha256",
        "--keyslot-key-size",
        "256",
    ];
    let unbound = ["--unbound", "--key-size", "128"];
    let k = |i: usize| ["--key-file", p[i].as_str()];
    // (mdu verb, cryptsetup verb, options, positional arguments after
    // IMAGE). cryptsetup 2.6 rewrites the keyslot of `luksChangeKey -S N`
    // in place, which mdu never does: it writes the new keyslot where
    // luksChangeKey without -S (and 2.8 with it) does, in the first free
    // area, so that step is held against cryptsetup's run without -S.
    let steps: Vec<(&str, &str, Vec<&str>, Vec<&str>)> = vec![
        (
            "add-key",
            "luksAddKey",
            [&k(0)[..], PBKDF2].concat(),
            vec![&p[1]],
        ),
        (
            "add-key",
            "luksAddKey",
            [&k(0)[..], PBKDF2, &["-S", "5"]].concat(),
            vec![&p[2]],
        ),
        (
            "add-key",
            "luksAddKey",
            [&unbound[..], PBKDF2].concat(),
            vec![&p[3]],
        ),
        (
            "add-key",
            "luksAddKey",
            [&k(1)[..], PBKDF2, &sha512, &cipher].concat(),
            vec![&p[4]],
        ),
        (
            "change-key",
            "luksChangeKey",
            [&k(1)[..], PBKDF2].concat(),
            vec![&p[5]],
        ),
        (
            "convert-key",
            "luksConvertKey",
            [&k(2)[..], ARGON2ID].concat(),
            vec![],
        ),
        ("kill-slot", "luksKillSlot", k(5).to_vec(), vec!["0"]),
        (
            "add-key",
            "luksAddKey",
            [&k(5)[..], PBKDF2].concat(),
            vec![&p[6]],
        ),
        ("remove-key", "luksRemoveKey", k(4).to_vec(), vec![]),
        (
            "change-key",
            "luksChangeKey",
            [&k(2)[..], PBKDF2, &["-S", "5"]].concat(),
            vec![&p[7]],
        ),
        (
            "add-key",
            "luksAddKey",
            [&k(7)[..], PBKDF2, &["-S", "31"]].concat(),
            vec![&p[8]],
        ),
    ];
    for (i, (ours, theirs, opts, tail)) in steps.into_iter().enumerate() {
        let what = format!("step {i}: {ours} {}", opts.join(" "));
        let out = luks(&[&[ours][..], &opts, &[&a], &tail].concat());
        expect_code(&out, 0, &what);
        let cs_opts = match theirs {
            "luksChangeKey" => opts.strip_suffix(S5).unwrap_or(&opts),
            _ => &opts,
        };
        let out = fx.cs(&[&[theirs, "-q"][..], cs_opts, &[&b], &tail].concat());
        expect_code(&out, 0, &format!("cryptsetup {what}"));
        assert_eq!(
            dump_shape(fx.dir.path(), &a),
            dump_shape(fx.dir.path(), &b),
            "{what}: mdu's keyslots differ from cryptsetup's"
        );
    }
}

/// Runs `argv` under strace, `how` injected at the `n`-th call of
/// `syscall` (`signal=KILL` or `error=EIO`); whether it failed (`false`:
/// it ran to the end).
fn faulted(dir: &Path, syscall: &str, how: &str, n: usize, argv: &[String]) -> bool {
    let out = run(Command::new("strace")
        .current_dir(dir)
        .args(["-f", "-qq", "-o", "/dev/null", "-e"])
        .arg(format!("trace={syscall}"))
        .arg(format!("--inject={syscall}:{how}:when={n}"))
        .args(argv));
    out.status.code() != Some(0)
}

#[test]
fn a_kill_at_any_write_leaves_the_old_or_the_new_keyslots() {
    let test = "luks::keyslots::a_kill_at_any_write_leaves_the_old_or_the_new_keyslots";
    if !have_tool("cryptsetup", test) || !have_tool("strace", test) {
        return;
    }
    if emulated() {
        eprintln!(
            "SKIPPED: {test}: the crash sweep runs on the host only (not under the emulator)"
        );
        return;
    }
    // 2 MiB of header: room for 8 keyslots of 512 bits.
    let fx = Fixture::new(test, &["--offset", "4096"], (2 << 20) + 4096);
    let (p, dir) = (&fx.pass, fx.dir.path());
    let out = fx.cs(&[
        &["luksAddKey", "-q", "--key-file", &p[0]][..],
        PBKDF2,
        &[&fx.img, &p[1]],
    ]
    .concat());
    expect_code(&out, 0, "luksAddKey");
    let base = fx.copy("base");
    let img = fx.dir.path().join("k").to_str().unwrap().to_owned();
    // (verb and options, arguments after IMAGE, passphrases that open
    // before, passphrases that open after)
    let (p0, p1, p2) = (p[0].as_str(), p[1].as_str(), p[2].as_str());
    type Case<'a> = [Vec<&'a str>; 4];
    let cases: Vec<Case<'_>> = vec![
        [
            [&["add-key", "--key-file", p0][..], PBKDF2].concat(),
            vec![p2],
            vec![p0, p1],
            vec![p0, p1, p2],
        ],
        [
            [&["change-key", "--key-file", p1][..], PBKDF2].concat(),
            vec![p2],
            vec![p0, p1],
            vec![p0, p2],
        ],
        [
            [&["convert-key", "--key-file", p1][..], ARGON2ID].concat(),
            vec![],
            vec![p0, p1],
            vec![p0, p1],
        ],
        [
            vec!["kill-slot", "--key-file", p0],
            vec!["1"],
            vec![p0, p1],
            vec![p0],
        ],
        [
            vec!["remove-key", "--key-file", p1],
            vec![],
            vec![p0, p1],
            vec![p0],
        ],
        [
            [&["add-key", "--unbound", "--key-size", "256"][..], PBKDF2].concat(),
            vec![p2],
            vec![p0, p1],
            vec![p0, p1],
        ],
    ];
    let (mut kills, mut errors) = (0, 0);
    for [opts, tail, before, after] in &cases {
        let mut argv = common::mdu_argv();
        argv.extend(["luks".to_owned()]);
        argv.extend(opts.iter().map(|s| s.to_string()));
        argv.push(img.clone());
        argv.extend(tail.iter().map(|s| s.to_string()));
        let all = [p0, p1, p2];
        let state = |what: &str| -> Vec<&str> {
            let opens: Vec<&str> = all
                .iter()
                .copied()
                .filter(|&k| {
                    let ours = mdu_opens(&img, k).is_some_and(|s| {
                        let f = File::open(&img).unwrap();
                        !Image::load(&f).unwrap().metadata.keyslot_is_unbound(s)
                    });
                    let theirs = cs_opens(dir, &img, k, None);
                    assert_eq!(ours, theirs, "{what}: mdu and cryptsetup disagree on {k}");
                    ours
                })
                .collect();
            assert!(
                opens == *before || opens == *after,
                "{what}: {opens:?} open, neither the old {before:?} nor the new {after:?}"
            );
            opens
        };
        // A kill before each write and before each sync; a failing write;
        // a failing sync too with MDU_EXHAUSTIVE=1 (the error takes the
        // same way out as a failing write's).
        let faults = [
            ("pwrite64", "signal=KILL"),
            ("fdatasync", "signal=KILL"),
            ("pwrite64", "error=EIO"),
            ("fdatasync", "error=EIO"),
        ];
        let n = if common::exhaustive() { 4 } else { 3 };
        for &(syscall, how) in &faults[..n] {
            let what = format!("{} at a {syscall} ({how})", opts[0]);
            let points = KillSweep {
                first: 1,
                stride: 1,
                tail: 0,
            }
            .run(test, &what, |n| {
                std::fs::copy(&base, &img).unwrap();
                if !faulted(dir, syscall, how, n, &argv) {
                    assert_eq!(state(&format!("{what}: completed")), *after);
                    return false;
                }
                state(&format!("{what} {n}"));
                true
            });
            match how {
                "signal=KILL" => kills += points,
                _ => errors += points,
            }
        }
    }
    println!(
        "{test}: {kills} kill points and {errors} failed writes or syncs, every image opened by \
         both tools with the old or the new keyslots"
    );
    assert!(
        kills >= 40 && errors >= 20,
        "only {kills} kills and {errors} errors: is strace injecting?"
    );
}

#[test]
fn refusals_write_nothing() {
    let test = "luks::keyslots::refusals_write_nothing";
    if !have_tool("cryptsetup", test) {
        return;
    }
    // 1 MiB of header: room for three keyslots of 512 bits.
    let fx = Fixture::new(test, &["--offset", "2048"], (1 << 20) + 4096);
    let (img, p) = (fx.img.as_str(), &fx.pass);
    let unchanged = |out: Output, what: &str, message: &str, before: &[u8]| {
        assert_ne!(out.status.code(), Some(0), "{what} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{what}: {err}");
        assert_eq!(std::fs::read(img).unwrap(), before, "{what} wrote");
    };
    let add = |slot: &str, key: &str, new: &str| {
        luks(
            &[
                &["add-key", "-S", slot, "--key-file", key][..],
                PBKDF2,
                &[img, new],
            ]
            .concat(),
        )
    };
    expect_code(&add("1", &p[0], &p[1]), 0, "add-key 1");
    let before = std::fs::read(img).unwrap();
    for (out, what, message) in [
        (
            add("1", &p[0], &p[2]),
            "a taken --key-slot",
            "keyslot 1 is in use",
        ),
        (add("32", &p[0], &p[2]), "--key-slot 32", "out of range"),
        (
            add("2", &p[9], &p[2]),
            "add-key, a wrong passphrase",
            "passphrase",
        ),
        (
            luks(
                &[
                    &["change-key", "--key-file", &p[9]][..],
                    PBKDF2,
                    &[img, &p[2]],
                ]
                .concat(),
            ),
            "change-key, a wrong passphrase",
            "passphrase",
        ),
        (
            luks(&[&["convert-key", "--key-file", &p[9]][..], PBKDF2, &[img]].concat()),
            "convert-key, a wrong passphrase",
            "passphrase",
        ),
        (
            luks(&["remove-key", "--key-file", &p[9], img]),
            "remove-key, a wrong passphrase",
            "passphrase",
        ),
        (
            luks(&["kill-slot", "--key-file", &p[9], img, "1"]),
            "kill-slot, a wrong passphrase",
            "passphrase",
        ),
        (
            luks(&["kill-slot", "--key-file", &p[0], img, "4"]),
            "kill-slot of no keyslot",
            "not active",
        ),
        (
            luks(
                &[
                    &["add-key", "--volume-key-file", &p[9], "--key-size", "512"][..],
                    PBKDF2,
                    &[img, &p[2]],
                ]
                .concat(),
            ),
            "a volume key file of another size",
            "64 bytes",
        ),
    ] {
        unchanged(out, what, message, &before);
    }
    // The third keyslot fills the area: no room for a fourth, nor for the
    // new keyslot of a change (never written in place).
    expect_code(&add("2", &p[0], &p[2]), 0, "add-key 2");
    let before = std::fs::read(img).unwrap();
    unchanged(
        add("3", &p[0], &p[3]),
        "a full keyslots area",
        "no free range",
        &before,
    );
    let out = fx.cs(&[
        &["luksAddKey", "-q", "--key-file", &p[0]][..],
        PBKDF2,
        &[img, &p[3]],
    ]
    .concat());
    assert_ne!(
        out.status.code(),
        Some(0),
        "cryptsetup finds no room either"
    );
    assert_eq!(std::fs::read(img).unwrap(), before);
    unchanged(
        luks(
            &[
                &["change-key", "--key-file", &p[1]][..],
                PBKDF2,
                &[img, &p[3]],
            ]
            .concat(),
        ),
        "change-key with no free area",
        "no free range",
        &before,
    );
    // kill-slot without --key-file checks what stdin holds, up to its
    // first newline; nothing there, it removes the keyslot unchecked (as
    // cryptsetup does).
    let kill_piped = |input: &[u8]| {
        let mut child = mdu()
            .args(["luks", "kill-slot", img, "2"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), input).unwrap();
        child.wait_with_output().unwrap()
    };
    unchanged(
        kill_piped(b"not the passphrase\nmore"),
        "kill-slot, a wrong passphrase on stdin",
        "passphrase",
        &before,
    );
    expect_code(&kill_piped(b""), 0, "kill-slot, nothing on stdin");
    assert!(!stdout(&fx.cs(&["luksDump", img])).contains("  2: luks2"));
    // 32 keyslots of 128-bit keys fill the table.
    let fx = Fixture::new(
        test,
        &["--cipher", "aes-cbc-essiv:sha256", "--key-size", "128"],
        FULL,
    );
    let (img, p) = (fx.img.as_str(), &fx.pass);
    for slot in 1..32 {
        let s = slot.to_string();
        let out = luks(
            &[
                &["add-key", "-S", &s, "--key-file", &p[0]][..],
                PBKDF2,
                &[img, &p[1]],
            ]
            .concat(),
        );
        expect_code(&out, 0, &format!("add-key {slot}"));
    }
    let before = std::fs::read(img).unwrap();
    let out = luks(&[&["add-key", "--key-file", &p[0]][..], PBKDF2, &[img, &p[2]]].concat());
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("all 32 keyslots are in use"));
    assert_eq!(
        std::fs::read(img).unwrap(),
        before,
        "a full table: nothing written"
    );
    let out = fx.cs(&[
        &["luksAddKey", "-q", "--key-file", &p[0]][..],
        PBKDF2,
        &[img, &p[2]],
    ]
    .concat());
    assert_ne!(
        out.status.code(),
        Some(0),
        "cryptsetup refuses a 33rd keyslot too"
    );
    assert!(cs_opens(fx.dir.path(), img, &p[1], Some(31)));
}

#[test]
fn cryptsetup_verb_names_are_accepted_beside_the_kebab_case_ones() {
    for (ours, theirs) in [
        ("add-key", "luksAddKey"),
        ("change-key", "luksChangeKey"),
        ("convert-key", "luksConvertKey"),
        ("kill-slot", "luksKillSlot"),
        ("remove-key", "luksRemoveKey"),
    ] {
        let a = luks(&[ours, "--help"]);
        let b = luks(&[theirs, "--help"]);
        expect_code(&a, 0, ours);
        expect_code(&b, 0, theirs);
        assert_eq!(stdout(&a), stdout(&b), "{theirs} is not {ours}");
        assert!(
            stdout(&a).contains(&format!("Usage: mdu luks {ours}")),
            "{}",
            stdout(&a)
        );
    }
}

/// `--new-keyfile-offset` and `--new-keyfile-size` take the new passphrase
/// out of the middle of a file, as cryptsetup's luksAddKey does: both
/// tools then open the image with exactly those bytes, and the same
/// options without a new key file are refused with nothing written.
#[test]
fn the_new_passphrase_is_read_from_its_offset_and_size() {
    let test = "luks::keyslots::the_new_passphrase_is_read_from_its_offset_and_size";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let fx = Fixture::new(test, &[], FULL);
    let dir = fx.dir.path();
    let framed = write(dir, "framed", b"HEADERsecret-in-the-middleTRAILER\n");
    let inner = write(dir, "inner", b"secret-in-the-middle");
    let theirs = fx.copy("theirs");
    let place = ["--new-keyfile-offset", "6", "--new-keyfile-size", "20"];
    let ours = luks(
        &[
            &["add-key", "--key-file", &fx.pass[0]][..],
            PBKDF2,
            &place,
            &[&fx.img, &framed],
        ]
        .concat(),
    );
    expect_code(&ours, 0, "add-key with a framed new key file");
    let cs = fx.cs(&[
        &["luksAddKey", "-q", "--key-file", &fx.pass[0]][..],
        PBKDF2,
        &place,
        &[&theirs, &framed],
    ]
    .concat());
    expect_code(&cs, 0, "cryptsetup luksAddKey with a framed new key file");
    for img in [&fx.img, &theirs] {
        assert!(cs_opens(dir, img, &inner, None), "{img}: the inner bytes");
        assert!(!cs_opens(dir, img, &framed, None), "{img}: the whole file");
        assert_eq!(mdu_opens(img, &inner), Some(1), "{img}");
    }
    let before = std::fs::read(&fx.img).unwrap();
    let refused = luks(
        &[
            &["add-key", "--key-file", &fx.pass[0]][..],
            PBKDF2,
            &place,
            &[&fx.img],
        ]
        .concat(),
    );
    expect_code(&refused, 1, "--new-keyfile-offset without a new key file");
    assert!(std::fs::read(&fx.img).unwrap() == before, "a refusal wrote");
}
