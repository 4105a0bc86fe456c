//! Runs killed or interrupted by a signal leave no temporary file and no
//! partial output; a repair killed half way is mended by a second one.

use super::*;

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
