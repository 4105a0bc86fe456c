//! Shared helpers of the CLI tests: the built binary, outside tools, a
//! seeded generator and scratch directories.

#![allow(dead_code, unreachable_pub)]

use std::path::Path;
use std::process::{Command, Output};

/// The `mdu` binary under test.
///
/// When the tests run under an emulator (cross testing, see
/// `.ci/qemu-aarch64.toml`), `MDU_TEST_RUNNER` names it with its arguments,
/// and the binary, built for the same target as the tests, is started
/// through it.
pub fn mdu() -> Command {
    let exe = env!("CARGO_BIN_EXE_mdu");
    match std::env::var("MDU_TEST_RUNNER") {
        Ok(runner) if !runner.trim().is_empty() => {
            let mut words = runner.split_whitespace();
            let mut cmd = Command::new(words.next().unwrap_or_default());
            cmd.args(words).arg(exe);
            cmd
        }
        _ => Command::new(exe),
    }
}

/// Run a command and collect its output.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// Whether `tool` can be run (`tool --version` succeeds). When it cannot:
/// panic if `MDU_REQUIRE_TOOLS=1`, otherwise print why the test is skipped.
pub fn have_tool(tool: &str, test: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("MDU_REQUIRE_TOOLS").as_deref() == Ok("1") {
            panic!("{test}: `{tool}` is required (MDU_REQUIRE_TOOLS=1) but cannot be run");
        }
        eprintln!(
            "SKIPPED {test}: `{tool}` is not installed (set MDU_REQUIRE_TOOLS=1 to fail instead)"
        );
    }
    ok
}

/// Whether python3 with the `cryptography` package is available (same
/// skip/fail rule as [`have_tool`]).
pub fn have_python_cryptography(test: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import cryptography.hazmat.primitives.ciphers"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("MDU_REQUIRE_TOOLS").as_deref() == Ok("1") {
            panic!("{test}: python3 with `cryptography` is required (MDU_REQUIRE_TOOLS=1)");
        }
        eprintln!("SKIPPED {test}: python3 with `cryptography` is not available");
    }
    ok
}

/// A small deterministic generator (xorshift64*), seeded per test so a
/// failure can be replayed; the seed is printed.
pub struct Rng(u64);

impl Rng {
    pub fn new(test: &str) -> Rng {
        let seed = std::env::var("MDU_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            })
            | 1;
        eprintln!("{test}: MDU_TEST_SEED={seed}");
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n + 8);
        while v.len() < n {
            v.extend_from_slice(&self.next().to_le_bytes());
        }
        v.truncate(n);
        v
    }
}

/// A fresh scratch directory (removed on drop).
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("mdu-cli-test-")
        .tempdir()
        .expect("scratch directory")
}

/// Names of the entries of `dir` (to check that nothing was left behind).
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Panic with the command's stderr unless it exited with `code`.
pub fn expect_code(out: &Output, code: i32, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{what}: exit status {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
