//! Builds the C baselines the report measures beside mdu, and looks for
//! Intel ISA-L (`libisal`), a peer of the dm-verity FEC encoder.
//!
//! ISA-L is optional: when a program calling `ec_init_tables` and
//! `ec_encode_data` links with `-lisal` for the target, this sets
//! `cfg(mdu_isal)` and `MDU_ISAL_VERSION`; otherwise `MDU_ISAL_SKIPPED`
//! says why, and the report prints it in place of the ISA-L rows.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=csrc/kernel_base64.c");
    cc::Build::new()
        .file("csrc/kernel_base64.c")
        // The kernel builds with -O2; so do the baselines.
        .opt_level(2)
        .warnings(true)
        .compile("mdu_kernel_base64");

    println!("cargo::rustc-check-cfg=cfg(mdu_isal)");
    println!("cargo::rerun-if-env-changed=MDU_BENCH_NO_ISAL");
    match probe_isal() {
        Ok(version) => {
            println!("cargo::rustc-cfg=mdu_isal");
            println!("cargo::rustc-env=MDU_ISAL_VERSION={version}");
        }
        Err(why) => {
            // One line, for the report.
            let why = why.replace(['\n', '\r'], " ");
            println!("cargo::rustc-env=MDU_ISAL_SKIPPED={why}");
            // Other targets never have the peer; say so only where it could run.
            if env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
                println!("cargo::warning=the ISA-L peer of the report is skipped: {why}");
            }
        }
    }
}

/// The version of the ISA-L that a test program links with, or why there
/// is none to use.
fn probe_isal() -> Result<String, String> {
    if env::var_os("MDU_BENCH_NO_ISAL").is_some() {
        return Err("MDU_BENCH_NO_ISAL was set when mdu-bench was built".to_string());
    }
    // The peer's declarations and kernels are x86-64's (ISA-L's other
    // ports are not measured here).
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if arch != "x86_64" {
        return Err(format!(
            "the ISA-L peer is measured on x86_64 only (target {arch})"
        ));
    }
    let out = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let src = out.join("isal_probe.c");
    std::fs::write(
        &src,
        "void ec_init_tables(int, int, unsigned char *, unsigned char *);\n\
         void ec_encode_data(int, int, int, unsigned char *, unsigned char **, unsigned char **);\n\
         int main(void) {\n\
             unsigned char a[1] = {1}, t[32], d[64] = {0}, p[64];\n\
             unsigned char *dp[1] = {d}, *pp[1] = {p};\n\
             ec_init_tables(1, 1, a, t);\n\
             ec_encode_data(64, 1, 1, t, dp, pp);\n\
             return p[0];\n\
         }\n",
    )
    .map_err(|e| e.to_string())?;
    // The target's C compiler, as the cc crate picks it (a cross build
    // asks the cross toolchain, which has no x86-64 libisal).
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .cargo_warnings(false)
        .try_get_compiler()
        .map_err(|e| format!("no C compiler to probe for libisal: {e}"))?;
    let exe = out.join("isal_probe");
    let output = compiler
        .to_command()
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg("-lisal")
        .output()
        .map_err(|e| format!("cannot run the C compiler to probe for libisal: {e}"))?;
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        let first = err
            .lines()
            .find(|l| l.contains("cannot find") || l.contains("undefined reference"))
            .or_else(|| err.lines().next())
            .unwrap_or("no message")
            .trim()
            .to_string();
        return Err(format!(
            "libisal was not found when mdu-bench was built ({first}); install \
             libisal-dev (Debian) and rebuild mdu-bench (touch its build.rs so \
             that cargo probes again)"
        ));
    }
    // The version, for the report: pkg-config knows it; the library does not
    // say.
    let version = Command::new("pkg-config")
        .args(["--modversion", "libisal"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "(version unknown)".to_string());
    Ok(version)
}
