//! dm-verity verification: every single flipped bit of a small data device
//! and of its hash area is caught and the right block is named; ranges;
//! typed errors for every bad parameter and input.

use std::io::{Cursor, Read};

use mdu_verity::sha256::{Backend, State};
use mdu_verity::{Digest, Error, HashAlg, dmverity, fsverity};

fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(seed | 1).wrapping_add(i as u8 >> 3) ^ seed)
        .collect()
}

/// Flip every bit of the data and of the tree, one at a time, and check that
/// verification fails naming exactly the block holding that bit.
fn exhaustive(params: &dmverity::Params, data_len: usize, backend: Backend) {
    let mut data = bytes(data_len, 0x5b);
    let mut dev = Cursor::new(Vec::new());
    let out = dmverity::format(&data[..], &mut dev, params).unwrap();
    let root = out.root_hash();
    let mut hash = dev.into_inner();
    let fresh = || State::with_backend(backend).unwrap();
    let n = out.data_blocks();
    let verify = |data: &[u8], hash: &[u8]| {
        dmverity::verify_range_with(
            Cursor::new(data),
            Cursor::new(hash),
            params,
            &root,
            0,
            n,
            fresh(),
        )
    };
    verify(&data, &hash).unwrap();

    let dbs = params.data_block_size as usize;
    for bit in 0..data.len() * 8 {
        data[bit / 8] ^= 1 << (bit % 8);
        match verify(&data, &hash) {
            Err(Error::CorruptDataBlock { block }) => assert_eq!(block, (bit / 8 / dbs) as u64),
            other => panic!("data bit {bit}: {other:?}"),
        }
        data[bit / 8] ^= 1 << (bit % 8);
    }

    let hbs = params.hash_block_size as usize;
    let start = out.hash_start_block() as usize * hbs;
    assert!(out.hash_blocks() >= 2, "the device should have a real tree");
    for bit in start * 8..hash.len() * 8 {
        hash[bit / 8] ^= 1 << (bit % 8);
        match verify(&data, &hash) {
            Err(Error::CorruptHashBlock { hash_block, .. }) => {
                assert_eq!(hash_block, (bit / 8 / hbs) as u64, "hash bit {bit}")
            }
            other => panic!("hash bit {bit}: {other:?}"),
        }
        hash[bit / 8] ^= 1 << (bit % 8);
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
    check(500, 0).unwrap();
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
            |e| matches!(e, Error::NoDataBlocks { .. }),
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
    let e = with(&|b| b[32..39].copy_from_slice(b"sha1\0\0\0"));
    assert!(
        matches!(&e, Error::UnknownAlgorithm { name } if name == "sha1"),
        "{e}"
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
        let m = fsverity::measure(Trickle { data: &data, step }, &p).unwrap();
        assert_eq!(m.digest(), want.digest());
        assert_eq!(m.tree().to_root_first(), want.tree().to_root_first());
    }
    for &b in Backend::available() {
        println!("short_reads_and_backends_give_the_same_trees: sha256 backend {b}");
        let m = fsverity::measure_with(&data[..], &p, State::with_backend(b).unwrap()).unwrap();
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
    assert!(matches!(e, Error::HashAreaTooSmall { .. }), "{e}");
}
