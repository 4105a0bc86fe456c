//! The outside reference tools of the interop tests, and what happens when
//! one is missing.
//!
//! The interop tests compare mdu with `fsverity digest` (fsverity-utils),
//! `veritysetup` (cryptsetup) and a Python reference on the `cryptography`
//! package. Without a tool, its tests cannot compare anything. Two
//! environment variables decide what that means:
//!
//! * neither set: each test that needs a missing tool returns early with a
//!   `SKIPPED` line, and one summary test per crate
//!   ([`check_installed`]) fails, naming the tests that did not run and the
//!   command that installs the tools;
//! * `MDU_SKIP_TOOLS=1`: the same skips, and the summary test passes (it
//!   still prints what did not run, under `--show-output`);
//! * `MDU_REQUIRE_TOOLS=1` (CI sets it): every test that needs a missing
//!   tool fails, and so does the summary. It wins over `MDU_SKIP_TOOLS`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The variable that turns a missing tool into a failing test.
pub const REQUIRE_TOOLS_VAR: &str = "MDU_REQUIRE_TOOLS";

/// The variable that lets the summary test pass with tools missing.
pub const SKIP_TOOLS_VAR: &str = "MDU_SKIP_TOOLS";

/// The variable that excuses a machine without the kernel oracle (root,
/// loop devices, ext4 encryption) from `MDU_REQUIRE_TOOLS=1`: CI sets it
/// only after its own probe of the kernel failed, and says so.
pub const NO_KERNEL_ORACLE_VAR: &str = "MDU_NO_KERNEL_ORACLE";

/// The variable that excuses a machine where ptrace is forbidden (so
/// `strace` cannot inject faults) from `MDU_REQUIRE_TOOLS=1`: CI sets it
/// only after its own probe failed, and says so.
pub const NO_PTRACE_VAR: &str = "MDU_NO_PTRACE";

/// The script that drives the running kernel as the fscrypt oracle
/// (`probe`, `make`, `cat`; see its docstring).
pub const FSCRYPT_KERNEL_SCRIPT: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fscrypt_kernel.py");

/// Directories searched after `PATH`: `veritysetup` lives in `/usr/sbin`,
/// which is not on every user's `PATH`.
const SBIN_DIRS: [&str; 2] = ["/usr/sbin", "/sbin"];

/// A reference tool some interop test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Tool {
    /// `fsverity` from fsverity-utils (`fsverity digest`).
    Fsverity,
    /// `veritysetup` from cryptsetup (`veritysetup format`, `verify`, `dump`).
    Veritysetup,
    /// `cryptsetup` (`luksFormat`, `luksDump`, `open --test-passphrase`,
    /// offline `reencrypt`).
    Cryptsetup,
    /// `python3` (the base64 module as an oracle).
    Python3,
    /// `python3` with the `cryptography` package (a per-sector dm-crypt
    /// reference).
    PythonCryptography,
    /// The running kernel's ext4 encryption, driven as root through loop
    /// mounts and the fscrypt ioctls ([`FSCRYPT_KERNEL_SCRIPT`]).
    KernelFscrypt,
    /// `strace`, whose fault injection kills a process at an exact sync
    /// point (the crash tests of in-place reencryption).
    Strace,
}

impl Tool {
    /// Every reference tool some interop test of the workspace uses.
    pub const ALL: [Tool; 7] = [
        Tool::Fsverity,
        Tool::Veritysetup,
        Tool::Cryptsetup,
        Tool::Python3,
        Tool::PythonCryptography,
        Tool::KernelFscrypt,
        Tool::Strace,
    ];

    /// What the tool is called in messages.
    ///
    /// ```
    /// use mdu_testkit::tools::Tool;
    /// assert_eq!(Tool::PythonCryptography.name(), "python3 `cryptography`");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Tool::Fsverity => "fsverity",
            Tool::Veritysetup => "veritysetup",
            Tool::Cryptsetup => "cryptsetup",
            Tool::Python3 => "python3",
            Tool::PythonCryptography => "python3 `cryptography`",
            Tool::KernelFscrypt => "the kernel's ext4 encryption",
            Tool::Strace => "strace",
        }
    }

    /// The program that is run.
    const fn program(self) -> &'static str {
        match self {
            Tool::Fsverity => "fsverity",
            Tool::Veritysetup => "veritysetup",
            Tool::Cryptsetup => "cryptsetup",
            Tool::Python3 | Tool::PythonCryptography | Tool::KernelFscrypt => "python3",
            Tool::Strace => "strace",
        }
    }

    /// The Debian (and Ubuntu) package that provides it.
    ///
    /// ```
    /// use mdu_testkit::tools::Tool;
    /// assert_eq!(Tool::Veritysetup.debian_package(), "cryptsetup-bin");
    /// ```
    pub const fn debian_package(self) -> &'static str {
        match self {
            Tool::Fsverity => "fsverity",
            Tool::Veritysetup | Tool::Cryptsetup => "cryptsetup-bin",
            Tool::Python3 => "python3",
            Tool::PythonCryptography => "python3-cryptography",
            Tool::KernelFscrypt => "e2fsprogs",
            Tool::Strace => "strace",
        }
    }

    /// The arguments of a quick run that succeeds when the tool works.
    const fn probe(self) -> &'static [&'static str] {
        match self {
            Tool::Fsverity | Tool::Veritysetup | Tool::Cryptsetup | Tool::Python3 => &["--version"],
            Tool::PythonCryptography => &["-c", "import cryptography.hazmat.primitives.ciphers"],
            Tool::KernelFscrypt => &[FSCRYPT_KERNEL_SCRIPT, "probe"],
            // Tracing must work, not just the binary: a container without
            // ptrace runs `strace -V` but cannot trace.
            Tool::Strace => &["-f", "-qq", "-o", "/dev/null", "true"],
        }
    }

    /// Whether a missing tool fails its tests: `MDU_REQUIRE_TOOLS=1`, except
    /// for the kernel oracle on a machine `MDU_NO_KERNEL_ORACLE=1` excuses.
    fn required(self) -> bool {
        flag(REQUIRE_TOOLS_VAR)
            && !(self == Tool::KernelFscrypt && flag(NO_KERNEL_ORACLE_VAR))
            && !(self == Tool::Strace && flag(NO_PTRACE_VAR))
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where to look for a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// `PATH`, then `/usr/sbin` and `/sbin`: for tests that run the tool by
    /// the path [`find`] returns.
    PathAndSbin,
    /// `PATH` only: for tests that run the tool by name. A tool found only
    /// in an sbin directory is reported as [`Missing::NotOnPath`].
    PathOnly,
}

/// Why a tool cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Missing {
    /// No such program on `PATH` (or in the sbin directories searched).
    NotFound {
        /// The tool.
        tool: Tool,
        /// What was searched, for the message.
        searched: &'static str,
    },
    /// The program exists, but only in a directory that is not on `PATH`,
    /// and the tests run it by name.
    NotOnPath {
        /// The tool.
        tool: Tool,
        /// Where it was found.
        found: PathBuf,
    },
    /// The program exists but its probe (`--version`, or the import of the
    /// Python package) failed.
    Broken {
        /// The tool.
        tool: Tool,
        /// The program that was run.
        program: PathBuf,
        /// Its exit status or start error, and the end of its stderr.
        detail: String,
    },
}

impl Missing {
    /// The tool that is missing.
    pub fn tool(&self) -> Tool {
        match self {
            Missing::NotFound { tool, .. }
            | Missing::NotOnPath { tool, .. }
            | Missing::Broken { tool, .. } => *tool,
        }
    }
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missing::NotFound { tool, searched } => write!(
                f,
                "`{}` is not installed (not found on {searched})",
                tool.program()
            ),
            Missing::NotOnPath { tool, found } => write!(
                f,
                "`{}` is at {}, but its directory is not on PATH and these tests run it by \
                 name (add {} to PATH)",
                tool.program(),
                found.display(),
                found.parent().unwrap_or(Path::new("/")).display()
            ),
            Missing::Broken {
                tool: Tool::PythonCryptography,
                program,
                detail,
            } => write!(
                f,
                "{} cannot import the `cryptography` package ({detail})",
                program.display()
            ),
            Missing::Broken {
                tool: Tool::KernelFscrypt,
                detail,
                ..
            } => write!(
                f,
                "the kernel cannot serve as the fscrypt oracle here ({detail}); it needs root, \
                 loop devices, mkfs.ext4 and ext4 encryption"
            ),
            Missing::Broken {
                tool,
                program,
                detail,
            } => write!(
                f,
                "`{} {}` failed ({detail})",
                program.display(),
                tool.probe().join(" ")
            ),
        }
    }
}

impl std::error::Error for Missing {}

/// The first file named `program` in `dirs`.
fn first_in(dirs: impl IntoIterator<Item = PathBuf>, program: &str) -> Option<PathBuf> {
    dirs.into_iter()
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Finds `tool` and checks that it runs.
///
/// # Errors
///
/// [`Missing`] says what is wrong: not installed, installed outside `PATH`
/// (with [`Search::PathOnly`]), or installed but not working.
pub fn find(tool: Tool, search: Search) -> Result<PathBuf, Missing> {
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    let on_path = first_in(std::env::split_paths(&path_var), tool.program());
    let in_sbin = || first_in(SBIN_DIRS.map(PathBuf::from), tool.program());
    let program = match (on_path, search) {
        (Some(p), _) => p,
        (None, Search::PathAndSbin) => in_sbin().ok_or(Missing::NotFound {
            tool,
            searched: "PATH, /usr/sbin or /sbin",
        })?,
        (None, Search::PathOnly) => {
            return Err(match in_sbin() {
                Some(found) => Missing::NotOnPath { tool, found },
                None => Missing::NotFound {
                    tool,
                    searched: "PATH",
                },
            });
        }
    };
    let detail = match Command::new(&program).args(tool.probe()).output() {
        Ok(out) if out.status.success() => return Ok(program),
        Ok(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
            match last {
                Some(line) => format!("{}: {}", out.status, line.trim()),
                None => out.status.to_string(),
            }
        }
        Err(e) => format!("cannot start it: {e}"),
    };
    Err(Missing::Broken {
        tool,
        program,
        detail,
    })
}

/// Whether `name` is set to `1`.
fn flag(name: &str) -> bool {
    std::env::var(name).as_deref() == Ok("1")
}

/// The tool a test needs: its path, or `None` after printing one `SKIPPED`
/// line that names the test, what is missing and the package to install.
///
/// # Panics
///
/// When the tool is missing and `MDU_REQUIRE_TOOLS=1`.
pub fn require(tool: Tool, search: Search, test: &str) -> Option<PathBuf> {
    match find(tool, search) {
        Ok(path) => Some(path),
        Err(missing) => {
            let fix = match &missing {
                Missing::NotOnPath { .. } => String::new(),
                _ => format!(
                    "; to run it: sudo apt-get install {}",
                    tool.debian_package()
                ),
            };
            if tool.required() {
                panic!("{test}: {missing}{fix} ({REQUIRE_TOOLS_VAR}=1 makes this a failure)");
            }
            eprintln!("SKIPPED {test}: {missing}{fix}");
            None
        }
    }
}

/// The summary test of a crate whose interop tests use outside tools.
/// `uses` lists each tool with the tests that skip without it.
///
/// Prints (under `--show-output`) where each tool was found. When one is
/// missing, fails with the list of tests that did not run and the command
/// that installs every missing tool, unless `MDU_SKIP_TOOLS=1` (and not
/// `MDU_REQUIRE_TOOLS=1`), in which case it prints the same list and passes.
///
/// # Panics
///
/// As described: a tool is missing and `MDU_SKIP_TOOLS=1` is not set.
pub fn check_installed(crate_name: &str, search: Search, uses: &[(Tool, &[&str])]) {
    let mut missing: Vec<(Missing, &[&str])> = Vec::new();
    for &(tool, tests) in uses {
        match find(tool, search) {
            Ok(path) => println!("{crate_name}: {tool}: {}", path.display()),
            Err(m) => missing.push((m, tests)),
        }
    }
    if missing.is_empty() {
        println!("{crate_name}: every reference tool of the interop tests is installed");
        return;
    }
    let mut skipped: Vec<&str> = missing
        .iter()
        .flat_map(|(_, tests)| tests.iter().copied())
        .collect();
    skipped.sort_unstable();
    skipped.dedup();
    let skipped = skipped.len();
    let mut report = format!(
        "{skipped} interop test(s) of {crate_name} did not run (the harness lists them as \
         passed): a reference tool is missing.\n"
    );
    for (m, tests) in &missing {
        report.push_str(&format!(
            "  {} (Debian package {}): {m}\n    not run: {}\n",
            m.tool(),
            m.tool().debian_package(),
            tests.join(", ")
        ));
    }
    // One command for every tool the workspace's interop tests use that is
    // not installed, not only this crate's: `cargo test --workspace` stops
    // at the first failing test binary, so the other crates' summaries may
    // not be seen. A tool that is installed outside PATH needs no package.
    let mut packages: Vec<&str> = Tool::ALL
        .into_iter()
        .filter(|&t| {
            // The kernel oracle's probe says what it lacks: root or loop
            // devices are not a package.
            t != Tool::KernelFscrypt
                && matches!(
                    find(t, Search::PathAndSbin),
                    Err(Missing::NotFound { .. } | Missing::Broken { .. })
                )
        })
        .map(Tool::debian_package)
        .collect();
    // cryptsetup and veritysetup come in one package.
    packages.dedup();
    if !packages.is_empty() {
        report.push_str(&format!(
            "Install the reference tools of every interop test (Debian, Ubuntu):\n    \
             sudo apt-get install {}\n",
            packages.join(" ")
        ));
    }
    if missing.iter().any(|(m, _)| m.tool().required()) {
        panic!("{report}{REQUIRE_TOOLS_VAR}=1 is set, so this is a failure.");
    }
    if flag(REQUIRE_TOOLS_VAR) {
        println!(
            "{report}{NO_KERNEL_ORACLE_VAR}=1 excuses the kernel oracle, so this is not a failure."
        );
        return;
    }
    if flag(SKIP_TOOLS_VAR) {
        println!("{report}{SKIP_TOOLS_VAR}=1 is set, so this is not a failure.");
        return;
    }
    panic!(
        "{report}or accept the skips: {SKIP_TOOLS_VAR}=1 cargo test --workspace\n\
         ({REQUIRE_TOOLS_VAR}=1 instead makes each of those tests fail. cargo test stops at \
         the first failing test binary, so the test binaries after this one did not run \
         either; --no-fail-fast runs them all.)"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_program_and_what_to_do() {
        let m = Missing::NotOnPath {
            tool: Tool::Veritysetup,
            found: PathBuf::from("/usr/sbin/veritysetup"),
        };
        let s = m.to_string();
        assert!(s.contains("/usr/sbin/veritysetup"), "{s}");
        assert!(s.contains("add /usr/sbin to PATH"), "{s}");
        let m = Missing::NotFound {
            tool: Tool::Fsverity,
            searched: "PATH",
        };
        assert_eq!(
            m.to_string(),
            "`fsverity` is not installed (not found on PATH)"
        );
        assert_eq!(m.tool().debian_package(), "fsverity");
    }

    #[test]
    fn a_program_that_is_nowhere_is_not_found() {
        // A tool name cannot be made up through the enum, so check the
        // search itself.
        assert_eq!(
            first_in([PathBuf::from("/nonexistent-mdu-dir")], "fsverity"),
            None
        );
    }
}
