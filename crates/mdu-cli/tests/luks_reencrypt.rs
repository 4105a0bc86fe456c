//! `mdu luks reencrypt` against cryptsetup 2.6: a run of either tool is
//! finished by the other, a kill at any sync point loses no byte (killed
//! with strace's fault injection, resumed by mdu or by cryptsetup), and a
//! record that was tampered with is refused before anything moves.

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

use common::{KillSweep, Rng, expect_code, have_tool, mdu, run, scratch};

const PBKDF2: &[&str] = &["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"];
/// Eight hotzones over the 8 MiB of data.
const HOTZONE: &str = "1048576";

/// The sweeps of shifted encryptions: every seventh sync point (each one
/// with `MDU_EXHAUSTIVE=1`).
const SHIFT_SWEEP: KillSweep = KillSweep {
    first: 1,
    stride: 7,
    tail: 0,
};

/// Under the emulator (CI's qemu run) the crash sweep does not run.
fn emulated() -> bool {
    std::env::var("MDU_EMULATED").is_ok_and(|v| v == "1")
}

fn cryptsetup(dir: &Path, args: &[&str]) -> Output {
    run(Command::new("cryptsetup").current_dir(dir).args(args))
}

struct Volume {
    dir: tempfile::TempDir,
    key: String,
    plain: Vec<u8>,
    plain_path: String,
}

impl Volume {
    /// A key file and 8 MiB of random plaintext.
    fn new(test: &str) -> Volume {
        let mut rng = Rng::new(test);
        let dir = scratch();
        let key = dir.path().join("key");
        std::fs::write(&key, rng.bytes(24)).unwrap();
        let plain = rng.bytes(8 << 20);
        let plain_path = dir.path().join("plain");
        std::fs::write(&plain_path, &plain).unwrap();
        Volume {
            key: key.to_str().unwrap().to_owned(),
            plain_path: plain_path.to_str().unwrap().to_owned(),
            dir,
            plain,
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    /// A LUKS2 image (header in it, data at 16 MiB) of the plaintext.
    fn image(&self, name: &str) -> String {
        let img = self.path(name);
        let _ = std::fs::remove_file(&img);
        let out = run(mdu()
            .args(["luks", "encrypt", "--key-file", &self.key])
            .args(PBKDF2)
            .args([&self.plain_path, &img]));
        expect_code(&out, 0, "luks encrypt");
        img
    }

    /// A copy of the plaintext, to encrypt in place.
    fn data(&self, name: &str) -> String {
        let p = self.path(name);
        std::fs::write(&p, &self.plain).unwrap();
        p
    }

    /// `mdu luks decrypt` gives the plaintext back.
    fn assert_plain(&self, img: &str, what: &str) {
        let out_path = self.path("dec");
        let _ = std::fs::remove_file(&out_path);
        let out = run(mdu()
            .args(["luks", "decrypt", "--key-file", &self.key, img])
            .arg(&out_path));
        expect_code(&out, 0, &format!("{what}: decrypt"));
        assert!(
            std::fs::read(&out_path).unwrap() == self.plain,
            "{what}: the data changed"
        );
    }

    fn mdu_reencrypt(&self, args: &[&str]) -> Output {
        run(mdu()
            .args([
                "luks",
                "reencrypt",
                "--key-file",
                &self.key,
                "--hotzone-size",
                HOTZONE,
            ])
            .args(args))
    }

    fn cs(&self, args: &[&str]) -> Output {
        cryptsetup(self.dir.path(), args)
    }
}

#[test]
fn runs_of_either_tool_are_finished_by_the_other() {
    let test = "luks_reencrypt::runs_of_either_tool_are_finished_by_the_other";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let v = Volume::new(test);
    let offline = "--force-offline-reencrypt";

    // A whole key change by mdu opens in cryptsetup.
    let img = v.image("a");
    expect_code(&v.mdu_reencrypt(&[&img]), 0, "mdu key change");
    let t = v.cs(&["open", "--test-passphrase", "--key-file", &v.key, &img]);
    expect_code(&t, 0, "cryptsetup opens the new key");
    v.assert_plain(&img, "mdu key change");

    // mdu starts, cryptsetup finishes.
    let img = v.image("b");
    expect_code(
        &v.mdu_reencrypt(&["--init-only", &img]),
        0,
        "mdu --init-only",
    );
    let d = v.mdu_reencrypt(&["--init-only", &img]);
    assert_ne!(d.status.code(), Some(0), "a second init on a record");
    // An in-progress header dumps as cryptsetup dumps it.
    let ours = run(mdu().args(["luks", "dump", &img]));
    expect_code(&ours, 0, "dump of a volume in reencryption");
    let theirs = v.cs(&["luksDump", &img]);
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&theirs.stdout),
        "luksDump of a volume in reencryption"
    );
    let r = v.cs(&[
        "reencrypt",
        "-q",
        offline,
        "--resume-only",
        "--key-file",
        &v.key,
        &img,
    ]);
    expect_code(&r, 0, "cryptsetup resumes mdu's key change");
    v.assert_plain(&img, "cryptsetup finished mdu's key change");

    // cryptsetup starts, mdu finishes.
    let img = v.image("c");
    let r = v.cs(&[
        &[
            "reencrypt",
            "-q",
            offline,
            "--init-only",
            "--key-file",
            &v.key,
        ][..],
        PBKDF2,
        &[&img],
    ]
    .concat());
    expect_code(&r, 0, "cryptsetup --init-only");
    expect_code(&v.mdu_reencrypt(&["--resume-only", &img]), 0, "mdu resumes");
    let t = v.cs(&["open", "--test-passphrase", "--key-file", &v.key, &img]);
    expect_code(&t, 0, "cryptsetup opens what mdu finished");
    v.assert_plain(&img, "mdu finished cryptsetup's key change");

    // Detached headers: mdu encrypts, cryptsetup decrypts; and back.
    let data = v.data("d");
    let hdr = v.path("d.hdr");
    let e = v.mdu_reencrypt(&[&["--encrypt", "--header", &hdr][..], PBKDF2, &[&data]].concat());
    expect_code(&e, 0, "mdu --encrypt --header");
    assert!(
        std::fs::read(&data).unwrap() != v.plain,
        "encrypted in place"
    );
    let dec = v.cs(&[
        "reencrypt",
        "-q",
        offline,
        "--decrypt",
        "--header",
        &hdr,
        "--key-file",
        &v.key,
        &data,
    ]);
    expect_code(&dec, 0, "cryptsetup --decrypt --header");
    assert!(
        std::fs::read(&data).unwrap() == v.plain,
        "cryptsetup decrypted mdu's encryption"
    );

    let data = v.data("e");
    let hdr = v.path("e.hdr");
    let enc = v.cs(&[
        &[
            "reencrypt",
            "-q",
            offline,
            "--encrypt",
            "--header",
            &hdr,
            "--sector-size",
            "4096",
            "--key-file",
            &v.key,
        ][..],
        PBKDF2,
        &[&data],
    ]
    .concat());
    expect_code(&enc, 0, "cryptsetup --encrypt --header");
    let d = v.mdu_reencrypt(&["--decrypt", "--header", &hdr, &data]);
    expect_code(&d, 0, "mdu --decrypt --header");
    assert!(
        std::fs::read(&data).unwrap() == v.plain,
        "mdu decrypted cryptsetup's encryption"
    );
}

/// The volume of a crash test, or `None` (said) where cryptsetup or
/// strace is missing or the run is emulated.
fn crash_volume(test: &str) -> Option<Volume> {
    if !have_tool("cryptsetup", test) || !have_tool("strace", test) {
        return None;
    }
    if emulated() {
        eprintln!(
            "SKIPPED: {test}: the crash sample runs on the host only (not under the emulator)"
        );
        return None;
    }
    Some(Volume::new(test))
}

/// Runs `argv` under strace, killed at its `n`-th fsync or fdatasync;
/// whether it ran to its end instead (fewer sync points).
fn killed_at(dir: &Path, n: usize, argv: &[String]) -> bool {
    assert!(
        n < 1000,
        "no run ended by itself before sync {n}: is strace tracing?"
    );
    // In `dir`: a killed cryptsetup leaves its temporary header
    // (`LUKS2-temp-*.new`) in its working directory.
    run(common::strace_kill(n, argv).current_dir(dir))
        .status
        .code()
        != Some(0)
}

#[test]
fn a_kill_at_any_sync_point_loses_nothing() {
    let test = "luks_reencrypt::a_kill_at_any_sync_point_loses_nothing";
    if !have_tool("cryptsetup", test) || !have_tool("strace", test) {
        return;
    }
    if emulated() {
        eprintln!(
            "SKIPPED: {test}: the crash sweep runs on the host only (not under the emulator)"
        );
        return;
    }
    let v = Volume::new(test);
    let orig = v.image("orig");
    let mdu_argv = |res: &str, img: &str| -> Vec<String> {
        let mut a = common::mdu_argv();
        a.extend(
            [
                "luks",
                "reencrypt",
                "--key-file",
                &v.key,
                "--hotzone-size",
                HOTZONE,
                "--resilience",
                res,
                img,
            ]
            .map(str::to_owned),
        );
        a
    };
    let mut points = 0;
    // mdu killed at every third sync point (checksum) and every seventh
    // (journal); resumed by mdu, and at every third trial by cryptsetup.
    for (res, stride) in [("checksum", 3), ("journal", 7)] {
        let sweep = KillSweep {
            first: 1,
            stride,
            tail: 0,
        };
        sweep.run(test, &format!("mdu, {res} resilience"), |n| {
            let img = v.path("k");
            std::fs::copy(&orig, &img).unwrap();
            if !killed_at(v.dir.path(), n, &mdu_argv(res, &img)) {
                return false;
            }
            points += 1;
            if points % 3 == 0 {
                let _ = v.cs(&["repair", "-q", "--key-file", &v.key, &img]);
                let _ = v.cs(&[
                    "reencrypt",
                    "-q",
                    "--force-offline-reencrypt",
                    "--resume-only",
                    "--key-file",
                    &v.key,
                    &img,
                ]);
            } else {
                let _ = v.mdu_reencrypt(&["--resume-only", &img]);
            }
            // Whatever the point, the volume opens and holds the data; a
            // run that never recorded itself (killed while the new keyslot
            // was written) is simply run again.
            let again = v.mdu_reencrypt(&["--resume-only", &img]);
            assert_ne!(
                again.status.code(),
                Some(0),
                "{res} kill {n}: still in progress after a resume"
            );
            v.assert_plain(&img, &format!("mdu {res} killed at sync {n}"));
            true
        });
    }
    // mdu decrypting with a detached header killed at every sixth point,
    // resumed by mdu (odd trials) or cryptsetup.
    let (enc, enc_hdr) = (v.data("enc"), v.path("enc.hdr"));
    let e = v.mdu_reencrypt(&[&["--encrypt", "--header", &enc_hdr][..], PBKDF2, &[&enc]].concat());
    expect_code(&e, 0, "encrypt for the decrypt sweep");
    let sweep = KillSweep {
        first: 1,
        stride: 6,
        tail: 0,
    };
    sweep.run(test, "mdu --decrypt --header", |n| {
        let (data, hdr) = (v.path("dd"), v.path("dd.hdr"));
        std::fs::copy(&enc, &data).unwrap();
        std::fs::copy(&enc_hdr, &hdr).unwrap();
        let mut argv = common::mdu_argv();
        argv.extend(
            [
                "luks",
                "reencrypt",
                "--decrypt",
                "--key-file",
                &v.key,
                "--hotzone-size",
                HOTZONE,
                "--header",
                &hdr,
                &data,
            ]
            .map(str::to_owned),
        );
        if !killed_at(v.dir.path(), n, &argv) {
            return false;
        }
        points += 1;
        if n % 12 == 1 {
            let _ = v.mdu_reencrypt(&["--resume-only", "--header", &hdr, &data]);
        } else {
            let _ = v.cs(&[
                "repair",
                "-q",
                "--key-file",
                &v.key,
                "--header",
                &hdr,
                &data,
            ]);
            let _ = v.cs(&[
                "reencrypt",
                "-q",
                "--force-offline-reencrypt",
                "--resume-only",
                "--key-file",
                &v.key,
                "--header",
                &hdr,
                &data,
            ]);
        }
        assert!(
            std::fs::read(&data).unwrap() == v.plain,
            "decrypt killed at sync {n}: the data are not the plaintext after the resume"
        );
        true
    });
    // cryptsetup killed at every third sync point and at each of the last
    // ten (its final clean-up, where it gets stuck or converts again);
    // resumed by mdu.
    let cs_argv = |img: &str| -> Vec<String> {
        let mut argv: Vec<String> = [
            "cryptsetup",
            "reencrypt",
            "-q",
            "--force-offline-reencrypt",
            "--key-file",
            &v.key,
            "--hotzone-size",
            "1M",
        ]
        .map(str::to_owned)
        .to_vec();
        argv.extend(PBKDF2.iter().map(|s| s.to_string()));
        argv.push(img.to_owned());
        argv
    };
    let check = |n: usize| -> bool {
        let img = v.path("c");
        std::fs::copy(&orig, &img).unwrap();
        if !killed_at(v.dir.path(), n, &cs_argv(&img)) {
            return false;
        }
        let _ = v.mdu_reencrypt(&["--resume-only", &img]);
        v.assert_plain(
            &img,
            &format!("cryptsetup killed at sync {n}, resumed by mdu"),
        );
        let t = v.cs(&["open", "--test-passphrase", "--key-file", &v.key, &img]);
        expect_code(
            &t,
            0,
            &format!("cryptsetup killed at sync {n}: opens after mdu's resume"),
        );
        true
    };
    let sweep = KillSweep {
        first: 1,
        stride: 3,
        tail: 10,
    };
    points += sweep.run(test, "cryptsetup", check);
    assert!(
        points > 20,
        "only {points} kill points: the runs did not sync as expected"
    );
    eprintln!("{points} kill points, no byte lost");
}

#[test]
fn refused_resumes_change_nothing() {
    let v = Volume::new("luks_reencrypt::refused_resumes_change_nothing");
    let img = v.image("img");
    let dump = |img: &str| run(mdu().args(["luks", "dump", img])).stdout;
    let (before, dump_before) = (std::fs::read(&img).unwrap(), dump(&img));

    // No reencryption in progress: refused, after refilling the ranges of
    // the keyslots area that no keyslot names (what a run killed after its
    // final header may have left there), and nothing else: the headers,
    // the metadata, the keyslot and the data are as they were.
    let r = v.mdu_reencrypt(&["--resume-only", &img]);
    expect_code(&r, 1, "--resume-only on a clean volume");
    let after = std::fs::read(&img).unwrap();
    assert!(
        after[..32768 + 4096] == before[..32768 + 4096],
        "--resume-only changed the headers"
    );
    assert!(
        after[16 << 20..] == before[16 << 20..],
        "--resume-only changed the data"
    );
    assert_eq!(
        dump(&img),
        dump_before,
        "--resume-only changed the metadata"
    );
    v.assert_plain(&img, "--resume-only on a clean volume");
    let before = after;
    // A wrong passphrase.
    let bad = v.path("bad");
    std::fs::write(&bad, b"not it").unwrap();
    let r = run(mdu().args(["luks", "reencrypt", "--key-file", &bad, &img]));
    expect_code(&r, 1, "a wrong passphrase");
    assert!(
        std::fs::read(&img).unwrap() == before,
        "a refused start wrote"
    );

    // A record whose covered fields were changed is not authentic.
    expect_code(&v.mdu_reencrypt(&["--init-only", &img]), 0, "--init-only");
    let open = run(mdu().args(["luks", "decrypt", "--key-file", &v.key, &img, &v.path("x")]));
    expect_code(&open, 1, "the data of a volume in reencryption");
    assert!(String::from_utf8_lossy(&open.stderr).contains("reencryption is in progress"));
    rewrite_header(&img, |m| {
        let r = m.reencrypt.as_mut().unwrap();
        r.area.size -= 4096;
    });
    let tampered = std::fs::read(&img).unwrap();
    let r = v.mdu_reencrypt(&["--resume-only", &img]);
    expect_code(&r, 1, "a tampered record");
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("not authentic"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(
        std::fs::read(&img).unwrap() == tampered,
        "a refused resume wrote"
    );

    // A run without resilience records no progress: its resume is refused
    // unless asked for.
    let img = v.image("none");
    expect_code(
        &v.mdu_reencrypt(&["--resilience", "none", "--init-only", &img]),
        0,
        "none",
    );
    let r = v.mdu_reencrypt(&["--resume-only", &img]);
    expect_code(&r, 1, "resume of a none run");
    assert!(String::from_utf8_lossy(&r.stderr).contains("records no progress"));
    expect_code(
        &v.mdu_reencrypt(&["--resume-only", "--allow-none-resume", &img]),
        0,
        "resume of a none run, allowed",
    );
    v.assert_plain(&img, "a none run stopped cleanly");
}

/// Rewrites both header copies of `img` with `f` applied to the metadata
/// (a new seqid, checksums recomputed): what a writer of the disk can do.
fn rewrite_header(img: &str, f: impl Fn(&mut mdu_luks2::Metadata)) {
    let mut bytes = std::fs::read(img).unwrap();
    let image = mdu_luks2::Image::load(&bytes[..]).unwrap();
    let mut m = image.metadata.clone();
    f(&mut m);
    let json = m.to_json();
    let hdr = image.hdr_size() as usize;
    for secondary in [false, true] {
        let mut h = image.header.clone();
        h.secondary = secondary;
        h.hdr_offset = if secondary { hdr as u64 } else { 0 };
        h.seqid += 1;
        let at = h.hdr_offset as usize;
        let copy = &mut bytes[at..at + hdr];
        copy.fill(0);
        copy[..4096].copy_from_slice(&h.to_bytes().unwrap());
        copy[4096..4096 + json.len()].copy_from_slice(json.as_bytes());
        let sum = mdu_luks2::header_checksum(copy);
        copy[448..480].copy_from_slice(&sum);
    }
    std::fs::write(img, bytes).unwrap();
}

#[test]
fn detached_headers_interoperate() {
    let test = "luks_reencrypt::detached_headers_interoperate";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let v = Volume::new(test);
    // mdu luks encrypt --header: cryptsetup decrypts it in place.
    let (hdr, data) = (v.path("h"), v.path("d"));
    let out = run(mdu()
        .args(["luks", "encrypt", "--header", &hdr, "--key-file", &v.key])
        .args(PBKDF2)
        .args([&v.plain_path, &data]));
    expect_code(&out, 0, "encrypt --header");
    assert_eq!(
        std::fs::metadata(&data).unwrap().len(),
        8 << 20,
        "data only"
    );
    let ours = run(mdu().args(["luks", "dump", "--header", &hdr, &data]));
    let theirs = v.cs(&["luksDump", "--header", &hdr, &data]);
    expect_code(&ours, 0, "dump --header");
    assert_eq!(ours.stdout, theirs.stdout, "luksDump --header");
    let chk = run(mdu().args(["luks", "check", "--header", &hdr, &data]));
    expect_code(&chk, 0, "check --header");
    let dec = v.cs(&[
        "reencrypt",
        "-q",
        "--force-offline-reencrypt",
        "--decrypt",
        "--header",
        &hdr,
        "--key-file",
        &v.key,
        &data,
    ]);
    expect_code(&dec, 0, "cryptsetup decrypts mdu's detached image");
    assert!(std::fs::read(&data).unwrap() == v.plain);

    // cryptsetup luksFormat --header over mdu luks format --header: both
    // open in the other; mdu luks decrypt --header reads cryptsetup's.
    let (h2, dev) = (v.path("h2"), v.data("dev"));
    let f = run(mdu()
        .args(["luks", "format", "--header", &h2, "--key-file", &v.key])
        .args(PBKDF2)
        .arg(&dev));
    expect_code(&f, 0, "format --header");
    assert!(
        std::fs::read(&dev).unwrap() == v.plain,
        "format --header wrote the device"
    );
    let t = v.cs(&[
        "open",
        "--test-passphrase",
        "--header",
        &h2,
        "--key-file",
        &v.key,
        &dev,
    ]);
    expect_code(&t, 0, "cryptsetup opens mdu's detached header");
    let (h3, data3) = (v.path("h3"), v.data("d3"));
    let enc = v.cs(&[
        &[
            "reencrypt",
            "-q",
            "--force-offline-reencrypt",
            "--encrypt",
            "--header",
            &h3,
            "--sector-size",
            "4096",
            "--key-file",
            &v.key,
        ][..],
        PBKDF2,
        &[&data3],
    ]
    .concat());
    expect_code(&enc, 0, "cryptsetup --encrypt --header");
    let plain3 = v.path("p3");
    let d = run(mdu()
        .args([
            "luks",
            "decrypt",
            "--header",
            &h3,
            "--key-file",
            &v.key,
            &data3,
        ])
        .arg(&plain3));
    expect_code(&d, 0, "decrypt --header");
    assert!(std::fs::read(&plain3).unwrap() == v.plain);
}

#[test]
fn a_detached_header_given_as_the_image_is_not_converted() {
    let v = Volume::new("luks_reencrypt::a_detached_header_given_as_the_image_is_not_converted");
    let (hdr, dev) = (v.path("h"), v.data("dev"));
    let f = run(mdu()
        .args(["luks", "format", "--header", &hdr, "--key-file", &v.key])
        .args(PBKDF2)
        .arg(&dev));
    expect_code(&f, 0, "format --header");
    let before = std::fs::read(&hdr).unwrap();
    // The header file as the image: its data would start at offset 0,
    // over the header itself.
    let r = v.mdu_reencrypt(&[&hdr]);
    expect_code(&r, 1, "reencrypt of a detached header without its device");
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("needs its data device"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(
        std::fs::read(&hdr).unwrap() == before,
        "the header was written"
    );
}

/// `--encrypt --reduce-device-size`: the header at the start, the data
/// moved up. The whole run is checked against cryptsetup (which decrypts
/// it in place, moving the data back down), then mdu and cryptsetup are
/// each killed at a sample of sync points and resumed by the other tool
/// or by mdu; the data kept read back intact every time.
#[test]
fn an_encryption_with_a_data_shift_is_finished_by_either_tool() {
    let test = "luks_reencrypt::an_encryption_with_a_data_shift_is_finished_by_either_tool";
    let Some(v) = crash_volume(test) else {
        return;
    };
    let reduce: u64 = 2 << 20;
    let shift_args = ["--encrypt", "--reduce-device-size", "2M"];
    // The device: `kept` bytes of data, then the 2 MiB the file system gave
    // up. Kept a multiple of the 1 MiB shift, and not (a short hotzone).
    let device = |name: &str, kept: usize| -> String {
        let p = v.path(name);
        let mut bytes = v.plain[..kept].to_vec();
        bytes.resize(kept + reduce as usize, 0);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let assert_kept = |img: &str, kept: usize, what: &str| {
        let out_path = v.path("dec");
        let _ = std::fs::remove_file(&out_path);
        let out = run(mdu()
            .args(["luks", "decrypt", "--key-file", &v.key, img])
            .arg(&out_path));
        expect_code(&out, 0, &format!("{what}: decrypt"));
        let got = std::fs::read(&out_path).unwrap();
        assert_eq!(got.len(), kept + (reduce / 2) as usize, "{what}: size");
        assert!(got[..kept] == v.plain[..kept], "{what}: the data changed");
    };
    let offline = "--force-offline-reencrypt";
    let mdu_argv = |img: &str| -> Vec<String> {
        let mut a = common::mdu_argv();
        a.extend(
            [
                &["luks", "reencrypt", "--key-file", &v.key][..],
                PBKDF2,
                &shift_args,
                &[img],
            ]
            .concat()
            .into_iter()
            .map(str::to_owned),
        );
        a
    };
    let mut points = 0;
    for kept in [8 << 20, (7 << 20) + (512 << 10)] {
        // A whole run, decrypted in place by cryptsetup.
        let img = device("whole", kept);
        let e = run(mdu()
            .args(["luks", "reencrypt", "--key-file", &v.key])
            .args(PBKDF2)
            .args(shift_args)
            .arg(&img));
        expect_code(&e, 0, "mdu --encrypt --reduce-device-size");
        assert_kept(&img, kept, "mdu's run");
        // An encrypted volume is not encrypted again.
        let before = std::fs::read(&img).unwrap();
        let again = run(mdu()
            .args(["luks", "reencrypt", "--key-file", &v.key])
            .args(PBKDF2)
            .args(shift_args)
            .arg(&img));
        assert_ne!(
            again.status.code(),
            Some(0),
            "a LUKS2 volume encrypted again"
        );
        assert!(
            std::fs::read(&img).unwrap() == before,
            "the refused start wrote"
        );
        let hdr = v.path("exported.hdr");
        let _ = std::fs::remove_file(&hdr);
        let d = v.cs(&[
            "reencrypt",
            "-q",
            offline,
            "--decrypt",
            "--header",
            &hdr,
            "--key-file",
            &v.key,
            &img,
        ]);
        expect_code(&d, 0, "cryptsetup decrypts mdu's shifted encryption");
        let back = std::fs::read(&img).unwrap();
        assert!(
            back[..kept] == v.plain[..kept],
            "cryptsetup read back mdu's ciphertext"
        );

        // The same command again goes on with the run it started (it
        // never starts over: the copy of the first bytes would be lost).
        let img = device("again", kept);
        assert!(
            killed_at(v.dir.path(), 8, &mdu_argv(&img)),
            "a run of more than 8 syncs"
        );
        let r = run(mdu()
            .args(["luks", "reencrypt", "--key-file", &v.key])
            .args(PBKDF2)
            .args(shift_args)
            .arg(&img));
        expect_code(&r, 0, "the same command again");
        assert_kept(&img, kept, "killed at sync 8, then the same command");

        // mdu killed at every seventh sync point, resumed by mdu or (every
        // other trial) by cryptsetup, then by mdu where cryptsetup cannot
        // go on (the start before the primary header copy, the clean-up).
        SHIFT_SWEEP.run(test, &format!("mdu, {kept} bytes kept"), |n| {
            let img = device("k", kept);
            if !killed_at(v.dir.path(), n, &mdu_argv(&img)) {
                return false;
            }
            points += 1;
            if points % 2 == 0 {
                let _ = v.cs(&["repair", "-q", "--key-file", &v.key, &img]);
                let _ = v.cs(&[
                    "reencrypt",
                    "-q",
                    offline,
                    "--resume-only",
                    "--key-file",
                    &v.key,
                    &img,
                ]);
            }
            let plain_still = std::fs::read(&img).unwrap()[..kept] == v.plain[..kept];
            let r = v.mdu_reencrypt(&["--resume-only", &img]);
            if plain_still && r.status.code() != Some(0) {
                // Killed before the first header copy: nothing to resume.
                return true;
            }
            assert_kept(&img, kept, &format!("mdu killed at sync {n}"));
            true
        });
        // cryptsetup killed at every seventh sync point, resumed by mdu.
        SHIFT_SWEEP.run(test, &format!("cryptsetup, {kept} bytes kept"), |n| {
            let img = device("c", kept);
            let mut cs = vec![
                "cryptsetup".to_owned(),
                "reencrypt".into(),
                "-q".into(),
                offline.into(),
            ];
            cs.extend(
                [
                    &["--key-file", &v.key, "--sector-size", "4096"][..],
                    PBKDF2,
                    &shift_args,
                    &[&img],
                ]
                .concat()
                .into_iter()
                .map(str::to_owned),
            );
            if !killed_at(v.dir.path(), n, &cs) {
                return false;
            }
            points += 1;
            let plain_still = std::fs::read(&img).unwrap()[..kept] == v.plain[..kept];
            let r = v.mdu_reencrypt(&["--resume-only", &img]);
            if plain_still && r.status.code() != Some(0) {
                return true;
            }
            assert_kept(
                &img,
                kept,
                &format!("cryptsetup killed at sync {n}, resumed by mdu"),
            );
            true
        });
    }
    assert!(points > 20, "only {points} kill points");
    eprintln!("{points} kill points of shifted encryptions, no byte lost");
}

/// `--decrypt --header NEW` of a volume whose header is in the image: the
/// header is exported and the data move down to 0. A whole run, then mdu
/// killed at every third sync point (resumed by mdu, or by cryptsetup
/// once the record is written) and cryptsetup at every third (resumed by
/// mdu): the plaintext is at offset 0 every time.
#[test]
fn a_decryption_that_moves_the_data_is_finished_by_either_tool() {
    let test = "luks_reencrypt::a_decryption_that_moves_the_data_is_finished_by_either_tool";
    let Some(v) = crash_volume(test) else {
        return;
    };
    // Data at 2 MiB: three shifted hotzones and the moved segment.
    let orig = v.path("orig");
    let out = run(mdu()
        .args(["luks", "encrypt", "--key-file", &v.key, "--offset", "4096"])
        .args(["--sector-size", "4096"])
        .args(PBKDF2)
        .args([&v.plain_path, &orig]));
    expect_code(&out, 0, "luks encrypt");
    let fresh = |name: &str| -> (String, String) {
        let (img, hdr) = (v.path(name), v.path(&format!("{name}.hdr")));
        std::fs::copy(&orig, &img).unwrap();
        let _ = std::fs::remove_file(&hdr);
        (img, hdr)
    };
    let decrypted = |img: &str| std::fs::read(img).unwrap()[..v.plain.len()] == v.plain[..];
    let mdu_argv = |img: &str, hdr: &str| -> Vec<String> {
        let mut a = common::mdu_argv();
        a.extend(
            [
                "luks",
                "reencrypt",
                "--decrypt",
                "--key-file",
                &v.key,
                "--header",
                hdr,
                img,
            ]
            .map(str::to_owned),
        );
        a
    };
    // mdu's resume: --resume-only, or the same command again when the
    // export was interrupted before its record.
    let resume = |img: &str, hdr: &str, what: &str| {
        let r = v.mdu_reencrypt(&["--resume-only", "--header", hdr, img]);
        // (killed after the final header: nothing is left to resume)
        if r.status.code() != Some(0)
            && !decrypted(img)
            && std::fs::metadata(hdr).is_ok_and(|m| m.len() > 0)
        {
            let r = run(mdu()
                .args(["luks", "reencrypt", "--decrypt", "--key-file", &v.key])
                .args(["--header", hdr, img]));
            expect_code(&r, 0, &format!("{what}: the export goes on"));
        }
    };

    let (img, hdr) = fresh("whole");
    let d = run(mdu()
        .args(["luks", "reencrypt", "--decrypt", "--key-file", &v.key])
        .args(["--header", &hdr, &img]));
    expect_code(&d, 0, "mdu --decrypt --header NEW");
    assert!(decrypted(&img), "the data moved down, decrypted");
    let dump = v.cs(&["luksDump", &hdr]);
    expect_code(&dump, 0, "cryptsetup reads the exported header");
    assert!(String::from_utf8_lossy(&dump.stdout).contains("linear"));

    // A stale backup of the header (taken before a key change) given as
    // NEW is not an interrupted export: refused, the image unchanged.
    let (img, hdr) = fresh("stale");
    expect_code(
        &v.cs(&["luksHeaderBackup", &img, "--header-backup-file", &hdr]),
        0,
        "luksHeaderBackup",
    );
    let k = v.cs(&[
        "reencrypt",
        "-q",
        "--force-offline-reencrypt",
        "--key-file",
        &v.key,
        "--pbkdf",
        "pbkdf2",
        "--pbkdf-force-iterations",
        "1000",
        &img,
    ]);
    expect_code(&k, 0, "cryptsetup key change");
    let before = std::fs::read(&img).unwrap();
    let r = run(mdu()
        .args(["luks", "reencrypt", "--decrypt", "--key-file", &v.key])
        .args(["--header", &hdr, &img]));
    assert_ne!(r.status.code(), Some(0), "a stale header backup as NEW");
    assert!(std::fs::read(&img).unwrap() == before, "the image changed");

    let mut points = 0;
    let mut by_cryptsetup = 0;
    let sweep = KillSweep {
        first: 1,
        stride: 3,
        tail: 0,
    };
    sweep.run(test, "mdu", |n| {
        let (img, hdr) = fresh("k");
        if !killed_at(v.dir.path(), n, &mdu_argv(&img, &hdr)) {
            return false;
        }
        points += 1;
        let what = format!("mdu killed at sync {n}");
        let recorded = |hdr: &str| {
            std::fs::read(hdr).is_ok_and(|h| {
                mdu_luks2::Image::load(&h[..]).is_ok_and(|i| i.metadata.reencrypt.is_some())
            })
        };
        if recorded(&hdr) && points % 2 == 0 {
            // (a repair of the last hotzone finishes the run itself)
            let _ = v.cs(&["repair", "-q", "--key-file", &v.key, "--header", &hdr, &img]);
            if recorded(&hdr) {
                let r = v.cs(&[
                    "reencrypt",
                    "-q",
                    "--force-offline-reencrypt",
                    "--resume-only",
                    "--key-file",
                    &v.key,
                    "--header",
                    &hdr,
                    &img,
                ]);
                expect_code(&r, 0, &format!("{what}: cryptsetup resumes"));
            }
            by_cryptsetup += 1;
        } else if std::fs::read(&img).unwrap() != std::fs::read(&orig).unwrap() {
            resume(&img, &hdr, &what);
        } else {
            // Killed before the image changed: a new start.
            let _ = std::fs::remove_file(&hdr);
            let r = run(mdu()
                .args(["luks", "reencrypt", "--decrypt", "--key-file", &v.key])
                .args(["--header", &hdr, &img]));
            expect_code(&r, 0, &format!("{what}: a new start"));
        }
        assert!(decrypted(&img), "{what}: the data are not the plaintext");
        true
    });
    let sweep = KillSweep { first: 2, ..sweep };
    sweep.run(test, "cryptsetup", |n| {
        let (img, hdr) = fresh("c");
        let cs: Vec<String> = [
            "cryptsetup",
            "reencrypt",
            "-q",
            "--force-offline-reencrypt",
            "--decrypt",
            "--key-file",
            &v.key,
            "--header",
            &hdr,
            &img,
        ]
        .map(str::to_owned)
        .to_vec();
        if !killed_at(v.dir.path(), n, &cs) {
            return false;
        }
        points += 1;
        let what = format!("cryptsetup killed at sync {n}");
        if std::fs::read(&img).unwrap() != std::fs::read(&orig).unwrap() {
            resume(&img, &hdr, &what);
            assert!(
                decrypted(&img),
                "{what}, resumed by mdu: the data are not the plaintext"
            );
        }
        true
    });
    assert!(
        points > 10 && by_cryptsetup >= 2,
        "{points} kill points, {by_cryptsetup} resumed by cryptsetup"
    );
    eprintln!(
        "{points} kill points of decryptions that move the data ({by_cryptsetup} resumed by cryptsetup), no byte lost"
    );
}

/// cryptsetup decrypts with a detached header backward; killed at every
/// fifth sync point, mdu finishes the run where it stopped (backward).
#[test]
fn a_backward_decryption_of_cryptsetup_is_finished_by_mdu() {
    let test = "luks_reencrypt::a_backward_decryption_of_cryptsetup_is_finished_by_mdu";
    let Some(v) = crash_volume(test) else {
        return;
    };
    let (enc, enc_hdr) = (v.data("enc"), v.path("enc.hdr"));
    let e = v.mdu_reencrypt(&[&["--encrypt", "--header", &enc_hdr][..], PBKDF2, &[&enc]].concat());
    expect_code(&e, 0, "mdu --encrypt --header");
    let mut points = 0;
    let sweep = KillSweep {
        first: 1,
        stride: 5,
        tail: 0,
    };
    sweep.run(test, "cryptsetup", |n| {
        let (data, hdr) = (v.path("d"), v.path("d.hdr"));
        std::fs::copy(&enc, &data).unwrap();
        std::fs::copy(&enc_hdr, &hdr).unwrap();
        let cs: Vec<String> = [
            "cryptsetup",
            "reencrypt",
            "-q",
            "--force-offline-reencrypt",
            "--decrypt",
            "--key-file",
            &v.key,
            "--hotzone-size",
            "1M",
            "--header",
            &hdr,
            &data,
        ]
        .map(str::to_owned)
        .to_vec();
        if !killed_at(v.dir.path(), n, &cs) {
            return false;
        }
        points += 1;
        let r = v.mdu_reencrypt(&["--resume-only", "--header", &hdr, &data]);
        let in_progress = std::fs::read(&hdr).is_ok_and(|h| {
            mdu_luks2::Image::load(&h[..]).is_ok_and(|i| i.metadata.reencrypt.is_some())
        });
        assert!(
            !in_progress,
            "cryptsetup killed at sync {n}: still in progress after mdu's resume: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert!(
            std::fs::read(&data).unwrap() == v.plain,
            "cryptsetup killed at sync {n}, resumed by mdu: the data are not the plaintext"
        );
        true
    });
    assert!(points > 5, "only {points} kill points");
}

/// Two reencryptions of one image started 0.05 to 0.5 s apart, by mdu and
/// cryptsetup in every order: the second is refused (exit 5 when it is
/// mdu's, naming the first) or, when it is cryptsetup's started while mdu
/// holds the image, waits for mdu's lock and then converts what mdu left;
/// the volume always decrypts to its plaintext.
#[test]
fn concurrent_reencryptions_exclude_each_other() {
    let test = "luks_reencrypt::concurrent_reencryptions_exclude_each_other";
    let with_cs = have_tool("cryptsetup", test) && !emulated();
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(24)).unwrap();
    let plain = rng.bytes(160 << 20);
    let plain_path = d.join("plain");
    std::fs::write(&plain_path, &plain).unwrap();
    let key = key.to_str().unwrap();
    let img = d.join("img");
    let mdu_run = |img: &Path| {
        let mut c = mdu();
        c.args([
            "luks",
            "reencrypt",
            "--key-file",
            key,
            "--hotzone-size",
            HOTZONE,
        ])
        .arg(img);
        c
    };
    let cs_run = |img: &Path| {
        let mut c = Command::new("cryptsetup");
        c.args([
            "reencrypt",
            "-q",
            "--force-offline-reencrypt",
            "--key-file",
            key,
        ])
        .args(PBKDF2)
        .arg(img);
        c
    };
    let mut table = String::new();
    let pairs: &[(&str, &str)] = if with_cs {
        &[("mdu", "mdu"), ("mdu", "cryptsetup"), ("cryptsetup", "mdu")]
    } else {
        &[("mdu", "mdu")]
    };
    for &(a, b) in pairs {
        for delay in [50, 200, 500] {
            let _ = std::fs::remove_file(&img);
            expect_code(
                &run(mdu()
                    .args(["luks", "encrypt", "--key-file", key])
                    .args(PBKDF2)
                    .arg(&plain_path)
                    .arg(&img)),
                0,
                "luks encrypt",
            );
            let cmd = |who: &str| {
                if who == "mdu" {
                    mdu_run(&img)
                } else {
                    cs_run(&img)
                }
            };
            let first = cmd(a)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(delay));
            let second = run(&mut cmd(b));
            let first = first.wait_with_output().unwrap();
            let (c1, c2) = (first.status.code(), second.status.code());
            let err2 = String::from_utf8_lossy(&second.stderr);
            let err1 = String::from_utf8_lossy(&first.stderr);
            // On a loaded machine the first may not have reached its lock
            // when the second starts: then the second runs and the first
            // must be the one refused (mdu: busy, exit 5).
            let swapped = c1 != Some(0) && c2 == Some(0);
            if swapped {
                if a == "mdu" {
                    assert!(
                        c1 == Some(5) && err1.contains("busy"),
                        "{a} then {b} after {delay} ms: the second ran first, and the first was not refused as busy ({c1:?}): {err1}"
                    );
                }
            } else {
                assert_eq!(
                    c1,
                    Some(0),
                    "{a} then {b} after {delay} ms: the first failed: {err1}"
                );
            }
            match (b, c2) {
                _ if swapped => {}
                ("mdu", Some(5)) => assert!(err2.contains("busy"), "{err2}"),
                ("mdu", _) => {
                    panic!("{a} then mdu after {delay} ms: the second ran ({c2:?}): {err2}")
                }
                (_, Some(0)) => {}
                (_, code) => panic!("{a} then cryptsetup after {delay} ms: exit {code:?}: {err2}"),
            }
            let dec = d.join("dec");
            let _ = std::fs::remove_file(&dec);
            expect_code(
                &run(mdu()
                    .args(["luks", "decrypt", "--key-file", key])
                    .arg(&img)
                    .arg(&dec)),
                0,
                &format!("{a} then {b} after {delay} ms: decrypt"),
            );
            assert!(
                std::fs::read(&dec).unwrap() == plain,
                "{a} then {b} after {delay} ms: the data are damaged"
            );
            let _ = writeln!(
                table,
                "| {a} | {b} | {delay} ms | {c1:?} | {c2:?} | intact |"
            );
        }
    }
    eprintln!(
        "{test}:\n| first | second | after | first's exit | second's exit | volume |\n|---|---|---|---|---|---|\n{table}"
    );
}
