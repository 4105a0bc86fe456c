//! Inputs: opened for reading, sized from their type, mapped or read.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use indicatif::ProgressBar;
use mdu_verity::{Error as VerityError, Source};

use crate::error::CliError;
use crate::progress::progress;

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
