//! The one output layer: every file or device a command writes is opened
//! here, and nowhere else.
//!
//! What an output path names decides what happens to it:
//!
//! * **A regular file, or a name that does not exist yet**: written
//!   atomically. The new contents go to a temporary file in the target's
//!   directory, created without a name where the file system allows it
//!   (`O_TMPFILE`), so that no signal, not even SIGKILL, can leave it
//!   behind. On success the file is synced and given its name: a new
//!   output its final name at once (`linkat`, which never replaces a file);
//!   an existing one a temporary name (`.mdu-` and 12 letters), renamed
//!   over the target in the next system call. The directory is synced
//!   last. Where `O_TMPFILE` is missing the temporary file has such a name
//!   from the start. A handler of SIGINT, SIGTERM, SIGHUP and SIGQUIT
//!   removes a named temporary file; SIGKILL cannot be handled, and leaves
//!   it behind if it lands between the two calls (or, without `O_TMPFILE`,
//!   at any time). Every temporary file is locked (`flock`) from before it
//!   has a name until the process ends, so a file of that name that nobody
//!   holds locked was left by a killed run: the next output written in the
//!   same directory removes it (see [`remove_stale`]). An existing file
//!   keeps its mode (and, for root, its owner); one the user may not write
//!   is refused, as `cp` and `veritysetup` refuse it. The rename replaces
//!   the directory entry, so other hard links of the old file keep the old
//!   contents.
//! * **A symbolic link**: followed; what it points to is the output. A link
//!   to nothing is refused (as `cp` refuses "writing through a dangling
//!   symlink"), never replaced by a file.
//! * **A block device**: written in place, opened with `O_EXCL` (the kernel
//!   refuses a mounted device then), its size checked against the output's
//!   before anything is written, synced at the end. Not atomic.
//! * **A character device or FIFO** (`/dev/null`, a pipe read by another
//!   process): written in place as a stream. Not atomic.
//! * **A descriptor of this process** (`/dev/stdout`, `/dev/stderr`,
//!   `/dev/fd/N`, `/proc/self/fd/N`): written as a stream through that
//!   descriptor, whatever it is open on (a pipe, a socket, a terminal, a
//!   file the shell redirected it to), from its current position and with
//!   its flags (`>>` appends). It is never reopened by name: a pipe has
//!   none, and a file renamed over would leave the descriptor, and what else
//!   the process prints to it, on the old file. Not atomic.
//! * Anything else (a directory, a socket in the file system) is refused.
//!
//! Before anything is opened for writing, the output is compared with the
//! command's inputs: the same file under another name (a hard link, a
//! symlink), the same device under another node, a loop device backed by
//! the input file (or the reverse), an input file on the file system of
//! an output device, and two partitions or a partition and its disk that
//! overlap are refused. Commands that rewrite their input on purpose
//! (`mdu crypt --in-place`, `mdu verity repair`, `mdu luks format` of an
//! existing image, `mdu luks reencrypt`) skip that comparison and open
//! what they rewrite with [`in_place`]; a file that must be new (a
//! journal, a detached header) comes from [`create_new`], a tree written
//! entry by entry (`mdu fscrypt extract`) from [`Dir`]. Only the lock
//! files of `mdu_inplace::lock` are opened elsewhere.
//!
//! The parts: `target` (what a path names, and overlaps), `atomic`
//! (replaced regular files, their temporary names and signal handlers),
//! `in_place` (the rest).

use std::ffi::{CString, OsString};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::error::CliError;
use mdu_inplace::lock::{Flock, try_flock};

mod atomic;
mod in_place;
mod target;

use atomic::Atomic;
pub(crate) use in_place::*;
pub(crate) use target::Target;
use target::overlap;

/// What every command that writes an output does with it, for `--help`.
pub(crate) const HELP: &str = "\
Outputs:
  A regular file (new or existing) is replaced atomically: the new contents
  are written to a temporary file in the same directory that has no name
  until it is complete, synced, then given the output's name (renamed over
  an existing output) and the directory synced. A failed or interrupted run
  (Ctrl-C, SIGTERM, SIGKILL) leaves the output as it was and nothing next
  to it; only a SIGKILL in the instant between naming the temporary file
  and renaming it over an existing output (at any time, on a file system
  without unnamed files) leaves a .mdu-XXXXXXXXXXXX file, which the next
  output written in that directory removes. An existing file keeps
  its mode (and owner, for root); one you may not write is refused. Other
  hard links of a replaced file keep the old contents.
  A symbolic link is followed and its target written; a link to nothing is
  refused.
  A block device is written in place, after a check that it is large enough
  and not mounted, and synced at the end: not atomic.
  A character device or FIFO (/dev/null, a pipe) is written in place as a
  stream: not atomic.
  /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are written as a
  stream through that descriptor, whatever it is open on (a pipe, a file the
  shell redirected it to, from where it stands: `>>` appends): not atomic.
  An output that is an input of the command under another name (a hard or
  symbolic link, another node of the same device, a loop device over it, a
  partition overlapping it) is refused before anything is written.";

/// An output about to be opened: the path and what to check first.
///
/// ```ignore
/// let mut out = Output::to(&path).not_same_as(&input).len(n).private().open()?;
/// out.file().write_all(..)?;
/// out.commit()?;
/// ```
pub(crate) struct OutputSpec<'a> {
    path: &'a Path,
    inputs: Vec<(&'a Path, Metadata)>,
    len: Option<u64>,
    reserve: Option<(u64, u64)>,
    keep_existing: bool,
    private: bool,
    read: bool,
    seekable: bool,
}

/// An opened output; see the module documentation for what each kind does.
/// Dropped without [`commit`](Output::commit), an atomic output leaves the
/// target as it was and nothing behind.
pub(crate) struct Output {
    /// The path as the user gave it (for messages).
    path: PathBuf,
    kind: Kind,
}

enum Kind {
    Atomic(Atomic),
    /// A block device (synced at the end).
    Block(File),
    /// A character device or FIFO.
    Stream(File),
}

/// What a file of metadata `meta` is, in words.
fn kind_name(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_fifo() {
        "a pipe or FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "a file of another kind"
    }
}

impl Output {
    /// An output at `path`, to be checked and opened with
    /// [`OutputSpec::open`].
    pub(crate) fn to(path: &Path) -> OutputSpec<'_> {
        OutputSpec {
            path,
            inputs: Vec::new(),
            len: None,
            reserve: None,
            keep_existing: false,
            private: false,
            read: false,
            seekable: false,
        }
    }

    /// The file to write (the temporary file of an atomic output).
    pub(crate) fn file(&mut self) -> &mut File {
        match &mut self.kind {
            Kind::Atomic(a) => &mut a.file,
            Kind::Block(f) | Kind::Stream(f) => f,
        }
    }

    /// Whether writes may be positioned (a regular file or a block
    /// device), rather than a stream written front to back.
    pub(crate) fn seekable(&self) -> bool {
        !matches!(self.kind, Kind::Stream(_))
    }

    /// The path the user gave.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Makes the output durable: an atomic one is synced, named, renamed
    /// over its target and its directory synced; a block device is synced;
    /// a stream has nothing to sync.
    pub(crate) fn commit(self) -> Result<(), CliError> {
        match self.kind {
            Kind::Atomic(a) => a.commit(&self.path),
            Kind::Block(f) => f
                .sync_all()
                .map_err(|e| CliError::io(&self.path, "sync the device", e)),
            Kind::Stream(_) => Ok(()),
        }
    }
}

impl<'a> OutputSpec<'a> {
    /// Refuses the output if it is `input` (opened with metadata `meta`),
    /// or overlaps it on one device.
    pub(crate) fn not_same_as(mut self, input: &'a Path, meta: Metadata) -> Self {
        self.inputs.push((input, meta));
        self
    }

    /// The output will hold `len` bytes: a device smaller than that is
    /// refused before anything is written.
    pub(crate) fn len(mut self, len: u64) -> Self {
        self.len = Some(len);
        self
    }

    /// The bytes `offset..offset + len` of a file output will be written:
    /// their space is reserved up front where the file system can, so that
    /// a full disk is found before the work (what lies before `offset` and
    /// is not written stays a hole).
    pub(crate) fn reserve(mut self, offset: u64, len: u64) -> Self {
        self.reserve = Some((offset, len));
        self
    }

    /// An atomic output starts as a copy of the existing file (an output
    /// updated in part, such as a hash image with data before its hash
    /// area).
    pub(crate) fn keep_existing(mut self) -> Self {
        self.keep_existing = true;
        self
    }

    /// Plaintext: a new file is created readable by its owner only (0600);
    /// an existing file keeps its mode.
    pub(crate) fn private(mut self) -> Self {
        self.private = true;
        self
    }

    /// The output is read back while it is written (opened read-write).
    pub(crate) fn read_back(mut self) -> Self {
        self.read = true;
        self
    }

    /// Refuse character devices and FIFOs: the command writes at positions.
    pub(crate) fn seekable_only(mut self) -> Self {
        self.seekable = true;
        self
    }

    /// Opens the block device `p` (the resolved output) with `O_EXCL`,
    /// read back if asked, and refuses it if it is smaller than the
    /// output's length.
    fn open_block(&self, p: &Path) -> Result<File, CliError> {
        let path = self.path;
        let mut f = OpenOptions::new()
            .read(self.read)
            .write(true)
            .custom_flags(libc::O_EXCL)
            .open(p)
            .map_err(|e| {
                let busy = e.raw_os_error() == Some(libc::EBUSY);
                CliError::io(
                    path,
                    if busy {
                        "open the device for writing: it is in use (mounted or held \
                         open exclusively)"
                    } else {
                        "open the device for writing"
                    },
                    e,
                )
            })?;
        let size = f
            .seek(SeekFrom::End(0))
            .and_then(|n| f.seek(SeekFrom::Start(0)).map(|_| n))
            .map_err(|e| CliError::io(path, "read the device size", e))?;
        if let Some(len) = self.len.filter(|&len| len > size) {
            return Err(CliError::Usage(format!(
                "{}: the device holds {size} bytes but the output is {len} bytes: \
                 nothing was written",
                path.display()
            )));
        }
        Ok(f)
    }

    /// Checks the output against the inputs and opens it.
    pub(crate) fn open(self) -> Result<Output, CliError> {
        let path = self.path;
        let target = Target::resolve(path)?;
        if let Some(out) = target.meta() {
            for (input, in_meta) in &self.inputs {
                if let Some(why) = overlap(in_meta, input, out, &target) {
                    return Err(CliError::Usage(format!(
                        "{} and {}: {why}; the output would overwrite input not yet read \
                         (give another output)",
                        input.display(),
                        path.display()
                    )));
                }
            }
        }
        let kind = match target {
            Target::New(p) => Kind::Atomic(Atomic::create(&p, None, &self)?),
            Target::File(p, meta) => {
                let c = CString::new(p.as_os_str().as_bytes())
                    .map_err(|_| CliError::Usage(format!("{}: NUL in path", path.display())))?;
                // SAFETY: `c` is a valid NUL-terminated path.
                if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
                    let e = io::Error::last_os_error();
                    return Err(CliError::Usage(format!(
                        "{}: cannot replace it: {e} (mode {:04o}); make it writable or \
                         remove it first",
                        path.display(),
                        meta.mode() & 0o7777
                    )));
                }
                Kind::Atomic(Atomic::create(&p, Some(&meta), &self)?)
            }
            Target::Block(p, _) => Kind::Block(self.open_block(&p)?),
            Target::Stream(_, meta, Some(d)) => {
                if self.seekable {
                    return Err(CliError::Usage(format!(
                        "{}: is this process's file descriptor {} ({}), written as a \
                         stream, but this output is written at positions: give the name \
                         of a regular file or a block device",
                        path.display(),
                        d.fd,
                        kind_name(&meta)
                    )));
                }
                Kind::Stream(d.file)
            }
            Target::Stream(p, meta, None) => {
                if self.seekable {
                    let what = if meta.file_type().is_fifo() {
                        "a FIFO"
                    } else {
                        "a character device"
                    };
                    return Err(CliError::Usage(format!(
                        "{}: is {what}, but this output is written at positions: give a \
                         regular file or a block device",
                        path.display()
                    )));
                }
                let f = OpenOptions::new()
                    .write(true)
                    .open(&p)
                    .map_err(|e| CliError::io(path, "open for writing", e))?;
                Kind::Stream(f)
            }
        };
        Ok(Output {
            path: path.to_owned(),
            kind,
        })
    }
}

/// The directory holding `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// fsync, where the file system supports it: some (tmpfs on old kernels,
/// some FUSE file systems) refuse it with ENOTSUP or EINVAL, and have no
/// stable storage to flush to; the rename is still atomic there.
pub(crate) fn sync(f: &File) -> io::Result<()> {
    f.sync_all().or_else(|e| match e.kind() {
        io::ErrorKind::Unsupported | io::ErrorKind::InvalidInput => Ok(()),
        _ => Err(e),
    })
}

/// Reserves the bytes `offset..offset + len` of `f` (fallocate, which also
/// extends the file) so that a full disk shows now; a file system without
/// fallocate is left to show it while writing.
pub(crate) fn reserve(f: &File, offset: u64, len: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(io::Error::from_raw_os_error(libc::EFBIG));
    };
    if len == 0 {
        return Ok(());
    }
    // SAFETY: a valid open descriptor; fallocate only changes the file.
    let r = unsafe { libc::fallocate(f.as_raw_fd(), 0, offset, len) };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL) => Ok(()),
        _ => Err(e),
    }
}

/// Whether `output` names the same file or device as the open input
/// `input` (for `--in-place`, which requires exactly that).
pub(crate) fn same_file(input: &Metadata, output: &Path) -> bool {
    let Ok(out) = std::fs::metadata(output) else {
        return false;
    };
    let device = |m: &Metadata| {
        let t = m.file_type();
        t.is_block_device() || t.is_char_device()
    };
    (input.dev() == out.dev() && input.ino() == out.ino())
        || (device(input) && device(&out) && input.rdev() == out.rdev())
}
