//! Records what `mdu --version` says about the build: the commit it was
//! built from (when built from a git checkout) and the target.

use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| !o.stdout.is_empty());
    let commit = if dirty && commit != "unknown" {
        format!("{commit}+changes")
    } else {
        commit
    };
    println!("cargo:rustc-env=MDU_COMMIT={commit}");
    println!(
        "cargo:rustc-env=MDU_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
    // Rebuilt when HEAD moves (the files exist in a checkout only).
    for f in ["../../.git/HEAD", "../../.git/index"] {
        if std::path::Path::new(f).exists() {
            println!("cargo:rerun-if-changed={f}");
        }
    }
}
