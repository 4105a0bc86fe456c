//! The one output layer, tried as a hostile or unlucky user would: special
//! files, symbolic links, the input given again as the output, read-only
//! outputs, devices too small, full disks, and runs ended by signals.
//!
//! Tests that need root (loop devices, mounts, another user) print a
//! `SKIPPED` line and return when they cannot set up.

#[path = "../common/mod.rs"]
mod common;
mod refusals;
mod signals;
mod special;

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{Rng, entries, expect_code, mdu, run, scratch};

/// A small LUKS2 image of `plain` (PBKDF2 with 1000 iterations: fast).
fn luks_image(dir: &Path, plain: &Path, name: &str) -> PathBuf {
    let img = dir.join(name);
    let pass = dir.join("pass");
    if !pass.exists() {
        fs::write(&pass, b"correct horse").unwrap();
    }
    let out = run(mdu()
        .args([
            "luks",
            "encrypt",
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1000",
        ])
        .arg("--key-file")
        .arg(&pass)
        .arg(plain)
        .arg(&img));
    expect_code(&out, 0, "mdu luks encrypt");
    img
}

fn luks_decrypt(dir: &Path, img: &Path, out: &Path) -> Output {
    run(mdu()
        .args(["luks", "decrypt", "--key-file"])
        .arg(dir.join("pass"))
        .arg(img)
        .arg(out))
}

/// Under a user-mode emulator (MDU_EMULATED, set by .ci/qemu-aarch64.toml)
/// the signal tests take smaller inputs and fewer rounds, and say so.
fn emulated() -> bool {
    std::env::var_os("MDU_EMULATED").is_some()
}

/// (MiB of input, rounds per signal) of the signal tests.
fn signal_test_size(test: &str) -> (usize, usize) {
    if emulated() {
        eprintln!("{test}: under emulation: 6 MiB inputs, one round per signal");
        (6, 1)
    } else {
        (24, 3)
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

const PREVIOUS: &[u8] = b"previous contents";

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}
