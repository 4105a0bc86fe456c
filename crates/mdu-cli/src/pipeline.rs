//! The one read -> crypt -> write pipeline of `mdu crypt` and `mdu luks`.
//!
//! Three stages with three aligned buffers going round: a reader thread
//! fills a buffer, this thread encrypts or decrypts it with a
//! [`SectorCipher`] (split across a rayon pool), a writer thread writes it
//! out and hands it back to the reader.
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
//! The bytes are those of the cipher run over the whole input at once:
//! chunk `k` starts at sector `k * chunk / sector_size`.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc;

use mdu_dmcrypt::{Direction, SectorCipher};

use crate::error::CliError;
use crate::{input, process, progress};

/// Bytes per read/crypt/write step and thread (a multiple of every sector
/// size and of the direct-I/O alignment).
const CHUNK_PER_THREAD: usize = 2 << 20;

/// Alignment of the buffers, what `O_DIRECT` needs of memory.
const ALIGN: usize = 4096;

/// Where the pipeline reads.
pub(crate) struct Source<'a> {
    /// The open input.
    pub(crate) file: &'a File,
    /// Its name, for errors.
    pub(crate) path: &'a Path,
    /// Where the data start in it, in bytes (read at positions from here
    /// when `len` is known; a stream must already be there).
    pub(crate) offset: u64,
    /// How many bytes to read: `Some` for a regular file or block device,
    /// `None` for a stream read to its end.
    pub(crate) len: Option<u64>,
}

/// Where the pipeline writes.
pub(crate) struct Sink<'a> {
    /// The open output (from the output layer).
    pub(crate) file: &'a File,
    /// Its name, for errors.
    pub(crate) path: &'a Path,
    /// Where the data go in it, in bytes (a stream must already be there).
    pub(crate) offset: u64,
    /// Whether it is written at positions (else in order).
    pub(crate) seekable: bool,
}

/// A buffer whose bytes start at an [`ALIGN`]-byte boundary.
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

/// Streams the input through `cipher` (its first sector is sector 0) into
/// the output, with `threads` crypt threads (default: every core). Returns
/// the number of bytes written; the caller commits the output.
pub(crate) fn run(
    dir: Direction,
    cipher: &SectorCipher,
    src: Source<'_>,
    sink: Sink<'_>,
    threads: Option<usize>,
) -> Result<u64, CliError> {
    let pool = process::pool(threads)?;
    let parallel = pool.current_num_threads() > 1;
    let ss = cipher.sector_size() as usize;
    let mut chunk = CHUNK_PER_THREAD * pool.current_num_threads();
    if let Some(len) = src.len {
        // A small input gets small buffers, still a multiple of ALIGN.
        let need = usize::try_from(len).unwrap_or(usize::MAX);
        chunk = chunk.min(need.div_ceil(ALIGN).max(1) * ALIGN);
    }
    let pb = progress::progress(src.len.unwrap_or(0), dir.name());
    let in_path = src.path;
    let result = std::thread::scope(|s| -> Result<u64, CliError> {
        let (full_tx, full_rx) = mpsc::sync_channel::<(AlignedBuf, usize)>(1);
        let (done_tx, done_rx) = mpsc::sync_channel::<(AlignedBuf, usize)>(1);
        let (free_tx, free_rx) = mpsc::channel::<AlignedBuf>();
        for _ in 0..3 {
            let _ = free_tx.send(AlignedBuf::new(chunk));
        }
        // The writer first: if the reader cannot be started, dropping
        // `done_tx` ends the writer.
        let writer = process::spawn(s, "writer", move || write(sink, done_rx, free_tx))?;
        let reader = process::spawn(s, "reader", move || read(src, ss, free_rx, full_tx))?;
        let mut sector = 0u64;
        let mut bytes = 0u64;
        let mut failed = None;
        for (mut buf, n) in full_rx.iter() {
            let piece = &mut buf.bytes()[..n];
            let r = if parallel {
                pool.install(|| cipher.par_crypt(dir, sector, piece))
            } else {
                cipher.crypt(dir, sector, piece)
            };
            if let Err(e) = r {
                failed = Some(CliError::lib(in_path, e));
                break;
            }
            sector += (n / ss) as u64;
            bytes += n as u64;
            pb.inc(n as u64);
            if done_tx.send((buf, n)).is_err() {
                break;
            }
        }
        // A failure here leaves the reader waiting for a buffer or blocked
        // on a full channel: dropping the receiver ends it either way.
        drop(full_rx);
        drop(done_tx);
        let read = process::join(reader, "reader");
        let written = process::join(writer, "writer");
        match failed {
            Some(e) => Err(e),
            None => read.and(written).map(|()| bytes),
        }
    });
    pb.finish_and_clear();
    result
}

/// The writer thread of [`run`]: each converted buffer from `done` written
/// in order to the sink (through `O_DIRECT` while the file system takes
/// it), then handed back to `free`.
fn write(
    sink: Sink<'_>,
    done: mpsc::Receiver<(AlignedBuf, usize)>,
    free: mpsc::Sender<AlignedBuf>,
) -> Result<(), CliError> {
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
                Err(e) => return Err(CliError::io(out_path, "write", e)),
            }
        }
        if !written {
            let r = if seekable {
                out.write_all_at(data, pos)
            } else {
                (&*out).write_all(data)
            };
            r.map_err(|e| CliError::io(out_path, "write", e))?;
        }
        pos += n as u64;
        // The reader may have stopped: the buffer is then dropped.
        let _ = free.send(buf);
    }
    Ok(())
}

/// The reader thread of [`run`]: the source read into each buffer from
/// `free` (a sized one by position, through `O_DIRECT` where the page cache
/// does not hold it; a stream in whole sectors of `ss` bytes) and sent to
/// `full`, until the source ends or the converter stops taking buffers.
fn read(
    src: Source<'_>,
    ss: usize,
    free: mpsc::Receiver<AlignedBuf>,
    full: mpsc::SyncSender<(AlignedBuf, usize)>,
) -> Result<(), CliError> {
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
                    .map_err(|e| CliError::io(in_path, "read", e))?;
                if got < n {
                    let at = in_offset + pos + got as u64;
                    return Err(ended_early(in_path, at, in_offset + len));
                }
                n
            }
            None => {
                let n = input::read_full(&mut &*input, bytes)
                    .map_err(|e| CliError::io(in_path, "read", e))?;
                if !n.is_multiple_of(ss) {
                    let at = in_offset + pos + (n - n % ss) as u64;
                    return Err(partial_sector(in_path, at, n % ss, ss));
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

/// A sized input that ended at `offset`, before `end`, where its size when
/// it was opened said it would.
fn ended_early(path: &Path, offset: u64, end: u64) -> CliError {
    CliError::Input {
        path: path.to_owned(),
        offset,
        rule: format!(
            "unexpected end of file: the data were to run to byte {end}, as its size said when \
             it was opened (was it truncated while it was read?)"
        ),
    }
}

/// `left` bytes at `offset` that do not make a whole sector.
pub(crate) fn partial_sector(path: &Path, offset: u64, left: usize, ss: usize) -> CliError {
    CliError::Input {
        path: path.to_owned(),
        offset,
        rule: format!(
            "{left} trailing bytes are not a whole sector: the data must be a whole number of {ss}-byte sectors"
        ),
    }
}
