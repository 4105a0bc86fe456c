//! LUKS1 images under `mdu luks dump` and `format --type luks1` (decrypt
//! takes them in `decrypt.rs`): the header as cryptsetup prints it, a new
//! image as cryptsetup lays it out.

use mdu_luks2::luks1;

use super::*;

/// `dump` of a LUKS1 header `hdr` read from `f`.
pub(super) fn dump_luks1(a: &DumpArgs, f: &File, hdr: &Luks1Header) -> Result<(), CliError> {
    if a.unbound {
        return Err(CliError::Usage(
            "--unbound: a LUKS1 header has no unbound keyslots".into(),
        ));
    }
    let key = if a.dump_volume_key {
        let question = "The header dump with the volume key is sensitive: it opens the \
                        data without a passphrase.\nKeep it encrypted, in a safe place.";
        if !confirm(question, flags().batch)? {
            return Err(status(
                NO_PERMISSION,
                CliError::Usage("operation aborted: no key was printed".into()),
            ));
        }
        let key = a.key.open_with(&a.image, |pass| {
            match a.key_slot {
                Some(slot) => hdr.unlock_slot(f, slot, pass),
                None => hdr.unlock(f, pass),
            }
            .map_err(|e| image_error(&a.image, e))
        })?;
        verbose(format_args!("keyslot {} unlocked", key.slot));
        Some(key)
    } else {
        None
    };
    let text = match &key {
        _ if a.json => format!("{}\n", luks1::dump_json(hdr, key.as_ref())),
        Some(k) => luks1::volume_key_text(&a.image, hdr, k),
        None => luks1::dump_text(&a.image, hdr),
    };
    print(&text)
}

/// The parameters of a new LUKS1 image, every one checked before any file
/// is read; the PBKDF2 costs fixed (forced, or the defaults until
/// `format_luks1` benchmarks them).
fn luks1_params(a: &NewImageArgs) -> Result<luks1::FormatParams, CliError> {
    let unused = [
        ("--label", !a.label.is_empty()),
        ("--subsystem", !a.subsystem.is_empty()),
        (
            "--sector-size",
            a.sector_size != 512 && a.sector_size != FormatChoices::SECTOR_SIZE,
        ),
    ];
    if let Some((opt, _)) = unused.iter().find(|(_, given)| *given) {
        return Err(CliError::Usage(format!(
            "{opt}: a LUKS1 header has no such field (its sectors are 512 bytes)"
        )));
    }
    let (cipher, key_size) = cipher_choice(&a.cipher, a.key_size)?;
    let forced = a.pbkdf_force_iterations.is_some();
    let params = luks1::FormatParams {
        cipher,
        key_size: key_size.unwrap_or_else(|| cipher.default_key_len()),
        hash: hash_choice(&a.hash)?,
        iterations: a
            .pbkdf_force_iterations
            .unwrap_or(FormatChoices::PBKDF2_ITERATIONS),
        digest_iterations: if forced {
            FormatChoices::FORCED_DIGEST_ITERATIONS
        } else {
            FormatChoices::DIGEST_ITERATIONS
        },
        uuid: a.uuid.clone(),
        data_offset: a.offset.map(|s| s.saturating_mul(512)),
        weak_keys: a.weak.policy(),
    };
    params
        .payload_offset()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    Ok(params)
}

/// `format --type luks1`.
pub(super) fn format_luks1(a: &FormatArgs) -> Result<(), CliError> {
    if a.header.is_some() {
        return Err(CliError::Usage(
            "--header: mdu writes LUKS1 headers inside the image only".into(),
        ));
    }
    let params = luks1_params(&a.new)?;
    let end = params
        .payload_offset()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    write_new_image(a, u64::from(end) * 512, || {
        let key = volume_key(&a.new, params.key_size)?;
        let pass = a.new.key.new_passphrase(&a.image)?;
        let forced = a.new.pbkdf_force_iterations.is_some();
        let params = match benchmark_to(&a.image, a.new.iter_time, forced) {
            Some(ms) => {
                let (iterations, digest_iterations) =
                    mdu_luks2::luks1_iterations(params.hash, params.key_size, ms)
                        .map_err(new_header_error)?;
                luks1::FormatParams {
                    iterations,
                    digest_iterations,
                    ..params
                }
            }
            None => params,
        };
        luks1::format(&params, &pass, &key, &mut mdu_luks2::os_random).map_err(|e| {
            match (e, &a.new.volume_key_file) {
                (Luks2Error::Cipher(e), Some(p)) if e.is_weak_key() => {
                    error::key_error(p, "the volume key", e)
                }
                (e, _) => CliError::Usage(e.to_string()),
            }
        })
    })
}
