//! Images written by `format`, read back, damaged and rejected: every
//! validation rule has a test that breaks it and names the error it gives.

use mdu_luks2::{
    Argon2Variant, CipherSpec, Direction, Error, FormatParams, Geometry, Hash, HeaderCopy, Image,
    KdfParams, Metadata, SectorCipher, WeakKeys, format, header_checksum, os_random,
};
use serde_json::{Value, json};

const HDR: usize = 16384;

fn cheap(kdf: KdfParams) -> FormatParams {
    FormatParams {
        kdf,
        digest_iterations: 1000,
        data_offset: 1 << 20,
        ..FormatParams::default()
    }
}

fn pbkdf2() -> FormatParams {
    cheap(KdfParams::Pbkdf2 {
        hash: Hash::Sha256,
        iterations: 1000,
    })
}

/// A volume key of `len` bytes from `seed` whose XTS halves differ (a
/// key with equal halves is refused unless allowed: see
/// `a_weak_volume_key_is_refused_unless_allowed`).
fn key_bytes(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| seed ^ i as u8).collect()
}

fn image() -> Vec<u8> {
    format(&pbkdf2(), b"pw", &key_bytes(0x11, 64), &mut os_random).unwrap()
}

/// The JSON text of the copy at `at`.
fn json_of(image: &[u8], at: usize) -> Value {
    let area = &image[at + 4096..at + HDR];
    let end = area.iter().position(|&b| b == 0).unwrap();
    serde_json::from_slice(&area[..end]).unwrap()
}

/// Rewrites the JSON area of the copy at `at` with `text` and reseals it.
fn put_json(image: &mut [u8], at: usize, text: &[u8]) {
    let area = &mut image[at + 4096..at + HDR];
    area.fill(0);
    area[..text.len()].copy_from_slice(text);
    reseal(image, at);
}

fn reseal(image: &mut [u8], at: usize) {
    let sum = header_checksum(&image[at..at + HDR]);
    image[at + 448..at + 512].fill(0);
    image[at + 448..at + 480].copy_from_slice(&sum);
}

/// Applies `f` to the JSON of both copies and reseals them.
fn mutate(image: &mut [u8], f: impl Fn(&mut Value)) {
    for at in [0, HDR] {
        let mut v = json_of(image, at);
        f(&mut v);
        put_json(image, at, v.to_string().as_bytes());
    }
}

fn load_err(image: &[u8]) -> Error {
    match Image::load(image) {
        Ok(_) => panic!("a broken image was accepted"),
        Err(Error::NoValidHeader { primary, .. }) => *primary,
        Err(e) => panic!("expected NoValidHeader, got {e}"),
    }
}

#[test]
fn the_reference_json_text_round_trips_byte_for_byte() {
    let text = include_str!("data/pbkdf2.json").trim_end();
    let m = Metadata::parse(text, 16384).unwrap();
    assert_eq!(m.to_json(), text);
    // The Argon2 form.
    let argon = text.replace(
        r#"{"type":"pbkdf2","hash":"sha256","iterations":1000,"salt":"cxsNmuDuwI9v4cEYubg2hrhHn9xNpENP6CyczMoku3U="}"#,
        r#"{"type":"argon2id","time":4,"memory":32,"cpus":1,"salt":"cxsNmuDuwI9v4cEYubg2hrhHn9xNpENP6CyczMoku3U="}"#,
    );
    assert_ne!(argon, text);
    assert_eq!(Metadata::parse(&argon, 16384).unwrap().to_json(), argon);
}

#[test]
fn format_writes_what_cryptsetup_writes_modulo_salts() {
    let img = image();
    let text = json_of(&img, 0).to_string();
    let m = Metadata::parse(&text, 16384).unwrap();
    // Same shape as the reference text: replace the random parts.
    let mut reference: Value =
        serde_json::from_str(include_str!("data/pbkdf2.json").trim_end()).unwrap();
    let ours: Value = serde_json::from_str(&m.to_json()).unwrap();
    for (path, v) in [
        (
            "/keyslots/0/kdf/salt",
            &ours["keyslots"]["0"]["kdf"]["salt"],
        ),
        ("/digests/0/salt", &ours["digests"]["0"]["salt"]),
        ("/digests/0/digest", &ours["digests"]["0"]["digest"]),
    ] {
        *reference.pointer_mut(path).unwrap() = v.clone();
    }
    // The reference image had 4096-byte sectors and data at 16 MiB.
    reference["segments"]["0"]["sector_size"] = json!(512);
    reference["segments"]["0"]["offset"] = json!("1048576");
    reference["config"]["keyslots_size"] = json!((1048576 - 32768).to_string());
    assert_eq!(ours, reference);
    // The area holds exactly the compact text, then NULs.
    let area = &img[4096..HDR];
    let end = area.iter().position(|&b| b == 0).unwrap();
    assert_eq!(&area[..end], m.to_json().as_bytes());
    assert!(area[end..].iter().all(|&b| b == 0));
    // Both copies: same JSON, own magic and offset, different salts.
    assert_eq!(&img[..6], b"LUKS\xba\xbe");
    assert_eq!(&img[HDR..HDR + 6], b"SKUL\xba\xbe");
    assert_eq!(json_of(&img, 0), json_of(&img, HDR));
    assert_ne!(img[104..168], img[HDR + 104..HDR + 168]);
}

#[test]
fn every_kdf_unlocks_and_a_wrong_passphrase_is_a_typed_error() {
    let kdfs = [
        KdfParams::Pbkdf2 {
            hash: Hash::Sha1,
            iterations: 1000,
        },
        KdfParams::Pbkdf2 {
            hash: Hash::Sha256,
            iterations: 1000,
        },
        KdfParams::Pbkdf2 {
            hash: Hash::Sha512,
            iterations: 1000,
        },
        KdfParams::Argon2 {
            variant: Argon2Variant::Argon2i,
            time: 4,
            memory: 32,
            cpus: 1,
        },
        KdfParams::Argon2 {
            variant: Argon2Variant::Argon2id,
            time: 4,
            memory: 64,
            cpus: 2,
        },
    ];
    for kdf in kdfs {
        for (cipher, key_size) in [("aes-xts-plain64", 64), ("aes-cbc-essiv:sha256", 16)] {
            let p = FormatParams {
                cipher: cipher.parse().unwrap(),
                key_size,
                ..cheap(kdf)
            };
            let vk: Vec<u8> = (0..key_size as u8).collect();
            let img = format(&p, b"secret\n", &vk, &mut os_random).unwrap();
            let loaded = Image::load(&img[..]).unwrap();
            assert_eq!(loaded.copy, HeaderCopy::Primary);
            assert!(loaded.primary_error.is_none() && loaded.secondary_error.is_none());
            let k = loaded.unlock(&img[..], b"secret\n").unwrap();
            assert_eq!(&k.key[..], &vk[..], "{kdf:?} {cipher}");
            // The trailing newline is part of the passphrase.
            let e = loaded.unlock(&img[..], b"secret").unwrap_err();
            assert!(e.is_wrong_passphrase(), "{e}");
        }
    }
}

#[test]
fn a_damaged_primary_falls_back_to_the_secondary_and_says_so() {
    let mut img = image();
    img[4096 + 10] ^= 0x20; // inside the primary's JSON
    let loaded = Image::load(&img[..]).unwrap();
    assert_eq!(loaded.copy, HeaderCopy::Secondary);
    assert!(matches!(
        loaded.primary_error,
        Some(Error::ChecksumMismatch { offset: 0 })
    ));
    assert_eq!(
        &loaded.unlock(&img[..], b"pw").unwrap().key[..],
        &key_bytes(0x11, 64)[..]
    );
    // A wiped primary: the secondary is found by scanning.
    img[..4096].fill(0);
    let loaded = Image::load(&img[..]).unwrap();
    assert_eq!(loaded.copy, HeaderCopy::Secondary);
    assert!(matches!(
        loaded.primary_error,
        Some(Error::BadMagic { offset: 0 })
    ));
}

#[test]
fn a_damaged_secondary_is_reported_and_the_primary_used() {
    let mut img = image();
    img[HDR + 4096 + 3] ^= 1;
    let loaded = Image::load(&img[..]).unwrap();
    assert_eq!(loaded.copy, HeaderCopy::Primary);
    assert!(matches!(
        loaded.secondary_error,
        Some(Error::ChecksumMismatch { offset: 16384 })
    ));
    // Both damaged: no header, both reasons.
    img[4096 + 3] ^= 1;
    match Image::load(&img[..]) {
        Err(Error::NoValidHeader { primary, secondary }) => {
            assert!(matches!(*primary, Error::ChecksumMismatch { offset: 0 }));
            assert!(matches!(
                *secondary,
                Error::ChecksumMismatch { offset: 16384 }
            ));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_copy_with_the_higher_seqid_wins() {
    let mut img = image();
    img[HDR + 16..HDR + 24].copy_from_slice(&5u64.to_be_bytes());
    reseal(&mut img, HDR);
    let loaded = Image::load(&img[..]).unwrap();
    assert_eq!(
        (loaded.copy, loaded.header.seqid),
        (HeaderCopy::Secondary, 5)
    );
}

#[test]
fn the_json_area_must_be_json_then_nul_bytes() {
    let mut img = image();
    let mut v = json_of(&img, 0).to_string().into_bytes();
    v.extend_from_slice(b"\0x");
    put_json(&mut img, 0, &v);
    img[HDR..2 * HDR].fill(0);
    assert!(matches!(load_err(&img), Error::JsonArea { offset: 0, .. }));
    put_json(&mut img, 0, b" {}");
    assert!(matches!(load_err(&img), Error::JsonArea { .. }));
    put_json(&mut img, 0, b"{\"keyslots\":");
    assert!(matches!(load_err(&img), Error::JsonSyntax { .. }));
    let mut full = vec![b' '; HDR - 4096];
    full[0] = b'{';
    put_json(&mut img, 0, &full);
    assert!(matches!(load_err(&img), Error::JsonArea { .. }));
}

#[test]
fn a_bad_checksum_is_never_accepted() {
    let img = image();
    for at in [0usize, 7, 200, 448, 479, 4096, 5000, HDR - 1] {
        let mut bad = img.clone();
        bad[at] ^= 0x80;
        bad[HDR + at] ^= 0x80;
        let e = Image::load(&bad[..]).unwrap_err();
        assert!(matches!(e, Error::NoValidHeader { .. }), "byte {at}: {e}");
    }
}

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
            "area too small",
            Box::new(|v| v["keyslots"]["0"]["area"]["size"] = json!("4096")),
            |e| matches!(e, Error::Layout { field, .. } if field == "keyslots.0.area.size"),
        ),
        (
            "area unaligned",
            Box::new(|v| v["keyslots"]["0"]["area"]["offset"] = json!("32769")),
            |e| matches!(e, Error::Layout { field, .. } if field == "keyslots.0.area.offset"),
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
            "zero key size",
            Box::new(|v| v["keyslots"]["0"]["key_size"] = json!(0)),
            |e| matches!(e, Error::Layout { field, .. } if field == "keyslots.0.key_size"),
        ),
        (
            "stripes not an integer",
            Box::new(|v| v["keyslots"]["0"]["af"]["stripes"] = json!("4000")),
            |e| matches!(e, Error::Schema { field, .. } if field == "keyslots.0.af.stripes"),
        ),
        (
            "Argon2 memory above the maximum",
            Box::new(
                |v| v["keyslots"]["0"]["kdf"] = json!({"type":"argon2id","time":4,"memory":4194305,"cpus":1,"salt":"AAAAAAAAAAA="}),
            ),
            |e| matches!(e, Error::Layout { field, .. } if field == "keyslots.0.kdf.memory"),
        ),
        (
            "zero iterations",
            Box::new(|v| v["keyslots"]["0"]["kdf"]["iterations"] = json!(0)),
            |e| matches!(e, Error::Layout { field, .. } if field == "keyslots.0.kdf.iterations"),
        ),
        (
            "segment offset not a multiple of the sector size",
            Box::new(|v| {
                v["segments"]["0"]["sector_size"] = json!(4096);
                v["segments"]["0"]["offset"] = json!("1049088");
            }),
            |e| matches!(e, Error::Layout { field, .. } if field == "segments.0.offset"),
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
            "short digest",
            Box::new(|v| v["digests"]["0"]["digest"] = json!("AAAAAAAAAAAAAAAAAAAAAAAAAA==")),
            |e| matches!(e, Error::Layout { field, .. } if field == "digests.0.digest"),
        ),
        (
            "bad base64",
            Box::new(|v| v["digests"]["0"]["salt"] = json!("not base64!")),
            |e| matches!(e, Error::Schema { field, .. } if field == "digests.0.salt"),
        ),
        (
            "unknown keyslot type",
            Box::new(|v| v["keyslots"]["0"]["type"] = json!("luks1")),
            |e| matches!(e, Error::Unsupported { field, .. } if field == "keyslots.0.type"),
        ),
        (
            "unknown hash",
            Box::new(|v| v["keyslots"]["0"]["af"]["hash"] = json!("whirlpool")),
            |e| matches!(e, Error::Unsupported { field, .. } if field == "keyslots.0.af.hash"),
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
            "integrity segment",
            Box::new(|v| v["segments"]["0"]["integrity"] = json!({"type":"hmac(sha256)"})),
            |e| matches!(e, Error::Unsupported { field, .. } if field == "segments.0.integrity"),
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

/// Makes keyslot 0 unbound: its digest moves to a new digest 1 bound to
/// no segment, and digest 0 keeps segment 0 with no keyslot.
fn unbind_keyslot_0(v: &mut Value) {
    let mut d = v["digests"]["0"].clone();
    d["segments"] = json!([]);
    v["digests"]["1"] = d;
    v["digests"]["0"]["keyslots"] = json!([]);
}

#[test]
fn only_a_keyslot_bound_to_the_data_segment_unlocks_it() {
    let mut img = image();
    mutate(&mut img, unbind_keyslot_0);
    let loaded = Image::load(&img[..]).unwrap();
    assert!(loaded.metadata.keyslot_is_unbound(0));
    // The passphrase is right and the key matches digest 1, but digest 1
    // is bound to no segment: nothing to decrypt with it.
    let e = loaded.unlock(&img[..], b"pw").unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnboundKeyslot {
                slot: 0,
                segment: 0
            }
        ),
        "{e:?}"
    );
    assert!(e.is_wrong_passphrase());
    assert_eq!(
        e.to_string(),
        "the passphrase opens only unbound keyslot 0, which holds no volume key of segment 0"
    );
    let e = loaded.unlock_slot(&img[..], 0, b"pw").unwrap_err();
    assert!(
        matches!(
            e,
            Error::KeyslotNotBound {
                slot: 0,
                segment: 0
            }
        ),
        "{e:?}"
    );
    // No keyslot is bound to segment 0 at all.
    assert!(matches!(
        loaded.unlock(&img[..], b"nope"),
        Err(Error::NoKeyslot)
    ));
    // Asked for by name, the unbound key opens, with no segment.
    let k = loaded.unlock_unbound(&img[..], 0, b"pw").unwrap();
    assert_eq!((k.slot, k.digest, k.segment), (0, 1, None));
    assert_eq!(&k.key[..], &key_bytes(0x11, 64)[..]);
    assert!(
        loaded
            .unlock_unbound(&img[..], 0, b"nope")
            .unwrap_err()
            .is_wrong_passphrase()
    );
    // A bound keyslot holds no unbound key.
    let fresh = image();
    let loaded = Image::load(&fresh[..]).unwrap();
    assert!(matches!(
        loaded.unlock_unbound(&fresh[..], 0, b"pw"),
        Err(Error::NotUnbound { slot: 0 })
    ));
    assert!(matches!(
        loaded.unlock_unbound(&fresh[..], 5, b"pw"),
        Err(Error::NoSuchKeyslot { slot: 5 })
    ));
}

#[test]
fn af_stripes_is_not_consulted_as_in_cryptsetup() {
    for stripes in [json!(0), json!(1), json!(3999), json!(10000), json!(-5)] {
        let mut img = image();
        mutate(&mut img, |v| {
            v["keyslots"]["0"]["af"]["stripes"] = stripes.clone()
        });
        let loaded = Image::load(&img[..]).unwrap();
        assert_eq!(json!(loaded.metadata.keyslots[&0].af_stripes), stripes);
        let k = loaded.unlock(&img[..], b"pw").unwrap();
        assert_eq!(&k.key[..], &key_bytes(0x11, 64)[..], "stripes {stripes}");
    }
}

#[test]
fn keyslots_of_an_unknown_priority_are_tried_only_by_name() {
    for (prio, want) in [
        (0i64, "keyslot 0 has priority 0 (ignore)"),
        (3, "keyslot 0 has priority 3, which cryptsetup never tries"),
        (
            -1,
            "keyslot 0 has priority -1, which cryptsetup never tries",
        ),
    ] {
        let mut img = image();
        mutate(&mut img, |v| v["keyslots"]["0"]["priority"] = json!(prio));
        let loaded = Image::load(&img[..]).unwrap();
        let e = loaded.unlock(&img[..], b"pw").unwrap_err();
        assert!(
            matches!(&e, Error::NoUsableKeyslot { segment: 0, why } if why.contains(want)),
            "{prio}: {e}"
        );
        let k = loaded.unlock_slot(&img[..], 0, b"pw").unwrap();
        assert_eq!(&k.key[..], &key_bytes(0x11, 64)[..]);
    }
    let mut img = image();
    mutate(&mut img, |v| v["keyslots"]["0"]["priority"] = json!(2));
    let loaded = Image::load(&img[..]).unwrap();
    assert_eq!(loaded.unlock(&img[..], b"pw").unwrap().slot, 0);
}

#[test]
fn backup_segments_are_never_the_data_segment() {
    let mut img = image();
    img.resize((1 << 20) + 8192, 0);
    mutate(&mut img, |v| {
        let mut b = v["segments"]["0"].clone();
        b["flags"] = json!(["backup-previous"]);
        b["size"] = json!("4096");
        v["segments"]["1"] = b;
        v["digests"]["0"]["segments"] = json!(["0", "1"]);
    });
    let loaded = Image::load(&img[..]).unwrap();
    assert!(loaded.metadata.segments[&1].is_backup());
    let (id, seg) = loaded.segment().unwrap();
    assert_eq!((id, seg.size), (0, None));
    assert_eq!(loaded.unlock(&img[..], b"pw").unwrap().segment, Some(0));
    // The flags survive a round trip.
    let again = Metadata::parse(&loaded.metadata.to_json(), 16384).unwrap();
    assert_eq!(again, loaded.metadata);
}

#[test]
fn a_segment_bound_to_two_digests_opens_with_no_passphrase() {
    let mut img = image();
    mutate(&mut img, |v| {
        unbind_keyslot_0(v);
        v["digests"]["1"]["segments"] = json!(["0"]);
    });
    let loaded = Image::load(&img[..]).unwrap();
    let e = loaded.unlock(&img[..], b"pw").unwrap_err();
    assert!(
        matches!(&e, Error::Layout { problem, .. } if problem.starts_with("segment 0 is bound to 2 digests [0, 1]")),
        "{e}"
    );
}

#[test]
fn format_returns_the_header_region_whatever_the_data_offset() {
    for (offset, len) in [
        (1u64 << 20, 1usize << 20),
        (16 << 20, 16 << 20),
        (1 << 49, 2 * HDR + (128 << 20)),
    ] {
        let p = FormatParams {
            data_offset: offset,
            ..pbkdf2()
        };
        let img = format(&p, b"pw", &key_bytes(0x11, 64), &mut os_random).unwrap();
        assert_eq!(img.len(), len, "data offset {offset}");
        assert_eq!(p.header_region_len(), len as u64);
        // The header is valid for an image that reaches the data offset.
        let m = Image::load(&img[..]).unwrap().metadata;
        assert_eq!(m.segments[&0].offset, offset);
    }
}

#[test]
fn format_params_are_validated_before_any_key_derivation() {
    // An Argon2 cost that would take minutes: validate must refuse the
    // other parameter at once, and format must not derive first.
    let slow = FormatParams {
        kdf: KdfParams::Argon2 {
            variant: Argon2Variant::Argon2id,
            time: 1000,
            memory: 1 << 20,
            cpus: 1,
        },
        ..pbkdf2()
    };
    let cases: Vec<(FormatParams, &str)> = vec![
        (
            FormatParams {
                data_offset: 1 << 63,
                ..slow.clone()
            },
            "beyond",
        ),
        (
            FormatParams {
                data_offset: u64::MAX - 4095,
                ..slow.clone()
            },
            "beyond",
        ),
        (
            FormatParams {
                data_offset: 65536,
                ..slow.clone()
            },
            "keyslot 0 needs",
        ),
        (
            FormatParams {
                data_offset: 12288 + (1 << 20),
                sector_size: 8192,
                ..slow.clone()
            },
            "sector size 8192",
        ),
        (
            FormatParams {
                key_size: 48,
                ..slow.clone()
            },
            "key",
        ),
        (
            FormatParams {
                label: "l".repeat(48),
                ..slow.clone()
            },
            "label",
        ),
        (
            FormatParams {
                subsystem: "a\0b".into(),
                ..slow.clone()
            },
            "subsystem",
        ),
        (
            FormatParams {
                uuid: Some("1234".into()),
                ..slow.clone()
            },
            "UUID",
        ),
        (
            FormatParams {
                digest_iterations: 10,
                ..slow.clone()
            },
            "digest",
        ),
        (
            FormatParams {
                kdf: KdfParams::Argon2 {
                    variant: Argon2Variant::Argon2i,
                    time: 4,
                    memory: 16,
                    cpus: 1,
                },
                ..slow.clone()
            },
            "Argon2",
        ),
        (
            FormatParams {
                kdf: KdfParams::Argon2 {
                    variant: Argon2Variant::Argon2i,
                    time: 4,
                    memory: 64,
                    cpus: 0,
                },
                ..slow.clone()
            },
            "Argon2",
        ),
    ];
    for (p, want) in cases {
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains(want), "{p:?}: {e}");
        let start = std::time::Instant::now();
        let e = format(&p, b"pw", &key_bytes(0x11, p.key_size), &mut os_random).unwrap_err();
        assert!(e.to_string().contains(want), "{e}");
        // Not a timing assertion: a derivation would take minutes.
        let _ = start;
    }
    assert!(slow.validate().is_ok());
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
fn format_refuses_bad_parameters() {
    let base = pbkdf2();
    let vk = key_bytes(1, 64);
    let cases = [
        FormatParams {
            sector_size: 768,
            ..base.clone()
        },
        FormatParams {
            data_offset: 65536,
            ..base.clone()
        },
        FormatParams {
            uuid: Some("not-a-uuid".into()),
            ..base.clone()
        },
        FormatParams {
            label: "x".repeat(48),
            ..base.clone()
        },
        FormatParams {
            hdr_size: 20000,
            ..base.clone()
        },
        FormatParams {
            kdf: KdfParams::Pbkdf2 {
                hash: Hash::Sha256,
                iterations: 999,
            },
            ..base.clone()
        },
        FormatParams {
            key_size: 16,
            ..base.clone()
        },
    ];
    for p in cases {
        assert!(format(&p, b"pw", &vk, &mut os_random).is_err(), "{p:?}");
    }
    assert!(format(&base, b"pw", &vk[..32], &mut os_random).is_err());
    // Label, UUID and a 64 KiB header survive a round trip.
    let p = FormatParams {
        uuid: Some("0F6B4C6A-1111-4222-8333-444455556666".into()),
        label: "my label".into(),
        subsystem: "sub".into(),
        hdr_size: 65536,
        ..base
    };
    let img = format(&p, b"pw", &vk, &mut os_random).unwrap();
    let loaded = Image::load(&img[..]).unwrap();
    assert_eq!(loaded.header.uuid, "0f6b4c6a-1111-4222-8333-444455556666");
    assert_eq!(loaded.header.label, "my label");
    assert_eq!(loaded.header.subsystem, "sub");
    assert_eq!(loaded.hdr_size(), 65536);
    assert_eq!(loaded.metadata.keyslots[&0].area.offset, 131072);
}

#[test]
fn a_valid_primary_is_never_passed_over_for_a_header_elsewhere() {
    // Image A (16 KiB headers) with its secondary wiped and, where its
    // keyslots area starts (32 KiB), the secondary of image B (32 KiB
    // headers) with a higher seqid: the 32 KiB offset is keyslot material
    // of A, not a header of A.
    let a = image();
    let b = format(
        &FormatParams {
            hdr_size: 32768,
            ..pbkdf2()
        },
        b"other",
        &key_bytes(0x22, 64),
        &mut os_random,
    )
    .unwrap();
    let mut mixed = a.clone();
    mixed[HDR..2 * HDR].fill(0);
    mixed[32768..65536].copy_from_slice(&b[32768..65536]);
    mixed[32768 + 16..32768 + 24].copy_from_slice(&9u64.to_be_bytes());
    let sum = header_checksum(&mixed[32768..65536]);
    mixed[32768 + 448..32768 + 480].copy_from_slice(&sum);
    let loaded = Image::load(&mixed[..]).unwrap();
    assert_eq!(loaded.copy, HeaderCopy::Primary);
    assert_eq!(loaded.header.uuid, Image::load(&a[..]).unwrap().header.uuid);
    assert!(matches!(
        loaded.secondary_error,
        Some(Error::BadMagic { offset: 16384 })
    ));
    // With A's primary damaged too, the scan finds B's copy: the image is
    // then B's, as a reader with nothing else to go on must take it.
    mixed[4096 + 1] ^= 1;
    let loaded = Image::load(&mixed[..]).unwrap();
    assert_eq!(
        (loaded.copy, loaded.hdr_size()),
        (HeaderCopy::Secondary, 32768)
    );
}

#[test]
fn a_weak_volume_key_is_refused_unless_allowed() {
    // Equal XTS halves: format refuses the key unless allowed, and an
    // image holding one (cryptsetup writes them) opens, but its segment
    // cipher is refused unless allowed.
    let weak = [0x11u8; 64];
    let e = format(&pbkdf2(), b"pw", &weak, &mut os_random).unwrap_err();
    assert!(matches!(e, Error::Cipher(ref c) if c.is_weak_key()), "{e}");
    let p = FormatParams {
        weak_keys: WeakKeys::Allow,
        ..pbkdf2()
    };
    let mut img = format(&p, b"pw", &weak, &mut os_random).unwrap();
    img.resize((1 << 20) + 1024, 0);
    let loaded = Image::load(&img[..]).unwrap();
    let key = loaded.unlock(&img[..], b"pw").unwrap();
    assert_eq!(&key.key[..], &weak[..]);
    let e = loaded.segment_cipher(&key, WeakKeys::Refuse).unwrap_err();
    assert!(e.to_string().contains("halves"), "{e}");
    let c = loaded.segment_cipher(&key, WeakKeys::Allow).unwrap();
    let mut a = vec![3u8; 1024];
    c.crypt(Direction::Encrypt, 0, &mut a).unwrap();
    // The same bytes as dm-crypt's cipher built directly.
    let direct = SectorCipher::new(
        p.cipher,
        &weak,
        Geometry::new(512, 0, false).unwrap(),
        WeakKeys::Allow,
    )
    .unwrap();
    let mut b = vec![3u8; 1024];
    direct.crypt(Direction::Encrypt, 0, &mut b).unwrap();
    assert_eq!(a, b);
}

#[test]
fn an_unsupported_cipher_loads_dumps_and_fails_where_it_is_used() {
    // As cryptsetup: the header loads (and re-serialises byte for byte);
    // the keyslot or segment that names the spec fails when it is used,
    // with a typed error naming the field and what is supported.
    for (field, spec) in [
        ("keyslot", "serpent-xts-plain64"),
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
