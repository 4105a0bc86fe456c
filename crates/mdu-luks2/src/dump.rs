//! A header as `cryptsetup luksDump` shows it (libcryptsetup's
//! `crypt_dump`): as text, as JSON, and the volume key or an unbound
//! keyslot's key on request.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::{Error, HeaderCopy, Image, Kdf, VolumeKey};

fn hex_lines(out: &mut String, bytes: &[u8], indent: &str) {
    for (i, line) in bytes.chunks(16).enumerate() {
        if i > 0 {
            out.push_str(indent);
        }
        for b in line {
            let _ = write!(out, "{b:02x} ");
        }
        out.push('\n');
    }
}

/// A keyslot priority as `cryptsetup luksDump` prints it.
fn priority_name(p: Option<i64>) -> &'static str {
    match p {
        Some(0) => "ignored",
        None | Some(1) => "normal",
        Some(2) => "preferred",
        Some(_) => "invalid",
    }
}

/// The header of `img` as `cryptsetup luksDump` prints it: the header
/// fields, the data segments, the keyslots (a reencryption's among them,
/// in order of id), the tokens and the digests.
///
/// ```
/// use mdu_luks2::{FormatParams, Hash, Image, KdfParams, dump, format, os_random};
/// let p = FormatParams {
///     kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
///     digest_iterations: 1000,
///     ..FormatParams::default()
/// };
/// let image = format(&p, b"pass", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// let text = dump::text(&Image::load(&image[..])?);
/// assert!(text.starts_with("LUKS header information\nVersion:       \t2\n"));
/// assert!(text.contains("  0: luks2\n\tKey:        512 bits\n"));
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn text(img: &Image) -> String {
    let h = &img.header;
    let m = &img.metadata;
    let mut o = String::new();
    let or = |s: &str, none: &str| {
        if s.is_empty() {
            none.to_owned()
        } else {
            s.to_owned()
        }
    };
    let _ = writeln!(o, "LUKS header information");
    let _ = writeln!(o, "Version:       \t2");
    let _ = writeln!(o, "Epoch:         \t{}", h.seqid);
    let _ = writeln!(o, "Metadata area: \t{} [bytes]", h.hdr_size);
    let _ = writeln!(o, "Keyslots area: \t{} [bytes]", m.config.keyslots_size);
    let _ = writeln!(o, "UUID:          \t{}", h.uuid);
    let _ = writeln!(o, "Label:         \t{}", or(&h.label, "(no label)"));
    let _ = writeln!(o, "Subsystem:     \t{}", or(&h.subsystem, "(no subsystem)"));
    let flags = m.config.flags.join(" ");
    let _ = writeln!(o, "Flags:       \t{}", or(&flags, "(no flags)"));
    if let Some(r) = &m.config.requirements {
        let mut line = String::new();
        for x in r {
            let _ = write!(line, "{x} ");
        }
        let _ = writeln!(o, "Requirements:\t{line}");
    }
    if img.copy == HeaderCopy::Secondary {
        let _ = writeln!(o, "Header copy:   \tsecondary (the primary is damaged)");
    }
    let _ = writeln!(o, "\nData segments:");
    for (n, (id, s)) in m.segments.iter().enumerate() {
        if n > 0 {
            o.push('\n');
        }
        let _ = writeln!(o, "  {id}: {}", s.kind.name());
        let _ = writeln!(o, "\toffset: {} [bytes]", s.offset);
        match s.size {
            None => {
                let _ = writeln!(o, "\tlength: (whole device)");
            }
            Some(n) => {
                let _ = writeln!(o, "\tlength: {n} [bytes]");
            }
        }
        if s.is_crypt() {
            let _ = writeln!(o, "\tcipher: {}", s.encryption);
            let _ = writeln!(o, "\tsector: {} [bytes]", s.sector_size);
        }
        if !s.flags.is_empty() {
            let _ = writeln!(o, "\tflags : {}", s.flags.join(" "));
        }
    }
    let _ = writeln!(o, "\nKeyslots:");
    let digest_ids = |o: &mut String, id: u32| {
        for (did, d) in &m.digests {
            if d.keyslots.contains(&id) {
                let _ = writeln!(o, "\tDigest ID:  {did}");
            }
        }
    };
    let reencrypt_slot = |o: &mut String, r: &crate::ReencryptKeyslot| {
        let _ = writeln!(o, "  {}: reencrypt (unbound)", r.id);
        let _ = writeln!(o, "\tKey:        8 bits");
        let _ = writeln!(o, "\tPriority:   {}", priority_name(r.priority));
        let _ = writeln!(o, "\tMode:       {}", r.mode.name());
        let _ = writeln!(o, "\tDirection:  {}", r.direction.name());
        let _ = writeln!(o, "\tResilience: {}", r.area.resilience.name());
        match r.area.resilience {
            crate::Resilience::Checksum { hash, sector_size }
            | crate::Resilience::DatashiftChecksum {
                hash, sector_size, ..
            } => {
                let _ = writeln!(o, "\tHash:       {hash}");
                let _ = writeln!(o, "\tHash data:  {sector_size} [bytes]");
            }
            _ => {}
        }
        if let Some(shift) = r.area.resilience.shift() {
            let _ = writeln!(o, "\tShift size: {shift} [bytes]");
        }
        let _ = writeln!(o, "\tArea offset:{} [bytes]", r.area.offset);
        let _ = writeln!(o, "\tArea length:{} [bytes]", r.area.size);
        digest_ids(o, r.id);
    };
    let mut pending = m.reencrypt.as_ref();
    for (id, k) in &m.keyslots {
        if let Some(r) = pending.filter(|r| r.id < *id) {
            reencrypt_slot(&mut o, r);
            pending = None;
        }
        let unbound = if m.keyslot_is_unbound(*id) {
            " (unbound)"
        } else {
            ""
        };
        let _ = writeln!(o, "  {id}: luks2{unbound}");
        let _ = writeln!(o, "\tKey:        {} bits", k.key_size * 8);
        let _ = writeln!(o, "\tPriority:   {}", priority_name(k.priority));
        let _ = writeln!(o, "\tCipher:     {}", k.area.encryption);
        let _ = writeln!(o, "\tCipher key: {} bits", k.area.key_size * 8);
        let _ = writeln!(o, "\tPBKDF:      {}", k.kdf.name());
        match &k.kdf {
            Kdf::Pbkdf2 {
                hash, iterations, ..
            } => {
                let _ = writeln!(o, "\tHash:       {hash}");
                let _ = writeln!(o, "\tIterations: {iterations}");
            }
            Kdf::Argon2 {
                time, memory, cpus, ..
            } => {
                let _ = writeln!(o, "\tTime cost:  {time}");
                let _ = writeln!(o, "\tMemory:     {memory}");
                let _ = writeln!(o, "\tThreads:    {cpus}");
            }
        }
        o.push_str("\tSalt:       ");
        hex_lines(&mut o, k.kdf.salt(), "\t            ");
        // As cryptsetup prints it: read as a C int, printed unsigned.
        let stripes = k.af_stripes.clamp(i32::MIN.into(), i32::MAX.into()) as i32 as u32;
        let _ = writeln!(o, "\tAF stripes: {stripes}");
        let _ = writeln!(o, "\tAF hash:    {}", k.af_hash);
        let _ = writeln!(o, "\tArea offset:{} [bytes]", k.area.offset);
        let _ = writeln!(o, "\tArea length:{} [bytes]", k.area.size);
        digest_ids(&mut o, *id);
    }
    if let Some(r) = pending {
        reencrypt_slot(&mut o, r);
    }
    let _ = writeln!(o, "Tokens:");
    // In id order, as cryptsetup lists them (the metadata keep the order
    // of the JSON text).
    let mut ids: Vec<&String> = m.tokens.keys().collect();
    ids.sort_by_key(|id| id.parse::<u32>().unwrap_or(u32::MAX));
    for id in ids {
        let _ = writeln!(o, "  {id}: (kept as is)");
    }
    let _ = writeln!(o, "Digests:");
    for (id, d) in &m.digests {
        let _ = writeln!(o, "  {id}: pbkdf2");
        let _ = writeln!(o, "\tHash:       {}", d.hash);
        let _ = writeln!(o, "\tIterations: {}", d.iterations);
        o.push_str("\tSalt:       ");
        hex_lines(&mut o, &d.salt, "\t            ");
        o.push_str("\tDigest:     ");
        hex_lines(&mut o, &d.digest, "\t            ");
    }
    o
}

/// The volume key `key` of the image at `path`, as `cryptsetup luksDump
/// --dump-volume-key` prints it.
///
/// # Errors
///
/// What [`Image::segment`] refuses.
///
/// ```
/// use mdu_luks2::{FormatParams, Hash, Image, KdfParams, dump, format, os_random};
/// let p = FormatParams {
///     kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
///     digest_iterations: 1000,
///     ..FormatParams::default()
/// };
/// let image = format(&p, b"pass", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// let img = Image::load(&image[..])?;
/// let key = img.unlock(&image[..], b"pass")?;
/// let text = dump::volume_key_text(std::path::Path::new("disk.img"), &img, &key)?;
/// assert!(text.contains("Cipher name:   \taes\nCipher mode:   \txts-plain64\n"));
/// assert!(text.contains("MK dump:\t00 01 02"));
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn volume_key_text(path: &Path, img: &Image, key: &VolumeKey) -> Result<String, Error> {
    let (_, seg) = img.segment()?;
    let mut parts = seg.encryption.as_str().splitn(2, '-');
    let name = parts.next().unwrap_or_default();
    let mode = parts.next().unwrap_or_default();
    let mut o = String::new();
    let _ = writeln!(o, "LUKS header information for {}", path.display());
    let _ = writeln!(o, "Cipher name:   \t{name}");
    let _ = writeln!(o, "Cipher mode:   \t{mode}");
    let _ = writeln!(o, "Payload offset:\t{}", seg.offset / 512);
    let _ = writeln!(o, "UUID:          \t{}", img.header.uuid);
    let _ = writeln!(o, "MK bits:       \t{}", key.key.len() * 8);
    o.push_str("MK dump:\t");
    hex_lines(&mut o, &key.key, "\t\t");
    Ok(o)
}

/// The key of an unbound keyslot, as `cryptsetup luksDump --unbound`
/// prints it.
///
/// ```
/// use mdu_luks2::{FormatParams, Hash, Image, KdfParams, dump, format, os_random};
/// let p = FormatParams {
///     kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
///     digest_iterations: 1000,
///     ..FormatParams::default()
/// };
/// let image = format(&p, b"pass", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// let img = Image::load(&image[..])?;
/// let key = img.unlock(&image[..], b"pass")?;
/// let text = dump::unbound_key_text(std::path::Path::new("disk.img"), &img, &key);
/// assert!(text.starts_with("LUKS header information for disk.img\n"));
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn unbound_key_text(path: &Path, img: &Image, key: &VolumeKey) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "LUKS header information for {}", path.display());
    let _ = writeln!(o, "UUID:    \t{}", img.header.uuid);
    let _ = writeln!(o, "Keyslot: \t{}", key.slot);
    let _ = writeln!(o, "Key bits:\t{}", key.key.len() * 8);
    o.push_str("Unbound Key:\t");
    hex_lines(&mut o, &key.key, "\t\t");
    o
}

/// The header of `img` as one JSON object: the header fields, the copy
/// used and why the other was not, the metadata as stored, and per keyslot
/// its digest, whether it is unbound and its priority; with `key`, the key
/// (hex), its keyslot and whether it is unbound.
///
/// ```
/// use mdu_luks2::{FormatParams, Hash, Image, KdfParams, dump, format, os_random};
/// let p = FormatParams {
///     kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
///     digest_iterations: 1000,
///     ..FormatParams::default()
/// };
/// let image = format(&p, b"pass", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// let v = dump::json(&Image::load(&image[..])?, None);
/// assert_eq!(v["keyslots"]["0"]["priority"], "normal");
/// assert_eq!(v["header_copy"], "primary");
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn json(img: &Image, key: Option<&VolumeKey>) -> Value {
    let h = &img.header;
    let metadata: Value = serde_json::from_str(&img.metadata.to_json()).unwrap_or(Value::Null);
    let mut v = json!({
        "version": 2,
        "epoch": h.seqid,
        "hdr_size": h.hdr_size,
        "uuid": h.uuid,
        "label": h.label,
        "subsystem": h.subsystem,
        "header_copy": img.copy.name(),
        "primary_error": img.primary_error.as_ref().map(|e| e.to_string()),
        "secondary_error": img.secondary_error.as_ref().map(|e| e.to_string()),
        "metadata": metadata,
    });
    // Per keyslot: its digest, whether it is unbound (its key opens no
    // segment) and its priority as luksDump names it.
    let m = &img.metadata;
    let keyslots: serde_json::Map<String, Value> = m
        .keyslots
        .iter()
        .map(|(id, k)| {
            let status = json!({
                "digest": m.keyslot_digest(*id),
                "unbound": m.keyslot_is_unbound(*id),
                "priority": priority_name(k.priority),
            });
            (id.to_string(), status)
        })
        .collect();
    v["keyslots"] = Value::Object(keyslots);
    if let Some(k) = key {
        let hex = k.key.iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        });
        v["volume_key"] = Value::String(hex);
        v["keyslot"] = json!(k.slot);
        v["unbound"] = json!(k.segment.is_none());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_lines_break_every_16_bytes_with_the_indent() {
        let mut s = String::new();
        hex_lines(&mut s, &[0xab; 20], "..");
        assert_eq!(s, format!("{}\n..{}\n", "ab ".repeat(16), "ab ".repeat(4)));
    }

    #[test]
    fn priorities_are_named_as_luksdump_names_them() {
        let names = [None, Some(0), Some(1), Some(2), Some(3)].map(priority_name);
        assert_eq!(
            names,
            ["normal", "ignored", "normal", "preferred", "invalid"]
        );
    }
}
