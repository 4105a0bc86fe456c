//! `mdu crypt --in-place`: IN converted where it lies by the library's
//! in-place engine, its progress kept in a journal so that a killed run
//! resumes.

use super::*;

/// `--in-place`: converts the regular file or block device IN where it
/// lies, chunk by chunk, each chunk read whole before it is written back,
/// with a [`Journal`] that makes every moment of the run resumable and is
/// bound to IN (the module `journal` has the format and the rules).
///
/// Data at position `p` (from the start of the data) is read at
/// `in_base + p` and written at `out_base + p`: encrypt moves it up by the
/// `--offset` area (`out_base = offset * 512`), decrypt moves it down
/// (`in_base = offset * 512`). Moving down, front to back is safe: every
/// later read lies above the chunk just written. Moving up, the chunks go
/// back to front: every later read lies below the chunk just read, and so
/// below where it was written. Without `--offset` the two orders are the
/// same.
pub(super) fn in_place(
    dir: Direction,
    a: &CryptArgs,
    cipher: &SectorCipher,
    key_check: &[u8; 32],
    meta: &Metadata,
) -> Result<(), CliError> {
    let path = a.input.as_path();
    let (journal_path, header) = check_in_place(dir, a, meta)?;
    // IN is this run's alone before anything of it is read for the run.
    let mut locks = Locks::new();
    locks.file(path)?;
    let f = output::in_place(path, true, false, "open for reading and writing")?;
    let (in_base, out_base) = if dir.is_encrypt() {
        (0, header)
    } else {
        (header, 0)
    };
    let pool = process::pool(a.threads)?;
    let params = Params {
        direction: dir,
        in_base,
        out_base,
        sector_size: a.sector_size,
        cipher: a.cipher.clone(),
        key_check: *key_check,
    };
    let err = |e| plain_error(path, journal_path, e);
    let mut run = if a.resume {
        Plain::resume(journal::open(journal_path)?, f, cipher, params).map_err(err)?
    } else {
        let chunk = (CHUNK_PER_THREAD * pool.current_num_threads()) as u64;
        start(a, journal_path, f, cipher, params, chunk)?
    };
    let (done, total) = run.progress();
    let pb = progress::progress(total, dir.name());
    pb.set_position(done);
    pool.install(|| mdu_inplace::run(&mut run, &mut |done, _| pb.set_position(done), &|| false))
        .map_err(err)?;
    pb.finish_and_clear();
    drop(run);
    Ok(journal::remove(journal_path)?)
}

/// The options of `--in-place` checked against IN (`meta`) before
/// anything is locked or opened: the journal, and the `--offset` area in
/// bytes.
fn check_in_place<'a>(
    dir: Direction,
    a: &'a CryptArgs,
    meta: &Metadata,
) -> Result<(&'a Path, u64), CliError> {
    let path = a.input.as_path();
    let regular = meta.is_file();
    if !regular && !meta.file_type().is_block_device() {
        return Err(CliError::Usage(format!(
            "--in-place needs a regular file or a block device; {} is neither",
            path.display()
        )));
    }
    let Some(journal_path) = a.journal.as_deref() else {
        return Err(CliError::Usage(
            "--in-place needs --journal FILE: the record that lets a run that is killed or \
             loses power be resumed (--resume) without losing data"
                .into(),
        ));
    };
    if output::same_file(meta, journal_path) {
        return Err(CliError::Usage(format!(
            "--journal {} is IN itself: the journal must be another file",
            journal_path.display()
        )));
    }
    let header = a
        .offset
        .checked_mul(512)
        .ok_or_else(|| CliError::Usage(format!("--offset {} is too large", a.offset)))?;
    if dir.is_encrypt() && header > 0 && !regular {
        return Err(CliError::Usage(format!(
            "--in-place encrypt with --offset moves the data up by {header} bytes, but the \
             block device {} cannot grow: encrypt it into another device or file",
            path.display()
        )));
    }
    Ok((journal_path, header))
}

/// A new run: its journal created with the first record
/// ([`journal::create`]), and IN grown by the `--offset` area when the
/// data moves up, so that a full disk stops the run before anything was
/// moved.
fn start<'c>(
    a: &CryptArgs,
    journal_path: &Path,
    f: File,
    cipher: &'c SectorCipher,
    params: Params,
    chunk: u64,
) -> Result<Plain<'c>, CliError> {
    let path = a.input.as_path();
    let (in_base, out_base) = (params.in_base, params.out_base);
    let len = (&f)
        .seek(SeekFrom::End(0))
        .map_err(|e| CliError::io(path, "read its size", e))?;
    if len < in_base {
        return Err(CliError::Input {
            path: path.to_owned(),
            offset: len,
            rule: format!(
                "the file ends before --offset {} (byte {in_base}) where the encrypted data starts",
                a.offset
            ),
        });
    }
    let grow = out_base - in_base.min(out_base);
    let reserve = (grow > 0).then(|| f.try_clone());
    let run = journal::create(journal_path, |jf| {
        Plain::start(jf, f, cipher, params, chunk).map_err(|e| plain_error(path, journal_path, e))
    })?;
    if let Some(dev) = reserve {
        let grown = dev.and_then(|dev| output::reserve(&dev, len, grow));
        if let Err(e) = grown {
            let _ = journal::remove(journal_path);
            return Err(CliError::io(
                path,
                "grow the file by the --offset area (nothing was changed)",
                e,
            ));
        }
    }
    Ok(run)
}

/// The library's account of an in-place run, said about IN or the journal.
fn plain_error(path: &Path, journal: &Path, e: plain::PlainError) -> CliError {
    match e {
        plain::PlainError::Device(d) if d.is_eof() => CliError::Input {
            path: path.to_owned(),
            offset: d.offset,
            rule: format!(
                "{} bytes expected here, but the file ends before them (it shrank while it \
                 was converted in place)",
                d.len
            ),
        },
        plain::PlainError::Device(d) => {
            let action = match d.op {
                Op::Read => "read",
                Op::Write => "write",
                Op::Sync => "sync to stable storage",
            };
            CliError::io(path, action, d.error)
        }
        plain::PlainError::Journal { action, error } => CliError::io(journal, action, error),
        plain::PlainError::Refused(message) => CliError::Refused {
            path: journal.to_owned(),
            message,
        },
        plain::PlainError::OtherRun => CliError::Usage(format!(
            "{}: the journal was written by a run with another cipher, key, sector size, \
             --offset or direction: give the same ones to resume it",
            journal.display()
        )),
        plain::PlainError::Data { offset, rule } => CliError::Input {
            path: path.to_owned(),
            offset,
            rule,
        },
        e => CliError::lib(path, e),
    }
}
