//! The keyslot and header verbs of `mdu luks` on LUKS1 images, each step
//! run by mdu on one image and by cryptsetup on a copy: the key slots
//! each tool leaves are the same, cryptsetup opens what mdu wrote, mdu's
//! header backup is byte for byte cryptsetup's, and a wrong passphrase or
//! a refused verb leaves the image's bytes as they were.

use super::*;

const FORCE: &[&str] = &["--pbkdf-force-iterations", "1000"];

/// The key slot lines of cryptsetup's luksDump of `img` (state and
/// iterations).
fn slots(dir: &Path, img: &str) -> String {
    let out = cryptsetup(dir, &["luksDump", img]);
    expect_code(&out, 0, "luksDump");
    stdout(&out)
        .lines()
        .filter(|l| l.starts_with("Key Slot") || l.contains("Iterations:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether cryptsetup opens `img` with the passphrase in `key` (in slot
/// `slot` alone when given).
fn cs_opens(dir: &Path, img: &str, key: &str, slot: Option<u32>) -> bool {
    let s = slot.map(|s| s.to_string());
    let mut args = vec!["open", "--test-passphrase", "--key-file", key, img];
    if let Some(s) = &s {
        args.extend(["--key-slot", s]);
    }
    cryptsetup(dir, &args).status.success()
}

fn luks(args: &[&str]) -> Output {
    run(mdu().arg("luks").args(args))
}

/// A 3 MiB LUKS1 image formatted by cryptsetup with the passphrase in
/// `pass` and the volume key in `vk`, and a copy of it for cryptsetup.
fn images(dir: &Path, pass: &str, vk: &str) -> (String, String) {
    let img = write(dir, "img", &vec![0u8; 3 << 20]);
    let out = cryptsetup(
        dir,
        &[
            &[
                "luksFormat",
                "-q",
                "--type",
                "luks1",
                "--volume-key-file",
                vk,
            ][..],
            FORCE,
            &["--key-file", pass, &img],
        ]
        .concat(),
    );
    expect_code(&out, 0, "luksFormat");
    let copy = dir.join("copy").to_str().unwrap().to_owned();
    std::fs::copy(&img, &copy).unwrap();
    (img, copy)
}

/// `mdu luks ARGS` on `img` fails with `code` and leaves its bytes alone.
fn refused(img: &str, code: i32, args: &[&str], what: &str) {
    let before = std::fs::read(img).unwrap();
    expect_code(&luks(args), code, what);
    assert!(
        std::fs::read(img).unwrap() == before,
        "{what}: the image changed"
    );
}

#[test]
fn luks1_keyslot_verbs_leave_the_slots_cryptsetup_leaves() {
    let test = "luks::luks1_verbs::luks1_keyslot_verbs_leave_the_slots_cryptsetup_leaves";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let d = scratch();
    let dir = d.path();
    let mut rng = Rng::new(test);
    let pass = write(dir, "pass", b"first");
    let second = write(dir, "second", b"second");
    let third = write(dir, "third", b"third");
    let wrong = write(dir, "wrong", b"not it");
    let vk = write(dir, "vk", &rng.bytes(64));
    let (img, cs) = images(dir, &pass, &vk);
    // Each step: mdu's argv on img, cryptsetup's on the copy (in place of
    // IMG, else last); then the slots are the same.
    let step = |what: &str, ours: &[&str], theirs: &[&str]| {
        let on = |args: &[&str], path: &str| -> Vec<String> {
            let mut v: Vec<String> = args.iter().map(|a| a.replace("IMG", path)).collect();
            if !args.contains(&"IMG") {
                v.push(path.to_owned());
            }
            v
        };
        expect_code(&run(mdu().arg("luks").args(on(ours, &img))), 0, what);
        let theirs = on(theirs, &cs);
        let theirs: Vec<&str> = theirs.iter().map(String::as_str).collect();
        expect_code(&cryptsetup(dir, &theirs), 0, what);
        assert_eq!(slots(dir, &img), slots(dir, &cs), "{what}");
    };

    // add-key: the lowest free slot, then -S, then with the volume key.
    step(
        "add-key",
        &[
            &["add-key", "--key-file", &pass][..],
            FORCE,
            &["--new-keyfile", &second],
        ]
        .concat(),
        &[
            &["luksAddKey", "--key-file", &pass, "--new-keyfile", &second][..],
            FORCE,
        ]
        .concat(),
    );
    assert!(cs_opens(dir, &img, &second, Some(1)), "add-key: slot 1");
    step(
        "add-key -S 5",
        &[
            &["add-key", "-S", "5", "--key-file", &second][..],
            FORCE,
            &["--new-keyfile", &third],
        ]
        .concat(),
        &[
            &[
                "luksAddKey",
                "-S",
                "5",
                "--key-file",
                &second,
                "--new-keyfile",
                &third,
            ][..],
            FORCE,
        ]
        .concat(),
    );
    assert!(cs_opens(dir, &img, &third, Some(5)), "add-key -S 5");
    step(
        "add-key --volume-key-file",
        &[
            &["add-key", "--volume-key-file", &vk][..],
            FORCE,
            &["--new-keyfile", &third],
        ]
        .concat(),
        &[
            &[
                "luksAddKey",
                "--volume-key-file",
                &vk,
                "--new-keyfile",
                &third,
            ][..],
            FORCE,
        ]
        .concat(),
    );
    assert!(
        cs_opens(dir, &img, &third, Some(2)),
        "add-key --volume-key-file"
    );

    // Refusals: a wrong passphrase (exit 2), --unbound, a slot in use,
    // convert-key (exit 1, as cryptsetup), nothing written.
    refused(
        &img,
        2,
        &[
            &["add-key", "--key-file", &wrong][..],
            FORCE,
            &[&img, &second],
        ]
        .concat(),
        "add-key, wrong passphrase",
    );
    refused(
        &img,
        2,
        &[
            &["change-key", "--key-file", &wrong][..],
            FORCE,
            &[&img, &second],
        ]
        .concat(),
        "change-key, wrong passphrase",
    );
    refused(
        &img,
        2,
        &["remove-key", "--key-file", &wrong, &img],
        "remove-key, wrong passphrase",
    );
    refused(
        &img,
        2,
        &["kill-slot", "--key-file", &wrong, &img, "1"],
        "kill-slot, wrong passphrase",
    );
    refused(
        &img,
        1,
        &[
            &[
                "add-key",
                "--unbound",
                "--key-size",
                "512",
                "--key-file",
                &pass,
            ][..],
            FORCE,
            &[&img, &second],
        ]
        .concat(),
        "add-key --unbound",
    );
    refused(
        &img,
        1,
        &[
            &["add-key", "-S", "1", "--key-file", &pass][..],
            FORCE,
            &[&img, &second],
        ]
        .concat(),
        "add-key -S 1 (in use)",
    );
    refused(
        &img,
        1,
        &[&["convert-key", "--key-file", &pass][..], FORCE, &[&img]].concat(),
        "convert-key",
    );
    expect_code(
        &cryptsetup(
            dir,
            &[&["luksConvertKey", "--key-file", &pass][..], FORCE, &[&cs]].concat(),
        ),
        1,
        "luksConvertKey",
    );

    // change-key: the first free slot, the old one killed; with -S the
    // slot named, overwritten.
    step(
        "change-key",
        &[
            &["change-key", "--key-file", &pass][..],
            FORCE,
            &["IMG", &wrong],
        ]
        .concat(),
        &[
            &["luksChangeKey", "--key-file", &pass][..],
            FORCE,
            &["IMG", &wrong],
        ]
        .concat(),
    );
    assert!(cs_opens(dir, &img, &wrong, Some(3)), "change-key: slot 3");
    assert!(
        !cs_opens(dir, &img, &pass, None),
        "change-key: the old passphrase"
    );
    step(
        "change-key -S 5",
        &[
            &["change-key", "-S", "5", "--key-file", &third][..],
            FORCE,
            &["IMG", &pass],
        ]
        .concat(),
        &[
            &["luksChangeKey", "-S", "5", "--key-file", &third][..],
            FORCE,
            &["IMG", &pass],
        ]
        .concat(),
    );
    assert!(cs_opens(dir, &img, &pass, Some(5)), "change-key -S 5");

    // kill-slot with another slot's passphrase, remove-key.
    step(
        "kill-slot",
        &["kill-slot", "--key-file", &pass, "IMG", "1"],
        &["luksKillSlot", "--key-file", &pass, "IMG", "1"],
    );
    assert!(!cs_opens(dir, &img, &second, None), "kill-slot 1");
    step(
        "remove-key",
        &["remove-key", "--key-file", &third],
        &["luksRemoveKey", "--key-file", &third],
    );
    assert!(!cs_opens(dir, &img, &third, None), "remove-key");
    assert!(cs_opens(dir, &img, &pass, Some(5)), "slot 5 is left");
}

#[test]
fn luks1_header_verbs_match_cryptsetup() {
    let test = "luks::luks1_verbs::luks1_header_verbs_match_cryptsetup";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let d = scratch();
    let dir = d.path();
    let mut rng = Rng::new(test);
    let pass = write(dir, "pass", b"first");
    let vk = write(dir, "vk", &rng.bytes(64));
    let (img, cs) = images(dir, &pass, &vk);

    // uuid: printed as luksUUID prints it; set, read back by luksUUID.
    let theirs = cryptsetup(dir, &["luksUUID", &img]);
    expect_code(&theirs, 0, "luksUUID");
    let ours = luks(&["uuid", &img]);
    expect_code(&ours, 0, "uuid");
    assert_eq!(stdout(&ours), stdout(&theirs));
    let uuid = "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9";
    expect_code(
        &luks(&["uuid", "--uuid", &uuid.to_uppercase(), &img]),
        0,
        "uuid --uuid",
    );
    assert_eq!(stdout(&cryptsetup(dir, &["luksUUID", &img])).trim(), uuid);
    expect_code(
        &cryptsetup(dir, &["luksUUID", "--uuid", uuid, &cs]),
        0,
        "luksUUID --uuid",
    );
    assert!(
        std::fs::read(&img).unwrap() == std::fs::read(&cs).unwrap(),
        "the same header after the UUID"
    );
    refused(
        &img,
        1,
        &["uuid", "--uuid", "not-a-uuid", &img],
        "uuid --uuid not-a-uuid",
    );

    // header-backup: cryptsetup's bytes; an existing file is refused.
    let ours = dir.join("ours").to_str().unwrap().to_owned();
    let theirs = dir.join("theirs").to_str().unwrap().to_owned();
    expect_code(
        &luks(&["header-backup", "--header-backup-file", &ours, &img]),
        0,
        "header-backup",
    );
    expect_code(
        &cryptsetup(
            dir,
            &["luksHeaderBackup", "--header-backup-file", &theirs, &img],
        ),
        0,
        "luksHeaderBackup",
    );
    assert!(
        std::fs::read(&ours).unwrap() == std::fs::read(&theirs).unwrap(),
        "header-backup is luksHeaderBackup's"
    );
    expect_code(
        &luks(&["header-backup", "--header-backup-file", &ours, &img]),
        1,
        "header-backup onto a file",
    );

    // erase: every slot disabled, the material gone; as luksErase.
    let before = std::fs::read(&img).unwrap();
    expect_code(&luks(&["erase", &img]), 0, "erase");
    expect_code(&cryptsetup(dir, &["luksErase", "-q", &cs]), 0, "luksErase");
    assert_eq!(slots(dir, &img), slots(dir, &cs), "erase");
    assert!(!slots(dir, &img).contains("ENABLED"), "erase leaves a slot");
    let after = std::fs::read(&img).unwrap();
    assert!(
        after[4096..4096 + 500 * 512] != before[4096..4096 + 500 * 512],
        "slot 0's material is left"
    );
    assert!(!cs_opens(dir, &img, &pass, None), "erase: opens");

    // header-restore of cryptsetup's backup: the image opens again; the
    // backup by mdu restored by cryptsetup too.
    expect_code(
        &luks(&["header-restore", "--header-backup-file", &theirs, &img]),
        0,
        "header-restore",
    );
    assert!(cs_opens(dir, &img, &pass, Some(0)), "header-restore: opens");
    assert!(
        std::fs::read(&img).unwrap()[..4040 * 512] == std::fs::read(&theirs).unwrap()[..],
        "restored bytes"
    );
    expect_code(
        &cryptsetup(
            dir,
            &[
                "luksHeaderRestore",
                "-q",
                "--header-backup-file",
                &ours,
                &cs,
            ],
        ),
        0,
        "luksHeaderRestore",
    );
    assert!(
        std::fs::read(&img).unwrap() == std::fs::read(&cs).unwrap(),
        "the same image after restores"
    );

    // Onto a LUKS1 header of another key size: refused by both.
    let other = write(dir, "other", &vec![0u8; 3 << 20]);
    let out = cryptsetup(
        dir,
        &[
            &["luksFormat", "-q", "--type", "luks1", "--key-size", "256"][..],
            FORCE,
            &["--key-file", &pass, &other],
        ]
        .concat(),
    );
    expect_code(&out, 0, "luksFormat 256");
    refused(
        &other,
        1,
        &["header-restore", "--header-backup-file", &ours, &other],
        "header-restore, another key size",
    );
    expect_code(
        &cryptsetup(
            dir,
            &[
                "luksHeaderRestore",
                "-q",
                "--header-backup-file",
                &ours,
                &other,
            ],
        ),
        1,
        "luksHeaderRestore, another key size",
    );
}
