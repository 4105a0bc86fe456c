//! `mdu luks convert --type luks1|luks2`: a LUKS1 header made LUKS2 and
//! back, in place, as `cryptsetup convert` does it
//! ([`mdu_luks2::luks1::convert_to_luks2`], [`convert_from_luks2`]).
//!
//! [`convert_from_luks2`]: mdu_luks2::luks1::convert_from_luks2

use mdu_luks2::luks1;

use super::*;

/// `mdu luks convert`.
#[derive(Args, Debug)]
pub(crate) struct ConvertArgs {
    /// The LUKS image (the header is converted in place; the data are not
    /// touched).
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
}

pub(super) fn convert(a: ConvertArgs) -> Result<(), CliError> {
    let to = match flags().luks_type {
        Some(t @ (LuksType::Luks1 | LuksType::Luks2)) => t,
        _ => {
            return Err(CliError::Usage(
                "convert needs --type luks1 or --type luks2 (the type to convert to)".into(),
            ));
        }
    };
    let path = &a.image;
    let mut locks = Locks::new();
    lock_file(&mut locks, path)?;
    let f = crate::output::in_place(path, true, false, "open for writing")?;
    let luks1 = load_luks1(path, false)?;
    let refused = |message: String| CliError::Refused {
        path: path.clone(),
        message,
    };
    let io = |e: Luks2Error| match e {
        Luks2Error::Io(e) => CliError::io(path, "write the header", e),
        e => refused(e.to_string()),
    };
    let question = format!(
        "This operation will convert {} to {} format.\nIt rewrites the header in place: a \
         crash in the middle can lose the keyslots (mdu luks header-backup first).",
        path.display(),
        if to == LuksType::Luks2 {
            "LUKS2"
        } else {
            "LUKS1"
        }
    );
    match (to, luks1) {
        (LuksType::Luks2, Some((_, hdr))) => {
            // Checked before the question: what LUKS2 cannot hold.
            luks1::luks2_metadata(&hdr).map_err(io)?;
            if !confirm(&question, flags().batch)? {
                return Err(CliError::Usage(
                    "operation aborted: nothing was written".into(),
                ));
            }
            luks1::convert_to_luks2(&f, &hdr).map_err(io)?;
        }
        (LuksType::Luks1, None) => {
            let (_, img) = load_as(path, false)?;
            luks1::luks1_header(&img).map_err(io)?;
            if !confirm(&question, flags().batch)? {
                return Err(CliError::Usage(
                    "operation aborted: nothing was written".into(),
                ));
            }
            luks1::convert_from_luks2(&f, &img).map_err(io)?;
        }
        (LuksType::Luks2, None) => {
            load(path)?;
            return Err(refused("the device is already of type LUKS2".into()));
        }
        _ => return Err(refused("the device is already of type LUKS1".into())),
    }
    verbose(format_args!("converted to {to:?}"));
    Ok(())
}
