//! The two header copies: the JSON text round trip, a damaged copy falling back
//! to the other, the higher seqid winning, the JSON area and the checksum.

use super::*;

#[test]
fn the_reference_json_text_round_trips_byte_for_byte() {
    let text = include_str!("../data/pbkdf2.json").trim_end();
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
