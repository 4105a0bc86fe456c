//! `mdu luks format` and `mdu luks encrypt`: a new header, and the data encrypted under it.

use super::*;

/// Refuses a command that makes a new image or header when two of its
/// files (the key files, the detached header and `others`) are one.
pub(super) fn new_image_paths(
    a: &NewImageArgs,
    header: Option<&Path>,
    others: &[(&str, &Path)],
) -> Result<(), CliError> {
    let mut paths: Vec<(&str, &Path)> = a
        .key
        .file()
        .map(|k| ("--key-file", k))
        .into_iter()
        .collect();
    if let Some(v) = &a.volume_key_file {
        paths.push(("--volume-key-file", v));
    }
    if let Some(h) = header {
        paths.push(("--header", h));
    }
    paths.extend_from_slice(others);
    paths::distinct(&paths)
}

/// `--offset` (512-byte sectors) in bytes ([`FormatChoices::data_offset_sectors`]).
pub(super) fn offset_bytes(sectors: u64) -> Result<u64, CliError> {
    FormatChoices::data_offset_sectors(sectors)
        .map_err(|e| CliError::Usage(format!("--offset {sectors}: {e}")))
}

/// `--cipher` and `--key-size` (bits) as the library takes them
/// ([`FormatChoices::cipher_and_key_bits`]).
pub(super) fn cipher_choice(
    cipher: &str,
    key_bits: Option<u32>,
) -> Result<(CipherSpec, Option<usize>), CliError> {
    FormatChoices::cipher_and_key_bits(cipher, key_bits).map_err(|e| {
        CliError::Usage(match e {
            Luks2Error::Cipher(e) => format!("--cipher {cipher}: {e}"),
            e => format!("--key-size {}: {e}", key_bits.unwrap_or_default()),
        })
    })
}

/// `--hash`.
pub(super) fn hash_choice(name: &str) -> Result<Hash, CliError> {
    Hash::parse(name).ok_or_else(|| {
        CliError::Usage(format!(
            "--hash {name}: use sha1, sha256, sha512, ripemd160 or whirlpool"
        ))
    })
}

/// The format parameters of a new image, every one checked: no file is
/// read, nothing is opened and no key derived before they are. What the
/// options leave out, the library's [`FormatChoices`] fills in; with
/// `benchmark` and without --pbkdf-force-iterations, the KDF costs are
/// benchmarked to --iter-time (seconds: after the checks and the
/// passphrase, as cryptsetup).
pub(super) fn format_params(a: &NewImageArgs, benchmark: bool) -> Result<FormatParams, CliError> {
    let (cipher, key_size) = cipher_choice(&a.cipher, a.key_size)?;
    let hash = hash_choice(&a.hash)?;
    FormatChoices {
        cipher: Some(cipher),
        key_size,
        sector_size: Some(a.sector_size),
        pbkdf: a.pbkdf.into(),
        iterations: a.pbkdf_force_iterations,
        iter_time_ms: benchmark.then_some(a.iter_time),
        memory_kib: Some(a.pbkdf_memory),
        parallel: Some(a.pbkdf_parallel),
        hash: Some(hash),
        uuid: a.uuid.clone(),
        label: a.label.clone(),
        subsystem: a.subsystem.clone(),
        data_offset: Some(offset_bytes(a.offset_sectors())?),
        weak_keys: a.weak.policy(),
    }
    .params()
    .map_err(new_header_error)
}

/// The time a new keyslot's key derivation is benchmarked to
/// (`--iter-time`), or `None` when --pbkdf-force-iterations fixes its
/// cost (`forced`). A benchmark takes seconds: on a terminal or with -v
/// the user is told, as cryptsetup does. Every verb that makes a keyslot
/// (format, the keyslot verbs, reencrypt) asks here, after the checks
/// and the passphrase.
pub(super) fn benchmark_to(image: &Path, iter_time: u32, forced: bool) -> Option<u32> {
    if forced {
        return None;
    }
    if std::io::stderr().is_terminal() || flags().verbose {
        eprintln!(
            "mdu: {}: benchmarking the key derivation to {iter_time} ms...",
            image.display()
        );
    }
    Some(iter_time)
}

/// The volume key of a new image: from --volume-key-file, or random.
pub(super) fn volume_key(a: &NewImageArgs, bytes: usize) -> Result<Zeroizing<Vec<u8>>, CliError> {
    let Some(p) = &a.volume_key_file else {
        let mut key = Zeroizing::new(vec![0u8; bytes]);
        process::random_bytes(&mut key)?;
        return Ok(key);
    };
    mdu_luks2::read_volume_key_file(p, bytes).map_err(|e| match e {
        mdu_luks2::KeyFileError::Io(e) => CliError::io(p, "read the volume key", e),
        e => key_file_error(p, e),
    })
}

/// A new image's header region, its parameters and its volume key.
pub(super) struct NewImage {
    region: Vec<u8>,
    params: FormatParams,
    key: Zeroizing<Vec<u8>>,
}

/// The header region of a new image `image` with the checked `params` (of
/// a detached header: `detached`): reads the volume key and the
/// passphrase, benchmarks the KDF (unless its cost is forced) and derives
/// the keyslot's key.
pub(super) fn header_region(
    a: &NewImageArgs,
    image: &Path,
    params: FormatParams,
    detached: bool,
) -> Result<NewImage, CliError> {
    let key = volume_key(a, params.key_size)?;
    let pass = a.key.new_passphrase(image)?;
    let forced = a.pbkdf_force_iterations.is_some();
    let params = if benchmark_to(image, a.iter_time, forced).is_some() {
        let benchmarked = format_params(a, true)?;
        FormatParams {
            kdf: benchmarked.kdf,
            digest_iterations: benchmarked.digest_iterations,
            ..params
        }
    } else {
        params
    };
    let kdf = match params.kdf {
        mdu_luks2::KdfParams::Pbkdf2 { hash, iterations } => {
            format!("pbkdf2-{hash}, {iterations} iterations")
        }
        mdu_luks2::KdfParams::Argon2 {
            variant,
            time,
            memory,
            cpus,
        } => format!(
            "{}, {time} passes, {memory} KiB, {cpus} threads",
            variant.name()
        ),
    };
    debug(format_args!(
        "{}: keyslot 0: {kdf}; volume-key digest: pbkdf2-sha256, {} iterations",
        image.display(),
        params.digest_iterations
    ));
    if std::io::stderr().is_terminal() || flags().verbose {
        eprintln!(
            "mdu: {}: deriving the key of keyslot 0 ({kdf})...",
            image.display()
        );
    }
    let random = &mut mdu_luks2::os_random;
    let region = if detached {
        mdu_luks2::format_detached(&params, &pass, &key, random).map_err(new_header_error)?
    } else {
        mdu_luks2::format(&params, &pass, &key, random).map_err(|e| {
            match (e, &a.volume_key_file) {
                (Luks2Error::Cipher(e), Some(p)) if e.is_weak_key() => {
                    error::key_error(p, "the volume key", e)
                }
                (e, _) => new_header_error(e),
            }
        })?
    };
    verbose(format_args!("keyslot 0 created"));
    Ok(NewImage {
        region,
        params,
        key,
    })
}

/// A new header or keyslot refused by the library: out of memory (exit
/// 3), or a parameter.
pub(super) fn new_header_error(e: Luks2Error) -> CliError {
    match e {
        e @ Luks2Error::OutOfMemory { .. } => status(OUT_OF_MEMORY, CliError::Usage(e.to_string())),
        e => CliError::Usage(e.to_string()),
    }
}

/// Writes the header region `region` at the start of `out` and leaves the
/// rest up to `data_offset` a hole (a new file) or as it was (a device);
/// on a stream, zeros.
pub(super) fn write_region(
    out: &mut Output,
    region: &[u8],
    data_offset: u64,
) -> Result<(), CliError> {
    let path = out.path().to_owned();
    let len = region.len() as u64;
    let r = out.file().write_all(region).and_then(|()| {
        if out.seekable() {
            out.file().seek(SeekFrom::Start(data_offset)).map(drop)
        } else {
            let gap = data_offset.saturating_sub(len);
            std::io::copy(&mut std::io::repeat(0).take(gap), out.file()).map(drop)
        }
    });
    r.map_err(|e| CliError::io(&path, "write the header", e))
}

/// An existing IMAGE that `format` writes its header over, in place (a
/// regular file, or a block device at least `end` bytes long, opened
/// exclusively so that the kernel refuses a mounted one); `None` for a
/// new file. A FIFO, a character device or a descriptor's stream is
/// refused.
fn existing_image(path: &Path, end: u64) -> Result<Option<File>, CliError> {
    Ok(match Target::resolve(path)? {
        Target::New(_) => None,
        Target::Stream(_, _, Some(_)) => {
            // /dev/stdout, /dev/fd/N: whatever the descriptor is open on
            // (a file too), it is written through as a stream.
            return Err(status(
                WRONG_DEVICE,
                CliError::Usage(format!(
                    "{}: is written as a stream through this process's descriptor: a LUKS2 \
                     header is written at positions of a regular file or a block device; name \
                     the file itself instead of redirecting to it",
                    path.display()
                )),
            ));
        }
        Target::Stream(..) => {
            return Err(status(
                WRONG_DEVICE,
                CliError::Usage(format!(
                    "{}: is a FIFO or character device: a LUKS2 header is written at \
                     positions of a regular file or a block device",
                    path.display()
                )),
            ));
        }
        Target::File(..) | Target::Block(..) => {
            // A device is opened exclusively: the kernel refuses a mounted
            // one.
            let f = crate::output::in_place(path, false, true, "open for writing")?;
            let size = (&f)
                .seek(SeekFrom::End(0))
                .map_err(|e| CliError::io(path, "read its size", e))?;
            let block = f.metadata().is_ok_and(|m| m.file_type().is_block_device());
            if block && size < end {
                return Err(CliError::Usage(format!(
                    "{}: the device holds {size} bytes, less than the data offset {end}: \
                     nothing was written",
                    path.display()
                )));
            }
            Some(f)
        }
    })
}

/// cryptsetup's question before a header is written over `path`.
fn overwrite_confirmed(path: &Path) -> Result<(), CliError> {
    let question = format!(
        "This overwrites the data on {} irrevocably.",
        path.display()
    );
    if confirm(&question, flags().batch)? {
        return Ok(());
    }
    Err(CliError::Usage(format!(
        "{}: operation aborted: nothing was written",
        path.display()
    )))
}

pub(super) fn format(a: FormatArgs) -> Result<(), CliError> {
    let path = &a.image;
    new_image_paths(&a.new, a.header.as_deref(), &[("IMAGE", path)])?;
    if flags().luks_type == Some(LuksType::Luks1) {
        return format_luks1(&a);
    }
    let params = format_params(&a.new, false)?;
    if let Some(h) = &a.header {
        File::open(path).map_err(|e| status(WRONG_DEVICE, CliError::io(path, "open", e)))?;
        if h.exists() {
            overwrite_confirmed(h)?;
        }
        // A header holds the keyslots: readable by its owner only.
        let mut out = Output::to(h).private().open()?;
        let region = header_region(&a.new, h, params, true)?.region;
        out.file()
            .write_all(&region)
            .map_err(|e| CliError::io(h, "write the header", e))?;
        return Ok(out.commit()?);
    }
    let end = params.data_offset;
    write_new_image(&a, end, || {
        Ok(header_region(&a.new, path, params, false)?.region)
    })
}

/// Writes the header region `region()` makes (`end` bytes: the data
/// offset) into IMAGE. An existing IMAGE gets the header written over its
/// start, in place, as luksFormat does; a new one is created atomically.
/// Both are checked before `region` runs (before the passphrase is
/// derived).
pub(super) fn write_new_image(
    a: &FormatArgs,
    end: u64,
    region: impl FnOnce() -> Result<Vec<u8>, CliError>,
) -> Result<(), CliError> {
    let path = &a.image;
    // A header written over an existing image: the image is this
    // command's alone from here on.
    let mut locks = Locks::new();
    lock_file(&mut locks, path)?;
    match existing_image(path, end)? {
        Some(f) => {
            overwrite_confirmed(path)?;
            let region = region()?;
            f.write_all_at(&region, 0)
                .map_err(|e| CliError::io(path, "write the header", e))?;
            f.sync_all()
                .map_err(|e| CliError::io(path, "sync to stable storage", e))
        }
        None => {
            let mut out = Output::to(path).open()?;
            // The image's length is taken before the key derivation, so an
            // offset the file system cannot hold fails at once.
            out.file().set_len(end).map_err(|e| {
                CliError::Usage(format!(
                    "{}: cannot make an image of {end} bytes (--offset {}): {e}; nothing was written",
                    path.display(),
                    end / 512
                ))
            })?;
            let region = region()?;
            write_region(&mut out, &region, end)?;
            out.file()
                .set_len(end)
                .map_err(|e| CliError::io(path, "write the header", e))?;
            Ok(out.commit()?)
        }
    }
}

/// The outputs of `encrypt`, checked and opened before the key
/// derivation: IMAGE, `total` bytes long with the data's bytes from
/// `start` reserved, and the detached header if one is asked for; neither
/// may be PLAIN (`in_meta`).
fn encrypt_outputs(
    a: &EncryptArgs,
    in_meta: &std::fs::Metadata,
    start: u64,
    total: u64,
) -> Result<(Output, Option<Output>), CliError> {
    let out = Output::to(&a.image)
        .not_same_as(&a.plain, in_meta.clone())
        .len(total)
        .reserve(start, total - start)
        .open()?;
    let header = match &a.header {
        Some(h) => Some(
            Output::to(h)
                .private()
                .not_same_as(&a.plain, in_meta.clone())
                .open()?,
        ),
        None => None,
    };
    Ok((out, header))
}

pub(super) fn encrypt(a: EncryptArgs) -> Result<(), CliError> {
    new_image_paths(
        &a.new,
        a.header.as_deref(),
        &[("PLAIN", &a.plain), ("IMAGE", &a.image)],
    )?;
    let (input, len) = open_sized(&a.plain)?;
    let ss = u64::from(a.new.sector_size);
    if len == 0 || !len.is_multiple_of(ss) {
        return Err(CliError::Input {
            path: a.plain.clone(),
            offset: len - len % ss,
            rule: format!(
                "the plaintext ({len} bytes) must be a whole, non-zero number of {ss}-byte sectors"
            ),
        });
    }
    let params = format_params(&a.new, false)?;
    // A detached header: the data from offset 0 of IMAGE.
    let start = if a.header.is_some() {
        0
    } else {
        params.data_offset
    };
    let total = start.checked_add(len).ok_or_else(|| {
        CliError::Usage(format!(
            "--offset {}: the image would be too large",
            a.new.offset_sectors()
        ))
    })?;
    let in_meta = input
        .metadata()
        .map_err(|e| CliError::io(&a.plain, "examine", e))?;
    let (mut out, mut header_out) = encrypt_outputs(&a, &in_meta, start, total)?;
    let NewImage {
        region,
        params,
        key,
    } = header_region(&a.new, &a.image, params, header_out.is_some())?;
    let geometry =
        Geometry::new(params.sector_size, 0, false).map_err(|e| CliError::Usage(e.to_string()))?;
    let cipher = SectorCipher::new(params.cipher, &key, geometry, params.weak_keys)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    drop(key);
    match &mut header_out {
        Some(h) => {
            let path = h.path().to_owned();
            h.file()
                .write_all(&region)
                .map_err(|e| CliError::io(&path, "write the header", e))?;
        }
        None => write_region(&mut out, &region, params.data_offset)?,
    }
    let seekable = out.seekable();
    pipeline::run(
        Direction::Encrypt,
        &cipher,
        Source {
            file: &input,
            path: &a.plain,
            offset: 0,
            len: Some(len),
        },
        Sink {
            file: out.file(),
            path: &a.image,
            offset: start,
            seekable,
        },
        a.threads,
    )?;
    out.commit()?;
    match header_out {
        Some(h) => Ok(h.commit()?),
        None => Ok(()),
    }
}
