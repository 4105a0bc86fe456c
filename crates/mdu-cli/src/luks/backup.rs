//! `mdu luks header-backup|header-restore` (`luksHeaderBackup`,
//! `luksHeaderRestore`): the header region to a new file, and back (a
//! LUKS1 header's in `luks1_header.rs`).

use std::io::BufRead as _;
use std::os::unix::fs::OpenOptionsExt as _;

use mdu_luks2::backup::Restore;

use super::*;

/// `mdu luks header-backup` and `mdu luks header-restore`.
#[derive(Args, Debug)]
pub(crate) struct HeaderBackupArgs {
    /// The backup file: a new file (an existing one is refused) for
    /// header-backup, readable by its owner only; the file to restore from
    /// for header-restore.
    #[arg(long, value_name = "FILE")]
    pub(super) header_backup_file: PathBuf,
    /// The LUKS2 (or LUKS1) header is in FILE (a detached header).
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The LUKS2 or LUKS1 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
}

pub(super) fn header_backup(a: HeaderBackupArgs) -> Result<(), CliError> {
    let path = a.header.clone().unwrap_or(a.image);
    let out = &a.header_backup_file;
    if let Some((f, hdr)) = load_luks1(&path, a.header.is_some())? {
        return luks1_header_backup(&path, &f, &hdr, out);
    }
    let (f, img) = load(&path)?;
    let region = img.backup(&f).map_err(|e| image_error(&path, e))?;
    write_backup_file(out, &region)
}

/// Writes the header backup `region` to the new file `out` (readable by
/// its owner only; an existing file is refused), removed again if the
/// write fails.
pub(super) fn write_backup_file(out: &Path, region: &[u8]) -> Result<(), CliError> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o400)
        .open(out)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => CliError::Input {
                path: out.to_owned(),
                offset: 0,
                rule:
                    "the header backup file exists already; a backup is only written to a new file"
                        .into(),
            },
            _ => CliError::io(out, "create", e),
        })?;
    let written = file.write_all(region).and_then(|()| file.sync_all());
    if let Err(e) = written {
        // A partial backup is no backup.
        let _ = std::fs::remove_file(out);
        return Err(CliError::io(out, "write the header backup", e));
    }
    Ok(())
}

/// cryptsetup's confirmation: on a terminal, `question` and whether a
/// `YES` was typed in full; `None` elsewhere (nothing is asked of a
/// script).
pub(super) fn ask(question: &str) -> Result<Option<bool>, CliError> {
    use std::io::IsTerminal as _;
    if !std::io::stdin().is_terminal() {
        return Ok(None);
    }
    eprint!("\nWARNING!\n========\n{question}\n\nAre you sure? (Type 'yes' in capital letters): ");
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| CliError::io(Path::new("stdin"), "read the answer", e))?;
    Ok(Some(answer.trim_end_matches('\n') == "YES"))
}

/// [`ask`], refused with `message` unless answered yes; `script` is
/// what a run without a terminal does (`true`: goes on, as cryptsetup).
pub(super) fn confirm(
    question: &str,
    script: bool,
    path: &Path,
    message: &str,
) -> Result<(), CliError> {
    if ask(question)?.unwrap_or(script) {
        Ok(())
    } else {
        Err(CliError::Refused {
            path: path.to_owned(),
            message: message.to_owned(),
        })
    }
}

pub(super) fn header_restore(a: HeaderBackupArgs) -> Result<(), CliError> {
    let path = a.header.clone().unwrap_or(a.image);
    let src = &a.header_backup_file;
    let bytes = std::fs::read(src).map_err(|e| CliError::io(src, "read the header backup", e))?;
    if flags().luks_type != Some(LuksType::Luks2)
        && mdu_luks2::luks1::probe_version(&bytes[..]).ok() == Some(Some(1))
    {
        return luks1_header_restore(&path, src, bytes);
    }
    let mut locks = Locks::new();
    locks.file(&path)?;
    let f = crate::output::in_place(&path, true, false, "open for writing")?;
    let restore = Restore::check(&f, bytes).map_err(|e| match e {
        e @ (Luks2Error::NoValidHeader { .. } | Luks2Error::BadMagic { .. }) => CliError::Refused {
            path: src.clone(),
            message: format!("not a valid LUKS2 header backup: {e}"),
        },
        e => image_error(&path, e),
    })?;
    let device = path.display();
    let mut question = match &restore.current {
        None => format!(
            "Device {device} does not contain a valid LUKS2 header. Replacing the header can destroy data on it."
        ),
        Some(_) => format!(
            "Device {device} already contains a LUKS2 header. Replacing it destroys its keyslots."
        ),
    };
    if let Some((have, backup)) = &restore.other_uuid {
        question.push_str(&format!(
            "\nWARNING: the device's header has another UUID ({have}) than the backup ({backup})!"
        ));
    }
    if restore.reencrypt_in_progress {
        question.push_str(
            "\nWARNING: an unfinished reencryption is recorded on the device!\nReplacing the header with the backup may corrupt its data.",
        );
    }
    // Without a terminal, as cryptsetup, except for a backup of another
    // volume: that is refused unless confirmed.
    let refusal = match &restore.other_uuid {
        Some((have, backup)) => format!(
            "the backup is of another volume (UUID {backup}, the image's is {have}); nothing was \
             written (confirm on a terminal to replace the header)"
        ),
        None => "not confirmed; nothing was written".to_owned(),
    };
    confirm(&question, restore.other_uuid.is_none(), &path, &refusal)?;
    restore.write(&f).map_err(|e| image_error(&path, e))?;
    drop(locks);
    Ok(())
}
