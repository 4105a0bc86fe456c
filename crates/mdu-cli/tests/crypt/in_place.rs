//! `--in-place`: the same bytes as out of place, refusals that leave the file
//! unchanged, runs killed at any sync point, damaged or foreign journals and
//! a second run on one image.

use super::*;

/// The crash sweep of `--in-place` is short (a few seconds): it kills at
/// every sync point, sampled or not.
const SWEEP: KillSweep = KillSweep::every(1);

/// In-place runs, with and without `--offset`, across several chunks (one
/// and two threads, so chunks of 1 and 2 MiB): encrypt gives the bytes of
/// the out-of-place run, and decrypt in place gives back the original, in
/// the same inode. With `--offset`, encrypt moves the data up (processed
/// back to front) and decrypt moves it down; an offset larger than a chunk
/// makes every chunk's destination overlap input that an unsafe order would
/// already have overwritten.
#[test]
fn in_place_equals_out_of_place_and_decrypts_back() {
    use std::os::unix::fs::MetadataExt;

    let mut rng = Rng::new("in_place_equals_out_of_place_and_decrypts_back");
    let dir = scratch();
    let d = dir.path();
    let key64 = d.join("key");
    std::fs::write(&key64, rng.bytes(64)).unwrap();
    let key32 = d.join("key32");
    std::fs::write(&key32, rng.bytes(32)).unwrap();
    // 3 MiB and three 4 KiB sectors: the last chunk is a partial one.
    let original = rng.bytes((3 << 20) + 3 * 4096);
    let plain = d.join("plain");
    std::fs::write(&plain, &original).unwrap();
    let (want, work, back) = (d.join("want"), d.join("work"), d.join("back"));

    for (cipher, ss, offset, threads) in [
        ("aes-xts-plain64", "512", "0", "1"),
        ("aes-cbc-essiv:sha256", "512", "0", "2"),
        ("aes-xts-plain64", "4096", "8", "1"),
        ("aes-xts-essiv:sha256", "512", "7", "2"),
        // 2.5 MiB: more than one chunk of either size.
        ("aes-xts-plain64", "512", "5120", "1"),
        ("aes-xts-benbi", "4096", "5120", "2"),
    ] {
        let what = format!("{cipher} --sector-size {ss} --offset {offset} --threads {threads}");
        let key = if cipher.starts_with("aes-cbc") {
            &key32
        } else {
            &key64
        };
        let args = [
            "--cipher",
            cipher,
            "--sector-size",
            ss,
            "--offset",
            offset,
            "--threads",
            threads,
        ];
        let run_ok = |op: &str, extra: &[&str], from: &Path, to: &Path| {
            let mut cmd = mdu();
            cmd.args(["crypt", op, "--key-file"])
                .arg(key)
                .args(args)
                .args(extra)
                .arg(from)
                .arg(to);
            expect_code(&run(&mut cmd), 0, &format!("{op} {extra:?} {what}"));
        };
        run_ok("encrypt", &[], &plain, &want);
        std::fs::write(&work, &original).unwrap();
        let ino = std::fs::metadata(&work).unwrap().ino();

        let journal = d.join("journal");
        let journal = journal.to_str().unwrap();
        run_ok(
            "encrypt",
            &["--in-place", "--journal", journal],
            &work,
            &work,
        );
        assert!(!Path::new(journal).exists(), "the journal stays: {what}");
        let got = std::fs::read(&work).unwrap();
        assert!(
            got == std::fs::read(&want).unwrap(),
            "in-place encrypt differs from out-of-place: {what}"
        );
        assert_eq!(std::fs::metadata(&work).unwrap().ino(), ino, "{what}");

        run_ok(
            "decrypt",
            &["--in-place", "--journal", journal],
            &work,
            &work,
        );
        assert!(
            std::fs::read(&work).unwrap() == original,
            "in-place decrypt does not give the original back: {what}"
        );
        assert_eq!(std::fs::metadata(&work).unwrap().ino(), ino, "{what}");

        run_ok("decrypt", &[], &want, &back);
        assert!(
            std::fs::read(&back).unwrap() == original,
            "out-of-place decrypt: {what}"
        );
    }
}

#[test]
fn in_place_refusals_leave_the_file_unchanged() {
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, (0..64u8).collect::<Vec<_>>()).unwrap();
    let file = d.join("img");
    let data = vec![5u8; 4 * 512];
    std::fs::write(&file, &data).unwrap();
    let before = entries(d);
    for (op, args, why) in [
        ("decrypt", &["--offset", "5"][..], "ends before --offset 5"),
        (
            "encrypt",
            &["--sector-size", "4096"],
            "whole number of 4096-byte sectors",
        ),
        ("encrypt", &["--cipher", "aes-xts-lmk"], "unknown IV mode"),
        ("encrypt", &["--cipher", "aes-cbc-lmk"], "unknown IV mode"),
    ] {
        let mut cmd = mdu();
        cmd.args(["crypt", op, "--key-file"]).arg(&key);
        if !args.contains(&"--cipher") {
            cmd.args(["--cipher", "aes-xts-plain64"]);
        }
        cmd.args(args)
            .arg(&file)
            .arg(&file)
            .arg("--in-place")
            .arg("--journal")
            .arg(d.join("journal"));
        let res = run(&mut cmd);
        expect_code(&res, 2, why);
        let err = String::from_utf8_lossy(&res.stderr);
        assert!(err.contains(why), "{why}: {err}");
        assert_eq!(std::fs::read(&file).unwrap(), data, "{why}");
        assert_eq!(entries(d), before, "{why}");
    }
}

/// `--in-place` killed (SIGKILL, by strace's fault injection) at each of
/// its sync points and run again with `--resume` ends with the bytes an
/// out-of-place run writes; a resume with another key is refused.
#[test]
fn in_place_runs_killed_at_any_sync_point_resume_to_the_same_bytes() {
    let test = "crypt::in_place::in_place_runs_killed_at_any_sync_point_resume_to_the_same_bytes";
    if !have_tool("strace", test) {
        return;
    }
    if std::env::var("MDU_EMULATED").is_ok_and(|v| v == "1") {
        eprintln!(
            "SKIPPED: {test}: the crash sweep runs on the host only (not under the emulator)"
        );
        return;
    }
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(64)).unwrap();
    let plain = d.join("plain");
    std::fs::write(&plain, rng.bytes(3 << 20)).unwrap();
    let (src, want, work, journal) = (d.join("src"), d.join("want"), d.join("w"), d.join("j"));
    let crypt = |op: &str, extra: &[&str]| {
        let mut c = mdu();
        c.args(["crypt", op, "--threads", "1", "--key-file"])
            .arg(&key)
            .args(extra);
        c
    };
    let mut points = 0;
    for (op, extra) in [
        ("encrypt", &["--offset", "2048"][..]),
        ("decrypt", &["--offset", "2048"][..]),
        ("encrypt", &[][..]),
    ] {
        // The input of the run and what an out-of-place run makes of it.
        if op == "encrypt" {
            std::fs::copy(&plain, &src).unwrap();
        } else {
            expect_code(
                &run(crypt("encrypt", extra).arg(&plain).arg(&src)),
                0,
                "source",
            );
        }
        let _ = std::fs::remove_file(&want);
        expect_code(
            &run(crypt(op, extra).arg(&src).arg(&want)),
            0,
            "out of place",
        );
        let want = std::fs::read(&want).unwrap();
        points += SWEEP.run(test, &format!("{op} {extra:?}"), |n| {
            std::fs::copy(&src, &work).unwrap();
            let _ = std::fs::remove_file(&journal);
            let mut argv = common::mdu_argv();
            argv.extend(["crypt", op, "--threads", "1", "--key-file"].map(str::to_owned));
            argv.push(key.to_str().unwrap().to_owned());
            argv.extend(extra.iter().map(|s| s.to_string()));
            argv.extend(["--in-place", "--journal"].map(str::to_owned));
            for p in [&journal, &work, &work] {
                argv.push(p.to_str().unwrap().to_owned());
            }
            let out = common::killed_at_sync(n, &argv);
            if out.status.code() == Some(0) {
                return false;
            }
            if !journal.exists() {
                // Killed before the journal was in place: nothing began.
                assert!(
                    std::fs::read(&work).unwrap() == std::fs::read(&src).unwrap(),
                    "{op} {extra:?}: killed at sync {n} before its journal existed, IN changed"
                );
                let left = common::entries(d);
                assert!(
                    left.iter().all(|e| !e.contains("mdu")),
                    "{op} {extra:?}: killed at sync {n}: left behind: {left:?}"
                );
                return true;
            }
            {
                let r = run(crypt(op, extra)
                    .args(["--in-place", "--resume", "--journal"])
                    .arg(&journal)
                    .arg(&work)
                    .arg(&work));
                expect_code(&r, 0, &format!("{op} {extra:?}: resume after kill {n}"));
            }
            assert!(
                !journal.exists(),
                "{op} {extra:?} kill {n}: the journal stays"
            );
            assert!(
                std::fs::read(&work).unwrap() == want,
                "{op} {extra:?}: killed at sync {n} and resumed, the bytes differ"
            );
            true
        });
    }
    assert!(points > 20, "only {points} kill points");
    // A journal binds its run: another key is refused, nothing changes.
    std::fs::copy(&plain, &work).unwrap();
    let _ = std::fs::remove_file(&journal);
    let mut argv = common::mdu_argv();
    argv.extend(["crypt", "encrypt", "--threads", "1", "--key-file"].map(str::to_owned));
    argv.push(key.to_str().unwrap().to_owned());
    argv.extend(["--in-place", "--journal"].map(str::to_owned));
    for p in [&journal, &work, &work] {
        argv.push(p.to_str().unwrap().to_owned());
    }
    let _ = common::killed_at_sync(4, &argv);
    let other = d.join("other");
    std::fs::write(&other, rng.bytes(64)).unwrap();
    let before = std::fs::read(&work).unwrap();
    let r = run(mdu()
        .args(["crypt", "encrypt", "--threads", "1", "--key-file"])
        .arg(&other)
        .args(["--in-place", "--resume", "--journal"])
        .arg(&journal)
        .arg(&work)
        .arg(&work));
    expect_code(&r, 2, "a resume with another key");
    assert!(String::from_utf8_lossy(&r.stderr).contains("another cipher, key"));
    assert!(
        std::fs::read(&work).unwrap() == before,
        "a refused resume wrote"
    );
}

/// The argv of `mdu crypt OP --in-place` over `work` with `journal`.
fn in_place_argv(op: &str, key: &Path, extra: &[&str], journal: &Path, work: &Path) -> Vec<String> {
    let mut argv = common::mdu_argv();
    argv.extend(["crypt", op, "--threads", "1", "--key-file"].map(str::to_owned));
    argv.push(key.to_str().unwrap().to_owned());
    argv.extend(extra.iter().map(|s| s.to_string()));
    argv.extend(["--in-place", "--journal"].map(str::to_owned));
    for p in [journal, work, work] {
        argv.push(p.to_str().unwrap().to_owned());
    }
    argv
}

/// The journal `j` with the record slot of the newest record (or both)
/// zeroed.
fn zero_slots(j: &[u8], both: bool) -> Vec<u8> {
    let mut j = j.to_vec();
    let seq = |i: usize| {
        let at = 4096 * (1 + i);
        (j.len() >= at + 16 && &j[at..at + 8] == b"MDUREC02")
            .then(|| u64::from_le_bytes(j[at + 8..at + 16].try_into().unwrap()))
    };
    let newest = if seq(0) > seq(1) { 0 } else { 1 };
    for i in 0..2 {
        if both || i == newest {
            let at = 4096 * (1 + i);
            let end = (at + 4096).min(j.len());
            if at < end {
                j[at..end].fill(0);
            }
        }
    }
    j
}

/// A resume of `crypt --in-place` never trusts a damaged or foreign
/// journal: runs killed at every sync point of three chunks, their
/// journals truncated, with a byte flipped in each part, with the newest or
/// both record slots zeroed, or given with another image of the same size
/// and key, either resume to exactly the bytes of an out-of-place run or
/// are refused (exit 1) with the image as the kill left it. No chunk is
/// converted twice, nothing of one image is written into another. Each
/// damage is tried at every other sync point unless `MDU_EXHAUSTIVE=1`.
#[test]
fn damaged_or_foreign_journals_are_refused_never_trusted() {
    let test = "crypt::in_place::damaged_or_foreign_journals_are_refused_never_trusted";
    if !have_tool("strace", test) {
        return;
    }
    if std::env::var("MDU_EMULATED").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED: {test}: the crash sweep runs on the host only");
        return;
    }
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(64)).unwrap();
    // Three chunks of 1 MiB (one thread).
    let (plain, plain_b) = (d.join("plain"), d.join("plain_b"));
    std::fs::write(&plain, rng.bytes(3 << 20)).unwrap();
    std::fs::write(&plain_b, rng.bytes(3 << 20)).unwrap();
    let (src, src_b, want) = (d.join("src"), d.join("src_b"), d.join("want"));
    let (work, journal) = (d.join("w"), d.join("j"));
    let crypt = |op: &str, extra: &[&str]| {
        let mut c = mdu();
        c.args(["crypt", op, "--threads", "1", "--key-file"])
            .arg(&key)
            .args(extra);
        c
    };
    let resume = |op: &str, extra: &[&str], image: &Path| {
        run(crypt(op, extra)
            .args(["--in-place", "--resume", "--journal"])
            .arg(&journal)
            .arg(image)
            .arg(image))
    };
    let (mut cases, mut resumed, mut refused, mut foreign_refused) = (0, 0, 0, 0);
    let (all, mut skipped) = (common::exhaustive(), 0);
    for (op, extra) in [
        ("encrypt", &[][..]),
        ("encrypt", &["--offset", "2048"][..]),
        ("decrypt", &["--offset", "2048"][..]),
    ] {
        if op == "encrypt" {
            std::fs::copy(&plain, &src).unwrap();
            std::fs::copy(&plain_b, &src_b).unwrap();
        } else {
            for (p, s) in [(&plain, &src), (&plain_b, &src_b)] {
                let _ = std::fs::remove_file(s);
                expect_code(&run(crypt("encrypt", extra).arg(p).arg(s)), 0, "source");
            }
        }
        let _ = std::fs::remove_file(&want);
        expect_code(
            &run(crypt(op, extra).arg(&src).arg(&want)),
            0,
            "out of place",
        );
        let want = std::fs::read(&want).unwrap();
        let argv = in_place_argv(op, &key, extra, &journal, &work);
        // Syncs 2..=7: the record and the data of each of the three chunks.
        for n in 2..=7 {
            std::fs::copy(&src, &work).unwrap();
            let _ = std::fs::remove_file(&journal);
            assert_ne!(common::killed_at_sync(n, &argv).status.code(), Some(0));
            let killed = std::fs::read(&work).unwrap();
            let j = std::fs::read(&journal).unwrap();
            let chunk = 1usize << 20;
            let mut damaged: Vec<(String, Vec<u8>)> = vec![("intact".into(), j.clone())];
            for cut in [
                0,
                4000,
                4096 + 100,
                8192 + 100,
                12288,
                12288 + 1000,
                j.len() - 1,
            ] {
                damaged.push((format!("cut to {cut}"), j[..cut.min(j.len())].to_vec()));
            }
            for at in [100, 4096 + 70, 8192 + 70, 12288 + 10, 12288 + chunk + 10] {
                if at < j.len() {
                    let mut x = j.clone();
                    x[at] ^= 0x40;
                    damaged.push((format!("byte {at} flipped"), x));
                }
            }
            damaged.push(("newest slot zeroed".into(), zero_slots(&j, false)));
            damaged.push(("both slots zeroed".into(), zero_slots(&j, true)));
            for (k, (what, bytes)) in damaged.into_iter().enumerate() {
                // Each damage at every other sync point (alternating), the
                // intact journal at each; MDU_EXHAUSTIVE=1: each at each.
                if !all && k > 0 && (k + n) % 2 == 1 {
                    skipped += 1;
                    continue;
                }
                cases += 1;
                std::fs::write(&work, &killed).unwrap();
                std::fs::write(&journal, &bytes).unwrap();
                let r = resume(op, extra, &work);
                let now = std::fs::read(&work).unwrap();
                if r.status.code() == Some(0) {
                    assert!(
                        now == want,
                        "{op} {extra:?}, killed at sync {n}, journal {what}: resumed with exit 0 to wrong bytes"
                    );
                    resumed += 1;
                } else {
                    expect_code(&r, 1, &format!("{op} {extra:?} sync {n} journal {what}"));
                    assert!(
                        now == killed,
                        "{op} {extra:?}, killed at sync {n}, journal {what}: refused but wrote"
                    );
                    assert!(
                        what != "intact",
                        "{op} {extra:?} sync {n}: an intact journal was refused"
                    );
                    refused += 1;
                }
            }
            // The intact journal with another image of the same size, key
            // and options: refused, that image untouched.
            cases += 1;
            std::fs::write(&journal, &j).unwrap();
            let other = d.join("other");
            std::fs::copy(&src_b, &other).unwrap();
            let before = std::fs::read(&other).unwrap();
            let r = resume(op, extra, &other);
            assert_ne!(
                r.status.code(),
                Some(0),
                "{op} {extra:?} sync {n}: a foreign journal was resumed"
            );
            assert!(
                std::fs::read(&other).unwrap() == before,
                "{op} {extra:?} sync {n}: a foreign journal wrote into another image"
            );
            foreign_refused += 1;
        }
    }
    eprintln!(
        "{test}: {cases} resumes of damaged or foreign journals: {resumed} finished to the right bytes, \
         {refused} damaged refused, {foreign_refused} foreign refused, 0 wrong"
    );
    if skipped > 0 {
        println!(
            "{test}: sampled: {cases} of {} resumes (each damage at every other kill point); \
             MDU_EXHAUSTIVE=1 runs all",
            cases + skipped
        );
    }
}

/// Two runs on one image exclude each other: a second `--in-place` run, or
/// a second `--resume` of the same journal, started while the first goes
/// on is refused with exit 5 naming the first, and the first ends with the
/// right bytes.
#[test]
fn a_second_in_place_run_on_one_image_is_refused_while_the_first_goes_on() {
    let test =
        "crypt::in_place::a_second_in_place_run_on_one_image_is_refused_while_the_first_goes_on";
    if std::env::var("MDU_EMULATED").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED: {test}: locks are the host's; it runs on the host only");
        return;
    }
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(64)).unwrap();
    let plain = d.join("plain");
    std::fs::write(&plain, rng.bytes(96 << 20)).unwrap();
    let want = d.join("want");
    expect_code(
        &run(mdu()
            .args(["crypt", "encrypt", "--threads", "1", "--key-file"])
            .arg(&key)
            .arg(&plain)
            .arg(&want)),
        0,
        "out of place",
    );
    let want = std::fs::read(&want).unwrap();
    let (work, journal, journal2) = (d.join("w"), d.join("j"), d.join("j2"));
    for second_resumes in [false, true] {
        if second_resumes && !have_tool("strace", test) {
            continue;
        }
        std::fs::copy(&plain, &work).unwrap();
        let _ = std::fs::remove_file(&journal);
        let _ = std::fs::remove_file(&journal2);
        let mut argv = in_place_argv("encrypt", &key, &[], &journal, &work);
        if second_resumes {
            // The first run is itself a resume of a run killed early.
            let _ = common::killed_at_sync(3, &argv);
            assert!(journal.exists());
            argv.insert(argv.len() - 2, "--resume".into());
        }
        let mut first = Command::new(&argv[0]);
        first.args(&argv[1..]);
        let first = first
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(150));
        let second_journal = if second_resumes { &journal } else { &journal2 };
        let mut second = mdu();
        second
            .args(["crypt", "encrypt", "--threads", "1", "--key-file"])
            .arg(&key)
            .args(["--in-place", "--journal"])
            .arg(second_journal);
        if second_resumes {
            second.arg("--resume");
        }
        let r = run(second.arg(&work).arg(&work));
        let out = first.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "the first run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        expect_code(&r, 5, "a second run on the same image");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains("busy") && err.contains("process"), "{err}");
        assert!(
            std::fs::read(&work).unwrap() == want,
            "the first run's result is wrong"
        );
        assert!(!journal2.exists(), "the refused run left a journal");
    }
}
