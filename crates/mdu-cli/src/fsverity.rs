//! `mdu fsverity digest`: what `fsverity digest` (fsverity-utils) prints.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use mdu_verity::{HashAlg, Source, fsverity};

use crate::error::CliError;
use crate::output::Output;
use crate::{args, input, process};

/// fs-verity subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum FsverityCmd {
    /// Print the fs-verity digest of each FILE as `fsverity digest` does:
    /// `<alg>:<hex digest> <file>`.
    #[command(after_long_help = crate::output::HELP)]
    Digest(DigestArgs),
}

/// Options of `mdu fsverity digest` (the same as `fsverity digest`).
#[derive(Args, Debug)]
pub(crate) struct DigestArgs {
    /// Hash algorithm of the Merkle tree and the digest.
    #[arg(long, value_name = "ALG", default_value = "sha256", value_parser = ["sha256", "sha512"])]
    hash_alg: String,
    /// Merkle tree block size in bytes (power of two, 512..=65536).
    #[arg(long, value_name = "N", default_value_t = 4096)]
    block_size: u32,
    /// Salt as hex, 0 to 32 bytes.
    #[arg(long, value_name = "HEX")]
    salt: Option<String>,
    /// Write the Merkle tree (root level first) to F (one FILE only).
    #[arg(long, value_name = "F")]
    out_merkle_tree: Option<PathBuf>,
    /// Write the 256-byte fs-verity descriptor to F (one FILE only).
    #[arg(long, value_name = "F")]
    out_descriptor: Option<PathBuf>,
    /// Print only the hex digest.
    #[arg(long)]
    compact: bool,
    /// Print the hex of `struct fsverity_formatted_digest` (what built-in
    /// signatures sign) instead of the digest.
    #[arg(long)]
    for_builtin_sig: bool,
    /// Print one JSON object per FILE, one per line (JSON Lines), with the
    /// file, the algorithm, the digest, the block size, the salt and the
    /// formatted digest that built-in signatures sign.
    #[arg(long, conflicts_with_all = ["compact", "for_builtin_sig"])]
    json: bool,
    /// Hashing threads (default: every core; at most 1024).
    #[arg(long, value_name = "N", value_parser = crate::args::threads_arg)]
    threads: Option<usize>,
    /// Read FILE with read(2) instead of mapping it into memory. A mapped
    /// file is hashed where the page cache holds it, without a copy, but a
    /// file truncated by another process meanwhile ends mdu with SIGBUS;
    /// reading shows a progress bar on a terminal. With several FILEs, every
    /// FILE is read: the small ones whole, hashed together so that their
    /// blocks pair up across files, and the FILEs spread over the threads;
    /// the lines come out in the order of the FILEs, and the first FILE that
    /// cannot be digested ends the run after the lines before it, as with
    /// `fsverity digest`.
    #[arg(long)]
    no_mmap: bool,
    /// Files to digest.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// fsverity's exit statuses: 2 bad usage (an option or its value), 1
/// every other failure (a file that cannot be read, hashed or written).
pub(crate) fn run(cmd: FsverityCmd) -> Result<(), CliError> {
    let r = match cmd {
        FsverityCmd::Digest(a) => digest(a),
    };
    r.map_err(|e| match e {
        e @ CliError::Usage(_) => e,
        e => CliError::Status {
            code: 1,
            error: Box::new(e),
        },
    })
}

fn digest(a: DigestArgs) -> Result<(), CliError> {
    let hash = HashAlg::from_name(&a.hash_alg).map_err(|e| CliError::Usage(e.to_string()))?;
    let salt = match &a.salt {
        Some(s) => args::parse_hex("salt", s)?,
        None => Vec::new(),
    };
    let params = fsverity::Params {
        hash,
        block_size: a.block_size,
        salt,
        backend: None,
    };
    params
        .validate()
        .map_err(|e| CliError::Usage(format!("invalid fs-verity parameters: {e}")))?;
    if (a.out_merkle_tree.is_some() || a.out_descriptor.is_some()) && a.files.len() != 1 {
        return Err(CliError::Usage(
            "--out-merkle-tree and --out-descriptor need exactly one FILE".into(),
        ));
    }
    let pool = process::pool(a.threads)?;
    // Unlocked: the many-file loop runs on the pool's thread.
    let mut out = std::io::BufWriter::new(std::io::stdout());
    let one = a.files.len() == 1;
    if !one {
        // Many files: digested together, printed in order, stopping at the
        // first that fails (after printing the lines before it).
        return pool.install(|| {
            let sources = a.files.iter().map(fsverity_source);
            for (path, r) in a.files.iter().zip(fsverity::digest_many(sources, &params)) {
                match r {
                    Ok(d) => print_line(&mut out, &a, path, &d)?,
                    Err(e) => {
                        flush(&mut out)?;
                        return Err(input::source_error(path, e));
                    }
                }
            }
            flush(&mut out)
        });
    }
    let path = &a.files[0];
    let (mut tree_out, mut desc_out) = outputs(&a, path)?;
    // FILE is read up to the size it has now, decided from its type (a
    // character device or FIFO has none and is refused, but the null
    // device); one that ends earlier is an error, never the digest of a
    // shorter file.
    let (source, pb) = if is_null_device(path) {
        (Source::bytes(&[]), indicatif::ProgressBar::hidden())
    } else {
        let (source, _, pb) =
            input::open_source(path, !a.no_mmap, "fs-verity digest", input::Unsized::Refuse)?;
        (source, pb)
    };
    let m = pool.install(|| fsverity::measure(source, &params));
    pb.finish_and_clear();
    let m = m.map_err(|e| input::source_error(path, e))?;
    if let Some(o) = tree_out.as_mut() {
        m.tree()
            .write_root_first(o.file())
            .map_err(|e| CliError::io(o.path(), "write the Merkle tree", e))?;
    }
    if let Some(o) = desc_out.as_mut() {
        o.file()
            .write_all(m.descriptor())
            .map_err(|e| CliError::io(o.path(), "write the descriptor", e))?;
    }
    for o in [tree_out, desc_out].into_iter().flatten() {
        o.commit()?;
    }
    print_line(&mut out, &a, path, &m.digest())?;
    flush(&mut out)
}

/// The `--out-merkle-tree` and `--out-descriptor` outputs, checked and
/// opened before any hashing: neither may be FILE, nor the other.
fn outputs(a: &DigestArgs, path: &Path) -> Result<(Option<Output>, Option<Output>), CliError> {
    if let (Some(t), Some(d)) = (&a.out_merkle_tree, &a.out_descriptor) {
        let same = t == d
            || matches!((std::fs::canonicalize(t), std::fs::canonicalize(d)), (Ok(x), Ok(y)) if x == y);
        if same {
            return Err(CliError::Usage(format!(
                "--out-merkle-tree and --out-descriptor are both {}: give two files",
                t.display()
            )));
        }
    }
    let input = std::fs::metadata(path).map_err(|e| CliError::io(path, "examine", e))?;
    let open = |out: &Option<PathBuf>| {
        out.as_deref()
            .map(|o| Output::to(o).not_same_as(path, input.clone()).open())
            .transpose()
    };
    Ok((open(&a.out_merkle_tree)?, open(&a.out_descriptor)?))
}

/// One FILE of many, opened by the library on the thread that hashes it.
fn fsverity_source(path: &PathBuf) -> Source<'static> {
    if is_null_device(path) {
        return Source::bytes(&[]);
    }
    Source::path(path)
}

/// Whether `path` is the null device (character device 1:3). It reads as
/// empty, always: its digest is the empty file's, which is also what
/// `fsverity digest` prints for it (from its size, 0). Other character
/// devices and FIFOs stay refused: their size (0) says nothing of what a
/// read gives (`/dev/zero` never ends).
fn is_null_device(path: &Path) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    std::fs::metadata(path)
        .is_ok_and(|m| m.file_type().is_char_device() && m.rdev() == libc::makedev(1, 3))
}

/// The line `fsverity digest` prints for `path`, with the file name as its
/// raw bytes (a name that is not UTF-8 is printed as it is, as `fsverity
/// digest` does); in `--json`, where a string must be UTF-8, bytes that
/// are not are replaced with U+FFFD.
fn print_line(
    out: &mut impl Write,
    a: &DigestArgs,
    path: &Path,
    d: &fsverity::FileDigest,
) -> Result<(), CliError> {
    use std::os::unix::ffi::OsStrExt;
    let name = path.as_os_str().as_bytes();
    let r = if a.json {
        let v = serde_json::json!({
            "file": path.to_string_lossy(),
            "algorithm": d.alg().name(),
            "digest": d.digest().to_hex(),
            "block_size": a.block_size,
            "salt": a.salt.as_deref().unwrap_or("").to_ascii_lowercase(),
            "formatted_digest": args::to_hex(&d.formatted()),
        });
        writeln!(out, "{v}")
    } else if a.for_builtin_sig {
        write!(out, "{} ", args::to_hex(&d.formatted()))
            .and_then(|()| out.write_all(name))
            .and_then(|()| out.write_all(b"\n"))
    } else if a.compact {
        writeln!(out, "{}", d.digest())
    } else {
        write!(out, "{d} ")
            .and_then(|()| out.write_all(name))
            .and_then(|()| out.write_all(b"\n"))
    };
    r.map_err(|e| CliError::io(Path::new("<stdout>"), "write", e))
}

fn flush(out: &mut impl Write) -> Result<(), CliError> {
    out.flush()
        .map_err(|e| CliError::io(Path::new("<stdout>"), "write", e))
}
