//! The keyslot verbs on LUKS1 images, as cryptsetup 2.6 runs them:
//! `add-key`, `change-key` (the new slot written, then the old one
//! killed), `kill-slot`, `remove-key`; `convert-key` is refused (LUKS1 key
//! slots are PBKDF2 only). Every write goes through
//! [`mdu_luks2::luks1`]: key material synced before the header naming
//! it, a killed slot's header before its material is wiped.

use mdu_luks2::luks1;

use super::*;

/// Whether `path` holds a LUKS1 header (not with `--type luks2`, which
/// then refuses it as not LUKS2).
pub(super) fn is_luks1(path: &Path) -> Result<bool, CliError> {
    if flags().luks_type == Some(LuksType::Luks2) {
        return Ok(false);
    }
    let (f, _) = open_sized(path)?;
    match luks1::probe_version(&f) {
        Ok(v) => Ok(v == Some(1)),
        Err(e) => Err(image_error(path, e)),
    }
}

/// The header file of a verb (`--header`, else the image), when it is
/// LUKS1.
pub(super) fn luks1_path(image: &Path, header: Option<&Path>) -> Result<Option<PathBuf>, CliError> {
    let path = header.unwrap_or(image);
    Ok(is_luks1(path)?.then(|| path.to_owned()))
}

/// The LUKS1 header file `path`, locked into `locks` and opened for
/// writing, with its header (`detached`: named by `--header`).
pub(super) fn open_luks1_for_change(
    path: &Path,
    detached: bool,
    locks: &mut Locks,
) -> Result<(File, Luks1Header), CliError> {
    lock_file(locks, path)?;
    let f = crate::output::in_place(path, true, false, "open for writing")?;
    let hdr = match detached {
        true => Luks1Header::load_detached(&f),
        false => Luks1Header::load(&f),
    }
    .map_err(|e| image_error(path, e))?;
    Ok((f, hdr))
}

/// The PBKDF2 iterations of a new LUKS1 key slot: `--pbkdf-force-iterations`,
/// else the default of a new LUKS2 keyslot. What a LUKS1 slot cannot
/// hold is refused (its hash and cipher are the header's).
/// The PBKDF2 iterations of a new LUKS1 key slot of `image`:
/// --pbkdf-force-iterations, or the header's hash benchmarked to
/// --iter-time as cryptsetup's LUKS1 does; the options a LUKS1 slot cannot
/// have are refused first.
fn luks1_iterations(image: &Path, n: &NewKeyslotArgs, hdr: &Luks1Header) -> Result<u32, CliError> {
    let refuse = |what: &str| {
        Err(CliError::Usage(format!(
            "{what}: a LUKS1 key slot is PBKDF2 of the header's hash ({}) under the data cipher",
            hdr.hash.name()
        )))
    };
    if n.pbkdf.is_some_and(|p| p != PbkdfArg::Pbkdf2) {
        return refuse("--pbkdf argon2i/argon2id");
    }
    if n.pbkdf_memory.is_some() || n.pbkdf_parallel.is_some() {
        return refuse("--pbkdf-memory/--pbkdf-parallel");
    }
    if n.keyslot_cipher.is_some() {
        return refuse("--keyslot-cipher");
    }
    if let Some(h) = &n.hash
        && Hash::parse(h) != Some(hdr.hash)
    {
        return refuse(&format!("--hash {h}"));
    }
    let iterations = match benchmark_to(image, n.iter_time, n.pbkdf_force_iterations.is_some()) {
        Some(ms) => {
            let key = usize::try_from(hdr.key_bytes).unwrap_or(usize::MAX);
            mdu_luks2::luks1_iterations(hdr.hash, key, ms)
                .map_err(|e| CliError::Usage(e.to_string()))?
                .0
        }
        None => n
            .pbkdf_force_iterations
            .unwrap_or(FormatChoices::PBKDF2_ITERATIONS),
    };
    if iterations < luks1::MIN_ITERATIONS {
        return Err(CliError::Usage(format!(
            "--pbkdf-force-iterations {iterations}: PBKDF2 needs at least {} iterations",
            luks1::MIN_ITERATIONS
        )));
    }
    Ok(iterations)
}

/// Opens the volume key of `hdr` with the passphrase `key` gives: through
/// slot `slot` alone, or any.
fn luks1_unlock(
    path: &Path,
    f: &File,
    hdr: &Luks1Header,
    key: &KeyArgs,
    slot: Option<u32>,
) -> Result<mdu_luks2::VolumeKey, CliError> {
    let vk = key.open_with(path, |pass| {
        match slot {
            Some(s) => hdr.unlock_slot(f, s, pass),
            None => hdr.unlock(f, pass),
        }
        .map_err(|e| image_error(path, e))
    })?;
    verbose(format_args!("key slot {} unlocked", vk.slot));
    Ok(vk)
}

/// A key slot id that is not one of LUKS1's 8.
fn no_such_slot(path: &Path, slot: u32) -> CliError {
    CliError::Refused {
        path: path.to_owned(),
        message: format!("key slot {slot} is not a LUKS1 key slot (0 to 7)"),
    }
}

/// `add-key` on the LUKS1 header file `path`.
pub(super) fn luks1_add_key(a: &AddKeyArgs, path: &Path) -> Result<(), CliError> {
    if a.unbound {
        return Err(CliError::Usage(
            "--unbound: a LUKS1 header has no unbound keyslots".into(),
        ));
    }
    let (new_slot, open_slot) = match a.new_key_slot {
        Some(n) => (Some(n), a.key_slot),
        None => (a.key_slot, None),
    };
    let mut locks = Locks::new();
    let (f, hdr) = open_luks1_for_change(path, a.header.is_some(), &mut locks)?;
    let iterations = luks1_iterations(path, &a.new, &hdr)?;
    if let Some(bits) = a.key_size
        && bits != hdr.key_bytes * 8
    {
        return Err(CliError::Usage(format!(
            "--key-size {bits}: the volume key of this LUKS1 header is {} bits",
            hdr.key_bytes * 8
        )));
    }
    // The cheap refusals (a taken id, a full table) before any key
    // derivation.
    match new_slot {
        Some(s) if s as usize >= luks1::SLOTS => return Err(no_such_slot(path, s)),
        Some(s) if hdr.slots[s as usize].enabled => {
            return Err(CliError::Refused {
                path: path.to_owned(),
                message: format!("key slot {s} is in use: choose another one"),
            });
        }
        None if hdr.slots.iter().all(|s| s.enabled) => {
            return Err(CliError::Refused {
                path: path.to_owned(),
                message: "all 8 LUKS1 key slots are in use".into(),
            });
        }
        _ => {}
    }
    let key = match &a.volume_key_file {
        Some(p) => {
            let key =
                mdu_luks2::read_volume_key_file(p, hdr.key_bytes as usize).map_err(
                    |e| match e {
                        mdu_luks2::KeyFileError::Io(e) => CliError::io(p, "read the volume key", e),
                        e => key_file_error(p, e),
                    },
                )?;
            if !hdr.verify_key(&key) {
                return Err(CliError::Refused {
                    path: p.clone(),
                    message: "this volume key does not match the volume".into(),
                });
            }
            key
        }
        None => luks1_unlock(path, &f, &hdr, &a.key, open_slot)?.key,
    };
    let new_file = a.new_key_file.as_deref().or(a.new_keyfile.as_deref());
    let new_pass = new_passphrase(path, new_file, &a.new)?;
    let (_, slot) = luks1::add_keyslot(
        &f,
        &hdr,
        new_slot,
        &key,
        &new_pass,
        iterations,
        &mut mdu_luks2::os_random,
    )
    .map_err(|e| change_error(path, e))?;
    verbose(format_args!("key slot {slot} created"));
    Ok(())
}

/// `change-key` (`convert`: `convert-key`, refused) on the LUKS1 header
/// file `path`.
pub(super) fn luks1_change_key(
    a: &ChangeKeyArgs,
    path: &Path,
    convert: bool,
) -> Result<(), CliError> {
    if convert {
        return Err(CliError::Refused {
            path: path.to_owned(),
            message: "not a LUKS2 device: convert-key changes LUKS2 keyslots only (a LUKS1 key \
                      slot is PBKDF2; change-key gives it new iterations)"
                .into(),
        });
    }
    let mut locks = Locks::new();
    let (f, hdr) = open_luks1_for_change(path, a.header.is_some(), &mut locks)?;
    let iterations = luks1_iterations(path, &a.new, &hdr)?;
    if let Some(s) = a.key_slot
        && hdr.slots.get(s as usize).is_none_or(|k| !k.enabled)
    {
        return Err(change_error(path, Luks2Error::NoSuchKeyslot { slot: s }));
    }
    let key = luks1_unlock(path, &f, &hdr, &a.key, a.key_slot)?;
    let new_pass = new_passphrase(path, a.new_key_file.as_deref(), &a.new)?;
    // As cryptsetup: -S names the old slot and the new one (overwritten
    // in place); without it the new one is the first free slot.
    let (_, slot) = luks1::change_keyslot(
        &f,
        &hdr,
        key.slot,
        a.key_slot,
        &key.key,
        &new_pass,
        iterations,
        &mut mdu_luks2::os_random,
    )
    .map_err(|e| change_error(path, e))?;
    verbose(format_args!(
        "key slot {} changed to key slot {slot}",
        key.slot
    ));
    Ok(())
}

/// `kill-slot` on the LUKS1 header file `path`.
pub(super) fn luks1_kill_slot(a: &KillSlotArgs, path: &Path) -> Result<(), CliError> {
    let mut locks = Locks::new();
    let (f, hdr) = open_luks1_for_change(path, a.header.is_some(), &mut locks)?;
    if hdr.slots.get(a.slot as usize).is_none_or(|s| !s.enabled) {
        return Err(CliError::Refused {
            path: path.to_owned(),
            message: format!("keyslot {} is not active", a.slot),
        });
    }
    let pass = match &a.key_file {
        Some(p) => Some(read_passphrase(p)?),
        None => stdin_passphrase()?,
    };
    if let Some(pass) = pass {
        // cryptsetup's rule: a passphrase of another slot, or of this one
        // if it is the last.
        let enabled: Vec<u32> = (0..luks1::SLOTS as u32)
            .filter(|&k| hdr.slots[k as usize].enabled)
            .collect();
        let others: Vec<u32> = match enabled == [a.slot] {
            true => vec![a.slot],
            false => enabled.into_iter().filter(|&k| k != a.slot).collect(),
        };
        if !others
            .iter()
            .any(|&k| hdr.unlock_slot(&f, k, &pass).is_ok())
        {
            return Err(image_error(path, Luks2Error::WrongPassphrase));
        }
    }
    luks1::kill_keyslot(&f, &hdr, a.slot, &mut mdu_luks2::os_random)
        .map_err(|e| change_error(path, e))?;
    Ok(())
}

/// `remove-key` on the LUKS1 header file `path`.
pub(super) fn luks1_remove_key(a: &RemoveKeyArgs, path: &Path) -> Result<(), CliError> {
    let mut locks = Locks::new();
    let (f, hdr) = open_luks1_for_change(path, a.header.is_some(), &mut locks)?;
    let key = match a.key_file_arg.as_deref() {
        Some(p) => hdr
            .unlock(&f, &read_passphrase(p)?)
            .map_err(|e| image_error(path, e))?,
        None => luks1_unlock(path, &f, &hdr, &a.key, None)?,
    };
    let last = hdr
        .slots
        .iter()
        .enumerate()
        .all(|(k, s)| k as u32 == key.slot || !s.enabled);
    let question =
        "This is the last keyslot. The volume will become unusable after purging this key.";
    if last && !confirm(question, flags().batch)? {
        return Err(CliError::Refused {
            path: path.to_owned(),
            message: "operation aborted, the keyslot was NOT wiped".into(),
        });
    }
    luks1::kill_keyslot(&f, &hdr, key.slot, &mut mdu_luks2::os_random)
        .map_err(|e| change_error(path, e))?;
    Ok(())
}
