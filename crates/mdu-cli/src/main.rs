//! `mdu`: fs-verity digests, dm-verity hash devices (with FEC), dm-crypt
//! plain-mode images, LUKS2 images (format, encrypt, decrypt, dump, check,
//! reencrypt), fscrypt-encrypted ext4 images read offline, and base64,
//! byte-compatible with `fsverity digest`, `veritysetup`, `cryptsetup`
//! and the kernel. Each command is its options, one library call and the
//! printing; every file it writes goes through `output`.
//!
//! Exit status: 0 success, 1 verification failed, 2 bad usage or input,
//! 5 busy (another process holds the lock of what would be changed);
//! under `mdu luks`, cryptsetup's (see README.md).

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod args;
mod base64;
mod crypt;
mod error;
mod fec;
mod fscrypt;
mod fsverity;
mod input;
mod luks;
mod output;
mod paths;
mod pipeline;
mod process;
mod progress;
mod verity;

/// Storage-crypto images from the command line: fs-verity digests,
/// dm-verity hash devices, dm-crypt plain-mode encryption, LUKS2 images,
/// base64.
///
/// Exit status: 0 success, 1 verification failed, 2 bad usage or input,
/// 5 busy (another process, mdu or cryptsetup, holds the lock of a file
/// this command would change in place); under `mdu luks`, cryptsetup's
/// (`mdu luks --help`).
#[derive(Parser, Debug)]
#[command(name = "mdu", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// fs-verity file digests (as `fsverity digest`).
    ///
    /// Exit status (fsverity's): 0 success; 1 a file that cannot be read,
    /// hashed or written; 2 bad usage (an option or its value).
    #[command(subcommand)]
    Fsverity(fsverity::FsverityCmd),
    /// dm-verity hash devices (as `veritysetup format` / `verify`).
    #[command(subcommand)]
    Verity(verity::VerityCmd),
    /// dm-crypt plain-mode encryption with AES-XTS (as a `cryptsetup open
    /// --type plain` mapping would read and write).
    ///
    /// A regular-file OUT is replaced atomically (a failed or interrupted
    /// run leaves it as it was, and nothing next to it); a block device is
    /// written in place after a size check and synced; a character device
    /// or FIFO is written as a stream (`mdu crypt encrypt --help` has the
    /// details).
    ///
    /// OUT may not be the same file or device as IN (same inode, or the
    /// same device under another name) unless --in-place is given, which
    /// rewrites IN itself (a regular file or block device) chunk by chunk,
    /// never reading what it has already overwritten, and syncs it at the
    /// end. --in-place is not atomic either: keep a copy until it is done.
    #[command(subcommand)]
    Crypt(crypt::CryptCmd),
    /// LUKS2 images as plain files (as `cryptsetup luksFormat`,
    /// `luksDump` and offline `reencrypt` read and write them), with
    /// cryptsetup's verb names, options and exit statuses.
    ///
    /// Exit status (cryptsetup's): 0 success; 1 wrong parameters (bad
    /// usage, a damaged header or not a LUKS device, an unreadable key
    /// file); 2 no permission or a wrong passphrase; 3 out of memory; 4 a
    /// wrong device (missing, or not a file or block device); 5 busy. A
    /// damaged primary header that the secondary copy replaces is a
    /// warning.
    Luks(luks::LuksArgs),
    /// The KDF and cipher speeds of LUKS, as `cryptsetup benchmark`
    /// (the same as `mdu luks benchmark`).
    Benchmark(luks::BenchmarkArgs),
    /// base64 between stdin and stdout.
    #[command(subcommand)]
    Base64(base64::Base64Cmd),
    /// fscrypt-encrypted ext4 images read offline, as the kernel shows
    /// them: names and no-key names, file contents, symlinks, policies.
    #[command(subcommand)]
    Fscrypt(fscrypt::FscryptCmd),
    /// Shell completions for bash, zsh, fish, elvish or PowerShell, on
    /// stdout: e.g. `source <(mdu completions bash)`.
    Completions {
        /// The shell.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Man pages: `mdu(1)` on stdout, or with `--dir DIR` one page per
    /// command and subcommand (`mdu-luks-reencrypt.1`, ...) written there.
    Man {
        /// Write every page into this directory (it must exist).
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

/// What `mdu --version` says: the version, the commit and target it was
/// built for, and the backend each primitive selects on this CPU.
fn long_version() -> String {
    format!(
        "{} (commit {}, {})\nbackends on this CPU: xts {}, sha256 {}, base64 {}",
        env!("CARGO_PKG_VERSION"),
        env!("MDU_COMMIT"),
        env!("MDU_TARGET"),
        mdu_xts::Backend::detect().name(),
        mdu_verity::sha256::Backend::detect().name(),
        mdu_base64::Backend::detect().name(),
    )
}

/// Writes generated text to stdout.
fn to_stdout(text: &[u8]) -> Result<(), error::CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text).and_then(|()| out.flush()) {
        // A reader that has seen enough (`| head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| error::CliError::io(std::path::Path::new("<stdout>"), "write", e)),
    }
}

/// `mdu man`: the page of `cmd` and, with a directory, of every
/// subcommand below it, named after the path of commands.
fn man(cmd: clap::Command, dir: Option<&std::path::Path>) -> Result<(), error::CliError> {
    let Some(dir) = dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd)
            .render(&mut out)
            .map_err(|e| error::CliError::io(std::path::Path::new("<stdout>"), "write", e))?;
        return to_stdout(&out);
    };
    fn pages(
        cmd: &clap::Command,
        name: &str,
        dir: &std::path::Path,
    ) -> Result<(), error::CliError> {
        let path = dir.join(format!("{name}.1"));
        let mut out = Vec::new();
        let page = cmd.clone().name(name.to_owned());
        clap_mangen::Man::new(page)
            .render(&mut out)
            .and_then(|()| std::fs::write(&path, &out))
            .map_err(|e| error::CliError::io(&path, "write the man page", e))?;
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            pages(sub, &format!("{name}-{}", sub.get_name()), dir)?;
        }
        Ok(())
    }
    let mut cmd = cmd;
    cmd.build();
    pages(&cmd, "mdu", dir)
}

/// Exit status of bad usage under `mdu luks`: cryptsetup's 1 (clap's is 2).
const LUKS_USAGE: u8 = 1;

fn main() -> ExitCode {
    let matches = match Cli::command()
        .long_version(long_version())
        .try_get_matches()
    {
        Ok(m) => m,
        // --help and --version print and exit 0; bad usage exits 2, and 1
        // under `mdu luks`, as cryptsetup.
        Err(e) if e.use_stderr() && std::env::args_os().nth(1).is_some_and(|a| a == "luks") => {
            let _ = e.print();
            return ExitCode::from(LUKS_USAGE);
        }
        Err(e) => e.exit(),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match cli.cmd {
        Cmd::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "mdu", &mut out);
            to_stdout(&out)
        }
        Cmd::Man { dir } => man(Cli::command(), dir.as_deref()),
        Cmd::Fsverity(c) => fsverity::run(c),
        Cmd::Verity(c) => verity::run(c),
        Cmd::Crypt(c) => crypt::run(c),
        Cmd::Luks(c) => luks::run(c),
        Cmd::Benchmark(a) => luks::benchmark(a),
        Cmd::Base64(c) => base64::run(c),
        Cmd::Fscrypt(c) => fscrypt::run(c),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mdu: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
