//! Names the target conditions (`cfg(x86_simd)`, as `mdu_platform::target`
//! defines them), builds the C baselines the report measures beside mdu, looks for Intel
//! ISA-L (`libisal`), a peer of the dm-verity FEC encoder, and builds a
//! recent OpenSSL, a peer of the XTS and CBC paths.
//!
//! ISA-L is optional: when a program calling `ec_init_tables` and
//! `ec_encode_data` links with `-lisal` for the target, this sets
//! `cfg(mdu_isal)` and `MDU_ISAL_VERSION`; otherwise `MDU_ISAL_SKIPPED`
//! says why, and the report prints it in place of the ISA-L rows.
//!
//! The recent OpenSSL (the source of the `openssl-src` crate, 3.5 or later,
//! whose x86_64 build has the AVX-512 VAES XTS code) is built in release
//! builds on x86_64 Linux, where the report is timed; the rest of the
//! binary keeps the system OpenSSL of the `openssl` crate, a second peer.
//! The two must not meet at link time: the shim `csrc/openssl_peer.c` and
//! the `libcrypto.a` it needs are linked into one relocatable object
//! (`ld -r`) in which every symbol but the shim's `mdu_ossl_*` is made
//! local (`objcopy -G`). On success this sets `cfg(mdu_openssl_peer)` and
//! `MDU_OPENSSL_PEER_SOURCE`; otherwise `MDU_OPENSSL_PEER_SKIPPED` says why.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    mdu_platform::target::emit();
    build_facts();
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

    println!("cargo::rustc-check-cfg=cfg(mdu_openssl_peer)");
    println!("cargo::rerun-if-changed=csrc/openssl_peer.c");
    println!("cargo::rerun-if-env-changed=MDU_BENCH_NO_OPENSSL_PEER");
    match build_openssl_peer() {
        Ok(()) => {
            println!("cargo::rustc-cfg=mdu_openssl_peer");
            println!(
                "cargo::rustc-env=MDU_OPENSSL_PEER_SOURCE=openssl-src {}",
                openssl_src::version()
            );
        }
        Err(why) => {
            let why = why.replace(['\n', '\r'], " ");
            println!("cargo::rustc-env=MDU_OPENSSL_PEER_SKIPPED={why}");
            // A failed build where the peer belongs is said at build time
            // too, not only in the report.
            let timed = env::var("PROFILE").as_deref() == Ok("release")
                && env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64")
                && env::var_os("MDU_BENCH_NO_OPENSSL_PEER").is_none();
            if timed {
                println!("cargo::warning=the OpenSSL 3.5+ peer of the report is skipped: {why}");
            }
        }
    }
}

/// The facts of this build the report's header gives: the compiler
/// (`MDU_BENCH_RUSTC`), the commit (`MDU_BENCH_COMMIT`, `+dirty` when
/// tracked files differ from it) and the target and profile
/// (`MDU_BENCH_BUILD`). The build script runs again when the commit or
/// the index changes.
fn build_facts() {
    let output = |cmd: &mut Command| -> Option<String> {
        let o = cmd.output().ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let version = output(Command::new(&rustc).arg("--version"))
        .unwrap_or_else(|| format!("{rustc} (its version unknown)"));
    println!("cargo::rustc-env=MDU_BENCH_RUSTC={version}");

    let git = || {
        let mut c = Command::new("git");
        c.arg("-C")
            .arg(env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
        c
    };
    let commit = match output(git().args(["rev-parse", "--short=12", "HEAD"])) {
        Some(hash) => {
            for path in ["HEAD", "index", "packed-refs"] {
                if let Some(p) =
                    output(git().args(["rev-parse", "--path-format=absolute", "--git-path", path]))
                {
                    println!("cargo::rerun-if-changed={p}");
                }
            }
            if let Some(head) = output(git().args(["symbolic-ref", "-q", "HEAD"]))
                && let Some(p) =
                    output(git().args(["rev-parse", "--path-format=absolute", "--git-path", &head]))
            {
                println!("cargo::rerun-if-changed={p}");
            }
            let dirty = output(git().args(["status", "--porcelain", "--untracked-files=no"]))
                .is_some_and(|s| !s.is_empty());
            if dirty { format!("{hash}+dirty") } else { hash }
        }
        None => "unknown (not built from a git checkout)".to_string(),
    };
    println!("cargo::rustc-env=MDU_BENCH_COMMIT={commit}");
    println!(
        "cargo::rustc-env=MDU_BENCH_BUILD={}, {} profile, opt-level {}",
        env::var("TARGET").unwrap_or_default(),
        env::var("PROFILE").unwrap_or_default(),
        env::var("OPT_LEVEL").unwrap_or_default()
    );
}

/// Builds the recent OpenSSL and links it with its shim into
/// `libmdu_openssl_peer.a` in `OUT_DIR`, or says why it is not built.
fn build_openssl_peer() -> Result<(), String> {
    if env::var_os("MDU_BENCH_NO_OPENSSL_PEER").is_some() {
        return Err("MDU_BENCH_NO_OPENSSL_PEER was set when mdu-bench was built".to_string());
    }
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if arch != "x86_64" || os != "linux" || env::var("HOST") != env::var("TARGET") {
        return Err(format!(
            "the recent OpenSSL peer is built for native x86_64 Linux only (target {arch}-{os})"
        ));
    }
    // A debug build (the tests, clippy) never times anything: it is spared
    // the minute of compiling OpenSSL.
    if env::var("PROFILE").as_deref() != Ok("release") {
        return Err("the recent OpenSSL peer is built in release builds only \
             (cargo run --release -p mdu-bench)"
            .to_string());
    }
    let out = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let dir = out.join("openssl");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let src = openssl_src::source_dir();
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let o = cmd
            .output()
            .map_err(|e| format!("cannot run {what}: {e}"))?;
        if o.status.success() {
            return Ok(());
        }
        let err = String::from_utf8_lossy(&o.stderr);
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        Err(format!("{what} failed ({}): {}", o.status, last.trim()))
    };
    // Out of tree, libcrypto only: no shared objects, apps, tests or TLS.
    // A configured tree is kept, so a rebuild of mdu-bench only reruns make.
    if !dir.join("Makefile").exists() {
        run(
            Command::new("perl")
                .arg(src.join("Configure"))
                .args([
                    "linux-x86_64",
                    "no-shared",
                    "no-module",
                    "no-tests",
                    "no-apps",
                    "no-docs",
                    "no-ssl",
                    "no-tls",
                    "no-dtls",
                    "no-quic",
                    "no-engine",
                    "no-legacy",
                    "no-dso",
                    "no-comp",
                    "no-zlib",
                    "no-async",
                    "no-sock",
                    "no-ui-console",
                ])
                .arg(format!("--prefix={}", dir.join("install").display()))
                .current_dir(&dir),
            "OpenSSL's Configure (perl)",
        )?;
    }
    let mut make = Command::new("make");
    make.arg("build_libs").current_dir(&dir);
    if let Some(flags) = env::var_os("CARGO_MAKEFLAGS") {
        make.env("MAKEFLAGS", flags);
    }
    run(&mut make, "make (OpenSSL)")?;
    let shim = cc::Build::new()
        .file("csrc/openssl_peer.c")
        .include(dir.join("include"))
        .include(src.join("include"))
        .opt_level(2)
        .warnings(true)
        .cargo_metadata(false)
        .try_compile_intermediates()
        .map_err(|e| format!("cannot compile csrc/openssl_peer.c: {e}"))?;
    let joined = out.join("openssl_peer.o");
    run(
        Command::new("ld")
            .args(["-r", "-d", "-o"])
            .arg(&joined)
            .args(&shim)
            .arg(dir.join("libcrypto.a")),
        "ld -r (the shim with libcrypto.a)",
    )?;
    run(
        Command::new("objcopy")
            .args(["--wildcard", "-G", "mdu_ossl_*"])
            .arg(&joined),
        "objcopy (OpenSSL's symbols made local)",
    )?;
    let lib = out.join("libmdu_openssl_peer.a");
    let _ = std::fs::remove_file(&lib);
    run(
        Command::new("ar").arg("crs").arg(&lib).arg(&joined),
        "ar (libmdu_openssl_peer.a)",
    )?;
    println!("cargo::rustc-link-search=native={}", out.display());
    println!("cargo::rustc-link-lib=static=mdu_openssl_peer");
    Ok(())
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
