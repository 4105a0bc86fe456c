//! The journal of `mdu crypt --in-place`: what makes every moment of an
//! in-place conversion resumable, bound to the device it protects.
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
//! (direction, both bases, sector size, cipher and a one-way digest of the
//! key); at 40 the data length; at 48 the chunk size; at 56 and 64 where
//! the data is read and written (`in_base`, `out_base`); at 72 the SHA-256
//! of the old bytes of the last chunk in the run's order, which the run
//! writes last; at 4064 the SHA-256 of bytes 0..4064.
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
//! The journal file is created without a name (`O_TMPFILE`, or a hidden
//! temporary name where the file system has none) and given its name,
//! never replacing a file, only once it is complete with its first record; it is readable by its owner only
//! (it holds a chunk of plaintext); its copies are wiped before it is
//! removed at the end.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::util::CliError;

/// SHA-256 of the concatenated `parts`.
pub(crate) fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = mdu_verity::sha256::State::new();
    for p in parts {
        h.update(p);
    }
    h.finup(&[])
}

/// What a run is bound to: a resume must give the same.
pub(crate) struct Params {
    pub(crate) encrypt: bool,
    pub(crate) in_base: u64,
    pub(crate) out_base: u64,
    pub(crate) sector_size: u32,
    pub(crate) cipher: String,
    pub(crate) key_check: [u8; 32],
}

impl Params {
    fn digest(&self) -> [u8; 32] {
        sha256(&[
            b"mdu crypt --in-place journal v2\0",
            &[u8::from(self.encrypt)],
            &self.in_base.to_le_bytes(),
            &self.out_base.to_le_bytes(),
            &self.sector_size.to_le_bytes(),
            self.cipher.to_ascii_lowercase().as_bytes(),
            &[0],
            &self.key_check,
        ])
    }
}

/// The run's data length and chunk size, fixed when it starts.
#[derive(Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) data_len: u64,
    pub(crate) chunk: u64,
}

impl Plan {
    /// The number of chunks.
    pub(crate) fn chunks(&self) -> u64 {
        self.data_len.div_ceil(self.chunk)
    }

    /// The data position of chunk `k` of the order: front to back, or back
    /// to front when the data move up (`backward`), so that no chunk is
    /// read after another was written over it.
    pub(crate) fn position(&self, backward: bool, k: u64) -> u64 {
        let k = if backward { self.chunks() - 1 - k } else { k };
        k * self.chunk
    }

    /// The length of chunk `k` of the order.
    pub(crate) fn len_of(&self, backward: bool, k: u64) -> usize {
        self.chunk.min(self.data_len - self.position(backward, k)) as usize
    }
}

/// The largest chunk a journal may record (1 MiB per thread, up to 1024
/// threads).
pub(crate) const MAX_CHUNK: u64 = 1 << 30;
const HEADER_MAGIC: &[u8; 8] = b"MDUJRNL2";
const OLD_MAGIC: &[u8; 8] = b"MDUJRNL1";
const RECORD_MAGIC: &[u8; 8] = b"MDUREC02";
const SLOT: usize = 4096;
const COPIES: u64 = 3 * SLOT as u64;
const HOT: u8 = 1;
const FINISHED: u8 = 2;

/// A chunk in doubt after a crash, as a resume takes it.
pub(crate) enum Chunk {
    /// Its old bytes are on the device: read them there.
    OnDevice,
    /// Its old bytes are these (from the journal's copy).
    Copy(Vec<u8>),
}

/// Where a resumed run goes on.
pub(crate) enum Start {
    /// At chunk `k`, whose old bytes (and those of `k + 1`, if any) are
    /// where these say; `sum` is the SHA-256 of chunk `k`'s old bytes and
    /// `prev_out` that of chunk `k - 1` as written (zero for chunk 0), both
    /// checked against the device.
    At {
        k: u64,
        this: Chunk,
        next: Chunk,
        sum: [u8; 32],
        prev_out: [u8; 32],
    },
    /// Every chunk is written: only the ends are left to finish.
    Finish,
}

/// How the resume reads and converts the device, for its checks.
pub(crate) trait Device {
    /// Reads `buf.len()` old bytes of the chunk at data position `p`.
    fn read_old(&self, p: u64, buf: &mut [u8]) -> Result<(), CliError>;
    /// Reads `buf.len()` bytes as written of the chunk at data position `p`.
    fn read_new(&self, p: u64, buf: &mut [u8]) -> Result<(), CliError>;
    /// Converts the old bytes of the chunk at data position `p`.
    fn convert(&self, p: u64, buf: &mut [u8]) -> Result<(), CliError>;
}

/// An open journal, locked by this process.
pub(crate) struct Journal {
    file: File,
    path: PathBuf,
    seq: u64,
    header_sum: [u8; 32],
    plan: Plan,
    /// Whether the order runs back to front (the data move up).
    backward: bool,
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

impl Journal {
    /// Creates the journal of a new run at `path` (which must not exist):
    /// the header and the first record (chunk 0, no copy yet), written
    /// without a name, synced, then named (never over an existing file).
    ///
    /// `first` and `second` are the SHA-256s of the old bytes of chunks 0
    /// and 1 of the order, `last` that of the last chunk.
    pub(crate) fn create(
        path: &Path,
        params: &Params,
        plan: &Plan,
        sums: [[u8; 32]; 3],
    ) -> Result<Journal, CliError> {
        let (in_base, out_base) = (params.in_base, params.out_base);
        let [first, second, last] = sums;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let (file, tmp) = new_unnamed(dir, path)?;
        let mut h = [0u8; SLOT];
        h[..8].copy_from_slice(HEADER_MAGIC);
        h[8..40].copy_from_slice(&params.digest());
        h[40..48].copy_from_slice(&plan.data_len.to_le_bytes());
        h[48..56].copy_from_slice(&plan.chunk.to_le_bytes());
        h[56..64].copy_from_slice(&in_base.to_le_bytes());
        h[64..72].copy_from_slice(&out_base.to_le_bytes());
        h[72..104].copy_from_slice(&last);
        let sum = sha256(&[&h[..SLOT - 32]]);
        h[SLOT - 32..].copy_from_slice(&sum);
        let mut j = Journal {
            file,
            path: path.to_owned(),
            seq: 0,
            header_sum: sha256(&[&h]),
            plan: *plan,
            backward: out_base > in_base,
        };
        let shown = tmp.as_deref().unwrap_or(path);
        let written = j
            .file
            .write_all_at(&h, 0)
            .map_err(|e| CliError::io(shown, "write the journal", e))
            .and_then(|()| j.record(HOT, false, 0, &first, &second, &[0; 32]))
            .and_then(|()| crate::lock::hold(&j.file, shown));
        let placed = written.and_then(|()| {
            // Into place only if nothing is there (a journal of another
            // run), complete with its first record.
            name_it(&j.file, tmp.as_deref(), path).map_err(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    CliError::Usage(format!(
                        "{}: the journal exists: it belongs to an interrupted run (go on with \
                         --resume) or to a running one",
                        path.display()
                    ))
                } else {
                    CliError::io(path, "create the journal", e)
                }
            })
        });
        if let Err(e) = placed {
            if let Some(tmp) = &tmp {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(e);
        }
        // The new name too must survive a crash.
        let _ = File::open(dir).and_then(|d| d.sync_all());
        Ok(j)
    }

    /// Opens and locks the journal of an interrupted run, checks it against
    /// `params` and the device, and says where the run goes on. Nothing is
    /// written here.
    pub(crate) fn resume(
        path: &Path,
        params: &Params,
        device_len: u64,
        device: &dyn Device,
    ) -> Result<(Journal, Plan, Start), CliError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| CliError::io(path, "open the journal", e))?;
        crate::lock::hold(&file, path)?;
        let refuse = |rule: String| CliError::Refused {
            path: path.to_owned(),
            message: format!("{rule}; nothing was changed"),
        };
        let mut h = [0u8; SLOT];
        if file.read_exact_at(&mut h, 0).is_err() {
            return Err(refuse(
                "the journal is shorter than its header: it is damaged, and which chunks were \
                 converted cannot be told"
                    .into(),
            ));
        }
        if &h[..8] == OLD_MAGIC {
            return Err(refuse(
                "a journal of format 1, which this version does not resume".into(),
            ));
        }
        if &h[..8] != HEADER_MAGIC {
            return Err(refuse("not an mdu crypt --in-place journal".into()));
        }
        if h[SLOT - 32..] != sha256(&[&h[..SLOT - 32]]) {
            return Err(refuse(
                "the journal's header is damaged (its checksum does not match)".into(),
            ));
        }
        if h[8..40] != params.digest() {
            return Err(CliError::Usage(format!(
                "{}: the journal was written by a run with another cipher, key, sector size, \
                 --offset or direction: give the same ones to resume it",
                path.display()
            )));
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
            return Err(refuse("the journal's header is not one mdu writes".into()));
        }
        let mut j = Journal {
            file,
            path: path.to_owned(),
            seq: 0,
            header_sum: sha256(&[&h]),
            plan,
            backward: out_base > in_base,
        };
        let n = plan.chunks();
        let r = j.newest_record(n).ok_or_else(|| {
            refuse(
                "the journal holds no valid record (both slots are damaged): which chunks were \
                 converted cannot be told"
                    .into(),
            )
        })?;
        j.seq = r.seq;
        // The device's size: a run never makes it shorter than where its
        // data lie, except the last step of a decryption that moves them.
        let end = in_base.max(out_base).saturating_add(plan.data_len);
        let short = if r.state == FINISHED {
            device_len < out_base.saturating_add(plan.data_len)
        } else {
            device_len < end
        };
        if short {
            return Err(refuse(format!(
                "the device is {device_len} bytes, shorter than the run's data ({} bytes from \
                 byte {}): it is not the device this journal was written for",
                plan.data_len,
                in_base.max(out_base)
            )));
        }
        let hash_new = |k: u64| -> Result<[u8; 32], CliError> {
            let mut b = vec![0u8; j.len_of(k)];
            device.read_new(j.position(k), &mut b)?;
            Ok(sha256(&[&b]))
        };
        let foreign = || {
            refuse(
                "the device does not hold what this journal's run wrote: it is not the device \
                 the journal was written for, or it was changed since"
                    .into(),
            )
        };
        if r.state == FINISHED {
            if hash_new(n - 1)? != r.prev_out {
                return Err(foreign());
            }
            return Ok((j, plan, Start::Finish));
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
            let mut b = vec![0u8; j.len_of(n - 1)];
            device.read_old(j.position(n - 1), &mut b)?;
            if sha256(&[&b]) != last {
                return Err(foreign());
            }
            proven = true;
        }
        let decide = |c: u64, sum: &[u8; 32], copy_ok: bool| -> Result<Chunk, CliError> {
            let mut b = vec![0u8; j.len_of(c)];
            device.read_old(j.position(c), &mut b)?;
            if sha256(&[&b]) == *sum {
                return Ok(Chunk::OnDevice);
            }
            let on_device = b;
            let mut copy = vec![0u8; j.len_of(c)];
            let copy_ok = copy_ok
                && j.file
                    .read_exact_at(&mut copy, COPIES + (c % 2) * plan.chunk)
                    .is_ok()
                && sha256(&[&copy]) == *sum;
            if !copy_ok {
                return Err(refuse(format!(
                    "chunk {c} of {n} was being written and its copy in the journal is damaged \
                     or missing: it cannot be finished safely"
                )));
            }
            if !proven {
                // The data do not move: each sector is either still old or
                // already new.
                if in_base != out_base {
                    return Err(refuse(format!(
                        "chunk {c} of {n} was being written, and nothing shows that the device \
                         is the one the journal was written for"
                    )));
                }
                let mut new = copy.clone();
                device.convert(j.position(c), &mut new)?;
                let ss = params.sector_size as usize;
                let consistent = on_device
                    .chunks(ss)
                    .zip(copy.chunks(ss).zip(new.chunks(ss)))
                    .all(|(d, (o, w))| d == o || d == w);
                if !consistent {
                    return Err(foreign());
                }
            }
            Ok(Chunk::Copy(copy))
        };
        let this = decide(k, &r.this, r.has_copy)?;
        let next = if k + 1 < n {
            decide(k + 1, &r.next, true)?
        } else {
            Chunk::OnDevice
        };
        Ok((
            j,
            plan,
            Start::At {
                k,
                this,
                next,
                sum: r.this,
                prev_out: r.prev_out,
            },
        ))
    }

    /// The newest record that is valid and belongs to this header.
    fn newest_record(&self, n: u64) -> Option<Record> {
        let mut best: Option<Record> = None;
        for slot in 0..2u64 {
            let mut r = [0u8; SLOT];
            if self
                .file
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

    /// The data position of chunk `k` of the run's order.
    pub(crate) fn position(&self, k: u64) -> u64 {
        self.plan.position(self.backward, k)
    }

    /// The length of chunk `k` of the run's order.
    pub(crate) fn len_of(&self, k: u64) -> usize {
        self.plan.len_of(self.backward, k)
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
    ) -> Result<(), CliError> {
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
        self.file
            .write_all_at(&r, at)
            .and_then(|()| self.file.sync_data())
            .map_err(|e| CliError::io(&self.path, "write the journal", e))
    }

    /// Chunk `k` is about to be written: its old bytes `old` (whose
    /// SHA-256 is `this`) go first, with the sums of the next chunk's old
    /// bytes and of the previous chunk as written.
    pub(crate) fn hot(
        &mut self,
        k: u64,
        old: &[u8],
        this: &[u8; 32],
        next: &[u8; 32],
        prev_out: &[u8; 32],
    ) -> Result<(), CliError> {
        self.file
            .write_all_at(old, COPIES + (k % 2) * self.plan.chunk)
            .map_err(|e| CliError::io(&self.path, "write the journal", e))?;
        self.record(HOT, true, k, this, next, prev_out)
    }

    /// Every chunk is written and synced; `last_out` is the SHA-256 of the
    /// last one as written.
    pub(crate) fn finished(&mut self, last_out: &[u8; 32]) -> Result<(), CliError> {
        let n = self.plan.chunks();
        self.record(FINISHED, false, n, &[0; 32], &[0; 32], last_out)
    }

    /// The run is over: the copies are wiped (they may hold plaintext) and
    /// synced, then the file is removed.
    pub(crate) fn remove(self) -> Result<(), CliError> {
        let len = self.file.metadata().map(|m| m.len()).unwrap_or(0);
        let copies = len.saturating_sub(COPIES);
        let zeros = vec![0u8; copies.min(1 << 20) as usize];
        let mut at = 0;
        while at < copies {
            let n = (copies - at).min(zeros.len() as u64) as usize;
            if self.file.write_all_at(&zeros[..n], COPIES + at).is_err() {
                break;
            }
            at += n as u64;
        }
        let _ = self.file.sync_data();
        drop(self.file);
        std::fs::remove_file(&self.path)
            .map_err(|e| CliError::io(&self.path, "remove the journal", e))
    }
}

/// A new journal file in `dir` that has no name yet (`O_TMPFILE`), so that
/// a crash before it is complete leaves nothing behind; where the file
/// system cannot do that, a hidden temporary name next to `path` (the
/// second value).
fn new_unnamed(dir: &Path, path: &Path) -> Result<(File, Option<PathBuf>), CliError> {
    if let Some(f) = crate::output::open_unnamed(dir, 0o600) {
        return Ok((f, None));
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{}.mdu-new-{}",
        name.unwrap_or_default(),
        std::process::id()
    ));
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| CliError::io(&tmp, "create the journal", e))?;
    Ok((f, Some(tmp)))
}

/// Gives the new journal `f` its name `path`, failing with `AlreadyExists`
/// if `path` exists: a link of the unnamed file, or a rename of `tmp`
/// that replaces nothing.
fn name_it(f: &File, tmp: Option<&Path>, path: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let Some(tmp) = tmp else {
        return crate::output::link_proc(f, path);
    };
    let to = CString::new(path.as_os_str().as_bytes())?;
    let from = CString::new(tmp.as_os_str().as_bytes())?;
    // SAFETY: both paths are NUL-terminated strings that live across the
    // call; renameat2 reads them and touches no other memory.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
        // No RENAME_NOREPLACE here: a hard link cannot replace either.
        std::fs::hard_link(tmp, path)?;
        return std::fs::remove_file(tmp);
    }
    Err(e)
}
