//! Reencryptions that move the data (an encryption with a data shift, a
//! decryption that moves the data down, cryptsetup's backward decryption),
//! killed and finished by either tool.

use super::*;

/// `--encrypt --reduce-device-size`: the header at the start, the data
/// moved up. The whole run is checked against cryptsetup (which decrypts
/// it in place, moving the data back down), then mdu and cryptsetup are
/// each killed at a sample of sync points and resumed by the other tool
/// or by mdu; the data kept read back intact every time.
#[test]
fn an_encryption_with_a_data_shift_is_finished_by_either_tool() {
    let test =
        "luks::reencrypt::data_shift::an_encryption_with_a_data_shift_is_finished_by_either_tool";
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
    let test =
        "luks::reencrypt::data_shift::a_decryption_that_moves_the_data_is_finished_by_either_tool";
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
    let test =
        "luks::reencrypt::data_shift::a_backward_decryption_of_cryptsetup_is_finished_by_mdu";
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
