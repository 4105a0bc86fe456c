//! `format`: what cryptsetup writes, every KDF, the header region, parameters
//! validated before any key derivation, weak volume keys.

use super::*;

#[test]
fn format_writes_what_cryptsetup_writes_modulo_salts() {
    let img = image();
    let text = json_of(&img, 0).to_string();
    let m = Metadata::parse(&text, 16384).unwrap();
    // Same shape as the reference text: replace the random parts.
    let mut reference: Value =
        serde_json::from_str(include_str!("../data/pbkdf2.json").trim_end()).unwrap();
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
