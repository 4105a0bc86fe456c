//! Runs killed at their sync points resume to the same bytes; resumes the
//! header does not allow change nothing.

use super::*;

#[test]
fn a_kill_at_any_sync_point_loses_nothing() {
    let test = "luks::reencrypt::crash::a_kill_at_any_sync_point_loses_nothing";
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
                "--iter-time",
                "1",
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
                "--iter-time",
                "1",
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
    let v = Volume::new("luks::reencrypt::crash::refused_resumes_change_nothing");
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
    expect_code(&r, 2, "a wrong passphrase");
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
