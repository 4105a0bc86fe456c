//! `mdu luks reencrypt`: the options made into the library request, and the run with its progress and interruption.

use super::*;

/// Set by SIGINT, SIGTERM and SIGHUP while a reencryption runs: it stops
/// after the current hotzone.
pub(super) static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(super) extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, std::sync::atomic::Ordering::SeqCst);
}

pub(super) fn reencrypt(a: ReencryptArgs) -> Result<(), CliError> {
    use mdu_luks2::reencrypt::{Began, Goal, Header, Outcome, Reencryption};
    // Every parameter is checked before anything is locked, read or
    // written.
    let mut request = reencrypt_request(&a)?;
    let header_path = a.header.clone().unwrap_or_else(|| a.image.clone());
    if let Some(k) = a.key.file() {
        paths::distinct(&[("--key-file", k), ("IMAGE", &a.image)])?;
        if a.header.is_some() {
            paths::distinct(&[("--key-file", k), ("--header", &header_path)])?;
        }
    }
    // Ctrl-C from here on stops the run where it is recorded: during the
    // key derivation of a new keyslot, once the header that records the
    // run is whole (a new header file is never left empty).
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: `on_stop` only stores to an atomic, which is
        // async-signal-safe, and has the signature signal() expects.
        unsafe { libc::signal(sig, on_stop as *const () as libc::sighandler_t) };
    }
    // Nothing is read for the run, nor written, before the image and the
    // header are this run's alone.
    let mut locks = Locks::new();
    lock_file(&mut locks, &a.image)?;
    lock_file(&mut locks, &header_path)?;
    let data = crate::output::in_place(&a.image, true, false, "open")
        .map_err(|e| status(WRONG_DEVICE, e.into()))?;
    // A second handle on IMAGE.
    let dup = || {
        data.try_clone()
            .map_err(|e| CliError::io(&a.image, "open", e))
    };
    let pass = a
        .key
        .open_with(&a.image, |pass| Ok(Zeroizing::new(pass.to_vec())))?;
    let (header_file, created) = match &a.header {
        Some(h) => header_file(h, &request.goal)?,
        None => (dup()?, false),
    };
    // The header, read once; a cryptsetup reencryption of this volume
    // holds this lock for its whole run. The library decides from the
    // header whether the run asked for starts or the one in progress goes
    // on (the same command again after a kill goes on with the run it
    // started, as `cryptsetup reencrypt` does).
    let header = Header::load(header_file);
    if let (Some(uuid), false) = (header.uuid(), flags().disable_locks) {
        locks.reencryption(uuid, &a.image)?;
    }
    // A run in progress goes on with the keyslot it made: nothing to
    // benchmark then.
    benchmark_new_keyslot(&a, &mut request, header.in_progress())?;
    let (mut run, began) = match Reencryption::open_or_start(header, dup()?, &pass, &request) {
        Ok(opened) => opened,
        Err(e) => {
            // A new header file goes while nothing depends on it: an
            // encryption's, or an export while it is empty or IMAGE still
            // has its header.
            if created
                && (matches!(request.goal, Goal::Encrypt(_))
                    || std::fs::metadata(&header_path).is_ok_and(|m| m.len() == 0)
                    || Image::load(&data).is_ok())
            {
                let _ = std::fs::remove_file(&header_path);
            }
            return Err(reencrypt_error(&header_path, e));
        }
    };
    if began == Began::Resumed && a.resilience.is_some() && !a.resume_only {
        eprintln!("mdu: resuming with the resilience recorded in the header");
    }
    if a.init_only {
        eprintln!(
            "mdu: reencryption of {} initialised ({} resilience); run again with --resume-only to convert",
            a.image.display(),
            run.resilience().name()
        );
        return Ok(());
    }
    let (done, total) = run.progress();
    let pb = progress::progress(
        total,
        &format!("{} {}", run.mode().name(), a.image.display()),
    );
    pb.set_position(done);
    let outcome = run
        .run(&mut |d, _| pb.set_position(d), &|| {
            STOP.load(std::sync::atomic::Ordering::SeqCst)
        })
        .map_err(|e| image_error(&header_path, e))?;
    pb.finish_and_clear();
    match outcome {
        Outcome::Finished => Ok(()),
        Outcome::Interrupted { done, total } => Err(interrupted(&a, done, total)),
    }
}

/// The new keyslot of a run that starts, its KDF cost benchmarked to
/// --iter-time ([`benchmark_to`]) after the passphrase, as `format` does:
/// an encryption's from the options, unless --pbkdf-force-iterations; a
/// key change's by the library, of the opened keyslot's KDF. A run
/// resumed (with --resume-only, or by the same command again) makes no
/// keyslot.
fn benchmark_new_keyslot(
    a: &ReencryptArgs,
    request: &mut mdu_luks2::reencrypt::Request,
    in_progress: bool,
) -> Result<(), CliError> {
    use mdu_luks2::reencrypt::Goal;
    let forced = a.resume_only || in_progress || a.pbkdf_force_iterations.is_some();
    match &mut request.goal {
        Goal::Decrypt { .. } => {}
        Goal::NewKey { .. } => {
            request.options.iter_time_ms = benchmark_to(&a.image, a.iter_time, forced)
        }
        Goal::Encrypt(p) | Goal::EncryptShift(p) => {
            if let Some(ms) = benchmark_to(&a.image, a.iter_time, forced) {
                let b = FormatChoices {
                    pbkdf: a.pbkdf.into(),
                    key_size: Some(p.key_size),
                    iter_time_ms: Some(ms),
                    ..FormatChoices::default()
                }
                .params()
                .map_err(new_header_error)?;
                (p.kdf, p.digest_iterations) = (b.kdf, b.digest_iterations);
            }
        }
    }
    Ok(())
}

/// The detached header file `path` of a run toward `goal`, and whether
/// this run created it: a new one for the detached header of an
/// encryption or the export of a decryption that moves the data (it must
/// not exist), the existing one otherwise. An empty header file is what a
/// run killed before it wrote its header leaves: nothing depends on it,
/// and it goes first.
fn header_file(path: &Path, goal: &mdu_luks2::reencrypt::Goal) -> Result<(File, bool), CliError> {
    use mdu_luks2::reencrypt::Goal;
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
        std::fs::remove_file(path)
            .map_err(|e| CliError::io(path, "remove the empty header file", e))?;
    }
    if !path.exists() && matches!(goal, Goal::Encrypt(_) | Goal::Decrypt { .. }) {
        let f = crate::output::create_new(path, true, "create the header file")?;
        return Ok((f, true));
    }
    Ok((crate::output::in_place(path, true, false, "open")?, false))
}

/// The library request of `mdu luks reencrypt`: its options checked and
/// turned into the goal (new key, decryption, encryption with a detached
/// header or a data shift) and the resilience of a new run.
pub(super) fn reencrypt_request(
    a: &ReencryptArgs,
) -> Result<mdu_luks2::reencrypt::Request, CliError> {
    use mdu_luks2::reencrypt::{Goal, Options, Request, ResilienceChoice};
    let hash = Hash::parse(&a.resilience_hash).ok_or_else(|| {
        CliError::Usage(format!(
            "--resilience-hash {}: use sha1, sha256 or sha512",
            a.resilience_hash
        ))
    })?;
    if let Some(h) = a.hotzone_size.filter(|&h| h < 4096) {
        return Err(CliError::Usage(format!(
            "--hotzone-size {h}: a hotzone holds at least one 4096-byte block"
        )));
    }
    if a.encrypt && a.header.is_none() && a.reduce_device_size.is_none() {
        return Err(CliError::Usage(
            "--encrypt needs --header FILE (a detached header) or --reduce-device-size SIZE (the header at the start of IMAGE, the data moved up)".into(),
        ));
    }
    let options = Options {
        resilience: match a.resilience.unwrap_or(ResilienceArg::Checksum) {
            ResilienceArg::Checksum => ResilienceChoice::Checksum,
            ResilienceArg::Journal => ResilienceChoice::Journal,
            ResilienceArg::None => ResilienceChoice::None,
        },
        hash,
        hotzone_size: a.hotzone_size,
        iter_time_ms: None,
    };
    // The encryption plan's parameters are checked before anything else.
    let shift = match a.reduce_device_size {
        Some(r) if r == 0 || r % 8192 != 0 => {
            return Err(CliError::Usage(format!(
                "--reduce-device-size {r}: a positive multiple of 8 KiB (twice a data offset that is a multiple of 4096)"
            )));
        }
        r => r.map(|r| r / 2),
    };
    let encrypt_params = if a.encrypt {
        let cipher = a.cipher.as_deref().unwrap_or(FormatChoices::CIPHER);
        let (cipher, key_size) = cipher_choice(cipher, a.key_size)?;
        let choices = FormatChoices {
            cipher: Some(cipher),
            key_size,
            sector_size: a.sector_size,
            pbkdf: a.pbkdf.into(),
            iterations: a.pbkdf_force_iterations,
            ..FormatChoices::default()
        };
        let mut params = choices
            .params()
            .map_err(|e| CliError::Usage(format!("{e}")))?;
        if let Some(s) = shift {
            params.data_offset = s;
            params
                .validate()
                .map_err(|e| CliError::Usage(format!("--reduce-device-size: {e}")))?;
        }
        Some(params)
    } else {
        None
    };
    let goal = match encrypt_params {
        Some(params) if shift.is_some() => Goal::EncryptShift(params),
        Some(params) => Goal::Encrypt(params),
        None if a.decrypt => Goal::Decrypt {
            key_slot: a.key_slot,
        },
        None => Goal::NewKey {
            cipher: (a.cipher.as_deref())
                .map(|c| cipher_choice(c, None).map(|(spec, _)| spec))
                .transpose()?,
            key_size: match a.key_size {
                Some(bits) if bits % 8 != 0 => {
                    return Err(CliError::Usage(format!(
                        "--key-size {bits}: not a whole number of bytes"
                    )));
                }
                bits => bits.map(|b| (b / 8) as usize),
            },
            sector_size: a.sector_size,
            key_slot: a.key_slot,
        },
    };
    Ok(Request {
        goal,
        options,
        start_only: a.init_only,
        resume_only: a.resume_only,
        allow_none: a.allow_none_resume,
    })
}

/// An interrupted run: the progress, and the command that goes on with it.
pub(super) fn interrupted(a: &ReencryptArgs, done: u64, total: u64) -> CliError {
    let mut again = "mdu luks reencrypt --resume-only".to_owned();
    if let Some(k) = &a.key.key_file {
        again += &format!(" --key-file {}", paths::shell_word(k));
    }
    if let Some(h) = &a.header {
        again += &format!(" --header {}", paths::shell_word(h));
    }
    again += &format!(" {}", paths::shell_word(&a.image));
    CliError::Refused {
        path: a.image.clone(),
        message: format!(
            "interrupted after {done} of {total} bytes, progress recorded; go on with: {again}"
        ),
    }
}

/// What `open_or_start` refused: a run asked for that is not the one in
/// progress is a usage error; the rest as [`image_error`].
pub(super) fn reencrypt_error(header: &Path, e: Luks2Error) -> CliError {
    match e {
        Luks2Error::InProgress { other: true } => CliError::Usage(format!(
            "{}: a reencryption is already in progress; resume it with --resume-only",
            header.display()
        )),
        Luks2Error::Params { problem } => CliError::Usage(problem),
        e => image_error(header, e),
    }
}
