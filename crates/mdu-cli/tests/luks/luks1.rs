//! LUKS1 images both ways between mdu and cryptsetup: cryptsetup's images
//! of every hash and AES mode dump identically in mdu, unlock, and decrypt
//! to what the Python reference decrypts with the volume key; mdu's images
//! dump, open and refuse a wrong passphrase in cryptsetup, laid out as
//! cryptsetup lays them out; key slots either tool adds or kills are
//! honoured by the other. (Serpent and Twofish images cannot be formatted
//! by cryptsetup without device-mapper: the library's tests cover them.)

use mdu_luks2::luks1::{Header, add_keyslot, kill_keyslot};

use super::*;
use common::have_python_cryptography;

const HASHES: [&str; 5] = ["sha1", "sha256", "sha512", "ripemd160", "whirlpool"];
/// A cipher, its key bits, and the chain and IV mode of the Python
/// reference.
type Cipher = (&'static str, &'static str, &'static str, &'static str);

const CIPHERS: [Cipher; 4] = [
    ("aes-xts-plain64", "512", "xts", "plain64"),
    ("aes-xts-plain64", "256", "xts", "plain64"),
    ("aes-cbc-essiv:sha256", "256", "cbc", "essiv:sha256"),
    ("aes-cbc-plain", "128", "cbc", "plain"),
];

/// Every hash with every cipher; under the emulator each hash once.
fn cases() -> Vec<(&'static str, Cipher)> {
    let mut v = Vec::new();
    for (h, hash) in HASHES.into_iter().enumerate() {
        for (c, cipher) in CIPHERS.into_iter().enumerate() {
            if !emulated() || c == h % CIPHERS.len() {
                v.push((hash, cipher));
            }
        }
    }
    v
}

const FORCE: &[&str] = &["--pbkdf-force-iterations", "1000"];

/// The words of `parts`, in order.
fn cat<'a>(parts: &[&[&'a str]]) -> Vec<&'a str> {
    parts.concat()
}

fn ok(out: &Output, what: &str) {
    expect_code(out, 0, what);
}

/// The value after `label` in a luksDump listing.
fn field(dump: &str, label: &str) -> String {
    dump.lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?} in {dump}"))
        .trim()
        .to_owned()
}

#[test]
fn cryptsetup_luks1_images_dump_unlock_and_decrypt_in_mdu() {
    let test = "luks::luks1::cryptsetup_luks1_images_dump_unlock_and_decrypt_in_mdu";
    if !have_tool("cryptsetup", test) || !have_python_cryptography(test) {
        return;
    }
    let mut rng = Rng::new(test);
    let d = scratch();
    let mut manifest = Vec::new();
    let mut checks = Vec::new();
    for (n, (hash, (cipher, bits, chain, mode))) in cases().into_iter().enumerate() {
        let what = format!("{hash} {cipher} {bits}");
        let dir = d.path().join(n.to_string());
        std::fs::create_dir(&dir).unwrap();
        let pass_len = 1 + rng.below(64) as usize;
        let pass = write(&dir, "pass", &rng.bytes(pass_len));
        let wrong = write(&dir, "wrong", b"not it");
        let vk_bytes = rng.bytes(bits.parse::<usize>().unwrap() / 8);
        let vk = write(&dir, "vk", &vk_bytes);
        // Random bytes after the header stand for ciphertext: 16 KiB
        // after the payload offset cryptsetup picks (the key slots rounded
        // up to 1 MiB).
        let payload_bytes = if bits == "128" { 1 << 20 } else { 2 << 20 };
        let img = write(&dir, "img", &rng.bytes(payload_bytes + 16384));
        ok(
            &cryptsetup(
                &dir,
                &cat(&[
                    &["luksFormat", "-q", "--type", "luks1", "--hash", hash],
                    &[
                        "--cipher",
                        cipher,
                        "--key-size",
                        bits,
                        "--volume-key-file",
                        &vk,
                    ],
                    FORCE,
                    &["--key-file", &pass, &img],
                ]),
            ),
            &what,
        );
        let theirs = cryptsetup(&dir, &["luksDump", &img]);
        let ours = run(mdu().args(["luks", "dump", &img]));
        ok(&ours, &what);
        assert_eq!(stdout(&ours), stdout(&theirs), "{what}: luksDump");
        let theirs = cryptsetup(
            &dir,
            &[
                "luksDump",
                "--dump-volume-key",
                "-q",
                "--key-file",
                &pass,
                &img,
            ],
        );
        let ours = run(mdu().args([
            "luks",
            "dump",
            "--dump-volume-key",
            "--key-file",
            &pass,
            &img,
        ]));
        ok(&ours, &what);
        assert_eq!(stdout(&ours), stdout(&theirs), "{what}: --dump-volume-key");
        assert_eq!(mk_dump(&ours), vk_bytes, "{what}");

        let plain = dir.join("plain").to_str().unwrap().to_owned();
        ok(
            &run(mdu().args(["luks", "decrypt", "--key-file", &pass, &img, &plain])),
            &what,
        );
        let refused = run(mdu().args(["luks", "decrypt", "--key-file", &wrong, &img, &plain]));
        assert!(
            !refused.status.success(),
            "{what}: a wrong passphrase decrypted"
        );
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains("passphrase"),
            "{what}"
        );
        let payload: u64 = field(&stdout(&ours), "Payload offset:").parse().unwrap();
        assert_eq!(payload * 512, payload_bytes as u64, "{what}");
        let reference = dir.join("reference").to_str().unwrap().to_owned();
        manifest.push(serde_json::json!({
            "op": "decrypt", "chain": chain, "mode": mode, "key": vk,
            "sector_size": 512, "iv_offset": 0, "large": false, "offset": payload,
            "input": img, "output": reference,
        }));
        checks.push((what, plain, reference));
    }
    let m = d.path().join("manifest.json");
    std::fs::write(&m, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dmcrypt_ref.py");
    ok(
        &run(Command::new("python3").arg(script).arg(&m)),
        "the Python reference",
    );
    for (what, plain, reference) in checks {
        let ours = std::fs::read(&plain).unwrap();
        assert!(!ours.is_empty(), "{what}");
        assert!(
            ours == std::fs::read(&reference).unwrap(),
            "{what}: the data differ from the reference"
        );
    }
}

#[test]
fn mdu_luks1_images_open_dump_and_are_laid_out_as_in_cryptsetup() {
    let test = "luks::luks1::mdu_luks1_images_open_dump_and_are_laid_out_as_in_cryptsetup";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let mut rng = Rng::new(test);
    for (hash, (cipher, bits, _, _)) in cases() {
        let what = format!("{hash} {cipher} {bits}");
        let d = scratch();
        let dir = d.path();
        let pass_len = 1 + rng.below(64) as usize;
        let pass = write(dir, "pass", &rng.bytes(pass_len));
        let wrong = write(dir, "wrong", b"not it");
        let vk_bytes = rng.bytes(bits.parse::<usize>().unwrap() / 8);
        let vk = write(dir, "vk", &vk_bytes);
        let img = dir.join("img").to_str().unwrap().to_owned();
        ok(
            &run(mdu()
                .args([
                    "luks", "format", "--type", "luks1", "--hash", hash, "--cipher", cipher,
                ])
                .args(["--key-size", bits, "--volume-key-file", &vk])
                .args(FORCE)
                .args(["--key-file", &pass, &img])),
            &what,
        );
        let theirs = cryptsetup(dir, &["luksDump", &img]);
        ok(&theirs, &what);
        let ours = run(mdu().args(["luks", "dump", &img]));
        assert_eq!(stdout(&ours), stdout(&theirs), "{what}: luksDump");
        ok(
            &cryptsetup(
                dir,
                &["open", "--test-passphrase", "--key-file", &pass, &img],
            ),
            &what,
        );
        let refused = cryptsetup(
            dir,
            &["open", "--test-passphrase", "--key-file", &wrong, &img],
        );
        assert!(
            !refused.status.success(),
            "{what}: cryptsetup took a wrong passphrase"
        );
        let theirs = cryptsetup(
            dir,
            &[
                "luksDump",
                "--dump-volume-key",
                "-q",
                "--key-file",
                &pass,
                &img,
            ],
        );
        assert_eq!(mk_dump(&theirs), vk_bytes, "{what}");
        assert_eq!(
            std::fs::metadata(&img).unwrap().len() / 512,
            field(&stdout(&ours), "Payload offset:")
                .parse::<u64>()
                .unwrap()
        );

        // The layout of cryptsetup's own image of the same parameters.
        if hash == "sha256" {
            let same = write(dir, "same", &vec![0u8; 4 << 20]);
            ok(
                &cryptsetup(
                    dir,
                    &cat(&[
                        &["luksFormat", "-q", "--type", "luks1", "--hash", hash],
                        &["--cipher", cipher, "--key-size", bits],
                        FORCE,
                        &["--key-file", &pass, &same],
                    ]),
                ),
                &what,
            );
            let layout = |dump: &str| -> Vec<String> {
                dump.lines()
                    .filter(|l| {
                        [
                            "Payload offset",
                            "MK bits",
                            "Key Slot",
                            "\tKey material",
                            "\tAF stripes",
                            "MK iterations",
                        ]
                        .iter()
                        .any(|p| l.starts_with(p))
                    })
                    .map(str::to_owned)
                    .collect()
            };
            let theirs = stdout(&cryptsetup(dir, &["luksDump", &same]));
            assert_eq!(layout(&stdout(&ours)), layout(&theirs), "{what}: layout");
        }
    }
}

#[test]
fn key_slots_added_or_killed_by_either_tool_are_honoured_by_the_other() {
    let test = "luks::luks1::key_slots_added_or_killed_by_either_tool_are_honoured_by_the_other";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let d = scratch();
    let dir = d.path();
    let pass = write(dir, "pass", b"first");
    let second = write(dir, "second", b"second");
    let third = write(dir, "third", b"third");
    let img = write(dir, "img", &vec![0u8; 3 << 20]);
    ok(
        &cryptsetup(
            dir,
            &cat(&[
                &["luksFormat", "-q", "--type", "luks1", "--hash", "sha1"],
                FORCE,
                &["--key-file", &pass, &img],
            ]),
        ),
        "luksFormat",
    );
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&img)
        .unwrap();
    let random = &mut mdu_luks2::os_random;
    let hdr = Header::load(&f).unwrap();
    let vk = hdr.unlock(&f, b"first").unwrap();

    // mdu adds slot 1: cryptsetup opens it and dumps what mdu dumps.
    let (hdr, slot) = add_keyslot(&f, &hdr, None, &vk.key, b"second", 1000, random).unwrap();
    assert_eq!(slot, 1);
    ok(
        &cryptsetup(
            dir,
            &[
                "open",
                "--test-passphrase",
                "--key-slot",
                "1",
                "--key-file",
                &second,
                &img,
            ],
        ),
        "slot 1",
    );
    let same_dump = |what: &str| {
        let theirs = cryptsetup(dir, &["luksDump", &img]);
        let ours = run(mdu().args(["luks", "dump", &img]));
        assert_eq!(stdout(&ours), stdout(&theirs), "{what}");
    };
    same_dump("after mdu added slot 1");

    // mdu kills slot 0: cryptsetup refuses its passphrase.
    let hdr = kill_keyslot(&f, &hdr, 0, random).unwrap();
    assert!(!hdr.slots[0].enabled);
    let refused = cryptsetup(
        dir,
        &["open", "--test-passphrase", "--key-file", &pass, &img],
    );
    assert!(!refused.status.success(), "cryptsetup opened a killed slot");
    ok(
        &cryptsetup(
            dir,
            &["open", "--test-passphrase", "--key-file", &second, &img],
        ),
        "slot 1 after the kill",
    );
    same_dump("after mdu killed slot 0");

    // cryptsetup adds a slot (the first free: 0) and kills slot 1: mdu
    // follows.
    ok(
        &cryptsetup(
            dir,
            &cat(&[
                &["luksAddKey", "-q", "--key-file", &second],
                FORCE,
                &[&img, &third],
            ]),
        ),
        "luksAddKey",
    );
    let dump = run(mdu().args([
        "luks",
        "dump",
        "--dump-volume-key",
        "--key-file",
        &third,
        &img,
    ]));
    ok(&dump, "mdu opens cryptsetup's new slot");
    assert_eq!(mk_dump(&dump), &vk.key[..]);
    ok(
        &cryptsetup(dir, &["luksKillSlot", "-q", &img, "1"]),
        "luksKillSlot",
    );
    let hdr = Header::load(&f).unwrap();
    assert!(hdr.slots[0].enabled && !hdr.slots[1].enabled);
    assert!(hdr.unlock(&f, b"second").unwrap_err().is_wrong_passphrase());
    assert_eq!(hdr.unlock(&f, b"third").unwrap().slot, 0);
    same_dump("after cryptsetup's changes");
}

#[test]
fn luks1_images_mdu_cannot_decrypt_are_refused_clearly() {
    let d = scratch();
    let dir = d.path();
    let pass = write(dir, "pass", b"pw");
    let img = dir.join("img").to_str().unwrap().to_owned();
    ok(
        &run(mdu()
            .args([
                "luks",
                "format",
                "--type",
                "luks1",
                "--cipher",
                "aes-xts-plain64",
            ])
            .args(FORCE)
            .args(["--key-file", &pass, &img])),
        "format",
    );
    let mut bytes = std::fs::read(&img).unwrap();
    bytes.extend_from_slice(&[0u8; 4096]);
    // aes-lrw-plain64: read and dumped, refused as unsupported.
    bytes[40..72].fill(0);
    bytes[40..51].copy_from_slice(b"lrw-plain64");
    let lrw = write(dir, "lrw", &bytes);
    let dump = run(mdu().args(["luks", "dump", &lrw]));
    ok(&dump, "dump of an LRW image");
    assert!(stdout(&dump).contains("Cipher mode:   \tlrw-plain64\n"));
    let plain = dir.join("plain").to_str().unwrap().to_owned();
    let out = run(mdu().args(["luks", "decrypt", "--key-file", &pass, &lrw, &plain]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unsupported cipher mode \"lrw-plain64\""),
        "{err}"
    );
    assert!(!std::path::Path::new(&plain).exists());
    // A truncated image: refused naming what does not fit.
    let cut = write(dir, "cut", &bytes[..100_000]);
    let out = run(mdu().args(["luks", "dump", &cut]));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("key slot material"));
    // LUKS1 options that do not exist are refused.
    for extra in [["--label", "x"], ["--sector-size", "1024"]] {
        let out = run(mdu()
            .args(["luks", "format", "--type", "luks1"])
            .args(extra)
            .args(["--key-file", &pass, dir.join("new").to_str().unwrap()]));
        assert!(!out.status.success(), "{extra:?}");
        assert!(!dir.join("new").exists());
    }
}

#[test]
fn conversions_match_cryptsetup_convert_both_ways() {
    let test = "luks::luks1::conversions_match_cryptsetup_convert_both_ways";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let d = scratch();
    let dir = d.path();
    let pass = write(dir, "pass", b"first");
    let second = write(dir, "second", b"second");
    let open_both = |img: &str, what: &str| {
        for p in [&pass, &second] {
            ok(
                &cryptsetup(dir, &["open", "--test-passphrase", "--key-file", p, img]),
                what,
            );
        }
    };
    for (hash, cipher, bits) in [
        ("sha256", "aes-xts-plain64", "512"),
        ("whirlpool", "aes-cbc-essiv:sha256", "256"),
    ] {
        let what = format!("{hash} {cipher} {bits}");
        // A LUKS1 image with slots 0 and 1, and a copy for cryptsetup.
        let ours = write(dir, "ours", &vec![0u8; 3 << 20]);
        ok(
            &cryptsetup(
                dir,
                &cat(&[
                    &[
                        "luksFormat",
                        "-q",
                        "--type",
                        "luks1",
                        "--hash",
                        hash,
                        "--cipher",
                        cipher,
                        "--key-size",
                        bits,
                    ],
                    FORCE,
                    &["--key-file", &pass, &ours],
                ]),
            ),
            &what,
        );
        ok(
            &cryptsetup(
                dir,
                &cat(&[
                    &["luksAddKey", "-q", "--key-file", &pass],
                    FORCE,
                    &[&ours, &second],
                ]),
            ),
            &what,
        );
        let luks1_bytes = std::fs::read(&ours).unwrap();
        let theirs = write(dir, "theirs", &luks1_bytes);

        // LUKS1 -> LUKS2 (`mdu luks convert`): cryptsetup dumps both the
        // same and opens ours.
        ok(
            &run(mdu().args(["luks", "convert", "-q", "--type", "luks2", &ours])),
            &what,
        );
        ok(
            &cryptsetup(dir, &["convert", "-q", "--type", "luks2", &theirs]),
            &what,
        );
        // The dump, with the path LUKS1's names replaced.
        let dump = |img: &str| stdout(&cryptsetup(dir, &["luksDump", img])).replace(img, "IMAGE");
        assert_eq!(dump(&ours), dump(&theirs), "{what}: converted to LUKS2");
        assert_eq!(
            stdout(&run(mdu().args(["luks", "dump", &ours]))).replace(&ours, "IMAGE"),
            dump(&ours),
            "{what}"
        );
        open_both(&ours, &what);

        // LUKS2 -> LUKS1: the LUKS1 header comes back byte for byte, as
        // cryptsetup's conversion back gives it.
        ok(
            &run(mdu().args(["luks", "convert", "-q", "--type", "luks1", &ours])),
            &what,
        );
        ok(
            &cryptsetup(dir, &["convert", "-q", "--type", "luks1", &theirs]),
            &what,
        );
        let back = std::fs::read(&ours).unwrap();
        assert!(
            back[..4096] == luks1_bytes[..4096],
            "{what}: the LUKS1 header came back changed"
        );
        assert!(
            back[..4096] == std::fs::read(&theirs).unwrap()[..4096],
            "{what}"
        );
        assert_eq!(dump(&ours), dump(&theirs), "{what}: back to LUKS1");
        open_both(&ours, &what);
    }

    // A LUKS2 image cryptsetup made (PBKDF2, 512-byte sectors) becomes the
    // LUKS1 header cryptsetup makes of it; an Argon2 one is refused by
    // both.
    for (kdf, convertible) in [(PBKDF2, true), (ARGON2ID, false)] {
        let ours = write(dir, "ours", &vec![0u8; 3 << 20]);
        ok(
            &cryptsetup(
                dir,
                &cat(&[
                    &[
                        "luksFormat",
                        "-q",
                        "--type",
                        "luks2",
                        "--sector-size",
                        "512",
                        "--offset",
                        "4096",
                    ],
                    kdf,
                    &["--key-file", &pass, &ours],
                ]),
            ),
            "luks2 luksFormat",
        );
        let theirs = write(dir, "theirs", &std::fs::read(&ours).unwrap());
        let got = run(mdu().args(["luks", "convert", "-q", "--type", "luks1", &ours]));
        let cs = cryptsetup(dir, &["convert", "-q", "--type", "luks1", &theirs]);
        assert_eq!(got.status.success(), convertible, "{kdf:?}: {got:?}");
        assert_eq!(cs.status.success(), convertible, "{kdf:?}");
        // A refusal is cryptsetup's: exit 1 (wrong parameters).
        assert_eq!(got.status.code(), cs.status.code(), "{kdf:?}: {got:?}");
        if convertible {
            assert!(
                std::fs::read(&ours).unwrap()[..4096] == std::fs::read(&theirs).unwrap()[..4096]
            );
            ok(
                &cryptsetup(
                    dir,
                    &["open", "--test-passphrase", "--key-file", &pass, &ours],
                ),
                "converted",
            );
        } else {
            assert_eq!(
                std::fs::read(&ours).unwrap(),
                std::fs::read(&theirs).unwrap(),
                "a refused conversion wrote"
            );
        }
    }
}
