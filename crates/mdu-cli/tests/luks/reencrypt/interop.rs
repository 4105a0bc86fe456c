//! Reencryptions that either tool starts and the other finishes, detached
//! headers, and two runs on one volume excluding each other.

use super::*;

#[test]
fn runs_of_either_tool_are_finished_by_the_other() {
    let test = "luks::reencrypt::interop::runs_of_either_tool_are_finished_by_the_other";
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

#[test]
fn detached_headers_interoperate() {
    let test = "luks::reencrypt::interop::detached_headers_interoperate";
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
    let v = Volume::new(
        "luks::reencrypt::interop::a_detached_header_given_as_the_image_is_not_converted",
    );
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

/// Two reencryptions of one image started 0.05 to 0.5 s apart, by mdu and
/// cryptsetup in every order: the second is refused (exit 5 when it is
/// mdu's, naming the first) or, when it is cryptsetup's started while mdu
/// holds the image, waits for mdu's lock and then converts what mdu left;
/// the volume always decrypts to its plaintext.
#[test]
fn concurrent_reencryptions_exclude_each_other() {
    let test = "luks::reencrypt::interop::concurrent_reencryptions_exclude_each_other";
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
