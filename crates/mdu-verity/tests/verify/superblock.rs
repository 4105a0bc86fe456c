//! The superblock: its errors, pinned parameters that must agree with it, an
//! unpinned one choosing the shape, and each of its flipped bits.

use super::*;

#[test]
fn superblock_errors() {
    let good = dmverity::Params {
        salt: vec![1; 32],
        ..Default::default()
    }
    .superblock_for(10)
    .to_bytes();
    dmverity::Superblock::parse(&good).unwrap();
    let with = |f: &dyn Fn(&mut [u8; 512])| {
        let mut b = good;
        f(&mut b);
        dmverity::Superblock::parse(&b).unwrap_err()
    };
    assert!(matches!(with(&|b| b[0] = b'V'), Error::BadSignature));
    assert!(matches!(
        with(&|b| b[8] = 2),
        Error::UnknownVersion { version: 2 }
    ));
    assert!(matches!(
        with(&|b| b[12] = 2),
        Error::UnknownHashType { hash_type: 2 }
    ));
    let e = with(&|b| b[32..39].copy_from_slice(b"md5\0\0\0\0"));
    assert!(
        matches!(&e, Error::UnknownAlgorithm { name } if name == "md5"),
        "{e}"
    );
    let mut sha1 = good;
    sha1[32..39].copy_from_slice(b"sha1\0\0\0");
    assert_eq!(
        dmverity::Superblock::parse(&sha1).unwrap().hash,
        mdu_verity::HashAlg::Sha1
    );
    let mut upper = good;
    upper[32..38].copy_from_slice(b"SHA256");
    assert_eq!(
        dmverity::Superblock::parse(&upper).unwrap().hash,
        HashAlg::Sha256
    );
    assert!(matches!(
        with(&|b| b[64..68].copy_from_slice(&1000u32.to_le_bytes())),
        Error::BlockSize { size: 1000, .. }
    ));
    assert!(matches!(
        with(&|b| b[68..72].copy_from_slice(&0u32.to_le_bytes())),
        Error::BlockSize { size: 0, .. }
    ));
    assert!(matches!(
        with(&|b| b[72..80].copy_from_slice(&0u64.to_le_bytes())),
        Error::ZeroDataBlocks { .. }
    ));
    assert!(matches!(
        with(&|b| b[72..80].copy_from_slice(&(u64::MAX / 4096 + 1).to_le_bytes())),
        Error::TreeTooLarge { .. }
    ));
    assert!(matches!(
        with(&|b| b[64..68].copy_from_slice(&131072u32.to_le_bytes())),
        Error::BlockSize { size: 131072, .. }
    ));
    assert!(matches!(
        with(&|b| b[80..82].copy_from_slice(&257u16.to_le_bytes())),
        Error::SaltTooLong { len: 257, .. }
    ));
    assert!(matches!(
        with(&|b| b[80..82].copy_from_slice(&300u16.to_le_bytes())),
        Error::SaltTooLong { len: 300, .. }
    ));
    assert!(matches!(
        dmverity::Superblock::parse(&good[..100]),
        Err(Error::HashAreaTooSmall {
            needed: 512,
            available: 100
        })
    ));
    assert!(matches!(
        dmverity::Superblock::read_from(Cursor::new(&good[..]), 4096),
        Err(Error::HashAreaTooSmall { .. })
    ));
}

#[test]
fn pinned_parameters_must_agree_with_the_superblock() {
    let (params, data, hash, root) = small_image();
    let verify = |pins: &dmverity::Pins| {
        dmverity::verify_with_superblock(Cursor::new(&data), Cursor::new(&hash), 0, pins, &root)
    };
    let all = dmverity::Pins::from_params(&dmverity::Params {
        data_blocks: Some(20),
        ..params.clone()
    });
    assert!(all.all_pinned());
    assert_eq!(shape(&verify(&all).unwrap()), shape(&all_params(&params)));
    let cases: Vec<(dmverity::Pins, &str, &str, &str)> = vec![
        (
            dmverity::Pins {
                data_blocks: Some(16),
                ..all.clone()
            },
            "data_blocks",
            "16",
            "20",
        ),
        (
            dmverity::Pins {
                hash: Some(HashAlg::Sha512),
                ..all.clone()
            },
            "hash",
            "sha512",
            "sha256",
        ),
        (
            dmverity::Pins {
                data_block_size: Some(4096),
                ..all.clone()
            },
            "data_block_size",
            "4096",
            "512",
        ),
        (
            dmverity::Pins {
                hash_block_size: Some(1024),
                ..all.clone()
            },
            "hash_block_size",
            "1024",
            "512",
        ),
        (
            dmverity::Pins {
                format: Some(0),
                ..all.clone()
            },
            "format",
            "0",
            "1",
        ),
        (
            dmverity::Pins {
                salt: Some(Vec::new()),
                ..all.clone()
            },
            "salt",
            "- (no salt)",
            "",
        ),
    ];
    for (pins, field, pinned, found) in cases {
        match verify(&pins) {
            Err(Error::PinMismatch {
                field: f,
                pinned: p,
                superblock: s,
            }) => {
                assert_eq!((f, p.as_str()), (field, pinned));
                if !found.is_empty() {
                    assert_eq!(s, found);
                }
            }
            other => panic!("{field}: {other:?}"),
        }
    }
}

fn all_params(p: &dmverity::Params) -> dmverity::Params {
    dmverity::Params {
        data_blocks: Some(20),
        ..p.clone()
    }
}

/// The documented limit of an unpinned superblock: it may describe a
/// smaller tree whose data is a copy of the original top hash block, and
/// that verifies against the original root. Pinning `data_blocks` refuses it.
#[test]
fn an_unpinned_superblock_chooses_the_shape_and_a_pin_refuses_it() {
    let (params, _data, hash, root) = small_image();
    // The tree starts (with its top level) at hash block 1.
    let top = params.hash_start_block() as usize * 512;
    let forged_data = hash[top..top + 512].to_vec();
    let mut forged_hash = hash.clone();
    forged_hash[72..80].copy_from_slice(&1u64.to_le_bytes());
    let used = dmverity::verify_with_superblock(
        Cursor::new(&forged_data),
        Cursor::new(&forged_hash),
        0,
        &dmverity::Pins::default(),
        &root,
    )
    .expect("the forged one-block tree hashes to the root, as documented");
    assert_eq!(used.data_blocks, Some(1));
    let pins = dmverity::Pins {
        data_blocks: Some(20),
        ..Default::default()
    };
    let e = dmverity::verify_with_superblock(
        Cursor::new(&forged_data),
        Cursor::new(&forged_hash),
        0,
        &pins,
        &root,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::PinMismatch {
                field: "data_blocks",
                ..
            }
        ),
        "{e}"
    );
    // Trusted parameters (no superblock read): the forged data is caught.
    let trusted = all_params(&params);
    let e = dmverity::verify(
        Cursor::new(&forged_data),
        Cursor::new(&forged_hash),
        &trusted,
        &root,
    )
    .unwrap_err();
    assert!(matches!(e, Error::CorruptDataBlock { block: 0 }), "{e}");
}

/// Every bit of the superblock, flipped one at a time: with every shape
/// parameter pinned, verification succeeds only when the parsed shape is
/// unchanged (bits of the UUID, the padding, unused salt bytes, the case
/// of the algorithm name); without pins, success also means the flipped
/// superblock still describes this exact tree.
#[test]
fn every_flipped_superblock_bit_is_caught_or_harmless() {
    let (params, data, mut hash, root) = small_image();
    let want = shape(&all_params(&params));
    let all = dmverity::Pins::from_params(&all_params(&params));
    let mut harmless = 0;
    for bit in 0..512 * 8 {
        hash[bit / 8] ^= 1 << (bit % 8);
        for pins in [&all, &dmverity::Pins::default()] {
            let r = dmverity::verify_with_superblock(
                Cursor::new(&data),
                Cursor::new(&hash),
                0,
                pins,
                &root,
            );
            if let Ok(used) = r {
                assert_eq!(shape(&used), want, "superblock bit {bit}");
                harmless += 1;
            }
        }
        let sb = dmverity::Superblock::parse(&hash[..512]);
        let shape_bit = matches!(bit / 8, 0..16 | 32..39 | 64..82 | 88..120);
        if shape_bit {
            // Signature, version, hash type, name, sizes, count, salt: the
            // flip either breaks parsing or changes the shape (or only the
            // case of a name letter, which parses to the same algorithm).
            let same = sb.as_ref().map(|sb| shape(&sb.params(0)) == want);
            let case_flip = (32..35).contains(&(bit / 8)) && bit % 8 == 5;
            assert!(same.is_err() || !same.unwrap() || case_flip, "bit {bit}");
        }
        hash[bit / 8] ^= 1 << (bit % 8);
    }
    // UUID (128 bits), padding (48), unused salt and tail (224 * 8 + 168 * 8),
    // the name field after its NUL (25 * 8) and the case bit of the letters
    // of "sha", each under both pin settings.
    assert_eq!(harmless, 2 * (128 + 48 + 224 * 8 + 168 * 8 + 25 * 8 + 3));
    dmverity::verify_with_superblock(Cursor::new(&data), Cursor::new(&hash), 0, &all, &root)
        .unwrap();
}
