//! Why a file or device could not be opened, read or written as asked.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Why a file or device could not be opened, read or written as asked.
/// Every message names the path, and says what was wrong and what would
/// do instead.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let e = mdu_io::input::open_read(dir.path()).unwrap_err();
/// assert!(matches!(e, mdu_io::Error::Directory { .. }));
/// assert!(e.to_string().ends_with(": the input is a directory: expected a regular file or a block device"));
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A system call on `path` failed while doing `action` ("open for
    /// reading", "write", ...).
    Io {
        /// The file, as the caller named it.
        path: PathBuf,
        /// What was being done, as words that follow "cannot".
        action: &'static str,
        /// The system's error.
        source: io::Error,
    },
    /// The output is one of the inputs, or overlaps it.
    Overlap {
        /// The input.
        input: PathBuf,
        /// The output.
        output: PathBuf,
        /// How they overlap.
        why: Overlap,
    },
    /// A path with a NUL byte, which no system call takes.
    NulInPath {
        /// The path.
        path: PathBuf,
    },
    /// An existing regular file the user may not write, as `cp` refuses
    /// it.
    NotWritable {
        /// The output.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
        /// What `access(2)` said.
        source: io::Error,
    },
    /// A block device smaller than the output.
    DeviceTooSmall {
        /// The device.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The output's length in bytes.
        len: u64,
    },
    /// A stream (a FIFO, a character device, a descriptor of this process)
    /// for an output written at positions.
    NotSeekable {
        /// The output.
        path: PathBuf,
        /// What it is.
        stream: Stream,
    },
    /// A symbolic link to nothing, not written through (as `cp` refuses
    /// it).
    DanglingSymlink {
        /// The link.
        path: PathBuf,
    },
    /// A directory or a socket named as an output.
    NotAnOutput {
        /// The path.
        path: PathBuf,
        /// What it is ("a directory", "a socket").
        kind: &'static str,
    },
    /// A path naming a descriptor of this process that cannot be written.
    Descriptor {
        /// The path.
        path: PathBuf,
        /// The descriptor's number.
        fd: i32,
        /// What is wrong with it.
        why: DescriptorProblem,
    },
    /// A directory to write a tree into that is not empty.
    NotEmpty {
        /// The directory.
        path: PathBuf,
    },
    /// An input without a size (a character device, a FIFO, a socket)
    /// where the work needs one.
    NotSized {
        /// The input.
        path: PathBuf,
        /// What it is (`"a character device"`, `"a FIFO"`, `"a socket"`).
        kind: &'static str,
    },
    /// A directory named as an input.
    Directory {
        /// The path.
        path: PathBuf,
    },
    /// A sized input that ended at `offset`, before `end`, where its size
    /// when it was opened said it would.
    EndedEarly {
        /// The input.
        path: PathBuf,
        /// Where it ended, in bytes.
        offset: u64,
        /// Where it was to end, in bytes.
        end: u64,
    },
    /// `left` bytes at `offset` that do not make a whole unit of `unit`
    /// bytes (a sector).
    PartialUnit {
        /// The input.
        path: PathBuf,
        /// Where the partial unit starts, in bytes.
        offset: u64,
        /// Its length in bytes.
        left: usize,
        /// The unit's size in bytes.
        unit: usize,
    },
    /// A worker thread that could not be started (`RLIMIT_NPROC`,
    /// memory).
    Thread {
        /// Its role ("reader", "writer").
        name: &'static str,
        /// The system's error.
        source: io::Error,
    },
    /// A worker thread that panicked.
    Panicked {
        /// Its role ("reader", "writer").
        name: &'static str,
    },
    /// The pipeline's transform refused the data read from `path`.
    Transform {
        /// The input.
        path: PathBuf,
        /// The transform's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// How an output overlaps an input.
///
/// ```
/// assert_eq!(mdu_io::Overlap::SameFile.to_string(), "they are the same file");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Overlap {
    /// The same file under another name (a hard link, a symbolic link).
    SameFile,
    /// The same device under another node.
    SameDevice,
    /// The input is a file on the file system of the output device.
    InputOnOutputDevice,
    /// The output is a file on the file system of the input device.
    OutputOnInputDevice,
    /// Two partitions, or a partition and its disk, that overlap.
    OverlapOnDisk,
    /// The output is a loop device backed by the input.
    OutputLoopsInput,
    /// The input is a loop device backed by the output.
    InputLoopsOutput,
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Overlap::SameFile => "they are the same file",
            Overlap::SameDevice => "they are the same device",
            Overlap::InputOnOutputDevice => {
                "the input lives on the file system of the output device"
            }
            Overlap::OutputOnInputDevice => {
                "the output lives on the file system of the input device"
            }
            Overlap::OverlapOnDisk => "they overlap on one disk",
            Overlap::OutputLoopsInput => "the output is a loop device backed by the input",
            Overlap::InputLoopsOutput => "the input is a loop device backed by the output",
        })
    }
}

/// A stream named as an output written at positions.
///
/// ```
/// let s = mdu_io::Stream::Fifo;
/// assert_eq!(s, mdu_io::Stream::Fifo);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stream {
    /// A descriptor of this process (`/dev/stdout`, `/dev/fd/N`), open on
    /// `kind` ("a pipe or FIFO", "a regular file", ...).
    Descriptor {
        /// The descriptor's number.
        fd: i32,
        /// What it is open on, in words.
        kind: &'static str,
    },
    /// A FIFO.
    Fifo,
    /// A character device.
    CharDevice,
}

/// What is wrong with a descriptor of this process named as an output.
///
/// ```
/// assert_eq!(mdu_io::DescriptorProblem::Directory.to_string(), "which is open on a directory");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum DescriptorProblem {
    /// It is not open.
    NotOpen(io::Error),
    /// It is open for reading only.
    NotWritable,
    /// It is open on a directory.
    Directory,
}

impl fmt::Display for DescriptorProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DescriptorProblem::NotOpen(e) => write!(f, "which is not open ({e})"),
            DescriptorProblem::NotWritable => f.write_str("which is not open for writing"),
            DescriptorProblem::Directory => f.write_str("which is open on a directory"),
        }
    }
}

impl Error {
    /// The error of `action` on `path`.
    ///
    /// ```
    /// let e = mdu_io::Error::io("disk.img", "write", std::io::ErrorKind::WriteZero.into());
    /// assert!(e.to_string().starts_with("disk.img: cannot write: "));
    /// ```
    pub fn io(path: impl Into<PathBuf>, action: &'static str, source: io::Error) -> Error {
        Error::Io {
            path: path.into(),
            action,
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io {
                path,
                action,
                source,
            } => write!(f, "{}: cannot {action}: {source}", path.display()),
            Error::Overlap { input, output, why } => write!(
                f,
                "{} and {}: {why}; the output would overwrite input not yet read \
                 (give another output)",
                input.display(),
                output.display()
            ),
            Error::NulInPath { path } => write!(f, "{}: NUL in path", path.display()),
            Error::NotWritable { path, mode, source } => write!(
                f,
                "{}: cannot replace it: {source} (mode {mode:04o}); make it writable or \
                 remove it first",
                path.display()
            ),
            Error::DeviceTooSmall { path, size, len } => write!(
                f,
                "{}: the device holds {size} bytes but the output is {len} bytes: \
                 nothing was written",
                path.display()
            ),
            Error::NotSeekable {
                path,
                stream: Stream::Descriptor { fd, kind },
            } => write!(
                f,
                "{}: is this process's file descriptor {fd} ({kind}), written as a \
                 stream, but this output is written at positions: give the name \
                 of a regular file or a block device",
                path.display()
            ),
            Error::NotSeekable { path, stream } => {
                let what = if *stream == Stream::Fifo {
                    "a FIFO"
                } else {
                    "a character device"
                };
                write!(
                    f,
                    "{}: is {what}, but this output is written at positions: give a \
                     regular file or a block device",
                    path.display()
                )
            }
            Error::DanglingSymlink { path } => write!(
                f,
                "{}: is a symbolic link to nothing: not writing through a dangling \
                 symbolic link (create its target first, or remove the link)",
                path.display()
            ),
            Error::NotAnOutput { path, kind } => write!(
                f,
                "{}: is {kind}: an output must be a file, a block or character device, or a FIFO",
                path.display()
            ),
            Error::Descriptor { path, fd, why } => write!(
                f,
                "{}: names this process's file descriptor {fd}, {why}: give another output",
                path.display()
            ),
            Error::NotEmpty { path } => write!(
                f,
                "{}: exists and is not empty; nothing is overwritten",
                path.display()
            ),
            Error::NotSized { path, kind } => write!(
                f,
                "{}: the input is {kind}, which has no size to read up to: expected a regular \
                 file or a block device",
                path.display()
            ),
            Error::Directory { path } => write!(
                f,
                "{}: the input is a directory: expected a regular file or a block device",
                path.display()
            ),
            Error::EndedEarly { path, offset, end } => write!(
                f,
                "{}: at byte offset {offset}: unexpected end of file: the data were to run to \
                 byte {end}, as its size said when it was opened (was it truncated while it \
                 was read?)",
                path.display()
            ),
            Error::PartialUnit {
                path,
                offset,
                left,
                unit,
            } => write!(
                f,
                "{}: at byte offset {offset}: {left} trailing bytes are not a whole sector: \
                 the data must be a whole number of {unit}-byte sectors",
                path.display()
            ),
            Error::Thread { name, source } => {
                write!(f, "cannot start the {name} thread: {source}")
            }
            Error::Panicked { name } => write!(f, "the {name} thread panicked"),
            Error::Transform { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. }
            | Error::NotWritable { source, .. }
            | Error::Thread { source, .. } => Some(source),
            Error::Transform { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}
