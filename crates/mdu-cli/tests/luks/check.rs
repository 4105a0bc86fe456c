//! `mdu luks check`: cryptsetup's images accepted with what differs named,
//! and leftovers in the keyslots area reported and wiped.

use super::*;

/// `mdu luks check`: honest cryptsetup images under several option sets
/// (ciphers, key sizes, sector sizes, KDFs, header sizes, a second
/// keyslot) have no findings; an unbound keyslot is named (exit 1, JSON)
/// unless the policy allows it; a policy reports what differs. The hostile
/// header shapes are the library's tests (`mdu-luks2` `tests/check.rs`).
#[test]
fn check_accepts_cryptsetup_images_and_names_what_differs() {
    if !have_tool(
        "cryptsetup",
        "luks::check::check_accepts_cryptsetup_images_and_names_what_differs",
    ) {
        return;
    }
    let mut rng = Rng::new("luks::check::check_accepts_cryptsetup_images_and_names_what_differs");
    let cases: Vec<(&str, &str, &str, &str, &[&str])> = vec![
        ("aes-xts-plain64", "512", "512", "16k", PBKDF2),
        ("aes-xts-plain64", "256", "4096", "64k", ARGON2ID),
        ("aes-cbc-essiv:sha256", "256", "512", "16k", ARGON2I),
        ("aes-xts-plain64", "512", "4096", "256k", PBKDF2_SHA512),
    ];
    for (cipher, bits, sector, metadata, kdf) in cases {
        let what = format!(
            "{cipher} {bits} bits, {sector}-byte sectors, {metadata}, {}",
            kdf[1]
        );
        let d = scratch();
        let dir = d.path();
        let key = write(dir, "key.bin", &rng.bytes(33));
        let img = write(dir, "img", &vec![0u8; 20 << 20]);
        let f = cryptsetup(
            dir,
            &[
                &["luksFormat", "--type", "luks2", "-q", "--key-file", &key][..],
                &[
                    "--cipher",
                    cipher,
                    "--key-size",
                    bits,
                    "--sector-size",
                    sector,
                ],
                &["--luks2-metadata-size", metadata],
                kdf,
                &[img.as_str()],
            ]
            .concat(),
        );
        expect_code(&f, 0, &what);
        let out = run(mdu().args(["luks", "check", &img]));
        expect_code(&out, 0, &what);
        assert!(
            stdout(&out).contains("no findings"),
            "{what}: {}",
            stdout(&out)
        );
        // A second keyslot; then an unbound one, which is named.
        let key2 = write(dir, "key2.bin", &rng.bytes(20));
        let add = cryptsetup(
            dir,
            &[
                &["luksAddKey", "-q", "--key-file", &key][..],
                PBKDF2,
                &[img.as_str(), key2.as_str()],
            ]
            .concat(),
        );
        expect_code(&add, 0, &what);
        expect_code(&run(mdu().args(["luks", "check", &img])), 0, &what);
        let unbound = cryptsetup(
            dir,
            &[
                &["luksAddKey", "-q", "--unbound", "--key-size", "256"][..],
                PBKDF2,
                &[img.as_str(), key2.as_str()],
            ]
            .concat(),
        );
        expect_code(&unbound, 0, &what);
        let out = run(mdu().args(["luks", "check", "--json", &img]));
        expect_code(&out, 1, &what);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["clean"], false, "{what}");
        assert_eq!(v["findings"][0]["kind"], "unbound-keyslot", "{what}: {v}");
        let allow = write(dir, "allow.json", br#"{"allow_unbound_keyslots": true}"#);
        expect_code(
            &run(mdu().args(["luks", "check", "--policy", &allow, &img])),
            0,
            &what,
        );
        // A policy that wants more than the image has.
        let strict = write(
            dir,
            "strict.json",
            br#"{"allow_unbound_keyslots": true, "cipher": "aes-xts-plain64", "key_size": 64, "sector_size": 4096, "max_keyslots": 1}"#,
        );
        let out = run(mdu().args(["luks", "check", "--policy", &strict, &img]));
        expect_code(&out, 1, &what);
        assert!(
            stdout(&out).contains("keyslots: policy:"),
            "{what}: {}",
            stdout(&out)
        );
    }
    // A policy with a misspelt field is refused as bad usage, not taken
    // for one that checks nothing.
    let d = scratch();
    let dir = d.path();
    let key = write(dir, "key.bin", b"passphrase");
    let img = write(dir, "img", &vec![0u8; 20 << 20]);
    let f = cryptsetup(
        dir,
        &[
            &["luksFormat", "--type", "luks2", "-q", "--key-file", &key][..],
            PBKDF2,
            &[img.as_str()],
        ]
        .concat(),
    );
    expect_code(&f, 0, "a policy field misspelt");
    let bad = write(dir, "bad.json", br#"{"cypher": "aes"}"#);
    let out = run(mdu().args(["luks", "check", "--policy", &bad, &img]));
    expect_code(&out, 1, "a misspelt policy field");
}

/// The `leftovers` of `mdu luks check --json IMAGE` as `(offset, len)`;
/// the command must succeed.
fn leftovers(img: &str, what: &str) -> Vec<(u64, u64)> {
    let out = run(mdu().args(["luks", "check", "--json", img]));
    expect_code(&out, 0, what);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["leftovers"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no leftovers list in {v}"))
        .iter()
        .map(|l| (l["offset"].as_u64().unwrap(), l["len"].as_u64().unwrap()))
        .collect()
}

/// Writes `len` bytes of text at `offset` of `img`.
fn plant(img: &str, offset: u64, len: usize) {
    use std::os::unix::fs::FileExt;
    let text: Vec<u8> = b"a line of plaintext a killed command left\n"
        .iter()
        .copied()
        .cycle()
        .take(len)
        .collect();
    let f = std::fs::OpenOptions::new().write(true).open(img).unwrap();
    f.write_all_at(&text, offset).unwrap();
}

/// `mdu luks check` warns of bytes in the keyslots area that no keyslot
/// names (plaintext planted in a free range: its offset and length, exit
/// status unchanged) and `--wipe-free-areas` refills them; a key change by
/// `mdu luks reencrypt` refills them before its first header write.
/// Images fresh from cryptsetup (luksFormat, luksAddKey, luksKillSlot,
/// reencrypt), whose free ranges are random, get no warning.
#[test]
fn check_reports_leftovers_in_the_keyslots_area_and_wipes_them() {
    let test = "luks::check::check_reports_leftovers_in_the_keyslots_area_and_wipes_them";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let d = scratch();
    let dir = d.path();
    let key = write(dir, "key.bin", b"passphrase");
    let key2 = write(dir, "key2.bin", b"another passphrase");
    let img = write(dir, "img", &vec![0u8; 20 << 20]);
    let cs = |args: &[&str], what: &str| {
        expect_code(&cryptsetup(dir, &[args, PBKDF2].concat()), 0, what);
    };
    cs(
        &[
            "luksFormat",
            "--type",
            "luks2",
            "-q",
            "--key-file",
            &key,
            &img,
        ],
        "luksFormat",
    );
    assert_eq!(leftovers(&img, "luksFormat"), [], "luksFormat");
    cs(
        &["luksAddKey", "-q", "--key-file", &key, &img, &key2],
        "luksAddKey",
    );
    assert_eq!(leftovers(&img, "luksAddKey"), [], "luksAddKey");
    expect_code(
        &cryptsetup(dir, &["luksKillSlot", "-q", &img, "0"]),
        0,
        "luksKillSlot",
    );
    assert_eq!(leftovers(&img, "luksKillSlot"), [], "luksKillSlot");
    cs(
        &[
            "reencrypt",
            "-q",
            "--force-offline-reencrypt",
            "--key-file",
            &key2,
            &img,
        ],
        "cryptsetup reencrypt",
    );
    assert_eq!(leftovers(&img, "cryptsetup reencrypt"), [], "reencrypt");

    // 8 KiB of text at 3 MiB, past every keyslot area.
    plant(&img, 3 << 20, 8192);
    assert_eq!(leftovers(&img, "planted"), [(3 << 20, 8192)]);
    let out = run(mdu().args(["luks", "check", &img]));
    expect_code(&out, 0, "a leftover is a warning");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("8192 bytes at offset 3145728") && err.contains("not named by any keyslot"),
        "{err}"
    );
    let out = run(mdu().args(["luks", "check", "--wipe-free-areas", &img]));
    expect_code(&out, 0, "--wipe-free-areas");
    assert!(
        stdout(&out).contains("refilled with random bytes"),
        "{}",
        stdout(&out)
    );
    assert_eq!(leftovers(&img, "after --wipe-free-areas"), []);
    let open = cryptsetup(
        dir,
        &["open", "--test-passphrase", "--key-file", &key2, &img],
    );
    expect_code(&open, 0, "the keyslot survives --wipe-free-areas");

    // A key change refills what a killed command left.
    plant(&img, 5 << 20, 4096);
    assert_eq!(leftovers(&img, "planted again"), [(5 << 20, 4096)]);
    let r = run(mdu().args(["luks", "reencrypt", "--key-file", &key2, &img]));
    expect_code(&r, 0, "mdu luks reencrypt");
    assert_eq!(leftovers(&img, "after mdu luks reencrypt"), []);
    let open = cryptsetup(
        dir,
        &["open", "--test-passphrase", "--key-file", &key2, &img],
    );
    expect_code(&open, 0, "the new keyslot opens");
}
