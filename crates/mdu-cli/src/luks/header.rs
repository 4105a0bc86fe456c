//! `mdu luks is-luks|uuid|config|erase|repair|open --test-passphrase`:
//! cryptsetup's header verbs that read the header or change it in one
//! write, under the image's lock (`uuid` and `erase` of a LUKS1 image in
//! `luks1_header.rs`).

use mdu_luks2::backup::{Repaired, repair as repair_header};
use mdu_luks2::edit::Priority;

use super::*;

/// `mdu luks is-luks` (`isLuks`).
#[derive(Args, Debug)]
pub(crate) struct IsLuksArgs {
    /// The device or image file.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
}

/// `mdu luks uuid` (`luksUUID`).
#[derive(Args, Debug)]
pub(crate) struct UuidArgs {
    /// Set this UUID (36 characters, 8-4-4-4-12 hexadecimal digits) instead
    /// of printing the current one.
    #[arg(long, value_name = "UUID")]
    pub(super) uuid: Option<String>,
    /// The LUKS2 (or LUKS1) header is in FILE (a detached header).
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The LUKS2 or LUKS1 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
}

/// `mdu luks config`.
#[derive(Args, Debug)]
pub(crate) struct ConfigArgs {
    /// The new label (at most 47 bytes; longer is cut). Setting the label
    /// or the subsystem sets both: one not given becomes empty, as in
    /// cryptsetup.
    #[arg(long, value_name = "LABEL")]
    pub(super) label: Option<String>,
    /// The new subsystem (at most 47 bytes; longer is cut).
    #[arg(long, value_name = "SUBSYSTEM")]
    pub(super) subsystem: Option<String>,
    /// The priority of keyslot --key-slot: prefer (tried first), normal,
    /// or ignore (tried only when named).
    #[arg(long, value_enum, value_name = "PRIORITY", requires = "key_slot")]
    pub(super) priority: Option<PriorityArg>,
    /// The keyslot whose priority is set.
    #[arg(long, short = 'S', value_name = "N")]
    pub(super) key_slot: Option<u32>,
    /// The LUKS2 header is in FILE (a detached header).
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
}

/// `--priority`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PriorityArg {
    /// Tried only when named with --key-slot.
    Ignore,
    /// The default.
    Normal,
    /// Tried before the normal keyslots.
    Prefer,
}

/// `mdu luks erase` (`luksErase`) and `mdu luks repair`.
#[derive(Args, Debug)]
pub(crate) struct HeaderOnlyArgs {
    /// The LUKS2 header is in FILE (a detached header).
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The LUKS2 image (erase: or LUKS1).
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
}

/// `mdu luks open`.
#[derive(Args, Debug)]
pub(crate) struct OpenArgs {
    /// Only check that the passphrase opens a keyslot; map nothing.
    #[arg(long)]
    pub(super) test_passphrase: bool,
    #[command(flatten)]
    pub(super) key: KeyArgs,
    /// Try this keyslot only (whatever its priority).
    #[arg(long, short = 'S', value_name = "N")]
    pub(super) key_slot: Option<u32>,
    /// The LUKS2 header is in FILE (a detached header).
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
    /// The mapping name (not used with --test-passphrase).
    #[arg(value_name = "NAME")]
    pub(super) name: Option<String>,
}

/// Locks `path` (the header's file), opens it for writing and loads its
/// header: what every header write starts with.
pub(super) fn load_for_write(path: &Path) -> Result<(Locks, File, Image), CliError> {
    let mut locks = Locks::new();
    locks.file(path)?;
    let f = crate::output::in_place(path, true, false, "open for writing")?;
    let img = Image::load(&f).map_err(|e| image_error(path, e))?;
    Ok((locks, f, img))
}

/// The header of a verb: `--header` if given, else the image.
fn header_of(header: &Option<PathBuf>, image: &Path) -> PathBuf {
    header.clone().unwrap_or_else(|| image.to_owned())
}

pub(super) fn is_luks(a: IsLuksArgs) -> Result<(), CliError> {
    let (f, _) = open_sized(&a.image)?;
    let version = match Image::load(&f) {
        Ok(_) => 2,
        // A LUKS1 header: its magic and version 1 at the start.
        Err(Luks2Error::NoValidHeader { primary, .. })
            if matches!(
                *primary,
                Luks2Error::UnsupportedVersion {
                    version: 1,
                    offset: 0
                }
            ) =>
        {
            1
        }
        Err(e) => return Err(image_error(&a.image, e)),
    };
    // Only this LUKS version counts with --type: luks (either), luks1
    // or luks2.
    let kind = flags().luks_type.unwrap_or(LuksType::Luks);
    match (kind, version) {
        (LuksType::Luks, _) | (LuksType::Luks1, 1) | (LuksType::Luks2, 2) => Ok(()),
        _ => Err(CliError::Refused {
            path: a.image,
            message: format!("a LUKS{version} header, not {kind:?}").to_lowercase(),
        }),
    }
}

pub(super) fn uuid(a: UuidArgs) -> Result<(), CliError> {
    let path = header_of(&a.header, &a.image);
    if is_luks1(&path)? {
        return luks1_uuid(&a, &path);
    }
    let Some(new) = &a.uuid else {
        let (_, img) = load(&path)?;
        return print(&format!("{}\n", img.header.uuid));
    };
    // Checked before anything is locked or read.
    mdu_luks2::edit::parse_uuid(new).map_err(|e| CliError::Usage(e.to_string()))?;
    let (_locks, f, mut img) = load_for_write(&path)?;
    if img.header.uuid != new.to_ascii_lowercase() {
        super::backup::confirm(
            "Do you really want to change the UUID of the device?",
            true,
            &path,
            "not confirmed; the UUID was not changed",
        )?;
    }
    img.set_uuid(&f, new).map_err(|e| image_error(&path, e))?;
    Ok(())
}

pub(super) fn config(a: ConfigArgs) -> Result<(), CliError> {
    if a.priority.is_none() && a.label.is_none() && a.subsystem.is_none() {
        return Err(CliError::Usage(
            "mdu luks config: --priority, --label or --subsystem is needed".into(),
        ));
    }
    let path = header_of(&a.header, &a.image);
    let (_locks, f, mut img) = load_for_write(&path)?;
    if let (Some(p), Some(slot)) = (a.priority, a.key_slot) {
        let p = match p {
            PriorityArg::Ignore => Priority::Ignore,
            PriorityArg::Normal => Priority::Normal,
            PriorityArg::Prefer => Priority::Prefer,
        };
        img.set_priority(&f, slot, p)
            .map_err(|e| image_error(&path, e))?;
    }
    if a.label.is_some() || a.subsystem.is_some() {
        img.set_labels(&f, a.label.as_deref(), a.subsystem.as_deref())
            .map_err(|e| image_error(&path, e))?;
    }
    Ok(())
}

pub(super) fn erase(a: HeaderOnlyArgs) -> Result<(), CliError> {
    let path = header_of(&a.header, &a.image);
    if is_luks1(&path)? {
        return luks1_erase(&a, &path);
    }
    let (_locks, f, mut img) = load_for_write(&path)?;
    super::backup::confirm(
        &format!(
            "This operation will erase all keyslots on device {}.\nDevice will become unusable after this operation.",
            path.display()
        ),
        true,
        &path,
        "not confirmed; the keyslots were NOT wiped",
    )?;
    img.erase(&f).map_err(|e| image_error(&path, e))?;
    Ok(())
}

pub(super) fn repair(a: HeaderOnlyArgs) -> Result<(), CliError> {
    let path = header_of(&a.header, &a.image);
    let mut locks = Locks::new();
    locks.file(&path)?;
    let f = crate::output::in_place(&path, true, false, "open for writing")?;
    let text = match repair_header(&f).map_err(|e| image_error(&path, e))? {
        Repaired::Nothing => format!(
            "{}: no known problems in the LUKS2 header: both copies are valid and equal\n",
            path.display()
        ),
        Repaired::Rewrote { copy, why } => format!(
            "{}: the {} header copy was rewritten from the other one ({why})\n",
            path.display(),
            copy.name()
        ),
    };
    drop(locks);
    print(&text)
}

pub(super) fn open(a: OpenArgs) -> Result<(), CliError> {
    if !a.test_passphrase {
        return Err(CliError::Usage(
            "mdu luks open: mapping a volume is not available; --test-passphrase checks the \
             passphrase (mdu luks decrypt reads the data)"
                .into(),
        ));
    }
    let path = header_of(&a.header, &a.image);
    if let Some((f, hdr)) = load_luks1(&path, a.header.is_some())? {
        let key = a.key.open_with(&path, |pass| {
            match a.key_slot {
                Some(slot) => hdr.unlock_slot(&f, slot, pass),
                None => hdr.unlock(&f, pass),
            }
            .map_err(|e| image_error(&path, e))
        })?;
        verbose(format_args!("key slot {} unlocked", key.slot));
        return Ok(());
    }
    let (f, img) = load(&path)?;
    let key = a.key.open_with(&path, |pass| {
        match a.key_slot {
            Some(slot) => img.unlock_slot(&f, slot, pass),
            None => img.unlock(&f, pass),
        }
        .map_err(|e| image_error(&path, e))
    })?;
    verbose(format_args!("keyslot {} unlocked", key.slot));
    Ok(())
}
