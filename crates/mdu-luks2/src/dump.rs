//! A header as `cryptsetup luksDump` shows it (libcryptsetup's
//! `crypt_dump`): as text, as JSON, and the volume key or an unbound
//! keyslot's key on request.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::{BINARY_HEADER_LEN, Error, Image, VolumeKey};

pub(crate) fn hex_lines(out: &mut String, bytes: &[u8], indent: &str) {
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

// The JSON read as json-c reads it for libcryptsetup's dump: a missing
// member is a NULL that printf shows as `(null)`, numbers in strings and
// strings of digits are each other's, and a 32-bit read truncates.

/// `json_object_get_string`.
fn js(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "(null)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// `json_object_get_int64`.
fn ji64(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_u64().map(|_| i64::MAX))
            .or_else(|| n.as_f64().map(|f| f as i64))
            .unwrap_or(0),
        Some(Value::String(s)) => {
            let t = s.trim_start();
            let end = t
                .char_indices()
                .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
                .map_or(t.len(), |(i, _)| i);
            t[..end]
                .parse::<i128>()
                .map_or(0, |n| n.clamp(i64::MIN.into(), i64::MAX.into()) as i64)
        }
        Some(Value::Bool(b)) => i64::from(*b),
        _ => 0,
    }
}

/// `json_object_get_int` (clamped to 32 bits).
fn ji32(v: Option<&Value>) -> i32 {
    ji64(v).clamp(i32::MIN.into(), i32::MAX.into()) as i32
}

/// `crypt_jobj_get_uint32`: the 64-bit value truncated.
fn ju32(v: Option<&Value>) -> u32 {
    ji64(v) as u32
}

/// `crypt_jobj_get_uint64`: `strtoull` of the string form, 0 when it is
/// not all digits.
fn ju64(v: Option<&Value>) -> u64 {
    let s = js(v);
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    let n = digits.parse::<u64>().unwrap_or(u64::MAX);
    if neg { n.wrapping_neg() } else { n }
}

/// `hexprint_base64`: nothing at all when the text is not base64.
/// A missing member decodes as empty: a bare newline.
fn hex_base64(out: &mut String, v: Option<&Value>) {
    let text = match v {
        None | Some(Value::Null) => String::new(),
        v => js(v),
    };
    if let Ok(bytes) = mdu_base64::STANDARD.decode_to_vec(text.as_bytes()) {
        hex_lines(out, &bytes, "\t            ");
        if bytes.is_empty() {
            out.push('\n');
        }
    }
}

/// The header of `img` as `cryptsetup luksDump` prints it
/// (libcryptsetup's `LUKS2_hdr_dump`, read off the JSON as it does): the
/// header fields, the data segments, the keyslots (those this crate
/// cannot open and a reencryption's among them, ids 0 to 31), the tokens
/// and the digests. Which copy was read is not part of it (cryptsetup
/// repairs a damaged copy before it dumps): [`json()`](fn@json) says it.
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
    let v: Value = serde_json::from_str(&img.metadata.to_json()).unwrap_or(Value::Null);
    let mut o = String::new();
    let or = |s: &str, none: &str| {
        if s.is_empty() {
            none.to_owned()
        } else {
            s.to_owned()
        }
    };
    let config = &v["config"];
    let _ = writeln!(o, "LUKS header information");
    let _ = writeln!(o, "Version:       \t2");
    let _ = writeln!(o, "Epoch:         \t{}", h.seqid);
    let metadata_size = ju64(config.get("json_size")).wrapping_add(BINARY_HEADER_LEN as u64);
    let _ = writeln!(o, "Metadata area: \t{metadata_size} [bytes]");
    let keyslots_size = ju64(config.get("keyslots_size"));
    let _ = writeln!(o, "Keyslots area: \t{keyslots_size} [bytes]");
    let _ = writeln!(o, "UUID:          \t{}", or(&h.uuid, "(no UUID)"));
    let _ = writeln!(o, "Label:         \t{}", or(&h.label, "(no label)"));
    let _ = writeln!(o, "Subsystem:     \t{}", or(&h.subsystem, "(no subsystem)"));
    let list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    let flags = list(config.get("flags"));
    let reqs = list(config.get("requirements").and_then(|r| r.get("mandatory")));
    o.push_str("Flags:       \t");
    for f in &flags {
        let _ = write!(o, "{} ", js(Some(f)));
    }
    let _ = write!(
        o,
        "{}\n{}",
        if flags.is_empty() { "(no flags)" } else { "" },
        if reqs.is_empty() { "\n" } else { "" }
    );
    if !reqs.is_empty() {
        o.push_str("Requirements:\t");
        for r in &reqs {
            let _ = write!(o, "{} ", js(Some(r)));
        }
        o.push_str("\n\n");
    }
    let segments = &v["segments"];
    let digests = v["digests"].as_object().cloned().unwrap_or_default();
    o.push_str("Data segments:\n");
    for id in 0..32 {
        let Some(s) = segments.get(id.to_string()) else {
            continue;
        };
        let _ = writeln!(o, "  {id}: {}", js(s.get("type")));
        let _ = writeln!(o, "\toffset: {} [bytes]", ju64(s.get("offset")));
        match s.get("size") {
            Some(Value::String(d)) if d == "dynamic" => o.push_str("\tlength: (whole device)\n"),
            size => {
                let _ = writeln!(o, "\tlength: {} [bytes]", ju64(size));
            }
        }
        if let Some(e) = s.get("encryption") {
            let _ = writeln!(o, "\tcipher: {}", js(Some(e)));
        }
        if let Some(n) = s.get("sector_size") {
            let _ = writeln!(o, "\tsector: {} [bytes]", ju32(Some(n)));
        }
        if let Some(t) = s.get("integrity").and_then(|i| i.get("type")) {
            let _ = writeln!(o, "\tintegrity: {}", js(Some(t)));
        }
        let seg_flags = list(s.get("flags"));
        if !seg_flags.is_empty() {
            let names: Vec<String> = seg_flags.iter().map(|f| js(Some(f))).collect();
            let _ = writeln!(o, "\tflags : {}", names.join(", "));
        }
        o.push('\n');
    }
    // The first digest (in JSON order) listing `what` in its `list`.
    let digest_of = |list: &str, what: &str| {
        digests.iter().find_map(|(id, d)| {
            d.get(list)
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(what)))
                .then_some(id.clone())
        })
    };
    let regular = segments.as_object().map_or(0, |m| {
        m.values()
            .filter(|s| {
                !list(s.get("flags"))
                    .iter()
                    .any(|f| f.as_str().is_some_and(|f| f.starts_with("backup-")))
            })
            .count()
    });
    let keyslots = &v["keyslots"];
    o.push_str("Keyslots:\n");
    for id in 0..32 {
        let slot = id.to_string();
        let Some(k) = keyslots.get(&slot) else {
            continue;
        };
        // Unbound: its digest is that of no regular segment.
        let bound = digest_of("keyslots", &slot).is_some_and(|d| {
            (0..regular).any(|s| digest_of("segments", &s.to_string()).as_ref() == Some(&d))
        });
        let kind = js(k.get("type"));
        let _ = writeln!(o, "  {id}: {kind}{}", if bound { "" } else { " (unbound)" });
        if let Some(n) = k.get("key_size") {
            let _ = writeln!(o, "\tKey:        {} bits", ju32(Some(n)).wrapping_mul(8));
        }
        let priority = k.get("priority").map(|p| i64::from(ji32(Some(p))));
        let _ = writeln!(o, "\tPriority:   {}", priority_name(priority));
        match kind.as_str() {
            "luks2" => luks2_keyslot(&mut o, k),
            "reencrypt" => reencrypt_keyslot(&mut o, k),
            _ => {}
        }
        for (did, d) in &digests {
            for x in list(d.get("keyslots")) {
                if x.as_str() == Some(slot.as_str()) {
                    let _ = writeln!(o, "\tDigest ID:  {did}");
                }
            }
        }
    }
    o.push_str("Tokens:\n");
    for id in 0..32 {
        let Some(t) = v["tokens"].get(id.to_string()) else {
            continue;
        };
        let kind = js(t.get("type"));
        let _ = writeln!(o, "  {id}: {kind}");
        if kind == "luks2-keyring"
            && let Some(d) = t.get("key_description")
        {
            let _ = writeln!(o, "\tKey description: {}", js(Some(d)));
        }
        for k in list(t.get("keyslots")) {
            let _ = writeln!(o, "\tKeyslot:    {}", js(Some(&k)));
        }
    }
    o.push_str("Digests:\n");
    for id in 0..8 {
        let Some(d) = digests.get(&id.to_string()) else {
            continue;
        };
        let kind = js(d.get("type"));
        let _ = writeln!(o, "  {id}: {kind}");
        if kind == "pbkdf2" {
            let _ = writeln!(o, "\tHash:       {}", js(d.get("hash")));
            let _ = writeln!(o, "\tIterations: {}", ji64(d.get("iterations")) as u64);
            o.push_str("\tSalt:       ");
            hex_base64(&mut o, d.get("salt"));
            o.push_str("\tDigest:     ");
            hex_base64(&mut o, d.get("digest"));
        }
    }
    o
}

/// A `luks2` keyslot's lines (its handler's dump in libcryptsetup).
fn luks2_keyslot(o: &mut String, k: &Value) {
    let (Some(kdf), Some(af), Some(area)) = (k.get("kdf"), k.get("af"), k.get("area")) else {
        return;
    };
    let _ = writeln!(o, "\tCipher:     {}", js(area.get("encryption")));
    let bits = ju32(area.get("key_size")).wrapping_mul(8);
    let _ = writeln!(o, "\tCipher key: {bits} bits");
    let kdf_type = js(kdf.get("type"));
    let _ = writeln!(o, "\tPBKDF:      {kdf_type}");
    if kdf_type == "pbkdf2" {
        let _ = writeln!(o, "\tHash:       {}", js(kdf.get("hash")));
        let _ = writeln!(o, "\tIterations: {}", ju64(kdf.get("iterations")));
    } else {
        let _ = writeln!(o, "\tTime cost:  {}", ji64(kdf.get("time")) as u64);
        let _ = writeln!(o, "\tMemory:     {}", ji64(kdf.get("memory")) as u64);
        let _ = writeln!(o, "\tThreads:    {}", ji64(kdf.get("cpus")) as u64);
    }
    o.push_str("\tSalt:       ");
    hex_base64(o, kdf.get("salt"));
    // Read as a C int, printed unsigned.
    let _ = writeln!(o, "\tAF stripes: {}", ji32(af.get("stripes")) as u32);
    let _ = writeln!(o, "\tAF hash:    {}", js(af.get("hash")));
    let _ = writeln!(o, "\tArea offset:{} [bytes]", ju64(area.get("offset")));
    let _ = writeln!(o, "\tArea length:{} [bytes]", ju64(area.get("size")));
}

/// A `reencrypt` keyslot's lines (its handler's dump in libcryptsetup,
/// which shows the hash of `checksum` and the shift of `datashift` only).
fn reencrypt_keyslot(o: &mut String, k: &Value) {
    let area = &k["area"];
    let resilience = js(area.get("type"));
    let _ = writeln!(o, "\tMode:       {}", js(k.get("mode")));
    let _ = writeln!(o, "\tDirection:  {}", js(k.get("direction")));
    let _ = writeln!(o, "\tResilience: {resilience}");
    match resilience.as_str() {
        "checksum" => {
            let _ = writeln!(o, "\tHash:       {}", js(area.get("hash")));
            let _ = writeln!(o, "\tHash data:  {} [bytes]", ji32(area.get("sector_size")));
        }
        "datashift" => {
            let _ = writeln!(o, "\tShift size: {}[bytes]", ju64(area.get("shift_size")));
        }
        _ => {}
    }
    let _ = writeln!(o, "\tArea offset:{} [bytes]", ju64(area.get("offset")));
    let _ = writeln!(o, "\tArea length:{} [bytes]", ju64(area.get("size")));
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
/// its digest, whether it is unbound and its priority (or, for one this
/// crate cannot open, its type and why; `digests` likewise names the
/// digests it cannot check a key with); with `key`, the key
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
    let mut keyslots = keyslots;
    for (id, k) in &m.unusable_keyslots {
        let status = json!({
            "type": k.type_name(),
            "unusable": k.why,
        });
        keyslots.insert(id.to_string(), status);
    }
    v["keyslots"] = Value::Object(keyslots);
    if !m.unusable_digests.is_empty() {
        let digests: serde_json::Map<String, Value> = m
            .unusable_digests
            .iter()
            .map(|(id, d)| (id.to_string(), json!({ "unusable": d.why })))
            .collect();
        v["digests"] = Value::Object(digests);
    }
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
