//! Inputs: opened for reading, sized from their type, mapped or read.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::Error;

/// Open `path` for reading, with its length.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("in");
/// std::fs::write(&path, [7u8; 1000])?;
/// let (_file, len) = mdu_io::input::open_input(&path)?;
/// assert_eq!(len, 1000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_input(path: &Path) -> Result<(File, u64), Error> {
    let f = open_read(path)?;
    let len = f
        .metadata()
        .map_err(|e| Error::io(path, "read its size", e))?
        .len();
    Ok((f, len))
}

/// What an input without a size (a character device such as `/dev/zero`,
/// a FIFO or pipe, a socket) is: the file type in words, or `None` for a
/// regular file or block device (or anything else, left to fail on read).
///
/// ```
/// let null = std::fs::metadata("/dev/null")?;
/// assert_eq!(mdu_io::input::unsized_kind(&null), Some("a character device"));
/// let this = std::fs::metadata(std::env::current_exe()?)?;
/// assert_eq!(mdu_io::input::unsized_kind(&this), None);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn unsized_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
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
///
/// ```
/// let null = std::fs::File::open("/dev/null")?;
/// assert_eq!(mdu_io::input::sized_len("/dev/null".as_ref(), &null)?, None);
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("in");
/// std::fs::write(&path, [0u8; 4096])?;
/// let f = std::fs::File::open(&path)?;
/// assert_eq!(mdu_io::input::sized_len(&path, &f)?, Some(4096));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sized_len(path: &Path, f: &File) -> Result<Option<u64>, Error> {
    let meta = f
        .metadata()
        .map_err(|e| Error::io(path, "read its size", e))?;
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
        .map_err(|e| Error::io(path, "find the size of the device", e))?;
    Ok(Some(end))
}

/// The size of the file or block device at `path` (a block device's by
/// seeking to its end, where its metadata says 0); an input without a size
/// is an error naming it.
///
/// ```
/// let e = mdu_io::input::input_size("/dev/zero".as_ref()).unwrap_err();
/// assert!(matches!(e, mdu_io::Error::NotSized { kind: "a character device", .. }));
/// ```
pub fn input_size(path: &Path) -> Result<u64, Error> {
    refuse_unsized(path)?;
    let f = open_read(path)?;
    sized_len(path, &f)?.ok_or_else(|| not_sized(path, &f))
}

/// Refuses, before it is opened (opening a FIFO waits for a writer), an
/// input that has no size to read up to.
///
/// ```
/// assert!(mdu_io::input::refuse_unsized("/dev/zero".as_ref()).is_err());
/// // A path that does not exist is left to the open, which names the error.
/// assert!(mdu_io::input::refuse_unsized("/nonexistent".as_ref()).is_ok());
/// ```
pub fn refuse_unsized(path: &Path) -> Result<(), Error> {
    match std::fs::metadata(path) {
        Ok(m) => match unsized_kind(&m) {
            Some(kind) => Err(Error::NotSized {
                path: path.to_owned(),
                kind,
            }),
            None => Ok(()),
        },
        // Left to the open, which names the error.
        Err(_) => Ok(()),
    }
}

/// Opens the input `path` for reading; a directory is refused (reading it
/// fails, and some file systems give it a size of 2^63 - 1 bytes).
///
/// ```
/// let e = mdu_io::input::open_read("/".as_ref()).unwrap_err();
/// assert!(matches!(e, mdu_io::Error::Directory { .. }));
/// ```
pub fn open_read(path: &Path) -> Result<File, Error> {
    let f = File::open(path).map_err(|e| Error::io(path, "open for reading", e))?;
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(Error::Directory {
            path: path.to_owned(),
        });
    }
    Ok(f)
}

/// The error of the input `path` (open as `f`), which has no size.
///
/// ```
/// let null = std::fs::File::open("/dev/null")?;
/// let e = mdu_io::input::not_sized("/dev/null".as_ref(), &null);
/// assert!(e.to_string().starts_with("/dev/null: the input is a character device"));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn not_sized(path: &Path, f: &File) -> Error {
    let kind = f
        .metadata()
        .ok()
        .and_then(|m| unsized_kind(&m))
        .unwrap_or("a file without a size");
    Error::NotSized {
        path: path.to_owned(),
        kind,
    }
}

/// An input file: hashed through successive read-only mappings (where the
/// page cache holds it, without a copy), or read through a buffer.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("in");
/// std::fs::write(&path, [1u8; 8192])?;
/// let (input, len) = mdu_io::input::open_data(&path, true)?;
/// assert_eq!(len, 8192);
/// if let mdu_io::input::Input::Mapped(windows) = input {
///     let total: usize = windows.map(|w| w.map(|m| m.len())).sum::<std::io::Result<usize>>()?;
///     assert_eq!(total, 8192);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub enum Input {
    /// A regular file whose first window mapped fine.
    Mapped(MappedWindows),
    /// The file, to be read with read(2).
    File(File),
}

/// Bytes mapped at a time. Each window is unmapped once hashed, so the
/// process never holds more than this much of the file mapped; a multiple
/// of every page and block size.
///
/// ```
/// assert_eq!(mdu_io::input::WINDOW % 65536, 0);
/// ```
pub const WINDOW: u64 = 64 << 20;

/// The windows of a mapped file, in order: an iterator of mappings for
/// the library calls that hash a file in chunks
/// (mdu-verity's `measure_chunks`, `format_chunks`).
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("in");
/// std::fs::write(&path, b"abc")?;
/// let (input, _) = mdu_io::input::open_data(&path, true)?;
/// let mdu_io::input::Input::Mapped(mut windows) = input else { panic!("not mapped") };
/// assert_eq!(&windows.next().unwrap()?[..], b"abc");
/// assert!(windows.next().is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct MappedWindows {
    file: File,
    len: u64,
    next: u64,
    first: Option<memmap2::Mmap>,
}

/// Maps `len` bytes of `file` from `offset`, read-only.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("in");
/// std::fs::write(&path, b"hello")?;
/// let map = mdu_io::input::map_window(&std::fs::File::open(&path)?, 0, 5)?;
/// assert_eq!(&map[..], b"hello");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn map_window(file: &File, offset: u64, len: u64) -> io::Result<memmap2::Mmap> {
    let len = usize::try_from(len).map_err(io::Error::other)?;
    // SAFETY: the mapping is read-only and private to this process, and
    // only read as bytes to hash. What mmap cannot rule out is another
    // process changing the file meanwhile: a write changes the bytes hashed
    // (as it would under read(2)), and a truncation makes the kernel end
    // this process with SIGBUS. Callers offer not to map (`mmap` false in
    // `open_data`; mdu's `--no-mmap` option and its help text say so).
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
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("in");
/// std::fs::write(&path, b"hello")?;
/// let map = mdu_io::input::map_window_populated(&std::fs::File::open(&path)?, 0, 5)?;
/// assert_eq!(&map[..], b"hello");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn map_window_populated(file: &File, offset: u64, len: u64) -> io::Result<memmap2::Mmap> {
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
/// `/dev/zero`), FIFO or socket has none and is refused before it is
/// opened.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("in");
/// std::fs::write(&path, [0u8; 100])?;
/// let (input, len) = mdu_io::input::open_data(&path, false)?;
/// assert!(matches!(input, mdu_io::input::Input::File(_)));
/// assert_eq!(len, 100);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_data(path: &Path, mmap: bool) -> Result<(Input, u64), Error> {
    refuse_unsized(path)?;
    let f = open_read(path)?;
    let len = sized_len(path, &f)?.ok_or_else(|| not_sized(path, &f))?;
    Ok((open_sized(f, len, mmap), len))
}

/// `f`, of `len` bytes, mapped or read (see [`open_data`]).
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("in");
/// std::fs::write(&path, [0u8; 100])?;
/// let input = mdu_io::input::open_sized(std::fs::File::open(&path)?, 100, true);
/// assert!(matches!(input, mdu_io::input::Input::Mapped(_)));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn open_sized(f: File, len: u64, mmap: bool) -> Input {
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
            return Input::Mapped(windows);
        }
    }
    Input::File(f)
}

/// Read until `buf` is full or the input ends; the number of bytes read.
///
/// ```
/// let mut buf = [0u8; 8];
/// assert_eq!(mdu_io::input::read_full(&mut &b"abc"[..], &mut buf)?, 3);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn read_full<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
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
