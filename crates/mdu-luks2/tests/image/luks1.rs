//! LUKS1 images: every cipher and hash mdu formats opens again and
//! decrypts its data; hostile headers are refused with the error naming
//! the field; key slots added and killed. (cryptsetup's own images and its
//! checks of mdu's are in the tool's tests.)

use std::fs::OpenOptions;

use mdu_luks2::luks1::{self, FormatParams as Luks1Params, Header, add_keyslot, kill_keyslot};

use super::*;

fn params(cipher: &str, key_size: usize, hash: Hash) -> Luks1Params {
    Luks1Params {
        cipher: CipherSpec::parse(cipher).unwrap(),
        key_size,
        hash,
        iterations: 1000,
        digest_iterations: 1000,
        ..Luks1Params::default()
    }
}

/// A LUKS1 image of an AES-XTS-256 key with 8 KiB of data after the header.
fn luks1_image() -> (Vec<u8>, Vec<u8>) {
    let key = key_bytes(0x5a, 64);
    let mut image = luks1::format(
        &params("aes-xts-plain64", 64, Hash::Sha256),
        b"pw",
        &key,
        &mut os_random,
    )
    .unwrap();
    image.resize(image.len() + 8192, 0x77);
    (image, key)
}

fn put32(image: &mut [u8], at: usize, v: u32) {
    image[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

const SLOT: usize = 208;

#[test]
fn every_cipher_and_hash_formats_opens_and_decrypts_its_data() {
    // Serpent and Twofish: cryptsetup cannot format these without
    // device-mapper, so they are checked by mdu's own round trip (their
    // ciphers are checked against the kernel's vectors in mdu-dmcrypt).
    let ciphers = [
        ("aes-xts-plain64", 64),
        ("aes-xts-plain64", 32),
        ("aes-cbc-essiv:sha256", 32),
        ("aes-cbc-plain", 16),
        ("serpent-xts-plain64", 64),
        ("twofish-xts-plain64", 32),
        ("serpent-cbc-essiv:sha256", 32),
        ("twofish-cbc-plain64", 16),
    ];
    for (i, (cipher, key_size)) in ciphers.into_iter().enumerate() {
        let hash = Hash::ALL[i % Hash::ALL.len()];
        let what = format!("{cipher} {key_size} bytes {hash}");
        let key = key_bytes(i as u8, key_size);
        let mut image = luks1::format(
            &params(cipher, key_size, hash),
            b"secret",
            &key,
            &mut os_random,
        )
        .unwrap();
        let plain: Vec<u8> = (0..4096u32).map(|n| (n * 7 + i as u32) as u8).collect();
        let spec = CipherSpec::parse(cipher).unwrap();
        let mut ct = plain.clone();
        SectorCipher::new(
            spec,
            &key,
            Geometry::new(512, 0, false).unwrap(),
            WeakKeys::Refuse,
        )
        .unwrap()
        .crypt(Direction::Encrypt, 0, &mut ct)
        .unwrap();
        image.extend_from_slice(&ct);

        let hdr = Header::load(&image[..]).unwrap();
        assert_eq!(hdr.hash, hash, "{what}");
        assert_eq!(hdr.cipher_spec().unwrap().to_string(), cipher, "{what}");
        let vk = hdr.unlock(&image[..], b"secret").unwrap();
        assert_eq!((&vk.key[..], vk.slot), (&key[..], 0), "{what}");
        assert!(
            hdr.unlock(&image[..], b"secreT")
                .unwrap_err()
                .is_wrong_passphrase(),
            "{what}"
        );
        let (offset, len) = hdr.data_range(image.len() as u64).unwrap();
        assert_eq!(len, 4096, "{what}");
        let mut data = image[offset as usize..].to_vec();
        hdr.data_cipher(&vk, WeakKeys::Refuse)
            .unwrap()
            .crypt(Direction::Decrypt, 0, &mut data)
            .unwrap();
        assert_eq!(data, plain, "{what}");
        // The header is written back byte for byte.
        assert_eq!(&hdr.to_bytes().unwrap()[..], &image[..1024], "{what}");
    }
}

#[test]
fn a_mode_mdu_does_not_run_loads_and_is_refused_as_unsupported_not_as_a_wrong_passphrase() {
    for (name, mode) in [
        ("aes", "lrw-plain64"),
        ("aes", "xts-essiv:wp256"),
        ("cipher_null", "ecb"),
    ] {
        let (mut image, _) = luks1_image();
        image[8..72].fill(0);
        image[8..8 + name.len()].copy_from_slice(name.as_bytes());
        image[40..40 + mode.len()].copy_from_slice(mode.as_bytes());
        let hdr = Header::load(&image[..]).unwrap();
        assert!(luks1::dump_text(std::path::Path::new("x"), &hdr).contains(mode));
        for e in [
            hdr.unlock(&image[..], b"pw").unwrap_err(),
            hdr.unlock(&image[..], b"wrong").unwrap_err(),
            hdr.unlock_slot(&image[..], 0, b"pw").unwrap_err(),
        ] {
            assert!(
                matches!(e, Error::UnsupportedCipherMode { .. }),
                "{name}-{mode}: {e}"
            );
            assert!(!e.is_wrong_passphrase());
            assert!(e.to_string().contains("unsupported cipher mode"), "{e}");
        }
    }
}

#[test]
fn hostile_headers_are_refused_naming_the_field() {
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    type Expected = Box<dyn Fn(&Error) -> bool>;
    let field = |f: &'static str| move |e: &Error| matches!(e, Error::Luks1Header { field, .. } if field == f);
    let cases: Vec<(&str, Damage, Expected)> = vec![
        (
            "no magic",
            Box::new(|i| i[0] = b'X'),
            Box::new(|e| matches!(e, Error::BadMagic { offset: 0 })),
        ),
        (
            "version 2",
            Box::new(|i| i[7] = 2),
            Box::new(field("version")),
        ),
        (
            "truncated header",
            Box::new(|i| i.truncate(1000)),
            Box::new(|e| matches!(e, Error::Truncated { .. })),
        ),
        (
            "truncated key material",
            Box::new(|i| i.truncate(8 * 512 + 7 * 512 * 504)),
            Box::new(|e| {
                matches!(
                    e,
                    Error::Truncated {
                        what: "LUKS1 key slot material",
                        ..
                    }
                )
            }),
        ),
        (
            "payload past the image",
            Box::new(|i| put32(i, 104, 1 << 20)),
            Box::new(|e| {
                matches!(
                    e,
                    Error::Truncated {
                        what: "LUKS1 payload",
                        ..
                    }
                )
            }),
        ),
        (
            "invalid slot state",
            Box::new(|i| put32(i, SLOT + 3 * 48, 0x1234_5678)),
            Box::new(field("key slot 3 state")),
        ),
        (
            "material overlapping the next slot",
            Box::new(|i| put32(i, SLOT + 48 + 40, 8 + 400)),
            Box::new(field("key slot 1 key material offset")),
        ),
        (
            "material overlapping the header",
            Box::new(|i| put32(i, SLOT + 40, 1)),
            Box::new(field("key slot 0 key material offset")),
        ),
        (
            "material past the payload",
            Box::new(|i| put32(i, 104, 600)),
            Box::new(field("key slot 1 key material offset")),
        ),
        (
            "3999 stripes",
            Box::new(|i| put32(i, SLOT + 5 * 48 + 44, 3999)),
            Box::new(field("key slot 5 stripes")),
        ),
        (
            "zero iterations",
            Box::new(|i| put32(i, SLOT + 4, 0)),
            Box::new(field("key slot 0 iterations")),
        ),
        (
            "huge iterations",
            Box::new(|i| put32(i, SLOT + 4, u32::MAX)),
            Box::new(field("key slot 0 iterations")),
        ),
        (
            "huge digest iterations",
            Box::new(|i| put32(i, 164, u32::MAX)),
            Box::new(field("mkDigestIterations")),
        ),
        (
            "a zero-length key",
            Box::new(|i| put32(i, 108, 0)),
            Box::new(field("keyBytes")),
        ),
        (
            "a huge key",
            Box::new(|i| put32(i, 108, 1 << 20)),
            Box::new(field("keyBytes")),
        ),
        (
            "an unknown hash",
            Box::new(|i| i[72..75].copy_from_slice(b"md5")),
            Box::new(field("hashSpec")),
        ),
        (
            "a cipher name without NUL",
            Box::new(|i| i[8..40].fill(b'a')),
            Box::new(|e| {
                matches!(
                    e,
                    Error::HeaderText {
                        field: "cipherName",
                        ..
                    }
                )
            }),
        ),
        (
            "a UUID without NUL",
            Box::new(|i| i[168..208].fill(b'1')),
            Box::new(|e| matches!(e, Error::HeaderText { field: "uuid", .. })),
        ),
    ];
    for (what, damage, expected) in cases {
        let (mut image, _) = luks1_image();
        damage(&mut image);
        let e = Header::load(&image[..]).expect_err(what);
        assert!(expected(&e), "{what}: got {e:?}");
        assert!(!e.to_string().is_empty());
    }
    // An enabled slot with huge iterations is refused; a disabled one may
    // hold anything there (cryptsetup zeroes it).
    let (mut image, _) = luks1_image();
    put32(&mut image, SLOT + 2 * 48 + 4, u32::MAX);
    assert!(Header::load(&image[..]).is_ok());
}

#[test]
fn any_damaged_header_byte_gives_a_header_or_an_error_never_a_panic() {
    let (image, _) = luks1_image();
    let mut rng = xorshift(0x1234_5678);
    for at in 0..1024 {
        for v in [0u8, 0xff, rng() as u8] {
            let mut b = [0u8; 1024];
            b.copy_from_slice(&image[..1024]);
            b[at] = v;
            if let Ok(h) = Header::parse(&b) {
                // What parses writes back as it was read (but for the
                // padding, the hash name's case and text after a NUL).
                let back = h.to_bytes().unwrap();
                assert_eq!(Header::parse(&back).unwrap(), h);
            }
        }
    }
}

/// A small xorshift generator (the seed is fixed: the test is exhaustive
/// over positions, the value only varies the third write).
fn xorshift(mut s: u64) -> impl FnMut() -> u64 {
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

#[test]
fn key_slots_are_added_and_killed_in_place() {
    let (image, key) = luks1_image();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("luks1.img");
    std::fs::write(&path, &image).unwrap();
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let hdr = Header::load(&f).unwrap();

    // A wrong volume key, an enabled slot, too few iterations, a slot
    // past 7: refused, nothing written.
    let wrong = key_bytes(0x11, 64);
    for (slot, vk, iters) in [
        (None, &wrong, 1000),
        (Some(0), &key, 1000),
        (None, &key, 999),
        (Some(8), &key, 1000),
    ] {
        assert!(add_keyslot(&f, &hdr, slot, vk, b"new", iters, &mut os_random).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), image);
    }

    let (hdr, slot) = add_keyslot(&f, &hdr, None, &key, b"new", 1000, &mut os_random).unwrap();
    assert_eq!(slot, 1);
    assert_eq!(Header::load(&f).unwrap(), hdr);
    assert_eq!(hdr.unlock(&f, b"new").unwrap().slot, 1);
    assert_eq!(hdr.unlock(&f, b"pw").unwrap().slot, 0);
    let (hdr, slot) = add_keyslot(&f, &hdr, Some(6), &key, b"six", 2000, &mut os_random).unwrap();
    assert_eq!((slot, hdr.slots[6].iterations), (6, 2000));
    assert_eq!(hdr.unlock_slot(&f, 6, b"six").unwrap().slot, 6);

    // Kill slot 0: its passphrase no longer opens, its material is gone,
    // the others still open.
    let (off, len) = (8 * 512, 500 * 512);
    let before = std::fs::read(&path).unwrap()[off..off + len].to_vec();
    let hdr = kill_keyslot(&f, &hdr, 0, &mut os_random).unwrap();
    assert_eq!(Header::load(&f).unwrap(), hdr);
    let s0 = hdr.slots[0];
    assert_eq!((s0.enabled, s0.iterations, s0.salt), (false, 0, [0; 32]));
    assert_ne!(std::fs::read(&path).unwrap()[off..off + len], before[..]);
    assert!(matches!(hdr.unlock(&f, b"pw"), Err(Error::WrongPassphrase)));
    assert!(matches!(
        hdr.unlock_slot(&f, 0, b"pw"),
        Err(Error::NoSuchKeyslot { slot: 0 })
    ));
    assert_eq!(hdr.unlock(&f, b"new").unwrap().slot, 1);
    assert!(matches!(
        kill_keyslot(&f, &hdr, 0, &mut os_random),
        Err(Error::NoSuchKeyslot { slot: 0 })
    ));
    // The data area is never touched.
    assert_eq!(
        std::fs::read(&path).unwrap()[image.len() - 8192..],
        image[image.len() - 8192..]
    );

    // Fill every slot: the ninth is refused.
    let mut hdr = hdr;
    while hdr.slots.iter().any(|s| !s.enabled) {
        hdr = add_keyslot(&f, &hdr, None, &key, b"more", 1000, &mut os_random)
            .unwrap()
            .0;
    }
    let e = add_keyslot(&f, &hdr, None, &key, b"ninth", 1000, &mut os_random).unwrap_err();
    assert!(e.to_string().contains("all 8"), "{e}");
}

#[test]
fn format_parameters_are_checked_before_anything_is_derived() {
    let key = key_bytes(1, 64);
    let bad = [
        Luks1Params {
            iterations: 999,
            ..params("aes-xts-plain64", 64, Hash::Sha1)
        },
        Luks1Params {
            digest_iterations: 10,
            ..params("aes-xts-plain64", 64, Hash::Sha1)
        },
        Luks1Params {
            data_offset: Some(1 << 20),
            ..params("aes-xts-plain64", 64, Hash::Sha1)
        },
        Luks1Params {
            data_offset: Some((4 << 20) + 1),
            ..params("aes-xts-plain64", 64, Hash::Sha1)
        },
        Luks1Params {
            uuid: Some("not-a-uuid".into()),
            ..params("aes-xts-plain64", 64, Hash::Sha1)
        },
        params("aes-xts-plain64", 48, Hash::Sha1),
    ];
    for p in bad {
        assert!(
            luks1::format(&p, b"pw", &key[..p.key_size], &mut os_random).is_err(),
            "{p:?}"
        );
    }
    // Equal XTS halves: refused unless allowed.
    let weak = [3u8; 64];
    assert!(
        luks1::format(
            &params("aes-xts-plain64", 64, Hash::Sha1),
            b"pw",
            &weak,
            &mut os_random
        )
        .is_err()
    );
    let allow = Luks1Params {
        weak_keys: WeakKeys::Allow,
        ..params("aes-xts-plain64", 64, Hash::Sha1)
    };
    assert!(luks1::format(&allow, b"pw", &weak, &mut os_random).is_ok());
    // A given offset and UUID are kept.
    let p = Luks1Params {
        data_offset: Some(8 << 20),
        uuid: Some("0C3FE5C6-8D2E-4A4B-9E59-4E6E9C1F2A3B".into()),
        ..params("aes-xts-plain64", 64, Hash::Sha1)
    };
    let image = luks1::format(&p, b"pw", &key, &mut os_random).unwrap();
    let hdr = Header::load(&image[..]).unwrap();
    assert_eq!(
        (hdr.payload_offset, hdr.uuid.as_str()),
        (16384, "0c3fe5c6-8d2e-4a4b-9e59-4e6e9c1f2a3b")
    );
}

#[test]
fn the_version_is_probed_from_the_magic() {
    let (image, _) = luks1_image();
    assert_eq!(luks1::probe_version(&image[..]).unwrap(), Some(1));
    assert_eq!(luks1::probe_version(&super::image()[..]).unwrap(), Some(2));
    assert_eq!(luks1::probe_version(&[0u8; 4096][..]).unwrap(), None);
    assert_eq!(luks1::probe_version(&image[..5]).unwrap(), None);
    // Image::load names the version it read, and where it is read.
    let e = Image::load(&image[..]).unwrap_err();
    assert!(
        e.to_string()
            .contains("LUKS version 1: it is read as LUKS1"),
        "{e}"
    );
}

#[test]
fn conversion_round_trips_and_refuses_what_luks1_cannot_hold() {
    let (image, key) = luks1_image();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("convert.img");
    std::fs::write(&path, &image).unwrap();
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let hdr = Header::load(&f).unwrap();
    let (hdr, _) = add_keyslot(&f, &hdr, Some(3), &key, b"three", 1000, &mut os_random).unwrap();

    luks1::convert_to_luks2(&f, &hdr).unwrap();
    let img = Image::load(&f).unwrap();
    assert!(img.primary_error.is_none() && img.secondary_error.is_none());
    assert_eq!(img.header.uuid, hdr.uuid);
    assert_eq!(
        img.metadata.keyslots.keys().copied().collect::<Vec<_>>(),
        [0, 3]
    );
    assert_eq!(&img.unlock(&f, b"pw").unwrap().key[..], &key[..]);
    assert_eq!(img.unlock(&f, b"three").unwrap().slot, 3);
    let back = luks1::convert_from_luks2(&f, &img).unwrap();
    assert_eq!(back, hdr);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[..1024], hdr.to_bytes().unwrap()[..]);
    assert!(bytes[1024..4096].iter().all(|&b| b == 0));
    assert_eq!(
        Header::load(&f).unwrap().unlock(&f, b"three").unwrap().slot,
        3
    );
    // The data never moved.
    assert_eq!(bytes[bytes.len() - 8192..], image[image.len() - 8192..]);

    // What LUKS1 cannot hold is refused before anything is written.
    let luks2 = |edit: &dyn Fn(&mut FormatParams)| {
        let mut p = pbkdf2();
        p.data_offset = 2 << 20;
        edit(&mut p);
        let image = format(&p, b"pw", &key_bytes(3, p.key_size), &mut os_random).unwrap();
        Image::load(&image[..]).unwrap()
    };
    assert!(luks1::luks1_header(&luks2(&|_| {})).is_ok());
    for (what, img) in [
        ("4096-byte sectors", luks2(&|p| p.sector_size = 4096)),
        (
            "Argon2",
            luks2(&|p| {
                p.kdf = KdfParams::Argon2 {
                    variant: Argon2Variant::Argon2id,
                    time: 4,
                    memory: 32,
                    cpus: 1,
                }
            }),
        ),
    ] {
        let e = luks1::luks1_header(&img).unwrap_err();
        assert!(matches!(e, Error::Params { .. }), "{what}: {e}");
    }
    let mut img = luks2(&|_| {});
    let ks = img.metadata.keyslots.remove(&0).unwrap();
    img.metadata.keyslots.insert(8, ks);
    img.metadata.digests.get_mut(&0).unwrap().keyslots = vec![8];
    assert!(
        luks1::luks1_header(&img)
            .unwrap_err()
            .to_string()
            .contains("slots 0 to 7")
    );
    let mut img = luks2(&|_| {});
    img.metadata
        .tokens
        .insert("0".into(), json!({"type": "x", "keyslots": []}));
    assert!(
        luks1::luks1_header(&img)
            .unwrap_err()
            .to_string()
            .contains("tokens")
    );
    // A LUKS1 image whose key slots cannot move 28 KiB up.
    let tight = luks1::format(
        &Luks1Params {
            data_offset: Some(4040 * 512),
            ..params("aes-xts-plain64", 64, Hash::Sha256)
        },
        b"pw",
        &key,
        &mut os_random,
    )
    .unwrap();
    let e = luks1::luks2_metadata(&Header::load(&tight[..]).unwrap()).unwrap_err();
    assert!(e.to_string().contains("not enough space"), "{e}");
}
