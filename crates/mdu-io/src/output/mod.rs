//! The one output layer: every file or device a command of the `mdu` tool
//! writes is opened here, and nowhere else.
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
//!   same directory removes it (`atomic::remove_stale`). An existing file
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
//! entry by entry (`mdu fscrypt extract`) from [`Dir`]. In the tool, only
//! the lock files of `mdu_inplace::lock` are opened elsewhere.
//!
//! The parts: `target` (what a path names, and overlaps), `atomic`
//! (replaced regular files, their temporary names and signal handlers),
//! `dir` (trees), `in_place` (the rest).

use std::ffi::{CString, OsString};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::error::{Error, Stream};

mod atomic;
mod dir;
mod in_place;
mod target;

use atomic::Atomic;
pub use atomic::{link_proc, open_unnamed};
pub use dir::{Dir, Meta, Special, Time};
pub use in_place::*;
use target::overlap;
pub use target::{Descriptor, Target};

/// An output about to be opened: the path and what to check first.
///
/// ```
/// use std::io::Write;
/// use mdu_io::output::Output;
///
/// let dir = tempfile::tempdir()?;
/// let (input, path) = (dir.path().join("in"), dir.path().join("out"));
/// std::fs::write(&input, [1u8; 4096])?;
/// let meta = std::fs::metadata(&input)?;
/// let mut out = Output::to(&path).not_same_as(&input, meta).len(4096).private().open()?;
/// out.file().write_all(&[2u8; 4096])?;
/// out.commit()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct OutputSpec<'a> {
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
///
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("out");
/// let out = mdu_io::output::Output::to(&path).open()?;
/// drop(out); // never committed: nothing is left
/// assert!(!path.exists());
/// assert_eq!(std::fs::read_dir(dir.path())?.count(), 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Output {
    /// The path as the user gave it (for messages).
    path: PathBuf,
    kind: Kind,
}

#[derive(Debug)]
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
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let out = mdu_io::output::Output::to(&dir.path().join("new")).open()?;
    /// out.commit()?;
    /// assert!(dir.path().join("new").exists());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to(path: &Path) -> OutputSpec<'_> {
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
    ///
    /// ```
    /// use std::io::Write;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("out");
    /// let mut out = mdu_io::output::Output::to(&path).open()?;
    /// out.file().write_all(b"data")?;
    /// out.commit()?;
    /// assert_eq!(std::fs::read(&path)?, b"data");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn file(&mut self) -> &mut File {
        match &mut self.kind {
            Kind::Atomic(a) => &mut a.file,
            Kind::Block(f) | Kind::Stream(f) => f,
        }
    }

    /// Whether writes may be positioned (a regular file or a block
    /// device), rather than a stream written front to back.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// assert!(mdu_io::output::Output::to(&dir.path().join("f")).open()?.seekable());
    /// assert!(!mdu_io::output::Output::to("/dev/null".as_ref()).open()?.seekable());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn seekable(&self) -> bool {
        !matches!(self.kind, Kind::Stream(_))
    }

    /// The path the user gave.
    ///
    /// ```
    /// let out = mdu_io::output::Output::to("/dev/null".as_ref()).open()?;
    /// assert_eq!(out.path(), std::path::Path::new("/dev/null"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes the output durable: an atomic one is synced, named, renamed
    /// over its target and its directory synced; a block device is synced;
    /// a stream has nothing to sync.
    ///
    /// ```
    /// use std::io::Write;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("out");
    /// std::fs::write(&path, b"old")?;
    /// let mut out = mdu_io::output::Output::to(&path).open()?;
    /// out.file().write_all(b"new")?;
    /// assert_eq!(std::fs::read(&path)?, b"old");
    /// out.commit()?;
    /// assert_eq!(std::fs::read(&path)?, b"new");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn commit(self) -> Result<(), Error> {
        match self.kind {
            Kind::Atomic(a) => a.commit(&self.path),
            Kind::Block(f) => f
                .sync_all()
                .map_err(|e| Error::io(&self.path, "sync the device", e)),
            Kind::Stream(_) => Ok(()),
        }
    }
}

impl<'a> OutputSpec<'a> {
    /// Refuses the output if it is `input` (opened with metadata `meta`),
    /// or overlaps it on one device.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("image");
    /// std::fs::write(&path, [0u8; 512])?;
    /// let meta = std::fs::metadata(&path)?;
    /// let e = mdu_io::output::Output::to(&path).not_same_as(&path, meta).open().unwrap_err();
    /// assert!(matches!(e, mdu_io::Error::Overlap { why: mdu_io::Overlap::SameFile, .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn not_same_as(mut self, input: &'a Path, meta: Metadata) -> Self {
        self.inputs.push((input, meta));
        self
    }

    /// The output will hold `len` bytes: a device smaller than that is
    /// refused before anything is written.
    ///
    /// ```
    /// // A regular file grows as it is written; only a device is checked.
    /// let dir = tempfile::tempdir()?;
    /// let out = mdu_io::output::Output::to(&dir.path().join("f")).len(1 << 20).open()?;
    /// # drop(out);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(mut self, len: u64) -> Self {
        self.len = Some(len);
        self
    }

    /// The bytes `offset..offset + len` of a file output will be written:
    /// their space is reserved up front where the file system can, so that
    /// a full disk is found before the work (what lies before `offset` and
    /// is not written stays a hole).
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f");
    /// let out = mdu_io::output::Output::to(&path).reserve(0, 8192).open()?;
    /// out.commit()?;
    /// // Where the file system reserves space, the file is that long already.
    /// assert!(std::fs::metadata(&path)?.len() <= 8192);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reserve(mut self, offset: u64, len: u64) -> Self {
        self.reserve = Some((offset, len));
        self
    }

    /// An atomic output starts as a copy of the existing file (an output
    /// updated in part, such as a hash image with data before its hash
    /// area).
    ///
    /// ```
    /// use std::io::{Seek, SeekFrom, Write};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f");
    /// std::fs::write(&path, b"head-tail")?;
    /// let mut out = mdu_io::output::Output::to(&path).keep_existing().open()?;
    /// out.file().seek(SeekFrom::Start(5))?;
    /// out.file().write_all(b"TAIL")?;
    /// out.commit()?;
    /// assert_eq!(std::fs::read(&path)?, b"head-TAIL");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn keep_existing(mut self) -> Self {
        self.keep_existing = true;
        self
    }

    /// Plaintext: a new file is created readable by its owner only (0600);
    /// an existing file keeps its mode.
    ///
    /// ```
    /// use std::os::unix::fs::PermissionsExt;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("plain");
    /// mdu_io::output::Output::to(&path).private().open()?.commit()?;
    /// assert_eq!(std::fs::metadata(&path)?.permissions().mode() & 0o777, 0o600);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn private(mut self) -> Self {
        self.private = true;
        self
    }

    /// The output is read back while it is written (opened read-write).
    ///
    /// ```
    /// use std::io::{Read, Seek, SeekFrom, Write};
    /// let dir = tempfile::tempdir()?;
    /// let mut out = mdu_io::output::Output::to(&dir.path().join("f")).read_back().open()?;
    /// out.file().write_all(b"abc")?;
    /// out.file().seek(SeekFrom::Start(0))?;
    /// let mut back = String::new();
    /// out.file().read_to_string(&mut back)?;
    /// assert_eq!(back, "abc");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_back(mut self) -> Self {
        self.read = true;
        self
    }

    /// Refuse character devices and FIFOs: the command writes at positions.
    ///
    /// ```
    /// let e = mdu_io::output::Output::to("/dev/null".as_ref()).seekable_only().open().unwrap_err();
    /// assert!(matches!(e, mdu_io::Error::NotSeekable { stream: mdu_io::Stream::CharDevice, .. }));
    /// ```
    pub fn seekable_only(mut self) -> Self {
        self.seekable = true;
        self
    }

    /// Opens the block device `p` (the resolved output) with `O_EXCL`,
    /// read back if asked, and refuses it if it is smaller than the
    /// output's length.
    fn open_block(&self, p: &Path) -> Result<File, Error> {
        let path = self.path;
        let mut f = OpenOptions::new()
            .read(self.read)
            .write(true)
            .custom_flags(libc::O_EXCL)
            .open(p)
            .map_err(|e| {
                let busy = e.raw_os_error() == Some(libc::EBUSY);
                Error::io(
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
            .map_err(|e| Error::io(path, "read the device size", e))?;
        if let Some(len) = self.len.filter(|&len| len > size) {
            return Err(Error::DeviceTooSmall {
                path: path.to_owned(),
                size,
                len,
            });
        }
        Ok(f)
    }

    /// Checks the output against the inputs and opens it.
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// let e = mdu_io::output::Output::to(dir.path()).open().unwrap_err();
    /// assert!(matches!(e, mdu_io::Error::NotAnOutput { kind: "a directory", .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(self) -> Result<Output, Error> {
        let path = self.path;
        let target = Target::resolve(path)?;
        if let Some(out) = target.meta() {
            for (input, in_meta) in &self.inputs {
                if let Some(why) = overlap(in_meta, input, out, &target) {
                    return Err(Error::Overlap {
                        input: input.to_path_buf(),
                        output: path.to_owned(),
                        why,
                    });
                }
            }
        }
        let kind = match target {
            Target::New(p) => Kind::Atomic(Atomic::create(&p, None, &self)?),
            Target::File(p, meta) => {
                let c = CString::new(p.as_os_str().as_bytes()).map_err(|_| Error::NulInPath {
                    path: path.to_owned(),
                })?;
                // SAFETY: `c` is a valid NUL-terminated path.
                if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
                    return Err(Error::NotWritable {
                        path: path.to_owned(),
                        mode: meta.mode() & 0o7777,
                        source: io::Error::last_os_error(),
                    });
                }
                Kind::Atomic(Atomic::create(&p, Some(&meta), &self)?)
            }
            Target::Block(p, _) => Kind::Block(self.open_block(&p)?),
            Target::Stream(_, meta, Some(d)) => {
                if self.seekable {
                    return Err(Error::NotSeekable {
                        path: path.to_owned(),
                        stream: Stream::Descriptor {
                            fd: d.fd,
                            kind: kind_name(&meta),
                        },
                    });
                }
                Kind::Stream(d.file)
            }
            Target::Stream(p, meta, None) => {
                if self.seekable {
                    let stream = if meta.file_type().is_fifo() {
                        Stream::Fifo
                    } else {
                        Stream::CharDevice
                    };
                    return Err(Error::NotSeekable {
                        path: path.to_owned(),
                        stream,
                    });
                }
                let f = OpenOptions::new()
                    .write(true)
                    .open(&p)
                    .map_err(|e| Error::io(path, "open for writing", e))?;
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
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let f = std::fs::File::create(dir.path().join("f"))?;
/// mdu_io::output::sync(&f)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sync(f: &File) -> io::Result<()> {
    f.sync_all().or_else(|e| match e.kind() {
        io::ErrorKind::Unsupported | io::ErrorKind::InvalidInput => Ok(()),
        _ => Err(e),
    })
}

/// Reserves the bytes `offset..offset + len` of `f` (fallocate, which also
/// extends the file) so that a full disk shows now; a file system without
/// fallocate is left to show it while writing.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let f = std::fs::File::create(dir.path().join("f"))?;
/// mdu_io::output::reserve(&f, 0, 4096)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn reserve(f: &File, offset: u64, len: u64) -> io::Result<()> {
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
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let (a, b) = (dir.path().join("a"), dir.path().join("b"));
/// std::fs::write(&a, b"x")?;
/// std::fs::hard_link(&a, &b)?;
/// assert!(mdu_io::output::same_file(&std::fs::metadata(&a)?, &b));
/// assert!(!mdu_io::output::same_file(&std::fs::metadata(&a)?, dir.path()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn same_file(input: &Metadata, output: &Path) -> bool {
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
