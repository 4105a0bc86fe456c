//! The header verbs (is-luks, uuid, config, token, header-backup and
//! -restore, erase, repair, open --test-passphrase) against cryptsetup
//! 2.6, alternating on one image: what mdu writes cryptsetup reads, and
//! the other way round.

use super::*;

/// A 2 MiB image formatted by cryptsetup (1 MiB header region, PBKDF2),
/// with the passphrase file `pw`.
pub(super) struct Img {
    pub(super) dir: tempfile::TempDir,
    pub(super) img: String,
    pub(super) pw: String,
}

impl Img {
    pub(super) fn new() -> Img {
        let dir = scratch();
        let img = dir.path().join("img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(2 << 20)
            .unwrap();
        let img = img.to_str().unwrap().to_owned();
        let pw = write(dir.path(), "pw", b"passphrase");
        let this = Img { dir, img, pw };
        let f = this.cs(&[
            &["luksFormat", "-q", "--type", "luks2", "--offset", "2048"][..],
            PBKDF2,
            &["--key-file", &this.pw, &this.img],
        ]
        .concat());
        expect_code(&f, 0, "cryptsetup luksFormat");
        this
    }

    pub(super) fn cs(&self, args: &[&str]) -> Output {
        cryptsetup(self.dir.path(), args)
    }

    pub(super) fn mdu(&self, args: &[&str]) -> Output {
        run(mdu().arg("luks").args(args))
    }

    pub(super) fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_owned()
    }

    /// The header region (2 copies and the keyslots area).
    pub(super) fn region(&self) -> Vec<u8> {
        std::fs::read(&self.img).unwrap()[..1 << 20].to_vec()
    }

    /// The value of the luksDump line starting with `field` (`Label:`), by
    /// each tool (asserts they agree); empty when there is none.
    pub(super) fn field(&self, field: &str) -> String {
        let pick = |out: Output, who: &str| {
            expect_code(&out, 0, &format!("{who} luksDump"));
            stdout(&out)
                .lines()
                .find_map(|l| l.trim_start().strip_prefix(field))
                .unwrap_or("")
                .trim()
                .to_owned()
        };
        let c = pick(self.cs(&["luksDump", &self.img]), "cryptsetup");
        let m = pick(self.mdu(&["dump", &self.img]), "mdu");
        assert_eq!(c, m, "{field}: cryptsetup and mdu disagree");
        c
    }

    /// Whether the passphrase opens the image, by each tool (asserting
    /// they agree); `slot` as --key-slot.
    pub(super) fn opens(&self, slot: Option<&str>) -> bool {
        let mut a = vec!["open", "--test-passphrase", "--key-file", &self.pw];
        if let Some(s) = slot {
            a.extend(["--key-slot", s]);
        }
        a.push(&self.img);
        let c = self.cs(&a).status.success();
        let m = self.mdu(&a).status.success();
        assert_eq!(
            c, m,
            "open --test-passphrase {slot:?}: cryptsetup {c}, mdu {m}"
        );
        c
    }

    /// Token `id` as each tool exports it (asserting byte equality), or
    /// `None` when neither has it.
    pub(super) fn token(&self, id: &str) -> Option<Vec<u8>> {
        let args = ["token", "export", "--token-id", id, &self.img];
        let (c, m) = (self.cs(&args), self.mdu(&args));
        assert_eq!(
            c.status.success(),
            m.status.success(),
            "token export {id}: {} / {}",
            String::from_utf8_lossy(&c.stderr),
            String::from_utf8_lossy(&m.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&c.stdout),
            String::from_utf8_lossy(&m.stdout),
            "token export {id}: not byte-identical"
        );
        c.status.success().then_some(c.stdout)
    }
}

/// What `systemd-cryptenroll --tpm2-device` writes (its field order).
pub(super) const TPM2_TOKEN: &str = r#"{"type":"systemd-tpm2","keyslots":[],"tpm2-blob":"AJ4AIJUq3Bnz0zDy8hvdz0Vj8YHPc07n3V/5C+Y2ZXsAEAuh","tpm2-pcrs":[7],"tpm2-pcr-bank":"sha256","tpm2-primary-alg":"ecc","tpm2-policy-hash":"6b8e7d5c2c6dc1a4aa3b3bb1b0e5d23e2bd6e1eb1e58ec9eae7d0e63a56cf6a1","tpm2-pin":false,"tpm2_srk":"gQAAAQAiAAvv","tpm2_pcrlock":false}"#;

#[test]
fn each_header_verb_interoperates_with_cryptsetup_both_ways() {
    let test = "luks::header::each_header_verb_interoperates_with_cryptsetup_both_ways";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let v = Img::new();
    let zero = write(v.dir.path(), "zero", &vec![0u8; 1 << 20]);
    // is-luks, as cryptsetup's isLuks.
    for (args, code) in [
        (vec!["isLuks", v.img.as_str()], 0),
        (vec!["isLuks", "--type", "luks2", &v.img], 0),
        (vec!["isLuks", "--type", "luks1", &v.img], 1),
        (vec!["isLuks", &zero], 1),
    ] {
        expect_code(&v.cs(&args), code, &format!("cryptsetup {args:?}"));
        expect_code(&v.mdu(&args), code, &format!("mdu {args:?}"));
    }
    expect_code(&v.mdu(&["is-luks", "-M", "luks2", &v.img]), 0, "is-luks");

    // uuid: set by mdu, read by cryptsetup, and the other way round.
    let u1 = "0b5e8a3c-2f41-4c1e-9d3a-7f10a2b3c4d5";
    expect_code(
        &v.mdu(&["uuid", "--uuid", &u1.to_uppercase(), &v.img]),
        0,
        "mdu uuid --uuid",
    );
    assert_eq!(stdout(&v.cs(&["luksUUID", &v.img])).trim(), u1);
    let u2 = "1c6f9b4d-3052-4d2f-8e4b-802193c4d5e6";
    expect_code(
        &v.cs(&["luksUUID", "-q", "--uuid", u2, &v.img]),
        0,
        "cryptsetup luksUUID --uuid",
    );
    assert_eq!(stdout(&v.mdu(&["luksUUID", &v.img])), format!("{u2}\n"));
    let before = v.region();
    for bad in [
        "0b5e8a3c2f414c1e9d3a7f10a2b3c4d5",
        "0b5e8a3c-2f41-4c1e-9d3a-7f10a2b3c4dz",
    ] {
        assert!(
            !v.cs(&["luksUUID", "-q", "--uuid", bad, &v.img])
                .status
                .success()
        );
        assert!(!v.mdu(&["uuid", "--uuid", bad, &v.img]).status.success());
    }
    assert!(v.region() == before, "a refused UUID changed the header");

    // config: labels set together, cut at 47 bytes; priorities.
    expect_code(
        &v.mdu(&["config", "--label", "root", "--subsystem", "sys", &v.img]),
        0,
        "mdu config",
    );
    assert_eq!(v.field("Label:"), "root");
    assert_eq!(v.field("Subsystem:"), "sys");
    let long = "x".repeat(60);
    expect_code(
        &v.cs(&["config", "--label", &long, &v.img]),
        0,
        "cryptsetup config",
    );
    assert_eq!(v.field("Label:"), long[..47]);
    assert_eq!(v.field("Subsystem:"), "(no subsystem)");
    expect_code(
        &v.mdu(&["config", "--label", &long, &v.img]),
        0,
        "mdu config, long label",
    );
    assert_eq!(v.field("Label:"), long[..47]);
    expect_code(
        &v.mdu(&["config", "--priority", "ignore", "--key-slot", "0", &v.img]),
        0,
        "mdu priority",
    );
    assert!(
        !v.opens(None) && v.opens(Some("0")),
        "an ignored keyslot opens only when named"
    );
    expect_code(
        &v.cs(&["config", "--priority", "prefer", "--key-slot", "0", &v.img]),
        0,
        "cs priority",
    );
    assert_eq!(v.field("Priority:"), "preferred");
    expect_code(
        &v.mdu(&["config", "--priority", "normal", "-S", "0", &v.img]),
        0,
        "mdu priority normal",
    );
    assert_eq!(v.field("Priority:"), "normal");
    assert!(v.opens(None));
    for args in [
        vec!["config", v.img.as_str()],
        vec!["config", "--priority", "prefer", &v.img],
        vec!["config", "--priority", "prefer", "-S", "5", &v.img],
    ] {
        assert!(!v.cs(&args).status.success(), "cryptsetup {args:?}");
        assert!(!v.mdu(&args).status.success(), "mdu {args:?}");
    }

    // Tokens: systemd's offline TPM2 enrolment shape imported by mdu with a
    // keyslot, exported by both; one imported by cryptsetup, by mdu.
    let tpm = write(v.dir.path(), "tpm2.json", TPM2_TOKEN.as_bytes());
    expect_code(
        &v.mdu(&[
            "token",
            "import",
            "--json-file",
            &tpm,
            "--key-slot",
            "0",
            &v.img,
        ]),
        0,
        "mdu token import",
    );
    let want = TPM2_TOKEN.replace(r#""keyslots":[]"#, r#""keyslots":["0"]"#);
    assert_eq!(v.token("0").as_deref(), Some(want.as_bytes()));
    let odd =
        r#"{"z":{"b":[1,"x/y",true,null],"a":"é\u0001"},"keyslots":[],"type":"mdu-test","n":-12}"#;
    let odd_file = write(v.dir.path(), "odd.json", odd.as_bytes());
    expect_code(
        &v.cs(&[
            "token",
            "import",
            "--json-file",
            &odd_file,
            "--token-id",
            "7",
            &v.img,
        ]),
        0,
        "cs import",
    );
    assert!(v.token("7").is_some());
    // From stdin, replacing token 7, assigned to keyslot 0.
    let piped = Command::new(env!("CARGO_BIN_EXE_mdu"))
        .args([
            "luks",
            "token",
            "import",
            "--token-id",
            "7",
            "--token-replace",
            "-S",
            "0",
            &v.img,
        ])
        .stdin(std::fs::File::open(&tpm).unwrap())
        .output()
        .unwrap();
    expect_code(&piped, 0, "mdu token import from stdin");
    assert_eq!(v.token("7").as_deref(), Some(want.as_bytes()));
    expect_code(
        &v.mdu(&[
            "token",
            "import",
            "--json-file",
            &tpm,
            "--token-id",
            "7",
            &v.img,
        ]),
        1,
        "in use",
    );
    expect_code(
        &v.mdu(&["token", "unassign", "--token-id", "7", "-S", "0", &v.img]),
        0,
        "unassign",
    );
    assert_eq!(v.token("7").as_deref(), Some(TPM2_TOKEN.as_bytes()));
    // And the other way round: assigned by mdu, unassigned by cryptsetup.
    let assign = [
        "token",
        "import",
        "--json-file",
        &tpm,
        "--token-id",
        "7",
        "--token-replace",
        "-S",
        "0",
        &v.img,
    ];
    expect_code(&v.mdu(&assign), 0, "mdu token import --token-replace");
    assert_eq!(v.token("7").as_deref(), Some(want.as_bytes()));
    expect_code(
        &v.cs(&["token", "unassign", "--token-id", "7", "-S", "0", &v.img]),
        0,
        "cs unassign",
    );
    assert_eq!(v.token("7").as_deref(), Some(TPM2_TOKEN.as_bytes()));
    expect_code(
        &v.mdu(&["token", "unassign", "--token-id", "7", "-S", "0", &v.img]),
        1,
        "unassigned twice",
    );
    expect_code(
        &v.cs(&["token", "add", "--key-description", "user:k", &v.img]),
        0,
        "cs token add",
    );
    expect_code(
        &v.mdu(&[
            "token",
            "add",
            "--key-description",
            "user:m",
            "--token-id",
            "9",
            &v.img,
        ]),
        0,
        "mdu add",
    );
    assert_eq!(
        v.token("1"),
        v.token("9").map(|t| String::from_utf8(t)
            .unwrap()
            .replace("user:m", "user:k")
            .into_bytes())
    );
    expect_code(
        &v.mdu(&["token", "remove", "--token-id", "9", &v.img]),
        0,
        "mdu token remove",
    );
    expect_code(
        &v.cs(&["token", "remove", "--token-id", "1", &v.img]),
        0,
        "cs token remove",
    );
    assert!(v.token("9").is_none() && v.token("1").is_none());
    expect_code(
        &v.mdu(&["token", "remove", "--token-id", "9", &v.img]),
        1,
        "removed twice",
    );

    // header-backup: the same bytes as cryptsetup's, never over a file.
    let (mb, cb) = (v.path("mdu.backup"), v.path("cs.backup"));
    expect_code(
        &v.mdu(&["luksHeaderBackup", "--header-backup-file", &mb, &v.img]),
        0,
        "mdu backup",
    );
    expect_code(
        &v.cs(&["luksHeaderBackup", "--header-backup-file", &cb, &v.img]),
        0,
        "cs backup",
    );
    assert!(
        std::fs::read(&mb).unwrap() == std::fs::read(&cb).unwrap(),
        "backups differ"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&mb).unwrap().permissions().mode() & 0o777,
        0o400
    );
    assert!(
        !v.mdu(&["header-backup", "--header-backup-file", &cb, &v.img])
            .status
            .success()
    );
    assert!(
        !v.cs(&["luksHeaderBackup", "--header-backup-file", &mb, &v.img])
            .status
            .success()
    );

    // erase and restore, alternating.
    expect_code(&v.mdu(&["erase", &v.img]), 0, "mdu erase");
    assert!(!v.opens(None));
    assert!(v.field("Key:").is_empty(), "a keyslot left after erase");
    expect_code(&v.cs(&["isLuks", &v.img]), 0, "isLuks after erase");
    expect_code(
        &v.mdu(&["header-restore", "--header-backup-file", &cb, &v.img]),
        0,
        "mdu restore",
    );
    assert!(v.opens(None) && v.token("0").is_some());
    expect_code(&v.cs(&["luksErase", "-q", &v.img]), 0, "cs erase");
    assert!(!v.opens(None));
    expect_code(
        &v.cs(&[
            "luksHeaderRestore",
            "-q",
            "--header-backup-file",
            &mb,
            &v.img,
        ]),
        0,
        "cs restore",
    );
    assert!(v.opens(None));

    // A backup of another volume is refused (no terminal to confirm on);
    // one of another layout, and a file that is no header, always.
    let other = Img::new();
    let ob = other.path("other.backup");
    expect_code(
        &other.mdu(&["header-backup", "--header-backup-file", &ob, &other.img]),
        0,
        "backup",
    );
    let before = v.region();
    let out = v.mdu(&["header-restore", "--header-backup-file", &ob, &v.img]);
    assert!(!out.status.success() && stdout(&out).is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("another volume"),
        "{out:?}"
    );
    assert!(
        !v.mdu(&["header-restore", "--header-backup-file", &zero, &v.img])
            .status
            .success()
    );
    assert!(
        !v.cs(&[
            "luksHeaderRestore",
            "-q",
            "--header-backup-file",
            &zero,
            &v.img
        ])
        .status
        .success()
    );
    assert!(v.region() == before, "a refused restore changed the header");

    // repair: a damaged primary, by mdu; a damaged secondary, by
    // cryptsetup, then nothing left for mdu.
    // Written and closed before mdu runs (an open writer makes it busy).
    let damage = |at: u64| {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&v.img)
            .unwrap();
        f.write_all_at(&[0xa5; 32], at).unwrap();
    };
    damage(4200);
    let out = v.mdu(&["repair", &v.img]);
    expect_code(&out, 0, "mdu repair");
    assert!(
        stdout(&out).contains("primary header copy was rewritten"),
        "{}",
        stdout(&out)
    );
    damage(16384 + 4200);
    expect_code(&v.cs(&["repair", "-q", &v.img]), 0, "cryptsetup repair");
    let out = v.mdu(&["repair", &v.img]);
    assert!(
        stdout(&out).contains("no known problems"),
        "{}",
        stdout(&out)
    );
    assert!(String::from_utf8_lossy(&v.mdu(&["dump", &v.img]).stderr).is_empty());
    assert!(v.opens(None) && v.opens(Some("0")));
    expect_code(
        &v.mdu(&["open", &v.img, "name", "--key-file", &v.pw]),
        1,
        "open without --test-passphrase (a refused usage: cryptsetup's 1)",
    );
}

/// Every token cryptsetup refuses to import, mdu refuses too, with the
/// image unchanged.
#[test]
fn token_imports_cryptsetup_refuses_are_refused_by_mdu() {
    let test = "luks::header::token_imports_cryptsetup_refuses_are_refused_by_mdu";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let v = Img::new();
    let big = format!(
        r#"{{"type":"x","keyslots":[],"blob":"{}"}}"#,
        "a".repeat(16 << 10)
    );
    let cases = [
        "not json",
        "[1]",
        r#"{"keyslots":[]}"#,
        r#"{"type":"","keyslots":[]}"#,
        r#"{"type":5,"keyslots":[]}"#,
        r#"{"type":"x"}"#,
        r#"{"type":"x","keyslots":[0]}"#,
        r#"{"type":"x","keyslots":["1"]}"#,
        r#"{"type":"x","keyslots":["00"]}"#,
        r#"{"type":"luks2-unknown","keyslots":[]}"#,
        r#"{"type":"luks2-keyring","keyslots":[]}"#,
        r#"{"type":"luks2-keyring","keyslots":[],"key_description":"k","x":1}"#,
        big.as_str(),
    ];
    let before = v.region();
    for json in cases {
        let f = write(v.dir.path(), "t.json", json.as_bytes());
        let c = v.cs(&["token", "import", "--json-file", &f, &v.img]);
        assert!(!c.status.success(), "cryptsetup took {json:.50}");
        let m = v.mdu(&["token", "import", "--json-file", &f, &v.img]);
        assert!(!m.status.success(), "mdu took {json:.50}");
        assert!(v.region() == before, "{json:.50}: the image changed");
    }
    // A keyslot that does not exist, a token id out of range.
    let f = write(v.dir.path(), "t.json", br#"{"type":"x","keyslots":[]}"#);
    for extra in [["--key-slot", "3"], ["--token-id", "32"]] {
        let args = [
            &["token", "import", "--json-file", &f][..],
            &extra,
            &[&v.img],
        ]
        .concat();
        assert!(!v.cs(&args).status.success(), "cryptsetup {extra:?}");
        assert!(!v.mdu(&args).status.success(), "mdu {extra:?}");
    }
    assert!(v.region() == before, "the image changed");
}
