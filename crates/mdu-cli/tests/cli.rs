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

/// `mdu completions SHELL` writes a completion script of every command for
/// bash, zsh and fish (bash's completes `mdu luks re` to `reencrypt` when
/// sourced); `mdu man --dir` writes a page per command; `--version` names
/// the commit, the target and the backends this CPU selects.
#[test]
fn completions_man_pages_and_version_come_from_the_parser() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(mdu().args(["completions", shell]));
        expect_code(&out, 0, shell);
        let text = String::from_utf8_lossy(&out.stdout);
        for word in ["reencrypt", "fsverity", "hotzone-size"] {
            assert!(text.contains(word), "{shell} completions lack {word}");
        }
    }
    let dir = common::scratch();
    let r = run(mdu().args(["man", "--dir"]).arg(dir.path()));
    expect_code(&r, 0, "man --dir");
    let pages = common::entries(dir.path());
    for page in [
        "mdu.1",
        "mdu-luks.1",
        "mdu-luks-reencrypt.1",
        "mdu-verity-verify.1",
    ] {
        assert!(pages.iter().any(|p| p == page), "no {page} in {pages:?}");
    }
    let page = std::fs::read_to_string(dir.path().join("mdu-luks-reencrypt.1")).unwrap();
    assert!(page.contains(".TH") && page.contains("hotzone"), "{page}");
    let v = run(mdu().arg("--version"));
    expect_code(&v, 0, "--version");
    let v = String::from_utf8_lossy(&v.stdout);
    assert!(
        v.contains("commit ") && v.contains("backends on this CPU: xts "),
        "{v}"
    );
    // Bash sources it and completes a subcommand.
    if std::process::Command::new("bash")
        .arg("--version")
        .output()
        .is_ok()
        && std::env::var("MDU_TEST_RUNNER").is_err()
    {
        let exe = env!("CARGO_BIN_EXE_mdu");
        let script = format!(
            "source <({exe} completions bash); COMP_WORDS=(mdu luks ree); COMP_CWORD=2; _mdu mdu ree luks; echo \"${{COMPREPLY[@]}}\""
        );
        let r = run(std::process::Command::new("bash").args(["-c", &script]));
        assert_eq!(String::from_utf8_lossy(&r.stdout).trim(), "reencrypt");
    }
}
