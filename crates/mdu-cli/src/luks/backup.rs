//! `mdu luks header-backup|header-restore` (`luksHeaderBackup`,
//! `luksHeaderRestore`): the header region to a new file, and back.

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
    /// The LUKS2 header is in FILE (a detached header).
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
}

pub(super) fn header_backup(a: HeaderBackupArgs) -> Result<(), CliError> {
    let path = a.header.clone().unwrap_or(a.image);
    let out = &a.header_backup_file;
    let (f, img) = load(&path)?;
    let region = img.backup(&f).map_err(|e| image_error(&path, e))?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o400)
        .open(out)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => CliError::Input {
                path: out.clone(),
                offset: 0,
                rule:
                    "the header backup file exists already; a backup is only written to a new file"
                        .into(),
            },
            _ => CliError::io(out, "create", e),
        })?;
    let written = file.write_all(&region).and_then(|()| file.sync_all());
    if let Err(e) = written {
        // A partial backup is no backup.
        let _ = std::fs::remove_file(out);
        return Err(CliError::io(out, "write the header backup", e));
    }
    Ok(())
}

/// cryptsetup's confirmation: on a terminal, `question` and a `YES`
/// typed in full; elsewhere `refusal` (nothing is asked of a script).
fn confirm(question: &str, path: &Path, refusal: &str) -> Result<(), CliError> {
    use std::io::IsTerminal as _;
    let refused = || CliError::Refused {
        path: path.to_owned(),
        message: refusal.to_owned(),
    };
    if !std::io::stdin().is_terminal() {
        return Err(refused());
    }
    eprint!("\nWARNING!\n========\n{question}\n\nAre you sure? (Type 'yes' in capital letters): ");
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| CliError::io(Path::new("stdin"), "read the answer", e))?;
    if answer.trim_end_matches('\n') == "YES" {
        Ok(())
    } else {
        Err(refused())
    }
}

pub(super) fn header_restore(a: HeaderBackupArgs) -> Result<(), CliError> {
    let path = a.header.clone().unwrap_or(a.image);
    let src = &a.header_backup_file;
    let bytes = std::fs::read(src).map_err(|e| CliError::io(src, "read the header backup", e))?;
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
    match (&restore.current, &restore.other_uuid) {
        (None, _) => eprintln!(
            "mdu: warning: {device} holds no valid LUKS2 header; the backup is written over its \
             first {} bytes",
            restore.backup.region_len()
        ),
        (Some(_), Some((have, backup))) => confirm(
            &format!(
                "{device} has a LUKS2 header of another volume (UUID {have}) than the backup \
                 (UUID {backup}): replacing it destroys its keyslots."
            ),
            &path,
            &format!(
                "the backup is of another volume (UUID {backup}, the image's is {have}); \
                 nothing was written (confirm on a terminal to replace the header)"
            ),
        )?,
        (Some(_), None) => {}
    }
    if restore.reencrypt_in_progress {
        eprintln!(
            "mdu: warning: {device} records an unfinished reencryption; restoring the backup may \
             corrupt its data"
        );
    }
    restore.write(&f).map_err(|e| image_error(&path, e))?;
    drop(locks);
    Ok(())
}
