//! `mdu fscrypt` against the running kernel: the kernel encrypts a tree on
//! a loop-mounted ext4 image; `mdu fscrypt extract` gives the same files,
//! modes, times and symlinks, and `mdu fscrypt ls` without a key gives the
//! no-key names `ls` showed. A wrong key is refused with both identifiers
//! and writes nothing.

#[path = "../common/mod.rs"]
mod common;
mod extract;
mod hostile;
mod kernel;

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use common::{expect_code, have_tool, mdu, run, scratch};
use mdu_testkit::tools::FSCRYPT_KERNEL_SCRIPT;
use mdu_testkit::unhex;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Makes a key file of 64 bytes.
fn key_file(dir: &Path) -> std::path::PathBuf {
    let key = dir.join("key");
    std::fs::write(
        &key,
        (0u8..64).map(|i| i.wrapping_mul(29)).collect::<Vec<_>>(),
    )
    .unwrap();
    key
}

/// Whether mkfs.ext4 and debugfs (e2fsprogs) run here; prints a `SKIPPED`
/// line naming `test` when they do not.
fn have_e2fsprogs(test: &str) -> bool {
    let ok = ["mkfs.ext4", "debugfs"].iter().all(|t| {
        Command::new(t)
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !ok {
        eprintln!("SKIPPED {test}: needs mkfs.ext4 and debugfs on PATH (e2fsprogs)");
    }
    ok
}

/// A fresh 64 MiB ext4 image of 4 KiB blocks (no journal, few inodes:
/// room for data), then `debugfs -w` commands on it.
fn e2fs_image(path: &Path, debugfs: &[String]) {
    e2fs_image_with(path, "^has_journal", debugfs);
}

/// As [`e2fs_image`], with the `mkfs.ext4 -O` features given.
fn e2fs_image_with(path: &Path, features: &str, debugfs: &[String]) {
    std::fs::File::create(path)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let out = run(Command::new("mkfs.ext4")
        .args(["-q", "-F", "-b", "4096", "-N", "128", "-O", features])
        .arg(path));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cmds = path.with_extension("debugfs");
    std::fs::write(&cmds, debugfs.join("\n") + "\n").unwrap();
    let out = run(Command::new("debugfs")
        .arg("-w")
        .arg("-f")
        .arg(&cmds)
        .arg(path));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
