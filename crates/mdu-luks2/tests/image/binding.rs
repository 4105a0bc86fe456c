//! Which keyslot unlocks which segment: only one bound to it, whatever
//! `af.stripes` says; priorities; backup segments; a segment bound to two
//! digests.

use super::*;

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
