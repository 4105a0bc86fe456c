//! Reading the JSON area: every field checked for its type and range as it is read.

use super::validate::{digest_problem, keyslot_problem};
use super::*;

pub(super) fn obj<'a>(v: &'a Value, field: &str) -> Result<&'a Map<String, Value>, Error> {
    v.as_object()
        .ok_or_else(|| Error::schema(field, "a JSON object"))
}

pub(super) fn get<'a>(
    o: &'a Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<&'a Value, Error> {
    o.get(key)
        .ok_or_else(|| Error::schema(format!("{path}.{key}"), "present"))
}

pub(super) fn string<'a>(
    o: &'a Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<&'a str, Error> {
    get(o, path, key)?
        .as_str()
        .ok_or_else(|| Error::schema(format!("{path}.{key}"), "a JSON string"))
}

/// A 64-bit number written as a string of decimal digits.
pub(super) fn u64_str(o: &Map<String, Value>, path: &str, key: &str) -> Result<u64, Error> {
    let s = string(o, path, key)?;
    parse_u64(s).ok_or_else(|| {
        Error::schema(
            format!("{path}.{key}"),
            "a string of decimal digits (a 64-bit number)",
        )
    })
}

pub(super) fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// An id (object key or list entry): decimal digits without a leading
/// zero, below 2^32. cryptsetup looks ids up by that form, so `"00"` is
/// not id 0 to it.
pub(super) fn parse_id(s: &str) -> Option<u32> {
    if s.len() > 1 && s.starts_with('0') {
        return None;
    }
    parse_u64(s).and_then(|n| u32::try_from(n).ok())
}

/// What an id must look like.
pub(super) const ID_FORM: &str =
    "a decimal id without leading zeros (cryptsetup finds ids by that form)";

/// Any JSON integer (as cryptsetup reads `af.stripes` and `priority`).
pub(super) fn int(o: &Map<String, Value>, path: &str, key: &str) -> Result<i64, Error> {
    get(o, path, key)?
        .as_i64()
        .ok_or_else(|| Error::schema(format!("{path}.{key}"), "a JSON integer"))
}

/// A 32-bit number written as a JSON integer.
pub(super) fn u32_num(o: &Map<String, Value>, path: &str, key: &str) -> Result<u32, Error> {
    get(o, path, key)?
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| Error::schema(format!("{path}.{key}"), "a JSON integer in 0..2^32"))
}

pub(super) fn base64(o: &Map<String, Value>, path: &str, key: &str) -> Result<Vec<u8>, Error> {
    let s = string(o, path, key)?;
    mdu_base64::STANDARD
        .decode_to_vec(s.as_bytes())
        .ok()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| Error::schema(format!("{path}.{key}"), "non-empty padded base64"))
}

pub(super) fn hash(o: &Map<String, Value>, path: &str, key: &str) -> Result<Hash, Error> {
    let s = string(o, path, key)?;
    Hash::parse(s).ok_or_else(|| Error::Unsupported {
        field: format!("{path}.{key}"),
        value: s.to_owned(),
    })
}

pub(super) fn expect_type(o: &Map<String, Value>, path: &str, want: &str) -> Result<(), Error> {
    let t = string(o, path, "type")?;
    if t != want {
        return Err(Error::Unsupported {
            field: format!("{path}.type"),
            value: t.to_owned(),
        });
    }
    Ok(())
}

/// One member of an object keyed by id: the id, its path, the object.
type Entry<'a> = (u32, String, &'a Map<String, Value>);

/// An object whose keys are decimal ids.
pub(super) fn by_id<'a>(root: &'a Map<String, Value>, key: &str) -> Result<Vec<Entry<'a>>, Error> {
    let o = obj(
        get(root, "", key).map_err(|_| Error::schema(key, "present"))?,
        key,
    )?;
    let mut out = Vec::with_capacity(o.len());
    for (k, v) in o {
        let path = format!("{key}.{k}");
        let id = parse_id(k).ok_or_else(|| Error::schema(path.clone(), ID_FORM))?;
        out.push((id, path.clone(), obj(v, &path)?));
    }
    Ok(out)
}

pub(super) fn id_list(o: &Map<String, Value>, path: &str, key: &str) -> Result<Vec<u32>, Error> {
    let field = format!("{path}.{key}");
    let a = get(o, path, key)?
        .as_array()
        .ok_or_else(|| Error::schema(field.clone(), "an array of decimal id strings"))?;
    a.iter()
        .map(|v| {
            v.as_str()
                .and_then(parse_id)
                .ok_or_else(|| Error::schema(field.clone(), ID_FORM))
        })
        .collect()
}

pub(super) fn string_list(
    o: &Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<Vec<String>, Error> {
    let field = format!("{path}.{key}");
    match o.get(key) {
        None => Ok(Vec::new()),
        Some(v) => v
            .as_array()
            .ok_or_else(|| Error::schema(field.clone(), "an array of strings"))?
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| Error::schema(field.clone(), "an array of strings"))
            })
            .collect(),
    }
}

pub(super) fn parse_kdf(o: &Map<String, Value>, path: &str) -> Result<Kdf, Error> {
    let t = string(o, path, "type")?;
    let variant = match t {
        "pbkdf2" => {
            return Ok(Kdf::Pbkdf2 {
                hash: hash(o, path, "hash")?,
                iterations: u32_num(o, path, "iterations")?,
                salt: base64(o, path, "salt")?,
            });
        }
        "argon2i" => Argon2Variant::Argon2i,
        "argon2id" => Argon2Variant::Argon2id,
        other => {
            return Err(Error::Unsupported {
                field: format!("{path}.type"),
                value: other.to_owned(),
            });
        }
    };
    Ok(Kdf::Argon2 {
        variant,
        time: u32_num(o, path, "time")?,
        memory: u32_num(o, path, "memory")?,
        cpus: u32_num(o, path, "cpus")?,
        salt: base64(o, path, "salt")?,
    })
}

/// A string that is present and not empty (cryptsetup's
/// `json_contains_string`).
pub(super) fn nonempty<'a>(
    o: &'a Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<&'a str, Error> {
    Some(string(o, path, key)?)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Error::schema(format!("{path}.{key}"), "a non-empty JSON string"))
}

/// A member that is an object, as an object.
pub(super) fn member_obj<'a>(
    o: &'a Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<&'a Map<String, Value>, Error> {
    obj(get(o, path, key)?, &format!("{path}.{key}"))
}

/// What cryptsetup requires of every keyslot, whatever its type: a
/// `type`, a 32-bit `key_size` and an `area` with a `type`, an `offset`
/// and a `size` (64-bit decimal strings).
pub(super) fn check_any_keyslot(o: &Map<String, Value>, path: &str) -> Result<(), Error> {
    nonempty(o, path, "type")?;
    u32_num(o, path, "key_size")?;
    let area_path = format!("{path}.area");
    let area = member_obj(o, path, "area")?;
    nonempty(area, &area_path, "type")?;
    u64_str(area, &area_path, "offset")?;
    u64_str(area, &area_path, "size")?;
    Ok(())
}

/// What cryptsetup's `luks2` keyslot handler requires: `kdf`, `af` and
/// `area` objects; a `pbkdf2` KDF with `hash`, `iterations` and `salt`,
/// an `argon2i`/`argon2id` one with `time`, `memory`, `cpus` and `salt`
/// (other members cryptsetup drops as it reads; a KDF of another name is
/// not looked into);
/// a `luks1` AF with a `hash` and integer `stripes`; a `raw` area with an
/// `encryption` and an integer `key_size`.
pub(super) fn check_luks2_keyslot(o: &Map<String, Value>, path: &str) -> Result<(), Error> {
    let kdf_path = format!("{path}.kdf");
    let kdf = member_obj(o, path, "kdf")?;
    let af_path = format!("{path}.af");
    let af = member_obj(o, path, "af")?;
    let area_path = format!("{path}.area");
    let area = member_obj(o, path, "area")?;
    match nonempty(kdf, &kdf_path, "type")? {
        "pbkdf2" => {
            nonempty(kdf, &kdf_path, "hash")?;
            int(kdf, &kdf_path, "iterations")?;
            nonempty(kdf, &kdf_path, "salt")?;
        }
        "argon2i" | "argon2id" => {
            for k in ["time", "memory", "cpus"] {
                int(kdf, &kdf_path, k)?;
            }
            nonempty(kdf, &kdf_path, "salt")?;
        }
        _ => {}
    }
    expect_type(af, &af_path, "luks1")?;
    nonempty(af, &af_path, "hash")?;
    int(af, &af_path, "stripes")?;
    expect_type(area, &area_path, "raw")?;
    nonempty(area, &area_path, "encryption")?;
    int(area, &area_path, "key_size")?;
    Ok(())
}

/// A `luks2` keyslot in this crate's types (after [`check_luks2_keyslot`]):
/// an error here makes the keyslot unusable, not the header invalid.
pub(super) fn parse_keyslot(o: &Map<String, Value>, path: &str) -> Result<Keyslot, Error> {
    expect_type(o, path, "luks2")?;
    let af_path = format!("{path}.af");
    let af = obj(get(o, path, "af")?, &af_path)?;
    expect_type(af, &af_path, "luks1")?;
    let area_path = format!("{path}.area");
    let area = obj(get(o, path, "area")?, &area_path)?;
    expect_type(area, &area_path, "raw")?;
    let kdf_path = format!("{path}.kdf");
    let kdf = obj(get(o, path, "kdf")?, &kdf_path)?;
    let priority = match o.get("priority") {
        None => None,
        Some(_) => Some(int(o, path, "priority")?),
    };
    Ok(Keyslot {
        key_size: u32_num(o, path, "key_size")?,
        af_stripes: int(af, &af_path, "stripes")?,
        af_hash: hash(af, &af_path, "hash")?,
        area: KeyslotArea {
            offset: u64_str(area, &area_path, "offset")?,
            size: u64_str(area, &area_path, "size")?,
            encryption: Encryption::parse(string(area, &area_path, "encryption")?),
            key_size: u32_num(area, &area_path, "key_size")?,
        },
        kdf: parse_kdf(kdf, &kdf_path)?,
        priority,
    })
}

pub(super) fn parse_reencrypt(
    id: u32,
    o: &Map<String, Value>,
    path: &str,
) -> Result<ReencryptKeyslot, Error> {
    let area_path = format!("{path}.area");
    let area = obj(get(o, path, "area")?, &area_path)?;
    let key_size = int(o, path, "key_size")?;
    if key_size != 1 {
        return Err(Error::schema(
            format!("{path}.key_size"),
            "1 (a reencrypt keyslot holds no key)",
        ));
    }
    let mode = match string(o, path, "mode")? {
        "encrypt" => ReencryptMode::Encrypt,
        "decrypt" => ReencryptMode::Decrypt,
        "reencrypt" => ReencryptMode::Reencrypt,
        other => {
            return Err(Error::Unsupported {
                field: format!("{path}.mode"),
                value: other.to_owned(),
            });
        }
    };
    let direction = match string(o, path, "direction")? {
        "forward" => ReencryptDirection::Forward,
        "backward" => ReencryptDirection::Backward,
        other => {
            return Err(Error::Unsupported {
                field: format!("{path}.direction"),
                value: other.to_owned(),
            });
        }
    };
    let checksum = || -> Result<(Hash, u32), Error> {
        Ok((
            hash(area, &area_path, "hash")?,
            u32_num(area, &area_path, "sector_size")?,
        ))
    };
    let shift = || u64_str(area, &area_path, "shift_size");
    let resilience = match string(area, &area_path, "type")? {
        "none" => Resilience::None,
        "checksum" => {
            let (hash, sector_size) = checksum()?;
            Resilience::Checksum { hash, sector_size }
        }
        "journal" => Resilience::Journal,
        "datashift" => Resilience::Datashift { shift: shift()? },
        "datashift-checksum" => {
            let (hash, sector_size) = checksum()?;
            Resilience::DatashiftChecksum {
                hash,
                sector_size,
                shift: shift()?,
            }
        }
        "datashift-journal" => Resilience::DatashiftJournal { shift: shift()? },
        other => {
            return Err(Error::Unsupported {
                field: format!("{area_path}.type"),
                value: other.to_owned(),
            });
        }
    };
    let priority = match o.get("priority") {
        None => None,
        Some(_) => Some(int(o, path, "priority")?),
    };
    Ok(ReencryptKeyslot {
        id,
        area: ReencryptArea {
            offset: u64_str(area, &area_path, "offset")?,
            size: u64_str(area, &area_path, "size")?,
            resilience,
        },
        mode,
        direction,
        priority,
    })
}

/// A segment as cryptsetup reads it: a `type`, a 512-byte aligned
/// `offset` and `size` (`dynamic` or a non-zero decimal string) and string
/// `flags`, whatever the type; a `crypt` segment also has a decimal
/// `iv_tweak`, a non-empty `encryption`, a `sector_size` that is a
/// non-zero multiple of 512 dividing the size, and, if it has an
/// `integrity` object, its `type`, `journal_encryption` and
/// `journal_integrity`. A segment of another type loads as
/// [`SegmentKind::Other`].
pub(super) fn parse_segment(o: &Map<String, Value>, path: &str) -> Result<Segment, Error> {
    let type_name = nonempty(o, path, "type")?;
    let offset = u64_str(o, path, "offset")?;
    let size = match nonempty(o, path, "size")? {
        "dynamic" => None,
        s => Some(parse_u64(s).filter(|&n| n > 0).ok_or_else(|| {
            Error::schema(
                format!("{path}.size"),
                "\"dynamic\" or a non-zero decimal number",
            )
        })?),
    };
    for (field, n) in [("offset", offset), ("size", size.unwrap_or(0))] {
        if !n.is_multiple_of(512) {
            return Err(Error::layout(
                format!("{path}.{field}"),
                format!("{n} is not a multiple of 512"),
            ));
        }
    }
    let flags = string_list(o, path, "flags")?;
    let kind = match type_name {
        "crypt" => SegmentKind::Crypt,
        "linear" => SegmentKind::Linear,
        other => SegmentKind::Other(other.to_owned()),
    };
    let known: &[&str] = match kind {
        SegmentKind::Crypt => &[
            "type",
            "offset",
            "size",
            "iv_tweak",
            "encryption",
            "sector_size",
            "flags",
        ],
        _ => &["type", "offset", "size", "flags"],
    };
    let extra: Map<String, Value> = o
        .iter()
        .filter(|(k, _)| !known.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut segment = match kind {
        SegmentKind::Crypt => {
            let sector_size = u32_num(o, path, "sector_size")?;
            if sector_size == 0 || !sector_size.is_multiple_of(512) {
                return Err(Error::layout(
                    format!("{path}.sector_size"),
                    format!("{sector_size} is not a non-zero multiple of 512"),
                ));
            }
            if let Some(n) = size
                && !n.is_multiple_of(u64::from(sector_size))
            {
                return Err(Error::layout(
                    format!("{path}.size"),
                    format!("{n} is not a multiple of the sector size {sector_size}"),
                ));
            }
            if extra.contains_key("integrity") {
                let ipath = format!("{path}.integrity");
                let i = member_obj(o, path, "integrity")?;
                for k in ["type", "journal_encryption", "journal_integrity"] {
                    nonempty(i, &ipath, k)?;
                }
            }
            let mut s = Segment::linear(offset, size);
            s.kind = SegmentKind::Crypt;
            s.iv_tweak = u64_str(o, path, "iv_tweak")?;
            s.encryption = Encryption::parse(nonempty(o, path, "encryption")?);
            s.sector_size = sector_size;
            s
        }
        kind => {
            let mut s = Segment::linear(offset, size);
            s.kind = kind;
            s
        }
    };
    segment.flags = flags;
    segment.extra = extra;
    Ok(segment)
}

pub(super) fn parse_digest(o: &Map<String, Value>, path: &str) -> Result<Digest, Error> {
    expect_type(o, path, "pbkdf2")?;
    Ok(Digest {
        keyslots: id_list(o, path, "keyslots")?,
        segments: id_list(o, path, "segments")?,
        hash: hash(o, path, "hash")?,
        iterations: u32_num(o, path, "iterations")?,
        salt: base64(o, path, "salt")?,
        digest: base64(o, path, "digest")?,
    })
}

impl Metadata {
    /// Parses and validates the JSON text of a header copy of `hdr_size`
    /// bytes (see [`validate`](Self::validate)).
    ///
    /// ```
    /// use mdu_luks2::{Error, Metadata};
    /// let err = Metadata::parse(r#"{"keyslots":{}}"#, 16384).unwrap_err();
    /// assert!(matches!(err, Error::Schema { .. }));
    /// ```
    pub fn parse(text: &str, hdr_size: u64) -> Result<Metadata, Error> {
        let v: Value = serde_json::from_str(text).map_err(|e| Error::JsonSyntax {
            offset: 0,
            message: e.to_string(),
        })?;
        let m = Metadata::from_value(&v)?;
        m.validate(hdr_size, None)?;
        Ok(m)
    }

    /// Reads the metadata from a parsed JSON value, checking its schema
    /// only (not its layout).
    ///
    /// ```
    /// let v = serde_json::json!({"keyslots": 5});
    /// assert!(mdu_luks2::Metadata::from_value(&v).is_err());
    /// ```
    pub fn from_value(v: &Value) -> Result<Metadata, Error> {
        let root = obj(v, "(top level)")?;
        let mut keyslots = BTreeMap::new();
        let mut reencrypt = None;
        let mut unusable_keyslots = BTreeMap::new();
        for (id, path, o) in by_id(root, "keyslots")? {
            check_any_keyslot(o, &path)?;
            let kind = string(o, &path, "type")?;
            if kind != "reencrypt" {
                let why = if kind == "luks2" {
                    check_luks2_keyslot(o, &path)?;
                    match parse_keyslot(o, &path).and_then(|k| keyslot_problem(id, &k).map(|()| k))
                    {
                        Ok(k) => {
                            keyslots.insert(id, k);
                            continue;
                        }
                        Err(e) => e.to_string(),
                    }
                } else {
                    format!("{path}.type: `{kind}` is not a keyslot type this crate opens (luks2)")
                };
                let json = o.clone();
                unusable_keyslots.insert(id, UnusableKeyslot { json, why });
            } else if reencrypt.is_some() {
                return Err(Error::layout(
                    path,
                    "a second reencrypt keyslot; a header records one reencryption",
                ));
            } else {
                reencrypt = Some(parse_reencrypt(id, o, &path)?);
            }
        }
        let mut segments = BTreeMap::new();
        for (id, path, o) in by_id(root, "segments")? {
            segments.insert(id, parse_segment(o, &path)?);
        }
        let mut digests = BTreeMap::new();
        let mut unusable_digests = BTreeMap::new();
        for (id, path, o) in by_id(root, "digests")? {
            // cryptsetup's rule for every digest: a type, and lists of
            // the keyslots and segments it binds.
            nonempty(o, &path, "type")?;
            let keyslots = id_list(o, &path, "keyslots")?;
            let segments = id_list(o, &path, "segments")?;
            match parse_digest(o, &path).and_then(|d| digest_problem(id, &d).map(|()| d)) {
                Ok(d) => {
                    digests.insert(id, d);
                }
                Err(e) => {
                    let digest = UnusableDigest {
                        json: o.clone(),
                        keyslots,
                        segments,
                        why: e.to_string(),
                    };
                    unusable_digests.insert(id, digest);
                }
            }
        }
        let tokens = obj(
            get(root, "", "tokens").map_err(|_| Error::schema("tokens", "present"))?,
            "tokens",
        )?
        .clone();
        let c = obj(
            get(root, "", "config").map_err(|_| Error::schema("config", "present"))?,
            "config",
        )?;
        let requirements = match c.get("requirements") {
            None => None,
            Some(r) => {
                let r = obj(r, "config.requirements")?;
                if let Some(k) = r.keys().find(|k| *k != "mandatory") {
                    return Err(Error::Unsupported {
                        field: format!("config.requirements.{k}"),
                        value: r[k].to_string(),
                    });
                }
                Some(string_list(r, "config.requirements", "mandatory")?)
            }
        };
        let config = Config {
            json_size: u64_str(c, "config", "json_size")?,
            keyslots_size: u64_str(c, "config", "keyslots_size")?,
            flags: string_list(c, "config", "flags")?,
            requirements,
        };
        Ok(Metadata {
            keyslots,
            unusable_keyslots,
            reencrypt,
            tokens,
            segments,
            digests,
            unusable_digests,
            config,
        })
    }
}
