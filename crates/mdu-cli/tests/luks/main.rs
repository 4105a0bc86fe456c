//! `mdu luks` against cryptsetup 2.6: images written by mdu open, dump and
//! decrypt in cryptsetup; images written by cryptsetup (`luksFormat`,
//! offline `reencrypt --encrypt`) decrypt in mdu to the original bytes.
//! Cheap KDF settings keep every case fast. `reencrypt` holds the tests of
//! `mdu luks reencrypt`, with its crash sweeps.

mod benchmark;
mod check;
#[path = "../common/mod.rs"]
mod common;
mod cost;
mod cryptsetup;
mod header;
mod header_crash;
mod hostile;
mod keyslots;
mod luks1;
mod luks1_verbs;
mod passphrase;
mod reencrypt;
mod usage;

use std::path::Path;
use std::process::{Command, Output};

use common::{Rng, expect_code, have_tool, mdu, mdu_argv, run, scratch};

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

/// Under the emulator (CI's qemu run) fewer cases run, and the crash
/// sweeps of `reencrypt` do not run.
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
