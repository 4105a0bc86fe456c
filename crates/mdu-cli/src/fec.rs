//! `--fec-device` for `mdu verity format`: Reed-Solomon parity over the
//! data and hash areas, as `veritysetup format --fec-device` writes it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use mdu_verity::dmverity::{self, Formatted, fec};

use crate::output::{self, Output};
use crate::util::{self, CliError};

/// Bytes read per step from the data and hash devices.
const CHUNK: usize = 4 << 20;

/// The FEC options (those of `veritysetup`).
#[derive(Args, Debug)]
pub(crate) struct FecArgs {
    /// Reed-Solomon parity over the data and the hash area, as
    /// veritysetup's --fec-device: `format` writes it (to a file of its
    /// own, or to HASH itself with --fec-offset past the tree); `verify`
    /// and `repair` read it. Needs equal data and hash block sizes.
    #[arg(long, value_name = "F")]
    fec_device: Option<PathBuf>,
    /// Parity bytes per 255-byte codeword, 2..=24 (more corrects more,
    /// and takes more space: roots/(255 - roots) of the protected bytes).
    #[arg(long, value_name = "N", default_value_t = 2)]
    fec_roots: u8,
    /// Byte offset of the parity on the FEC device; a multiple of 512.
    #[arg(long, value_name = "N", default_value_t = 0)]
    fec_offset: u64,
}

/// An encoder fed with the data blocks while `format` hashes them (the
/// mapped windows pass through it on their way to the hasher), so that
/// DATA is read once. Its layout is predicted before the tree exists;
/// `write` uses it only if the prediction holds.
pub(crate) struct Early {
    layout: fec::Layout,
    data_blocks: u64,
    state: std::sync::Mutex<EarlyState>,
}

struct EarlyState {
    enc: fec::Encoder,
    fed: u64,
    failed: bool,
}

impl Early {
    /// Takes the whole blocks of one window of DATA, up to the data
    /// block count.
    pub(crate) fn take(&self, window: &[u8]) {
        let bs = self.layout.block_size() as usize;
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let blocks = ((window.len() / bs) as u64).min(self.data_blocks - st.fed);
        if st.failed || blocks == 0 {
            return;
        }
        let bytes = &window[..blocks as usize * bs];
        if st.enc.push(bytes).is_err() {
            st.failed = true;
        } else {
            st.fed += blocks;
        }
    }
}

/// What was written, for the summary.
pub(crate) struct Written {
    pub(crate) roots: u8,
    pub(crate) parity_blocks: u64,
    pub(crate) parity_len: u64,
    /// The parity went into the hash device.
    pub(crate) in_hash: bool,
    pub(crate) offset: u64,
}

impl FecArgs {
    /// Checks the options before anything is hashed.
    pub(crate) fn check(&self, p: &dmverity::Params) -> Result<(), CliError> {
        if self.fec_device.is_none() {
            return Ok(());
        }
        if !(fec::MIN_ROOTS..=fec::MAX_ROOTS).contains(&self.fec_roots) {
            return Err(CliError::Usage(format!(
                "--fec-roots {} is invalid: expected {} to {}",
                self.fec_roots,
                fec::MIN_ROOTS,
                fec::MAX_ROOTS
            )));
        }
        if !self.fec_offset.is_multiple_of(512) {
            return Err(CliError::Usage(format!(
                "--fec-offset {} is invalid: it must be a multiple of 512",
                self.fec_offset
            )));
        }
        if p.data_block_size != p.hash_block_size {
            return Err(CliError::Usage(format!(
                "--fec-device needs equal block sizes, but the data blocks are {} bytes \
                 and the hash blocks {}",
                p.data_block_size, p.hash_block_size
            )));
        }
        Ok(())
    }

    /// An encoder to feed DATA's blocks to while they are hashed, when the
    /// FEC layout can be predicted: the hash image is a new regular file
    /// (or the parity shares it at a given offset), so the protected hash
    /// area is exactly the tree.
    pub(crate) fn early(
        &self,
        hash_path: &Path,
        p: &dmverity::Params,
        data_len: u64,
    ) -> Option<std::sync::Arc<Early>> {
        self.fec_device.as_ref()?;
        let bs = u64::from(p.data_block_size);
        let data_blocks = p.data_blocks.unwrap_or(data_len / bs);
        let start = p.hash_start_block();
        let end = if self.shares_hash_file(hash_path) {
            self.fec_offset / bs
        } else if hash_path.exists() {
            // Bytes past the tree of an existing image are protected too:
            // known only once the image is written.
            return None;
        } else {
            start + p.tree_blocks(data_blocks).ok()?
        };
        let layout = fec::Layout::new(
            data_blocks + end.saturating_sub(start),
            p.data_block_size,
            self.fec_roots,
        )
        .ok()?;
        Some(std::sync::Arc::new(Early {
            layout,
            data_blocks,
            state: std::sync::Mutex::new(EarlyState {
                enc: fec::Encoder::new(layout).ok()?,
                fed: 0,
                failed: false,
            }),
        }))
    }

    /// Whether the parity goes into the hash device itself.
    fn shares_hash_file(&self, hash: &Path) -> bool {
        match (&self.fec_device, std::fs::canonicalize(hash)) {
            (Some(f), Ok(h)) => std::fs::canonicalize(f).is_ok_and(|f| f == h) || f == hash,
            (Some(f), Err(_)) => f == hash,
            _ => false,
        }
    }

    /// The FEC layout of an existing image, for `dump`: what `write` would
    /// write, without reading the data. `None` without `--fec-device`.
    pub(crate) fn describe(
        &self,
        hash_path: &Path,
        p: &dmverity::Params,
        data_blocks: u64,
    ) -> Result<Option<Written>, CliError> {
        let Some(fec_path) = &self.fec_device else {
            return Ok(None);
        };
        self.check(p)?;
        let bs = u64::from(p.data_block_size);
        let in_hash = self.shares_hash_file(hash_path);
        let end = if in_hash {
            self.fec_offset / bs
        } else {
            let mut h = File::open(hash_path)
                .map_err(|e| CliError::io(hash_path, "open for reading", e))?;
            h.seek(SeekFrom::End(0))
                .map_err(|e| CliError::io(hash_path, "seek", e))?
                / bs
        };
        let layout = fec::Layout::new(
            data_blocks + end.saturating_sub(p.hash_start_block()),
            p.data_block_size,
            self.fec_roots,
        )
        .map_err(|e| CliError::lib(fec_path, e))?;
        Ok(Some(Written {
            roots: self.fec_roots,
            parity_blocks: layout.parity_blocks(),
            parity_len: layout.parity_len(),
            in_hash,
            offset: self.fec_offset,
        }))
    }

    /// The `--fec-device` path, if given.
    pub(crate) fn device(&self) -> Option<&PathBuf> {
        self.fec_device.as_ref()
    }

    /// The FEC device as an output of `format`, checked and opened before
    /// any hashing: `None` without `--fec-device` or when the parity goes
    /// into the hash device itself. It may not be DATA (`data_meta`).
    pub(crate) fn open_output(
        &self,
        data: &Path,
        data_meta: &std::fs::Metadata,
        hash_path: &Path,
    ) -> Result<Option<Output>, CliError> {
        let Some(fec_path) = &self.fec_device else {
            return Ok(None);
        };
        if self.shares_hash_file(hash_path) {
            return Ok(None);
        }
        if output::same_file(data_meta, fec_path) {
            return Err(CliError::Usage(format!(
                "--fec-device {} is the data device: put the parity in the hash \
                 device or a file of its own",
                fec_path.display()
            )));
        }
        Output::to(fec_path)
            .keep_existing()
            .seekable_only()
            .not_same_as(data, data_meta.clone())
            .open()
            .map(Some)
    }

    /// Computes the parity over DATA's `out.data_blocks()` blocks and the
    /// hash device `hash` (already holding the tree) and writes it: into
    /// `hash` at the offset if that is the FEC device, otherwise into
    /// `fec_out` (from [`open_output`](Self::open_output), committed by the
    /// caller). `None` without `--fec-device`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn write(
        &self,
        data: &Path,
        hash_path: &Path,
        hash: &mut File,
        fec_out: Option<&mut Output>,
        p: &dmverity::Params,
        out: &Formatted,
        early: Option<std::sync::Arc<Early>>,
    ) -> Result<Option<Written>, CliError> {
        let Some(fec_path) = &self.fec_device else {
            return Ok(None);
        };
        let bs = u64::from(p.data_block_size);
        let in_hash = self.shares_hash_file(hash_path);
        let hash_len = hash
            .seek(SeekFrom::End(0))
            .map_err(|e| CliError::io(hash_path, "seek", e))?;
        let tree_end = out.hash_device_size().max(p.hash_offset);
        // The protected hash area runs from the tree's first block to the
        // end of the hash device, or to the parity when it shares the file.
        let end_block = if in_hash {
            if self.fec_offset < tree_end {
                return Err(CliError::Usage(format!(
                    "--fec-offset {} lies inside the hash tree, which ends at byte {tree_end}",
                    self.fec_offset
                )));
            }
            if self.fec_offset > hash_len {
                return Err(CliError::Usage(format!(
                    "--fec-offset {} is past the end of {} ({hash_len} bytes): make the file \
                     that long first, as veritysetup requires",
                    self.fec_offset,
                    hash_path.display()
                )));
            }
            self.fec_offset / bs
        } else {
            hash_len / bs
        };
        let start = p.hash_start_block();
        let hash_blocks = end_block.saturating_sub(start);
        let layout = fec::Layout::new(
            out.data_blocks() + hash_blocks,
            p.data_block_size,
            self.fec_roots,
        )
        .map_err(|e| CliError::lib(fec_path, e))?;
        // The encoder that already took DATA's blocks while they were
        // hashed, if its predicted layout is the real one.
        let early = early
            .and_then(std::sync::Arc::into_inner)
            .and_then(|e| {
                e.state
                    .into_inner()
                    .ok()
                    .map(|st| (e.layout, e.data_blocks, st))
            })
            .filter(|(l, n, st)| {
                *l == layout && *n == out.data_blocks() && st.fed == *n && !st.failed
            })
            .map(|(.., st)| st.enc);
        let fed = early.is_some();
        let mut enc = match early {
            Some(enc) => enc,
            None => fec::Encoder::new(layout).map_err(|e| CliError::lib(fec_path, e))?,
        };
        let mut buf = vec![0u8; CHUNK - CHUNK % bs as usize];
        let mut feed = |enc: &mut fec::Encoder,
                        src: &mut dyn Read,
                        path: &Path,
                        mut blocks: u64|
         -> Result<(), CliError> {
            while blocks > 0 {
                let n = (buf.len() as u64 / bs).min(blocks) as usize * bs as usize;
                src.read_exact(&mut buf[..n])
                    .map_err(|e| CliError::io(path, "read for the FEC parity", e))?;
                enc.push(&buf[..n]).map_err(|e| CliError::lib(path, e))?;
                blocks -= (n as u64) / bs;
            }
            Ok(())
        };
        let mut d = File::open(data).map_err(|e| CliError::io(data, "open for reading", e))?;
        if fed {
            // DATA's blocks went in while they were hashed.
        } else if !d.metadata().is_ok_and(|m| m.is_file()) {
            feed(&mut enc, &mut d, data, out.data_blocks())?;
        } else {
            // A regular file is taken from the page cache where it lies
            // (the hashing pass just read it), a window at a time.
            let total = out.data_blocks() * bs;
            let mut at = 0;
            while at < total {
                let len = util::WINDOW.min(total - at);
                let map = util::map_window_populated(&d, at, len)
                    .map_err(|e| CliError::io(data, "map for the FEC parity", e))?;
                enc.push(&map).map_err(|e| CliError::lib(data, e))?;
                at += len;
            }
        }
        hash.seek(SeekFrom::Start(start * bs))
            .map_err(|e| CliError::io(hash_path, "seek", e))?;
        feed(&mut enc, hash, hash_path, hash_blocks)?;
        let parity = enc.finish().map_err(|e| CliError::lib(fec_path, e))?;
        let put = |f: &mut File, path: &Path| -> Result<(), CliError> {
            f.seek(SeekFrom::Start(self.fec_offset))
                .and_then(|_| f.write_all(&parity))
                .map_err(|e| CliError::io(path, "write the FEC parity", e))
        };
        match fec_out {
            Some(o) if !in_hash => put(o.file(), fec_path)?,
            _ => put(hash, hash_path)?,
        }
        Ok(Some(Written {
            roots: self.fec_roots,
            parity_blocks: layout.parity_blocks(),
            parity_len: layout.parity_len(),
            in_hash,
            offset: self.fec_offset,
        }))
    }
}

/// Whole blocks that FEC decoding changed, by byte offset on one device.
#[derive(Default)]
pub(crate) struct Fixes {
    pub(crate) blocks: std::collections::BTreeMap<u64, Vec<u8>>,
}

/// What decoding found on the data and the hash device.
pub(crate) struct Decoded {
    pub(crate) data: Fixes,
    pub(crate) hash: Fixes,
    /// Bytes corrected in all.
    pub(crate) bytes: u64,
}

/// A device as it reads with `fixes` applied, for verification before
/// anything is written.
pub(crate) struct Overlay {
    file: File,
    pos: u64,
    bs: u64,
    fixes: std::sync::Arc<Fixes>,
}

impl Overlay {
    pub(crate) fn new(file: File, bs: u64, fixes: std::sync::Arc<Fixes>) -> Overlay {
        Overlay {
            file,
            pos: 0,
            bs,
            fixes,
        }
    }
}

impl Read for Overlay {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let n = self.file.read_at(buf, self.pos)?;
        let end = self.pos + n as u64;
        let first = self.pos - self.pos % self.bs;
        for (&at, block) in self.fixes.blocks.range(first..end) {
            let from = at.max(self.pos);
            let to = (at + self.bs).min(end);
            if from < to {
                buf[(from - self.pos) as usize..(to - self.pos) as usize]
                    .copy_from_slice(&block[(from - at) as usize..(to - at) as usize]);
            }
        }
        self.pos = end;
        Ok(n)
    }
}

impl Seek for Overlay {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        // Reads use positions (`read_at`): the file's own offset is only
        // used here, to find the end.
        let bad = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
        self.pos = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::Current(off) => self.pos.checked_add_signed(off).ok_or_else(bad)?,
            SeekFrom::End(off) => {
                let end = self.file.seek(SeekFrom::End(0))?;
                end.checked_add_signed(off).ok_or_else(bad)?
            }
        };
        Ok(self.pos)
    }
}

impl FecArgs {
    /// Whether `--fec-device` was given.
    pub(crate) fn given(&self) -> bool {
        self.fec_device.is_some()
    }

    /// Decodes every round of the FEC input of DATA's `data_blocks` blocks
    /// and the hash device, reading one round at a time: the blocks to
    /// change, or exit status 1 naming the first round beyond repair. A
    /// data device that ends early counts its missing blocks as erasures; a
    /// parity that ends early (a short or truncated FEC file) is damage too,
    /// exit status 1, as is DATA that cannot be read again by position (a
    /// pipe). Only other I/O errors are exit status 2.
    pub(crate) fn decode(
        &self,
        data: &Path,
        hash_path: &Path,
        p: &dmverity::Params,
        data_blocks: u64,
    ) -> Result<Decoded, CliError> {
        use std::os::unix::fs::FileExt;
        let Some(fec_path) = &self.fec_device else {
            return Ok(Decoded {
                data: Fixes::default(),
                hash: Fixes::default(),
                bytes: 0,
            });
        };
        self.check(p)?;
        let bs = u64::from(p.data_block_size);
        let open =
            |path: &Path| File::open(path).map_err(|e| CliError::io(path, "open for reading", e));
        let (d, h, f) = (open(data)?, open(hash_path)?, open(fec_path)?);
        // Seeking to the end gives the size of a file and of a device alike
        // (reads below use positions, not this offset).
        let hash_len = (&h)
            .seek(SeekFrom::End(0))
            .map_err(|e| CliError::io(hash_path, "seek", e))?;
        let end = if self.shares_hash_file(hash_path) {
            self.fec_offset / bs
        } else {
            hash_len / bs
        };
        let start = p.hash_start_block();
        let layout = fec::Layout::new(
            data_blocks + end.saturating_sub(start),
            p.data_block_size,
            self.fec_roots,
        )
        .map_err(|e| CliError::lib(fec_path, e))?;
        let roots = u64::from(self.fec_roots);
        let round_parity = (bs * roots) as usize;
        let mut parity = vec![0u8; round_parity];
        let mut out = Decoded {
            data: Fixes::default(),
            hash: Fixes::default(),
            bytes: 0,
        };
        for round in 0..layout.rounds() {
            let ks: Vec<u64> = layout.round_blocks(round).collect();
            let mut buf = vec![0u8; ks.len() * bs as usize];
            let mut erased = Vec::new();
            for (i, &k) in ks.iter().enumerate() {
                let slot = &mut buf[i * bs as usize..(i + 1) * bs as usize];
                let (file, path, at) = if k < data_blocks {
                    (&d, data, k * bs)
                } else {
                    (&h, hash_path, (start + k - data_blocks) * bs)
                };
                match file.read_exact_at(slot, at) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                        slot.fill(0);
                        erased.push(i);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotSeekable => {
                        return Err(CliError::VerifyFailed(format!(
                            "{}: it does not verify, and FEC cannot correct it: it cannot be \
                             read again by position ({e})",
                            path.display()
                        )));
                    }
                    Err(e) => return Err(CliError::io(path, "read for FEC decoding", e)),
                }
            }
            let at = self.fec_offset + round * round_parity as u64;
            f.read_exact_at(&mut parity, at).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    CliError::VerifyFailed(format!(
                        "{}: the FEC parity ends before byte {}, but round {round} of {} \
                         needs bytes {at}..{0}: a short parity cannot correct anything",
                        fec_path.display(),
                        at + round_parity as u64,
                        layout.rounds(),
                    ))
                } else {
                    CliError::io(fec_path, "read the FEC parity", e)
                }
            })?;
            let fix = fec::correct_round(&layout, round, &mut buf, &parity, &erased).map_err(|e| match e {
                mdu_verity::Error::FecUncorrectable { round, .. } => CliError::VerifyFailed(format!(
                    "{}: FEC cannot repair round {round} (input blocks {round}, {}, ...): more \
                     damage than {} parity bytes per codeword correct",
                    fec_path.display(),
                    round + layout.rounds(),
                    self.fec_roots
                )),
                e => CliError::lib(fec_path, e),
            })?;
            for &i in &fix.blocks {
                let k = ks[i];
                let block = buf[i * bs as usize..(i + 1) * bs as usize].to_vec();
                let (fixes, at) = if k < data_blocks {
                    (&mut out.data, k * bs)
                } else {
                    (&mut out.hash, (start + k - data_blocks) * bs)
                };
                fixes.blocks.insert(at, block);
            }
            out.bytes += fix.bytes;
        }
        Ok(out)
    }
}

/// The devices `repair` writes, opened before anything is written: the
/// corrected blocks go back in place (through symbolic links, keeping the
/// file's mode, owner and hard links), only after the corrections were
/// verified against the root hash. A stream cannot be repaired.
pub(crate) struct Repair {
    files: Vec<(PathBuf, File)>,
}

impl Repair {
    /// Opens every path of `targets` that has blocks to write.
    pub(crate) fn open(targets: &[(&Path, &Fixes)]) -> Result<Repair, CliError> {
        let mut files = Vec::new();
        for &(path, fixes) in targets {
            if fixes.blocks.is_empty() {
                continue;
            }
            let f = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| CliError::io(path, "open for writing the repaired blocks", e))?;
            let meta = f.metadata().map_err(|e| CliError::io(path, "examine", e))?;
            let block = std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type());
            if !meta.is_file() && !block {
                return Err(CliError::Usage(format!(
                    "{}: is not a regular file or a block device: it cannot be repaired in \
                     place (nothing was written)",
                    path.display()
                )));
            }
            files.push((path.to_owned(), f));
        }
        Ok(Repair { files })
    }

    /// Writes the blocks, each file's in turn, and syncs each file.
    pub(crate) fn write(self, targets: &[(&Path, &Fixes)]) -> Result<(), CliError> {
        use std::os::unix::fs::FileExt;
        for (path, f) in &self.files {
            let Some((_, fixes)) = targets.iter().find(|(p, _)| p == path) else {
                continue;
            };
            for (&at, block) in &fixes.blocks {
                f.write_all_at(block, at)
                    .map_err(|e| CliError::io(path, "write a repaired block", e))?;
            }
            output::sync(f).map_err(|e| CliError::io(path, "sync", e))?;
        }
        Ok(())
    }
}
