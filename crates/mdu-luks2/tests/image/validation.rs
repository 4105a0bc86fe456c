//! Every validation rule broken once, with the error it gives (cryptsetup's
//! rules on ids and bindings among them); areas and payloads inside the
//! image; ciphers that load but cannot be used.

use super::*;

/// Each mutation of the metadata (in both copies) and the error it gives.
#[test]
fn every_validation_rule_has_its_error() {
    type Check = fn(&Error) -> bool;
    type Case = (&'static str, Box<dyn Fn(&mut Value)>, Check);
    let cases: Vec<Case> = vec![
        (
            "json_size",
            Box::new(|v| v["config"]["json_size"] = json!("4096")),
            |e| matches!(e, Error::Layout { field, .. } if field == "config.json_size"),
        ),
        (
            "keyslots_size alignment",
            Box::new(|v| v["config"]["keyslots_size"] = json!("1000")),
            |e| matches!(e, Error::Layout { field, .. } if field == "config.keyslots_size"),
        ),
        (
            "area outside the keyslots area",
            Box::new(|v| v["keyslots"]["0"]["area"]["offset"] = json!("16384")),
            |e| matches!(e, Error::Layout { field, .. } if field == "keyslots.0.area"),
        ),
        (
            "overlapping areas",
            Box::new(|v| {
                let mut k = v["keyslots"]["0"].clone();
                k["area"]["offset"] = json!("36864");
                v["keyslots"]["1"] = k;
            }),
            |e| {
                matches!(
                    e,
                    Error::KeyslotAreasOverlap {
                        first: 0,
                        second: 1
                    }
                )
            },
        ),
        (
            "keyslot id above the limit",
            Box::new(|v| {
                let mut k = v["keyslots"]["0"].clone();
                k["area"]["offset"] = json!("294912");
                v["keyslots"]["32"] = k;
            }),
            |e| matches!(e, Error::Layout { field, .. } if field == "keyslots.32"),
        ),
        (
            "stripes not an integer",
            Box::new(|v| v["keyslots"]["0"]["af"]["stripes"] = json!("4000")),
            |e| matches!(e, Error::Schema { field, .. } if field == "keyslots.0.af.stripes"),
        ),
        (
            "segment inside the keyslots area",
            Box::new(|v| v["segments"]["0"]["offset"] = json!("65536")),
            |e| matches!(e, Error::Layout { field, .. } if field == "segments.0.offset"),
        ),
        (
            "sector size",
            Box::new(|v| v["segments"]["0"]["sector_size"] = json!(768)),
            |e| matches!(e, Error::Layout { field, .. } if field == "segments.0.sector_size"),
        ),
        (
            "segment size",
            Box::new(|v| v["segments"]["0"]["size"] = json!("1000")),
            |e| matches!(e, Error::Layout { field, .. } if field == "segments.0.size"),
        ),
        (
            "digest names a missing keyslot",
            Box::new(|v| v["digests"]["0"]["keyslots"] = json!(["0", "7"])),
            |e| {
                matches!(
                    e,
                    Error::DanglingReference {
                        kind: "keyslot",
                        id: 7,
                        ..
                    }
                )
            },
        ),
        (
            "digest names a missing segment",
            Box::new(|v| v["digests"]["0"]["segments"] = json!(["3"])),
            |e| {
                matches!(
                    e,
                    Error::DanglingReference {
                        kind: "segment",
                        id: 3,
                        ..
                    }
                )
            },
        ),
        (
            "missing field",
            Box::new(|v| {
                v["keyslots"]["0"]["area"]
                    .as_object_mut()
                    .unwrap()
                    .remove("encryption");
            }),
            |e| matches!(e, Error::Schema { field, .. } if field == "keyslots.0.area.encryption"),
        ),
        (
            "64-bit number as a JSON number",
            Box::new(|v| v["segments"]["0"]["offset"] = json!(1048576)),
            |e| matches!(e, Error::Schema { field, .. } if field == "segments.0.offset"),
        ),
        (
            "32-bit number as a string",
            Box::new(|v| v["segments"]["0"]["sector_size"] = json!("512")),
            |e| matches!(e, Error::Schema { field, .. } if field == "segments.0.sector_size"),
        ),
        (
            "negative number",
            Box::new(|v| v["keyslots"]["0"]["key_size"] = json!(-64)),
            |e| matches!(e, Error::Schema { field, .. } if field == "keyslots.0.key_size"),
        ),
        (
            "id that is not a number",
            Box::new(|v| {
                let k = v["keyslots"]["0"].clone();
                v["keyslots"]["x"] = k;
            }),
            |e| matches!(e, Error::Schema { field, .. } if field == "keyslots.x"),
        ),
        (
            "a reencryption requirement without its keyslot",
            Box::new(|v| v["config"]["requirements"] = json!({"mandatory":["online-reencrypt"]})),
            |e| matches!(e, Error::Layout { field, .. } if field == "config.requirements"),
        ),
        (
            "requirements of an unknown form",
            Box::new(|v| v["config"]["requirements"] = json!({"optional":["x"]})),
            |e| matches!(e, Error::Unsupported { field, .. } if field == "config.requirements.optional"),
        ),
        (
            "integrity segment without its journal fields",
            Box::new(|v| v["segments"]["0"]["integrity"] = json!({"type":"hmac(sha256)"})),
            |e| matches!(e, Error::Schema { field, .. } if field == "segments.0.integrity.journal_encryption"),
        ),
        (
            "not an object",
            Box::new(|v| v["tokens"] = json!([])),
            |e| matches!(e, Error::Schema { field, .. } if field == "tokens"),
        ),
    ];
    let mut cases = cases;
    cases.extend(cryptsetup_binding_rules());
    let img = image();
    for (name, f, check) in cases {
        let mut bad = img.clone();
        mutate(&mut bad, |v| f(v));
        let e = load_err(&bad);
        assert!(check(&e), "{name}: got {e:?}");
    }
}

/// What cryptsetup loads though mdu cannot use it: a keyslot mdu cannot
/// open loads as an unusable keyslot naming the field (and an unlock
/// finds no keyslot); a segment mdu cannot map loads and is refused where
/// it is used, naming the field.
#[test]
fn what_cryptsetup_loads_loads_and_fails_where_it_is_used() {
    type Edit = Box<dyn Fn(&mut Value)>;
    let keyslot_cases: [(&str, Edit, &str); 7] = [
        (
            "area too small",
            Box::new(|v| v["keyslots"]["0"]["area"]["size"] = json!("4096")),
            "keyslots.0.area.size",
        ),
        (
            "area unaligned",
            Box::new(|v| v["keyslots"]["0"]["area"]["offset"] = json!("32769")),
            "keyslots.0.area.offset",
        ),
        (
            "zero key size",
            Box::new(|v| v["keyslots"]["0"]["key_size"] = json!(0)),
            "keyslots.0.key_size",
        ),
        (
            "Argon2 memory above the maximum",
            Box::new(
                |v| v["keyslots"]["0"]["kdf"] = json!({"type":"argon2id","time":4,"memory":4194305,"cpus":1,"salt":"AAAAAAAAAAA="}),
            ),
            "keyslots.0.kdf.memory",
        ),
        (
            "zero iterations",
            Box::new(|v| v["keyslots"]["0"]["kdf"]["iterations"] = json!(0)),
            "keyslots.0.kdf.iterations",
        ),
        (
            "unknown keyslot type",
            Box::new(|v| v["keyslots"]["0"]["type"] = json!("luks1")),
            "keyslots.0.type",
        ),
        (
            "unknown hash",
            Box::new(|v| v["keyslots"]["0"]["af"]["hash"] = json!("sha3-256")),
            "keyslots.0.af.hash",
        ),
    ];
    let img = image();
    for (name, f, field) in keyslot_cases {
        let mut odd = img.clone();
        mutate(&mut odd, |v| f(v));
        let loaded = Image::load(&odd[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let m = &loaded.metadata;
        assert!(m.keyslots.is_empty(), "{name}");
        let why = &m.unusable_keyslots[&0].why;
        assert!(why.contains(field), "{name}: {why}");
        assert_eq!(
            Metadata::parse(&m.to_json(), HDR as u64).unwrap(),
            *m,
            "{name}"
        );
        assert!(loaded.unlock(&odd[..], b"pw").is_err(), "{name}");
    }
    // A digest mdu cannot check a key with: its keyslots open nothing.
    for (name, field, value) in [
        ("short digest", "digest", "AAAAAAAAAAAAAAAAAAAAAAAAAA=="),
        ("bad base64", "salt", "not base64!"),
    ] {
        let mut odd = img.clone();
        mutate(&mut odd, |v| v["digests"]["0"][field] = json!(value));
        let loaded = Image::load(&odd[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let m = &loaded.metadata;
        assert!(m.digests.is_empty(), "{name}");
        let why = &m.unusable_digests[&0].why;
        assert!(why.contains(&format!("digests.0.{field}")), "{name}: {why}");
        assert_eq!(
            Metadata::parse(&m.to_json(), HDR as u64).unwrap(),
            *m,
            "{name}"
        );
        let e = loaded.unlock(&odd[..], b"pw").unwrap_err();
        assert!(
            matches!(&e, Error::Layout { field, .. } if field == "digests.0"),
            "{name}: {e:?}"
        );
    }
    // A segment offset that is not a multiple of its sector size.
    let mut odd = img.clone();
    mutate(&mut odd, |v| {
        v["segments"]["0"]["sector_size"] = json!(4096);
        v["segments"]["0"]["offset"] = json!("1049088");
    });
    let loaded = Image::load(&odd[..]).unwrap();
    let e = loaded.segment().unwrap_err();
    assert!(
        matches!(&e, Error::Layout { field, .. } if field == "segments.0.offset"),
        "{e:?}"
    );
}

#[test]
fn a_keyslot_area_beyond_the_end_of_the_image_is_refused() {
    let img = image();
    let e = load_err(&img[..100_000]);
    assert!(
        matches!(
            e,
            Error::Truncated {
                what: "keyslot area",
                ..
            }
        ),
        "{e:?}"
    );
    let e = load_err(&img[..20000]);
    assert!(matches!(e, Error::Truncated { .. }), "{e:?}");
}

#[test]
fn the_payload_must_be_whole_sectors_inside_the_image() {
    let mut img = image();
    img.resize((1 << 20) + 1000, 0);
    let loaded = Image::load(&img[..]).unwrap();
    let (_, seg) = loaded.segment().unwrap();
    assert!(matches!(
        loaded.payload_range(seg),
        Err(Error::Layout { .. })
    ));
}

#[test]
fn segment_ivs_count_512_byte_units() {
    // FORMATS-2 10.1: CBC-ESSIV of a zero sector 0 with key 00..1f.
    let key: Vec<u8> = (0..32).collect();
    let spec: CipherSpec = "aes-cbc-essiv:sha256".parse().unwrap();
    let sectors = |size| Geometry::new(size, 0, false).unwrap();
    let c = SectorCipher::new(spec, &key, sectors(512), WeakKeys::Refuse).unwrap();
    let mut s = vec![0u8; 512];
    c.crypt(Direction::Encrypt, 0, &mut s).unwrap();
    assert_eq!(
        s[..16],
        [
            0xc8, 0xef, 0x86, 0x05, 0xd0, 0xe3, 0x50, 0x60, 0x3c, 0x58, 0x62, 0x85, 0xd3, 0xb0,
            0xb0, 0xe6
        ]
    );
    // Two zero 4096-byte sectors: sector 1 uses IV sector 8.
    let c = SectorCipher::new(spec, &key, sectors(4096), WeakKeys::Refuse).unwrap();
    let mut s = vec![0u8; 8192];
    c.crypt(Direction::Encrypt, 0, &mut s).unwrap();
    assert_eq!(
        s[4096..4112],
        [
            0xa7, 0x92, 0x5e, 0x82, 0xea, 0xfe, 0x97, 0x15, 0xee, 0xe5, 0x46, 0xbb, 0xf5, 0xd1,
            0x7f, 0x1d
        ]
    );
}

#[test]
fn an_unsupported_cipher_loads_dumps_and_fails_where_it_is_used() {
    // As cryptsetup: the header loads (and re-serialises byte for byte);
    // the keyslot or segment that names the spec fails when it is used,
    // with a typed error naming the field and what is supported.
    for (field, spec) in [
        ("keyslot", "aes-lrw-plain64"),
        ("segment", "aes-xts-random"),
        ("segment", "AES-xts-plain64"),
    ] {
        let mut img = image();
        img.resize((1 << 20) + 4096, 0);
        mutate(&mut img, |v| match field {
            "keyslot" => v["keyslots"]["0"]["area"]["encryption"] = json!(spec),
            _ => v["segments"]["0"]["encryption"] = json!(spec),
        });
        let loaded = Image::load(&img[..]).unwrap();
        let m = &loaded.metadata;
        assert_eq!(
            Metadata::parse(&m.to_json(), HDR as u64).unwrap(),
            *m,
            "{spec}"
        );
        assert!(m.to_json().contains(&format!("\"encryption\":\"{spec}\"")));
        let unlocked = loaded.unlock(&img[..], b"pw");
        match (field, spec) {
            ("keyslot", _) => match unlocked.unwrap_err() {
                Error::UnsupportedCipher { field, error } => {
                    assert_eq!(field, "keyslots.0.area.encryption");
                    assert!(error.to_string().contains("aes-xts-<ivmode>"), "{error}");
                }
                e => panic!("{spec}: {e}"),
            },
            // Parsed without regard to case, written back as it was.
            (_, "AES-xts-plain64") => {
                let key = unlocked.unwrap();
                assert!(loaded.segment_cipher(&key, WeakKeys::Refuse).is_ok());
                assert_eq!(m.segments[&0].encryption.as_str(), spec);
            }
            _ => {
                let key = unlocked.unwrap();
                match loaded.segment_cipher(&key, WeakKeys::Refuse).unwrap_err() {
                    Error::UnsupportedCipher { field, error } => {
                        assert_eq!(field, "segments.0.encryption");
                        assert!(error.to_string().contains("plain64"), "{error}");
                    }
                    e => panic!("{spec}: {e}"),
                }
            }
        }
    }
}

type Rule = (&'static str, Box<dyn Fn(&mut Value)>, fn(&Error) -> bool);

/// The rules of cryptsetup 2.6.1's header validation on ids and on how
/// keyslots, digests and segments are bound (each one checked against
/// cryptsetup itself by the CLI's interop tests).
fn cryptsetup_binding_rules() -> Vec<Rule> {
    let layout = |want: &'static str| move |e: &Error| matches!(e, Error::Layout { problem, .. } if problem.contains(want));
    let _ = layout;
    vec![
        (
            "keyslot id with a leading zero",
            Box::new(|v| {
                let k = v["keyslots"]["0"].take();
                v["keyslots"] = json!({ "00": k });
            }),
            |e| matches!(e, Error::Schema { field, .. } if field == "keyslots.00"),
        ),
        (
            "segment id with a leading zero",
            Box::new(|v| {
                let s = v["segments"]["0"].take();
                v["segments"] = json!({ "00": s });
            }),
            |e| matches!(e, Error::Schema { field, .. } if field == "segments.00"),
        ),
        (
            "digest id with a leading zero",
            Box::new(|v| {
                let d = v["digests"]["0"].take();
                v["digests"] = json!({ "00": d });
            }),
            |e| matches!(e, Error::Schema { field, .. } if field == "digests.00"),
        ),
        (
            "keyslot reference with a leading zero",
            Box::new(|v| v["digests"]["0"]["keyslots"] = json!(["00"])),
            |e| matches!(e, Error::Schema { field, .. } if field == "digests.0.keyslots"),
        ),
        (
            "segment reference with a leading zero",
            Box::new(|v| v["digests"]["0"]["segments"] = json!(["00"])),
            |e| matches!(e, Error::Schema { field, .. } if field == "digests.0.segments"),
        ),
        (
            "a keyslot in two digests",
            Box::new(|v| v["digests"]["1"] = v["digests"]["0"].clone()),
            |e| matches!(e, Error::Layout { problem, .. } if problem.contains("listed by 2 digests [0, 1]")),
        ),
        (
            "a keyslot in no digest",
            Box::new(|v| v["digests"]["0"]["keyslots"] = json!([])),
            |e| matches!(e, Error::Layout { problem, .. } if problem.contains("listed by 0 digests")),
        ),
        (
            "a segment in no digest",
            Box::new(|v| v["digests"]["0"]["segments"] = json!([])),
            |e| matches!(e, Error::Layout { field, .. } if field == "segments.0"),
        ),
        (
            "the only segment a backup",
            Box::new(|v| v["segments"]["0"]["flags"] = json!(["backup-previous"])),
            |e| matches!(e, Error::Layout { problem, .. } if problem.starts_with("no regular segment")),
        ),
        (
            "a gap before the first segment",
            Box::new(|v| {
                let s = v["segments"]["0"].take();
                v["segments"] = json!({ "1": s });
                v["digests"]["0"]["segments"] = json!(["1"]);
            }),
            |e| matches!(e, Error::Layout { problem, .. } if problem.starts_with("no segment 0 before segment 1")),
        ),
        (
            "a backup segment before a regular one",
            Box::new(|v| {
                let mut s = v["segments"]["0"].clone();
                s["offset"] = json!("2097152");
                v["segments"]["0"]["flags"] = json!(["backup-final"]);
                v["segments"]["0"]["size"] = json!("4096");
                v["segments"]["1"] = s;
                v["digests"]["0"]["segments"] = json!(["0", "1"]);
            }),
            |e| matches!(e, Error::Layout { problem, .. } if problem.starts_with("no regular segment")),
        ),
        (
            "a regular segment after a backup one",
            Box::new(|v| {
                let mut s = v["segments"]["0"].clone();
                s["size"] = json!("4096");
                let mut b = s.clone();
                b["flags"] = json!(["backup-previous"]);
                v["segments"]["0"] = s.clone();
                v["segments"]["1"] = b;
                v["segments"]["2"] = s;
                v["digests"]["0"]["segments"] = json!(["0", "1", "2"]);
            }),
            |e| matches!(e, Error::Layout { problem, .. } if problem.contains("regular segment 2 comes after backup segment 1")),
        ),
    ]
}
