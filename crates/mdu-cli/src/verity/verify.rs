//! `mdu verity verify|repair`: verification against the root hash, then
//! FEC where it is given, and the corrected blocks written back.

use super::*;

pub(super) fn verify(a: VerifyArgs, repair: bool) -> Result<(), CliError> {
    if repair && !a.fec.given() {
        return Err(CliError::Usage(
            "mdu verity repair needs --fec-device: the parity to correct with".into(),
        ));
    }
    // A repair writes blocks back in place: what it may write is its own
    // for the whole run, before anything is read.
    let mut locks = mdu_inplace::lock::Locks::new();
    if repair {
        locks.file(&a.data)?;
        locks.file(&a.hash_dev)?;
        if let Some(fec) = a.fec.device() {
            locks.file(fec)?;
        }
    }
    let open = |path: &Path| input::open_read(path);
    let root_bytes = args::parse_hex("root hash", &a.root)?;
    let root = Digest::from_slice(&root_bytes);
    let pool = process::pool(a.opts.threads)?;
    // DATA is hashed from where it lies if it is mapped, with FEC too: a
    // clean image is verified once, as without it.
    // DATA is read up to its size when it has one, an error if it ends
    // earlier; a pipe or character device only as far as the tree goes.
    let (data, _, pb) = input::open_source(
        &a.data,
        !a.no_mmap,
        "dm-verity verify",
        input::Unsized::Bounded,
    )?;
    let mut hash = open(&a.hash_dev)?;
    let pins = pins(&a.opts)?;
    let (r, p) = if a.opts.no_superblock {
        let p = params(&a.opts, false)?;
        check_root_len(&a.root, &root_bytes, &p)?;
        let r = pool.install(|| Verifier::new(&p, &root).verify(data, &hash));
        (r.map(drop), p)
    } else {
        // The superblock chooses what was not pinned on the command line.
        let p = read_superblock(&a, &mut hash, &root_bytes)?;
        let r = pool
            .install(|| Verifier::superblock(a.opts.hash_offset, &pins, &root).verify(data, &hash));
        (r.map(drop), p)
    };
    pb.finish_and_clear();
    // FEC reads DATA a second time, by position: a pipe or a character
    // device cannot be, and is only verified.
    let unsized_data = std::fs::metadata(&a.data)
        .ok()
        .as_ref()
        .and_then(input::unsized_kind);
    let first = match r {
        Ok(()) => return done(&a, repair, None),
        Err(e) => e,
    };
    if a.fec.given() && unsized_data.is_none() {
        let fec = Fec {
            p: &p,
            pins: &pins,
            root: &root,
            hash: &hash,
        };
        return verify_with_fec(&a, repair, fec, first, &pool);
    }
    match verify_error(&a.data, &a.hash_dev, &p, first) {
        CliError::VerifyFailed(m) if a.fec.given() => {
            let kind = unsized_data.unwrap_or("a stream");
            Err(CliError::VerifyFailed(format!(
                "{m} (FEC not tried: {} is {kind}, which cannot be read a second time \
                 to correct it)",
                a.data.display()
            )))
        }
        e => Err(e),
    }
}

/// Reads the superblock of HASH for `verify` (the parameters it names,
/// for the messages), and checks the length of the root hash against it.
pub(super) fn read_superblock(
    a: &VerifyArgs,
    hash: &mut File,
    root_bytes: &[u8],
) -> Result<dmverity::Params, CliError> {
    let offset = a.opts.hash_offset;
    let sb = read_superblock_at(&a.hash_dev, &mut *hash, offset, |e| match e {
        // No superblock at all: most likely the wrong file or a missing
        // --no-superblock; a superblock with bad fields is a damaged image.
        VerityError::BadSignature | VerityError::HashAreaTooSmall { .. } => CliError::Input {
            path: a.hash_dev.clone(),
            offset,
            rule: format!(
                "no dm-verity superblock here ({e}); a hash device formatted with \
                 --no-superblock needs --no-superblock and every parameter again"
            ),
        },
        e => CliError::VerifyFailed(format!(
            "{}: no valid dm-verity superblock at byte {offset}: {e}",
            a.hash_dev.display(),
        )),
    })?;
    let p = sb.params(a.opts.hash_offset);
    // A root of a known length that does not fit the superblock's
    // algorithm is a mismatch the library reports (exit 1); any other
    // length is a usage error.
    if ![32, 64].contains(&root_bytes.len()) {
        check_root_len(&a.root, root_bytes, &p)?;
    }
    hash.seek(SeekFrom::Start(0))
        .map_err(|e| CliError::io(&a.hash_dev, "seek", e))?;
    Ok(p)
}

/// DATA read by position with a progress bar.
pub(super) struct Progress<'a> {
    file: &'a File,
    pb: &'a indicatif::ProgressBar,
}

impl ReadAt for Progress<'_> {
    fn size(&self) -> Result<u64, IoError> {
        ReadAt::size(self.file)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> Result<(), IoError> {
        ReadAt::read_exact_at(self.file, buf, offset)?;
        self.pb.inc(buf.len() as u64);
        Ok(())
    }
}

/// What the first verification of `verify` worked with: the parameters
/// (the superblock's, or the command line's), the pins, the root hash and
/// the open hash device.
pub(super) struct Fec<'a> {
    p: &'a dmverity::Params,
    pins: &'a dmverity::Pins,
    root: &'a Digest,
    hash: &'a File,
}

/// `verify` and `repair` with `--fec-device` after the first verification
/// failed with `first`: the library decodes the parity, reading the
/// devices by position, and verifies again with the corrections in view;
/// `repair` then writes them back.
pub(super) fn verify_with_fec(
    a: &VerifyArgs,
    repair: bool,
    f: Fec<'_>,
    first: VerityError,
    pool: &rayon::ThreadPool,
) -> Result<(), CliError> {
    let open = |path: &Path| input::open_read(path);
    let Some(fec_path) = a.fec.device() else {
        return Err(CliError::Usage("--fec-device is needed to correct".into()));
    };
    let (data, parity) = (open(&a.data)?, open(fec_path)?);
    let p = f.p;
    let shape = if a.opts.no_superblock {
        fec::Shape::Params(p)
    } else {
        fec::Shape::Superblock {
            hash_offset: a.opts.hash_offset,
            pins: f.pins,
        }
    };
    let size = ReadAt::size(&data).map_err(|e| CliError::io(&a.data, "examine", e.into()))?;
    let pb = progress::progress(size, "dm-verity verify");
    let reader = Progress {
        file: &data,
        pb: &pb,
    };
    let fec_params = a.fec.params(&a.hash_dev);
    let r = pool.install(|| {
        Verifier::with_shape(shape, f.root).correct_after(
            Err(first),
            &reader,
            f.hash,
            &parity,
            &fec_params,
        )
    });
    pb.finish_and_clear();
    let out = r.map_err(|e| fec_error(a, p, fec_path, e))?;
    if out.first_failure().is_none() {
        return done(a, repair, None);
    }
    if let Some(round) = out.uncorrectable_rounds().next() {
        let rounds = out.layout().map_or(0, |l| l.layout().rounds());
        return Err(CliError::VerifyFailed(format!(
            "{}: FEC cannot repair round {round} (input blocks {round}, {}, ...): more \
             damage than {} parity bytes per codeword correct",
            fec_path.display(),
            round + rounds,
            fec_params.roots
        )));
    }
    let c = out.corrections();
    let (bytes, data_fixed, hash_fixed) =
        (c.bytes(), c.len(fec::Area::Data), c.len(fec::Area::Hash));
    let blocks = data_fixed + hash_fixed;
    if let Some(e) = out.failure_after_correction() {
        return Err(CliError::VerifyFailed(format!(
            "{}: the FEC corrections ({bytes} bytes in {blocks} blocks) do not make the data \
             verify: {e}",
            a.data.display(),
        )));
    }
    let out = match out.into_result() {
        Ok(out) => out,
        // FEC found nothing to correct: the first failure stands.
        Err(e) => return Err(verify_error(&a.data, &a.hash_dev, p, e)),
    };
    let what = format!(
        "FEC corrected {bytes} bytes in {blocks} blocks ({data_fixed} of the data, {hash_fixed} \
         of the hash device)"
    );
    if repair {
        write_back(
            out.corrections(),
            &[(fec::Area::Data, &a.data), (fec::Area::Hash, &a.hash_dev)],
        )?;
    }
    done(a, repair, Some((what, bytes, blocks)))
}

/// An error of the FEC pass of `verify` as a CLI error: a short parity
/// device fails verification, an unreadable device names itself, bad FEC
/// options name the option.
fn fec_error(a: &VerifyArgs, p: &dmverity::Params, fec_path: &Path, e: VerityError) -> CliError {
    match e {
        e @ VerityError::FecParityShort { .. } => {
            CliError::VerifyFailed(format!("{}: {e}", fec_path.display()))
        }
        VerityError::FecIo { device, error, .. } => {
            let (path, what) = match device {
                "data" => (a.data.as_path(), "read for FEC decoding"),
                "hash" => (a.hash_dev.as_path(), "read for FEC decoding"),
                _ => (fec_path, "read the FEC parity"),
            };
            CliError::io(path, what, error)
        }
        e @ (VerityError::FecRoots { .. }
        | VerityError::FecOffset { .. }
        | VerityError::FecBlockSizes { .. }) => match a.fec.check(p) {
            Err(usage) => usage,
            Ok(()) => CliError::lib(fec_path, e),
        },
        e @ (VerityError::ZeroDataBlocks { .. } | VerityError::TreeTooLarge { .. }) => {
            CliError::lib(fec_path, e)
        }
        e => verify_error(&a.data, &a.hash_dev, p, e),
    }
}

/// Writes the corrected blocks back in place: every device with blocks to
/// write is opened first (through symbolic links, keeping the file's mode,
/// owner and hard links; a regular file or a block device only, as a
/// stream cannot be repaired), then each is written in turn and synced.
pub(super) fn write_back(
    c: &fec::Corrections,
    targets: &[(fec::Area, &PathBuf)],
) -> Result<(), CliError> {
    let mut files = Vec::new();
    for &(area, path) in targets {
        if c.len(area) == 0 {
            continue;
        }
        let f = output::in_place(path, false, false, "open for writing the repaired blocks")?;
        let meta = f.metadata().map_err(|e| CliError::io(path, "examine", e))?;
        let block = std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type());
        if !meta.is_file() && !block {
            return Err(CliError::Usage(format!(
                "{}: is not a regular file or a block device: it cannot be repaired in \
                 place (nothing was written)",
                path.display()
            )));
        }
        files.push((area, path, f));
    }
    for (area, path, f) in &files {
        c.write_to(*area, f)
            .map_err(|e| CliError::io(path, "write a repaired block", e))?;
        output::sync(f).map_err(|e| CliError::io(path, "sync", e))?;
    }
    Ok(())
}

/// Reports success: what FEC corrected (a sentence, bytes, blocks), if
/// anything, and whether it was written; with `--json`, one object on
/// standard output.
pub(super) fn done(
    a: &VerifyArgs,
    repair: bool,
    fec: Option<(String, u64, usize)>,
) -> Result<(), CliError> {
    if a.json {
        let v = serde_json::json!({
            "verified": true,
            // Lossy where a name is not UTF-8: JSON strings are.
            "data_device": a.data.to_string_lossy(),
            "hash_device": a.hash_dev.to_string_lossy(),
            "root_hash": a.root.to_ascii_lowercase(),
            "fec_corrected_bytes": fec.as_ref().map_or(0, |f| f.1),
            "fec_corrected_blocks": fec.as_ref().map_or(0, |f| f.2),
            "repaired": repair && fec.is_some(),
        });
        println!("{v}");
        return Ok(());
    }
    match (fec, repair) {
        (None, true) => eprintln!(
            "{} and {} verify: nothing to repair",
            a.data.display(),
            a.hash_dev.display()
        ),
        (None, false) => {}
        (Some((what, ..)), true) => eprintln!("{what}; written back, and they verify"),
        (Some((what, ..)), false) => eprintln!(
            "{what}; the devices were not changed (`mdu verity repair` writes the corrections)"
        ),
    }
    Ok(())
}

/// The root hash must have the length of the algorithm's digests.
pub(super) fn check_root_len(
    text: &str,
    root: &[u8],
    p: &dmverity::Params,
) -> Result<(), CliError> {
    if root.len() != p.hash.digest_len() {
        return Err(CliError::Usage(format!(
            "root hash {text:?} is {} bytes but {} needs {}",
            root.len(),
            p.hash.name(),
            p.hash.digest_len()
        )));
    }
    Ok(())
}
