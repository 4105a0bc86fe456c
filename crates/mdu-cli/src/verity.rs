//! `mdu verity format|verify`: dm-verity hash devices as `veritysetup`
//! writes and checks them.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use mdu_core::io::{IoError, ReadAt};
use mdu_verity::dmverity::{self, Formatted, Superblock, fec};
use mdu_verity::{Digest, Error as VerityError, HashAlg};

use crate::error::CliError;
use crate::fec::FecArgs;
use crate::output::{self, Output};
use crate::{args, input, process, progress};

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

fn parse_uuid(s: &str) -> Result<[u8; 16], CliError> {
    let bad = || {
        CliError::Usage(format!(
            "UUID {s:?} is invalid: expected 32 hex digits as 8-4-4-4-12"
        ))
    };
    let groups: Vec<&str> = s.split('-').collect();
    if groups.iter().map(|g| g.len()).collect::<Vec<_>>() != [8, 4, 4, 4, 12] {
        return Err(bad());
    }
    let bytes = args::parse_hex("UUID", &groups.concat()).map_err(|_| bad())?;
    let mut u = [0u8; 16];
    u.copy_from_slice(&bytes);
    Ok(u)
}

fn uuid_string(u: &[u8; 16]) -> String {
    let h = args::to_hex(u);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
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
/// that [`dmverity::format`] wrote with the algorithm's own name, where the
/// two differ (`ripemd160` for `rmd160`): what veritysetup stores.
fn spell_superblock_name(
    o: &VerityOpts,
    p: &dmverity::Params,
    out: &File,
    path: &Path,
) -> Result<(), CliError> {
    use std::os::unix::fs::FileExt;
    let Some(h) = o.hash.as_ref().filter(|_| p.superblock) else {
        return Ok(());
    };
    let name = h.given.to_ascii_lowercase();
    if name == p.hash.name() {
        return Ok(());
    }
    // The name field: bytes 32..64 of the superblock, NUL-padded. Every
    // name from_name knows fits with its NUL.
    let mut field = [0u8; 32];
    let Some(dst) = field.get_mut(..name.len()).filter(|_| name.len() < 32) else {
        return Ok(());
    };
    dst.copy_from_slice(name.as_bytes());
    out.write_all_at(&field, p.hash_offset + 32)
        .map_err(|e| CliError::io(path, "write the superblock", e))
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
    let salt = match pins.salt {
        Some(s) => s,
        None if random_defaults => {
            let mut s = vec![0u8; 32];
            process::random_bytes(&mut s)?;
            s
        }
        None => Vec::new(),
    };
    let uuid = match o.uuid.as_deref() {
        Some(u) => parse_uuid(u)?,
        None if random_defaults => {
            let mut u = [0u8; 16];
            process::random_bytes(&mut u)?;
            u[6] = (u[6] & 0x0f) | 0x40;
            u[8] = (u[8] & 0x3f) | 0x80;
            u
        }
        None => [0; 16],
    };
    let d = dmverity::Params::default();
    let p = dmverity::Params {
        hash: pins.hash.unwrap_or(d.hash),
        data_block_size: pins.data_block_size.unwrap_or(d.data_block_size),
        hash_block_size: pins.hash_block_size.unwrap_or(d.hash_block_size),
        salt,
        format: pins.format.unwrap_or(d.format),
        superblock: !o.no_superblock,
        uuid,
        hash_offset: o.hash_offset,
        data_blocks: pins.data_blocks,
        backend: None,
    };
    p.validate()
        .map_err(|e| CliError::Usage(format!("invalid dm-verity parameters: {e}")))?;
    Ok(p)
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
    let blocks = match p.data_blocks {
        Some(n) => n,
        None => input::input_size(data)?.max(data_len) / u64::from(p.data_block_size),
    };
    let data_end = blocks.saturating_mul(u64::from(p.data_block_size));
    if data_end > p.hash_offset {
        return Err(CliError::Input {
            path: hash.to_owned(),
            offset: p.hash_offset,
            rule: format!(
                "data and hash are the same device and the data area ({data_end} bytes) \
                 overlaps the hash area starting at --hash-offset {}",
                p.hash_offset
            ),
        });
    }
    Ok(())
}

fn format(a: FormatArgs) -> Result<(), CliError> {
    let p = params(&a.opts, true)?;
    a.fec.check(&p)?;
    // DATA is hashed from where it lies if it is mapped; with FEC, the
    // mapped windows also feed the parity on their way to the hasher.
    let (input, data_len) = input::open_data(&a.data, !a.no_mmap)?;
    check_overlap(&a.data, &a.hash_dev, &p, data_len)?;
    let (mut hash_out, mut fec_out, mut root_out) = format_outputs(&a)?;
    // With FEC, the mapped windows also feed the parity on their way to
    // the hasher, if its layout can be known before the tree is written.
    let early = match &input {
        input::Input::Mapped(_) => early_encoder(&a.fec, &a.hash_dev, &p, data_len),
        input::Input::File(_) => None,
    };
    let (data, pb) = match input {
        input::Input::Mapped(windows) => {
            let tee = early.clone();
            let windows = windows.inspect(move |w| {
                if let (Some(e), Ok(w)) = (&tee, w) {
                    e.take(w);
                }
            });
            (
                mdu_verity::Source::chunks(windows).with_len(data_len),
                indicatif::ProgressBar::hidden(),
            )
        }
        input::Input::File(file) => {
            let pb = progress::progress(data_len, "dm-verity format");
            (mdu_verity::Source::seekable(pb.wrap_read(file)), pb)
        }
    };
    let pool = process::pool(a.opts.threads)?;
    let out = pool
        .install(|| dmverity::format(data, hash_out.file(), &p))
        .map_err(|e| verity_error(&a.data, &a.hash_dev, &p, e))?;
    spell_superblock_name(&a.opts, &p, hash_out.file(), &a.hash_dev)?;
    // The parity goes in before the hash image is renamed into place, so a
    // failure leaves neither.
    let fec = write_parity(
        &a.fec,
        &a.data,
        &a.hash_dev,
        hash_out.file(),
        fec_out.as_mut(),
        &p,
        &out,
        early,
    )?;
    pb.finish_and_clear();
    let root = out.root_hash().to_hex();
    if let Some(o) = root_out.as_mut() {
        std::io::Write::write_all(o.file(), root.as_bytes())
            .map_err(|e| CliError::io(o.path(), "write the root hash", e))?;
    }
    // The FEC file first, the hash image next, the root hash last: a run
    // that fails half-way leaves no root hash that verifies a tree not
    // yet in place.
    for o in [fec_out, Some(hash_out), root_out].into_iter().flatten() {
        o.commit()?;
    }
    print_summary(
        &a.hash_dev,
        &p,
        a.opts.hash.as_ref().map_or(p.hash.name(), |h| &h.given),
        out.data_blocks(),
        out.hash_blocks(),
        Some(&root),
        device_size(p.hash_offset, out.hash_device_size(), fec.as_ref()),
        fec.as_ref(),
        a.json,
    );
    Ok(())
}

/// The outputs of `format`, checked and opened before any hashing: HASH
/// (read back for the parity; DATA only where `check_overlap` allowed the
/// two to share a file or device), the FEC device and the root hash file.
fn format_outputs(a: &FormatArgs) -> Result<(Output, Option<Output>, Option<Output>), CliError> {
    let examine = |p: &Path| std::fs::metadata(p).map_err(|e| CliError::io(p, "examine", e));
    let data = examine(&a.data)?;
    let mut hash = Output::to(&a.hash_dev)
        .keep_existing()
        .read_back()
        .seekable_only();
    if !output::same_file(&data, &a.hash_dev) {
        hash = hash.not_same_as(&a.data, data.clone());
    }
    let hash = hash.open()?;
    let fec = a.fec.open_output(&a.data, &data, &a.hash_dev)?;
    let root = match &a.root_hash_file {
        Some(f) => {
            let named = [Some(&a.hash_dev), a.fec.device()];
            if named.into_iter().flatten().any(|o| o == f) {
                return Err(CliError::Usage(format!(
                    "--root-hash-file {} is also an output of the tree or the parity",
                    f.display()
                )));
            }
            let mut spec = Output::to(f).not_same_as(&a.data, data);
            if let Ok(m) = std::fs::metadata(&a.hash_dev) {
                spec = spec.not_same_as(&a.hash_dev, m);
            }
            Some(spec.open()?)
        }
        None => None,
    };
    Ok((hash, fec, root))
}

/// The library's encoder fed with DATA's blocks while `format` hashes
/// them (the mapped windows pass through it on their way to the hasher),
/// so that DATA is read once; `None` once a window was refused.
struct Early(std::sync::Mutex<Option<fec::VerityEncoder>>);

impl Early {
    /// Takes the data blocks of the next window of DATA.
    fn take(&self, window: &[u8]) {
        if let Ok(mut slot) = self.0.lock()
            && let Some(enc) = slot.as_mut()
            && enc.push_data(window).is_err()
        {
            *slot = None;
        }
    }

    /// The encoder, if it took its data and its predicted layout is
    /// `layout`.
    fn into_encoder(
        early: Option<std::sync::Arc<Early>>,
        layout: &fec::VerityLayout,
    ) -> Option<fec::VerityEncoder> {
        let enc = std::sync::Arc::into_inner(early?)?.0.into_inner().ok()??;
        (enc.layout() == layout).then_some(enc)
    }
}

/// An encoder to feed DATA's blocks to while they are hashed, when the FEC
/// layout can be predicted: the hash image is a new file (or the parity
/// shares it at a given offset), so the protected hash area is exactly
/// the tree.
fn early_encoder(
    f: &FecArgs,
    hash_path: &Path,
    p: &dmverity::Params,
    data_len: u64,
) -> Option<std::sync::Arc<Early>> {
    f.device()?;
    if !f.shares_hash_file(hash_path) && hash_path.exists() {
        // Bytes past the tree of an existing image are protected too:
        // known only once the image is written.
        return None;
    }
    let data_blocks = p
        .data_blocks
        .unwrap_or(data_len / u64::from(p.data_block_size));
    let layout = fec::Layout::for_new_verity(p, data_blocks, &f.params(hash_path)).ok()?;
    let enc = fec::VerityEncoder::new(layout).ok()?;
    Some(std::sync::Arc::new(Early(std::sync::Mutex::new(Some(enc)))))
}

/// What was written, for the summary.
struct Written {
    roots: u8,
    parity_blocks: u64,
    parity_len: u64,
    /// The parity went into the hash device.
    in_hash: bool,
    offset: u64,
}

impl Written {
    fn of(layout: &fec::VerityLayout) -> Written {
        Written {
            roots: layout.fec().roots,
            parity_blocks: layout.layout().parity_blocks(),
            parity_len: layout.layout().parity_len(),
            in_hash: layout.fec().in_hash_device,
            offset: layout.fec().offset,
        }
    }
}

/// The "Hash device size" veritysetup prints: only with the hash area at
/// offset 0, the tree's end, and the parity after it where it shares the
/// hash device.
fn device_size(hash_offset: u64, tree_end: u64, fec: Option<&Written>) -> Option<u64> {
    let parity = fec.filter(|f| f.in_hash).map_or(0, |f| f.parity_len);
    (hash_offset == 0).then_some(tree_end + parity)
}

/// The FEC layout of an existing image, for `dump`: what `write_parity`
/// would write, without reading the data. `None` without `--fec-device`.
fn describe_parity(
    f: &FecArgs,
    hash_path: &Path,
    p: &dmverity::Params,
    data_blocks: u64,
) -> Result<Option<Written>, CliError> {
    if !f.given() {
        return Ok(None);
    }
    f.check(p)?;
    let hash_size = if f.shares_hash_file(hash_path) {
        0
    } else {
        let mut h = input::open_read(hash_path)?;
        h.seek(SeekFrom::End(0))
            .map_err(|e| CliError::io(hash_path, "seek", e))?
    };
    let layout = f.layout(hash_path, p, data_blocks, hash_size)?;
    Ok(Some(Written::of(&layout)))
}

/// Computes the parity of DATA's `out.data_blocks()` blocks and the hash
/// device `hash` (already holding the tree) and writes it: into `hash` at
/// the offset if that is the FEC device, otherwise into `fec_out` (opened
/// by [`FecArgs::open_output`], committed by the caller). `None` without
/// `--fec-device`.
#[allow(clippy::too_many_arguments)]
fn write_parity(
    f: &FecArgs,
    data: &Path,
    hash_path: &Path,
    hash: &File,
    fec_out: Option<&mut Output>,
    p: &dmverity::Params,
    out: &Formatted,
    early: Option<std::sync::Arc<Early>>,
) -> Result<Option<Written>, CliError> {
    let Some(fec_path) = f.device() else {
        return Ok(None);
    };
    let fec_params = f.params(hash_path);
    let hash_len = ReadAt::size(hash).map_err(|e| CliError::io(hash_path, "seek", e.into()))?;
    let tree_end = out.hash_device_size().max(p.hash_offset);
    if fec_params.in_hash_device {
        if fec_params.offset < tree_end {
            return Err(CliError::Usage(format!(
                "--fec-offset {} lies inside the hash tree, which ends at byte {tree_end}",
                fec_params.offset
            )));
        }
        if fec_params.offset > hash_len {
            return Err(CliError::Usage(format!(
                "--fec-offset {} is past the end of {} ({hash_len} bytes): make the file \
                 that long first, as veritysetup requires",
                fec_params.offset,
                hash_path.display()
            )));
        }
    }
    // The protected hash area runs from the tree's first block to the end
    // of the hash device, or to the parity when it shares the file.
    let layout = f.layout(hash_path, p, out.data_blocks(), hash_len)?;
    let read_error = |path: &Path, e: VerityError| match e {
        VerityError::Io(e) => CliError::io(path, "read for the FEC parity", e),
        e => CliError::lib(path, e),
    };
    // The encoder that took DATA's blocks while they were hashed, if its
    // predicted layout is the real one.
    let mut enc = match Early::into_encoder(early, &layout) {
        Some(enc) => enc,
        None => fec::VerityEncoder::new(layout).map_err(|e| CliError::lib(fec_path, e))?,
    };
    let d = input::open_read(data)?;
    if enc.data_blocks_taken() == 0 && d.metadata().is_ok_and(|m| m.is_file()) {
        // A regular file is taken from the page cache where it lies (the
        // hashing pass just read it), a window at a time.
        let total = layout.data_blocks() * u64::from(p.data_block_size);
        let mut at = 0;
        while at < total {
            let len = input::WINDOW.min(total - at);
            let map = input::map_window_populated(&d, at, len)
                .map_err(|e| CliError::io(data, "map for the FEC parity", e))?;
            enc.push_data(&map).map_err(|e| CliError::lib(data, e))?;
            at += len;
        }
    }
    // The blocks not taken yet (all of them from a device), by position.
    enc.read_data(&d).map_err(|e| read_error(data, e))?;
    enc.read_hash(hash).map_err(|e| read_error(hash_path, e))?;
    let (target, path) = match fec_out {
        Some(o) if !fec_params.in_hash_device => (&*o.file(), fec_path.as_path()),
        _ => (hash, hash_path),
    };
    enc.write_to(target).map_err(|e| match e {
        VerityError::Io(e) => CliError::io(path, "write the FEC parity", e),
        e => CliError::lib(path, e),
    })?;
    Ok(Some(Written::of(&layout)))
}

/// The block `veritysetup format` and `dump` print, field for field, or
/// the same fields as one JSON object.
#[allow(clippy::too_many_arguments)]
fn print_summary(
    hash_dev: &Path,
    p: &dmverity::Params,
    hash_name: &str,
    data_blocks: u64,
    hash_blocks: u64,
    root: Option<&str>,
    hash_device_size: Option<u64>,
    fec: Option<&Written>,
    json: bool,
) {
    let salt = if p.salt.is_empty() {
        "-".to_owned()
    } else {
        args::to_hex(&p.salt)
    };
    let uuid = if p.superblock {
        uuid_string(&p.uuid)
    } else {
        String::new()
    };
    let fec_device_size = fec
        .filter(|f| !f.in_hash && f.offset == 0)
        .map(|f| f.parity_len);
    if json {
        let v = serde_json::json!({
            // JSON strings are UTF-8: a name that is not is written with
            // U+FFFD in place of its bad bytes.
            "hash_device": hash_dev.to_string_lossy(),
            "superblock": p.superblock,
            "uuid": p.superblock.then_some(uuid),
            "hash_type": p.format,
            "data_blocks": data_blocks,
            "data_block_size": p.data_block_size,
            "hash_blocks": hash_blocks,
            "hash_block_size": p.hash_block_size,
            "hash_algorithm": hash_name,
            "salt": args::to_hex(&p.salt),
            "root_hash": root,
            "hash_offset": p.hash_offset,
            "hash_start_block": p.hash_start_block(),
            "hash_device_size": hash_device_size,
            "fec": fec.map(|f| serde_json::json!({
                "roots": f.roots,
                "blocks": f.parity_blocks,
                "bytes": f.parity_len,
                "offset": f.offset,
                "in_hash_device": f.in_hash,
                "device_size": fec_device_size,
            })),
        });
        println!("{v}");
        return;
    }
    // The name as its raw bytes, as veritysetup prints it.
    {
        use std::io::Write;
        use std::os::unix::ffi::OsStrExt;
        let mut out = std::io::stdout().lock();
        let _ = out
            .write_all(b"VERITY header information for ")
            .and_then(|()| out.write_all(hash_dev.as_os_str().as_bytes()))
            .and_then(|()| out.write_all(b"\n"));
    }
    println!("UUID:            \t{uuid}");
    println!("Hash type:       \t{}", p.format);
    println!("Data blocks:     \t{data_blocks}");
    println!("Data block size: \t{}", p.data_block_size);
    println!("Hash blocks:     \t{hash_blocks}");
    println!("Hash block size: \t{}", p.hash_block_size);
    println!("Hash algorithm:  \t{hash_name}");
    if let Some(f) = fec {
        println!("FEC RS roots:   \t{}", f.roots);
        println!("FEC blocks:     \t{}", f.parity_blocks);
    }
    println!("Salt:            \t{salt}");
    if let Some(root) = root {
        println!("Root hash:      \t{root}");
    }
    if let Some(size) = hash_device_size {
        println!("Hash device size: \t{size} [bytes]");
    }
    if let Some(size) = fec_device_size {
        println!("FEC device size: \t{size} [bytes]");
    }
}

/// `mdu verity dump`.
fn dump(a: DumpArgs) -> Result<(), CliError> {
    if !a.hash_offset.is_multiple_of(512) {
        return Err(CliError::Usage(format!(
            "--hash-offset {} is invalid: it must be a multiple of 512",
            a.hash_offset
        )));
    }
    let mut hash = input::open_read(&a.hash_dev)?;
    let sb = Superblock::read_from(&mut hash, a.hash_offset).map_err(|e| match e {
        VerityError::Io(io) => CliError::io(&a.hash_dev, "read the superblock", io),
        e => CliError::Input {
            path: a.hash_dev.clone(),
            offset: a.hash_offset,
            rule: format!("no valid dm-verity superblock: {e}"),
        },
    })?;
    let p = sb.params(a.hash_offset);
    let n = sb.data_blocks;
    let (hash_blocks, size) = (p
        .tree_blocks(n)
        .and_then(|b| Ok((b, p.hash_device_size(n)?))))
    .map_err(|e| CliError::lib(&a.hash_dev, e))?;
    let fec = describe_parity(&a.fec, &a.hash_dev, &p, sb.data_blocks)?;
    // The algorithm as the superblock spells it (an OpenSSL alias such as
    // `blake2b512` is printed as written, as veritysetup does).
    print_summary(
        &a.hash_dev,
        &p,
        &sb.hash_name,
        sb.data_blocks,
        hash_blocks,
        None,
        device_size(a.hash_offset, size, fec.as_ref()),
        fec.as_ref(),
        a.json,
    );
    Ok(())
}

/// Turn a library error of `verify` into a CLI error: everything found in
/// DATA or HASH that keeps the data from verifying (a bad, missing or
/// absent block, a damaged superblock, a pin it contradicts) is a
/// verification failure (exit 1); only I/O errors are not.
fn verify_error(data: &Path, hash: &Path, p: &dmverity::Params, e: VerityError) -> CliError {
    match e {
        VerityError::Io(_) | VerityError::UnexpectedEof { .. } => verity_error(data, hash, p, e),
        VerityError::DataLengthUnknown => CliError::Input {
            path: data.to_owned(),
            offset: 0,
            rule: "its length cannot be known before it is read (a pipe): \
                   give --data-blocks, or verify with the superblock"
                .into(),
        },
        VerityError::MissingDataBlock { block, data_blocks } => {
            let at = block * u64::from(p.data_block_size);
            CliError::VerifyFailed(format!(
                "{}: data block {block} (bytes {at}..{}) is missing: the data ends before it, \
                 but the tree covers {data_blocks} blocks",
                data.display(),
                at + u64::from(p.data_block_size)
            ))
        }
        VerityError::NoDataBlocks { data_bytes, .. } => CliError::VerifyFailed(format!(
            "{}: the data ({data_bytes} bytes) holds no whole data block of {} bytes; \
             nothing could be verified",
            data.display(),
            p.data_block_size
        )),
        VerityError::CorruptDataBlock { .. }
        | VerityError::CorruptHashBlock { .. }
        | VerityError::HashAreaTooSmall { .. } => verity_error(data, hash, p, e),
        other => CliError::VerifyFailed(format!("{}: {other}", hash.display())),
    }
}

/// Turn a library error into a CLI error naming the file and offset.
fn verity_error(data: &Path, hash: &Path, p: &dmverity::Params, e: VerityError) -> CliError {
    match e {
        VerityError::CorruptDataBlock { block } => {
            let at = block * u64::from(p.data_block_size);
            CliError::VerifyFailed(format!(
                "{}: data block {block} (bytes {at}..{}) does not match its hash",
                data.display(),
                at + u64::from(p.data_block_size)
            ))
        }
        VerityError::CorruptHashBlock {
            level,
            index,
            hash_block,
        } => {
            let at = hash_block * u64::from(p.hash_block_size);
            CliError::VerifyFailed(format!(
                "{}: hash block {hash_block} (level {level}, index {index}, bytes {at}..{}) \
                 does not match its hash",
                hash.display(),
                at + u64::from(p.hash_block_size)
            ))
        }
        VerityError::HashAreaTooSmall { needed, available } => CliError::VerifyFailed(format!(
            "{}: the hash area ends at byte {available} but the tree needs {needed} bytes",
            hash.display()
        )),
        VerityError::TruncatedInput {
            expected_blocks,
            available_blocks,
        } => CliError::Input {
            path: data.to_owned(),
            offset: available_blocks * u64::from(p.data_block_size),
            rule: format!(
                "the data ends after {available_blocks} whole blocks of {} bytes, \
                 but {expected_blocks} were asked for",
                p.data_block_size
            ),
        },
        VerityError::NoDataBlocks { data_bytes, .. } => CliError::Input {
            path: data.to_owned(),
            offset: data_bytes,
            rule: format!(
                "dm-verity needs at least one whole data block of {} bytes",
                p.data_block_size
            ),
        },
        VerityError::Io(io) => CliError::Library {
            path: data.to_owned(),
            message: format!("I/O error: {io}"),
        },
        e @ VerityError::UnexpectedEof { .. } => input::source_error(data, e),
        other => CliError::lib(data, other),
    }
}

fn verify(a: VerifyArgs, repair: bool) -> Result<(), CliError> {
    if repair && !a.fec.given() {
        return Err(CliError::Usage(
            "mdu verity repair needs --fec-device: the parity to correct with".into(),
        ));
    }
    // A repair writes blocks back in place: what it may write is its own
    // for the whole run, before anything is read.
    let mut locks = crate::lock::Locks::new();
    if repair {
        locks.file(&a.data)?;
        locks.file(&a.hash_dev)?;
        if let Some(fec) = a.fec.device() {
            locks.file(fec)?;
        }
    }
    let open = |path: &Path| input::open_read(path);
    let root_bytes = args::parse_hex("root hash", &a.root)?;
    let root = Digest::from_slice(&root_bytes);
    let pool = process::pool(a.opts.threads)?;
    // DATA is hashed from where it lies if it is mapped, with FEC too: a
    // clean image is verified once, as without it.
    // DATA is read up to its size when it has one, an error if it ends
    // earlier; a pipe or character device only as far as the tree goes.
    let (data, _, pb) = input::open_source(
        &a.data,
        !a.no_mmap,
        "dm-verity verify",
        input::Unsized::Bounded,
    )?;
    let mut hash = open(&a.hash_dev)?;
    let pins = pins(&a.opts)?;
    let (r, p) = if a.opts.no_superblock {
        let p = params(&a.opts, false)?;
        check_root_len(&a.root, &root_bytes, &p)?;
        (pool.install(|| dmverity::verify(data, &hash, &p, &root)), p)
    } else {
        // The superblock chooses what was not pinned on the command line.
        let p = read_superblock(&a, &mut hash, &root_bytes)?;
        let r = pool.install(|| {
            dmverity::verify_with_superblock(data, &hash, a.opts.hash_offset, &pins, &root)
        });
        (r.map(|_| ()), p)
    };
    pb.finish_and_clear();
    // FEC reads DATA a second time, by position: a pipe or a character
    // device cannot be, and is only verified.
    let unsized_data = std::fs::metadata(&a.data)
        .ok()
        .as_ref()
        .and_then(input::unsized_kind);
    let first = match r {
        Ok(()) => return done(&a, repair, None),
        Err(e) => e,
    };
    if a.fec.given() && unsized_data.is_none() {
        let fec = Fec {
            p: &p,
            pins: &pins,
            root: &root,
            hash: &hash,
        };
        return verify_with_fec(&a, repair, fec, first, &pool);
    }
    match verify_error(&a.data, &a.hash_dev, &p, first) {
        CliError::VerifyFailed(m) if a.fec.given() => {
            let kind = unsized_data.unwrap_or("a stream");
            Err(CliError::VerifyFailed(format!(
                "{m} (FEC not tried: {} is {kind}, which cannot be read a second time \
                 to correct it)",
                a.data.display()
            )))
        }
        e => Err(e),
    }
}

/// Reads the superblock of HASH for `verify` (the parameters it names,
/// for the messages), and checks the length of the root hash against it.
fn read_superblock(
    a: &VerifyArgs,
    hash: &mut File,
    root_bytes: &[u8],
) -> Result<dmverity::Params, CliError> {
    if !a.opts.hash_offset.is_multiple_of(512) {
        return Err(CliError::Usage(format!(
            "--hash-offset {} is invalid: it must be a multiple of 512",
            a.opts.hash_offset
        )));
    }
    let sb = Superblock::read_from(&mut *hash, a.opts.hash_offset).map_err(|e| match e {
        VerityError::Io(io) => CliError::io(&a.hash_dev, "read the superblock", io),
        // No superblock at all: most likely the wrong file or a missing
        // --no-superblock; a superblock with bad fields is a damaged image.
        VerityError::BadSignature | VerityError::HashAreaTooSmall { .. } => CliError::Input {
            path: a.hash_dev.clone(),
            offset: a.opts.hash_offset,
            rule: format!(
                "no dm-verity superblock here ({e}); a hash device formatted with \
                 --no-superblock needs --no-superblock and every parameter again"
            ),
        },
        e => CliError::VerifyFailed(format!(
            "{}: no valid dm-verity superblock at byte {}: {e}",
            a.hash_dev.display(),
            a.opts.hash_offset
        )),
    })?;
    let p = sb.params(a.opts.hash_offset);
    // A root of a known length that does not fit the superblock's
    // algorithm is a mismatch the library reports (exit 1); any other
    // length is a usage error.
    if ![32, 64].contains(&root_bytes.len()) {
        check_root_len(&a.root, root_bytes, &p)?;
    }
    hash.seek(SeekFrom::Start(0))
        .map_err(|e| CliError::io(&a.hash_dev, "seek", e))?;
    Ok(p)
}

/// DATA read by position with a progress bar.
struct Progress<'a> {
    file: &'a File,
    pb: &'a indicatif::ProgressBar,
}

impl ReadAt for Progress<'_> {
    fn size(&self) -> Result<u64, IoError> {
        ReadAt::size(self.file)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError> {
        ReadAt::read_exact_at(self.file, buf, offset)?;
        self.pb.inc(buf.len() as u64);
        Ok(())
    }
}

/// What the first verification of `verify` worked with: the parameters
/// (the superblock's, or the command line's), the pins, the root hash and
/// the open hash device.
struct Fec<'a> {
    p: &'a dmverity::Params,
    pins: &'a dmverity::Pins,
    root: &'a Digest,
    hash: &'a File,
}

/// `verify` and `repair` with `--fec-device` after the first verification
/// failed with `first`: the library decodes the parity, reading the
/// devices by position, and verifies again with the corrections in view;
/// `repair` then writes them back.
fn verify_with_fec(
    a: &VerifyArgs,
    repair: bool,
    f: Fec<'_>,
    first: VerityError,
    pool: &rayon::ThreadPool,
) -> Result<(), CliError> {
    let open = |path: &Path| input::open_read(path);
    let Some(fec_path) = a.fec.device() else {
        return Err(CliError::Usage("--fec-device is needed to correct".into()));
    };
    let (data, parity) = (open(&a.data)?, open(fec_path)?);
    let p = f.p;
    let shape = if a.opts.no_superblock {
        fec::Shape::Params(p)
    } else {
        fec::Shape::Superblock {
            hash_offset: a.opts.hash_offset,
            pins: f.pins,
        }
    };
    let size = ReadAt::size(&data).map_err(|e| CliError::io(&a.data, "examine", e.into()))?;
    let pb = progress::progress(size, "dm-verity verify");
    let reader = Progress {
        file: &data,
        pb: &pb,
    };
    let fec_params = a.fec.params(&a.hash_dev);
    let r = pool.install(|| {
        fec::verify_with_fec_after(
            Err(first),
            &reader,
            f.hash,
            &parity,
            shape,
            f.root,
            &fec_params,
        )
    });
    pb.finish_and_clear();
    let out = r.map_err(|e| match e {
        e @ VerityError::FecParityShort { .. } => {
            CliError::VerifyFailed(format!("{}: {e}", fec_path.display()))
        }
        VerityError::FecIo { device, error, .. } => {
            let (path, what) = match device {
                "data" => (a.data.as_path(), "read for FEC decoding"),
                "hash" => (a.hash_dev.as_path(), "read for FEC decoding"),
                _ => (fec_path.as_path(), "read the FEC parity"),
            };
            CliError::io(path, what, error)
        }
        e @ (VerityError::FecRoots { .. }
        | VerityError::FecOffset { .. }
        | VerityError::FecBlockSizes { .. }) => match a.fec.check(p) {
            Err(usage) => usage,
            Ok(()) => CliError::lib(fec_path, e),
        },
        e @ (VerityError::ZeroDataBlocks { .. } | VerityError::TreeTooLarge { .. }) => {
            CliError::lib(fec_path, e)
        }
        e => verify_error(&a.data, &a.hash_dev, p, e),
    })?;
    if out.first_failure().is_none() {
        return done(a, repair, None);
    }
    if let Some(round) = out.uncorrectable_rounds().next() {
        let rounds = out.layout().map_or(0, |l| l.layout().rounds());
        return Err(CliError::VerifyFailed(format!(
            "{}: FEC cannot repair round {round} (input blocks {round}, {}, ...): more \
             damage than {} parity bytes per codeword correct",
            fec_path.display(),
            round + rounds,
            fec_params.roots
        )));
    }
    let c = out.corrections();
    let (bytes, data_fixed, hash_fixed) =
        (c.bytes(), c.len(fec::Area::Data), c.len(fec::Area::Hash));
    let blocks = data_fixed + hash_fixed;
    if let Some(e) = out.failure_after_correction() {
        return Err(CliError::VerifyFailed(format!(
            "{}: the FEC corrections ({bytes} bytes in {blocks} blocks) do not make the data \
             verify: {e}",
            a.data.display(),
        )));
    }
    let out = match out.into_result() {
        Ok(out) => out,
        // FEC found nothing to correct: the first failure stands.
        Err(e) => return Err(verify_error(&a.data, &a.hash_dev, p, e)),
    };
    let what = format!(
        "FEC corrected {bytes} bytes in {blocks} blocks ({data_fixed} of the data, {hash_fixed} \
         of the hash device)"
    );
    if repair {
        write_back(
            out.corrections(),
            &[(fec::Area::Data, &a.data), (fec::Area::Hash, &a.hash_dev)],
        )?;
    }
    done(a, repair, Some((what, bytes, blocks)))
}

/// Writes the corrected blocks back in place: every device with blocks to
/// write is opened first (through symbolic links, keeping the file's mode,
/// owner and hard links; a regular file or a block device only, as a
/// stream cannot be repaired), then each is written in turn and synced.
fn write_back(c: &fec::Corrections, targets: &[(fec::Area, &PathBuf)]) -> Result<(), CliError> {
    let mut files = Vec::new();
    for &(area, path) in targets {
        if c.len(area) == 0 {
            continue;
        }
        let f = output::in_place(path, false, false, "open for writing the repaired blocks")?;
        let meta = f.metadata().map_err(|e| CliError::io(path, "examine", e))?;
        let block = std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type());
        if !meta.is_file() && !block {
            return Err(CliError::Usage(format!(
                "{}: is not a regular file or a block device: it cannot be repaired in \
                 place (nothing was written)",
                path.display()
            )));
        }
        files.push((area, path, f));
    }
    for (area, path, f) in &files {
        c.write_to(*area, f)
            .map_err(|e| CliError::io(path, "write a repaired block", e))?;
        output::sync(f).map_err(|e| CliError::io(path, "sync", e))?;
    }
    Ok(())
}

/// Reports success: what FEC corrected (a sentence, bytes, blocks), if
/// anything, and whether it was written; with `--json`, one object on
/// standard output.
fn done(a: &VerifyArgs, repair: bool, fec: Option<(String, u64, usize)>) -> Result<(), CliError> {
    if a.json {
        let v = serde_json::json!({
            "verified": true,
            // Lossy where a name is not UTF-8: JSON strings are.
            "data_device": a.data.to_string_lossy(),
            "hash_device": a.hash_dev.to_string_lossy(),
            "root_hash": a.root.to_ascii_lowercase(),
            "fec_corrected_bytes": fec.as_ref().map_or(0, |f| f.1),
            "fec_corrected_blocks": fec.as_ref().map_or(0, |f| f.2),
            "repaired": repair && fec.is_some(),
        });
        println!("{v}");
        return Ok(());
    }
    match (fec, repair) {
        (None, true) => eprintln!(
            "{} and {} verify: nothing to repair",
            a.data.display(),
            a.hash_dev.display()
        ),
        (None, false) => {}
        (Some((what, ..)), true) => eprintln!("{what}; written back, and they verify"),
        (Some((what, ..)), false) => eprintln!(
            "{what}; the devices were not changed (`mdu verity repair` writes the corrections)"
        ),
    }
    Ok(())
}

/// The root hash must have the length of the algorithm's digests.
fn check_root_len(text: &str, root: &[u8], p: &dmverity::Params) -> Result<(), CliError> {
    if root.len() != p.hash.digest_len() {
        return Err(CliError::Usage(format!(
            "root hash {text:?} is {} bytes but {} needs {}",
            root.len(),
            p.hash.name(),
            p.hash.digest_len()
        )));
    }
    Ok(())
}
