//! The journal of a dm-crypt plain-mode conversion in place: encrypting
//! or decrypting a device or image where it lies, optionally moving the
//! data by a header area, resumable at every moment and bound to the
//! device it protects.
//!
//! Data at position `p` (from the start of the data) is read at
//! `in_base + p` and written at `out_base + p`. Moving down (`out_base <
//! in_base`), front to back is safe: every later read lies above the chunk
//! just written. Moving up, the chunks go back to front: every later read
//! lies below the chunk just read, and so below where it was written.
//! Without a move the two orders are the same.
//!
//! # Format (version 2)
//!
//! All integers little-endian; every SHA-256 below is of the bytes named.
//!
//! | bytes | what |
//! |---|---|
//! | 0..4096 | the header, written once when the run starts |
//! | 4096..8192, 8192..12288 | two record slots, written in turn (record `seq` in slot `seq % 2`) |
//! | 12288.. | two copy areas of `chunk` bytes: the old bytes of chunk `k` go to area `k % 2` |
//!
//! The header: `MDUJRNL2` at 0; at 8 the digest of the run's parameters
//! ([`Params`]: direction, both bases, sector size, cipher and a one-way
//! digest of the key); at 40 the data length; at 48 the chunk size; at 56
//! and 64 where the data is read and written (`in_base`, `out_base`); at
//! 72 the SHA-256 of the old bytes of the last chunk in the run's order,
//! which the run writes last; at 4064 the SHA-256 of bytes 0..4064.
//!
//! A record: `MDUREC02` at 0; at 8 its sequence number; at 16 its state (1:
//! chunk `k` is about to be written, 2: every chunk is written, the ends
//! are being finished); at 17 whether the copy of chunk `k` is in its area;
//! at 24 `k` (for state 2: the number of chunks); at 32 the SHA-256 of the
//! header (so a record cannot be spliced into another journal); at 64 the
//! SHA-256 of chunk `k`'s old bytes; at 96 that of chunk `k + 1`'s (zero
//! when there is none); at 128 the SHA-256 of chunk `k - 1` as written
//! (zero when `k` is 0; for state 2, of the last chunk); at 4064 the
//! SHA-256 of bytes 0..4064.
//!
//! # The rules
//!
//! The run writes chunk `k` only after the record of `k` (and the copy of
//! its old bytes) is synced, and writes the next record only after the
//! chunk is synced; a chunk's write never covers a later chunk's old bytes.
//! So at most chunks `k` and `k + 1` of the newest valid record are in
//! doubt, even when the newest record of all was lost. A resume decides
//! each of them before it writes anything:
//!
//! - its old bytes still on the device (their SHA-256 matches): converted
//!   from the device;
//! - else its copy in the journal matches: converted from the copy;
//! - else refused: a damaged journal is never trusted.
//!
//! And the device must be the one the journal was written for: the chunk
//! written before `k` must hash to what the record says was written; where
//! there is none, the last chunk's old bytes must hash to the header's sum;
//! where that chunk is itself in doubt and the data do not move, every
//! sector of a chunk taken from a copy must hold either its old or its new
//! bytes. What cannot be proven this way is refused, with the device
//! untouched.
//!
//! The journal is a file the caller creates and locks: [`Plain::start`]
//! writes its header and first record and syncs them, so a caller that
//! creates it without a name (`O_TMPFILE`) and names it only afterwards
//! never leaves an incomplete journal behind. It holds a chunk of
//! plaintext: make it readable by its owner only. [`Journal::finish`] wipes
//! the copies; the caller removes the file then.
//!
//! ```
//! use mdu_dmcrypt::{CipherSpec, Direction, Geometry, SectorCipher, WeakKeys};
//! use mdu_inplace::plain::{Params, Plain};
//! # let dir = std::env::temp_dir().join(format!("mdu-plain-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! let key: Vec<u8> = (0..64).collect();
//! let spec = CipherSpec::parse("aes-xts-plain64")?;
//! let cipher = SectorCipher::new(spec, &key, Geometry::new(512, 0, false)?, WeakKeys::Refuse)?;
//! let plain = vec![0x5au8; 1 << 20];
//! std::fs::write(dir.join("disk"), &plain)?;
//! let open = |name: &str| std::fs::OpenOptions::new().read(true).write(true).create(true).open(dir.join(name));
//! let params = Params { direction: Direction::Encrypt, in_base: 0, out_base: 0, sector_size: 512,
//!     cipher: "aes-xts-plain64".into(), key_check: Params::key_check(&key) };
//! let mut run = Plain::start(open("journal")?, open("disk")?, &cipher, params, 256 << 10)?;
//! mdu_inplace::run(&mut run, &mut |_, _| {}, &|| false)?;
//! // The same bytes as an encryption into another file.
//! let mut expected = plain.clone();
//! cipher.crypt(Direction::Encrypt, 0, &mut expected)?;
//! assert!(std::fs::read(dir.join("disk"))? == expected);
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

use mdu_dmcrypt::{Direction, SectorCipher};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::{DeviceError, Hotzone, Journal, Op};

/// SHA-256 of the concatenated `parts`.
fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// The largest chunk a journal records (1 MiB per thread, up to 1024
/// threads).
///
/// ```
/// assert_eq!(mdu_inplace::plain::MAX_CHUNK, 1 << 30);
/// ```
pub const MAX_CHUNK: u64 = 1 << 30;
const HEADER_MAGIC: &[u8; 8] = b"MDUJRNL2";
const OLD_MAGIC: &[u8; 8] = b"MDUJRNL1";
const RECORD_MAGIC: &[u8; 8] = b"MDUREC02";
const SLOT: usize = 4096;
const COPIES: u64 = 3 * SLOT as u64;
const HOT: u8 = 1;
const FINISHED: u8 = 2;

/// What a run is bound to: a resume must give the same.
///
/// ```
/// use mdu_inplace::plain::Params;
/// let p = Params { direction: mdu_dmcrypt::Direction::Decrypt, in_base: 4096, out_base: 0,
///     sector_size: 512, cipher: "aes-xts-plain64".into(), key_check: Params::key_check(&[1; 64]) };
/// assert_eq!(p.in_base, 4096);
/// ```
#[derive(Clone, Debug)]
pub struct Params {
    /// What the run does.
    pub direction: Direction,
    /// Where the data is read (the data's byte 0 on the device).
    pub in_base: u64,
    /// Where the data is written.
    pub out_base: u64,
    /// The cipher's sector size.
    pub sector_size: u32,
    /// The cipher spec as given (compared without case).
    pub cipher: String,
    /// A one-way digest of the key ([`Params::key_check`]).
    pub key_check: [u8; 32],
}

impl Params {
    /// The digest of `key` a journal records: SHA-256 of a label and the
    /// key, so the journal tells a wrong key without holding it.
    ///
    /// ```
    /// use mdu_inplace::plain::Params;
    /// assert_ne!(Params::key_check(&[1; 32]), Params::key_check(&[2; 32]));
    /// ```
    pub fn key_check(key: &[u8]) -> [u8; 32] {
        sha256(&[b"mdu crypt --in-place journal: key\0", key])
    }

    fn digest(&self) -> [u8; 32] {
        sha256(&[
            b"mdu crypt --in-place journal v2\0",
            &[u8::from(self.direction.is_encrypt())],
            &self.in_base.to_le_bytes(),
            &self.out_base.to_le_bytes(),
            &self.sector_size.to_le_bytes(),
            self.cipher.to_ascii_lowercase().as_bytes(),
            &[0],
            &self.key_check,
        ])
    }
}

/// Why a run could not start, resume or go on.
///
/// ```
/// let e = mdu_inplace::plain::PlainError::Refused("a journal of format 1".into());
/// assert!(e.to_string().contains("format 1"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum PlainError {
    /// The data device failed.
    Device(DeviceError),
    /// The journal could not be read or written (`action` says which).
    Journal {
        /// What was being done.
        action: &'static str,
        /// The system's error.
        error: io::Error,
    },
    /// The journal cannot be trusted, or does not belong to this device;
    /// the message says why, and nothing was changed.
    Refused(String),
    /// The journal belongs to a run with other [`Params`].
    OtherRun,
    /// The data cannot be converted as asked (`offset` on the device).
    Data {
        /// Where on the device.
        offset: u64,
        /// The rule broken.
        rule: String,
    },
    /// The cipher refused the data.
    Cipher(mdu_dmcrypt::Error),
}

impl fmt::Display for PlainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlainError::Device(e) => e.fmt(f),
            PlainError::Journal { action, error } => write!(f, "{action}: {error}"),
            PlainError::Refused(m) => f.write_str(m),
            PlainError::OtherRun => f.write_str(
                "the journal was written by a run with another cipher, key, sector size, data \
                 offset or direction: give the same ones to resume it",
            ),
            PlainError::Data { offset, rule } => write!(f, "at byte {offset}: {rule}"),
            PlainError::Cipher(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for PlainError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PlainError::Device(e) => Some(e),
            PlainError::Journal { error, .. } => Some(error),
            PlainError::Cipher(e) => Some(e),
            _ => None,
        }
    }
}

impl From<DeviceError> for PlainError {
    fn from(e: DeviceError) -> PlainError {
        PlainError::Device(e)
    }
}

fn refused(rule: impl fmt::Display) -> PlainError {
    PlainError::Refused(format!("{rule}; nothing was changed"))
}

/// The run's data length and chunk size, fixed when it starts.
#[derive(Clone, Copy)]
struct Plan {
    data_len: u64,
    chunk: u64,
}

impl Plan {
    fn chunks(&self) -> u64 {
        self.data_len.div_ceil(self.chunk)
    }
}

/// One valid record.
struct Record {
    seq: u64,
    state: u8,
    has_copy: bool,
    k: u64,
    this: [u8; 32],
    next: [u8; 32],
    prev_out: [u8; 32],
}

/// A plain-mode conversion in place under its journal: the [`Journal`]
/// that [`run`](crate::run) drives.
pub struct Plain<'c> {
    journal: File,
    data: File,
    cipher: &'c SectorCipher,
    params: Params,
    plan: Plan,
    seq: u64,
    header_sum: [u8; 32],
    /// The first chunk of this process's run (the number of chunks when
    /// every chunk is written).
    first: u64,
    /// Chunks converted by this process so far, after `first`.
    converted: u64,
    /// Old bytes a resume took from the journal's copies, by chunk.
    copies: Vec<(u64, Zeroizing<Vec<u8>>)>,
    /// SHA-256 of the chunk before the next as written.
    prev_out: [u8; 32],
    /// Whether the final record was written (by a run or before a resume).
    all_written: bool,
}

impl fmt::Debug for Plain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plain")
            .field("params", &self.params)
            .field("data_len", &self.plan.data_len)
            .field("chunk", &self.plan.chunk)
            .field("first", &self.first)
            .finish_non_exhaustive()
    }
}

/// The size of the open file or block device `f`.
fn device_len(mut f: &File) -> Result<u64, PlainError> {
    f.seek(SeekFrom::End(0)).map_err(|error| {
        PlainError::Device(DeviceError {
            op: Op::Read,
            offset: 0,
            len: 0,
            error,
        })
    })
}

fn read_dev(f: &File, buf: &mut [u8], offset: u64) -> Result<(), PlainError> {
    f.read_exact_at(buf, offset).map_err(|error| {
        PlainError::Device(DeviceError {
            op: Op::Read,
            offset,
            len: buf.len() as u64,
            error,
        })
    })
}

impl<'c> Plain<'c> {
    /// Starts a run: checks the data, writes the journal's header and first
    /// record into `journal` (an empty file) and syncs them. Nothing of
    /// `data` is written here.
    ///
    /// `chunk` is the hotzone length (at most [`MAX_CHUNK`]).
    ///
    /// # Errors
    ///
    /// [`PlainError::Data`] for data that are empty, not whole sectors, or end
    /// before `in_base`; I/O errors.
    ///
    /// (Example: the [module documentation](self).)
    pub fn start(
        journal: File,
        data: File,
        cipher: &'c SectorCipher,
        params: Params,
        chunk: u64,
    ) -> Result<Plain<'c>, PlainError> {
        let len = device_len(&data)?;
        let ss = u64::from(params.sector_size);
        let data_len = len
            .checked_sub(params.in_base)
            .ok_or_else(|| PlainError::Data {
                offset: len,
                rule: format!(
                    "the device ends before byte {}, where the data start",
                    params.in_base
                ),
            })?;
        if data_len == 0 {
            return Err(PlainError::Data {
                offset: params.in_base,
                rule: format!("no data: the input must hold at least one {ss}-byte sector"),
            });
        }
        if !data_len.is_multiple_of(ss) {
            return Err(PlainError::Data {
                offset: len - data_len % ss,
                rule: format!(
                    "{} trailing bytes are not a whole sector: the data must be a whole number of {ss}-byte sectors",
                    data_len % ss
                ),
            });
        }
        let chunk = chunk.clamp(ss, MAX_CHUNK) / ss * ss;
        let mut p = Plain {
            journal,
            data,
            cipher,
            params,
            plan: Plan { data_len, chunk },
            seq: 0,
            header_sum: [0; 32],
            first: 0,
            converted: 0,
            copies: Vec::new(),
            prev_out: [0; 32],
            all_written: false,
        };
        let n = p.plan.chunks();
        let sum_of = |k: u64| -> Result<[u8; 32], PlainError> {
            let mut b = Zeroizing::new(vec![0u8; p.len_of(k)]);
            read_dev(&p.data, &mut b, p.params.in_base + p.position(k))?;
            Ok(sha256(&[&b]))
        };
        let first = sum_of(0)?;
        let second = if n > 1 { sum_of(1)? } else { [0; 32] };
        let last = sum_of(n - 1)?;
        let mut h = [0u8; SLOT];
        h[..8].copy_from_slice(HEADER_MAGIC);
        h[8..40].copy_from_slice(&p.params.digest());
        h[40..48].copy_from_slice(&data_len.to_le_bytes());
        h[48..56].copy_from_slice(&chunk.to_le_bytes());
        h[56..64].copy_from_slice(&p.params.in_base.to_le_bytes());
        h[64..72].copy_from_slice(&p.params.out_base.to_le_bytes());
        h[72..104].copy_from_slice(&last);
        let sum = sha256(&[&h[..SLOT - 32]]);
        h[SLOT - 32..].copy_from_slice(&sum);
        p.header_sum = sha256(&[&h]);
        p.journal
            .write_all_at(&h, 0)
            .map_err(|error| PlainError::Journal {
                action: "write the journal",
                error,
            })?;
        p.record(HOT, false, 0, &first, &second, &[0; 32])?;
        Ok(p)
    }

    /// Opens the journal of an interrupted run, checks it against `params`
    /// and the device, and decides where the run goes on. Nothing is
    /// written here.
    ///
    /// # Errors
    ///
    /// [`PlainError::Refused`] for a journal that is damaged, of another format,
    /// or of another device; [`PlainError::OtherRun`] for other parameters; I/O
    /// errors.
    ///
    /// ```no_run
    /// # fn f(j: std::fs::File, d: std::fs::File, c: &mdu_dmcrypt::SectorCipher, p: mdu_inplace::plain::Params) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut run = mdu_inplace::plain::Plain::resume(j, d, c, p)?;
    /// mdu_inplace::run(&mut run, &mut |_, _| {}, &|| false)?;
    /// # Ok(()) }
    /// ```
    pub fn resume(
        journal: File,
        data: File,
        cipher: &'c SectorCipher,
        params: Params,
    ) -> Result<Plain<'c>, PlainError> {
        let mut h = [0u8; SLOT];
        if journal.read_exact_at(&mut h, 0).is_err() {
            return Err(refused(
                "the journal is shorter than its header: it is damaged, and which chunks were \
                 converted cannot be told",
            ));
        }
        if &h[..8] == OLD_MAGIC {
            return Err(refused(
                "a journal of format 1, which this version does not resume",
            ));
        }
        if &h[..8] != HEADER_MAGIC {
            return Err(refused("not an mdu crypt --in-place journal"));
        }
        if h[SLOT - 32..] != sha256(&[&h[..SLOT - 32]]) {
            return Err(refused(
                "the journal's header is damaged (its checksum does not match)",
            ));
        }
        if h[8..40] != params.digest() {
            return Err(PlainError::OtherRun);
        }
        let u = |at: usize| u64::from_le_bytes(h[at..at + 8].try_into().expect("8 bytes"));
        let plan = Plan {
            data_len: u(40),
            chunk: u(48),
        };
        let (in_base, out_base) = (u(56), u(64));
        let mut last = [0u8; 32];
        last.copy_from_slice(&h[72..104]);
        if plan.chunk == 0
            || plan.chunk > MAX_CHUNK
            || plan.data_len == 0
            || in_base != params.in_base
            || out_base != params.out_base
        {
            return Err(refused("the journal's header is not one mdu writes"));
        }
        let mut p = Plain {
            journal,
            data,
            cipher,
            params,
            plan,
            seq: 0,
            header_sum: sha256(&[&h]),
            first: 0,
            converted: 0,
            copies: Vec::new(),
            prev_out: [0; 32],
            all_written: false,
        };
        let n = plan.chunks();
        let r = p.newest_record(n).ok_or_else(|| {
            refused(
                "the journal holds no valid record (both slots are damaged): which chunks were \
                 converted cannot be told",
            )
        })?;
        p.seq = r.seq;
        // The device's size: a run never makes it shorter than where its
        // data lie, except the last step of a decryption that moves them.
        let device_len = device_len(&p.data)?;
        let end = in_base.max(out_base).saturating_add(plan.data_len);
        let short = if r.state == FINISHED {
            device_len < out_base.saturating_add(plan.data_len)
        } else {
            device_len < end
        };
        if short {
            return Err(refused(format!(
                "the device is {device_len} bytes, shorter than the run's data ({} bytes from \
                 byte {}): it is not the device this journal was written for",
                plan.data_len,
                in_base.max(out_base)
            )));
        }
        let hash_new = |k: u64| -> Result<[u8; 32], PlainError> {
            let mut b = Zeroizing::new(vec![0u8; p.len_of(k)]);
            read_dev(&p.data, &mut b, out_base + p.position(k))?;
            Ok(sha256(&[&b]))
        };
        let foreign = || {
            refused(
                "the device does not hold what this journal's run wrote: it is not the device \
                 the journal was written for, or it was changed since",
            )
        };
        if r.state == FINISHED {
            if hash_new(n - 1)? != r.prev_out {
                return Err(foreign());
            }
            p.first = n;
            p.all_written = true;
            return Ok(p);
        }
        let k = r.k;
        // Identity, where a sum says what the device must hold.
        let mut proven = false;
        if k > 0 {
            if hash_new(k - 1)? != r.prev_out {
                return Err(foreign());
            }
            proven = true;
        } else if n - 1 > k + 1 {
            let mut b = Zeroizing::new(vec![0u8; p.len_of(n - 1)]);
            read_dev(&p.data, &mut b, in_base + p.position(n - 1))?;
            if sha256(&[&b]) != last {
                return Err(foreign());
            }
            proven = true;
        }
        // Each chunk in doubt: its old bytes on the device, or a copy
        // proven by its sum, or a refusal.
        let decide = |c: u64,
                      sum: &[u8; 32],
                      copy_ok: bool|
         -> Result<Option<Zeroizing<Vec<u8>>>, PlainError> {
            let mut on_device = Zeroizing::new(vec![0u8; p.len_of(c)]);
            read_dev(&p.data, &mut on_device, in_base + p.position(c))?;
            if sha256(&[&on_device]) == *sum {
                return Ok(None);
            }
            let mut copy = Zeroizing::new(vec![0u8; p.len_of(c)]);
            let copy_ok = copy_ok
                && p.journal
                    .read_exact_at(&mut copy, COPIES + (c % 2) * plan.chunk)
                    .is_ok()
                && sha256(&[&copy]) == *sum;
            if !copy_ok {
                return Err(refused(format!(
                    "chunk {c} of {n} was being written and its copy in the journal is damaged \
                     or missing: it cannot be finished safely"
                )));
            }
            if !proven {
                // The data do not move: each sector is either still old or
                // already new.
                if in_base != out_base {
                    return Err(refused(format!(
                        "chunk {c} of {n} was being written, and nothing shows that the device \
                         is the one the journal was written for"
                    )));
                }
                let mut new = copy.clone();
                p.crypt(p.position(c), &mut new)?;
                let ss = p.params.sector_size as usize;
                let consistent = on_device
                    .chunks(ss)
                    .zip(copy.chunks(ss).zip(new.chunks(ss)))
                    .all(|(d, (o, w))| d == o || d == w);
                if !consistent {
                    return Err(foreign());
                }
            }
            Ok(Some(copy))
        };
        let mut copies = Vec::new();
        if let Some(c) = decide(k, &r.this, r.has_copy)? {
            copies.push((k, c));
        }
        if k + 1 < n
            && let Some(c) = decide(k + 1, &r.next, true)?
        {
            copies.push((k + 1, c));
        }
        p.copies = copies;
        p.first = k;
        p.prev_out = r.prev_out;
        Ok(p)
    }

    /// The data length of the run (from the journal on a resume).
    ///
    /// ```no_run
    /// # fn f(p: &mdu_inplace::plain::Plain<'_>) { let _ = p.data_len(); }
    /// ```
    pub fn data_len(&self) -> u64 {
        self.plan.data_len
    }

    /// Whether the chunks run back to front (the data move up).
    fn backward(&self) -> bool {
        self.params.out_base > self.params.in_base
    }

    /// The data position of chunk `k` of the run's order.
    fn position(&self, k: u64) -> u64 {
        let k = if self.backward() {
            self.plan.chunks() - 1 - k
        } else {
            k
        };
        k * self.plan.chunk
    }

    /// The length of chunk `k` of the run's order.
    fn len_of(&self, k: u64) -> usize {
        self.plan.chunk.min(self.plan.data_len - self.position(k)) as usize
    }

    /// Converts the bytes at data position `p`.
    fn crypt(&self, p: u64, buf: &mut [u8]) -> Result<(), PlainError> {
        let sector = p / u64::from(self.params.sector_size);
        #[cfg(feature = "rayon")]
        let r = self.cipher.par_crypt(self.params.direction, sector, buf);
        #[cfg(not(feature = "rayon"))]
        let r = self.cipher.crypt(self.params.direction, sector, buf);
        r.map_err(PlainError::Cipher)
    }

    /// The newest record that is valid and belongs to this header.
    fn newest_record(&self, n: u64) -> Option<Record> {
        let mut best: Option<Record> = None;
        for slot in 0..2u64 {
            let mut r = [0u8; SLOT];
            if self
                .journal
                .read_exact_at(&mut r, (1 + slot) * SLOT as u64)
                .is_err()
            {
                continue;
            }
            let u = |at: usize| u64::from_le_bytes(r[at..at + 8].try_into().expect("8 bytes"));
            let sum32 = |at: usize| -> [u8; 32] { r[at..at + 32].try_into().expect("32 bytes") };
            let valid = &r[..8] == RECORD_MAGIC
                && r[SLOT - 32..] == sha256(&[&r[..SLOT - 32]])
                && sum32(32) == self.header_sum
                && u(8) % 2 == slot
                && match r[16] {
                    HOT => u(24) < n,
                    FINISHED => u(24) == n,
                    _ => false,
                };
            if valid && best.as_ref().is_none_or(|b| u(8) > b.seq) {
                best = Some(Record {
                    seq: u(8),
                    state: r[16],
                    has_copy: r[17] == 1,
                    k: u(24),
                    this: sum32(64),
                    next: sum32(96),
                    prev_out: sum32(128),
                });
            }
        }
        best
    }

    /// Writes the next record and syncs the journal.
    fn record(
        &mut self,
        state: u8,
        has_copy: bool,
        k: u64,
        this: &[u8; 32],
        next: &[u8; 32],
        prev_out: &[u8; 32],
    ) -> Result<(), PlainError> {
        self.seq += 1;
        let mut r = [0u8; SLOT];
        r[..8].copy_from_slice(RECORD_MAGIC);
        r[8..16].copy_from_slice(&self.seq.to_le_bytes());
        r[16] = state;
        r[17] = u8::from(has_copy);
        r[24..32].copy_from_slice(&k.to_le_bytes());
        r[32..64].copy_from_slice(&self.header_sum);
        r[64..96].copy_from_slice(this);
        r[96..128].copy_from_slice(next);
        r[128..160].copy_from_slice(prev_out);
        let sum = sha256(&[&r[..SLOT - 32]]);
        r[SLOT - 32..].copy_from_slice(&sum);
        let at = (1 + self.seq % 2) * SLOT as u64;
        self.journal
            .write_all_at(&r, at)
            .and_then(|()| self.journal.sync_data())
            .map_err(|error| PlainError::Journal {
                action: "write the journal",
                error,
            })
    }

    /// Gives the data device and the journal back.
    ///
    /// ```no_run
    /// # fn f(p: mdu_inplace::plain::Plain<'_>) { let (_journal, _data) = p.into_files(); }
    /// ```
    pub fn into_files(self) -> (File, File) {
        (self.journal, self.data)
    }
}

impl Journal for Plain<'_> {
    type Error = PlainError;
    const PROTECTS_NEXT: bool = true;

    fn device(&self) -> &File {
        &self.data
    }

    fn progress(&self) -> (u64, u64) {
        let k = self.first + self.converted;
        let done = if k == 0 {
            0
        } else if self.backward() {
            self.plan.data_len - self.position(k - 1)
        } else {
            self.position(k - 1) + self.len_of(k - 1) as u64
        };
        (done, self.plan.data_len)
    }

    fn hotzone(&self, done: u64) -> Option<Hotzone> {
        if done >= self.plan.data_len {
            return None;
        }
        let k = if self.backward() {
            // Back to front: the chunks after `done` bytes at the end.
            self.plan.chunks() - (self.plan.data_len - done).div_ceil(self.plan.chunk)
        } else {
            done / self.plan.chunk
        };
        let pos = self.position(k);
        let len = self.len_of(k) as u64;
        Some(Hotzone {
            seq: k,
            pos,
            len,
            from: self.params.in_base + pos,
            to: self.params.out_base + pos,
            done: if self.backward() {
                self.plan.data_len - pos
            } else {
                pos + len
            },
        })
    }

    fn old_bytes(&mut self, hz: &Hotzone) -> Option<Zeroizing<Vec<u8>>> {
        let i = self.copies.iter().position(|(k, _)| *k == hz.seq)?;
        Some(self.copies.swap_remove(i).1)
    }

    fn protect(&mut self, hz: &Hotzone, old: &[u8], next: Option<&[u8]>) -> Result<(), PlainError> {
        let this = sha256(&[old]);
        let next = next.map_or([0; 32], |b| sha256(&[b]));
        self.journal
            .write_all_at(old, COPIES + (hz.seq % 2) * self.plan.chunk)
            .map_err(|error| PlainError::Journal {
                action: "write the journal",
                error,
            })?;
        let prev_out = self.prev_out;
        self.record(HOT, true, hz.seq, &this, &next, &prev_out)
    }

    fn convert(&self, hz: &Hotzone, buf: &mut [u8]) -> Result<(), PlainError> {
        self.crypt(hz.pos, buf)
    }

    fn converted(&mut self, hz: &Hotzone, written: &[u8]) -> Result<(), PlainError> {
        self.prev_out = sha256(&[written]);
        self.converted += 1;
        if hz.done == self.plan.data_len {
            let (n, last) = (self.plan.chunks(), self.prev_out);
            self.record(FINISHED, false, n, &[0; 32], &[0; 32], &last)?;
            self.all_written = true;
        }
        Ok(())
    }

    /// Leaves the device as a conversion into another file would have
    /// written it (an image file that gained a header area has zeros
    /// there; one that lost it ends with the data), syncs it, then wipes
    /// the journal's copies (they may hold plaintext) and syncs the
    /// journal. Done again, the same, by a resume.
    fn finish(&mut self) -> Result<(), PlainError> {
        debug_assert!(self.all_written);
        let (in_base, out_base) = (self.params.in_base, self.params.out_base);
        let regular = self.data.metadata().map(|m| m.is_file()).unwrap_or(false);
        let dev_err = |op, offset, len| {
            move |error| {
                PlainError::Device(DeviceError {
                    op,
                    offset,
                    len,
                    error,
                })
            }
        };
        if regular && out_base > in_base {
            wipe(&self.data, 0, out_base - in_base, false).map_err(dev_err(
                Op::Write,
                0,
                out_base - in_base,
            ))?;
        } else if regular && in_base > out_base {
            self.data
                .set_len(out_base + self.plan.data_len)
                .map_err(dev_err(Op::Write, out_base + self.plan.data_len, 0))?;
        }
        self.data.sync_all().map_err(dev_err(Op::Sync, 0, 0))?;
        let len = self.journal.metadata().map(|m| m.len()).unwrap_or(0);
        // The copies may hold plaintext: wiped (best effort: the run is
        // done either way).
        let _ = wipe(&self.journal, COPIES, len.saturating_sub(COPIES), true);
        let _ = self.journal.sync_data();
        Ok(())
    }
}

/// Writes zeros over `len` bytes at `offset` of `f`; with `lenient`, stops
/// quietly at the first failure.
fn wipe(f: &File, offset: u64, len: u64, lenient: bool) -> io::Result<()> {
    let zeros = vec![0u8; len.min(1 << 20) as usize];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(zeros.len() as u64) as usize;
        match f.write_all_at(&zeros[..n], offset + at) {
            Ok(()) => at += n as u64,
            Err(_) if lenient => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
