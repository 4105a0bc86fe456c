//! `mdu luks dump`: the header as cryptsetup luksDump prints it, or as JSON, with the volume key on request.

use mdu_luks2::dump;

use super::*;

pub(super) fn dump(a: DumpArgs) -> Result<(), CliError> {
    let a = DumpArgs {
        image: a.header.clone().unwrap_or(a.image),
        ..a
    };
    if let Some((f, hdr)) = load_luks1(&a.image, true)? {
        return dump_luks1(&a, &f, &hdr);
    }
    let (f, img) = load(&a.image)?;
    let key = match (&a.key_file, a.dump_volume_key, a.unbound, a.key_slot) {
        (Some(kf), _, true, Some(slot)) => {
            let pass = read_passphrase(kf)?;
            Some(
                img.unlock_unbound(&f, slot, &pass)
                    .map_err(|e| image_error(&a.image, e))?,
            )
        }
        (Some(kf), true, _, Some(slot)) => {
            let pass = read_passphrase(kf)?;
            Some(
                img.unlock_slot(&f, slot, &pass)
                    .map_err(|e| image_error(&a.image, e))?,
            )
        }
        (Some(kf), true, _, None) => Some(unlock(&a.image, &f, &img, kf)?),
        _ => None,
    };
    let text = match &key {
        _ if a.json => format!("{}\n", dump::json(&img, key.as_ref())),
        Some(k) if k.segment.is_none() => dump::unbound_key_text(&a.image, &img, k),
        Some(k) => {
            dump::volume_key_text(&a.image, &img, k).map_err(|e| image_error(&a.image, e))?
        }
        None => dump::text(&img),
    };
    print(&text)
}

/// Writes `text` to stdout.
pub(super) fn print(text: &str) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::io(Path::new("stdout"), "write", e))
}
