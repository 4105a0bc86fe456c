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
        // A UUID of this run: cryptsetup locks a reencryption by its UUID
        // machine-wide (/run/cryptsetup), so two suites running at once
        // must not share one.
        let (u, v) = (
            rng.next_u64() ^ u64::from(std::process::id()) << 32,
            rng.next_u64(),
        );
        let uuid = format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            u >> 32,
            (u >> 16) & 0xffff,
            u & 0xfff,
            v >> 52,
            v & 0xffff_ffff_ffff
        );
        let uuid = uuid.as_str();
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
    let name = "luks::an_unbound_keyslot_opens_no_segment_and_dumps_only_with_unbound";
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
    expect_code(&out, 2, "dump --unbound without --key-slot");
    let out = run(mdu()
        .args(["luks", "dump", "--unbound", "--key-slot", "1", "--key-file"])
        .args([&bound, &img]));
    expect_code(&out, 1, "dump --unbound with a wrong passphrase");
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
    let name = "luks::hostile_headers_open_in_mdu_exactly_when_they_open_in_cryptsetup";
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
    let name = "luks::a_segment_bound_to_two_digests_is_refused";
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
fn format_parameters_are_refused_before_the_passphrase_is_read() {
    let d = scratch();
    let dir = d.path();
    let img = dir.join("img");
    // The key file does not exist: each bad parameter must be named first.
    let missing = dir.join("no-such-key-file");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--offset", "36028797018963968"],
            "--offset 36028797018963968",
        ),
        (
            &["--offset", "18446744073709551608"],
            "--offset 18446744073709551608",
        ),
        (&["--offset", "12"], "multiple of 8"),
        (&["--offset", "64"], "keyslot"),
        (&["--label", &"x".repeat(48)], "label"),
        (&["--subsystem", &"s".repeat(48)], "subsystem"),
        (&["--uuid", "not-a-uuid"], "UUID"),
        (&["--sector-size", "8192"], "sector"),
        (&["--key-size", "384"], "--key-size 384"),
        (
            &["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "999"],
            "1000 iterations",
        ),
        (&["--pbkdf", "argon2id", "--pbkdf-memory", "16"], "Argon2"),
        (&["--pbkdf", "argon2id", "--pbkdf-parallel", "0"], "Argon2"),
    ];
    for (args, want) in cases {
        let out = run(mdu()
            .args(["luks", "format", "--key-file"])
            .arg(&missing)
            .args(*args)
            .arg(&img));
        expect_code(&out, 2, &format!("{args:?}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            !err.contains("key file"),
            "{args:?} read the key file first: {err}"
        );
        assert!(!img.exists());
    }
}

#[test]
fn a_data_offset_of_512_tib_is_never_allocated() {
    // 2^40 sectors: the header region is written, the data offset is only
    // recorded. Where the file system cannot hold a file that large, a
    // clean error (not an abort) is the other acceptable outcome.
    let d = scratch();
    let dir = d.path();
    let key = write(dir, "key.bin", b"passphrase");
    let img = dir.join("img");
    let out = run(mdu()
        .args([
            "luks",
            "format",
            "--key-file",
            &key,
            "--offset",
            "1099511627776",
        ])
        .args(PBKDF2)
        .arg(&img));
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 2)),
        "format --offset 2^40 sectors: {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    if code == Some(0) {
        let json = run(mdu().args(["luks", "dump", "--json"]).arg(&img));
        expect_code(&json, 0, "dump --json");
        let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(
            v["metadata"]["segments"]["0"]["offset"],
            serde_json::json!("562949953421312")
        );
    }
}

#[test]
fn a_key_file_that_stat_calls_empty_is_read_to_its_end() {
    // procfs files report size 0; a pipe has no size.
    let proc_file = Path::new("/proc/sys/kernel/ostype");
    if !proc_file.exists() {
        eprintln!("SKIPPED: no {}", proc_file.display());
        return;
    }
    let pass = std::fs::read(proc_file).unwrap();
    assert!(!pass.is_empty());
    let d = scratch();
    let dir = d.path();
    let copy = write(dir, "copy.bin", &pass);
    let mut rng = Rng::new("luks::a_key_file_that_stat_calls_empty_is_read_to_its_end");
    let plain_bytes = rng.bytes(8192);
    let plain = write(dir, "plain.bin", &plain_bytes);
    let img = dir.join("img").to_str().unwrap().to_owned();
    let out = run(mdu()
        .args(["luks", "encrypt", "--key-file"])
        .arg(proc_file)
        .args(PBKDF2)
        .args([&plain, &img]));
    expect_code(&out, 0, "encrypt with a procfs key file");
    let dec = dir.join("dec");
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &copy, &img])
        .arg(&dec));
    expect_code(&out, 0, "decrypt with a regular copy of the passphrase");
    assert_eq!(std::fs::read(&dec).unwrap(), plain_bytes);
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file"])
        .arg(proc_file)
        .arg(&img)
        .arg(&dec));
    expect_code(&out, 0, "decrypt with the procfs key file");
    // A pipe.
    let mut child = mdu()
        .args(["luks", "decrypt", "--key-file", "/dev/stdin", &img])
        .arg(&dec)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&pass).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    expect_code(&out, 0, "decrypt with the passphrase on a pipe");
}

#[test]
fn a_weak_xts_key_gets_one_answer_from_crypt_and_luks() {
    // A volume key whose two aes-xts halves are equal: `mdu crypt` (a raw
    // key file) and `mdu luks` (a volume key file, then the image's key)
    // both refuse it naming --allow-weak-key, and with the option write the
    // same ciphertext.
    let d = scratch();
    let dir = d.path();
    let weak = write(dir, "weak.key", &[0x42; 64]);
    let pass = write(dir, "pass", b"pw");
    let plain_bytes = Rng::new("weak_xts_key").bytes(16 * 4096);
    let plain = write(dir, "plain", &plain_bytes);
    let crypt_out = dir.join("crypt.out").to_str().unwrap().to_owned();
    let img = dir.join("img.luks").to_str().unwrap().to_owned();
    let crypt = |weak_opt: &[&str]| {
        run(mdu()
            .args([
                "crypt",
                "encrypt",
                "--key-file",
                &weak,
                "--sector-size",
                "4096",
            ])
            .args(weak_opt)
            .args([&plain, &crypt_out]))
    };
    let luks = |weak_opt: &[&str]| {
        run(mdu()
            .args([
                "luks",
                "encrypt",
                "--key-file",
                &pass,
                "--volume-key-file",
                &weak,
            ])
            .args(["--sector-size", "4096", "--offset", "4096"])
            .args(PBKDF2)
            .args(weak_opt)
            .args([&plain, &img]))
    };
    for (what, out) in [("crypt", crypt(&[])), ("luks", luks(&[]))] {
        expect_code(&out, 2, &format!("{what} encrypt with a weak key"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--allow-weak-key"), "{what}: {err}");
        assert!(err.contains("halves"), "{what}: {err}");
    }
    assert!(!Path::new(&crypt_out).exists() && !Path::new(&img).exists());

    expect_code(
        &crypt(&["--allow-weak-key"]),
        0,
        "crypt encrypt --allow-weak-key",
    );
    expect_code(
        &luks(&["--allow-weak-key"]),
        0,
        "luks encrypt --allow-weak-key",
    );
    let image = std::fs::read(&img).unwrap();
    assert_eq!(
        image[2 << 20..],
        std::fs::read(&crypt_out).unwrap()[..],
        "the data segment is the plain mapping's ciphertext"
    );

    // Opening the image: refused without the option, the plaintext with it.
    let back = dir.join("back").to_str().unwrap().to_owned();
    let decrypt = |weak_opt: &[&str]| {
        run(mdu()
            .args(["luks", "decrypt", "--key-file", &pass])
            .args(weak_opt)
            .args([&img, &back]))
    };
    let out = decrypt(&[]);
    expect_code(&out, 2, "luks decrypt of a weak volume key");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-weak-key"));
    assert!(!Path::new(&back).exists());
    expect_code(
        &decrypt(&["--allow-weak-key"]),
        0,
        "luks decrypt --allow-weak-key",
    );
    assert_eq!(std::fs::read(&back).unwrap(), plain_bytes);
    for cmd in [
        &["crypt", "encrypt"][..],
        &["luks", "encrypt"],
        &["luks", "decrypt"],
    ] {
        let help = stdout(&run(mdu().args(cmd).arg("--help")));
        assert!(help.contains("--allow-weak-key"), "{cmd:?} --help");
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

/// `mdu luks check`: honest cryptsetup images under several option sets
/// (ciphers, key sizes, sector sizes, KDFs, header sizes, a second
/// keyslot) have no findings; an unbound keyslot is named (exit 1, JSON)
/// unless the policy allows it; a policy reports what differs. The hostile
/// header shapes are the library's tests (`mdu-luks2` `tests/check.rs`).
#[test]
fn check_accepts_cryptsetup_images_and_names_what_differs() {
    if !have_tool(
        "cryptsetup",
        "luks::check_accepts_cryptsetup_images_and_names_what_differs",
    ) {
        return;
    }
    let mut rng = Rng::new("luks::check_accepts_cryptsetup_images_and_names_what_differs");
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
    expect_code(&out, 2, "a misspelt policy field");
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
    let test = "luks::check_reports_leftovers_in_the_keyslots_area_and_wipes_them";
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

/// The library's volume API against cryptsetup both ways: sectors written
/// through `mdu_luks2::open` at scattered offsets are what an offline
/// `cryptsetup reencrypt --decrypt` of the detached-header device gives
/// back, and a device `cryptsetup reencrypt --encrypt` made reads back
/// through it as the original plaintext.
#[test]
fn the_library_volume_reads_and_writes_what_cryptsetup_decrypts_and_encrypts() {
    let test = "luks::the_library_volume_reads_and_writes_what_cryptsetup_decrypts_and_encrypts";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let mut rng = Rng::new(test);
    for sector in ["512", "4096"] {
        let d = scratch();
        let dir = d.path();
        let key = write(dir, "key.bin", &rng.bytes(24));
        let len = 2 << 20;
        let data = write(dir, "data", &vec![0u8; len]);
        let hdr = dir.join("hdr").to_str().unwrap().to_owned();
        let fmt = cryptsetup(
            dir,
            &[
                &[
                    "luksFormat",
                    "--type",
                    "luks2",
                    "--cipher",
                    "aes-xts-plain64",
                    "--key-size",
                    "512",
                    "--sector-size",
                    sector,
                    "-q",
                    "--key-file",
                    &key,
                    "--header",
                    &hdr,
                ][..],
                PBKDF2,
                &[data.as_str()],
            ]
            .concat(),
        );
        expect_code(&fmt, 0, "cryptsetup luksFormat --header");
        let pass = std::fs::read(&key).unwrap();
        let rw = |p: &str| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(p)
                .unwrap()
        };
        let ss: usize = sector.parse().unwrap();
        let mut model = vec![0u8; len];
        {
            let vol = mdu_luks2::open(&rw(&hdr), rw(&data), &pass).unwrap();
            assert_eq!(vol.len(), len as u64);
            // Zeros of ciphertext read as noise; every sector is written
            // once here, in scattered batches of 1..64 sectors.
            let mut at = 0;
            let mut order = Vec::new();
            while at < len {
                let n = ((1 + rng.below(64)) as usize * ss).min(len - at);
                order.push((at, n));
                at += n;
            }
            while !order.is_empty() {
                let (at, n) = order.swap_remove(rng.below(order.len() as u64) as usize);
                let bytes = rng.bytes(n);
                vol.write_at(&bytes, at as u64).unwrap();
                model[at..at + n].copy_from_slice(&bytes);
            }
            vol.sync().unwrap();
            let mut back = vec![0u8; len];
            vol.read_at(&mut back, 0).unwrap();
            assert!(back == model, "{sector}: read back through the volume");
        }
        let dec = cryptsetup(
            dir,
            &[
                &[
                    "reencrypt",
                    "--decrypt",
                    "--header",
                    &hdr,
                    "--force-offline-reencrypt",
                    "-q",
                    "--key-file",
                    &key,
                ][..],
                &[data.as_str()],
            ]
            .concat(),
        );
        expect_code(&dec, 0, "cryptsetup reencrypt --decrypt --header");
        assert!(
            std::fs::read(&data).unwrap() == model,
            "{sector}-byte sectors: cryptsetup decrypts what the volume wrote"
        );

        // And back: cryptsetup encrypts, the volume reads.
        let hdr2 = dir.join("hdr2").to_str().unwrap().to_owned();
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
                    "256",
                    "--sector-size",
                    sector,
                    "--header",
                    &hdr2,
                    "--force-offline-reencrypt",
                    "-q",
                    "--key-file",
                    &key,
                ][..],
                PBKDF2,
                &[data.as_str()],
            ]
            .concat(),
        );
        expect_code(&enc, 0, "cryptsetup reencrypt --encrypt --header");
        let vol = mdu_luks2::open(&rw(&hdr2), rw(&data), &pass).unwrap();
        let mut back = vec![0u8; len];
        for (i, chunk) in back.chunks_mut(64 << 10).enumerate() {
            vol.read_at(chunk, (i * (64 << 10)) as u64).unwrap();
        }
        assert!(
            back == model,
            "{sector}-byte sectors: the volume reads what cryptsetup encrypted"
        );
    }
}
