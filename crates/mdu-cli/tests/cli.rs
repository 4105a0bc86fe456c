//! Usage: `--help` on every subcommand, exit status 2 on bad usage.

mod common;

use common::{expect_code, mdu, run};

#[test]
fn help_on_every_subcommand() {
    for path in [
        &[][..],
        &["fsverity"],
        &["fsverity", "digest"],
        &["verity"],
        &["verity", "format"],
        &["verity", "verify"],
        &["crypt"],
        &["crypt", "encrypt"],
        &["crypt", "decrypt"],
        &["base64"],
        &["base64", "encode"],
        &["base64", "decode"],
    ] {
        let out = run(mdu().args(path).arg("--help"));
        expect_code(&out, 0, &format!("{path:?} --help"));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("Usage: mdu"), "{path:?}: {text}");
    }
    let out = run(mdu().args(["crypt", "encrypt", "--help"]));
    let text = String::from_utf8_lossy(&out.stdout);
    for opt in [
        "--cipher",
        "--key-file",
        "--sector-size",
        "--iv-large-sectors",
        "--iv-offset",
        "--offset",
        "--threads",
    ] {
        assert!(
            text.contains(opt),
            "{opt} missing from crypt encrypt --help"
        );
    }
}

#[test]
fn bad_usage_exits_2() {
    for args in [
        &[][..],
        &["nope"],
        &["fsverity", "digest"],
        &["verity", "format", "only-one-arg"],
        &["verity", "verify", "a", "b"],
        &["crypt", "encrypt", "in", "out"],
        &["fsverity", "digest", "--block-size", "x", "f"],
        &["base64", "encode", "--bogus"],
    ] {
        let out = run(mdu().args(args));
        expect_code(&out, 2, &format!("{args:?}"));
    }
}
