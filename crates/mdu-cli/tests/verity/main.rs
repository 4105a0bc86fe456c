//! `mdu verity format|verify` against `veritysetup format|verify`: the same
//! summary, the same hash-device bytes and the same verdict on intact and
//! corrupted images, over random sizes and options; and (`fsverity`) the
//! other Merkle tree, `mdu fsverity digest` against `fsverity digest`.

#[path = "../common/mod.rs"]
mod common;
mod damage;
mod fec;
mod fsverity;
mod veritysetup;

use std::path::Path;
use std::process::Command;

use common::{Rng, expect_code, have_tool, mdu, run, scratch};
use mdu_testkit::hex;

fn flip(path: &Path, at: u64, bit: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at as usize] ^= 1 << bit;
    std::fs::write(path, bytes).unwrap();
}

fn root_of(stdout: &[u8]) -> String {
    String::from_utf8_lossy(stdout)
        .lines()
        .find_map(|l| l.strip_prefix("Root hash:"))
        .expect("a Root hash line")
        .trim()
        .to_owned()
}

fn veritysetup_verify(data: &Path, hash: &Path, opts: &[String], root: &str) -> bool {
    let out = run(Command::new("veritysetup")
        .arg("verify")
        .args(opts)
        .arg(data)
        .arg(hash)
        .arg(root));
    out.status.success()
}

fn mdu_verify(data: &Path, hash: &Path, opts: &[String], root: &str) -> std::process::Output {
    run(mdu()
        .args(["verity", "verify"])
        .args(opts)
        .arg(data)
        .arg(hash)
        .arg(root))
}
