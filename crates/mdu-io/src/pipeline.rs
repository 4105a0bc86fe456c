//! One read -> transform -> write pipeline (`mdu crypt` and `mdu luks`
//! encrypt and decrypt through it).
//!
//! Three stages with three aligned buffers going round: a reader thread
//! fills a buffer, the calling thread transforms it in place (the caller's
//! closure: a sector cipher, which may split it across a thread pool), a
//! writer thread writes it out and hands it back to the reader.
//!
//! * **Input.** A sized input (a regular file or a block device) is read
//!   at positions through a second handle opened with `O_DIRECT` where the
//!   file system takes it: the data go from the disk into the pipeline's
//!   buffers without a copy through the page cache, and without filling it
//!   with a file read once. A chunk the page cache already holds (mostly,
//!   says `mincore`) is read from there instead: a copy from memory is
//!   faster than reading the disk again. A file system that refuses direct
//!   reads (tmpfs: `EINVAL` on open or on read, an unaligned offset or
//!   length) is read through the page cache from then on, from the same
//!   position. An input without a size (a pipe, a character
//!   device) is read in order until it ends; it must end on a sector
//!   boundary.
//! * **Output.** A seekable output (a new file of the output layer, a block
//!   device) is written at positions, through a second `O_DIRECT` handle
//!   where the file system takes it (the output layer syncs the file
//!   before it commits it, so every byte goes to the disk anyway; written
//!   through the page cache it would first be copied into new cache
//!   pages), else buffered; a stream is written in order.
//!
//! The transform is told where each buffer lies in the data (its offset in
//! bytes from the start of the data), so that the bytes are those of the
//! transform run over the whole input at once.
//!
//! ```
//! use mdu_io::pipeline::{Pipeline, Sink, Source};
//!
//! let dir = tempfile::tempdir()?;
//! let (a, b) = (dir.path().join("in"), dir.path().join("out"));
//! std::fs::write(&a, vec![0x0fu8; 1 << 20])?;
//! let input = std::fs::File::open(&a)?;
//! let output = std::fs::File::create(&b)?;
//! let src = Source { file: &input, path: &a, offset: 0, len: Some(1 << 20) };
//! let sink = Sink { file: &output, path: &b, offset: 0, seekable: true };
//! // Flip every bit, 512-byte unit by unit.
//! let n = Pipeline::new(512).run(src, sink, |buf: &mut [u8], _at: u64| {
//!     buf.iter_mut().for_each(|x| *x = !*x);
//!     Ok::<(), std::io::Error>(())
//! })?;
//! assert_eq!(n, 1 << 20);
//! assert!(std::fs::read(&b)?.iter().all(|&x| x == 0xf0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc;

use crate::Progress;
use crate::error::Error;
use crate::input;

/// Bytes per read/transform/write step and thread (a multiple of every
/// sector size and of the direct-I/O alignment).
const CHUNK_PER_THREAD: usize = 2 << 20;

/// Alignment of the buffers, what `O_DIRECT` needs of memory.
const ALIGN: usize = 4096;

/// Where the pipeline reads.
#[derive(Debug)]
pub struct Source<'a> {
    /// The open input.
    pub file: &'a File,
    /// Its name, for errors.
    pub path: &'a Path,
    /// Where the data start in it, in bytes (read at positions from here
    /// when `len` is known; a stream must already be there).
    pub offset: u64,
    /// How many bytes to read: `Some` for a regular file or block device,
    /// `None` for a stream read to its end.
    pub len: Option<u64>,
}

/// Where the pipeline writes.
#[derive(Debug)]
pub struct Sink<'a> {
    /// The open output (from the output layer).
    pub file: &'a File,
    /// Its name, for errors.
    pub path: &'a Path,
    /// Where the data go in it, in bytes (a stream must already be there).
    pub offset: u64,
    /// Whether it is written at positions (else in order).
    pub seekable: bool,
}

/// A buffer whose bytes start at an [`ALIGN`]-byte boundary.
#[derive(Debug)]
struct AlignedBuf {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    fn new(len: usize) -> AlignedBuf {
        let raw = vec![0u8; len + ALIGN];
        // An unaligned start only costs the direct path (the kernel refuses
        // it and the buffered path takes over).
        let start = raw.as_ptr().align_offset(ALIGN).min(ALIGN);
        AlignedBuf { raw, start, len }
    }

    fn bytes(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }
}

/// Whether `e` is the kernel refusing a direct transfer (alignment, or a
/// file system without direct I/O).
fn refused(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EINVAL)
}

/// Whether the page cache holds most of the `len` bytes of `file` at
/// `offset` (false where that cannot be told).
fn cached(file: &File, offset: u64, len: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let Ok(page) = u64::try_from(page) else {
            return false;
        };
        if page == 0 || len == 0 {
            return false;
        }
        let start = offset - offset % page;
        let Ok(span) = usize::try_from(offset + len as u64 - start) else {
            return false;
        };
        // SAFETY: the mapping is never read or written, only its address
        // range handed to mincore, so no change to the file (not even a
        // truncation) can fault through it. Its offset is page-aligned, so
        // the mapping starts at the page mincore asks about.
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(start)
                .len(span)
                .map(file)
        };
        let Ok(map) = map else {
            return false;
        };
        let pages = span.div_ceil(page as usize);
        let mut resident = vec![0u8; pages];
        // SAFETY: the range is the live mapping's (page-aligned start,
        // `span` bytes); `resident` holds one byte per page of it.
        let r = unsafe {
            libc::mincore(
                map.as_ptr() as *mut libc::c_void,
                span,
                resident.as_mut_ptr(),
            )
        };
        r == 0 && resident.iter().filter(|&&b| b & 1 != 0).count() * 2 > pages
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, offset, len);
        false
    }
}

/// Reads `buf.len()` bytes at `pos` through `direct` while it lasts and the
/// page cache does not hold them, else through `file`; the number of bytes
/// read, fewer only where the file ends.
fn read_at(
    direct: &mut Option<File>,
    file: &File,
    buf: &mut [u8],
    pos: u64,
) -> std::io::Result<usize> {
    if let Some(d) = direct.as_ref().filter(|_| !cached(file, pos, buf.len())) {
        match read_full_at(d, buf, pos) {
            Err(e) if refused(&e) => *direct = None,
            r => return r,
        }
    }
    read_full_at(file, buf, pos)
}

/// Reads at `pos` until `buf` is full or the file ends; the bytes read.
fn read_full_at(f: &File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], pos + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// The pipeline's shape: the unit the data come in, how many threads the
/// transform uses (the buffers grow with them) and who hears of progress.
///
/// ```
/// let p = mdu_io::pipeline::Pipeline::new(4096).threads(8);
/// # let _ = p;
/// ```
pub struct Pipeline<'p> {
    unit: usize,
    threads: usize,
    progress: Option<&'p dyn Progress>,
}

impl std::fmt::Debug for Pipeline<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("unit", &self.unit)
            .field("threads", &self.threads)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl<'p> Pipeline<'p> {
    /// A pipeline of data made of `unit`-byte units (sectors): a stream
    /// input is read in whole units and must end on a unit boundary (a
    /// sized input may end anywhere; the transform decides). One transform
    /// thread, no progress reports.
    ///
    /// ```
    /// let p = mdu_io::pipeline::Pipeline::new(512);
    /// # let _ = p;
    /// ```
    pub fn new(unit: usize) -> Pipeline<'p> {
        Pipeline {
            unit: unit.max(1),
            threads: 1,
            progress: None,
        }
    }

    /// The transform splits each buffer across `threads` threads: each
    /// buffer holds 2 MiB per thread (fewer for a small input).
    ///
    /// ```
    /// let p = mdu_io::pipeline::Pipeline::new(512).threads(4);
    /// # let _ = p;
    /// ```
    pub fn threads(mut self, threads: usize) -> Pipeline<'p> {
        self.threads = threads.max(1);
        self
    }

    /// Each buffer transformed is reported to `progress`, by its length.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// let done = AtomicU64::new(0);
    /// let report = |n: u64| {
    ///     done.fetch_add(n, Ordering::Relaxed);
    /// };
    /// let p = mdu_io::pipeline::Pipeline::new(512).progress(&report);
    /// # let _ = p;
    /// ```
    pub fn progress(mut self, progress: &'p dyn Progress) -> Pipeline<'p> {
        self.progress = Some(progress);
        self
    }

    /// Streams the input through `transform` into the output. `transform`
    /// gets each buffer and its offset in bytes from the start of the data
    /// (a multiple of the unit, buffers in order); an error from it stops
    /// the pipeline and is returned as [`Error::Transform`] about the
    /// input. Returns the number of bytes written; the caller commits the
    /// output.
    ///
    /// ```
    /// use mdu_io::pipeline::{Pipeline, Sink, Source};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let (a, b) = (dir.path().join("in"), dir.path().join("out"));
    /// std::fs::write(&a, vec![1u8; 3 * 512])?;
    /// let (input, output) = (std::fs::File::open(&a)?, std::fs::File::create(&b)?);
    /// let src = Source { file: &input, path: &a, offset: 512, len: Some(1024) };
    /// let sink = Sink { file: &output, path: &b, offset: 0, seekable: true };
    /// let mut offsets = Vec::new();
    /// Pipeline::new(512).run(src, sink, |_buf: &mut [u8], at: u64| {
    ///     offsets.push(at);
    ///     Ok::<(), std::io::Error>(())
    /// })?;
    /// assert_eq!(offsets, [0]);
    /// assert_eq!(std::fs::read(&b)?, vec![1u8; 1024]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run<F, E>(&self, src: Source<'_>, sink: Sink<'_>, mut transform: F) -> Result<u64, Error>
    where
        F: FnMut(&mut [u8], u64) -> Result<(), E>,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let unit = self.unit;
        let mut chunk = CHUNK_PER_THREAD * self.threads;
        if let Some(len) = src.len {
            // A small input gets small buffers, still a multiple of ALIGN.
            let need = usize::try_from(len).unwrap_or(usize::MAX);
            chunk = chunk.min(need.div_ceil(ALIGN).max(1) * ALIGN);
        }
        let in_path = src.path;
        std::thread::scope(|s| -> Result<u64, Error> {
            let (full_tx, full_rx) = mpsc::sync_channel::<(AlignedBuf, usize)>(1);
            let (done_tx, done_rx) = mpsc::sync_channel::<(AlignedBuf, usize)>(1);
            let (free_tx, free_rx) = mpsc::channel::<AlignedBuf>();
            for _ in 0..3 {
                let _ = free_tx.send(AlignedBuf::new(chunk));
            }
            // The writer first: if the reader cannot be started, dropping
            // `done_tx` ends the writer.
            let writer = spawn(s, "writer", move || write(sink, done_rx, free_tx))?;
            let reader = spawn(s, "reader", move || read(src, unit, free_rx, full_tx))?;
            let mut bytes = 0u64;
            let mut failed = None;
            for (mut buf, n) in full_rx.iter() {
                if let Err(e) = transform(&mut buf.bytes()[..n], bytes) {
                    failed = Some(Error::Transform {
                        path: in_path.to_owned(),
                        source: e.into(),
                    });
                    break;
                }
                bytes += n as u64;
                if let Some(p) = self.progress {
                    p.advance(n as u64);
                }
                if done_tx.send((buf, n)).is_err() {
                    break;
                }
            }
            // A failure here leaves the reader waiting for a buffer or blocked
            // on a full channel: dropping the receiver ends it either way.
            drop(full_rx);
            drop(done_tx);
            let read = join(reader, "reader");
            let written = join(writer, "writer");
            match failed {
                Some(e) => Err(e),
                None => read.and(written).map(|()| bytes),
            }
        })
    }
}

/// Starts `f` on a new scoped thread called `mdu-{name}`: a thread that
/// cannot be started (`RLIMIT_NPROC`, memory) is an error, not a panic.
fn spawn<'scope, 'env, T: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    name: &'static str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> Result<std::thread::ScopedJoinHandle<'scope, T>, Error> {
    std::thread::Builder::new()
        .name(format!("mdu-{name}"))
        .spawn_scoped(s, f)
        .map_err(|source| Error::Thread { name, source })
}

/// Waits for a thread started by [`spawn`]; a panic in it is an error.
fn join<T>(
    h: std::thread::ScopedJoinHandle<'_, Result<T, Error>>,
    name: &'static str,
) -> Result<T, Error> {
    h.join().unwrap_or_else(|_| Err(Error::Panicked { name }))
}

/// The writer thread of [`Pipeline::run`]: each converted buffer from `done` written
/// in order to the sink (through `O_DIRECT` while the file system takes
/// it), then handed back to `free`.
fn write(
    sink: Sink<'_>,
    done: mpsc::Receiver<(AlignedBuf, usize)>,
    free: mpsc::Sender<AlignedBuf>,
) -> Result<(), Error> {
    let Sink {
        file: out,
        path: out_path,
        offset: out_offset,
        seekable,
    } = sink;
    let mut direct = if seekable {
        crate::output::direct(out, true)
    } else {
        None
    };
    let mut pos = out_offset;
    for (mut buf, n) in done {
        let data = &buf.bytes()[..n];
        let mut written = false;
        if let Some(d) = &direct {
            match d.write_all_at(data, pos) {
                Ok(()) => written = true,
                Err(e) if refused(&e) => direct = None,
                Err(e) => return Err(Error::io(out_path, "write", e)),
            }
        }
        if !written {
            let r = if seekable {
                out.write_all_at(data, pos)
            } else {
                (&*out).write_all(data)
            };
            r.map_err(|e| Error::io(out_path, "write", e))?;
        }
        pos += n as u64;
        // The reader may have stopped: the buffer is then dropped.
        let _ = free.send(buf);
    }
    Ok(())
}

/// The reader thread of [`Pipeline::run`]: the source read into each buffer from
/// `free` (a sized one by position, through `O_DIRECT` where the page cache
/// does not hold it; a stream in whole sectors of `ss` bytes) and sent to
/// `full`, until the source ends or the converter stops taking buffers.
fn read(
    src: Source<'_>,
    ss: usize,
    free: mpsc::Receiver<AlignedBuf>,
    full: mpsc::SyncSender<(AlignedBuf, usize)>,
) -> Result<(), Error> {
    let Source {
        file: input,
        path: in_path,
        offset: in_offset,
        len: in_len,
    } = src;
    let mut direct = in_len.and_then(|_| crate::output::direct(input, false));
    let mut pos = 0u64;
    while let Ok(mut buf) = free.recv() {
        let bytes = buf.bytes();
        let n = match in_len {
            Some(len) => {
                let n = (len - pos).min(bytes.len() as u64) as usize;
                let got = read_at(&mut direct, input, &mut bytes[..n], in_offset + pos)
                    .map_err(|e| Error::io(in_path, "read", e))?;
                if got < n {
                    let at = in_offset + pos + got as u64;
                    return Err(Error::EndedEarly {
                        path: in_path.to_owned(),
                        offset: at,
                        end: in_offset + len,
                    });
                }
                n
            }
            None => {
                let n = input::read_full(&mut &*input, bytes)
                    .map_err(|e| Error::io(in_path, "read", e))?;
                if !n.is_multiple_of(ss) {
                    let at = in_offset + pos + (n - n % ss) as u64;
                    return Err(Error::PartialUnit {
                        path: in_path.to_owned(),
                        offset: at,
                        left: n % ss,
                        unit: ss,
                    });
                }
                n
            }
        };
        if n == 0 || full.send((buf, n)).is_err() {
            return Ok(());
        }
        pos += n as u64;
        if in_len == Some(pos) {
            return Ok(());
        }
    }
    Ok(())
}
