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
//! existing image) do not come here for it.

use std::ffi::{CString, OsString};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::error::CliError;

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

/// What an existing output path is, after following symbolic links.
pub(crate) enum Target {
    /// Nothing there yet: a new regular file at this path.
    New(PathBuf),
    /// An existing regular file (the resolved path) and its metadata.
    File(PathBuf, Metadata),
    /// A block device.
    Block(PathBuf, Metadata),
    /// A character device or a FIFO, or (with a [`Descriptor`]) whatever
    /// a descriptor of this process named by the path is open on.
    Stream(PathBuf, Metadata, Option<Descriptor>),
}

/// A descriptor of this process that an output path names (`/dev/stdout`,
/// `/dev/fd/N`, `/proc/self/fd/N`): its number, and a duplicate of it to
/// write through (sharing its position and flags).
pub(crate) struct Descriptor {
    fd: RawFd,
    file: File,
}

impl Target {
    /// Follows `path` to what a write would reach: refuses a dangling
    /// symbolic link, a directory and a socket. A path that names a
    /// descriptor of this process is that descriptor, whatever it is open
    /// on.
    pub(crate) fn resolve(path: &Path) -> Result<Target, CliError> {
        if let Some(fd) = own_descriptor(path) {
            return Descriptor::target(path, fd);
        }
        let link = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Target::New(path.to_owned()));
            }
            Err(e) => return Err(CliError::io(path, "examine the output", e)),
        };
        let (real, meta) = if link.file_type().is_symlink() {
            match std::fs::canonicalize(path) {
                Ok(real) => {
                    let meta = std::fs::metadata(&real)
                        .map_err(|e| CliError::io(path, "examine the output", e))?;
                    (real, meta)
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(CliError::Usage(format!(
                        "{}: is a symbolic link to nothing: not writing through a dangling \
                         symbolic link (create its target first, or remove the link)",
                        path.display()
                    )));
                }
                Err(e) => return Err(CliError::io(path, "follow the symbolic link", e)),
            }
        } else {
            (path.to_owned(), link)
        };
        let t = meta.file_type();
        if t.is_file() {
            Ok(Target::File(real, meta))
        } else if t.is_block_device() {
            Ok(Target::Block(real, meta))
        } else if t.is_char_device() || t.is_fifo() {
            Ok(Target::Stream(real, meta, None))
        } else {
            let what = if t.is_dir() {
                "a directory"
            } else {
                "a socket"
            };
            Err(CliError::Usage(format!(
                "{}: is {what}: an output must be a file, a block or character device, or a FIFO",
                path.display()
            )))
        }
    }

    /// The path a write reaches (the link's target for a symbolic link).
    fn path(&self) -> &Path {
        match self {
            Target::New(p) | Target::File(p, _) | Target::Block(p, _) | Target::Stream(p, _, _) => {
                p
            }
        }
    }

    fn meta(&self) -> Option<&Metadata> {
        match self {
            Target::New(_) => None,
            Target::File(_, m) | Target::Block(_, m) | Target::Stream(_, m, _) => Some(m),
        }
    }
}

/// The descriptor of this process that `path` names, if it names one:
/// `/proc/self/fd/N` (or `/proc/<this pid>/fd/N`, `/proc/thread-self/fd/N`)
/// reached directly or through symbolic links (`/dev/stdout`, `/dev/fd/N`).
/// Such a path is a link the kernel makes to whatever the descriptor is
/// open on, which may have no name (a pipe, a socket): it is told by where
/// it lies, not by what it points to, so the links are followed one at a
/// time.
fn own_descriptor(path: &Path) -> Option<RawFd> {
    let me = std::fs::canonicalize("/proc/self").ok()?;
    let mut p = path.to_path_buf();
    // The limit on links the kernel follows in one lookup.
    for _ in 0..40 {
        let name = p.file_name()?.to_str()?;
        let dir = std::fs::canonicalize(parent_dir(&p)).ok()?;
        let fd_dir = dir.file_name().is_some_and(|n| n == "fd");
        let ours = fd_dir
            && dir
                .parent()
                .is_some_and(|up| up == me || (up.parent().is_some_and(|t| t == me.join("task"))));
        if ours && !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
            return name.parse().ok();
        }
        if !std::fs::symlink_metadata(&p).ok()?.file_type().is_symlink() {
            return None;
        }
        let next = std::fs::read_link(&p).ok()?;
        p = parent_dir(&p).join(next);
    }
    None
}

impl Descriptor {
    /// The output `path`, which names this process's descriptor `fd`:
    /// refused if `fd` is not open, not open for writing, or open on a
    /// directory.
    fn target(path: &Path, fd: RawFd) -> Result<Target, CliError> {
        let refuse = |why: String| {
            CliError::Usage(format!(
                "{}: names this process's file descriptor {fd}, {why}: give another output",
                path.display()
            ))
        };
        // SAFETY: fcntl(F_DUPFD_CLOEXEC) takes any integer; on a number
        // that is not an open descriptor it fails with EBADF.
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if dup < 0 {
            let e = io::Error::last_os_error();
            return Err(refuse(format!("which is not open ({e})")));
        }
        // SAFETY: `dup` is a new open descriptor that nothing else owns.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(dup) });
        // SAFETY: F_GETFL on the open descriptor `dup` only reads its flags.
        let flags = unsafe { libc::fcntl(dup, libc::F_GETFL) };
        if flags < 0 || flags & libc::O_PATH != 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
            return Err(refuse("which is not open for writing".into()));
        }
        let meta = file
            .metadata()
            .map_err(|e| CliError::io(path, "examine the output", e))?;
        if meta.is_dir() {
            return Err(refuse("which is open on a directory".into()));
        }
        Ok(Target::Stream(
            path.to_owned(),
            meta,
            Some(Descriptor { fd, file }),
        ))
    }
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
            Target::Block(p, _) => {
                let mut f = OpenOptions::new()
                    .read(self.read)
                    .write(true)
                    .custom_flags(libc::O_EXCL)
                    .open(&p)
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
                Kind::Block(f)
            }
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

/// Whether writing `out` (what `target` resolved to) would overwrite the
/// input `input` (opened, with metadata `inp`), and why.
fn overlap(inp: &Metadata, input: &Path, out: &Metadata, target: &Target) -> Option<String> {
    if inp.dev() == out.dev() && inp.ino() == out.ino() {
        return Some("they are the same file".into());
    }
    let block = |m: &Metadata| m.file_type().is_block_device();
    let dev = |m: &Metadata| block(m) || m.file_type().is_char_device();
    if dev(inp) && dev(out) && block(inp) == block(out) && inp.rdev() == out.rdev() {
        return Some("they are the same device".into());
    }
    if block(out) && !dev(inp) && inp.dev() == out.rdev() {
        return Some("the input lives on the file system of the output device".into());
    }
    if block(inp) && !dev(out) && out.dev() == inp.rdev() {
        return Some("the output lives on the file system of the input device".into());
    }
    if block(inp) && block(out) {
        let (a, b) = (Part::of(inp.rdev())?, Part::of(out.rdev())?);
        if a.disk == b.disk && a.start < b.end && b.start < a.end {
            return Some("they overlap on one disk".into());
        }
    }
    // A loop device backed by the other one.
    let backs = |dev_meta: &Metadata, file: &Path| {
        let backing = Part::of(dev_meta.rdev()).and_then(|p| p.backing)?;
        let file = std::fs::canonicalize(file).ok()?;
        (backing == file).then_some(())
    };
    if block(out) && backs(out, input).is_some() {
        return Some("the output is a loop device backed by the input".into());
    }
    if block(inp) && backs(inp, target.path()).is_some() {
        return Some("the input is a loop device backed by the output".into());
    }
    None
}

/// Where a block device lies on its disk, from sysfs: the whole disk's
/// number, the byte range, and a loop device's backing file.
struct Part {
    disk: u64,
    start: u64,
    end: u64,
    backing: Option<PathBuf>,
}

impl Part {
    fn of(rdev: u64) -> Option<Part> {
        let (maj, min) = (libc::major(rdev), libc::minor(rdev));
        let dir = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()?;
        let read = |p: &Path| std::fs::read_to_string(p).ok();
        let num = |p: &Path| read(p).and_then(|s| s.trim().parse::<u64>().ok());
        let size = num(&dir.join("size"))? * 512;
        let (disk_dir, start) = match num(&dir.join("start")) {
            Some(start) if dir.join("partition").exists() => (dir.parent()?.to_owned(), start),
            _ => (dir.clone(), 0),
        };
        let disk = read(&disk_dir.join("dev"))?;
        let (dmaj, dmin) = disk.trim().split_once(':')?;
        let disk = libc::makedev(dmaj.parse().ok()?, dmin.parse().ok()?);
        let backing = read(&disk_dir.join("loop/backing_file"))
            .map(|s| PathBuf::from(s.trim_end_matches('\n')));
        Some(Part {
            disk,
            start: start * 512,
            end: start * 512 + size,
            backing,
        })
    }
}

/// A regular-file output being written: a temporary file in the target's
/// directory.
struct Atomic {
    file: File,
    /// The resolved target path.
    target: PathBuf,
    /// The temporary file's name while it has one (the fallback without
    /// `O_TMPFILE`), registered for removal on a signal.
    named: Option<Registered>,
}

impl Atomic {
    fn create(
        target: &Path,
        existing: Option<&Metadata>,
        spec: &OutputSpec<'_>,
    ) -> Result<Atomic, CliError> {
        let dir = parent_dir(target);
        let mode = if spec.private { 0o600 } else { 0o666 };
        let (file, named) = match open_unnamed(dir, mode) {
            Some(f) => (f, None),
            None => {
                let (f, reg) = open_named(dir, mode)
                    .map_err(|e| CliError::io(target, "create a temporary file next to it", e))?;
                (f, Some(reg))
            }
        };
        remove_stale(dir);
        let mut a = Atomic {
            file,
            target: target.to_owned(),
            named,
        };
        if let Some(meta) = existing {
            // The new file takes the old one's owner (when root can give
            // it; a change of owner clears set-id bits, so it comes first)
            // and permissions.
            if crate::process::euid() == 0 {
                let _ = std::os::unix::fs::fchown(&a.file, Some(meta.uid()), Some(meta.gid()));
            }
            let _ = a
                .file
                .set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777));
            if spec.keep_existing {
                let mut old =
                    File::open(target).map_err(|e| CliError::io(target, "open for reading", e))?;
                io::copy(&mut old, &mut a.file)
                    .map_err(|e| CliError::io(target, "copy its current contents", e))?;
                a.file
                    .seek(SeekFrom::Start(0))
                    .map_err(|e| CliError::io(target, "seek", e))?;
            }
        }
        if let Some((offset, len)) = spec.reserve {
            reserve(&a.file, offset, len)
                .map_err(|e| CliError::io(target, "reserve space for the output", e))?;
        }
        Ok(a)
    }

    fn commit(mut self, shown: &Path) -> Result<(), CliError> {
        sync(&self.file).map_err(|e| CliError::io(shown, "flush the output", e))?;
        let dir = parent_dir(&self.target).to_owned();
        let tmp = match self.named.take() {
            Some(reg) => reg,
            // A new output: named in one step, nothing to leave behind.
            None => match link_proc(&self.file, &self.target) {
                Ok(()) => return sync_dir(&dir),
                // An existing output (or one created meanwhile): a
                // temporary name, renamed over it right away.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    link_unnamed(&self.file, &dir)
                        .map_err(|e| CliError::io(shown, "give the new file a name", e))?
                }
                Err(e) => return Err(CliError::io(shown, "give the new file its name", e)),
            },
        };
        let renamed = std::fs::rename(&tmp.path, &self.target);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&tmp.path);
        }
        tmp.release();
        renamed.map_err(|e| CliError::io(shown, "rename the temporary file onto it", e))?;
        sync_dir(&dir)
    }
}

impl Drop for Atomic {
    fn drop(&mut self) {
        if let Some(reg) = self.named.take() {
            let _ = std::fs::remove_file(&reg.path);
            reg.release();
        }
    }
}

/// Syncs the directory `dir` after a name was given or replaced in it.
fn sync_dir(dir: &Path) -> Result<(), CliError> {
    File::open(dir)
        .and_then(|d| sync(&d))
        .map_err(|e| CliError::io(dir, "sync the directory after naming the output", e))
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

/// A temporary file without a name (`O_TMPFILE`) in `dir`, if the file
/// system and `/proc` (to name it later) allow it.
pub(crate) fn open_unnamed(dir: &Path, mode: u32) -> Option<File> {
    use std::os::fd::AsRawFd;
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .mode(mode)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
        .ok()?;
    // Naming it needs /proc/self/fd (or CAP_DAC_READ_SEARCH): check now,
    // not after the work.
    std::fs::symlink_metadata(format!("/proc/self/fd/{}", f.as_raw_fd())).ok()?;
    // Nobody else can reach it yet: the lock is this process's, and holds
    // from before the file has a name (a file system without locks leaves
    // it unlocked, and then no other run can take a lock there either).
    let _ = crate::lock::try_flock(&f, libc::LOCK_EX);
    Some(f)
}

/// Gives the unnamed temporary file `f` the name `path`; fails with
/// `AlreadyExists` if something has that name (`linkat` never replaces).
pub(crate) fn link_proc(f: &File, path: &Path) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let proc = CString::new(format!("/proc/self/fd/{}", f.as_raw_fd()))?;
    let name = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: both paths are valid NUL-terminated strings; linkat does not
    // retain them.
    let r = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            proc.as_ptr(),
            libc::AT_FDCWD,
            name.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Names the unnamed temporary file `f` in `dir` (registered for removal
/// on a signal until it is renamed).
fn link_unnamed(f: &File, dir: &Path) -> io::Result<Registered> {
    for _ in 0..16 {
        let reg = Registered::new(dir.join(temp_name()?))?;
        match link_proc(f, &reg.path) {
            Ok(()) => return Ok(reg),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => reg.release(),
            Err(e) => {
                reg.release();
                return Err(e);
            }
        }
    }
    Err(io::Error::from(io::ErrorKind::AlreadyExists))
}

/// A new named temporary file in `dir`, registered for removal on a
/// signal.
fn open_named(dir: &Path, mode: u32) -> io::Result<(File, Registered)> {
    for _ in 0..16 {
        let reg = Registered::new(dir.join(temp_name()?))?;
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&reg.path)
        {
            // Locked, and still under its name: between the creation and the
            // lock another run may have found it unlocked and removed it as
            // left behind (it then held a lock of its own until it was done).
            Ok(f) => match crate::lock::try_flock(&f, libc::LOCK_EX) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let _ = std::fs::remove_file(&reg.path);
                    reg.release();
                }
                _ if !same_inode(&f, &reg.path) => reg.release(),
                _ => return Ok((f, reg)),
            },
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => reg.release(),
            Err(e) => {
                reg.release();
                return Err(e);
            }
        }
    }
    Err(io::Error::from(io::ErrorKind::AlreadyExists))
}

/// Whether `path` (not followed) names the file open as `f`.
fn same_inode(f: &File, path: &Path) -> bool {
    match (f.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether `name` is one [`temp_name`] makes.
fn is_temp_name(name: &[u8]) -> bool {
    name.len() == 5 + 12
        && name.starts_with(b".mdu-")
        && name[5..].iter().all(u8::is_ascii_alphanumeric)
}

/// Removes from `dir` the temporary files that runs killed by SIGKILL
/// left behind. A file is removed only if its name is one [`temp_name`]
/// makes, it is a regular file with no other name, it belongs to this user
/// (any user, for root), and nobody holds a lock on it: every run holds
/// its temporary file locked (`flock`) from before it has a name until the
/// run ends, and the kernel drops the lock when the process dies, however
/// it dies. A run of a version of mdu that did not lock its temporary file
/// could lose it here while it runs; it then fails to rename it and leaves
/// its output as it was. Nothing here is an error: a file that cannot be
/// opened, locked or removed stays.
fn remove_stale(dir: &Path) {
    use std::os::fd::AsRawFd;
    let (Ok(entries), Ok(d)) = (std::fs::read_dir(dir), File::open(dir)) else {
        return;
    };
    let me = crate::process::euid();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !is_temp_name(name.as_bytes()) {
            continue;
        }
        let Ok(c) = CString::new(name.as_bytes()) else {
            continue;
        };
        // Opened where it lies, never through a link, without waiting on
        // a FIFO.
        // SAFETY: `d` is an open directory and `c` a NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                d.as_raw_fd(),
                c.as_ptr(),
                libc::O_RDONLY
                    | libc::O_NOFOLLOW
                    | libc::O_NONBLOCK
                    | libc::O_NOCTTY
                    | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            continue;
        }
        // SAFETY: `fd` is a new open descriptor that nothing else owns.
        let f = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let Ok(m) = f.metadata() else { continue };
        if !m.is_file() || m.nlink() != 1 || (me != 0 && m.uid() != me) {
            continue;
        }
        // A shared lock, which a file opened read-only can take on every
        // file system (NFS too); the owner's exclusive lock refuses it.
        if crate::lock::try_flock(&f, libc::LOCK_SH).is_err() {
            continue;
        }
        // Still the file opened (a killed run's file is not renamed by
        // anyone; a live run's cannot be locked).
        // SAFETY: a zeroed stat is a valid buffer for fstatat to fill; `d`
        // is an open directory and `c` a NUL-terminated name.
        let same = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            libc::fstatat(
                d.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            ) == 0
                && st.st_dev == m.dev()
                && st.st_ino == m.ino()
        };
        if same {
            // SAFETY: `d` is an open directory and `c` a NUL-terminated name.
            unsafe { libc::unlinkat(d.as_raw_fd(), c.as_ptr(), 0) };
        }
    }
}

/// `.mdu-` and 12 random letters.
fn temp_name() -> io::Result<OsString> {
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut r = [0u8; 12];
    getrandom::fill(&mut r).map_err(io::Error::other)?;
    let mut name = b".mdu-".to_vec();
    name.extend(r.iter().map(|b| LETTERS[usize::from(*b) % LETTERS.len()]));
    Ok(OsString::from_vec(name))
}

/// Paths to unlink if the process is ended by a signal: the temporary
/// files that have a name. A slot holds a leaked C string: the handler may
/// be reading it at any moment, so it is never freed (a few bytes per
/// output).
static CLEANUP: [AtomicPtr<libc::c_char>; 8] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 8];

/// A temporary path in [`CLEANUP`] for as long as this lives.
struct Registered {
    path: PathBuf,
    c: *mut libc::c_char,
}

// SAFETY: `c` points to a leaked C string that is never written or freed,
// so any thread may hold and read it.
unsafe impl Send for Registered {}

impl Registered {
    fn new(path: PathBuf) -> io::Result<Registered> {
        install_handlers();
        let c = CString::new(path.as_os_str().as_bytes())?.into_raw();
        for slot in &CLEANUP {
            if slot
                .compare_exchange(std::ptr::null_mut(), c, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return Ok(Registered { path, c });
            }
        }
        Err(io::Error::other("too many temporary files at once"))
    }

    /// Takes the path off the list (the file was renamed or removed).
    fn release(self) {
        for slot in &CLEANUP {
            let _ = slot.compare_exchange(
                self.c,
                std::ptr::null_mut(),
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
        }
    }
}

/// Removes the registered temporary files, then dies of the same signal.
extern "C" fn on_signal(sig: libc::c_int) {
    for slot in &CLEANUP {
        let p = slot.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: `p` is a leaked, never-freed NUL-terminated string;
            // unlink is async-signal-safe.
            unsafe { libc::unlink(p) };
        }
    }
    // SAFETY: signal and raise are async-signal-safe; restoring the
    // default action and raising again ends the process with `sig`.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Installs [`on_signal`] for the signals that end a run from outside
/// (once per process). A signal the process was started with ignored
/// (`nohup`, a background job of a shell) stays ignored.
fn install_handlers() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            // SAFETY: sigaction with a null new action only reads the
            // current one into a zeroed, valid struct; a zeroed sigaction
            // with a handler of the right type and an empty mask is valid,
            // and the handler only calls async-signal-safe functions.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                    || old.sa_sigaction == libc::SIG_IGN
                {
                    continue;
                }
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
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
