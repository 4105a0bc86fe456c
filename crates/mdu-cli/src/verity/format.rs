//! `mdu verity format`: the hash device, the FEC parity (fed while DATA
//! is hashed where it can be) and the root hash, in that order.

use super::*;

pub(super) fn format(a: FormatArgs) -> Result<(), CliError> {
    let p = params(&a.opts, true)?;
    a.fec.check(&p)?;
    // DATA is hashed from where it lies if it is mapped; with FEC, the
    // mapped windows also feed the parity on their way to the hasher.
    let (input, data_len) = input::open_data(&a.data, !a.no_mmap)?;
    check_overlap(&a.data, &a.hash_dev, &p, data_len)?;
    let (mut hash_out, mut fec_out, mut root_out) = format_outputs(&a)?;
    // With FEC, the mapped windows also feed the parity on their way to
    // the hasher, if its layout can be known before the tree is written.
    let early = match &input {
        input::Input::Mapped(_) => early_encoder(&a.fec, &a.hash_dev, &p, data_len),
        input::Input::File(_) => None,
    };
    let (data, pb) = match input {
        input::Input::Mapped(windows) => {
            let tee = early.clone();
            let windows = windows.inspect(move |w| {
                if let (Some(e), Ok(w)) = (&tee, w) {
                    e.take(w);
                }
            });
            (
                mdu_verity::Source::chunks(windows).with_len(data_len),
                indicatif::ProgressBar::hidden(),
            )
        }
        input::Input::File(file) => {
            let pb = progress::progress(data_len, "dm-verity format");
            (mdu_verity::Source::seekable(pb.wrap_read(file)), pb)
        }
    };
    let pool = process::pool(a.opts.threads)?;
    let out = pool
        .install(|| dmverity::format(data, hash_out.file(), &p))
        .map_err(|e| verity_error(&a.data, &a.hash_dev, &p, e))?;
    spell_superblock_name(&a.opts, &p, &out, hash_out.file(), &a.hash_dev)?;
    // The parity goes in before the hash image is renamed into place, so a
    // failure leaves neither.
    let fec = write_parity(
        &a.fec,
        &a.data,
        &a.hash_dev,
        hash_out.file(),
        fec_out.as_mut(),
        &p,
        &out,
        early,
    )?;
    pb.finish_and_clear();
    let root = out.root_hash().to_hex();
    if let Some(o) = root_out.as_mut() {
        std::io::Write::write_all(o.file(), root.as_bytes())
            .map_err(|e| CliError::io(o.path(), "write the root hash", e))?;
    }
    // The FEC file first, the hash image next, the root hash last: a run
    // that fails half-way leaves no root hash that verifies a tree not
    // yet in place.
    for o in [fec_out, Some(hash_out), root_out].into_iter().flatten() {
        o.commit()?;
    }
    Summary {
        hash_dev: &a.hash_dev,
        p: &p,
        hash_name: a.opts.hash.as_ref().map_or(p.hash.name(), |h| &h.given),
        data_blocks: out.data_blocks(),
        hash_blocks: out.hash_blocks(),
        root: Some(&root),
        tree_end: out.hash_device_size(),
        fec: fec.as_ref(),
    }
    .print(a.json);
    Ok(())
}

/// The outputs of `format`, checked and opened before any hashing: HASH
/// (read back for the parity; DATA only where `check_overlap` allowed the
/// two to share a file or device), the FEC device and the root hash file.
pub(super) fn format_outputs(
    a: &FormatArgs,
) -> Result<(Output, Option<Output>, Option<Output>), CliError> {
    let examine = |p: &Path| std::fs::metadata(p).map_err(|e| CliError::io(p, "examine", e));
    let data = examine(&a.data)?;
    let mut hash = Output::to(&a.hash_dev)
        .keep_existing()
        .read_back()
        .seekable_only();
    if !output::same_file(&data, &a.hash_dev) {
        hash = hash.not_same_as(&a.data, data.clone());
    }
    let hash = hash.open()?;
    let fec = a.fec.open_output(&a.data, &data, &a.hash_dev)?;
    let root = match &a.root_hash_file {
        Some(f) => {
            let named = [Some(&a.hash_dev), a.fec.device()];
            if named.into_iter().flatten().any(|o| o == f) {
                return Err(CliError::Usage(format!(
                    "--root-hash-file {} is also an output of the tree or the parity",
                    f.display()
                )));
            }
            let mut spec = Output::to(f).not_same_as(&a.data, data);
            if let Ok(m) = std::fs::metadata(&a.hash_dev) {
                spec = spec.not_same_as(&a.hash_dev, m);
            }
            Some(spec.open()?)
        }
        None => None,
    };
    Ok((hash, fec, root))
}

/// An encoder to feed DATA's blocks to while they are hashed, when the FEC
/// layout can be predicted: the hash image is a new file (or the parity
/// shares it at a given offset), so the protected hash area is exactly
/// the tree.
fn early_encoder(
    f: &FecArgs,
    hash_path: &Path,
    p: &dmverity::Params,
    data_len: u64,
) -> Option<Arc<EarlyEncoder>> {
    f.device()?;
    let data_blocks = p
        .data_blocks
        .unwrap_or(data_len / u64::from(p.data_block_size));
    let new = !hash_path.exists();
    EarlyEncoder::predict(p, data_blocks, &f.params(hash_path), new).map(Arc::new)
}

/// The FEC layout of an existing image, for `dump`: what `write_parity`
/// would write, without reading the data. `None` without `--fec-device`.
pub(super) fn describe_parity(
    f: &FecArgs,
    hash_path: &Path,
    p: &dmverity::Params,
    data_blocks: u64,
) -> Result<Option<fec::VerityLayout>, CliError> {
    if !f.given() {
        return Ok(None);
    }
    f.check(p)?;
    let hash_size = if f.shares_hash_file(hash_path) {
        0
    } else {
        let mut h = input::open_read(hash_path)?;
        h.seek(SeekFrom::End(0))
            .map_err(|e| CliError::io(hash_path, "seek", e))?
    };
    f.layout(hash_path, p, data_blocks, hash_size).map(Some)
}

/// Computes the parity of DATA's `out.data_blocks()` blocks and the hash
/// device `hash` (already holding the tree) and writes it: into `hash` at
/// the offset if that is the FEC device, otherwise into `fec_out` (opened
/// by [`FecArgs::open_output`], committed by the caller). `None` without
/// `--fec-device`.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_parity(
    f: &FecArgs,
    data: &Path,
    hash_path: &Path,
    hash: &File,
    fec_out: Option<&mut Output>,
    p: &dmverity::Params,
    out: &Formatted,
    early: Option<Arc<EarlyEncoder>>,
) -> Result<Option<fec::VerityLayout>, CliError> {
    let Some(fec_path) = f.device() else {
        return Ok(None);
    };
    let fec_params = f.params(hash_path);
    let hash_len = ReadAt::size(hash).map_err(|e| CliError::io(hash_path, "seek", e.into()))?;
    let tree_end = out.hash_device_size().max(p.hash_offset);
    fec_params
        .check_placement(tree_end, hash_len)
        .map_err(|e| match e {
            VerityError::FecOffsetInTree { offset, tree_end } => CliError::Usage(format!(
                "--fec-offset {offset} lies inside the hash tree, which ends at byte {tree_end}"
            )),
            VerityError::FecOffsetPastEnd { offset, device_len } => CliError::Usage(format!(
                "--fec-offset {offset} is past the end of {} ({device_len} bytes): make the \
                 file that long first, as veritysetup requires",
                hash_path.display()
            )),
            e => CliError::lib(hash_path, e),
        })?;
    // The protected hash area runs from the tree's first block to the end
    // of the hash device, or to the parity when it shares the file.
    let layout = f.layout(hash_path, p, out.data_blocks(), hash_len)?;
    let read_error = |path: &Path, e: VerityError| match e {
        VerityError::Io(e) => CliError::io(path, "read for the FEC parity", e),
        e => CliError::lib(path, e),
    };
    // The encoder that took DATA's blocks while they were hashed, if its
    // predicted layout is the real one.
    let early = early.and_then(Arc::into_inner);
    let mut enc = match early.and_then(|e| e.into_encoder(&layout)) {
        Some(enc) => enc,
        None => fec::VerityEncoder::new(layout).map_err(|e| CliError::lib(fec_path, e))?,
    };
    let d = input::open_read(data)?;
    if enc.data_blocks_taken() == 0 && d.metadata().is_ok_and(|m| m.is_file()) {
        // A regular file is taken from the page cache where it lies (the
        // hashing pass just read it), a window at a time.
        let total = layout.data_blocks() * u64::from(p.data_block_size);
        let mut at = 0;
        while at < total {
            let len = input::WINDOW.min(total - at);
            let map = input::map_window_populated(&d, at, len)
                .map_err(|e| CliError::io(data, "map for the FEC parity", e))?;
            enc.push_data(&map).map_err(|e| CliError::lib(data, e))?;
            at += len;
        }
    }
    // The blocks not taken yet (all of them from a device), by position.
    enc.read_data(&d).map_err(|e| read_error(data, e))?;
    enc.read_hash(hash).map_err(|e| read_error(hash_path, e))?;
    let (target, path) = match fec_out {
        Some(o) if !fec_params.in_hash_device => (&*o.file(), fec_path.as_path()),
        _ => (hash, hash_path),
    };
    enc.write_to(target).map_err(|e| match e {
        VerityError::Io(e) => CliError::io(path, "write the FEC parity", e),
        e => CliError::lib(path, e),
    })?;
    Ok(Some(layout))
}
