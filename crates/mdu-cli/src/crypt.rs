//! `mdu crypt encrypt|decrypt`: dm-crypt plain-mode images.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use clap::{Args, Subcommand};
use mdu_cbc::{AesCbc128, AesCbc256};
use mdu_dmcrypt::{ChainMode, CipherSpec, DataUnitCipher, Direction, Geometry, IvGenerator};
use mdu_xts::{Error as CipherError, XtsAes128, XtsAes256};
use zeroize::Zeroizing;

use crate::output::{self, Output};
use crate::util::{self, CliError};

/// Bytes per read/encrypt/write step and thread (a multiple of every
/// sector size): small enough that a chunk is still in cache when it is
/// encrypted and written.
const CHUNK_PER_THREAD: usize = 1 << 20;

/// dm-crypt subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum CryptCmd {
    /// Encrypt the plaintext IN (the contents of the mapped device) into
    /// OUT, the backing device image: `--offset` 512-byte sectors first
    /// (zero-filled in a new file, left as they are on a block device),
    /// then the ciphertext.
    #[command(after_long_help = crate::output::HELP)]
    Encrypt(CryptArgs),
    /// Decrypt the backing device image IN (from `--offset` on) into OUT,
    /// the contents of the mapped device. A new OUT is readable by its
    /// owner only (mode 0600).
    #[command(after_long_help = crate::output::HELP)]
    Decrypt(CryptArgs),
}

/// Options of `mdu crypt` (those of `cryptsetup open --type plain`).
#[derive(Args, Debug)]
pub(crate) struct CryptArgs {
    /// dm-crypt cipher: aes-xts-IVMODE or aes-cbc-IVMODE, with IVMODE
    /// plain, plain64, plain64be, essiv:sha256, benbi, null or eboiv
    /// (aes-cbc-essiv:sha256 is LUKS1's and old plain mode's default).
    #[arg(long, value_name = "SPEC", default_value = "aes-xts-plain64")]
    cipher: String,
    /// File holding the raw volume key, nothing else: for aes-xts 32 bytes
    /// (AES-128) or 64 (AES-256), for aes-cbc 16 bytes (AES-128) or 32
    /// (AES-256).
    #[arg(long, value_name = "F")]
    key_file: PathBuf,
    /// Encryption sector size in bytes.
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(512..=4096))]
    sector_size: u32,
    /// Feed the IV generator sector numbers in units of the sector size
    /// instead of 512 bytes (dm-crypt `iv_large_sectors`).
    #[arg(long)]
    iv_large_sectors: bool,
    /// dm-crypt `iv_offset` (cryptsetup `--skip`): added to the sector
    /// number of every sector, in 512-byte sectors; a multiple of
    /// sector_size/512.
    #[arg(long, value_name = "N", default_value_t = 0)]
    iv_offset: u64,
    /// Start of the encrypted data on the backing device (cryptsetup
    /// `--offset`), in 512-byte sectors. It does not change the IVs.
    #[arg(long, value_name = "N", default_value_t = 0)]
    offset: u64,
    /// Encryption threads (default: every core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Rewrite IN where it lies, given again as OUT (not atomic).
    ///
    /// IN must be a regular file or a block device; without this option an
    /// OUT that is the same file or device as IN is refused. IN is
    /// converted chunk by chunk, each chunk read whole before it is written
    /// back, and synced (fsync) at the end. Not atomic: an interrupted run
    /// leaves IN partly converted, so keep a copy until it is done.
    ///
    /// With --offset, encrypt moves the data up by the offset, working back
    /// to front so that nothing is read after it was overwritten (a regular
    /// file grows and its offset area is zero-filled; a block device cannot
    /// grow and is refused), and decrypt moves it down, front to back (a
    /// regular file is cut to the plaintext's length; the end of a block
    /// device is left as it was).
    #[arg(long)]
    in_place: bool,
    /// Input file or device.
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// Output file or device; atomic only for a regular file (see
    /// "Outputs" below). OUT must not be IN (see --in-place).
    #[arg(value_name = "OUT")]
    output: PathBuf,
}

pub(crate) fn run(cmd: CryptCmd) -> Result<(), CliError> {
    match cmd {
        CryptCmd::Encrypt(a) => crypt(Direction::Encrypt, a),
        CryptCmd::Decrypt(a) => crypt(Direction::Decrypt, a),
    }
}

/// The longest raw key of any cipher spec (AES-256-XTS).
const MAX_KEY: usize = 64;

/// The raw volume key for `spec`, in a buffer that is zeroized when
/// dropped. The buffer is allocated once at its final size (one byte more
/// than the longest key, to tell a longer file) and never grows, so no copy
/// of the key is left behind in memory given back to the allocator.
fn read_key(path: &Path, spec: &CipherSpec) -> Result<Zeroizing<Vec<u8>>, CliError> {
    let mut f = File::open(path).map_err(|e| CliError::io(path, "read the key", e))?;
    let mut key = Zeroizing::new(vec![0u8; MAX_KEY + 1]);
    let n = util::read_full(&mut f, &mut key).map_err(|e| CliError::io(path, "read the key", e))?;
    if spec.check_key_len(n).is_err() {
        let len = match f.metadata() {
            Ok(m) if n > MAX_KEY && m.is_file() => m.len().to_string(),
            _ if n > MAX_KEY => format!("more than {MAX_KEY}"),
            _ => n.to_string(),
        };
        let (chain, short, long) = match spec.chain() {
            ChainMode::Cbc => ("aes-cbc", 16, 32),
            _ => ("aes-xts", 32, 64),
        };
        return Err(CliError::Input {
            path: path.to_owned(),
            offset: n.min(MAX_KEY) as u64,
            rule: format!(
                "key file holds {len} bytes; {chain} needs exactly {short} (AES-128) or {long} \
                 (AES-256) raw key bytes"
            ),
        });
    }
    // Shortening a vector never reallocates; the dropped tail is zeros.
    key.truncate(n);
    Ok(key)
}

fn key_error(path: &Path, e: CipherError) -> CliError {
    match e {
        CipherError::WeakKey { reason } => CliError::Input {
            path: path.to_owned(),
            offset: 0,
            rule: format!("the key is refused as weak: {reason}"),
        },
        other => CliError::lib(path, other),
    }
}

fn crypt(dir: Direction, a: CryptArgs) -> Result<(), CliError> {
    let spec = CipherSpec::parse(&a.cipher).map_err(|e| CliError::Usage(e.to_string()))?;
    let geometry = Geometry::new(a.sector_size, a.iv_offset, a.iv_large_sectors)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let key = read_key(&a.key_file, &spec)?;
    let ivgen = IvGenerator::new(spec.iv_mode(), geometry, &key)
        .map_err(|e| CliError::lib(&a.key_file, e))?;
    let path = &a.key_file;
    match (spec.chain(), key.len()) {
        (ChainMode::Cbc, 16) => {
            let cbc = AesCbc128::new(&key).map_err(|e| key_error(path, e))?;
            stream(dir, &a, &ivgen, &cbc)
        }
        (ChainMode::Cbc, _) => {
            let cbc = AesCbc256::new(&key).map_err(|e| key_error(path, e))?;
            stream(dir, &a, &ivgen, &cbc)
        }
        (_, 32) => {
            let xts = XtsAes128::new(&key).map_err(|e| key_error(path, e))?;
            stream(dir, &a, &ivgen, &xts)
        }
        _ => {
            let xts = XtsAes256::new(&key).map_err(|e| key_error(path, e))?;
            stream(dir, &a, &ivgen, &xts)
        }
    }
}

fn stream<C: DataUnitCipher<Iv = mdu_dmcrypt::Iv> + Sync>(
    dir: Direction,
    a: &CryptArgs,
    ivgen: &IvGenerator,
    cipher: &C,
) -> Result<(), CliError> {
    let ss = a.sector_size as usize;
    let header = a
        .offset
        .checked_mul(512)
        .ok_or_else(|| CliError::Usage(format!("--offset {} is too large", a.offset)))?;
    let (mut input, in_len) = util::open_input(&a.input)?;
    let in_meta = input
        .metadata()
        .map_err(|e| CliError::io(&a.input, "examine", e))?;
    let same = output::same_file(&in_meta, &a.output);
    match (same, a.in_place) {
        (true, false) => {
            return Err(CliError::Usage(format!(
                "{} and {} are the same file or device: the output would overwrite input \
                 not yet read; give a different OUT, or --in-place to rewrite it in place \
                 (not atomic)",
                a.input.display(),
                a.output.display()
            )));
        }
        (false, true) => {
            return Err(CliError::Usage(format!(
                "--in-place rewrites IN itself, but {} is not the same file or device as {}",
                a.output.display(),
                a.input.display()
            )));
        }
        (true, true) => {
            drop(input);
            return in_place(dir, a, ivgen, cipher, &in_meta);
        }
        (false, false) => {}
    }
    let is_regular = in_meta.is_file();
    let encrypt = dir.is_encrypt();
    // Decrypt reads the backing device from --offset on.
    let skip = if encrypt { 0 } else { header };
    if is_regular {
        if in_len < skip {
            return Err(CliError::Input {
                path: a.input.clone(),
                offset: in_len,
                rule: format!(
                    "the file ends before --offset {} (byte {skip}) where the encrypted data starts",
                    a.offset
                ),
            });
        }
        check_sectors(&a.input, skip, in_len - skip, ss)?;
    }
    if skip > 0 {
        input
            .seek(SeekFrom::Start(skip))
            .map_err(|e| CliError::io(&a.input, "seek to --offset", e))?;
    }

    // The output's length, when the input's is known (a device's too):
    // a device too small for it is refused before anything is written.
    let data_len = if is_regular || in_meta.file_type().is_block_device() {
        Some(in_len.saturating_sub(skip))
    } else {
        None
    };
    let out_len = data_len.map(|n| if encrypt { n.saturating_add(header) } else { n });
    let mut spec = Output::to(&a.output).not_same_as(&a.input, in_meta.clone());
    if let (Some(n), Some(data)) = (out_len, data_len) {
        spec = spec.len(n).reserve(n - data, data);
    }
    if !encrypt {
        spec = spec.private();
    }
    let mut sink = spec.open()?;
    if encrypt && header > 0 {
        // The --offset area: a hole in a new file, left as it is on a
        // device, zeros on a stream.
        let r = if sink.seekable() {
            sink.file().seek(SeekFrom::Start(header)).map(drop)
        } else {
            std::io::copy(&mut std::io::repeat(0).take(header), sink.file()).map(drop)
        };
        r.map_err(|e| CliError::io(&a.output, "write the --offset area", e))?;
    }

    let pool = util::pool(a.threads)?;
    let parallel = pool.current_num_threads() > 1;
    let chunk_len = CHUNK_PER_THREAD * pool.current_num_threads();
    let pb = util::progress(in_len.saturating_sub(skip), dir.name());
    let in_path = a.input.as_path();
    let out_path = a.output.as_path();

    // Three stages: a reader thread fills chunks, this thread encrypts them
    // on the pool, a writer thread writes them; buffers go round.
    let total = std::thread::scope(|s| -> Result<u64, CliError> {
        let (full_tx, full_rx) = mpsc::sync_channel::<(Vec<u8>, usize)>(1);
        let (done_tx, done_rx) = mpsc::sync_channel::<Option<(Vec<u8>, usize)>>(1);
        let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
        for _ in 0..3 {
            let _ = free_tx.send(vec![0u8; chunk_len]);
        }
        // Lets this thread wake a reader waiting for a free buffer after a
        // failure (an empty buffer reads as the end of the input).
        let wake_reader = free_tx.clone();
        // The writer first: if the reader cannot be started, dropping
        // `done_tx` ends the writer, which leaves the output as it was.
        let writer = util::spawn(s, "writer", move || -> Result<(), CliError> {
            let mut out = sink;
            // `None` is the order to commit; a closed channel without it
            // means failure, and dropping `out` leaves the target as it was.
            for msg in done_rx {
                let Some((buf, n)) = msg else {
                    return out.commit();
                };
                out.file()
                    .write_all(&buf[..n])
                    .map_err(|e| CliError::io(out_path, "write", e))?;
                let _ = free_tx.send(buf);
            }
            Ok(())
        })?;
        let reader = util::spawn(s, "reader", move || -> Result<(), CliError> {
            let mut pos = skip;
            while let Ok(mut buf) = free_rx.recv() {
                let n = util::read_full(&mut input, &mut buf)
                    .map_err(|e| CliError::io(in_path, "read", e))?;
                if n == 0 {
                    return Ok(());
                }
                if !n.is_multiple_of(ss) {
                    return Err(partial_sector(
                        in_path,
                        pos + (n - n % ss) as u64,
                        n % ss,
                        ss,
                    ));
                }
                pos += n as u64;
                if full_tx.send((buf, n)).is_err() {
                    return Ok(());
                }
            }
            Ok(())
        })?;

        let mut sector = 0u64;
        let mut bytes = 0u64;
        let mut failed = None;
        for (mut buf, n) in full_rx {
            let chunk = &mut buf[..n];
            let r = if parallel {
                pool.install(|| ivgen.par_crypt(dir, cipher, sector, chunk))
            } else {
                ivgen.crypt(dir, cipher, sector, chunk)
            };
            if let Err(e) = r {
                failed = Some(CliError::lib(in_path, e));
                break;
            }
            sector += (n / ss) as u64;
            bytes += n as u64;
            pb.inc(n as u64);
            if done_tx.send(Some((buf, n))).is_err() {
                break;
            }
        }
        let _ = wake_reader.send(Vec::new());
        let read_result = util::join(reader, "reader");
        let result = match (failed, read_result) {
            (Some(e), _) | (None, Err(e)) => Err(e),
            (None, Ok(())) if bytes == 0 => Err(CliError::Input {
                path: in_path.to_owned(),
                offset: skip,
                rule: format!("no data: the input must hold at least one {ss}-byte sector"),
            }),
            (None, Ok(())) => Ok(()),
        };
        if result.is_ok() {
            let _ = done_tx.send(None);
        }
        drop(done_tx);
        let written = util::join(writer, "writer");
        result.and(written).map(|()| bytes)
    })?;
    pb.finish_and_clear();
    debug_assert!(total > 0);
    Ok(())
}

/// `--in-place`: converts the regular file or block device IN where it
/// lies, chunk by chunk, each chunk read whole before it is written back.
///
/// Data at position `p` (from the start of the data) is read at
/// `in_base + p` and written at `out_base + p`: encrypt moves it up by the
/// `--offset` area (`out_base = offset * 512`), decrypt moves it down
/// (`in_base = offset * 512`). Moving down, front to back is safe: every
/// later read lies above the chunk just written. Moving up, the chunk just
/// written would cover input not yet read, so the chunks go back to front:
/// every later read lies below the chunk just read, and so below where it
/// was written. Without `--offset` the two orders are the same.
fn in_place<C: DataUnitCipher<Iv = mdu_dmcrypt::Iv> + Sync>(
    dir: Direction,
    a: &CryptArgs,
    ivgen: &IvGenerator,
    cipher: &C,
    meta: &Metadata,
) -> Result<(), CliError> {
    let path = a.input.as_path();
    let ss = a.sector_size as usize;
    let encrypt = dir.is_encrypt();
    let regular = meta.is_file();
    if !regular && !meta.file_type().is_block_device() {
        return Err(CliError::Usage(format!(
            "--in-place needs a regular file or a block device; {} is neither",
            path.display()
        )));
    }
    let header = a
        .offset
        .checked_mul(512)
        .ok_or_else(|| CliError::Usage(format!("--offset {} is too large", a.offset)))?;
    if encrypt && header > 0 && !regular {
        return Err(CliError::Usage(format!(
            "--in-place encrypt with --offset moves the data up by {header} bytes, but the \
             block device {} cannot grow: encrypt it into another device or file",
            path.display()
        )));
    }
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| CliError::io(path, "open for reading and writing", e))?;
    let len = f
        .seek(SeekFrom::End(0))
        .map_err(|e| CliError::io(path, "read its size", e))?;
    let (in_base, out_base) = if encrypt { (0, header) } else { (header, 0) };
    if len < in_base {
        return Err(CliError::Input {
            path: path.to_owned(),
            offset: len,
            rule: format!(
                "the file ends before --offset {} (byte {header}) where the encrypted data starts",
                a.offset
            ),
        });
    }
    let data_len = len - in_base;
    check_sectors(path, in_base, data_len, ss)?;
    if out_base > in_base {
        // The file grows by the offset area: the space is taken now, so a
        // full disk stops the run before anything was moved.
        output::reserve(&f, len, out_base - in_base).map_err(|e| {
            CliError::io(
                path,
                "grow the file by the --offset area (nothing was changed)",
                e,
            )
        })?;
    }

    let pool = util::pool(a.threads)?;
    let parallel = pool.current_num_threads() > 1;
    let chunk = (CHUNK_PER_THREAD * pool.current_num_threads()) as u64;
    let mut buf = vec![0u8; chunk.min(data_len) as usize];
    let pb = util::progress(data_len, dir.name());
    let mut order: Vec<u64> = (0..data_len.div_ceil(chunk)).map(|i| i * chunk).collect();
    if out_base > in_base {
        order.reverse();
    }
    for p in order {
        let n = chunk.min(data_len - p) as usize;
        let piece = &mut buf[..n];
        f.read_exact_at(piece, in_base + p)
            .map_err(|e| CliError::io(path, "read", e))?;
        let sector = p / ss as u64;
        let r = if parallel {
            pool.install(|| ivgen.par_crypt(dir, cipher, sector, piece))
        } else {
            ivgen.crypt(dir, cipher, sector, piece)
        };
        r.map_err(|e| CliError::lib(path, e))?;
        f.write_all_at(piece, out_base + p)
            .map_err(|e| CliError::io(path, "write", e))?;
        pb.inc(n as u64);
    }
    if regular && header > 0 {
        // Leave the file as an out-of-place run would have written it: the
        // offset area of an encrypted image is zeros (here it still held
        // the start of the plaintext), a decrypted image ends with the data.
        let r = if encrypt {
            buf.fill(0);
            let mut at = 0;
            let mut r = Ok(());
            while at < header && r.is_ok() {
                let n = (header - at).min(buf.len() as u64) as usize;
                r = f.write_all_at(&buf[..n], at);
                at += n as u64;
            }
            r
        } else {
            f.set_len(data_len)
        };
        r.map_err(|e| CliError::io(path, "finish the --offset area", e))?;
    }
    f.sync_all()
        .map_err(|e| CliError::io(path, "sync to stable storage", e))?;
    pb.finish_and_clear();
    Ok(())
}

fn partial_sector(path: &Path, offset: u64, left: usize, ss: usize) -> CliError {
    CliError::Input {
        path: path.to_owned(),
        offset,
        rule: format!(
            "{left} trailing bytes are not a whole sector: the data must be a whole number of {ss}-byte sectors"
        ),
    }
}

fn check_sectors(path: &Path, start: u64, len: u64, ss: usize) -> Result<(), CliError> {
    let ss64 = ss as u64;
    if len == 0 {
        return Err(CliError::Input {
            path: path.to_owned(),
            offset: start,
            rule: format!("no data: the input must hold at least one {ss}-byte sector"),
        });
    }
    if !len.is_multiple_of(ss64) {
        return Err(partial_sector(
            path,
            start + len - len % ss64,
            (len % ss64) as usize,
            ss,
        ));
    }
    Ok(())
}
