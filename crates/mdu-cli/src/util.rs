//! Errors, exit codes, inputs, progress bars, hex and threads.

use std::fmt;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use mdu_verity::{Error as VerityError, Source};

/// Exit status of a verification that ran and found a mismatch.
pub(crate) const EXIT_VERIFY_FAILED: u8 = 1;
/// Exit status of bad usage or bad input.
pub(crate) const EXIT_BAD_INPUT: u8 = 2;
/// Exit status of a file or device another process is using (cryptsetup's
/// "device busy").
pub(crate) const EXIT_BUSY: u8 = 5;

/// Why a command failed. Every message names the file, the offset (where
/// there is one) and the rule that was broken.
#[derive(Debug)]
pub(crate) enum CliError {
    /// An option value is invalid (exit 2).
    Usage(String),
    /// An I/O operation on a file failed (exit 2).
    Io {
        path: PathBuf,
        action: &'static str,
        source: io::Error,
    },
    /// A file's contents break a rule (exit 2).
    Input {
        path: PathBuf,
        offset: u64,
        rule: String,
    },
    /// A library call refused its input (exit 2).
    Library { path: PathBuf, message: String },
    /// Verification ran and found a mismatch (exit 1).
    VerifyFailed(String),
    /// An image that is damaged, or a key that does not open it (exit 1).
    Refused { path: PathBuf, message: String },
    /// Another process holds the lock of a file this command changes in
    /// place (exit 5).
    Busy { path: PathBuf, holder: String },
}

impl CliError {
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::VerifyFailed(_) | CliError::Refused { .. } => EXIT_VERIFY_FAILED,
            CliError::Busy { .. } => EXIT_BUSY,
            _ => EXIT_BAD_INPUT,
        }
    }

    pub(crate) fn io(path: &Path, action: &'static str, source: io::Error) -> CliError {
        CliError::Io {
            path: path.to_owned(),
            action,
            source,
        }
    }

    pub(crate) fn lib(path: &Path, e: impl fmt::Display) -> CliError {
        CliError::Library {
            path: path.to_owned(),
            message: e.to_string(),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) => f.write_str(m),
            CliError::Io {
                path,
                action,
                source,
            } => write!(f, "{}: cannot {action}: {source}", path.display()),
            CliError::Input { path, offset, rule } => {
                write!(f, "{}: at byte offset {offset}: {rule}", path.display())
            }
            CliError::Library { path, message } => write!(f, "{}: {message}", path.display()),
            CliError::VerifyFailed(m) => write!(f, "verification failed: {m}"),
            CliError::Refused { path, message } => write!(f, "{}: {message}", path.display()),
            CliError::Busy { path, holder } => {
                write!(f, "{}: busy: {holder}; nothing was changed", path.display())
            }
        }
    }
}

/// `--allow-weak-key`, the one opt-in of `mdu crypt` and `mdu luks` to the
/// weak-key policy of `mdu_dmcrypt::WeakKeys`.
#[derive(clap::Args, Debug, Clone, Copy)]
pub(crate) struct WeakKeyArg {
    /// Accept an aes-xts key whose two halves (the data key and the tweak
    /// key) are equal.
    ///
    /// Such a key is weak: XTS is only secure with two independent keys,
    /// and the kernel refuses equal halves wherever weak keys are forbidden
    /// (FIPS mode). Without this option mdu refuses it, whether it comes
    /// from a key file or from a LUKS2 image. aes-cbc has no weak keys.
    #[arg(long)]
    pub(crate) allow_weak_key: bool,
}

impl WeakKeyArg {
    /// The policy the option asks for.
    pub(crate) fn policy(self) -> mdu_dmcrypt::WeakKeys {
        mdu_dmcrypt::WeakKeys::allow_if(self.allow_weak_key)
    }
}

/// A key refused by the library, as a CLI error about `path`: a weak key
/// names the option that accepts it (exit 2).
pub(crate) fn key_error(path: &Path, what: &str, e: mdu_dmcrypt::DmCryptError) -> CliError {
    match e {
        e if e.is_weak_key() => CliError::Input {
            path: path.to_owned(),
            offset: 0,
            rule: format!("{what} is refused: {e} (--allow-weak-key accepts it)"),
        },
        e => CliError::lib(path, e),
    }
}

/// Inputs at least this large get a progress bar (on a terminal).
const PROGRESS_MIN_BYTES: u64 = 64 << 20;

/// A progress bar of `total` bytes on stderr if stderr is a terminal and the
/// work is long, a hidden one otherwise.
pub(crate) fn progress(total: u64, what: &str) -> ProgressBar {
    if total < PROGRESS_MIN_BYTES || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "{msg} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_owned());
    pb
}

/// Starts `f` on a new scoped thread called `name`: a thread that cannot
/// be started (RLIMIT_NPROC, memory) is an error, not a panic.
pub(crate) fn spawn<'scope, 'env, T: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    name: &str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> Result<std::thread::ScopedJoinHandle<'scope, T>, CliError> {
    std::thread::Builder::new()
        .name(format!("mdu-{name}"))
        .spawn_scoped(s, f)
        .map_err(|e| CliError::Usage(format!("cannot start the {name} thread: {e}")))
}

/// Waits for a thread started by [`spawn`]; a panic in it is an error.
pub(crate) fn join<T>(
    h: std::thread::ScopedJoinHandle<'_, Result<T, CliError>>,
    name: &str,
) -> Result<T, CliError> {
    h.join()
        .unwrap_or_else(|_| Err(CliError::Usage(format!("the {name} thread panicked"))))
}

/// Parse a hex string of any even length (upper or lower case).
pub(crate) fn parse_hex(what: &str, s: &str) -> Result<Vec<u8>, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "{what} {s:?} is not a valid hex string: it must be an even number of hex digits"
        ))
    };
    if !s.len().is_multiple_of(2) {
        return Err(bad());
    }
    s.as_bytes()
        .chunks(2)
        .map(|p| {
            let hi = (p[0] as char).to_digit(16);
            let lo = (p[1] as char).to_digit(16);
            match (hi, lo) {
                (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
                _ => Err(bad()),
            }
        })
        .collect()
}

/// Lowercase hex.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    use fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Random bytes from the operating system.
pub(crate) fn random_bytes(buf: &mut [u8]) -> Result<(), CliError> {
    getrandom::fill(buf).map_err(|e| CliError::Usage(format!("cannot get random bytes: {e}")))
}

/// A rayon pool of `threads` threads (0 or absent = every core).
/// The most threads `--threads` starts: far above any core count, low enough
/// that a typo cannot exhaust the machine.
pub(crate) const MAX_THREADS: usize = 1024;

/// `--threads N`: 0 (every core) to [`MAX_THREADS`], checked while the
/// arguments are parsed, before anything is read or changed.
pub(crate) fn threads_arg(s: &str) -> Result<usize, String> {
    let n: usize = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of threads"))?;
    if n > MAX_THREADS {
        return Err(format!("{n} threads: at most {MAX_THREADS}"));
    }
    Ok(n)
}

pub(crate) fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, CliError> {
    let n = match threads {
        Some(n) if n > 0 => n.min(MAX_THREADS),
        _ => std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS)),
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start {n} threads: {e}")))
}

/// Refuses two of `paths` (each with the role it plays in the command) that
/// name the same file or device: a header written over its image, a
/// plaintext over its only header, a key file over anything. In-place
/// commands list their image once.
pub(crate) fn distinct(paths: &[(&str, &Path)]) -> Result<(), CliError> {
    for (i, (role_a, a)) in paths.iter().enumerate() {
        for (role_b, b) in &paths[i + 1..] {
            let same = match std::fs::metadata(a) {
                Ok(m) => crate::output::same_file(&m, b),
                // Neither exists yet: the same name is the same file.
                Err(_) => !b.exists() && canonical_new(a) == canonical_new(b),
            };
            if same {
                return Err(CliError::Usage(format!(
                    "{} ({role_a}) and {} ({role_b}) are the same file or device: \
                     nothing was changed",
                    a.display(),
                    b.display()
                )));
            }
        }
    }
    Ok(())
}

/// The effective user id of this process (0: root).
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// `p` as one word a POSIX shell reads back as `p` (quoted where needed),
/// for commands printed to be run as they are.
pub(crate) fn shell_word(p: &Path) -> String {
    let s = p.to_string_lossy();
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A path that need not exist, with its directory resolved.
fn canonical_new(p: &Path) -> Option<PathBuf> {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(dir.canonicalize().ok()?.join(p.file_name()?))
}

/// Open `path` for reading, with its length.
pub(crate) fn open_input(path: &Path) -> Result<(File, u64), CliError> {
    let f = open_read(path)?;
    let len = f
        .metadata()
        .map_err(|e| CliError::io(path, "read its size", e))?
        .len();
    Ok((f, len))
}

/// What an input without a size (a character device such as `/dev/zero`,
/// a FIFO or pipe, a socket) is: the file type in words, or `None` for a
/// regular file or block device (or anything else, left to fail on read).
pub(crate) fn unsized_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_char_device() {
        Some("a character device")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// The size of an open input, decided from its type before it is read: a
/// regular file's size, a block device's by seeking to its end (its
/// metadata says 0; the position is put back at the start), and `None` for
/// what has no size (see [`unsized_kind`]).
fn sized_len(path: &Path, f: &File) -> Result<Option<u64>, CliError> {
    let meta = f
        .metadata()
        .map_err(|e| CliError::io(path, "read its size", e))?;
    if unsized_kind(&meta).is_some() {
        return Ok(None);
    }
    if !std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type()) {
        return Ok(Some(meta.len()));
    }
    let mut f = f;
    let end = f
        .seek(SeekFrom::End(0))
        .and_then(|end| f.seek(SeekFrom::Start(0)).map(|_| end))
        .map_err(|e| CliError::io(path, "find the size of the device", e))?;
    Ok(Some(end))
}

/// The size of the file or block device at `path` (a block device's by
/// seeking to its end, where its metadata says 0); an input without a size
/// is an error naming it.
pub(crate) fn input_size(path: &Path) -> Result<u64, CliError> {
    refuse_unsized(path)?;
    let f = open_read(path)?;
    sized_len(path, &f)?.ok_or_else(|| not_sized(path, &f))
}

/// Refuses, before it is opened (opening a FIFO waits for a writer), an
/// input that has no size to read up to.
fn refuse_unsized(path: &Path) -> Result<(), CliError> {
    match std::fs::metadata(path) {
        Ok(m) => match unsized_kind(&m) {
            Some(kind) => Err(CliError::lib(path, VerityError::NotSized { kind })),
            None => Ok(()),
        },
        // Left to the open, which names the error.
        Err(_) => Ok(()),
    }
}

/// Opens the input `path` for reading; a directory is refused (reading it
/// fails, and some file systems give it a size of 2^63 - 1 bytes).
pub(crate) fn open_read(path: &Path) -> Result<File, CliError> {
    let f = File::open(path).map_err(|e| CliError::io(path, "open for reading", e))?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(CliError::lib(path, VerityError::Directory));
    }
    Ok(f)
}

fn not_sized(path: &Path, f: &File) -> CliError {
    let kind = f
        .metadata()
        .ok()
        .and_then(|m| unsized_kind(&m))
        .unwrap_or("a file without a size");
    CliError::lib(path, VerityError::NotSized { kind })
}

/// A library error about the input `path` as a CLI error (exit 2): an input
/// that ended before the size it had when it was opened names the offset
/// where it ended, as `fsverity digest` reports an unexpected end of file.
pub(crate) fn source_error(path: &Path, e: VerityError) -> CliError {
    match e {
        VerityError::UnexpectedEof { expected, got } => CliError::Input {
            path: path.to_owned(),
            offset: got,
            rule: format!(
                "unexpected end of file: it was {expected} bytes long when it was opened \
                 (was it truncated while it was read?)"
            ),
        },
        e => CliError::lib(path, e),
    }
}

/// An input file: hashed through successive read-only mappings (where the
/// page cache holds it, without a copy), or read through a buffer.
pub(crate) enum Input {
    /// A regular file whose first window mapped fine.
    Mapped(MappedWindows),
    /// The file, to be read with read(2).
    File(File),
}

/// Bytes mapped at a time. Each window is unmapped once hashed, so the
/// process never holds more than this much of the file mapped; a multiple
/// of every page and block size.
pub(crate) const WINDOW: u64 = 64 << 20;

/// The windows of a mapped file, in order: an iterator of mappings for
/// `measure_chunks` / `format_chunks`.
pub(crate) struct MappedWindows {
    file: File,
    len: u64,
    next: u64,
    first: Option<memmap2::Mmap>,
}

/// Maps `len` bytes of `file` from `offset`, read-only.
pub(crate) fn map_window(file: &File, offset: u64, len: u64) -> io::Result<memmap2::Mmap> {
    let len = usize::try_from(len).map_err(io::Error::other)?;
    // SAFETY: the mapping is read-only and private to this process, and
    // only read as bytes to hash. What mmap cannot rule out is another
    // process changing the file meanwhile: a write changes the bytes hashed
    // (as it would under read(2)), and a truncation makes the kernel end
    // this process with SIGBUS. The `--no-mmap` option and the help text
    // say so.
    let map = unsafe {
        memmap2::MmapOptions::new()
            .offset(offset)
            .len(len)
            .map(file)?
    };
    // Purely advisory: readahead for a sequential scan.
    let _ = map.advise(memmap2::Advice::Sequential);
    Ok(map)
}

/// As [`map_window`], with the pages mapped in one go (`MAP_POPULATE`)
/// rather than one fault at a time: for a second pass over a file the
/// first pass left in the page cache.
pub(crate) fn map_window_populated(
    file: &File,
    offset: u64,
    len: u64,
) -> io::Result<memmap2::Mmap> {
    let len = usize::try_from(len).map_err(io::Error::other)?;
    // SAFETY: as in `map_window`: read-only, private, read as bytes only;
    // a concurrent truncation ends the process with SIGBUS (documented).
    unsafe {
        memmap2::MmapOptions::new()
            .offset(offset)
            .len(len)
            .populate()
            .map(file)
    }
}

impl Iterator for MappedWindows {
    type Item = io::Result<memmap2::Mmap>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(first) = self.first.take() {
            return Some(Ok(first));
        }
        if self.next >= self.len {
            return None;
        }
        let n = WINDOW.min(self.len - self.next);
        let item = map_window(&self.file, self.next, n);
        self.next += n;
        Some(item)
    }
}

/// Open `path` for hashing, with its length: mapped window by window if it
/// is a non-empty regular file and `mmap` is set (falling back to reading
/// if the first mapping fails, for example on a file system without mmap
/// support), read otherwise. The length is decided from the file type
/// before anything is read, as `veritysetup` does: a regular file's size,
/// a block device's (by seeking to its end); a character device (such as
/// `/dev/zero`), FIFO or socket has none and is refused (exit 2) before it
/// is opened.
pub(crate) fn open_data(path: &Path, mmap: bool) -> Result<(Input, u64), CliError> {
    refuse_unsized(path)?;
    let f = open_read(path)?;
    let len = sized_len(path, &f)?.ok_or_else(|| not_sized(path, &f))?;
    open_sized(f, len, mmap)
}

/// `f`, of `len` bytes, mapped or read (see [`open_data`]).
fn open_sized(f: File, len: u64, mmap: bool) -> Result<(Input, u64), CliError> {
    let regular = f.metadata().is_ok_and(|m| m.is_file());
    if mmap && regular && len > 0 {
        let n = WINDOW.min(len);
        if let Ok(first) = map_window(&f, 0, n) {
            let windows = MappedWindows {
                file: f,
                len,
                next: n,
                first: Some(first),
            };
            return Ok((Input::Mapped(windows), len));
        }
    }
    Ok((Input::File(f), len))
}

/// What [`open_source`] does with an input that has no size (a character
/// device, a FIFO or pipe, a socket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unsized {
    /// Refuse it (exit 2), as `veritysetup format` does: hashing has no
    /// end to stop at.
    Refuse,
    /// Read it as far as the work needs (dm-verity verification, bounded
    /// by the tree's block count; a character device that seeks, such as
    /// `/dev/null`, counts as empty).
    Bounded,
}

/// `path` as a [`Source`] for the library, with its length and a progress
/// bar for `what` when it is read (hidden when it is mapped; finish it when
/// done): the windows of a mapped regular file, with their total length,
/// or the file or device read through the library's read ring. The
/// source holds exactly the length found when it was opened: an input
/// that ends earlier is an error ([`source_error`]), never a digest of the
/// shorter data. An input without a size is refused or read as `no_size`
/// says (its length is then 0).
pub(crate) fn open_source(
    path: &Path,
    mmap: bool,
    what: &str,
    no_size: Unsized,
) -> Result<(Source<'static>, u64, ProgressBar), CliError> {
    if no_size == Unsized::Refuse {
        refuse_unsized(path)?;
    }
    let f = open_read(path)?;
    let (input, len) = match sized_len(path, &f)? {
        Some(len) => open_sized(f, len, mmap)?,
        None if no_size == Unsized::Bounded => {
            return Ok((Source::seekable(f), 0, ProgressBar::hidden()));
        }
        None => return Err(not_sized(path, &f)),
    };
    Ok(match input {
        Input::Mapped(windows) => (
            Source::chunks(windows).with_len(len),
            len,
            ProgressBar::hidden(),
        ),
        Input::File(file) => {
            let pb = progress(len, what);
            (Source::seekable(pb.wrap_read(file)).with_len(len), len, pb)
        }
    })
}

/// Read until `buf` is full or the input ends; the number of bytes read.
pub(crate) fn read_full<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A size in bytes: digits, optionally followed by K, M or G (powers of
/// 1024, either case, or KiB, MiB, GiB).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a size (bytes, or with K, M or G)"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use K, M or G)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

#[cfg(test)]
mod size_tests {
    use super::parse_size;

    #[test]
    fn sizes_with_and_without_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("32M"), Ok(32 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("8KiB"), Ok(8 << 10));
        assert!(parse_size("").is_err());
        assert!(parse_size("12T").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
        assert!(parse_size("17179869184G").is_err());
    }
}
