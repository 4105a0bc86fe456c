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
    let key = match (a.dump_volume_key, a.unbound, a.key_slot) {
        (false, false, _) => None,
        (_, unbound, slot) => {
            // cryptsetup asks before a key is printed, and a "no" is a
            // refusal (exit 2).
            let question = "The header dump with the volume key is sensitive: it opens the \
                            data without a passphrase.\nKeep it encrypted, in a safe place.";
            if !confirm(question, flags().batch)? {
                return Err(status(
                    NO_PERMISSION,
                    CliError::Usage("operation aborted: no key was printed".into()),
                ));
            }
            debug_keyslots(&a.image, &img);
            let open = |pass: &[u8]| {
                match (unbound, slot) {
                    (true, Some(slot)) => img.unlock_unbound(&f, slot, pass),
                    (_, Some(slot)) => img.unlock_slot(&f, slot, pass),
                    (_, None) => img.unlock(&f, pass),
                }
                .map_err(|e| image_error(&a.image, e))
            };
            let key = a.key.open_with(&a.image, open)?;
            verbose(format_args!("keyslot {} unlocked", key.slot));
            Some(key)
        }
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
