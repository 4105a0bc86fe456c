//! Crash-safe conversion of a device in place, hotzone by hotzone.
//!
//! Encrypting, decrypting or reencrypting a disk where it lies means
//! overwriting the only copy of the data. Whatever the format, the loop is
//! the same, and it is written once here ([`run`]):
//!
//! 1. read the old bytes of the next hotzone (a range of the data);
//! 2. **protect** them: the [`Journal`] writes what lets a crash be
//!    repaired (a copy of the bytes, or a digest of each block) and commits
//!    a record naming the hotzone, synced;
//! 3. **convert** them, write them where they go and sync the device;
//! 4. **commit progress**: the journal records the hotzone as converted.
//!
//! A crash anywhere leaves at most the hotzone of the newest record in
//! doubt, and the journal's own resume decides it before anything is
//! written. The next hotzone's old bytes are read while this one is
//! converted and written (they never lie where this one is written), so
//! the device reads, the conversion and the writes overlap.
//!
//! Two journals implement the trait: the LUKS2 reencryption record of the
//! `mdu-luks2` crate (the header's segments, the keyslot area's checksums
//! or copy, exactly as cryptsetup 2.6 records them) and the journal file of
//! a dm-crypt plain-mode conversion ([`plain`]), whose format is written
//! down in its module; [`journal_file`] creates, locks and removes that journal
//! as a file.
//!
//! ```
//! use std::fs::File;
//! use mdu_inplace::{run, DeviceError, Hotzone, Journal, Outcome};
//!
//! /// A toy journal: flips every bit of a file, 4 KiB at a time, and keeps
//! /// its record in memory (a real one writes it to stable storage).
//! struct Invert { data: File, len: u64, done: u64, log: Vec<String> }
//!
//! impl Journal for Invert {
//!     type Error = DeviceError;
//!     const PROTECTS_NEXT: bool = false;
//!     fn device(&self) -> &File { &self.data }
//!     fn progress(&self) -> (u64, u64) { (self.done, self.len) }
//!     fn hotzone(&self, done: u64) -> Option<Hotzone> {
//!         let len = (self.len - done).min(4096);
//!         (len > 0).then(|| Hotzone::in_place(done, len, done + len))
//!     }
//!     fn protect(&mut self, hz: &Hotzone, _old: &[u8], _next: Option<&[u8]>) -> Result<(), DeviceError> {
//!         self.log.push(format!("hot {}", hz.pos));
//!         Ok(())
//!     }
//!     fn convert(&self, _hz: &Hotzone, buf: &mut [u8]) -> Result<(), DeviceError> {
//!         buf.iter_mut().for_each(|b| *b = !*b);
//!         Ok(())
//!     }
//!     fn converted(&mut self, hz: &Hotzone, _written: &[u8]) -> Result<(), DeviceError> {
//!         self.done = hz.done;
//!         Ok(())
//!     }
//!     fn finish(&mut self) -> Result<(), DeviceError> { Ok(()) }
//! }
//!
//! let path = std::env::temp_dir().join(format!("mdu-inplace-doc-{}", std::process::id()));
//! std::fs::write(&path, vec![0x0fu8; 10_000])?;
//! let data = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
//! let mut j = Invert { data, len: 10_000, done: 0, log: Vec::new() };
//! assert_eq!(run(&mut j, &mut |_, _| {}, &|| false)?, Outcome::Finished);
//! assert_eq!(j.log, ["hot 0", "hot 4096", "hot 8192"]);
//! assert!(std::fs::read(&path)?.iter().all(|&b| b == 0xf0));
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use zeroize::Zeroizing;

pub mod journal_file;
pub mod lock;
pub mod plain;

/// One hotzone: `len` bytes at position `pos` of the data, read from
/// device offset `from` and written at `to`.
///
/// ```
/// let hz = mdu_inplace::Hotzone::in_place(4096, 4096, 8192);
/// assert_eq!((hz.from, hz.to, hz.done), (4096, 4096, 8192));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hotzone {
    /// The journal's own number for it (the plain journal's chunk
    /// number; 0 where a journal needs none).
    pub seq: u64,
    /// Its position in the data: what the cipher's sector numbers count
    /// from.
    pub pos: u64,
    /// Its length in bytes.
    pub len: u64,
    /// The device offset of its old bytes.
    pub from: u64,
    /// The device offset its converted bytes are written at.
    pub to: u64,
    /// The bytes converted once this hotzone is.
    pub done: u64,
}

impl Hotzone {
    /// A hotzone written where it is read, at device offset `pos`, with
    /// `done` bytes converted after it and its number left 0.
    ///
    /// ```
    /// let hz = mdu_inplace::Hotzone::in_place(0, 512, 512);
    /// assert_eq!(hz.len, 512);
    /// ```
    pub fn in_place(pos: u64, len: u64, done: u64) -> Hotzone {
        Hotzone {
            seq: 0,
            pos,
            len,
            from: pos,
            to: pos,
            done,
        }
    }
}

/// What records an in-place run: which hotzone is being converted, what
/// protects its old bytes, and how far the run got.
///
/// [`run`] calls, for each hotzone: [`protect`](Journal::protect) with its
/// old bytes (their protection and the record naming the hotzone must be
/// on stable storage when it returns), [`convert`](Journal::convert),
/// then, after the converted bytes are written and (with
/// [`sync_each`](Journal::sync_each)) synced,
/// [`converted`](Journal::converted). After the last hotzone, or at once
/// when a resumed run had none left, it syncs the device and calls
/// [`finish`](Journal::finish).
pub trait Journal {
    /// The journal's error; device reads and writes come as
    /// [`DeviceError`].
    type Error: From<DeviceError>;

    /// Whether [`protect`](Journal::protect) needs the next hotzone's old
    /// bytes (its record holds their digest). Then the next hotzone is
    /// read before this one is protected, not while it is written.
    const PROTECTS_NEXT: bool;

    /// The data device.
    fn device(&self) -> &File;

    /// Whether the device is synced after each hotzone (false only for a
    /// run that records no progress).
    fn sync_each(&self) -> bool {
        true
    }

    /// Bytes converted so far, and in all.
    fn progress(&self) -> (u64, u64);

    /// The hotzone after `done` bytes are converted; `None` when all are.
    fn hotzone(&self, done: u64) -> Option<Hotzone>;

    /// The old bytes of `hz` where the journal holds them itself (a copy
    /// a resume proved to be the right one), instead of the device.
    fn old_bytes(&mut self, hz: &Hotzone) -> Option<Zeroizing<Vec<u8>>> {
        let _ = hz;
        None
    }

    /// Protects the old bytes `old` of `hz` and commits the record that
    /// names it; `next` are the next hotzone's old bytes when
    /// [`PROTECTS_NEXT`](Journal::PROTECTS_NEXT) (`None` for the last).
    fn protect(&mut self, hz: &Hotzone, old: &[u8], next: Option<&[u8]>)
    -> Result<(), Self::Error>;

    /// Converts `buf`, the old bytes of `hz`.
    fn convert(&self, hz: &Hotzone, buf: &mut [u8]) -> Result<(), Self::Error>;

    /// `hz` is written (as `written`) and synced: count it converted.
    fn converted(&mut self, hz: &Hotzone, written: &[u8]) -> Result<(), Self::Error>;

    /// Every hotzone is converted and the device synced: finish the run
    /// (the final record, the clean-up).
    fn finish(&mut self) -> Result<(), Self::Error>;

    /// The run stops between hotzones (the device is synced): record what
    /// is not yet recorded.
    fn interrupted(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// How a run ended.
///
/// ```
/// use mdu_inplace::Outcome;
/// assert_ne!(Outcome::Finished, Outcome::Interrupted { done: 0, total: 1 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every byte is converted and the run finished.
    Finished,
    /// Stopped between hotzones, with `done` of `total` bytes converted
    /// and recorded: a resume goes on from there.
    Interrupted {
        /// Bytes converted.
        done: u64,
        /// Bytes in all.
        total: u64,
    },
}

/// What the engine was doing when the data device failed.
///
/// ```
/// assert_eq!(mdu_inplace::Op::Read.to_string(), "read");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Reading old bytes.
    Read,
    /// Writing converted bytes.
    Write,
    /// Syncing the device.
    Sync,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Sync => "sync",
        })
    }
}

/// A read, write or sync of the data device that failed, with where.
///
/// ```
/// use mdu_inplace::{DeviceError, Op};
/// let e = DeviceError { op: Op::Read, offset: 4096, len: 512, error: std::io::ErrorKind::UnexpectedEof.into() };
/// assert!(e.is_eof() && e.to_string().contains("4096"));
/// ```
#[derive(Debug)]
pub struct DeviceError {
    /// What failed.
    pub op: Op,
    /// The device offset.
    pub offset: u64,
    /// The bytes asked for.
    pub len: u64,
    /// The system's error.
    pub error: io::Error,
}

impl DeviceError {
    /// Whether the device ended before the bytes asked for (it shrank, or
    /// is not the device the run was for).
    ///
    /// ```
    /// # use mdu_inplace::{DeviceError, Op};
    /// let e = DeviceError { op: Op::Sync, offset: 0, len: 0, error: std::io::Error::other("x") };
    /// assert!(!e.is_eof());
    /// ```
    pub fn is_eof(&self) -> bool {
        self.error.kind() == io::ErrorKind::UnexpectedEof
    }
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.op {
            Op::Sync => write!(f, "sync of the data device failed: {}", self.error),
            op => write!(
                f,
                "{op} of {} bytes at offset {} of the data device failed: {}",
                self.len, self.offset, self.error
            ),
        }
    }
}

impl std::error::Error for DeviceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Reads `buf.len()` bytes at `offset` of `dev`.
fn read(dev: &File, buf: &mut [u8], offset: u64) -> Result<(), DeviceError> {
    dev.read_exact_at(buf, offset).map_err(|error| DeviceError {
        op: Op::Read,
        offset,
        len: buf.len() as u64,
        error,
    })
}

/// Syncs the data of `dev`.
fn sync(dev: &File) -> Result<(), DeviceError> {
    dev.sync_data().map_err(|error| DeviceError {
        op: Op::Sync,
        offset: 0,
        len: 0,
        error,
    })
}

/// The old bytes of `hz`: the journal's own copy, or read from the device
/// into `buf`.
fn fill<J: Journal>(j: &mut J, hz: &Hotzone, buf: &mut Zeroizing<Vec<u8>>) -> Result<(), J::Error> {
    if let Some(b) = j.old_bytes(hz) {
        *buf = b;
        return Ok(());
    }
    buf.resize(hz.len as usize, 0);
    Ok(read(j.device(), buf, hz.from)?)
}

/// Converts hotzone after hotzone until the data are done, then finishes
/// the run. `progress(done, total)` is called after each hotzone; when
/// `stop()` turns true between hotzones, the device is synced, the
/// journal records what it has not yet and the run ends
/// ([`Outcome::Interrupted`]).
///
/// # Errors
///
/// The journal's, and the device's as [`DeviceError`]. After any error the
/// journal still describes a state its resume repairs.
///
/// (Example: the [crate documentation](crate).)
pub fn run<J: Journal + Sync>(
    j: &mut J,
    progress: &mut dyn FnMut(u64, u64),
    stop: &dyn Fn() -> bool,
) -> Result<Outcome, J::Error> {
    let (done, total) = j.progress();
    let (mut cur, mut next) = (Zeroizing::new(Vec::new()), Zeroizing::new(Vec::new()));
    let mut hot = j.hotzone(done);
    if let Some(hz) = &hot {
        fill(j, hz, &mut cur)?;
    }
    while let Some(hz) = hot {
        if stop() {
            sync(j.device())?;
            j.interrupted()?;
            let (done, total) = j.progress();
            return Ok(Outcome::Interrupted { done, total });
        }
        let ahead = j.hotzone(hz.done);
        // The next hotzone's old bytes: read now when the record needs
        // them, else while this one is converted and written (they lie
        // outside where this one is written).
        let have_next = match &ahead {
            Some(a) if J::PROTECTS_NEXT => {
                fill(j, a, &mut next)?;
                true
            }
            Some(a) => match j.old_bytes(a) {
                Some(b) => {
                    next = b;
                    true
                }
                None => false,
            },
            None => true,
        };
        j.protect(
            &hz,
            &cur,
            ahead
                .as_ref()
                .filter(|_| J::PROTECTS_NEXT)
                .map(|_| &next[..]),
        )?;
        let this = &*j;
        std::thread::scope(|sc| -> Result<(), J::Error> {
            let reader = ahead.filter(|_| !have_next).map(|a| {
                next.resize(a.len as usize, 0);
                let (dev, buf) = (this.device(), &mut next);
                sc.spawn(move || read(dev, buf, a.from))
            });
            this.convert(&hz, &mut cur)?;
            this.device()
                .write_all_at(&cur, hz.to)
                .map_err(|error| DeviceError {
                    op: Op::Write,
                    offset: hz.to,
                    len: hz.len,
                    error,
                })?;
            if this.sync_each() {
                sync(this.device())?;
            }
            match reader.map(|r| r.join()) {
                Some(Ok(r)) => Ok(r?),
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                None => Ok(()),
            }
        })?;
        j.converted(&hz, &cur)?;
        progress(hz.done, total);
        std::mem::swap(&mut cur, &mut next);
        hot = ahead;
    }
    sync(j.device())?;
    j.finish()?;
    Ok(Outcome::Finished)
}
