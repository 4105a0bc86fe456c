//! `mdu luks decrypt`: the data segment decrypted into a new plaintext.

use super::*;

pub(super) fn decrypt(a: DecryptArgs) -> Result<(), CliError> {
    let mut paths: Vec<(&str, &Path)> = a
        .key
        .file()
        .map(|k| ("--key-file", k))
        .into_iter()
        .collect();
    if let Some(h) = &a.header {
        paths.push(("--header", h));
    }
    paths.extend([("IMAGE", a.image.as_path()), ("PLAIN", a.plain.as_path())]);
    paths::distinct(&paths)?;
    let header_path = a.header.clone().unwrap_or_else(|| a.image.clone());
    if let Some((hf, hdr)) = load_luks1(&header_path, a.header.is_some())? {
        let (f, data_len) = open_sized(&a.image)?;
        let (offset, len) = hdr
            .data_range(data_len)
            .map_err(|e| image_error(&header_path, e))?;
        return decrypt_range(&a, &f, offset, len, || {
            let key = a.key.open_with(&header_path, |pass| {
                hdr.unlock(&hf, pass)
                    .map_err(|e| image_error(&header_path, e))
            })?;
            hdr.data_cipher(&key, a.weak.policy())
                .map_err(|e| cipher_error(&a.image, e))
        });
    }
    let (hf, img) = load(&header_path)?;
    let (_, seg) = img.segment().map_err(|e| image_error(&header_path, e))?;
    let (f, data_len) = open_sized(&a.image)?;
    let range = if a.header.is_some() {
        img.data_range(seg, data_len)
    } else {
        img.payload_range(seg)
    };
    let (offset, len) = range.map_err(|e| image_error(&header_path, e))?;
    decrypt_range(&a, &f, offset, len, || {
        let key = unlock(&header_path, &hf, &img, &a.key)?;
        img.segment_cipher(&key, a.weak.policy())
            .map_err(|e| cipher_error(&a.image, e))
    })
}

/// A cipher refused for the volume key: a weak key as such, anything else
/// as a refused image.
fn cipher_error(image: &Path, e: Luks2Error) -> CliError {
    match e {
        Luks2Error::Cipher(e) if e.is_weak_key() => error::key_error(image, "the volume key", e),
        e => image_error(image, e),
    }
}

/// Decrypts the `len` bytes of `f` at `offset` into PLAIN under the
/// cipher `cipher` gives: the output is checked before the passphrase is
/// derived.
fn decrypt_range(
    a: &DecryptArgs,
    f: &File,
    offset: u64,
    len: u64,
    cipher: impl FnOnce() -> Result<SectorCipher, CliError>,
) -> Result<(), CliError> {
    if len == 0 {
        return Err(CliError::Refused {
            path: a.image.clone(),
            message: format!("the image holds no data after its header (data offset {offset})"),
        });
    }
    let in_meta = f
        .metadata()
        .map_err(|e| CliError::io(&a.image, "examine", e))?;
    let mut out = Output::to(&a.plain)
        .not_same_as(&a.image, in_meta)
        .private()
        .len(len)
        .reserve(0, len)
        .open()?;
    let cipher = cipher()?;
    let seekable = out.seekable();
    pipeline::run(
        Direction::Decrypt,
        &cipher,
        Source {
            file: f,
            path: &a.image,
            offset,
            len: Some(len),
        },
        Sink {
            file: out.file(),
            path: &a.plain,
            offset: 0,
            seekable,
        },
        a.threads,
    )?;
    Ok(out.commit()?)
}
