//! `mdu luks` against cryptsetup 2.6: images written by mdu open, dump and
//! decrypt in cryptsetup; images written by cryptsetup (`luksFormat`,
//! offline `reencrypt --encrypt`) decrypt in mdu to the original bytes.
//! Cheap KDF settings keep every case fast.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{Rng, expect_code, have_tool, mdu, run, scratch};

const PBKDF2: &[&str] = &["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"];
const PBKDF2_SHA512: &[&str] = &[
    "--pbkdf",
    "pbkdf2",
    "--hash",
    "sha512",
    "--pbkdf-force-iterations",
    "1000",
];
const PBKDF2_SHA1: &[&str] = &[
    "--pbkdf",
    "pbkdf2",
    "--hash",
    "sha1",
    "--pbkdf-force-iterations",
    "1000",
];
const ARGON2ID: &[&str] = &[
    "--pbkdf",
    "argon2id",
    "--pbkdf-memory",
    "32",
    "--pbkdf-force-iterations",
    "4",
    "--pbkdf-parallel",
    "1",
];
const ARGON2I: &[&str] = &[
    "--pbkdf",
    "argon2i",
    "--pbkdf-memory",
    "64",
    "--pbkdf-force-iterations",
    "4",
    "--pbkdf-parallel",
    "2",
];

/// Under the emulator (CI's qemu run) fewer cases run.
fn emulated() -> bool {
    std::env::var("MDU_EMULATED").is_ok_and(|v| v == "1")
}

/// cryptsetup, run in `dir` (offline reencryption writes a temporary file
/// into the current directory).
fn cryptsetup(dir: &Path, args: &[&str]) -> Output {
    run(Command::new("cryptsetup").current_dir(dir).args(args))
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_owned()
}

/// The bytes after `MK dump:` in a `--dump-volume-key` listing.
fn mk_dump(out: &Output) -> Vec<u8> {
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.find("MK dump:").expect("an MK dump line") + "MK dump:".len();
    text[start..]
        .split_whitespace()
        .map(|h| u8::from_str_radix(h, 16).expect("hex byte"))
        .collect()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn mdu_images_open_dump_and_decrypt_in_cryptsetup() {
    if !have_tool(
        "cryptsetup",
        "luks::mdu_images_open_dump_and_decrypt_in_cryptsetup",
    ) {
        return;
    }
    let mut rng = Rng::new("luks::mdu_images_open_dump_and_decrypt_in_cryptsetup");
    let mut cases: Vec<(&str, &str, &str, &[&str])> = vec![
        ("aes-xts-plain64", "512", "4096", PBKDF2),
        ("aes-xts-plain64", "256", "512", ARGON2ID),
    ];
    if !emulated() {
        cases.push(("aes-cbc-essiv:sha256", "128", "512", ARGON2I));
        cases.push(("aes-xts-plain64", "512", "2048", ARGON2ID));
        cases.push(("aes-xts-plain64", "512", "1024", PBKDF2_SHA512));
        cases.push(("aes-cbc-essiv:sha256", "256", "4096", PBKDF2_SHA1));
    }
    for (cipher, bits, sector, kdf) in cases {
        let what = format!(
            "{cipher} {bits} bits, {sector}-byte sectors, {}",
            kdf.join(" ")
        );
        let d = scratch();
        let dir = d.path();
        let key_len = 1 + rng.below(100) as usize;
        let key = write(dir, "key.bin", &rng.bytes(key_len));
        let wrong = write(dir, "wrong.bin", b"not the passphrase");
        let nbytes: usize = bits.parse::<usize>().unwrap() / 8;
        let vk_bytes = rng.bytes(nbytes);
        let vk = write(dir, "vk.bin", &vk_bytes);
        let plain_bytes = rng.bytes((1 << 20) + 3 * 4096);
        let plain = write(dir, "plain.bin", &plain_bytes);
        let img = dir.join("img.luks").to_str().unwrap().to_owned();
        let uuid = "2f0e1b2c-3d4e-4f50-8162-738495a6b7c8";
        let out = run(mdu()
            .args(["luks", "encrypt", "--key-file", &key, "--cipher", cipher])
            .args(["--key-size", bits, "--sector-size", sector])
            .args(kdf)
            .args([
                "--volume-key-file",
                &vk,
                "--uuid",
                uuid,
                "--label",
                "mdu test",
            ])
            .args([&plain, &img]));
        expect_code(&out, 0, &what);

        // luksDump parses it and says what `mdu luks dump` says.
        let cs_dump = cryptsetup(dir, &["luksDump", &img]);
        expect_code(&cs_dump, 0, &format!("{what}: cryptsetup luksDump"));
        let our_dump = run(mdu().args(["luks", "dump", &img]));
        expect_code(&our_dump, 0, &what);
        assert_eq!(stdout(&our_dump), stdout(&cs_dump), "{what}: luksDump");
        assert!(stdout(&cs_dump).contains(uuid) && stdout(&cs_dump).contains("mdu test"));

        // The key file opens it; another does not.
        let ok = cryptsetup(
            dir,
            &["open", "--test-passphrase", "--key-file", &key, &img],
        );
        expect_code(&ok, 0, &format!("{what}: open --test-passphrase"));
        let bad = cryptsetup(
            dir,
            &["open", "--test-passphrase", "--key-file", &wrong, &img],
        );
        expect_code(&bad, 2, &format!("{what}: open with a wrong key"));

        // Both dump the volume key mdu used.
        let cs_vk = cryptsetup(
            dir,
            &[
                "luksDump",
                "--dump-volume-key",
                "-q",
                "--key-file",
                &key,
                &img,
            ],
        );
        expect_code(&cs_vk, 0, &format!("{what}: --dump-volume-key"));
        assert_eq!(mk_dump(&cs_vk), vk_bytes, "{what}: cryptsetup's volume key");
        let our_vk = run(mdu().args([
            "luks",
            "dump",
            "--dump-volume-key",
            "--key-file",
            &key,
            &img,
        ]));
        expect_code(&our_vk, 0, &what);
        assert_eq!(
            stdout(&our_vk),
            stdout(&cs_vk),
            "{what}: volume key listing"
        );

        // cryptsetup's offline decryption gives the plaintext back.
        let hdr = dir.join("exported.hdr").to_str().unwrap().to_owned();
        let dec = cryptsetup(
            dir,
            &[
                "reencrypt",
                "--decrypt",
                "--header",
                &hdr,
                "--force-offline-reencrypt",
                "-q",
                "--key-file",
                &key,
                &img,
            ],
        );
        expect_code(&dec, 0, &format!("{what}: reencrypt --decrypt"));
        let back = std::fs::read(&img).unwrap();
        assert!(back.len() >= plain_bytes.len());
        assert!(
            back[..plain_bytes.len()] == plain_bytes[..],
            "{what}: cryptsetup decrypted something else"
        );
    }
}

#[test]
fn cryptsetup_encrypted_images_decrypt_to_the_original() {
    if !have_tool(
        "cryptsetup",
        "luks::cryptsetup_encrypted_images_decrypt_to_the_original",
    ) {
        return;
    }
    let mut rng = Rng::new("luks::cryptsetup_encrypted_images_decrypt_to_the_original");
    let mut cases: Vec<(&str, &[&str])> = vec![("4096", PBKDF2), ("512", ARGON2ID)];
    if !emulated() {
        cases.push(("512", PBKDF2));
        cases.push(("4096", ARGON2ID));
    }
    for (sector, kdf) in cases {
        let what = format!("reencrypt --encrypt, {sector}-byte sectors, {}", kdf[1]);
        let d = scratch();
        let dir = d.path();
        let key = write(dir, "key.bin", &rng.bytes(32));
        // 32 MiB of it make room for the header (cryptsetup's
        // --reduce-device-size); the rest is the plaintext.
        let payload = (1 << 20) + 5 * 4096;
        let original = rng.bytes((32 << 20) + payload);
        let img = write(dir, "img", &original);
        let enc = cryptsetup(
            dir,
            &[
                &[
                    "reencrypt",
                    "--encrypt",
                    "--type",
                    "luks2",
                    "--cipher",
                    "aes-xts-plain64",
                    "--key-size",
                    "512",
                    "--sector-size",
                    sector,
                    "--reduce-device-size",
                    "32M",
                    "--force-offline-reencrypt",
                    "-q",
                    "--key-file",
                    &key,
                ][..],
                kdf,
                &[img.as_str()],
            ]
            .concat(),
        );
        expect_code(&enc, 0, &what);
        let out = dir.join("plain.out");
        let dec = run(mdu()
            .args(["luks", "decrypt", "--key-file", &key, &img])
            .arg(&out));
        expect_code(&dec, 0, &what);
        let back = std::fs::read(&out).unwrap();
        // The segment runs to the end of the file; its last 16 MiB are
        // cryptsetup's scratch space.
        assert_eq!(back.len(), original.len() - (16 << 20), "{what}");
        assert!(
            back[..payload] == original[..payload],
            "{what}: wrong plaintext"
        );
    }
}

#[test]
fn luks_format_images_unlock_and_match_plain_mode() {
    if !have_tool(
        "cryptsetup",
        "luks::luks_format_images_unlock_and_match_plain_mode",
    ) {
        return;
    }
    let mut rng = Rng::new("luks::luks_format_images_unlock_and_match_plain_mode");
    for (sector, kdf, metadata) in [("512", PBKDF2, "16k"), ("4096", ARGON2ID, "64k")] {
        let what = format!(
            "luksFormat, {sector}-byte sectors, {}, {metadata} headers",
            kdf[1]
        );
        let d = scratch();
        let dir = d.path();
        let key = write(dir, "key.bin", &rng.bytes(40));
        let vk_bytes = rng.bytes(64);
        let vk = write(dir, "vk.bin", &vk_bytes);
        // Data at 2 MiB (--offset 4096), then 256 KiB of data sectors.
        let img = write(dir, "img", &rng.bytes((2 << 20) + (256 << 10)));
        let f = cryptsetup(
            dir,
            &[
                &[
                    "luksFormat",
                    "--type",
                    "luks2",
                    "-q",
                    "--key-file",
                    &key,
                    "--sector-size",
                    sector,
                    "--offset",
                    "4096",
                    "--volume-key-file",
                    &vk,
                    "--luks2-metadata-size",
                    metadata,
                ][..],
                kdf,
                &[img.as_str()],
            ]
            .concat(),
        );
        expect_code(&f, 0, &what);
        let cs_dump = cryptsetup(dir, &["luksDump", &img]);
        let our_dump = run(mdu().args(["luks", "dump", &img]));
        expect_code(&our_dump, 0, &what);
        assert_eq!(stdout(&our_dump), stdout(&cs_dump), "{what}: luksDump");
        let our_vk = run(mdu().args([
            "luks",
            "dump",
            "--dump-volume-key",
            "--key-file",
            &key,
            &img,
        ]));
        expect_code(&our_vk, 0, &what);
        assert_eq!(mk_dump(&our_vk), vk_bytes, "{what}: volume key");
        // The data area decrypts as a plain dm-crypt mapping with that key
        // at that offset would.
        let a = dir.join("a.out");
        let b = dir.join("b.out");
        let dec = run(mdu()
            .args(["luks", "decrypt", "--key-file", &key, &img])
            .arg(&a));
        expect_code(&dec, 0, &what);
        let plain = run(mdu()
            .args(["crypt", "decrypt", "--key-file", &vk, "--offset", "4096"])
            .args(["--sector-size", sector, &img])
            .arg(&b));
        expect_code(&plain, 0, &what);
        assert_eq!(
            std::fs::read(&a).unwrap(),
            std::fs::read(&b).unwrap(),
            "{what}"
        );
    }
}

#[test]
fn luks_format_writes_the_header_over_an_existing_image_only() {
    let d = scratch();
    let dir = d.path();
    let key = write(dir, "key.bin", b"correct horse");
    let tail: Vec<u8> = (0..8192u32).map(|i| (i % 251) as u8).collect();
    let mut old = vec![0xeeu8; 16 << 20];
    old.extend_from_slice(&tail);
    let img = write(dir, "img", &old);
    let out = run(mdu()
        .args(["luks", "format", "--key-file", &key])
        .args(PBKDF2)
        .arg(&img));
    expect_code(&out, 0, "format");
    let now = std::fs::read(&img).unwrap();
    assert_eq!(now.len(), old.len());
    assert_eq!(&now[16 << 20..], &tail[..], "the data area was touched");
    assert_eq!(&now[..6], b"LUKS\xba\xbe");
    // A new file gets the header region only.
    let fresh = dir.join("fresh");
    let out = run(mdu()
        .args(["luks", "format", "--key-file", &key])
        .args(ARGON2ID)
        .arg(&fresh));
    expect_code(&out, 0, "format a new file");
    assert_eq!(std::fs::metadata(&fresh).unwrap().len(), 16 << 20);
    if have_tool(
        "cryptsetup",
        "luks::luks_format_writes_the_header_over_an_existing_image_only",
    ) {
        for p in [img.as_str(), fresh.to_str().unwrap()] {
            let ok = cryptsetup(dir, &["open", "--test-passphrase", "--key-file", &key, p]);
            expect_code(&ok, 0, "cryptsetup opens mdu's luks format");
        }
    }
}

#[test]
fn wrong_keys_and_damaged_headers_exit_1_bad_usage_exits_2() {
    let mut rng = Rng::new("luks::wrong_keys_and_damaged_headers_exit_1_bad_usage_exits_2");
    let d = scratch();
    let dir = d.path();
    let key = write(dir, "key.bin", &rng.bytes(20));
    let wrong = write(dir, "wrong.bin", &rng.bytes(20));
    let plain_bytes = rng.bytes(64 * 512);
    let plain = write(dir, "plain.bin", &plain_bytes);
    let img = dir.join("img").to_str().unwrap().to_owned();
    let out = run(mdu()
        .args([
            "luks",
            "encrypt",
            "--key-file",
            &key,
            "--sector-size",
            "512",
        ])
        .args(PBKDF2)
        .args([&plain, &img]));
    expect_code(&out, 0, "encrypt");
    let dec = dir.join("dec");

    // A file system that refuses direct I/O (tmpfs) gets buffered writes.
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        let on_tmpfs = tempfile::Builder::new()
            .prefix("mdu-cli-test-")
            .tempdir_in(shm)
            .unwrap();
        let out_path = on_tmpfs.path().join("plain");
        let out = run(mdu()
            .args(["luks", "decrypt", "--key-file", &key, &img])
            .arg(&out_path));
        expect_code(&out, 0, "decrypt onto tmpfs");
        assert_eq!(std::fs::read(&out_path).unwrap(), plain_bytes);
    }

    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &wrong, &img])
        .arg(&dec));
    expect_code(&out, 1, "wrong passphrase");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no key available"));
    assert!(!dec.exists());

    // A damaged primary header: a warning, and the secondary opens it.
    let good = std::fs::read(&img).unwrap();
    let mut bad = good.clone();
    bad[4096 + 20] ^= 0x40;
    std::fs::write(&img, &bad).unwrap();
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &key, &img])
        .arg(&dec));
    expect_code(&out, 0, "damaged primary");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning") && err.contains("secondary"),
        "{err}"
    );
    assert_eq!(std::fs::read(&dec).unwrap(), plain_bytes);
    let dump = run(mdu().args(["luks", "dump", "--json", &img]));
    expect_code(&dump, 0, "dump --json");
    let v: serde_json::Value = serde_json::from_slice(&dump.stdout).unwrap();
    assert_eq!(v["header_copy"], "secondary");
    assert!(v["primary_error"].as_str().unwrap().contains("checksum"));

    // Both copies damaged: exit 1, nothing written.
    bad[16384 + 4096 + 20] ^= 0x40;
    std::fs::write(&img, &bad).unwrap();
    std::fs::remove_file(&dec).unwrap();
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &key, &img])
        .arg(&dec));
    expect_code(&out, 1, "both headers damaged");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no valid LUKS2 header"));
    assert!(!dec.exists());

    // A payload cut short of a whole sector: damaged, exit 1.
    std::fs::write(&img, &good[..good.len() - 100]).unwrap();
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &key, &img])
        .arg(&dec));
    expect_code(&out, 1, "truncated payload");

    // Bad usage.
    let out = run(mdu()
        .args(["luks", "encrypt", "--key-file", &key, "--key-size", "384"])
        .args([&plain, &img]));
    expect_code(&out, 2, "--key-size 384");
    let odd = write(dir, "odd.bin", &rng.bytes(1000));
    let out = run(mdu()
        .args(["luks", "encrypt", "--key-file", &key])
        .args(PBKDF2)
        .args([&odd, &img]));
    expect_code(&out, 2, "a plaintext of partial sectors");
    let out = run(mdu()
        .args([
            "luks",
            "encrypt",
            "--key-file",
            &key,
            "--pbkdf-force-iterations",
            "10",
        ])
        .args(["--pbkdf", "pbkdf2", &plain, &img]));
    expect_code(&out, 2, "too few iterations");
    let out = run(mdu().args(["luks", "dump", "--dump-volume-key", &img]));
    expect_code(&out, 2, "--dump-volume-key without --key-file");
    // No temporary file was left behind.
    let left: Vec<String> = common::entries(dir)
        .into_iter()
        .filter(|n| n.starts_with(".mdu-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn keyslots_added_and_killed_by_cryptsetup_are_honoured() {
    if !have_tool(
        "cryptsetup",
        "luks::keyslots_added_and_killed_by_cryptsetup_are_honoured",
    ) {
        return;
    }
    let mut rng = Rng::new("luks::keyslots_added_and_killed_by_cryptsetup_are_honoured");
    let d = scratch();
    let dir = d.path();
    let first = write(dir, "first.bin", &rng.bytes(24));
    let second = write(dir, "second.bin", &rng.bytes(24));
    let plain_bytes = rng.bytes(256 << 10);
    let plain = write(dir, "plain.bin", &plain_bytes);
    let img = dir.join("img").to_str().unwrap().to_owned();
    let out = run(mdu()
        .args(["luks", "encrypt", "--key-file", &first])
        .args(ARGON2ID)
        .args([&plain, &img]));
    expect_code(&out, 0, "encrypt");
    // cryptsetup rewrites both headers (a higher seqid) with a second
    // keyslot in the next free area.
    let add = cryptsetup(
        dir,
        &[
            &["luksAddKey", "-q", "--key-file", &first][..],
            PBKDF2,
            &[img.as_str(), second.as_str()],
        ]
        .concat(),
    );
    expect_code(&add, 0, "luksAddKey");
    let ours = run(mdu().args(["luks", "dump", &img]));
    expect_code(&ours, 0, "dump after luksAddKey");
    assert_eq!(
        stdout(&ours),
        stdout(&cryptsetup(dir, &["luksDump", &img])),
        "luksDump after luksAddKey"
    );
    assert!(stdout(&ours).contains("  1: luks2"));
    let dec = dir.join("dec");
    for key in [&first, &second] {
        let out = run(mdu()
            .args(["luks", "decrypt", "--key-file", key, &img])
            .arg(&dec));
        expect_code(&out, 0, "decrypt through either keyslot");
        assert_eq!(std::fs::read(&dec).unwrap(), plain_bytes);
    }
    let kill = cryptsetup(dir, &["luksKillSlot", "-q", &img, "0"]);
    expect_code(&kill, 0, "luksKillSlot 0");
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &first, &img])
        .arg(&dec));
    expect_code(&out, 1, "the killed keyslot's passphrase");
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &second, &img])
        .arg(&dec));
    expect_code(&out, 0, "the remaining keyslot");
    assert_eq!(std::fs::read(&dec).unwrap(), plain_bytes);
}

#[test]
fn help_names_every_luks_subcommand_and_option() {
    for path in [
        &["luks"][..],
        &["luks", "format"],
        &["luks", "encrypt"],
        &["luks", "decrypt"],
        &["luks", "dump"],
    ] {
        let out = run(mdu().args(path).arg("--help"));
        expect_code(&out, 0, &format!("{path:?} --help"));
        assert!(stdout(&out).contains("Usage: mdu luks"), "{path:?}");
    }
    let text = stdout(&run(mdu().args(["luks", "encrypt", "--help"])));
    for opt in [
        "--key-file",
        "--cipher",
        "--key-size",
        "--sector-size",
        "--pbkdf",
        "--pbkdf-force-iterations",
        "--pbkdf-memory",
        "--pbkdf-parallel",
        "--hash",
        "--uuid",
        "--label",
        "--subsystem",
        "--volume-key-file",
        "--offset",
        "--threads",
    ] {
        assert!(text.contains(opt), "luks encrypt --help lacks {opt}");
    }
    let text = stdout(&run(mdu().args(["luks", "dump", "--help"])));
    for opt in ["--json", "--dump-volume-key", "--key-file"] {
        assert!(text.contains(opt), "luks dump --help lacks {opt}");
    }
    let out = run(mdu().args(["luks", "encrypt", "--pbkdf", "scrypt", "a", "b"]));
    expect_code(&out, 2, "an unknown --pbkdf");
}
