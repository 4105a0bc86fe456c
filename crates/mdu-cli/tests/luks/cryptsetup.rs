//! Images both ways between mdu and cryptsetup: mdu's open, dump and decrypt
//! in cryptsetup, cryptsetup's decrypt in mdu, keyslots either tool adds or
//! kills, and the library volume against cryptsetup's mapping.

use super::*;

#[test]
fn mdu_images_open_dump_and_decrypt_in_cryptsetup() {
    if !have_tool(
        "cryptsetup",
        "luks::cryptsetup::mdu_images_open_dump_and_decrypt_in_cryptsetup",
    ) {
        return;
    }
    let mut rng = Rng::new("luks::cryptsetup::mdu_images_open_dump_and_decrypt_in_cryptsetup");
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
        "luks::cryptsetup::cryptsetup_encrypted_images_decrypt_to_the_original",
    ) {
        return;
    }
    let mut rng = Rng::new("luks::cryptsetup::cryptsetup_encrypted_images_decrypt_to_the_original");
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
        "luks::cryptsetup::luks_format_images_unlock_and_match_plain_mode",
    ) {
        return;
    }
    let mut rng = Rng::new("luks::cryptsetup::luks_format_images_unlock_and_match_plain_mode");
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
        "luks::cryptsetup::luks_format_writes_the_header_over_an_existing_image_only",
    ) {
        for p in [img.as_str(), fresh.to_str().unwrap()] {
            let ok = cryptsetup(dir, &["open", "--test-passphrase", "--key-file", &key, p]);
            expect_code(&ok, 0, "cryptsetup opens mdu's luks format");
        }
    }
}

#[test]
fn keyslots_added_and_killed_by_cryptsetup_are_honoured() {
    if !have_tool(
        "cryptsetup",
        "luks::cryptsetup::keyslots_added_and_killed_by_cryptsetup_are_honoured",
    ) {
        return;
    }
    let mut rng =
        Rng::new("luks::cryptsetup::keyslots_added_and_killed_by_cryptsetup_are_honoured");
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
    expect_code(&out, 2, "the killed keyslot's passphrase");
    let out = run(mdu()
        .args(["luks", "decrypt", "--key-file", &second, &img])
        .arg(&dec));
    expect_code(&out, 0, "the remaining keyslot");
    assert_eq!(std::fs::read(&dec).unwrap(), plain_bytes);
}

/// The library's volume API against cryptsetup both ways: sectors written
/// through `mdu_luks2::open` at scattered offsets are what an offline
/// `cryptsetup reencrypt --decrypt` of the detached-header device gives
/// back, and a device `cryptsetup reencrypt --encrypt` made reads back
/// through it as the original plaintext.
#[test]
fn the_library_volume_reads_and_writes_what_cryptsetup_decrypts_and_encrypts() {
    let test = "luks::cryptsetup::the_library_volume_reads_and_writes_what_cryptsetup_decrypts_and_encrypts";
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
