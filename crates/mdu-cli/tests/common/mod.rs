//! Shared helpers of the CLI tests: the built binary, outside tools, a
//! seeded generator and scratch directories.

#![allow(dead_code, unreachable_pub)]

use std::path::Path;
use std::process::{Command, Output};

use mdu_testkit::tools::{self, Search, Tool};

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

/// The words that start the `mdu` binary under test (the emulator and its
/// arguments first, as [`mdu`] does), for a command that runs it through
/// another program (`setpriv`, `prlimit`, `unshare`).
pub fn mdu_argv() -> Vec<String> {
    let exe = env!("CARGO_BIN_EXE_mdu").to_owned();
    match std::env::var("MDU_TEST_RUNNER") {
        Ok(runner) if !runner.trim().is_empty() => runner
            .split_whitespace()
            .map(str::to_owned)
            .chain(std::iter::once(exe))
            .collect(),
        _ => vec![exe],
    }
}

/// `argv` under strace, to be killed (SIGKILL, strace's fault injection)
/// on entry to its `n`-th fsync or fdatasync.
pub fn strace_kill(n: usize, argv: &[String]) -> Command {
    let mut c = Command::new("strace");
    c.args([
        "-f",
        "-qq",
        "-o",
        "/dev/null",
        "-e",
        "trace=fsync,fdatasync",
    ])
    .arg(format!("--inject=fsync,fdatasync:signal=KILL:when={n}"))
    .args(argv);
    c
}

/// Runs `argv` killed at its `n`-th sync ([`strace_kill`]) and collects its
/// output.
pub fn killed_at_sync(n: usize, argv: &[String]) -> Output {
    run(&mut strace_kill(n, argv))
}

/// Run a command and collect its output.
pub fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// The reference tool called `name` (as the tests run it).
fn tool_named(name: &str) -> Tool {
    Tool::ALL
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no reference tool is called `{name}`"))
}

/// Whether the tool the tests run as `tool` (`fsverity`, `veritysetup`,
/// `python3`) works from PATH. When it does not: panic if
/// `MDU_REQUIRE_TOOLS=1`, otherwise print a `SKIPPED` line naming `test`,
/// the reason and the package to install (see `mdu_testkit::tools`).
/// `tests/tools.rs` lists every test that skips this way.
pub fn have_tool(tool: &str, test: &str) -> bool {
    tools::require(tool_named(tool), Search::PathOnly, test).is_some()
}

/// Whether python3 with the `cryptography` package is available (same
/// skip/fail rule as [`have_tool`]).
pub fn have_python_cryptography(test: &str) -> bool {
    tools::require(Tool::PythonCryptography, Search::PathOnly, test).is_some()
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
