//! Reencryption records: cryptsetup 2.6.1's in-progress headers read and
//! written back byte for byte, their digests recomputed, and hostile
//! records refused.

use mdu_luks2::{Error, Image, Metadata, ReencryptMode, Resilience, SegmentKind, reencrypt};

const RECORDS: [(&str, &str); 5] = [
    (
        "encrypt-datashift",
        include_str!("data/reencrypt-encrypt-datashift.json"),
    ),
    (
        "encrypt-detached",
        include_str!("data/reencrypt-encrypt-detached.json"),
    ),
    (
        "decrypt-detached",
        include_str!("data/reencrypt-decrypt-detached.json"),
    ),
    (
        "decrypt-moved",
        include_str!("data/reencrypt-decrypt-moved.json"),
    ),
    ("keychange", include_str!("data/reencrypt-keychange.json")),
];

#[test]
fn cryptsetup_records_parse_and_write_back_byte_for_byte() {
    for (name, text) in RECORDS {
        let m = Metadata::parse(text, 16384).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.to_json(), text.trim_end(), "{name}");
        let r = m.reencrypt.as_ref().expect("a reencrypt keyslot");
        assert!(m.config.reencrypt_requirement().is_some(), "{name}");
        match name {
            "keychange" => {
                assert_eq!(r.mode, ReencryptMode::Reencrypt);
                assert_eq!(m.keyslots.len(), 2);
            }
            "decrypt-detached" => {
                assert_eq!(r.mode, ReencryptMode::Decrypt);
                assert_eq!(m.segments[&1].kind, SegmentKind::Linear);
            }
            "encrypt-datashift" => {
                assert_eq!(r.area.resilience, Resilience::Datashift { shift: 4 << 20 })
            }
            _ => {}
        }
    }
}

#[test]
fn the_record_digest_is_cryptsetups() {
    // The volume key of the encrypt-datashift run was 0x40..0x7f.
    let key: Vec<u8> = (0x40..0x80).collect();
    let (_, text) = RECORDS[0];
    let m = Metadata::parse(text, 16384).unwrap();
    reencrypt::verify_digest(&m, None, Some(&key)).unwrap();
    // Any change of what the digest covers is refused.
    let mut bad = m.clone();
    bad.reencrypt.as_mut().unwrap().area.size += 512;
    assert!(matches!(
        reencrypt::verify_digest(&bad, None, Some(&key)),
        Err(Error::ReencryptDigest { .. })
    ));
    let mut bad = m.clone();
    let (_, fin) = bad
        .segments
        .iter_mut()
        .find(|(_, s)| s.has_flag("backup-final"))
        .unwrap();
    fin.encryption = mdu_luks2::Encryption::parse("cipher_null-ecb");
    assert!(reencrypt::verify_digest(&bad, None, Some(&key)).is_err());
    let mut other = key.clone();
    other[0] ^= 1;
    assert!(reencrypt::verify_digest(&m, None, Some(&other)).is_err());
}

#[test]
fn a_record_without_its_requirement_or_twice_is_refused() {
    let (_, text) = RECORDS[4];
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v["config"].as_object_mut().unwrap().remove("requirements");
    let err = Metadata::from_value(&v)
        .unwrap()
        .validate(16384, None)
        .unwrap_err();
    assert!(err.to_string().contains("requirement"), "{err}");
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v["keyslots"]["3"] = v["keyslots"]["2"].clone();
    assert!(Metadata::from_value(&v).is_err());
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v["keyslots"]["2"]["key_size"] = 64.into();
    assert!(Metadata::from_value(&v).is_err());
    // A reencrypt area over keyslot 1's.
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v["keyslots"]["2"]["area"]["offset"] = "290816".into();
    let m = Metadata::from_value(&v).unwrap();
    assert!(matches!(
        m.validate(16384, None),
        Err(Error::KeyslotAreasOverlap { .. })
    ));
}

#[test]
fn a_volume_in_reencryption_does_not_open() {
    let (_, text) = RECORDS[4];
    let m = Metadata::parse(text, 16384).unwrap();
    let image = image_with(&m, 32 << 20);
    let img = Image::load(&image[..]).unwrap();
    let err = img.unlock(&image[..], b"pw").unwrap_err();
    assert!(matches!(err, Error::Requirements { .. }), "{err}");
    assert!(err.to_string().contains("reencryption is in progress"));
}

/// An image of `len` bytes whose two header copies hold `m`.
fn image_with(m: &Metadata, len: usize) -> Vec<u8> {
    let mut image = vec![0u8; len];
    let json = m.to_json();
    for (at, secondary) in [(0usize, false), (16384, true)] {
        let mut h = mdu_luks2::BinaryHeader::new(16384, "12345678-1234-4234-8234-123456789abc");
        h.secondary = secondary;
        h.hdr_offset = at as u64;
        let copy = &mut image[at..at + 16384];
        copy[..4096].copy_from_slice(&h.to_bytes().unwrap());
        copy[4096..4096 + json.len()].copy_from_slice(json.as_bytes());
        let sum = mdu_luks2::header_checksum(copy);
        copy[448..480].copy_from_slice(&sum);
    }
    image
}
