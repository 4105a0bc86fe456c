//! The header verbs on LUKS1 images, as cryptsetup 2.6 runs them: `uuid`
//! (printed, or set in one header write), `header-backup` (the header and
//! key material, byte for byte cryptsetup's backup), `header-restore` of a
//! LUKS1 backup (refused onto a LUKS1 header of another payload offset or
//! key size), `erase` (every slot killed, its material wiped).

use mdu_luks2::luks1;

use super::*;

/// `uuid` on the LUKS1 header file `path`.
pub(super) fn luks1_uuid(a: &UuidArgs, path: &Path) -> Result<(), CliError> {
    let Some(new) = &a.uuid else {
        let Some((_, hdr)) = load_luks1(path, a.header.is_some())? else {
            return Err(CliError::Refused {
                path: path.to_owned(),
                message: "not a LUKS1 device".into(),
            });
        };
        return print(&format!("{}\n", hdr.uuid));
    };
    // Checked before anything is locked or read.
    mdu_luks2::edit::parse_uuid(new).map_err(|e| CliError::Usage(e.to_string()))?;
    let mut locks = Locks::new();
    let (f, hdr) = open_luks1_for_change(path, a.header.is_some(), &mut locks)?;
    if hdr.uuid != new.to_ascii_lowercase() {
        super::backup::confirm(
            "Do you really want to change the UUID of the device?",
            true,
            path,
            "not confirmed; the UUID was not changed",
        )?;
    }
    luks1::set_uuid(&f, &hdr, new).map_err(|e| change_error(path, e))?;
    Ok(())
}

/// `header-backup` of the LUKS1 header `hdr` read from `f` into the new
/// file `out`.
pub(super) fn luks1_header_backup(
    path: &Path,
    f: &File,
    hdr: &Luks1Header,
    out: &Path,
) -> Result<(), CliError> {
    let region = luks1::backup(f, hdr).map_err(|e| image_error(path, e))?;
    write_backup_file(out, &region)
}

/// `header-restore` of the LUKS1 backup `bytes` (read from `src`) onto
/// `path`.
pub(super) fn luks1_header_restore(
    path: &Path,
    src: &Path,
    bytes: Vec<u8>,
) -> Result<(), CliError> {
    let mut locks = Locks::new();
    lock_file(&mut locks, path)?;
    let f = crate::output::in_place(path, true, false, "open for writing")?;
    let restore = luks1::Restore::check(&f, bytes).map_err(|e| match e {
        e @ Luks2Error::Params { .. } => CliError::Refused {
            path: path.to_owned(),
            message: e.to_string(),
        },
        e => CliError::Refused {
            path: src.to_owned(),
            message: format!("not a valid LUKS1 header backup: {e}"),
        },
    })?;
    let device = path.display();
    let mut question = match &restore.current {
        None => format!(
            "Device {device} does not contain a LUKS1 header. Replacing the header can destroy data on it."
        ),
        Some(_) => format!(
            "Device {device} already contains a LUKS1 header. Replacing it destroys its keyslots."
        ),
    };
    if restore.other_uuid {
        question.push_str("\nWARNING: the device's header has another UUID than the backup!");
    }
    // Without a terminal, as cryptsetup, except for a backup of another
    // volume (as for LUKS2).
    let refusal = match restore.other_uuid {
        true => {
            "the backup is of another volume (another UUID); nothing was written (confirm on a \
             terminal to replace the header)"
        }
        false => "not confirmed; nothing was written",
    };
    super::backup::confirm(&question, !restore.other_uuid, path, refusal)?;
    restore.write(&f).map_err(|e| change_error(path, e))?;
    drop(locks);
    Ok(())
}

/// `erase` of the LUKS1 header file `path`.
pub(super) fn luks1_erase(a: &HeaderOnlyArgs, path: &Path) -> Result<(), CliError> {
    let mut locks = Locks::new();
    let (f, hdr) = open_luks1_for_change(path, a.header.is_some(), &mut locks)?;
    super::backup::confirm(
        &format!(
            "This operation will erase all keyslots on device {}.\nDevice will become unusable after this operation.",
            path.display()
        ),
        true,
        path,
        "not confirmed; the keyslots were NOT wiped",
    )?;
    luks1::erase(&f, &hdr, &mut mdu_luks2::os_random).map_err(|e| change_error(path, e))?;
    Ok(())
}
