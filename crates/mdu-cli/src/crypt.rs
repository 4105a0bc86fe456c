//! `mdu crypt encrypt|decrypt`: dm-crypt plain-mode images.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use mdu_dmcrypt::{ChainMode, CipherSpec, Direction, Geometry, MAX_KEY_LEN, SectorCipher};
use zeroize::Zeroizing;

use crate::output::{self, Output};
use crate::pipeline::{self, Sink, Source};
use crate::util::{self, CliError, WeakKeyArg};

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
    /// (aes-cbc-essiv:sha256 is LUKS1's and old plain mode's default).
    #[arg(long, value_name = "SPEC", default_value = "aes-xts-plain64")]
    cipher: String,
    /// File holding the raw volume key, nothing else: for aes-xts 32 bytes
    /// (AES-128) or 64 (AES-256), for aes-cbc 16 bytes (AES-128) or 32
    /// (AES-256).
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
    /// Encryption threads (default: every core).
    #[arg(long, value_name = "N")]
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
    let n = util::read_full(&mut f, &mut key).map_err(|e| CliError::io(path, "read the key", e))?;
    if spec.check_key_len(n).is_err() {
        let len = match f.metadata() {
            Ok(m) if n > MAX_KEY_LEN && m.is_file() => m.len().to_string(),
            _ if n > MAX_KEY_LEN => format!("more than {MAX_KEY_LEN}"),
            _ => n.to_string(),
        };
        // The lengths of the spec's table row, with the AES key size each
        // means (an XTS key is two AES keys).
        let keys = if spec.chain() == ChainMode::Xts { 2 } else { 1 };
        let lens: Vec<String> = spec
            .key_lens()
            .iter()
            .map(|n| format!("{n} (AES-{})", n * 8 / keys))
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
    let spec = CipherSpec::parse(&a.cipher).map_err(|e| CliError::Usage(e.to_string()))?;
    let geometry = Geometry::new(a.sector_size, a.iv_offset, a.iv_large_sectors)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let key = read_key(&a.key_file, &spec)?;
    let cipher = SectorCipher::new(spec, &key, geometry, a.weak.policy())
        .map_err(|e| util::key_error(&a.key_file, "the key", e))?;
    // What the journal of --in-place binds the run to: a one-way digest of
    // the key (never the key itself) with the other parameters.
    let key_check = sha256(&[b"mdu crypt --in-place journal: key\0", &key[..]]);
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
    let (mut input, mut in_len) = util::open_input(&a.input)?;
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
            return in_place(dir, a, cipher, key_check, &in_meta);
        }
        (false, false) => {}
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
        // The --offset area: a hole in a new file, left as it is on a
        // device, zeros on a stream.
        let r = if sink.seekable() {
            sink.file().seek(SeekFrom::Start(header)).map(drop)
        } else {
            std::io::copy(&mut std::io::repeat(0).take(header), sink.file()).map(drop)
        };
        r.map_err(|e| CliError::io(&a.output, "write the --offset area", e))?;
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
    sink.commit()
}

/// `--in-place`: converts the regular file or block device IN where it
/// lies, chunk by chunk, each chunk read whole before it is written back,
/// with a [`Journal`] that makes every moment of the run resumable.
///
/// Data at position `p` (from the start of the data) is read at
/// `in_base + p` and written at `out_base + p`: encrypt moves it up by the
/// `--offset` area (`out_base = offset * 512`), decrypt moves it down
/// (`in_base = offset * 512`). Moving down, front to back is safe: every
/// later read lies above the chunk just written. Moving up, the chunk just
/// written would cover input not yet read, so the chunks go back to front:
/// every later read lies below the chunk just read, and so below where it
/// was written. Without `--offset` the two orders are the same.
fn in_place(
    dir: Direction,
    a: &CryptArgs,
    cipher: &SectorCipher,
    key_check: &[u8; 32],
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
    let Some(journal_path) = a.journal.as_deref() else {
        return Err(CliError::Usage(
            "--in-place needs --journal FILE: the record that lets a run that is killed or \
             loses power be resumed (--resume) without losing data"
                .into(),
        ));
    };
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
    let (in_base, out_base) = if encrypt { (0, header) } else { (header, 0) };
    let pool = util::pool(a.threads)?;
    let parallel = pool.current_num_threads() > 1;
    let fixed = Fixed {
        encrypt,
        in_base,
        out_base,
        sector_size: a.sector_size,
        cipher: a.cipher.clone(),
        key_check: *key_check,
    };
    let (mut journal, plan, start) = if a.resume {
        let len = f
            .seek(SeekFrom::End(0))
            .map_err(|e| CliError::io(path, "read its size", e))?;
        Journal::resume(journal_path, &fixed, len)?
    } else {
        let len = f
            .seek(SeekFrom::End(0))
            .map_err(|e| CliError::io(path, "read its size", e))?;
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
        let chunk = ((CHUNK_PER_THREAD * pool.current_num_threads()) as u64).min(MAX_JOURNAL_CHUNK);
        let plan = Plan { data_len, chunk };
        let journal = Journal::create(journal_path, &fixed, &plan)?;
        if out_base > in_base {
            // The file grows by the offset area: the space is taken now, so
            // a full disk stops the run before anything was moved.
            if let Err(e) = output::reserve(&f, len, out_base - in_base) {
                let _ = journal.remove();
                return Err(CliError::io(
                    path,
                    "grow the file by the --offset area (nothing was changed)",
                    e,
                ));
            }
        }
        (journal, plan, Start::At(0))
    };
    let Plan { data_len, chunk } = plan;
    let mut order: Vec<u64> = (0..data_len.div_ceil(chunk)).map(|i| i * chunk).collect();
    if out_base > in_base {
        order.reverse();
    }
    let convert = |p: u64, piece: &mut [u8]| -> Result<(), CliError> {
        let sector = p / ss as u64;
        let r = if parallel {
            pool.install(|| cipher.par_crypt(dir, sector, piece))
        } else {
            cipher.crypt(dir, sector, piece)
        };
        r.map_err(|e| CliError::lib(path, e))
    };
    let sync = |f: &File| {
        f.sync_data()
            .map_err(|e| CliError::io(path, "sync to stable storage", e))
    };
    let mut buf = vec![0u8; chunk.min(data_len) as usize];
    let first = match start {
        Start::At(k) => k,
        Start::Redo(k, old) => {
            // The chunk in flight when the run stopped: its old bytes come
            // from the journal, whatever IN holds there now.
            let p = order[k as usize];
            let mut piece = old;
            convert(p, &mut piece)?;
            f.write_all_at(&piece, out_base + p)
                .map_err(|e| CliError::io(path, "write", e))?;
            sync(&f)?;
            journal.done(k + 1)?;
            k + 1
        }
    };
    let pb = util::progress(data_len, dir.name());
    pb.set_position((first * chunk).min(data_len));
    for (k, &p) in order.iter().enumerate().skip(first as usize) {
        let n = chunk.min(data_len - p) as usize;
        let piece = &mut buf[..n];
        f.read_exact_at(piece, in_base + p)
            .map_err(|e| CliError::io(path, "read", e))?;
        journal.hot(k as u64, piece)?;
        convert(p, piece)?;
        f.write_all_at(piece, out_base + p)
            .map_err(|e| CliError::io(path, "write", e))?;
        sync(&f)?;
        journal.done(k as u64 + 1)?;
        pb.inc(n as u64);
    }
    if regular && header > 0 {
        // Leave the file as an out-of-place run would have written it: the
        // offset area of an encrypted image is zeros (here it still held
        // the start of the plaintext), a decrypted image ends with the data.
        // Both are done again, the same, by a resume.
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
    journal.remove()
}

/// SHA-256 of the concatenated `parts`.
fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = mdu_verity::sha256::State::new();
    for p in parts {
        h.update(p);
    }
    h.finup(&[])
}

/// What an `--in-place` run is bound to: a resume must give the same.
struct Fixed {
    encrypt: bool,
    in_base: u64,
    out_base: u64,
    sector_size: u32,
    cipher: String,
    key_check: [u8; 32],
}

impl Fixed {
    fn digest(&self) -> [u8; 32] {
        sha256(&[
            b"mdu crypt --in-place journal v1\0",
            &[u8::from(self.encrypt)],
            &self.in_base.to_le_bytes(),
            &self.out_base.to_le_bytes(),
            &self.sector_size.to_le_bytes(),
            self.cipher.to_ascii_lowercase().as_bytes(),
            &[0],
            &self.key_check,
        ])
    }
}

/// What a run was measured as when it started (IN's size changes with
/// `--offset`, so a resume takes these from the journal).
#[derive(Clone, Copy)]
struct Plan {
    data_len: u64,
    chunk: u64,
}

/// Where a resumed run starts.
enum Start {
    /// At chunk k of the order.
    At(u64),
    /// Chunk k was in flight: convert these old bytes, then go on.
    Redo(u64, Vec<u8>),
}

/// The journal of `mdu crypt --in-place`: two 4096-byte record slots
/// written in turn (so a torn write leaves the other one), then a copy of
/// the old bytes of the chunk in flight. A record holds a magic, a
/// sequence number, the state (chunk k in flight, or k chunks done), the
/// run's [`Plan`], the digest of its [`Fixed`] parameters, the SHA-256 of
/// the copy, and the SHA-256 of itself.
struct Journal {
    file: File,
    path: PathBuf,
    seq: u64,
    fixed: [u8; 32],
    plan: Plan,
}

const JOURNAL_MAGIC: &[u8; 8] = b"MDUJRNL1";
/// The largest chunk a journal may record (1 MiB per thread, up to 1024
/// threads).
const MAX_JOURNAL_CHUNK: u64 = 1 << 30;
const SLOT: usize = 4096;
const HOT: u8 = 1;
const DONE: u8 = 2;

impl Journal {
    fn create(path: &Path, fixed: &Fixed, plan: &Plan) -> Result<Journal, CliError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| {
                CliError::io(
                    path,
                    "create the journal (an existing one belongs to an interrupted run: --resume)",
                    e,
                )
            })?;
        let mut j = Journal {
            file,
            path: path.to_owned(),
            seq: 0,
            fixed: fixed.digest(),
            plan: *plan,
        };
        j.record(DONE, 0, &[0u8; 32])?;
        // The new name too must survive a crash.
        if let Some(dir) = path.parent().map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        }) {
            let _ = File::open(dir).and_then(|d| d.sync_all());
        }
        Ok(j)
    }

    /// Reads the journal of a run over a device now `device_len` bytes
    /// long.
    fn resume(
        path: &Path,
        fixed: &Fixed,
        device_len: u64,
    ) -> Result<(Journal, Plan, Start), CliError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| CliError::io(path, "open the journal", e))?;
        let refuse = |rule: String| CliError::Input {
            path: path.to_owned(),
            offset: 0,
            rule,
        };
        // (seq, state, k, plan, parameters digest, copy digest)
        type Record = (u64, u8, u64, Plan, [u8; 32], [u8; 32]);
        let mut best: Option<Record> = None;
        for slot in 0..2u64 {
            let mut r = [0u8; SLOT];
            if file.read_exact_at(&mut r, slot * SLOT as u64).is_err() {
                continue;
            }
            let sum = sha256(&[&r[..SLOT - 32]]);
            if &r[..8] != JOURNAL_MAGIC || r[SLOT - 32..] != sum {
                continue;
            }
            let u = |at: usize| u64::from_le_bytes(r[at..at + 8].try_into().expect("8 bytes"));
            let seq = u(8);
            let plan = Plan {
                data_len: u(32),
                chunk: u(40),
            };
            let mut fx = [0u8; 32];
            fx.copy_from_slice(&r[48..80]);
            let mut copy = [0u8; 32];
            copy.copy_from_slice(&r[80..112]);
            if best.as_ref().is_none_or(|b| seq > b.0) {
                best = Some((seq, r[16], u(24), plan, fx, copy));
            }
        }
        let Some((seq, state, k, plan, fx, copy_sum)) = best else {
            return Err(refuse(
                "not an mdu crypt --in-place journal (no valid record)".into(),
            ));
        };
        if fx != fixed.digest() {
            return Err(refuse(
                "the journal was written by a run with another cipher, key, sector size, \
                 --offset or direction: give the same ones to resume it"
                    .into(),
            ));
        }
        // A run never makes its device shorter than its data, and its chunks
        // are at most MAX_JOURNAL_CHUNK: a record saying otherwise is not
        // one mdu wrote (and must not size an allocation).
        if plan.chunk == 0
            || plan.chunk > MAX_JOURNAL_CHUNK
            || plan.data_len == 0
            || plan.data_len > device_len
            || !matches!(state, HOT | DONE)
        {
            return Err(refuse("the journal's record is not one mdu writes".into()));
        }
        let chunks = plan.data_len.div_ceil(plan.chunk);
        if k > chunks || (state == HOT && k >= chunks) {
            return Err(refuse(format!(
                "the journal's position {k} lies past the {chunks} chunks of the run"
            )));
        }
        let j = Journal {
            file,
            path: path.to_owned(),
            seq,
            fixed: fx,
            plan,
        };
        let start = if state == HOT {
            // The copy of chunk k; if it does not match its sum, the record
            // was synced before the copy was whole, so IN was not written.
            let n = plan.chunk.min(plan.data_len - k * plan.chunk) as usize;
            let mut old = vec![0u8; n];
            let ok = j.file.read_exact_at(&mut old, 2 * SLOT as u64).is_ok()
                && sha256(&[&old]) == copy_sum;
            if ok {
                Start::Redo(k, old)
            } else {
                Start::At(k)
            }
        } else {
            Start::At(k)
        };
        Ok((j, plan, start))
    }

    /// Writes the next record and syncs the journal.
    fn record(&mut self, state: u8, k: u64, copy_sum: &[u8; 32]) -> Result<(), CliError> {
        self.seq += 1;
        let mut r = [0u8; SLOT];
        r[..8].copy_from_slice(JOURNAL_MAGIC);
        r[8..16].copy_from_slice(&self.seq.to_le_bytes());
        r[16] = state;
        r[24..32].copy_from_slice(&k.to_le_bytes());
        r[32..40].copy_from_slice(&self.plan.data_len.to_le_bytes());
        r[40..48].copy_from_slice(&self.plan.chunk.to_le_bytes());
        r[48..80].copy_from_slice(&self.fixed);
        r[80..112].copy_from_slice(copy_sum);
        let sum = sha256(&[&r[..SLOT - 32]]);
        r[SLOT - 32..].copy_from_slice(&sum);
        let slot = (self.seq % 2) * SLOT as u64;
        self.file
            .write_all_at(&r, slot)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| CliError::io(&self.path, "write the journal", e))
    }

    /// Chunk `k` is about to be written back: its old bytes go first.
    fn hot(&mut self, k: u64, old: &[u8]) -> Result<(), CliError> {
        self.file
            .write_all_at(old, 2 * SLOT as u64)
            .map_err(|e| CliError::io(&self.path, "write the journal", e))?;
        let sum = sha256(&[old]);
        self.record(HOT, k, &sum)
    }

    /// `k` chunks are converted and synced.
    fn done(&mut self, k: u64) -> Result<(), CliError> {
        self.record(DONE, k, &[0u8; 32])
    }

    /// The run is over: the copy is wiped (it may hold plaintext), the
    /// records stay readable (every chunk done, so a resume after a crash
    /// here only finishes) until the file is removed.
    fn remove(self) -> Result<(), CliError> {
        let len = self.file.metadata().map(|m| m.len()).unwrap_or(0);
        let copy = len.saturating_sub(2 * SLOT as u64);
        let _ = self
            .file
            .write_all_at(&vec![0u8; copy as usize], 2 * SLOT as u64);
        let _ = self.file.sync_data();
        drop(self.file);
        std::fs::remove_file(&self.path)
            .map_err(|e| CliError::io(&self.path, "remove the journal", e))
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
        return Err(pipeline::partial_sector(
            path,
            start + len - len % ss64,
            (len % ss64) as usize,
            ss,
        ));
    }
    Ok(())
}
