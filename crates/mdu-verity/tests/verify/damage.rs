//! Every flipped bit of the data and of the hash area caught and its block
//! named; zero or missing data blocks never a success; in parallel, the
//! lowest bad block named.

use super::*;

/// The data as every kind of source: in memory, a seekable reader, a plain
/// reader told its length, and pieces in memory (cut at odd places, so
/// that blocks straddle them) told their length.
fn sources(data: &[u8]) -> [Source<'_>; 4] {
    let len = data.len() as u64;
    [
        Source::bytes(data),
        Source::seekable(Cursor::new(data)),
        Source::reader(data).with_len(len),
        Source::chunks(data.chunks(700).map(Ok)).with_len(len),
    ]
}

/// Flip every bit of the data and of the tree (or every 7th, see below),
/// one at a time, and check that verification fails naming exactly the
/// block holding that bit, from every kind of source.
fn exhaustive(params: &dmverity::Params, data_len: usize, backend: Backend) {
    let mut data = bytes(data_len, 0x5b);
    let mut dev = Cursor::new(Vec::new());
    let out = dmverity::format(&data[..], &mut dev, params).unwrap();
    let root = out.root_hash();
    let mut hash = dev.into_inner();
    let params = &dmverity::Params {
        backend: Some(backend),
        ..params.clone()
    };
    let n = out.data_blocks();
    let verify = |data: &[u8], hash: &[u8]| {
        let results = sources(data)
            .map(|src| dmverity::verify_range(src, Cursor::new(hash), params, &root, 0, n));
        let [first, rest @ ..] = results;
        for (k, r) in rest.iter().enumerate() {
            assert_eq!(
                format!("{r:?}"),
                format!("{first:?}"),
                "source kind {}",
                k + 1
            );
        }
        first
    };
    verify(&data, &hash).unwrap();

    // Every 7th bit (every 31st under a user-mode emulator, MDU_EMULATED,
    // set by .ci/qemu-aarch64.toml), over a hundred in every block; all of
    // them with MDU_EXHAUSTIVE=1. The logic checked is the same on every
    // architecture and for every backend, the SHA-256 kernels are checked
    // bit for bit elsewhere, and all bits take half a minute natively and
    // minutes under the emulator.
    let start = out.hash_start_block() as usize * params.hash_block_size as usize;
    let bits = (data.len() + hash.len() - start) * 8;
    let stride = sample::stride(
        &format!("every_flipped_bit_is_caught ({:?}, {backend})", params.hash),
        bits,
        "flipped bits of the data and the tree",
        if sample::emulated() { 31 } else { 7 },
    );
    let (dbs, hbs) = (
        params.data_block_size as usize,
        params.hash_block_size as usize,
    );
    assert!(out.hash_blocks() >= 2, "the device should have a real tree");
    // The bits of the data, then those of the tree, as one sequence.
    let data_bits = data.len() * 8;
    for i in (0..bits).step_by(stride) {
        if i < data_bits {
            let bit = i;
            data[bit / 8] ^= 1 << (bit % 8);
            match verify(&data, &hash) {
                Err(Error::CorruptDataBlock { block }) => {
                    assert_eq!(block, (bit / 8 / dbs) as u64, "data bit {bit}")
                }
                other => panic!("data bit {bit}: {other:?}"),
            }
            data[bit / 8] ^= 1 << (bit % 8);
        } else {
            let bit = start * 8 + i - data_bits;
            hash[bit / 8] ^= 1 << (bit % 8);
            match verify(&data, &hash) {
                Err(Error::CorruptHashBlock { hash_block, .. }) => {
                    assert_eq!(hash_block, (bit / 8 / hbs) as u64, "hash bit {bit}")
                }
                other => panic!("hash bit {bit}: {other:?}"),
            }
            hash[bit / 8] ^= 1 << (bit % 8);
        }
    }
    verify(&data, &hash).unwrap();
}

#[test]
fn every_flipped_bit_is_caught_format1() {
    let params = dmverity::Params {
        data_block_size: 512,
        hash_block_size: 512,
        salt: bytes(32, 1),
        superblock: false,
        ..Default::default()
    };
    // 20 blocks: level 0 has 2 blocks (16 digests each), level 1 has 1.
    for &b in Backend::available() {
        println!("every_flipped_bit_is_caught_format1: sha256 backend {b}");
        exhaustive(&params, 20 * 512, b);
    }
}

#[test]
fn every_flipped_bit_is_caught_format0_sha512_superblock() {
    let params = dmverity::Params {
        hash: HashAlg::Sha512,
        data_block_size: 1024,
        hash_block_size: 512,
        salt: bytes(7, 2),
        format: 0,
        ..Default::default()
    };
    exhaustive(&params, 9 * 1024, Backend::detect());
}

#[test]
fn zero_data_blocks_are_never_success() {
    let (params, data, mut hash, root) = small_image();
    // The attack: one 8-byte write of 0 over the superblock's data_blocks.
    hash[72..80].copy_from_slice(&0u64.to_le_bytes());
    let e = dmverity::verify_with_superblock(
        Cursor::new(&data),
        Cursor::new(&hash),
        0,
        &dmverity::Pins::default(),
        &root,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::ZeroDataBlocks {
                source: "the superblock's data_blocks"
            }
        ),
        "{e}"
    );
    // Parameters with zero blocks, an empty data device, an empty range.
    let zero = dmverity::Params {
        data_blocks: Some(0),
        ..params.clone()
    };
    let e = dmverity::verify(Cursor::new(&data), Cursor::new(&hash), &zero, &root).unwrap_err();
    assert!(matches!(e, Error::ZeroDataBlocks { .. }), "{e}");
    for empty in [&[][..], &data[..511]] {
        let e =
            dmverity::verify(Cursor::new(empty), Cursor::new(&hash), &params, &root).unwrap_err();
        assert!(matches!(e, Error::NoDataBlocks { .. }), "{e}");
    }
    let e = dmverity::verify_range(Cursor::new(&data), Cursor::new(&hash), &params, &root, 3, 0)
        .unwrap_err();
    assert!(matches!(e, Error::ZeroDataBlocks { .. }), "{e}");
    // Without a superblock and with an empty hash device as well.
    let bare = dmverity::Params {
        superblock: false,
        ..params
    };
    let e = dmverity::verify(Cursor::new(&[]), Cursor::new(&[]), &bare, &root).unwrap_err();
    assert!(matches!(e, Error::NoDataBlocks { .. }), "{e}");
}

#[test]
fn a_short_data_device_names_the_first_missing_block() {
    let (params, mut data, hash, root) = small_image();
    let pins = dmverity::Pins::from_params(&dmverity::Params {
        data_blocks: Some(20),
        ..params.clone()
    });
    let verify = |data: &[u8]| {
        dmverity::verify_with_superblock(Cursor::new(data), Cursor::new(&hash), 0, &pins, &root)
    };
    assert_eq!(verify(&data).unwrap().data_blocks, Some(20));
    for len in [0, 1, 511, 512, 13 * 512 + 100, 19 * 512, 20 * 512 - 1] {
        match verify(&data[..len]) {
            Err(Error::MissingDataBlock {
                block,
                data_blocks: 20,
            }) => assert_eq!(block, (len / 512) as u64, "{len} bytes"),
            other => panic!("{len} bytes: {other:?}"),
        }
    }
    // The data's size chooses the count when nothing pins it: a prefix of
    // the data fits the same tree shape but not its spare (zero) entries.
    let trusted = dmverity::Params {
        data_blocks: None,
        ..params.clone()
    };
    for blocks in [1usize, 5, 16, 17, 19] {
        let r = dmverity::verify(
            Cursor::new(&data[..blocks * 512]),
            Cursor::new(&hash),
            &trusted,
            &root,
        );
        assert!(
            matches!(
                r,
                Err(Error::HashBlockSpare { .. } | Error::CorruptDataBlock { block: 0 })
            ),
            "{blocks} blocks: {r:?}"
        );
    }
    // A bad block before the end is named first.
    data[2 * 512] ^= 1;
    assert!(matches!(
        verify(&data[..10 * 512]),
        Err(Error::CorruptDataBlock { block: 2 })
    ));
}

/// With blocks hashed on several threads, pieces far apart finish in any
/// order; the block named is still the lowest bad one, for data and for
/// hash blocks, from every kind of source.
#[cfg(feature = "rayon")]
#[test]
fn parallel_verification_names_the_lowest_bad_block() {
    let p = dmverity::Params {
        data_block_size: 512,
        hash_block_size: 512,
        salt: bytes(32, 7),
        superblock: false,
        ..Default::default()
    };
    // 24576 data blocks; level 0 has 1536 hash blocks (768 KiB), hashed on
    // several threads too.
    let mut data = bytes(12 << 20, 8);
    let mut dev = Cursor::new(Vec::new());
    let out = dmverity::format(&data[..], &mut dev, &p).unwrap();
    let root = out.root_hash();
    let mut hash = dev.into_inner();
    for b in [24_000usize, 9_000, 3_000, 701, 700] {
        data[b * 512 + 100] ^= 4;
    }
    // Level 0 starts after levels 3, 2 and 1 (1, 6 and 96 blocks).
    let level0 = (1 + 6 + 96) * 512;
    for b in [1_400usize, 640, 95] {
        hash[level0 + b * 512 + 3] ^= 1;
    }
    for threads in [1, 2, 4, 7] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for (k, src) in sources(&data).into_iter().enumerate() {
            let e = pool.install(|| dmverity::verify(src, Cursor::new(&hash), &p, &root));
            assert!(
                matches!(
                    e,
                    Err(Error::CorruptHashBlock {
                        level: 0,
                        index: 95,
                        ..
                    })
                ),
                "{threads} threads, source kind {k}: {e:?}"
            );
        }
        let honest_hash = {
            let mut h = hash.clone();
            for b in [1_400usize, 640, 95] {
                h[level0 + b * 512 + 3] ^= 1;
            }
            h
        };
        for (k, src) in sources(&data).into_iter().enumerate() {
            let e = pool.install(|| dmverity::verify(src, Cursor::new(&honest_hash), &p, &root));
            assert!(
                matches!(e, Err(Error::CorruptDataBlock { block: 700 })),
                "{threads} threads, source kind {k}: {e:?}"
            );
        }
    }
}
