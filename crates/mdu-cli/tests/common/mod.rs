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

/// The seeded generator: `Rng::new(test)` prints its seed, and
/// `MDU_TEST_SEED` replays it. (Not every test file draws from it.)
#[allow(unused_imports)]
pub use mdu_testkit::Rng;

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

/// The exit status of a bad input file (or output refused) for the
/// command `args`: mdu's 2, cryptsetup's 1 under `mdu luks` and fsverity's
/// 1 under `mdu fsverity` (the README's exit-status table).
pub fn bad_input<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> i32 {
    match args.first().map(|a| a.as_ref().to_owned()) {
        Some(a) if a == "luks" || a == "fsverity" => 1,
        _ => 2,
    }
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

/// Whether `MDU_EXHAUSTIVE=1`: every kill point of every crash sweep runs
/// (see [`KillSweep`]).
pub fn exhaustive() -> bool {
    mdu_core::testing::sample::exhaustive()
}

/// Which sync points a crash sweep kills a run at: every `stride`-th from
/// `first`, then each of the `tail` last points (the clean-up at the end of
/// a run, where the states are densest) that the stride skipped. With
/// `MDU_EXHAUSTIVE=1`, every point from 1 to the end.
///
/// The number of points is learnt on the way: the first point at which the
/// run ends by itself is its end.
#[derive(Clone, Copy, Debug)]
pub struct KillSweep {
    pub first: usize,
    pub stride: usize,
    pub tail: usize,
}

impl KillSweep {
    /// Every `stride`-th point from 1, and the last `stride - 1`.
    pub const fn every(stride: usize) -> KillSweep {
        KillSweep {
            first: 1,
            stride,
            tail: stride - 1,
        }
    }

    /// Kills at the sweep's points: `trial(n)` runs the command killed at
    /// its `n`-th sync and checks what the kill left; it returns whether the
    /// run was killed (`false`: it ended by itself, having fewer syncs).
    /// Prints `test: what: sampled: N of M kill points (...);
    /// MDU_EXHAUSTIVE=1 runs all` (or `all M kill points`) and returns N.
    ///
    /// # Panics
    ///
    /// When no run ends by itself before sync 1000 (strace not tracing),
    /// and where `trial` does.
    pub fn run(self, test: &str, what: &str, mut trial: impl FnMut(usize) -> bool) -> usize {
        let all = exhaustive();
        let (first, stride) = if all {
            (1, 1)
        } else {
            (self.first.max(1), self.stride.max(1))
        };
        let mut tried = 0;
        let mut last_killed = 0;
        let mut end = 0;
        let mut n = first;
        while end == 0 {
            assert!(
                n < 1000,
                "{test}: {what}: no run ended by itself before sync {n}: is strace tracing?"
            );
            if trial(n) {
                tried += 1;
                last_killed = n;
                n += stride;
            } else {
                end = n;
            }
        }
        // Each of the last `tail` points that the stride skipped.
        if !all {
            for m in end.saturating_sub(self.tail).max(first)..end {
                if m <= last_killed && (m - first) % stride == 0 {
                    continue;
                }
                if trial(m) {
                    tried += 1;
                } else {
                    end = m;
                    break;
                }
            }
        }
        let total = end - 1;
        if all || tried == total {
            println!("{test}: {what}: all {total} kill points");
        } else {
            let tail = match self.tail.min(total) {
                0 => String::new(),
                t => format!(" and each of the last {t}"),
            };
            println!(
                "{test}: {what}: sampled: {tried} of {total} kill points (every {} from \
                 {first}{tail}); MDU_EXHAUSTIVE=1 runs all",
                mdu_core::testing::sample::ordinal(stride),
            );
        }
        tried
    }
}
