//! dm-verity verification: every single flipped bit of a small data device
//! and of its hash area is caught and the right block is named (a sample of
//! the bits unless `MDU_EXHAUSTIVE=1`, see `exhaustive`); ranges; typed
//! errors for every bad parameter and input.

use std::io::{Cursor, Read};

use mdu_core::testing::sample;
use mdu_verity::sha256::Backend;
use mdu_verity::{Digest, Error, HashAlg, Source, dmverity, fsverity};

fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(seed | 1).wrapping_add(i as u8 >> 3) ^ seed)
        .collect()
}

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
fn ranges_check_only_their_blocks() {
    let p = dmverity::Params {
        data_block_size: 512,
        hash_block_size: 512,
        salt: bytes(5, 3),
        ..Default::default()
    };
    let mut data = bytes(1000 * 512, 9);
    let mut dev = Cursor::new(Vec::new());
    let root = dmverity::format(&data[..], &mut dev, &p)
        .unwrap()
        .root_hash();
    let hash = dev.into_inner();
    data[700 * 512 + 3] ^= 0x80;
    let check =
        |s, c| dmverity::verify_range(Cursor::new(&data), Cursor::new(&hash), &p, &root, s, c);
    check(0, 700).unwrap();
    check(701, 299).unwrap();
    assert!(matches!(
        check(500, 0),
        Err(Error::ZeroDataBlocks {
            source: "the verify range"
        })
    ));
    assert!(matches!(
        check(650, 100),
        Err(Error::CorruptDataBlock { block: 700 })
    ));
    assert!(matches!(
        check(700, 1),
        Err(Error::CorruptDataBlock { block: 700 })
    ));
    assert!(matches!(
        check(990, 11),
        Err(Error::BlockRange {
            start: 990,
            count: 11,
            data_blocks: 1000
        })
    ));
    assert!(matches!(check(u64::MAX, 2), Err(Error::BlockRange { .. })));
    // A truncated hash device is a typed error, not a panic.
    let short = &hash[..hash.len() - 1];
    let e = dmverity::verify(Cursor::new(&data), Cursor::new(short), &p, &root).unwrap_err();
    assert!(matches!(e, Error::HashAreaTooSmall { .. }), "{e}");
    // A root hash of the wrong size.
    let e = dmverity::verify(
        Cursor::new(&data),
        Cursor::new(&hash),
        &p,
        &Digest::from_slice(&[0; 20]),
    )
    .unwrap_err();
    assert!(matches!(e, Error::RootHash { .. }), "{e}");
}

#[test]
fn bad_parameters_are_typed_errors_and_write_nothing() {
    let data = vec![0u8; 10 * 4096];
    let base = dmverity::Params::default();
    type Case = (dmverity::Params, fn(&Error) -> bool);
    let cases: Vec<Case> = vec![
        (
            dmverity::Params {
                data_block_size: 1000,
                ..base.clone()
            },
            |e| {
                matches!(
                    e,
                    Error::BlockSize {
                        what: "data block",
                        size: 1000,
                        ..
                    }
                )
            },
        ),
        (
            dmverity::Params {
                data_block_size: 256,
                ..base.clone()
            },
            |e| matches!(e, Error::BlockSize { size: 256, .. }),
        ),
        (
            dmverity::Params {
                hash_block_size: 131072,
                ..base.clone()
            },
            |e| {
                matches!(
                    e,
                    Error::BlockSize {
                        what: "hash block",
                        ..
                    }
                )
            },
        ),
        (
            dmverity::Params {
                hash_block_size: 0,
                ..base.clone()
            },
            |e| matches!(e, Error::BlockSize { size: 0, .. }),
        ),
        (
            dmverity::Params {
                salt: vec![0; 257],
                ..base.clone()
            },
            |e| matches!(e, Error::SaltTooLong { len: 257, max: 256 }),
        ),
        (
            dmverity::Params {
                format: 7,
                ..base.clone()
            },
            |e| matches!(e, Error::UnknownHashType { hash_type: 7 }),
        ),
        (
            dmverity::Params {
                hash_offset: 100,
                ..base.clone()
            },
            |e| matches!(e, Error::HashOffset { offset: 100 }),
        ),
        (
            dmverity::Params {
                data_blocks: Some(11),
                ..base.clone()
            },
            |e| {
                matches!(
                    e,
                    Error::TruncatedInput {
                        expected_blocks: 11,
                        available_blocks: 10
                    }
                )
            },
        ),
        (
            dmverity::Params {
                data_blocks: Some(u64::MAX),
                ..base.clone()
            },
            |e| matches!(e, Error::TreeTooLarge { .. }),
        ),
        (
            dmverity::Params {
                data_blocks: Some(0),
                ..base.clone()
            },
            |e| matches!(e, Error::ZeroDataBlocks { .. }),
        ),
    ];
    for (p, ok) in cases {
        let mut dev = Cursor::new(Vec::new());
        let e = dmverity::format(&data[..], &mut dev, &p).unwrap_err();
        assert!(ok(&e), "{p:?} gave {e:?}");
        assert!(!e.to_string().is_empty());
        assert!(
            dev.get_ref().is_empty(),
            "an error wrote to the hash device"
        );
    }
    let e = dmverity::format(&data[..4095], Cursor::new(Vec::new()), &base).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NoDataBlocks {
                data_bytes: 4095,
                data_block_size: 4096
            }
        ),
        "{e}"
    );

    for (bs, salt) in [(256u32, 0usize), (3000, 0), (131072, 0), (4096, 33)] {
        let p = fsverity::Params {
            block_size: bs,
            salt: vec![1; salt],
            ..Default::default()
        };
        let e = fsverity::digest(&data[..], &p).unwrap_err();
        assert!(
            matches!(
                e,
                Error::BlockSize { .. } | Error::SaltTooLong { len: 33, max: 32 }
            ),
            "{e}"
        );
    }
}

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

/// A reader that hands out at most `step` bytes per call.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn short_reads_and_backends_give_the_same_trees() {
    let data = bytes(777_777, 4);
    let p = fsverity::Params {
        block_size: 1024,
        salt: vec![3; 11],
        ..Default::default()
    };
    let want = fsverity::measure(&data[..], &p).unwrap();
    for step in [1usize, 4095, 100_000] {
        let m = fsverity::measure(Source::reader(Trickle { data: &data, step }), &p).unwrap();
        assert_eq!(m.digest(), want.digest());
        assert_eq!(m.tree().to_root_first(), want.tree().to_root_first());
    }
    for &b in Backend::available() {
        println!("short_reads_and_backends_give_the_same_trees: sha256 backend {b}");
        let pb = fsverity::Params {
            backend: Some(b),
            ..p.clone()
        };
        let m = fsverity::measure(&data[..], &pb).unwrap();
        assert_eq!(m.tree().to_root_first(), want.tree().to_root_first(), "{b}");
    }
}

#[cfg(feature = "rayon")]
#[test]
fn parallel_and_sequential_give_the_same_bytes() {
    let data = bytes(9 << 20, 6);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let f = fsverity::measure(&data[..], &fsverity::Params::default()).unwrap();
            let p = dmverity::Params {
                data_block_size: 512,
                hash_block_size: 1024,
                salt: vec![1; 40],
                ..Default::default()
            };
            let mut dev = Cursor::new(Vec::new());
            let d = dmverity::format(&data[..], &mut dev, &p).unwrap();
            dmverity::verify(
                Cursor::new(&data),
                Cursor::new(dev.get_ref()),
                &p,
                &d.root_hash(),
            )
            .unwrap();
            (
                f.tree().to_root_first(),
                f.digest(),
                dev.into_inner(),
                d.root_hash(),
            )
        })
    };
    let one = run(1);
    let many = run(4);
    assert!(one == many);
}

#[test]
fn absurd_block_counts_are_errors_not_aborts() {
    let data = bytes(8 * 4096, 1);
    let p = dmverity::Params {
        superblock: false,
        ..Default::default()
    };
    let mut dev = Cursor::new(Vec::new());
    let root = dmverity::format(&data[..], &mut dev, &p)
        .unwrap()
        .root_hash();
    let huge = dmverity::Params {
        data_blocks: Some(u64::MAX / 2),
        ..p
    };
    let e = dmverity::verify_range(
        Cursor::new(&data),
        Cursor::new(dev.get_ref()),
        &huge,
        &root,
        0,
        u64::MAX / 2,
    )
    .unwrap_err();
    assert!(matches!(e, Error::TreeTooLarge { .. }), "{e}");
    // Addressable, but the tree is far larger than the hash device.
    let big = dmverity::Params {
        data_blocks: Some(1 << 40),
        ..huge
    };
    let e =
        dmverity::verify(Cursor::new(&data), Cursor::new(dev.get_ref()), &big, &root).unwrap_err();
    assert!(matches!(e, Error::HashAreaTooSmall { .. }), "{e}");
    // A hash offset at the end of the 64-bit range.
    let far = dmverity::Params {
        hash_offset: !511,
        superblock: true,
        ..big
    };
    let e =
        dmverity::verify(Cursor::new(&data), Cursor::new(dev.get_ref()), &far, &root).unwrap_err();
    assert!(matches!(e, Error::HashOffsetTooLarge { .. }), "{e}");
}

/// A small image with a superblock: 20 blocks of 512 bytes, a two-level
/// tree; returns (params, data, hash device, root).
fn small_image() -> (dmverity::Params, Vec<u8>, Vec<u8>, Digest) {
    let params = dmverity::Params {
        data_block_size: 512,
        hash_block_size: 512,
        salt: bytes(32, 7),
        uuid: [0x42; 16],
        ..Default::default()
    };
    let data = bytes(20 * 512, 0x3c);
    let mut dev = Cursor::new(Vec::new());
    let root = dmverity::format(&data[..], &mut dev, &params)
        .unwrap()
        .root_hash();
    (params, data, dev.into_inner(), root)
}

/// The fields of `Params` that shape the tree.
fn shape(p: &dmverity::Params) -> (HashAlg, u32, u32, Vec<u8>, u32, Option<u64>) {
    (
        p.hash,
        p.data_block_size,
        p.hash_block_size,
        p.salt.clone(),
        p.format,
        p.data_blocks,
    )
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
