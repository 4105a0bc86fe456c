//! `check`: the hostile header shapes a careful opener must refuse, each
//! written into an otherwise valid image, and the policy comparisons. The
//! honest images of cryptsetup are checked in the tool's tests
//! (`mdu luks check`).

use mdu_luks2::check::{self, Kind, Policy};
use mdu_luks2::{Error, FormatParams, Hash, Image, KdfParams, format, header_checksum};
use serde_json::{Value, json};

const HDR: usize = 16384;

fn image() -> Vec<u8> {
    let params = FormatParams {
        kdf: KdfParams::Pbkdf2 {
            hash: Hash::Sha256,
            iterations: 1000,
        },
        digest_iterations: 1000,
        data_offset: 1 << 20,
        ..FormatParams::default()
    };
    let key: Vec<u8> = (0..64u8).map(|i| i ^ 0x11).collect();
    let mut image = format(&params, b"pw", &key, &mut mdu_luks2::os_random).unwrap();
    image.resize((1 << 20) + 64 * 1024, 0);
    image
}

fn json_of(image: &[u8], at: usize) -> Value {
    let area = &image[at + 4096..at + HDR];
    let end = area.iter().position(|&b| b == 0).unwrap();
    serde_json::from_slice(&area[..end]).unwrap()
}

fn put_json(image: &mut [u8], at: usize, v: &Value) {
    let text = v.to_string();
    let area = &mut image[at + 4096..at + HDR];
    area.fill(0);
    area[..text.len()].copy_from_slice(text.as_bytes());
    let sum = header_checksum(&image[at..at + HDR]);
    image[at + 448..at + 512].fill(0);
    image[at + 448..at + 480].copy_from_slice(&sum);
}

/// Applies `f` to the JSON of the copies at `ats` and reseals them.
fn mutate_at(image: &mut [u8], ats: &[usize], f: impl Fn(&mut Value)) {
    for &at in ats {
        let mut v = json_of(image, at);
        f(&mut v);
        put_json(image, at, &v);
    }
}

fn mutate(image: &mut [u8], f: impl Fn(&mut Value)) {
    mutate_at(image, &[0, HDR], f);
}

/// The kinds found, with their fields.
fn found(image: &[u8], policy: Option<&Policy>) -> Vec<(Kind, String)> {
    check::check(image, policy)
        .unwrap()
        .findings
        .into_iter()
        .map(|f| (f.kind, f.field))
        .collect()
}

#[test]
fn an_honest_image_is_clean() {
    let image = image();
    let report = check::check(&image[..], None).unwrap();
    assert!(report.is_clean(), "{:?}", report.findings);
    assert_eq!(check::to_json(&report)["clean"], true);
}

/// The confidential-VM attack shape: the keyslot area and the segment
/// both `cipher_null`, so any passphrase opens the keyslot and the data
/// are written in the clear. Each is a finding, and unlocking fails.
#[test]
fn cipher_null_keyslots_and_segments_are_named() {
    let mut image = image();
    mutate(&mut image, |v| {
        v["keyslots"]["0"]["area"]["encryption"] = json!("cipher_null-ecb");
        v["segments"]["0"]["encryption"] = json!("cipher_null-ecb");
    });
    assert_eq!(
        found(&image, None),
        [
            (
                Kind::NotEncrypting,
                "keyslots.0.area.encryption".to_string()
            ),
            (Kind::NotEncrypting, "segments.0.encryption".to_string()),
        ]
    );
    let img = Image::load(&image[..]).unwrap();
    assert!(img.unlock(&image[..], b"anything").is_err());
    // The segment alone (a header whose keyslot still encrypts).
    let mut image = self::image();
    mutate(&mut image, |v| {
        v["segments"]["0"]["encryption"] = json!("CIPHER_NULL");
    });
    assert_eq!(
        found(&image, None),
        [(Kind::NotEncrypting, "segments.0.encryption".to_string())]
    );
}

#[test]
fn constant_ivs_ecb_and_unknown_ciphers_are_named() {
    for (spec, kind) in [
        ("aes-xts-null", Kind::WeakCipher),
        ("aes-ecb", Kind::WeakCipher),
        ("blowfish-cbc-plain64", Kind::UnknownCipher),
    ] {
        let mut image = image();
        mutate(&mut image, |v| {
            v["segments"]["0"]["encryption"] = json!(spec);
        });
        assert_eq!(
            found(&image, None),
            [(kind, "segments.0.encryption".to_string())],
            "{spec}"
        );
    }
}

/// Two valid copies that disagree: the same seqid with another segment
/// cipher in the secondary; a higher seqid in the secondary with another
/// data offset (the secondary is then the one in use).
#[test]
fn header_copies_that_disagree_are_named() {
    let mut image = image();
    mutate_at(&mut image, &[HDR], |v| {
        v["segments"]["0"]["encryption"] = json!("aes-cbc-essiv:sha256");
    });
    let report = check::check(&image[..], None).unwrap();
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    assert_eq!(report.findings[0].kind, Kind::HeaderCopies);
    assert!(report.findings[0].message.contains("segments.0"));

    let mut image = self::image();
    mutate_at(&mut image, &[HDR], |v| {
        v["segments"]["0"]["offset"] = json!("2097152");
    });
    // seqid: bytes 16..24 of the binary header, big-endian.
    let seqid = u64::from_be_bytes(image[HDR + 16..HDR + 24].try_into().unwrap());
    image[HDR + 16..HDR + 24].copy_from_slice(&(seqid + 1).to_be_bytes());
    let v = json_of(&image, HDR);
    put_json(&mut image, HDR, &v);
    let report = check::check(&image[..], None).unwrap();
    let kinds: Vec<Kind> = report.findings.iter().map(|f| f.kind).collect();
    assert!(kinds.contains(&Kind::HeaderCopies), "{:?}", report.findings);
    let text = &report.findings[0].message;
    assert!(
        text.contains("seqid") && text.contains("segments.0"),
        "{text}"
    );
}

#[test]
fn a_damaged_copy_is_named() {
    let mut image = image();
    image[HDR + 200] ^= 1;
    assert_eq!(
        found(&image, None),
        [(Kind::HeaderCopies, "header".to_string())]
    );
}

/// A second regular segment, a backup segment outside a reencryption, a
/// segment past the end of the image, overlapping segments.
#[test]
fn segment_layouts_a_single_header_cannot_have_are_named() {
    let mut image = image();
    // Two regular segments, one after the other: cryptsetup loads this
    // (and so does mdu), a careful opener should not trust it. (Two that
    // overlap, or a dynamic one before another, are refused when loading,
    // as cryptsetup refuses them: see tests/conformance.rs.)
    mutate(&mut image, |v| {
        let mut s = v["segments"]["0"].clone();
        s["offset"] = json!("1052672");
        v["segments"]["0"]["size"] = json!("4096");
        v["segments"]["1"] = s;
        v["digests"]["0"]["segments"] = json!(["0", "1"]);
    });
    assert_eq!(
        found(&image, None),
        [(Kind::SegmentLayout, "segments".to_string())],
        "two regular segments"
    );

    let mut image = self::image();
    mutate(&mut image, |v| {
        let mut s = v["segments"]["0"].clone();
        s["flags"] = json!(["backup-previous"]);
        s["offset"] = json!("33554432");
        v["segments"]["1"] = s;
        v["digests"]["0"]["segments"] = json!(["0", "1"]);
    });
    assert!(
        found(&image, None).contains(&(Kind::SegmentLayout, "segments.1.flags".to_string())),
        "backup segment"
    );

    let mut image = self::image();
    mutate(&mut image, |v| {
        v["segments"]["0"]["size"] = json!("1073741824");
    });
    assert_eq!(
        found(&image, None),
        [(Kind::SegmentLayout, "segments.0".to_string())],
        "past the end"
    );
}

#[test]
fn unbound_keyslots_are_named_unless_the_policy_allows_them() {
    let mut image = image();
    mutate(&mut image, |v| {
        v["digests"]["0"]["segments"] = json!([]);
        // A segment must stay bound: a second digest binds it, with no
        // keyslot (nothing opens it).
        let mut d = v["digests"]["0"].clone();
        d["keyslots"] = json!([]);
        d["segments"] = json!(["0"]);
        v["digests"]["1"] = d;
    });
    assert_eq!(
        found(&image, None),
        [(Kind::UnboundKeyslot, "keyslots.0".to_string())]
    );
    let allow = Policy::from_json(r#"{"allow_unbound_keyslots": true}"#).unwrap();
    assert!(found(&image, Some(&allow)).is_empty());
}

/// An unfinished reencryption (the 2021 recovery attack's shape) is
/// refused when loading, naming the field: it is never checked as if it
/// were a plain header.
#[test]
fn a_reencryption_in_progress_is_refused() {
    let mut image = image();
    mutate(&mut image, |v| {
        v["config"]["requirements"] = json!({"mandatory": ["online-reencrypt-v2"]});
    });
    match check::check(&image[..], None) {
        Err(Error::NoValidHeader { primary, .. }) => {
            assert!(
                primary.to_string().contains("config.requirements"),
                "{primary}"
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_policy_reports_every_difference() {
    let image = image();
    let p = Policy::from_json(
        r#"{"cipher": "aes-xts-plain64", "key_size": 32, "sector_size": 512,
            "data_offset": 2097152, "data_size": 4096, "max_keyslots": 0,
            "pbkdf2_min_iterations": 100000}"#,
    )
    .unwrap();
    let got = found(&image, Some(&p));
    let fields: Vec<&str> = got.iter().map(|(_, f)| f.as_str()).collect();
    assert!(got.iter().all(|(k, _)| *k == Kind::Policy), "{got:?}");
    assert_eq!(
        fields,
        [
            "keyslots",
            "segments.0.offset",
            "segments.0.size",
            "keyslots.0.key_size",
            "keyslots.0.kdf.iterations"
        ],
        "the cipher and the sector size match: {got:?}"
    );
    let same = Policy::from_json(
        r#"{"cipher": "AES-XTS-PLAIN64", "key_size": 64, "sector_size": 512,
            "data_offset": 1048576, "data_size": "dynamic", "max_keyslots": 1,
            "pbkdf2_min_iterations": 1000}"#,
    )
    .unwrap();
    assert!(found(&image, Some(&same)).is_empty());
}

#[test]
fn a_policy_with_an_unknown_field_or_bad_json_is_refused() {
    assert!(matches!(
        Policy::from_json(r#"{"chiper": "aes-xts-plain64"}"#),
        Err(Error::Schema { .. })
    ));
    assert!(matches!(
        Policy::from_json("{"),
        Err(Error::PolicySyntax { .. })
    ));
    assert!(Policy::from_json(r#"{"key_size": -1}"#).is_err());
    assert!(Policy::from_json(r#"{"data_size": "static"}"#).is_err());
}
