//! `mdu verity format|verify`: dm-verity hash devices as `veritysetup`
//! writes and checks them.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Subcommand};
use mdu_core::io::{IoError, ReadAt};
use mdu_verity::dmverity::fec::{self, EarlyEncoder};
use mdu_verity::dmverity::{self, Formatted, Superblock, Verifier};
use mdu_verity::{Digest, Error as VerityError, HashAlg};

use crate::error::CliError;

mod errors;
mod format;
mod summary;
mod verify;

use crate::fec::FecArgs;
use crate::output::{self, Output};
use crate::{args, input, process, progress};
use errors::*;
use format::*;
use summary::*;
use verify::*;

/// dm-verity subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum VerityCmd {
    /// Hash DATA and write the hash device HASH (superblock and tree), like
    /// `veritysetup format`; prints the same summary. HASH is created if it
    /// does not exist; bytes of an existing HASH outside the hash area are
    /// kept. HASH and the FEC device must be regular files or block devices
    /// (written at positions); HASH may be DATA itself only with a
    /// --hash-offset past the data. Every output is checked and opened
    /// before hashing starts; the root hash file is written last.
    #[command(after_long_help = crate::output::HELP)]
    Format(FormatArgs),
    /// Check every data block of DATA against HASH and ROOT_HEX, like
    /// `veritysetup verify`: exit 0 if all match, 1 naming the first bad or
    /// missing block (or a damaged superblock) otherwise.
    ///
    /// Only ROOT_HEX and the options given on the command line are trusted.
    /// With a superblock (the default) the parameters not given are read
    /// from it, so the hash device chooses the shape of the tree, as with
    /// `veritysetup`; each option given pins its value, and a superblock
    /// that disagrees fails verification. Pin at least `--data-blocks` to
    /// know that DATA is the data the root hash was made for.
    Verify(VerifyArgs),
    /// Correct DATA and HASH with the FEC parity (`--fec-device`, required)
    /// where they no longer verify against ROOT_HEX, and write the
    /// corrected blocks back in place: only those blocks, to the file or
    /// block device itself (through a symbolic link, keeping its mode,
    /// owner and hard links), synced at the end. The corrections are
    /// verified against the root hash before anything is written; damage
    /// beyond what the parity corrects is exit status 1 with nothing
    /// written. An interrupted repair leaves each block either as it was
    /// or corrected: run it again.
    Repair(VerifyArgs),
    /// Print the superblock of HASH as `veritysetup dump` does (with
    /// `--fec-device`, the FEC lines too); `--json` for scripts.
    Dump(DumpArgs),
}

/// Arguments of `mdu verity dump`.
#[derive(Args, Debug)]
pub(crate) struct DumpArgs {
    /// Byte offset of the superblock on HASH; a multiple of 512.
    #[arg(long, value_name = "N", default_value_t = 0)]
    hash_offset: u64,
    #[command(flatten)]
    fec: crate::fec::FecArgs,
    /// Print one JSON object instead of the text.
    #[arg(long)]
    json: bool,
    /// Hash device or image.
    #[arg(value_name = "HASH")]
    hash_dev: PathBuf,
}

/// Options shared by `format` and `verify` (those of `veritysetup`).
#[derive(Args, Debug)]
pub(crate) struct VerityOpts {
    /// Hash algorithm [default: sha256]: sha1, sha224, sha256, sha384,
    /// sha512, sha3-224, sha3-256, sha3-384, sha3-512, rmd160, sm3,
    /// blake2b-512 or blake2s-256. OpenSSL's spellings ripemd160,
    /// blake2b512 and blake2s256 name the same functions. As with
    /// veritysetup, the superblock holds the name as given (in lower case)
    /// and the summary prints it as given. MD4 and MD5 are refused.
    #[arg(long, value_name = "ALG", value_parser = parse_hash)]
    hash: Option<HashArg>,
    /// Data block size in bytes (power of two, 512..=65536) [default: 4096].
    #[arg(long, value_name = "N")]
    data_block_size: Option<u32>,
    /// Hash block size in bytes (power of two, 512..=65536) [default: 4096].
    #[arg(long, value_name = "N")]
    hash_block_size: Option<u32>,
    /// Salt as hex (up to 256 bytes), or `-` for none. Default for format:
    /// 32 random bytes; for verify without a superblock: none.
    #[arg(long, value_name = "HEX|-")]
    salt: Option<String>,
    /// Hash type: 1 (normal) or 0 (original Chrome OS) [default: 1].
    #[arg(long, value_name = "0|1")]
    format: Option<u32>,
    /// Write no superblock (verify: read none; give every parameter again).
    #[arg(long)]
    no_superblock: bool,
    /// Byte offset of the hash area (superblock first) on HASH; multiple of 512.
    #[arg(long, value_name = "N", default_value_t = 0)]
    hash_offset: u64,
    /// UUID stored in the superblock (default: random, version 4).
    #[arg(long, value_name = "U")]
    uuid: Option<String>,
    /// Number of data blocks to hash (default: every whole block of DATA;
    /// verify with a superblock: the superblock's count).
    #[arg(long, value_name = "N")]
    data_blocks: Option<u64>,
    /// Hashing threads (default: every core; at most 1024).
    #[arg(long, value_name = "N", value_parser = crate::args::threads_arg)]
    threads: Option<usize>,
}

/// Arguments of `mdu verity format`.
#[derive(Args, Debug)]
pub(crate) struct FormatArgs {
    #[command(flatten)]
    opts: VerityOpts,
    /// Also write the root hash as hex (no newline) to this file.
    #[arg(long, value_name = "F")]
    root_hash_file: Option<PathBuf>,
    #[command(flatten)]
    fec: crate::fec::FecArgs,
    /// Print the summary as one JSON object instead of the text.
    #[arg(long)]
    json: bool,
    /// Read a DATA image file with read(2) instead of mapping it into
    /// memory. A mapped image is hashed where the page cache holds it,
    /// without a copy, but an image truncated by another process meanwhile
    /// ends mdu with SIGBUS; reading shows a progress bar on a terminal.
    /// Block devices are always read.
    #[arg(long)]
    no_mmap: bool,
    /// Data device or image.
    #[arg(value_name = "DATA")]
    data: PathBuf,
    /// Hash device or image.
    #[arg(value_name = "HASH")]
    hash_dev: PathBuf,
}

/// Arguments of `mdu verity verify`.
#[derive(Args, Debug)]
pub(crate) struct VerifyArgs {
    #[command(flatten)]
    opts: VerityOpts,
    #[command(flatten)]
    fec: crate::fec::FecArgs,
    /// On success, print one JSON object (the parameters used, and what
    /// FEC corrected) on standard output.
    #[arg(long)]
    json: bool,
    /// Read a DATA image file with read(2) instead of mapping it into
    /// memory. A mapped image is hashed where the page cache holds it,
    /// without a copy, but an image truncated by another process meanwhile
    /// ends mdu with SIGBUS; reading shows a progress bar on a terminal.
    /// Block devices are always read.
    #[arg(long)]
    no_mmap: bool,
    /// Data device or image.
    #[arg(value_name = "DATA")]
    data: PathBuf,
    /// Hash device or image.
    #[arg(value_name = "HASH")]
    hash_dev: PathBuf,
    /// The root hash, hex.
    #[arg(value_name = "ROOT_HEX")]
    root: String,
}

pub(crate) fn run(cmd: VerityCmd) -> Result<(), CliError> {
    match cmd {
        VerityCmd::Format(a) => format(a),
        VerityCmd::Verify(a) => verify(a, false),
        VerityCmd::Repair(a) => verify(a, true),
        VerityCmd::Dump(a) => dump(a),
    }
}

/// `--hash`: the algorithm, and its name as given.
#[derive(Clone, Debug)]
struct HashArg {
    alg: HashAlg,
    given: String,
}

/// `--hash`: a name [`HashAlg::from_name`] knows.
fn parse_hash(name: &str) -> Result<HashArg, String> {
    let alg = HashAlg::from_name(name).map_err(|e| e.to_string())?;
    Ok(HashArg {
        alg,
        given: name.to_owned(),
    })
}

/// Writes the `--hash` name as given, in lower case, into the superblock
/// `out` describes where the two spellings differ (`rmd160` for
/// `ripemd160`): what veritysetup stores.
fn spell_superblock_name(
    o: &VerityOpts,
    p: &dmverity::Params,
    out: &Formatted,
    file: &File,
    path: &Path,
) -> Result<(), CliError> {
    let Some(h) = &o.hash else {
        return Ok(());
    };
    out.spell_hash_name(file, p.hash_offset, &h.given)
        .map_err(|e| match e {
            VerityError::Io(e) => CliError::io(path, "write the superblock", e),
            e => CliError::lib(path, e),
        })
}

/// The superblock at byte `offset` (`--hash-offset`, a multiple of 512)
/// of the hash device `path`; `bad` says what one that cannot be parsed
/// is.
fn read_superblock_at(
    path: &Path,
    hash: &mut File,
    offset: u64,
    bad: impl FnOnce(VerityError) -> CliError,
) -> Result<Superblock, CliError> {
    check_hash_offset(offset)?;
    Superblock::read_from(hash, offset).map_err(|e| match e {
        VerityError::Io(io) => CliError::io(path, "read the superblock", io),
        e => bad(e),
    })
}

/// `--hash-offset` of a superblock to read: a multiple of 512.
fn check_hash_offset(offset: u64) -> Result<(), CliError> {
    if !offset.is_multiple_of(512) {
        return Err(CliError::Usage(format!(
            "--hash-offset {offset} is invalid: it must be a multiple of 512"
        )));
    }
    Ok(())
}

/// The values given on the command line, each pinned (`verify` with a
/// superblock checks them against it).
fn pins(o: &VerityOpts) -> Result<dmverity::Pins, CliError> {
    let hash = o.hash.as_ref().map(|h| h.alg);
    let salt = match o.salt.as_deref() {
        Some("-") => Some(Vec::new()),
        Some(s) => Some(args::parse_hex("salt", s)?),
        None => None,
    };
    if o.data_blocks == Some(0) {
        return Err(CliError::Usage(
            "--data-blocks 0 is invalid: dm-verity needs at least one data block".into(),
        ));
    }
    Ok(dmverity::Pins {
        hash,
        data_block_size: o.data_block_size,
        hash_block_size: o.hash_block_size,
        salt,
        format: o.format,
        data_blocks: o.data_blocks,
    })
}

fn params(o: &VerityOpts, random_defaults: bool) -> Result<dmverity::Params, CliError> {
    let pins = pins(o)?;
    let mut defaults = dmverity::Params {
        superblock: !o.no_superblock,
        hash_offset: o.hash_offset,
        ..dmverity::Params::default()
    };
    if random_defaults && pins.salt.is_none() {
        defaults.salt = vec![0u8; 32];
        process::random_bytes(&mut defaults.salt)?;
    }
    defaults.uuid = match o.uuid.as_deref() {
        Some(u) => dmverity::parse_uuid(u).ok_or_else(|| {
            CliError::Usage(format!(
                "UUID {u:?} is invalid: expected 32 hex digits as 8-4-4-4-12"
            ))
        })?,
        None if random_defaults => {
            let mut u = [0u8; 16];
            process::random_bytes(&mut u)?;
            dmverity::random_uuid(u)
        }
        None => [0; 16],
    };
    pins.params(defaults)
        .map_err(|e| CliError::Usage(format!("invalid dm-verity parameters: {e}")))
}

/// `veritysetup` refuses a data area that overlaps the hash area on one
/// device ("Data area overlaps with hash area"). DATA and HASH are one
/// device when they are the same inode under any name, or device nodes of
/// the same device (same `rdev`, as two nodes of one loop device are). The
/// data area is bytes `0..data_blocks * data_block_size` (every whole block
/// of DATA when not pinned, from its real size: a block device's by seeking
/// to its end, where its metadata says 0); the hash area starts at
/// `--hash-offset`. `data_len` is the size the caller found, if any.
fn check_overlap(
    data: &Path,
    hash: &Path,
    p: &dmverity::Params,
    data_len: u64,
) -> Result<(), CliError> {
    let same = std::fs::metadata(data).is_ok_and(|d| output::same_file(&d, hash));
    if !same {
        return Ok(());
    }
    let data_len = match p.data_blocks {
        Some(_) => 0,
        None => input::input_size(data)?.max(data_len),
    };
    p.check_shared_device(data_len).map_err(|e| match e {
        VerityError::DataOverlapsHash { data_end, .. } => CliError::Input {
            path: hash.to_owned(),
            offset: p.hash_offset,
            rule: format!(
                "data and hash are the same device and the data area ({data_end} bytes) \
                 overlaps the hash area starting at --hash-offset {}",
                p.hash_offset
            ),
        },
        e => CliError::lib(hash, e),
    })
}
