//! `mdu`: fs-verity digests, dm-verity hash devices, dm-crypt plain-mode
//! images and base64 from the command line, byte-compatible with
//! `fsverity digest`, `veritysetup format/verify` and dm-crypt.
//!
//! Exit status: 0 success, 1 verification failed, 2 bad usage or input,
//! 5 busy (another process holds the lock of what would be changed).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod base64;
mod crypt;
mod fec;
mod fscrypt;
mod fsverity;
mod journal;
mod lock;
mod luks;
mod output;
mod pipeline;
mod util;
mod verity;

/// Storage-crypto images from the command line: fs-verity digests,
/// dm-verity hash devices, dm-crypt plain-mode encryption, LUKS2 images,
/// base64.
///
/// Exit status: 0 success, 1 verification failed, 2 bad usage or input,
/// 5 busy (another process, mdu or cryptsetup, holds the lock of a file
/// this command would change in place).
#[derive(Parser, Debug)]
#[command(name = "mdu", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// fs-verity file digests (as `fsverity digest`).
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
    /// `luksDump` and offline `reencrypt` read and write them).
    ///
    /// Exit status 1 when the passphrase opens no keyslot or the image is
    /// damaged; a damaged primary header that the secondary copy replaces is
    /// a warning.
    #[command(subcommand)]
    Luks(luks::LuksCmd),
    /// base64 between stdin and stdout.
    #[command(subcommand)]
    Base64(base64::Base64Cmd),
    /// fscrypt-encrypted ext4 images read offline, as the kernel shows
    /// them: names and no-key names, file contents, symlinks, policies.
    #[command(subcommand)]
    Fscrypt(fscrypt::FscryptCmd),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.cmd {
        Cmd::Fsverity(c) => fsverity::run(c),
        Cmd::Verity(c) => verity::run(c),
        Cmd::Crypt(c) => crypt::run(c),
        Cmd::Luks(c) => luks::run(c),
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
