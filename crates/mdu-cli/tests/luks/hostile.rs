//! Headers edited to break a rule: unbound keyslots, hostile JSON, segments
//! bound twice and unsupported ciphers open in mdu exactly when they open in
//! cryptsetup.

use super::*;

/// The JSON text of the header copy at `at` of a 16 KiB-header image.
fn header_json(image: &[u8], at: usize) -> serde_json::Value {
    let area = &image[at + 4096..at + 16384];
    let end = area
        .iter()
        .position(|&b| b == 0)
        .expect("a NUL after the JSON");
    serde_json::from_slice(&area[..end]).expect("JSON")
}

/// Rewrites the JSON of both header copies of a 16 KiB-header image with
/// `edit` and recomputes their checksums: a hostile header that both tools
/// read past the checksum.
fn edit_headers(image: &mut [u8], edit: &dyn Fn(&mut serde_json::Value)) {
    for at in [0, 16384] {
        let mut v = header_json(image, at);
        edit(&mut v);
        let text = v.to_string();
        let area = &mut image[at + 4096..at + 16384];
        area.fill(0);
        area[..text.len()].copy_from_slice(text.as_bytes());
        let sum = mdu_luks2::header_checksum(&image[at..at + 16384]);
        image[at + 448..at + 512].fill(0);
        image[at + 448..at + 480].copy_from_slice(&sum);
    }
}

/// An mdu image of `plain` under `key` with cheap PBKDF2 (16 KiB headers).
fn small_image(dir: &Path, key: &str, plain: &[u8]) -> String {
    let plain = write(dir, "plain.bin", plain);
    let img = dir.join("img").to_str().unwrap().to_owned();
    let out = run(mdu()
        .args(["luks", "encrypt", "--key-file", key])
        .args(PBKDF2)
        .args([&plain, &img]));
    expect_code(&out, 0, "encrypt");
    img
}

#[test]
fn an_unbound_keyslot_opens_no_segment_and_dumps_only_with_unbound() {
    let name = "luks::hostile::an_unbound_keyslot_opens_no_segment_and_dumps_only_with_unbound";
    if !have_tool("cryptsetup", name) {
        return;
    }
    let mut rng = Rng::new(name);
    let d = scratch();
    let dir = d.path();
    let bound = write(dir, "bound.bin", &rng.bytes(24));
    let unbound = write(dir, "unbound.bin", &rng.bytes(24));
    let plain_bytes = rng.bytes(64 << 10);
    let img = small_image(dir, &bound, &plain_bytes);
    let add = cryptsetup(
        dir,
        &[
            &["luksAddKey", "-q", "--unbound", "--key-size", "512"][..],
            PBKDF2,
            &[img.as_str(), unbound.as_str()],
        ]
        .concat(),
    );
    expect_code(&add, 0, "luksAddKey --unbound");
    // cryptsetup opens nothing with the unbound keyslot's passphrase ...
    let test = cryptsetup(
        dir,
        &["open", "--test-passphrase", "--key-file", &unbound, &img],
    );
    expect_code(&test, 1, "cryptsetup open with the unbound passphrase");
    // ... and neither does mdu.
    let dec = dir.join("dec");
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &unbound, &img])
        .arg(&dec));
    expect_code(&out, 1, "decrypt with the unbound keyslot's passphrase");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unbound keyslot 1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dec.exists(), "no plaintext is written");
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &bound, &img])
        .arg(&dec));
    expect_code(&out, 0, "decrypt with the bound keyslot's passphrase");
    assert_eq!(std::fs::read(&dec).unwrap(), plain_bytes);

    // luksDump marks the keyslot "(unbound)"; mdu prints the same text.
    let ours = run(mdu().args(["luks", "dump", &img]));
    expect_code(&ours, 0, "dump");
    let theirs = cryptsetup(dir, &["luksDump", &img]);
    assert!(stdout(&theirs).contains("  1: luks2 (unbound)\n"));
    assert_eq!(stdout(&ours), stdout(&theirs), "luksDump");
    let json = run(mdu().args(["luks", "dump", "--json", &img]));
    expect_code(&json, 0, "dump --json");
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["keyslots"]["0"]["unbound"], serde_json::json!(false));
    assert_eq!(v["keyslots"]["1"]["unbound"], serde_json::json!(true));

    // --dump-volume-key refuses the unbound passphrase, as luksDump does.
    let theirs = cryptsetup(
        dir,
        &[
            "luksDump",
            "-q",
            "--dump-volume-key",
            "--key-file",
            &unbound,
            &img,
        ],
    );
    expect_code(&theirs, 1, "luksDump --dump-volume-key, unbound passphrase");
    let ours = run(mdu().args([
        "luks",
        "dump",
        "--dump-volume-key",
        "--key-file",
        &unbound,
        &img,
    ]));
    expect_code(&ours, 1, "dump --dump-volume-key, unbound passphrase");
    assert!(
        String::from_utf8_lossy(&ours.stderr).contains(
            "the passphrase opens only unbound keyslot 1, which holds no volume key of segment 0"
        ),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    // --unbound --key-slot 1 prints the unbound key as luksDump does.
    let args = ["--unbound", "--key-slot", "1", "--key-file", &unbound];
    let theirs = cryptsetup(dir, &[&["luksDump", "-q"][..], &args, &[&img]].concat());
    expect_code(&theirs, 0, "luksDump --unbound");
    let ours = run(mdu().args(["luks", "dump"]).args(args).arg(&img));
    expect_code(&ours, 0, "dump --unbound");
    let text = stdout(&theirs).replace(&img, "IMG");
    assert!(text.contains("Unbound Key:\t"), "{text}");
    assert_eq!(
        stdout(&ours).replace(&img, "IMG"),
        text,
        "luksDump --unbound"
    );
    // A bound keyslot holds no unbound key; --unbound needs --key-slot;
    // a wrong passphrase is a wrong passphrase.
    let out = run(mdu()
        .args(["luks", "dump", "--unbound", "--key-slot", "0", "--key-file"])
        .args([&bound, &img]));
    expect_code(&out, 1, "dump --unbound of the bound keyslot");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("keyslot 0 does not contain an unbound key")
    );
    let out = run(mdu().args(["luks", "dump", "--unbound", "--key-file", &unbound, &img]));
    expect_code(&out, 1, "dump --unbound without --key-slot");
    let out = run(mdu()
        .args(["luks", "dump", "--unbound", "--key-slot", "1", "--key-file"])
        .args([&bound, &img]));
    expect_code(&out, 2, "dump --unbound with a wrong passphrase");
    let out = run(mdu().args([
        "luks",
        "dump",
        "--dump-volume-key",
        "--key-file",
        &bound,
        &img,
    ]));
    expect_code(&out, 0, "dump --dump-volume-key, bound passphrase");
}

/// What mdu and cryptsetup do with one hostile header.
struct Hostile {
    what: &'static str,
    edit: Box<dyn Fn(&mut serde_json::Value)>,
    /// Whether the passphrase opens the volume (in both tools).
    opens: bool,
    /// Whether luksDump reads the header (in both tools).
    dumps: bool,
    /// Part of mdu's message when it refuses to open.
    reason: &'static str,
}

#[test]
fn hostile_headers_open_in_mdu_exactly_when_they_open_in_cryptsetup() {
    let name = "luks::hostile::hostile_headers_open_in_mdu_exactly_when_they_open_in_cryptsetup";
    if !have_tool("cryptsetup", name) {
        return;
    }
    use serde_json::json;
    let mut rng = Rng::new(name);
    let d = scratch();
    let dir = d.path();
    let key = write(dir, "key.bin", &rng.bytes(24));
    let plain_bytes = rng.bytes(64 << 10);
    let img = small_image(dir, &key, &plain_bytes);
    let base = std::fs::read(&img).unwrap();
    let backup = |flag: &'static str| -> Box<dyn Fn(&mut serde_json::Value)> {
        Box::new(move |v| v["segments"]["0"]["flags"] = json!([flag]))
    };
    let h = |what, edit: Box<dyn Fn(&mut serde_json::Value)>, opens, dumps, reason| Hostile {
        what,
        edit,
        opens,
        dumps,
        reason,
    };
    let cases = vec![
        h(
            "af.stripes 3999",
            Box::new(|v| v["keyslots"]["0"]["af"]["stripes"] = json!(3999)),
            true,
            true,
            "",
        ),
        h(
            "af.stripes 1",
            Box::new(|v| v["keyslots"]["0"]["af"]["stripes"] = json!(1)),
            true,
            true,
            "",
        ),
        h(
            "af.stripes 0",
            Box::new(|v| v["keyslots"]["0"]["af"]["stripes"] = json!(0)),
            true,
            true,
            "",
        ),
        h(
            "af.stripes 10000",
            Box::new(|v| v["keyslots"]["0"]["af"]["stripes"] = json!(10000)),
            true,
            true,
            "",
        ),
        h(
            "af.stripes -5",
            Box::new(|v| v["keyslots"]["0"]["af"]["stripes"] = json!(-5)),
            true,
            true,
            "",
        ),
        h(
            "af.stripes as a string",
            Box::new(|v| v["keyslots"]["0"]["af"]["stripes"] = json!("4000")),
            false,
            false,
            "keyslots.0.af.stripes",
        ),
        h(
            "priority 2",
            Box::new(|v| v["keyslots"]["0"]["priority"] = json!(2)),
            true,
            true,
            "",
        ),
        h(
            "priority 0",
            Box::new(|v| v["keyslots"]["0"]["priority"] = json!(0)),
            false,
            true,
            "priority 0",
        ),
        h(
            "priority 9",
            Box::new(|v| v["keyslots"]["0"]["priority"] = json!(9)),
            false,
            true,
            "priority 9",
        ),
        h(
            "priority -1",
            Box::new(|v| v["keyslots"]["0"]["priority"] = json!(-1)),
            false,
            true,
            "priority -1",
        ),
        h(
            "keyslot id \"00\"",
            Box::new(|v| {
                let k = v["keyslots"]["0"].take();
                v["keyslots"] = json!({ "00": k });
            }),
            false,
            false,
            "keyslots.00",
        ),
        h(
            "keyslot id \"00\" listed as \"00\"",
            Box::new(|v| {
                let k = v["keyslots"]["0"].take();
                v["keyslots"] = json!({ "00": k });
                v["digests"]["0"]["keyslots"] = json!(["00"]);
            }),
            false,
            false,
            "keyslots.00",
        ),
        h(
            "a digest listing keyslot \"00\"",
            Box::new(|v| v["digests"]["0"]["keyslots"] = json!(["00"])),
            false,
            false,
            "digests.0.keyslots",
        ),
        h(
            "a digest listing segment \"00\"",
            Box::new(|v| v["digests"]["0"]["segments"] = json!(["00"])),
            false,
            false,
            "digests.0.segments",
        ),
        h(
            "segment id \"00\"",
            Box::new(|v| {
                let s = v["segments"]["0"].take();
                v["segments"] = json!({ "00": s });
                v["digests"]["0"]["segments"] = json!(["00"]);
            }),
            false,
            false,
            "segments.00",
        ),
        h(
            "segment 1 only (a gap at 0)",
            Box::new(|v| {
                let s = v["segments"]["0"].take();
                v["segments"] = json!({ "1": s });
                v["digests"]["0"]["segments"] = json!(["1"]);
            }),
            false,
            false,
            "no segment 0",
        ),
        h(
            "two digests for one keyslot and segment",
            Box::new(|v| v["digests"]["1"] = v["digests"]["0"].clone()),
            false,
            false,
            "keyslot 0 is listed by 2 digests",
        ),
        h(
            "a keyslot in no digest",
            Box::new(|v| v["digests"]["0"]["keyslots"] = json!([])),
            false,
            false,
            "keyslot 0 is listed by 0 digests",
        ),
        h(
            "keyslot listed twice by its digest",
            Box::new(|v| v["digests"]["0"]["keyslots"] = json!(["0", "0"])),
            true,
            true,
            "",
        ),
        h(
            "a segment in no digest",
            Box::new(|v| v["digests"]["0"]["segments"] = json!([])),
            false,
            false,
            "segment 0 is bound to no digest",
        ),
        h(
            "the only segment flagged backup-previous",
            backup("backup-previous"),
            false,
            false,
            "no regular segment",
        ),
        h(
            "the only segment flagged backup-final",
            backup("backup-final"),
            false,
            false,
            "no regular segment",
        ),
        h(
            "the only segment flagged backup-moved-segment",
            backup("backup-moved-segment"),
            false,
            false,
            "no regular segment",
        ),
        h(
            "a segment flag that is not backup-*",
            backup("some-flag"),
            true,
            true,
            "",
        ),
        h(
            "a bound backup-previous segment after segment 0",
            Box::new(|v| {
                let mut s = v["segments"]["0"].clone();
                s["flags"] = json!(["backup-previous"]);
                s["size"] = json!("65536");
                v["segments"]["1"] = s;
                v["digests"]["0"]["segments"] = json!(["0", "1"]);
            }),
            true,
            true,
            "",
        ),
        h(
            "an unbound backup-previous segment after segment 0",
            Box::new(|v| {
                let mut s = v["segments"]["0"].clone();
                s["flags"] = json!(["backup-previous"]);
                v["segments"]["1"] = s;
            }),
            false,
            false,
            "segment 1 is bound to no digest",
        ),
        h(
            "a backup segment before a regular one",
            Box::new(|v| {
                let s = v["segments"]["0"].clone();
                v["segments"]["0"]["flags"] = json!(["backup-previous"]);
                v["segments"]["1"] = s;
                v["digests"]["0"]["segments"] = json!(["0", "1"]);
            }),
            false,
            false,
            "no regular segment",
        ),
    ];
    let hostile = dir.join("hostile").to_str().unwrap().to_owned();
    let dec = dir.join("dec");
    for c in cases {
        let mut image = base.clone();
        edit_headers(&mut image, &*c.edit);
        std::fs::write(&hostile, &image).unwrap();
        let cs_open = cryptsetup(
            dir,
            &["open", "--test-passphrase", "--key-file", &key, &hostile],
        );
        let cs_dump = cryptsetup(dir, &["luksDump", &hostile]);
        let _ = std::fs::remove_file(&dec);
        let ours = run(mdu()
            .args(["luks", "decrypt", "--key-file", &key, &hostile])
            .arg(&dec));
        let our_dump = run(mdu().args(["luks", "dump", &hostile]));
        let err = String::from_utf8_lossy(&ours.stderr);
        assert_eq!(
            cs_open.status.success(),
            c.opens,
            "{}: cryptsetup open: {}",
            c.what,
            String::from_utf8_lossy(&cs_open.stderr)
        );
        assert_eq!(cs_dump.status.success(), c.dumps, "{}: luksDump", c.what);
        if c.opens {
            expect_code(&ours, 0, c.what);
            assert_eq!(std::fs::read(&dec).unwrap(), plain_bytes, "{}", c.what);
        } else {
            expect_code(&ours, 1, c.what);
            assert!(err.contains(c.reason), "{}: {err}", c.what);
        }
        expect_code(&our_dump, if c.dumps { 0 } else { 1 }, c.what);
    }
}

#[test]
fn a_segment_bound_to_two_digests_is_refused() {
    // cryptsetup takes the first digest in the JSON text as the segment's
    // and opens through its keyslots only; mdu refuses the ambiguity.
    let name = "luks::hostile::a_segment_bound_to_two_digests_is_refused";
    if !have_tool("cryptsetup", name) {
        return;
    }
    let mut rng = Rng::new(name);
    let d = scratch();
    let dir = d.path();
    let first = write(dir, "first.bin", &rng.bytes(24));
    let second = write(dir, "second.bin", &rng.bytes(24));
    let img = small_image(dir, &first, &rng.bytes(8192));
    let add = cryptsetup(
        dir,
        &[
            &["luksAddKey", "-q", "--unbound", "--key-size", "512"][..],
            PBKDF2,
            &[img.as_str(), second.as_str()],
        ]
        .concat(),
    );
    expect_code(&add, 0, "luksAddKey --unbound");
    let mut image = std::fs::read(&img).unwrap();
    edit_headers(&mut image, &|v| {
        v["digests"]["1"]["segments"] = serde_json::json!(["0"])
    });
    std::fs::write(&img, &image).unwrap();
    let opens = |key: &str| {
        cryptsetup(dir, &["open", "--test-passphrase", "--key-file", key, &img])
            .status
            .success()
    };
    assert!(
        opens(&first) && !opens(&second),
        "cryptsetup uses digest 0 only"
    );
    for key in [&first, &second] {
        let out = run(mdu()
            .args(["luks", "decrypt", "--key-file", key, &img])
            .arg(dir.join("dec")));
        expect_code(&out, 1, "decrypt");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("segment 0 is bound to 2 digests"), "{err}");
    }
}

#[test]
fn a_header_naming_an_unsupported_cipher_dumps_and_fails_on_use() {
    // As cryptsetup: `luks dump` prints the spec as written; decrypt names
    // the field and what is supported.
    let d = scratch();
    let dir = d.path();
    let pass = write(dir, "pass", b"pw");
    let plain = write(dir, "plain", &[7u8; 4096]);
    let img = dir.join("img.luks").to_str().unwrap().to_owned();
    let out = run(mdu()
        .args(["luks", "encrypt", "--key-file", &pass, "--offset", "4096"])
        .args(PBKDF2)
        .args([&plain, &img]));
    expect_code(&out, 0, "luks encrypt");
    let mut image = std::fs::read(&img).unwrap();
    // Same length: the JSON area and checksums stay valid once resealed.
    for at in [0, 16384] {
        let area = &mut image[at + 4096..at + 16384];
        let text = String::from_utf8_lossy(area).into_owned();
        let pos = text.find("\"segments\"").unwrap();
        let seg = pos + text[pos..].find("aes-xts-plain64").unwrap();
        area[seg..seg + 15].copy_from_slice(b"aes-xts-elephnt");
        let sum = mdu_luks2::header_checksum(&image[at..at + 16384]);
        image[at + 448..at + 512].fill(0);
        image[at + 448..at + 480].copy_from_slice(&sum);
    }
    std::fs::write(&img, &image).unwrap();
    let out = run(mdu().args(["luks", "dump", &img]));
    expect_code(&out, 0, "dump");
    assert!(
        stdout(&out).contains("cipher: aes-xts-elephnt"),
        "{}",
        stdout(&out)
    );
    let back = dir.join("back").to_str().unwrap().to_owned();
    let out = run(mdu().args(["luks", "decrypt", "--key-file", &pass, &img, &back]));
    expect_code(&out, 1, "decrypt");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("segments.0.encryption") && err.contains("plain64"),
        "{err}"
    );
}
