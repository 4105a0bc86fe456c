//! A LUKS1 header as `cryptsetup luksDump` prints it, and as JSON.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::header::{Header, SALT_LEN};
use crate::VolumeKey;

/// Bytes as `crypt_log_hex` prints them: two hex digits and a space each.
fn hex(out: &mut String, bytes: &[u8]) {
    for b in bytes {
        let _ = write!(out, "{b:02x} ");
    }
}

/// The header as `cryptsetup luksDump IMAGE` prints it, `path` being the
/// image as named on the command line.
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
/// let text = luks1::dump_text(std::path::Path::new("disk.img"), &Header::load(&image[..])?);
/// assert!(text.starts_with("LUKS header information for disk.img\n\nVersion:       \t1\n"));
/// assert!(text.contains("Key Slot 0: ENABLED\n\tIterations:         \t1000\n"));
/// assert!(text.ends_with("Key Slot 7: DISABLED\n"));
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn dump_text(path: &Path, hdr: &Header) -> String {
    let half = SALT_LEN / 2;
    let mut o = String::new();
    let _ = writeln!(o, "LUKS header information for {}\n", path.display());
    let _ = writeln!(o, "Version:       \t1");
    let _ = writeln!(o, "Cipher name:   \t{}", hdr.cipher_name);
    let _ = writeln!(o, "Cipher mode:   \t{}", hdr.cipher_mode);
    let _ = writeln!(o, "Hash spec:     \t{}", hdr.hash);
    let _ = writeln!(o, "Payload offset:\t{}", hdr.payload_offset);
    let _ = writeln!(o, "MK bits:       \t{}", u64::from(hdr.key_bytes) * 8);
    o.push_str("MK digest:     \t");
    hex(&mut o, &hdr.mk_digest);
    o.push_str("\nMK salt:       \t");
    hex(&mut o, &hdr.mk_digest_salt[..half]);
    o.push_str("\n               \t");
    hex(&mut o, &hdr.mk_digest_salt[half..]);
    let _ = writeln!(o, "\nMK iterations: \t{}", hdr.mk_digest_iterations);
    let _ = writeln!(o, "UUID:          \t{}\n", hdr.uuid);
    for (i, s) in hdr.slots.iter().enumerate() {
        if !s.enabled {
            let _ = writeln!(o, "Key Slot {i}: DISABLED");
            continue;
        }
        let _ = writeln!(o, "Key Slot {i}: ENABLED");
        let _ = writeln!(o, "\tIterations:         \t{}", s.iterations);
        o.push_str("\tSalt:               \t");
        hex(&mut o, &s.salt[..half]);
        o.push_str("\n\t                      \t");
        hex(&mut o, &s.salt[half..]);
        let _ = writeln!(o, "\n\tKey material offset:\t{}", s.key_material_offset);
        let _ = writeln!(o, "\tAF stripes:            \t{}", s.stripes);
    }
    o
}

/// The volume key as `cryptsetup luksDump --dump-volume-key` prints it for
/// a LUKS1 image.
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
/// let hdr = Header::load(&image[..])?;
/// let key = hdr.unlock(&image[..], b"pw")?;
/// let text = luks1::volume_key_text(std::path::Path::new("disk.img"), &hdr, &key);
/// assert!(text.contains("Payload offset:\t4096\n"));
/// assert!(text.contains("MK dump:\t00 01 02"));
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn volume_key_text(path: &Path, hdr: &Header, key: &VolumeKey) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "LUKS header information for {}", path.display());
    let _ = writeln!(o, "Cipher name:   \t{}", hdr.cipher_name);
    let _ = writeln!(o, "Cipher mode:   \t{}", hdr.cipher_mode);
    let _ = writeln!(o, "Payload offset:\t{}", hdr.payload_offset);
    let _ = writeln!(o, "UUID:          \t{}", hdr.uuid);
    let _ = writeln!(o, "MK bits:       \t{}", key.key.len() * 8);
    o.push_str("MK dump:\t");
    crate::dump::hex_lines(&mut o, &key.key, "\t\t");
    o
}

fn hex_string(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

/// The header as one JSON object (every field, the slots in order); with
/// `key`, the volume key (hex) and the slot that opened it.
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
/// let v = luks1::dump_json(&Header::load(&image[..])?, None);
/// assert_eq!(v["version"], 1);
/// assert_eq!(v["keyslots"][0]["enabled"], true);
/// assert_eq!(v["keyslots"][1]["key_material_offset"], 512);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn dump_json(hdr: &Header, key: Option<&VolumeKey>) -> Value {
    let slots: Vec<Value> = hdr
        .slots
        .iter()
        .map(|s| {
            json!({
                "enabled": s.enabled,
                "iterations": s.iterations,
                "salt": hex_string(&s.salt),
                "key_material_offset": s.key_material_offset,
                "stripes": s.stripes,
            })
        })
        .collect();
    let mut v = json!({
        "version": 1,
        "cipher_name": hdr.cipher_name,
        "cipher_mode": hdr.cipher_mode,
        "hash_spec": hdr.hash.name(),
        "payload_offset": hdr.payload_offset,
        "key_bytes": hdr.key_bytes,
        "mk_digest": hex_string(&hdr.mk_digest),
        "mk_digest_salt": hex_string(&hdr.mk_digest_salt),
        "mk_digest_iterations": hdr.mk_digest_iterations,
        "uuid": hdr.uuid,
        "keyslots": slots,
    });
    if let Some(k) = key {
        v["volume_key"] = Value::String(hex_string(&k.key));
        v["keyslot"] = json!(k.slot);
    }
    v
}
