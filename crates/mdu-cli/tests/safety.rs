//! Files a command must never destroy or leave readable: paths that name
//! one file twice, modes of what commands leave, options checked before
//! any change, a new header file never left empty.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{KillSweep, Rng, expect_code, mdu, run, scratch};

const PBKDF2: &[&str] = &["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"];

/// The crash sweeps of this file kill at every third sync point and at each
/// of the last two; `MDU_EXHAUSTIVE=1` kills at every one.
const SWEEP: KillSweep = KillSweep::every(3);

/// `mdu luks encrypt` of `plain` into a new `img` (a cheap PBKDF2 keyslot).
fn luks_encrypt(key: &Path, plain: &Path, img: &Path) {
    expect_code(
        &run(mdu()
            .args(["luks", "encrypt", "--key-file"])
            .arg(key)
            .args(PBKDF2)
            .arg(plain)
            .arg(img)),
        0,
        "luks encrypt",
    );
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// A header, an image, a plaintext or a key file named twice in one
/// command is refused before anything is written (exit 2), so that no
/// command writes a header over its data, a plaintext over its only
/// header, or anything over its key.
#[test]
fn one_file_given_in_two_roles_is_refused_and_kept() {
    let test = "safety::one_file_given_in_two_roles_is_refused_and_kept";
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(24)).unwrap();
    let plain = d.join("plain");
    std::fs::write(&plain, rng.bytes(1 << 20)).unwrap();
    let (img, hdr) = (d.join("img"), d.join("hdr"));
    expect_code(
        &run(mdu()
            .args(["luks", "encrypt", "--key-file"])
            .arg(&key)
            .args(PBKDF2)
            .arg("--header")
            .arg(&hdr)
            .arg(&plain)
            .arg(&img)),
        0,
        "a detached encryption",
    );
    let keep: Vec<(&Path, Vec<u8>)> = [&key, &plain, &img, &hdr]
        .into_iter()
        .map(|p| (p.as_path(), std::fs::read(p).unwrap()))
        .collect();
    let cases: Vec<(&str, Vec<&std::ffi::OsStr>)> = vec![
        // luks format --header X X: the header over the data.
        (
            "format --header X X",
            vec![
                "luks".as_ref(),
                "format".as_ref(),
                "--header".as_ref(),
                img.as_os_str(),
                img.as_os_str(),
            ],
        ),
        // luks encrypt --header I PLAIN I: the header where the image goes.
        (
            "encrypt --header I PLAIN I",
            vec![
                "luks".as_ref(),
                "encrypt".as_ref(),
                "--header".as_ref(),
                img.as_os_str(),
                plain.as_os_str(),
                img.as_os_str(),
            ],
        ),
        // luks decrypt --header H IMG H: the plaintext over the header.
        (
            "decrypt --header H IMG H",
            vec![
                "luks".as_ref(),
                "decrypt".as_ref(),
                "--header".as_ref(),
                hdr.as_os_str(),
                img.as_os_str(),
                hdr.as_os_str(),
            ],
        ),
        // the key file as an output.
        (
            "decrypt --header H IMG KEY",
            vec![
                "luks".as_ref(),
                "decrypt".as_ref(),
                "--header".as_ref(),
                hdr.as_os_str(),
                img.as_os_str(),
                key.as_os_str(),
            ],
        ),
        (
            "encrypt PLAIN KEY",
            vec![
                "luks".as_ref(),
                "encrypt".as_ref(),
                plain.as_os_str(),
                key.as_os_str(),
            ],
        ),
        (
            "crypt encrypt PLAIN KEY",
            vec![
                "crypt".as_ref(),
                "encrypt".as_ref(),
                plain.as_os_str(),
                key.as_os_str(),
            ],
        ),
        (
            "crypt --in-place --journal IN",
            vec![
                "crypt".as_ref(),
                "encrypt".as_ref(),
                "--in-place".as_ref(),
                "--journal".as_ref(),
                plain.as_os_str(),
                plain.as_os_str(),
                plain.as_os_str(),
            ],
        ),
        (
            "reencrypt --key-file IMG",
            vec![
                "luks".as_ref(),
                "reencrypt".as_ref(),
                "--header".as_ref(),
                hdr.as_os_str(),
                key.as_os_str(),
            ],
        ),
    ];
    for (what, args) in cases {
        let mut c = mdu();
        let (verb, rest) = args.split_at(2);
        c.args(verb).arg("--key-file").arg(&key);
        if verb[0] == "luks" && (verb[1] == "format" || verb[1] == "encrypt") {
            c.args(PBKDF2);
        }
        let r = run(c.args(rest));
        expect_code(&r, common::bad_input(verb), what);
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains("are the same file"), "{what}: {err}");
        for (p, bytes) in &keep {
            assert!(
                std::fs::read(p).unwrap() == *bytes,
                "{what}: {} changed",
                p.display()
            );
        }
    }
}

/// What holds keys or plaintext is readable by its owner only: detached
/// headers made by `luks format`, `luks encrypt` and `luks reencrypt
/// --encrypt`, the header a `--decrypt` exports, and the journal of `crypt
/// --in-place` (checked while it exists).
#[test]
fn headers_and_journals_are_readable_by_their_owner_only() {
    let test = "safety::headers_and_journals_are_readable_by_their_owner_only";
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(24)).unwrap();
    let plain = d.join("plain");
    std::fs::write(&plain, rng.bytes(4 << 20)).unwrap();
    let luks = |args: &[&std::ffi::OsStr]| {
        let mut c = mdu();
        c.args(["luks"])
            .args(&args[..1])
            .arg("--key-file")
            .arg(&key)
            .args(PBKDF2)
            .args(&args[1..]);
        run(&mut c)
    };
    let mut table = Vec::new();
    let h1 = d.join("format.hdr");
    let data = d.join("data");
    std::fs::write(&data, vec![0u8; 1 << 20]).unwrap();
    expect_code(
        &luks(&[
            "format".as_ref(),
            "--header".as_ref(),
            h1.as_os_str(),
            data.as_os_str(),
        ]),
        0,
        "format --header",
    );
    table.push(("luks format --header", mode(&h1)));
    let (h2, img2) = (d.join("encrypt.hdr"), d.join("img2"));
    expect_code(
        &luks(&[
            "encrypt".as_ref(),
            "--header".as_ref(),
            h2.as_os_str(),
            plain.as_os_str(),
            img2.as_os_str(),
        ]),
        0,
        "encrypt --header",
    );
    table.push(("luks encrypt --header", mode(&h2)));
    let (h3, work) = (d.join("reenc.hdr"), d.join("work"));
    std::fs::copy(&plain, &work).unwrap();
    expect_code(
        &luks(&[
            "reencrypt".as_ref(),
            "--encrypt".as_ref(),
            "--header".as_ref(),
            h3.as_os_str(),
            work.as_os_str(),
        ]),
        0,
        "reencrypt --encrypt --header",
    );
    table.push(("luks reencrypt --encrypt --header", mode(&h3)));
    // (an exported header needs data at least as long as the header area)
    let big = d.join("big");
    std::fs::write(&big, rng.bytes(20 << 20)).unwrap();
    let img4 = d.join("img4");
    expect_code(
        &luks(&["encrypt".as_ref(), big.as_os_str(), img4.as_os_str()]),
        0,
        "encrypt",
    );
    let h4 = d.join("exported.hdr");
    let r = run(mdu()
        .args(["luks", "reencrypt", "--decrypt", "--key-file"])
        .arg(&key)
        .arg("--header")
        .arg(&h4)
        .arg(&img4));
    expect_code(&r, 0, "reencrypt --decrypt --header (export)");
    if h4.exists() {
        table.push(("luks reencrypt --decrypt --header (exported)", mode(&h4)));
    }
    // The journal, while the run is stopped in its middle.
    let (w, j, xts_key) = (d.join("w"), d.join("j"), d.join("xts.key"));
    std::fs::copy(&plain, &w).unwrap();
    std::fs::write(&xts_key, rng.bytes(64)).unwrap();
    let mut argv = common::mdu_argv();
    argv.extend(["crypt", "encrypt", "--threads", "1", "--key-file"].map(str::to_owned));
    argv.push(xts_key.to_str().unwrap().to_owned());
    argv.extend(["--in-place", "--journal"].map(str::to_owned));
    for p in [&j, &w, &w] {
        argv.push(p.to_str().unwrap().to_owned());
    }
    if common::have_tool("strace", test) {
        // (killed at its first chunk's record: the journal exists)
        let _ = killed_at_sync(3, &argv);
        table.push(("crypt --in-place --journal", mode(&j)));
    }
    for (what, m) in &table {
        eprintln!("{test}: {what}: {m:04o}");
    }
    for (what, m) in table {
        assert_eq!(m, 0o600, "{what} left mode {m:04o}");
    }
}

/// Numeric options out of range are usage errors (exit 2) found before the
/// key derivation or any write: `--hotzone-size` below one block,
/// `--threads` above 1024, an `--offset` past what the file system holds.
#[test]
fn numeric_options_out_of_range_change_nothing() {
    let test = "safety::numeric_options_out_of_range_change_nothing";
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(64)).unwrap();
    let plain = d.join("plain");
    std::fs::write(&plain, rng.bytes(1 << 20)).unwrap();
    let img = d.join("img");
    luks_encrypt(&key, &plain, &img);
    let before = std::fs::read(&img).unwrap();
    for h in ["0", "1", "4095"] {
        let r = run(mdu()
            .args(["luks", "reencrypt", "--key-file"])
            .arg(&key)
            .args(["--hotzone-size", h])
            .arg(&img));
        expect_code(&r, 1, &format!("--hotzone-size {h}"));
        assert!(
            std::fs::read(&img).unwrap() == before,
            "--hotzone-size {h}: the image changed"
        );
    }
    // An offset no file system holds: refused before the key derivation
    // (Argon2 would take seconds), no file left.
    let fx = d.join("fx");
    let started = std::time::Instant::now();
    let r = run(mdu()
        .args(["luks", "format", "--key-file"])
        .arg(&key)
        .args(["--offset", "1099511627776"])
        .arg(&fx));
    expect_code(&r, 1, "luks format --offset 2^40");
    assert!(!fx.exists(), "luks format --offset 2^40 left a file");
    assert!(
        started.elapsed().as_secs() < 5,
        "luks format --offset 2^40 derived a key first"
    );
    for t in ["1025", "100000", "18446744073709551615", "-1"] {
        let out = d.join("out");
        let started = std::time::Instant::now();
        let r = run(mdu()
            .args(["crypt", "encrypt", "--key-file"])
            .arg(&key)
            .args(["--threads", t])
            .arg(&plain)
            .arg(&out));
        expect_code(&r, 2, &format!("--threads {t}"));
        assert!(!out.exists(), "--threads {t}: an output was written");
        assert!(
            started.elapsed().as_secs() < 5,
            "--threads {t}: slow refusal"
        );
        let r = run(mdu()
            .args(["luks", "reencrypt", "--key-file"])
            .arg(&key)
            .args(["--threads", t])
            .arg(&img));
        assert_eq!(r.status.code(), Some(1), "luks reencrypt --threads {t}");
        assert!(
            std::fs::read(&img).unwrap() == before,
            "--threads {t}: the image changed"
        );
    }
}

/// A new detached header left empty by a run killed in its key derivation
/// does not block the same command, which starts the run again; a
/// `--decrypt --header NEW` run killed later is resumed by the same
/// command, as the help says; an interrupted run prints a command that
/// runs as printed.
#[test]
fn the_same_command_again_goes_on_after_a_kill() {
    let test = "safety::the_same_command_again_goes_on_after_a_kill";
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(24)).unwrap();
    let plain = rng.bytes(4 << 20);
    let work = d.join("work");
    std::fs::write(&work, &plain).unwrap();
    let hdr = d.join("new.hdr");
    // What a kill during the key derivation left before: an empty header.
    std::fs::write(&hdr, b"").unwrap();
    let enc = |extra: &[&str]| {
        run(mdu()
            .args(["luks", "reencrypt", "--encrypt", "--key-file"])
            .arg(&key)
            .args(PBKDF2)
            .args(extra)
            .arg("--header")
            .arg(&hdr)
            .arg(&work))
    };
    expect_code(
        &enc(&[]),
        0,
        "reencrypt --encrypt over an empty header file",
    );
    let dec = d.join("dec");
    expect_code(
        &run(mdu()
            .args(["luks", "decrypt", "--key-file"])
            .arg(&key)
            .arg("--header")
            .arg(&hdr)
            .arg(&work)
            .arg(&dec)),
        0,
        "decrypt",
    );
    assert!(std::fs::read(&dec).unwrap() == plain);
    // An exported-header decryption killed at its third sync, then the same
    // command again.
    let img = d.join("img");
    let p = d.join("plain");
    let plain = rng.bytes(20 << 20);
    std::fs::write(&p, &plain).unwrap();
    luks_encrypt(&key, &p, &img);
    let exported = d.join("exported.hdr");
    let argv = |m: &mut std::process::Command| {
        m.args([
            "luks",
            "reencrypt",
            "--decrypt",
            "--hotzone-size",
            "1M",
            "--key-file",
        ])
        .arg(&key)
        .arg("--header")
        .arg(&exported)
        .arg(&img);
    };
    if common::have_tool("strace", test) {
        let mut words = common::mdu_argv();
        let mut probe = std::process::Command::new("x");
        argv(&mut probe);
        words.extend(probe.get_args().map(|a| a.to_string_lossy().into_owned()));
        let _ = killed_at_sync(6, &words);
        let mut again = mdu();
        argv(&mut again);
        expect_code(
            &run(&mut again),
            0,
            "the same --decrypt --header command after a kill",
        );
        assert!(
            std::fs::read(&img).unwrap()[..plain.len()] == plain[..],
            "the decryption is wrong"
        );
    }
}

/// Runs `argv` under strace killed at its `n`-th sync; whether it was
/// killed (rather than ending by itself).
fn killed_at_sync(n: usize, argv: &[String]) -> bool {
    common::killed_at_sync(n, argv).status.code() != Some(0)
}

/// Whether `hay` holds `needle`.
fn holds(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A journal-resilience encryption killed at any sync point and resumed
/// leaves no plaintext of its last hotzone in the detached header, and a
/// key change leaves nothing of the old keyslot: a kill between the final
/// header and its wipe leaves them in ranges the header no longer names,
/// which the resume (`--resume-only`) refills. (Kill points: [`SWEEP`].)
#[test]
fn no_plaintext_or_old_keyslot_is_left_in_the_header_after_any_kill() {
    let test = "safety::no_plaintext_or_old_keyslot_is_left_in_the_header_after_any_kill";
    if !common::have_tool("strace", test) {
        return;
    }
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(24)).unwrap();
    let plain = rng.bytes(4 << 20);
    let tail = plain[plain.len() - 4096..].to_vec();
    let (work, hdr) = (d.join("work"), d.join("hdr"));
    let mut argv = common::mdu_argv();
    argv.extend(
        [
            "luks",
            "reencrypt",
            "--encrypt",
            "--resilience",
            "journal",
            "--hotzone-size",
            "1M",
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
            "--key-file",
        ]
        .map(str::to_owned),
    );
    argv.push(key.to_str().unwrap().to_owned());
    argv.push("--header".into());
    argv.push(hdr.to_str().unwrap().to_owned());
    argv.push(work.to_str().unwrap().to_owned());
    let points = SWEEP.run(test, "encryption", |n| {
        std::fs::write(&work, &plain).unwrap();
        let _ = std::fs::remove_file(&hdr);
        if !killed_at_sync(n, &argv) {
            return false;
        }
        let _ = run(mdu()
            .args(["luks", "reencrypt", "--resume-only", "--key-file"])
            .arg(&key)
            .arg("--header")
            .arg(&hdr)
            .arg(&work));
        if let Ok(h) = std::fs::read(&hdr) {
            assert!(
                !holds(&h, &tail),
                "killed at sync {n} and resumed: the header holds the last hotzone's plaintext"
            );
        }
        true
    });
    assert!(points > 5, "only {points} kill points");
    // A key change: the old keyslot's area ends up zero whatever the kill.
    let img = d.join("img");
    let p = d.join("plain");
    std::fs::write(&p, &plain).unwrap();
    luks_encrypt(&key, &p, &img);
    let orig = std::fs::read(&img).unwrap();
    let json = run(mdu().args(["luks", "dump", "--json"]).arg(&img));
    expect_code(&json, 0, "dump");
    let json = String::from_utf8_lossy(&json.stdout).into_owned();
    // The keyslot area: "area": {... "offset": "N", "size": "M" ...}.
    let field = |name: &str| -> u64 {
        let at = json.find("\"area\"").expect("a keyslot area");
        let rest = &json[at..];
        let f = rest.find(&format!("\"{name}\"")).unwrap();
        let v = &rest[f + name.len() + 2..];
        let v = v.trim_start_matches([':', ' ', '"']);
        v[..v.find(|c: char| !c.is_ascii_digit()).unwrap()]
            .parse()
            .unwrap()
    };
    let (off, size) = (field("offset") as usize, field("size") as usize);
    let old_slot = orig[off..off + size].to_vec();
    assert!(old_slot.iter().any(|&b| b != 0));
    let mut argv = common::mdu_argv();
    argv.extend(
        [
            "luks",
            "reencrypt",
            "--resilience",
            "journal",
            "--hotzone-size",
            "1M",
        ]
        .map(str::to_owned),
    );
    argv.push("--key-file".into());
    argv.push(key.to_str().unwrap().to_owned());
    argv.push(img.to_str().unwrap().to_owned());
    SWEEP.run(test, "key change", |n| {
        std::fs::write(&img, &orig).unwrap();
        let killed = killed_at_sync(n, &argv);
        if n == 1 {
            assert!(killed, "the key change did not start");
        }
        if killed {
            let _ = run(mdu()
                .args(["luks", "reencrypt", "--resume-only", "--key-file"])
                .arg(&key)
                .arg(&img));
        }
        let now = std::fs::read(&img).unwrap();
        // (a run killed before it recorded itself changed no data and
        // keeps its old keyslot, the only one)
        let converted = now[16 << 20..] != orig[16 << 20..];
        assert!(
            !converted || !holds(&now[..16 << 20], &old_slot[..4096]),
            "key change killed at sync {n} and resumed: the old keyslot is still in the header"
        );
        killed
    });
}

/// The reencryption keyslot's area of a LUKS2 image: `(offset, size)`,
/// read from the primary header's JSON.
fn reencrypt_area(img: &[u8]) -> Option<(usize, usize)> {
    let json = &img[4096..16384];
    let end = json.iter().position(|&b| b == 0).unwrap_or(json.len());
    let v: serde_json::Value = serde_json::from_slice(&json[..end]).ok()?;
    let slot = v["keyslots"]
        .as_object()?
        .values()
        .find(|k| k["type"] == "reencrypt")?;
    let n = |f: &str| slot["area"][f].as_str()?.parse().ok();
    Some((n("offset")?, n("size")?))
}

/// A LUKS2 journal is trusted only if it is the hotzone's: a key change
/// with journal resilience killed at every sync point, its journal then
/// damaged (bytes flipped all over the area), either resumes to the
/// plaintext or is refused (exit 1) with the image as the kill left it;
/// never exit 0 with wrong data. (Kill points: [`SWEEP`].)
#[test]
fn a_damaged_luks2_journal_is_refused_never_copied_into_the_data() {
    let test = "safety::a_damaged_luks2_journal_is_refused_never_copied_into_the_data";
    if !common::have_tool("strace", test) {
        return;
    }
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(24)).unwrap();
    let plain = rng.bytes(4 << 20);
    let p = d.join("plain");
    std::fs::write(&p, &plain).unwrap();
    let orig = d.join("orig");
    luks_encrypt(&key, &p, &orig);
    let orig = std::fs::read(&orig).unwrap();
    let img = d.join("img");
    let mut argv = common::mdu_argv();
    argv.extend(
        [
            "luks",
            "reencrypt",
            "--resilience",
            "journal",
            "--hotzone-size",
            "1M",
            "--key-file",
        ]
        .map(str::to_owned),
    );
    argv.push(key.to_str().unwrap().to_owned());
    argv.push(img.to_str().unwrap().to_owned());
    let (mut refused, mut resumed) = (0, 0);
    SWEEP.run(test, "key change", |n| {
        std::fs::write(&img, &orig).unwrap();
        if !killed_at_sync(n, &argv) {
            return false;
        }
        let mut killed = std::fs::read(&img).unwrap();
        let Some((off, size)) = reencrypt_area(&killed) else {
            return true;
        };
        for i in (off..off + size).step_by(4093) {
            killed[i] ^= 0x5a;
        }
        std::fs::write(&img, &killed).unwrap();
        let r = run(mdu()
            .args(["luks", "reencrypt", "--resume-only", "--key-file"])
            .arg(&key)
            .arg(&img));
        if r.status.code() == Some(0) {
            let dec = d.join("dec");
            let _ = std::fs::remove_file(&dec);
            expect_code(
                &run(mdu()
                    .args(["luks", "decrypt", "--key-file"])
                    .arg(&key)
                    .arg(&img)
                    .arg(&dec)),
                0,
                &format!("sync {n}: decrypt after the resume"),
            );
            assert!(
                std::fs::read(&dec).unwrap() == plain,
                "killed at sync {n}, journal damaged: resumed with exit 0 to wrong data"
            );
            resumed += 1;
        } else {
            expect_code(&r, 1, &format!("sync {n}: a damaged journal"));
            eprintln!("sync {n}: {}", String::from_utf8_lossy(&r.stderr).trim());
            assert!(
                std::fs::read(&img).unwrap() == killed,
                "killed at sync {n}, journal damaged: refused but wrote"
            );
            refused += 1;
        }
        true
    });
    eprintln!("{test}: {resumed} resumed right, {refused} refused untouched");
    assert!(
        refused > 0,
        "no kill point left a hotzone that needed its journal"
    );
}
