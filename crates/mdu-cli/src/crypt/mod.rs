//! `mdu crypt encrypt|decrypt`: dm-crypt plain-mode images.

use std::fs::{File, Metadata};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use mdu_dmcrypt::{ChainMode, CipherSpec, Direction, Geometry, MAX_KEY_LEN, SectorCipher};
use zeroize::Zeroizing;

use mdu_inplace::journal_file as journal;
use mdu_inplace::plain::{self, Params, Plain};
use mdu_inplace::{Journal as _, Op};

use crate::args::WeakKeyArg;
use crate::error::CliError;

mod in_place;

use in_place::in_place;

use crate::output::{self, Output};
use crate::pipeline::{self, Sink, Source};
use crate::{error, input, paths, process, progress};
use mdu_inplace::lock::Locks;

/// Bytes per read/encrypt/write step and thread of `--in-place`.
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
    /// (aes-cbc-essiv:sha256 is LUKS1's and old plain mode's default);
    /// the wide-block aes-hctr2-IVMODE and xchacha12,aes-adiantum-IVMODE,
    /// with IVMODE plain, plain64, plain64be or null; and serpent-, twofish-,
    /// camellia- and sm4- in place of aes- for xts and cbc (portable code,
    /// one sector at a time; sm4 takes no essiv:sha256).
    #[arg(long, value_name = "SPEC", default_value = "aes-xts-plain64")]
    cipher: String,
    /// File holding the raw volume key, nothing else: for aes-xts 32 bytes
    /// (AES-128) or 64 (AES-256), for aes-cbc and aes-hctr2 16 bytes
    /// (AES-128) or 32 (AES-256), for xchacha12,aes-adiantum 32 bytes;
    /// serpent, twofish and camellia take 128-, 192- and 256-bit keys (xts
    /// 32, 48 or 64 bytes, cbc 16, 24 or 32), sm4 128-bit keys (xts 32,
    /// cbc 16).
    #[arg(long, value_name = "F")]
    key_file: PathBuf,
    #[command(flatten)]
    weak: WeakKeyArg,
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
    /// Encryption threads (default: every core; at most 1024).
    #[arg(long, value_name = "N", value_parser = crate::args::threads_arg)]
    threads: Option<usize>,
    /// Rewrite IN where it lies, given again as OUT (not atomic).
    ///
    /// IN must be a regular file or a block device; without this option an
    /// OUT that is the same file or device as IN is refused. It needs
    /// --journal: IN is converted chunk by chunk, and before each chunk is
    /// written back its old bytes and position are synced into the
    /// journal, so a run killed at any moment (a crash, a power cut,
    /// SIGKILL, Ctrl-C) loses nothing: run the same command again with
    /// --resume and it repairs the chunk in flight and goes on. The journal
    /// is removed when the run is done.
    ///
    /// With --offset, encrypt moves the data up by the offset, working back
    /// to front so that nothing is read after it was overwritten (a regular
    /// file grows and its offset area is zero-filled; a block device cannot
    /// grow and is refused), and decrypt moves it down, front to back (a
    /// regular file is cut to the plaintext's length; the end of a block
    /// device is left as it was).
    #[arg(long)]
    in_place: bool,
    /// The journal of --in-place: a new file (on another device than IN if
    /// possible), or with --resume the journal of the interrupted run. It
    /// holds one chunk of IN's old bytes at a time.
    #[arg(long, value_name = "FILE", requires = "in_place")]
    journal: Option<PathBuf>,
    /// Go on with the --in-place run that --journal records (the same
    /// cipher, key, sector size, offset and direction as it was started
    /// with; anything else is refused).
    #[arg(long, requires = "journal")]
    resume: bool,
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

/// The raw volume key for `spec`, in a buffer that is zeroized when
/// dropped. The buffer is allocated once at its final size (one byte more
/// than the longest key, to tell a longer file) and never grows, so no copy
/// of the key is left behind in memory given back to the allocator.
fn read_key(path: &Path, spec: &CipherSpec) -> Result<Zeroizing<Vec<u8>>, CliError> {
    let mut f = File::open(path).map_err(|e| CliError::io(path, "read the key", e))?;
    let mut key = Zeroizing::new(vec![0u8; MAX_KEY_LEN + 1]);
    let n =
        input::read_full(&mut f, &mut key).map_err(|e| CliError::io(path, "read the key", e))?;
    if spec.check_key_len(n).is_err() {
        let len = match f.metadata() {
            Ok(m) if n > MAX_KEY_LEN && m.is_file() => m.len().to_string(),
            _ if n > MAX_KEY_LEN => format!("more than {MAX_KEY_LEN}"),
            _ => n.to_string(),
        };
        // The lengths of the spec's table row, with the cipher's key size
        // each means (an XTS key is two keys: AES-256 for 64 bytes).
        let keys = if spec.chain() == ChainMode::Xts { 2 } else { 1 };
        let label = spec.cipher().key_label();
        let lens: Vec<String> = spec
            .key_lens()
            .iter()
            .map(|n| format!("{n} ({label}-{})", n * 8 / keys))
            .collect();
        return Err(CliError::Input {
            path: path.to_owned(),
            offset: n.min(MAX_KEY_LEN) as u64,
            rule: format!(
                "key file holds {len} bytes; {} needs exactly {} raw key bytes",
                spec.cipher_name(),
                lens.join(" or ")
            ),
        });
    }
    // Shortening a vector never reallocates; the dropped tail is zeros.
    key.truncate(n);
    Ok(key)
}

fn crypt(dir: Direction, a: CryptArgs) -> Result<(), CliError> {
    let mut paths = vec![("--key-file", a.key_file.as_path()), ("IN", &a.input)];
    if let Some(j) = &a.journal {
        paths.push(("--journal", j));
    }
    paths::distinct(&paths)?;
    paths::distinct(&[("--key-file", a.key_file.as_path()), ("OUT", &a.output)])?;
    let spec = CipherSpec::parse(&a.cipher).map_err(|e| CliError::Usage(e.to_string()))?;
    let geometry = Geometry::new(a.sector_size, a.iv_offset, a.iv_large_sectors)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let key = read_key(&a.key_file, &spec)?;
    let cipher = SectorCipher::new(spec, &key, geometry, a.weak.policy())
        .map_err(|e| error::key_error(&a.key_file, "the key", e))?;
    // What the journal of --in-place binds the run to: a one-way digest of
    // the key (never the key itself) with the other parameters.
    let key_check = Params::key_check(&key);
    drop(key);
    stream(dir, &a, &cipher, &key_check)
}

fn stream(
    dir: Direction,
    a: &CryptArgs,
    cipher: &SectorCipher,
    key_check: &[u8; 32],
) -> Result<(), CliError> {
    let ss = a.sector_size as usize;
    let header = a
        .offset
        .checked_mul(512)
        .ok_or_else(|| CliError::Usage(format!("--offset {} is too large", a.offset)))?;
    let (mut input, mut in_len) = input::open_input(&a.input)?;
    let in_meta = input
        .metadata()
        .map_err(|e| CliError::io(&a.input, "examine", e))?;
    if in_place_asked(a, &in_meta)? {
        drop(input);
        return in_place(dir, a, cipher, key_check, &in_meta);
    }
    let is_regular = in_meta.is_file();
    let is_block = in_meta.file_type().is_block_device();
    if is_block {
        // A device's metadata say 0 bytes: its size is where it ends.
        in_len = input
            .seek(SeekFrom::End(0))
            .map_err(|e| CliError::io(&a.input, "find the size of the device", e))?;
    }
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
    // The output's length, when the input's is known (a device's too):
    // a device too small for it is refused before anything is written.
    let data_len = if is_regular || is_block {
        Some(in_len.saturating_sub(skip))
    } else {
        None
    };
    if data_len.is_none() && skip > 0 {
        // A stream is read in order: skip to --offset.
        std::io::copy(&mut (&input).take(skip), &mut std::io::sink())
            .map_err(|e| CliError::io(&a.input, "skip to --offset", e))?;
    }
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
        skip_offset_area(&mut sink, header)?;
    }

    let seekable = sink.seekable();
    let bytes = pipeline::run(
        dir,
        cipher,
        Source {
            file: &input,
            path: &a.input,
            offset: skip,
            len: data_len,
        },
        Sink {
            file: sink.file(),
            path: &a.output,
            // Encrypt writes after the --offset area.
            offset: if encrypt { header } else { 0 },
            seekable,
        },
        a.threads,
    )?;
    if bytes == 0 {
        // Only a stream gets here (a sized input was checked above);
        // dropping the output leaves the target as it was.
        return Err(CliError::Input {
            path: a.input.clone(),
            offset: skip,
            rule: format!("no data: the input must hold at least one {ss}-byte sector"),
        });
    }
    Ok(sink.commit()?)
}

/// Whether the run is `--in-place`: OUT that is IN is refused without it
/// (the output would overwrite input not yet read), and `--in-place` with
/// another OUT.
fn in_place_asked(a: &CryptArgs, in_meta: &Metadata) -> Result<bool, CliError> {
    match (output::same_file(in_meta, &a.output), a.in_place) {
        (true, false) => Err(CliError::Usage(format!(
            "{} and {} are the same file or device: the output would overwrite input \
             not yet read; give a different OUT, or --in-place to rewrite it in place \
             (not atomic)",
            a.input.display(),
            a.output.display()
        ))),
        (false, true) => Err(CliError::Usage(format!(
            "--in-place rewrites IN itself, but {} is not the same file or device as {}",
            a.output.display(),
            a.input.display()
        ))),
        (same, _) => Ok(same),
    }
}

/// The --offset area of `header` bytes before the encrypted data: a hole
/// in a new file, left as it is on a device, zeros on a stream.
fn skip_offset_area(sink: &mut Output, header: u64) -> Result<(), CliError> {
    let r = if sink.seekable() {
        sink.file().seek(SeekFrom::Start(header)).map(drop)
    } else {
        std::io::copy(&mut std::io::repeat(0).take(header), sink.file()).map(drop)
    };
    let path = sink.path().to_owned();
    r.map_err(|e| CliError::io(&path, "write the --offset area", e))
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
        return Err(mdu_io::Error::PartialUnit {
            path: path.to_owned(),
            offset: start + len - len % ss64,
            left: (len % ss64) as usize,
            unit: ss,
        }
        .into());
    }
    Ok(())
}
