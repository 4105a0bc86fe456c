//! [`Source`]: the one input type of every tree this crate builds or checks,
//! and how each kind of source hands its blocks to the hashing code.

use std::fs::File;
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::Error;

/// Bytes of one read of a reader source (a multiple of every block size).
pub const READ_BUF_LEN: usize = 1 << 20;
/// Buffers in the read ring: one being hashed, one being read, one spare.
const RING: usize = 3;
/// Alignment of the read buffers (a page; what `O_DIRECT` needs).
const PAGE: usize = 4096;

type Chunk<'a> = Box<dyn AsRef<[u8]> + Send + 'a>;
type Chunks<'a> = Box<dyn Iterator<Item = io::Result<Chunk<'a>>> + Send + 'a>;

/// The data a tree is built over or checked against: bytes in memory,
/// pieces in memory (windows of a mapped file), a reader, or a path opened
/// when the work starts.
///
/// Build one with [`Source::bytes`], [`Source::chunks`], [`Source::reader`],
/// [`Source::seekable`] or [`Source::path`], or convert a `&[u8]`,
/// `&[u8; N]`, `&Vec<u8>`, `Vec<u8>`, [`Cursor`] or [`File`] with `into()`
/// (every entry point takes `impl Into<Source>`). All kinds go through the
/// same code and give the same bytes and the same errors:
///
/// * **In memory** (bytes, a cursor, chunks): blocks are hashed where they
///   lie, without a copy, shared among the rayon pool's threads; a block
///   split between two chunks is joined in a staging buffer of 64 KiB.
/// * **Readers** (files, block devices, pipes): large reads into a ring of
///   three reused, page-aligned buffers of [`READ_BUF_LEN`] bytes (a small
///   one when the source is known to be small). When the data is larger
///   than one buffer, a reader thread fills the next buffers while the
///   caller's thread hashes the last one, so reading overlaps hashing even
///   with one hashing thread; nothing is allocated or faulted in per read.
///
/// A source is read from its current position: the bytes of a reader or
/// cursor before it are not part of the data. A source that is not read to
/// its end (dm-verity with a pinned number of data blocks) is left where
/// the work stopped. Everything a source holds must be [`Send`]: a reader
/// is read on a thread of its own.
///
/// A source whose length is known when the work starts (bytes in memory, a
/// seekable reader, a path, or any source given [`Source::with_len`]) is
/// read up to that length and no further, and a source that ends before it
/// (a file truncated while it is read) is [`Error::UnexpectedEof`]: a
/// prefix of the data is never hashed as if it were the whole. Only chunks
/// and plain readers without a given length are read to wherever they end.
///
/// ```
/// use std::io::Cursor;
/// use mdu_verity::{dmverity, fsverity, Source};
///
/// let data = vec![7u8; 100_000];
/// let p = fsverity::Params::default();
/// let a = fsverity::digest(&data, &p)?;                              // bytes
/// let b = fsverity::digest(Source::reader(&data[..]), &p)?;          // a reader
/// let c = fsverity::digest(Source::chunks(data.chunks(999).map(Ok)), &p)?; // pieces
/// let d = fsverity::digest(Cursor::new(&data), &p)?;                 // a cursor
/// assert!(a == b && b == c && c == d);
///
/// // Verification without a pinned block count needs the length up front.
/// let p = dmverity::Params::default();
/// let mut hash = Cursor::new(Vec::new());
/// let root = dmverity::format(&data, &mut hash, &p)?.root_hash();
/// let windows = Source::chunks(data.chunks(5 * 4096).map(Ok)).with_len(data.len() as u64);
/// dmverity::verify(windows, &mut hash, &p, &root)?;
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub struct Source<'a> {
    kind: Kind<'a>,
    /// The length the caller gave ([`Source::with_len`]).
    len: Option<u64>,
}

enum Kind<'a> {
    /// Bytes in memory, from `at`.
    Mem { data: Chunk<'a>, at: usize },
    /// Pieces in memory, in order.
    Chunks(Chunks<'a>),
    /// A reader (seekable or not).
    Reader(Box<dyn ReadSeek + Send + 'a>),
    /// A file to open when the work starts.
    Path(PathBuf),
}

/// A reader that may be able to seek.
trait ReadSeek: Read {
    /// `Some` when the reader can seek.
    fn try_seek(&mut self, pos: SeekFrom) -> Option<io::Result<u64>>;
}

struct Plain<R>(R);
struct Seekable<R>(R);

impl<R: Read> Read for Plain<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read> ReadSeek for Plain<R> {
    fn try_seek(&mut self, _: SeekFrom) -> Option<io::Result<u64>> {
        None
    }
}

impl<R: Read> Read for Seekable<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read + Seek> ReadSeek for Seekable<R> {
    fn try_seek(&mut self, pos: SeekFrom) -> Option<io::Result<u64>> {
        Some(self.0.seek(pos))
    }
}

impl<'a> Source<'a> {
    /// Bytes in memory (or mapped into it), hashed where they lie.
    ///
    /// ```
    /// use mdu_verity::{fsverity, Source};
    /// let d = fsverity::digest(Source::bytes(b"abc"), &fsverity::Params::default())?;
    /// assert!(d.to_string().starts_with("sha256:700b6bd8"));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn bytes(data: &'a [u8]) -> Source<'a> {
        Source {
            kind: Kind::Mem {
                data: Box::new(data),
                at: 0,
            },
            len: None,
        }
    }

    /// Data that arrives in pieces already in memory, in order: for
    /// example successive windows of a mapped file, each dropped (unmapped)
    /// as soon as it has been hashed, so that memory stays bounded by one
    /// window. Pieces may have any lengths, empty ones included; an `Err`
    /// item stops the work and is returned as [`Error::Io`]. The total
    /// length is unknown until the last piece unless given with
    /// [`Source::with_len`] (dm-verity verification without a pinned
    /// number of blocks needs it).
    ///
    /// ```
    /// use mdu_verity::{fsverity, Source};
    /// let data = vec![3u8; 100_000];
    /// let p = fsverity::Params::default();
    /// let pieces = Source::chunks(data.chunks(10_000).map(Ok));
    /// assert_eq!(fsverity::digest(pieces, &p)?, fsverity::digest(&data, &p)?);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn chunks<I, C>(chunks: I) -> Source<'a>
    where
        I: IntoIterator<Item = io::Result<C>>,
        I::IntoIter: Send + 'a,
        C: AsRef<[u8]> + Send + 'a,
    {
        let it = chunks
            .into_iter()
            .map(|c| c.map(|c| Box::new(c) as Chunk<'a>));
        Source {
            kind: Kind::Chunks(Box::new(it)),
            len: None,
        }
    }

    /// A reader that cannot seek (a pipe, a decompressor), read to its end
    /// through the read ring. Its length is unknown unless given with
    /// [`Source::with_len`].
    ///
    /// ```
    /// use mdu_verity::{fsverity, Source};
    /// let p = fsverity::Params::default();
    /// let d = fsverity::digest(Source::reader(&b"abc"[..]), &p)?;
    /// assert_eq!(d, fsverity::digest(&b"abc"[..], &p)?);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn reader<R: Read + Send + 'a>(reader: R) -> Source<'a> {
        Source {
            kind: Kind::Reader(Box::new(Plain(reader))),
            len: None,
        }
    }

    /// A reader that can seek (a file, a block device): its length is the
    /// bytes from its current position to its end when the work starts
    /// (nothing after that is read, and a reader that ends earlier, such as
    /// a file truncated meanwhile, is [`Error::UnexpectedEof`]), and
    /// dm-verity verification of a range seeks to the range instead of
    /// reading up to it. A reader whose seeks fail as not seekable (a pipe
    /// opened as a file) is read to its end, as [`Source::reader`].
    ///
    /// ```
    /// use std::io::Cursor;
    /// use mdu_verity::{dmverity, Source};
    /// let data = vec![9u8; 4 * 4096];
    /// let p = dmverity::Params::default();
    /// let mut hash = Cursor::new(Vec::new());
    /// let root = dmverity::format(&data, &mut hash, &p)?.root_hash();
    /// dmverity::verify(Source::seekable(Cursor::new(&data)), &mut hash, &p, &root)?;
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn seekable<R: Read + Seek + Send + 'a>(reader: R) -> Source<'a> {
        Source {
            kind: Kind::Reader(Box::new(Seekable(reader))),
            len: None,
        }
    }

    /// The file at `path`, opened (for reading) only when the work starts,
    /// on the thread that does it; an error opening it is the work's
    /// [`Error::Io`]. [`fsverity::digest_many`](crate::fsverity::digest_many)
    /// reads small files whole and pairs their blocks with other files'.
    ///
    /// The path must name a regular file or a block device: its size is
    /// taken when it is opened (the file's size, or the device's by seeking
    /// to its end), and exactly that many bytes are read. Anything without
    /// a size (a character device such as `/dev/zero`, a FIFO, a socket)
    /// is [`Error::NotSized`], decided before it is opened or read; read
    /// such an input with [`Source::reader`] if it is known to end.
    ///
    /// ```
    /// use mdu_verity::{fsverity, Error, Source};
    /// let e = fsverity::digest(Source::path("/no/such/file"), &fsverity::Params::default());
    /// assert!(matches!(e, Err(Error::Io(_))));
    /// # #[cfg(target_os = "linux")]
    /// # {
    /// let e = fsverity::digest(Source::path("/dev/zero"), &fsverity::Params::default());
    /// assert!(matches!(e, Err(Error::NotSized { kind: "a character device" })));
    /// # }
    /// ```
    pub fn path(path: impl Into<PathBuf>) -> Source<'static> {
        Source {
            kind: Kind::Path(path.into()),
            len: None,
        }
    }

    /// Say that the source holds `len` bytes: it is then read no further,
    /// and a source that ends earlier is [`Error::UnexpectedEof`] (never
    /// the digest or tree of the shorter data). Sources in memory, seekable
    /// readers and paths know their length; chunks and plain readers need
    /// this where the length matters before the data is read, and to be
    /// held to it.
    ///
    /// ```
    /// use mdu_verity::{fsverity, Error, Source};
    /// let p = fsverity::Params::default();
    /// let first = fsverity::digest(Source::bytes(b"abcdef").with_len(3), &p)?;
    /// assert_eq!(first, fsverity::digest(&b"abc"[..], &p)?);
    /// // A reader that ends before the length it was said to hold.
    /// let short = fsverity::digest(Source::reader(&b"abc"[..]).with_len(6), &p);
    /// assert!(matches!(short, Err(Error::UnexpectedEof { expected: 6, got: 3 })));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn with_len(mut self, len: u64) -> Source<'a> {
        self.len = Some(len);
        self
    }

    /// Open a path source (a no-op for the other kinds); its size becomes
    /// the source's length unless one was given.
    fn open(&mut self) -> Result<(), Error> {
        if let Kind::Path(p) = &self.kind {
            let (f, size) = open_path(p)?;
            self.len = Some(self.len.unwrap_or(size));
            self.kind = Kind::Reader(Box::new(Seekable(f)));
        }
        Ok(())
    }

    /// The number of bytes the source holds, if it can tell without reading
    /// them: the length given to [`Source::with_len`], the bytes in memory,
    /// the size of a path's file or device, or the bytes from a seekable
    /// reader's position to its end (the position is kept; a reader that
    /// turns out not to seek, such as a pipe, has no length).
    pub(crate) fn len(&mut self) -> Result<Option<u64>, Error> {
        self.open()?;
        if self.len.is_some() {
            return Ok(self.len);
        }
        Ok(match &mut self.kind {
            Kind::Mem { data, at } => Some((mem(data).len() - *at) as u64),
            Kind::Chunks(_) | Kind::Path(_) => None,
            Kind::Reader(r) => reader_len(&mut **r)?,
        })
    }

    /// A small source's bytes, whole, in `buf` (cleared first) when the
    /// source holds at most `max` bytes by its own account (bytes, a path to
    /// a file or device, a seekable reader, a source given its length);
    /// `Ok(false)` leaves the source untouched for [`Source::feed`]. Memory
    /// sources are copied, so only sources that must be read anyway should
    /// come here. A source that ends before its length is
    /// [`Error::UnexpectedEof`]; bytes after it are not read.
    pub(crate) fn read_small(&mut self, max: u64, buf: &mut Vec<u8>) -> Result<bool, Error> {
        buf.clear();
        if let Kind::Path(p) = &self.kind {
            let (f, size) = open_path(p)?;
            let len = self.len.unwrap_or(size);
            self.len = Some(len);
            if len <= max {
                // Straight from the file: its `read_buf` does not zero the
                // buffer first, as a read through `dyn Read` would.
                buf.reserve(usize::try_from(len).unwrap_or(0));
                (&f).take(len).read_to_end(buf)?;
                return whole(buf, len);
            }
            self.kind = Kind::Reader(Box::new(Seekable(f)));
            return Ok(false);
        }
        let len = match self.len()? {
            Some(len) if len <= max => len,
            _ => return Ok(false),
        };
        match &mut self.kind {
            Kind::Mem { data, at } => {
                let d = &mem(data)[*at..];
                buf.extend_from_slice(&d[..d.len().min(len as usize)]);
                whole(buf, len)
            }
            Kind::Reader(r) => {
                buf.reserve(len as usize);
                (&mut **r).take(len).read_to_end(buf)?;
                whole(buf, len)
            }
            Kind::Chunks(_) | Kind::Path(_) => Ok(false),
        }
    }

    /// Hand the bytes from offset `skip` on, at most `limit` of them (and at
    /// most the length given to [`Source::with_len`]), to `sink` in order,
    /// as runs of whole `bs`-byte blocks, and return how many bytes there
    /// were and the trailing partial block. `sink` sees every whole block
    /// exactly once; an error from it stops the work and is returned, as is
    /// a read error after the blocks read before it were handed over.
    pub(crate) fn feed(
        mut self,
        skip: u64,
        limit: u64,
        bs: usize,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<Fed, Error> {
        debug_assert!(bs > 0 && READ_BUF_LEN.is_multiple_of(bs));
        // Where the source must reach: the end of the asked-for bytes or
        // its length when it has one (taken now, before anything is read),
        // whichever comes first; its end otherwise.
        let end = self.len()?.map(|len| len.min(skip.saturating_add(limit)));
        if end.is_some_and(|end| skip >= end) {
            // Asked for bytes past the source's end: nothing to read, and
            // none missing from what the source said it holds (the caller
            // sees no bytes, e.g. a missing data block).
            return Ok(Fed {
                bytes: 0,
                tail: Vec::new(),
            });
        }
        let limit = end.map_or(limit, |end| end.saturating_sub(skip));
        let (skipped, fed) = match self.kind {
            Kind::Mem { data, at } => {
                let all = &mem(&data)[at..];
                let from = usize::try_from(skip).map_or(all.len(), |s| s.min(all.len()));
                let d = &all[from..];
                let d = &d[..usize::try_from(limit).map_or(d.len(), |l| l.min(d.len()))];
                let whole = d.len() / bs * bs;
                if whole > 0 {
                    sink(&d[..whole])?;
                }
                let fed = Fed {
                    bytes: d.len() as u64,
                    tail: d[whole..].to_vec(),
                };
                (from as u64, fed)
            }
            Kind::Chunks(chunks) => feed_chunks(chunks, skip, limit, bs, sink)?,
            Kind::Reader(mut r) => {
                let skipped = skip_reader(&mut *r, skip)?;
                (skipped, feed_reader(&mut *r, limit, bs, sink)?)
            }
            Kind::Path(_) => unreachable!("opened by `len`"),
        };
        let got = skipped + fed.bytes;
        match end {
            Some(end) if got < end => Err(Error::UnexpectedEof { expected: end, got }),
            _ => Ok(fed),
        }
    }
}

impl<'a> From<&'a [u8]> for Source<'a> {
    fn from(data: &'a [u8]) -> Source<'a> {
        Source::bytes(data)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Source<'a> {
    fn from(data: &'a [u8; N]) -> Source<'a> {
        Source::bytes(data)
    }
}

impl<'a> From<&'a Vec<u8>> for Source<'a> {
    fn from(data: &'a Vec<u8>) -> Source<'a> {
        Source::bytes(data)
    }
}

impl From<Vec<u8>> for Source<'_> {
    fn from(data: Vec<u8>) -> Self {
        Source {
            kind: Kind::Mem {
                data: Box::new(data),
                at: 0,
            },
            len: None,
        }
    }
}

/// The cursor's bytes from its position on, hashed where they lie.
impl<'a, T: AsRef<[u8]> + Send + 'a> From<Cursor<T>> for Source<'a> {
    fn from(c: Cursor<T>) -> Source<'a> {
        let at = usize::try_from(c.position())
            .unwrap_or(usize::MAX)
            .min(c.get_ref().as_ref().len());
        Source {
            kind: Kind::Mem {
                data: Box::new(c.into_inner()),
                at,
            },
            len: None,
        }
    }
}

/// A file (or block device), read from its current position.
impl From<File> for Source<'_> {
    fn from(f: File) -> Self {
        Source::seekable(f)
    }
}

/// A file (or block device), read from its current position.
impl<'a> From<&'a File> for Source<'a> {
    fn from(f: &'a File) -> Source<'a> {
        Source::seekable(f)
    }
}

impl std::fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.kind {
            Kind::Mem { .. } => "bytes",
            Kind::Chunks(_) => "chunks",
            Kind::Reader(_) => "reader",
            Kind::Path(p) => return write!(f, "Source::path({p:?})"),
        };
        write!(f, "Source::{kind}(len: {:?})", self.len)
    }
}

/// What [`Source::feed`] found.
pub(crate) struct Fed {
    /// Bytes handed over or left in `tail` (up to the limit).
    pub(crate) bytes: u64,
    /// The trailing partial block (shorter than the block size).
    pub(crate) tail: Vec<u8>,
}

/// The bytes of a boxed chunk.
fn mem<'c>(c: &'c Chunk<'_>) -> &'c [u8] {
    AsRef::<[u8]>::as_ref(&**c)
}

/// `Ok(true)` if `buf` holds the `len` bytes it was to hold.
fn whole(buf: &[u8], len: u64) -> Result<bool, Error> {
    if (buf.len() as u64) < len {
        return Err(Error::UnexpectedEof {
            expected: len,
            got: buf.len() as u64,
        });
    }
    Ok(true)
}

/// What kind of file `t` is when it has no size to read up to.
fn unsized_kind(t: &std::fs::FileType) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_fifo() {
            return Some("a FIFO");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    let _ = t;
    None
}

/// Opens the file or block device at `p` for reading, with its size: the
/// file's, or the device's by seeking to its end (the position is left at
/// the start). What has no size is refused before it is opened (opening a
/// FIFO would wait for a writer) and again after (it may have been
/// replaced meanwhile); so is a directory.
fn open_path(p: &Path) -> Result<(File, u64), Error> {
    if let Some(kind) = unsized_kind(&std::fs::metadata(p)?.file_type()) {
        return Err(Error::NotSized { kind });
    }
    let mut f = File::open(p)?;
    let meta = f.metadata()?;
    if let Some(kind) = unsized_kind(&meta.file_type()) {
        return Err(Error::NotSized { kind });
    }
    if meta.is_dir() {
        return Err(Error::Directory);
    }
    if meta.is_file() {
        return Ok((f, meta.len()));
    }
    let end = f.seek(SeekFrom::End(0))?;
    f.seek(SeekFrom::Start(0))?;
    Ok((f, end))
}

/// The bytes from a reader's position to its end, the position kept; `None`
/// if it cannot seek (a plain reader, or a pipe behind a seekable one).
fn reader_len(r: &mut (dyn ReadSeek + Send + '_)) -> io::Result<Option<u64>> {
    let pos = match r.try_seek(SeekFrom::Current(0)) {
        None => return Ok(None),
        Some(Err(e)) if e.kind() == io::ErrorKind::NotSeekable => return Ok(None),
        Some(pos) => pos?,
    };
    let end = r.try_seek(SeekFrom::End(0)).unwrap_or(Ok(pos))?;
    r.try_seek(SeekFrom::Start(pos)).unwrap_or(Ok(pos))?;
    Ok(Some(end.saturating_sub(pos)))
}

/// Read until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn fill<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Move a reader `skip` bytes on: by seeking where it can, by reading
/// otherwise; returns how far it moved (less than `skip` only when a
/// reader that cannot seek ended first).
fn skip_reader(r: &mut (dyn ReadSeek + Send + '_), skip: u64) -> io::Result<u64> {
    if skip == 0 {
        return Ok(0);
    }
    if let Ok(off) = i64::try_from(skip) {
        match r.try_seek(SeekFrom::Current(off)) {
            Some(Err(e)) if e.kind() == io::ErrorKind::NotSeekable => {}
            Some(res) => return res.map(|_| skip),
            None => {}
        }
    }
    io::copy(&mut (&mut *r).take(skip), &mut io::sink())
}

/// Joins the pieces of a chunked source (or of `update` calls) into runs of
/// whole blocks: large pieces are handed over where they lie; small pieces
/// and the blocks that straddle two pieces are gathered in a staging buffer
/// of a few blocks, so that they are still hashed in pairs.
#[derive(Clone)]
pub(crate) struct Stager {
    bs: usize,
    stage: Vec<u8>,
    staged: usize,
}

impl Stager {
    /// Staging capacity: at least two blocks and 64 KiB.
    pub(crate) fn new(bs: usize) -> Stager {
        Stager {
            bs,
            stage: Vec::new(),
            staged: 0,
        }
    }

    fn cap(&self) -> usize {
        (65536 / self.bs).max(2) * self.bs
    }

    /// Take `data`, handing every run of whole blocks it completes to `sink`.
    pub(crate) fn push(
        &mut self,
        mut data: &[u8],
        sink: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let cap = self.cap();
        while !data.is_empty() {
            if self.staged == 0 && data.len() >= cap {
                // At a block boundary with much data: hash it where it lies.
                let whole = data.len() / self.bs * self.bs;
                sink(&data[..whole])?;
                data = &data[whole..];
                continue;
            }
            if self.stage.len() < cap {
                self.stage.resize(cap, 0);
            }
            let take = (cap - self.staged).min(data.len());
            self.stage[self.staged..self.staged + take].copy_from_slice(&data[..take]);
            self.staged += take;
            data = &data[take..];
            if self.staged == cap {
                self.staged = 0;
                sink(&self.stage[..cap])?;
            }
        }
        Ok(())
    }

    /// Hand over the whole blocks still staged; returns the partial block
    /// left after them.
    pub(crate) fn finish(
        &mut self,
        sink: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<Vec<u8>, Error> {
        let whole = self.staged / self.bs * self.bs;
        if whole > 0 {
            sink(&self.stage[..whole])?;
        }
        let tail = self.stage[whole..self.staged].to_vec();
        self.staged = 0;
        Ok(tail)
    }
}

/// Feeds chunks from offset `skip`; returns the bytes skipped (less than
/// `skip` if the chunks ended first) and what was fed.
fn feed_chunks(
    chunks: Chunks<'_>,
    skip: u64,
    mut limit: u64,
    bs: usize,
    sink: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
) -> Result<(u64, Fed), Error> {
    let to_skip = skip;
    let mut skip = skip;
    let mut stager = Stager::new(bs);
    let mut bytes = 0u64;
    for chunk in chunks {
        if limit == 0 {
            break;
        }
        let chunk = chunk?;
        let mut d: &[u8] = mem(&chunk);
        let s = usize::try_from(skip).map_or(d.len(), |s| s.min(d.len()));
        skip -= s as u64;
        d = &d[s..];
        d = &d[..usize::try_from(limit).map_or(d.len(), |l| l.min(d.len()))];
        limit -= d.len() as u64;
        bytes += d.len() as u64;
        stager.push(d, sink)?;
    }
    let tail = stager.finish(sink)?;
    Ok((to_skip - skip, Fed { bytes, tail }))
}

/// A read buffer aligned to a page, allocated once per call and reused.
struct ReadBuf {
    raw: Vec<u8>,
    off: usize,
}

impl ReadBuf {
    fn new(len: usize) -> ReadBuf {
        let raw = vec![0u8; len + PAGE - 1];
        let off = raw.as_ptr().align_offset(PAGE);
        // `align_offset` may decline; an unaligned buffer works as well.
        let off = if off < PAGE { off } else { 0 };
        ReadBuf { raw, off }
    }

    fn len(&self) -> usize {
        self.raw.len() + 1 - PAGE
    }

    fn buf(&self) -> &[u8] {
        &self.raw[self.off..self.off + self.len()]
    }

    fn buf_mut(&mut self) -> &mut [u8] {
        let len = self.len();
        &mut self.raw[self.off..self.off + len]
    }
}

/// A filled read buffer and how it ended.
type Filled = (ReadBuf, io::Result<usize>);

fn feed_reader(
    r: &mut (dyn ReadSeek + Send + '_),
    limit: u64,
    bs: usize,
    sink: &mut dyn FnMut(&[u8]) -> Result<(), Error>,
) -> Result<Fed, Error> {
    let mut r = r.take(limit);
    // A source known to be small gets a small first buffer (one block more
    // than it holds, so that a short read tells its end).
    let first_len = usize::try_from(limit)
        .ok()
        .and_then(|l| l.checked_add(1))
        .map_or(READ_BUF_LEN, |l| l.next_multiple_of(bs).min(READ_BUF_LEN));
    let mut first = ReadBuf::new(first_len);
    let got = fill(&mut r, first.buf_mut())?;
    if got < first_len {
        // All of it in one buffer: no thread.
        let whole = got / bs * bs;
        if whole > 0 {
            sink(&first.buf()[..whole])?;
        }
        return Ok(Fed {
            bytes: got as u64,
            tail: first.buf()[whole..got].to_vec(),
        });
    }
    std::thread::scope(|s| {
        let (full_tx, full_rx) = mpsc::sync_channel::<Filled>(RING);
        let (empty_tx, empty_rx) = mpsc::sync_channel::<ReadBuf>(RING);
        let reader = &mut r;
        let reused = usize::from(first_len == READ_BUF_LEN);
        s.spawn(move || {
            let mut made = reused;
            loop {
                let mut buf = if made < RING {
                    made += 1;
                    ReadBuf::new(READ_BUF_LEN)
                } else {
                    match empty_rx.recv() {
                        Ok(b) => b,
                        // The consumer stopped.
                        Err(_) => return,
                    }
                };
                let res = fill(reader, buf.buf_mut());
                let more = matches!(res, Ok(n) if n == READ_BUF_LEN);
                if full_tx.send((buf, res)).is_err() || !more {
                    return;
                }
            }
        });
        sink(first.buf())?;
        let mut bytes = first_len as u64;
        // The consumer never waits on a full `empty_tx`: at most RING
        // buffers exist. A short first buffer is not reused.
        if first_len == READ_BUF_LEN {
            let _ = empty_tx.try_send(first);
        }
        for (buf, res) in full_rx {
            let got = res?;
            let whole = got / bs * bs;
            if whole > 0 {
                sink(&buf.buf()[..whole])?;
            }
            bytes += got as u64;
            if got < READ_BUF_LEN {
                return Ok(Fed {
                    bytes,
                    tail: buf.buf()[whole..got].to_vec(),
                });
            }
            let _ = empty_tx.try_send(buf);
        }
        // The reader thread ends only after sending a short or failed read.
        Ok(Fed {
            bytes,
            tail: Vec::new(),
        })
    })
}

#[cfg(test)]
mod tests;
