//! dm-verity verification: every single flipped bit of a small data device
//! and of its hash area is caught and the right block is named (a sample of
//! the bits unless `MDU_EXHAUSTIVE=1`, see `exhaustive`); ranges; typed
//! errors for every bad parameter and input.

mod damage;
mod superblock;

use std::io::{Cursor, Read};

use mdu_core::testing::sample;
use mdu_verity::sha256::Backend;
use mdu_verity::{Digest, Error, HashAlg, Source, dmverity, fsverity};

fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(seed | 1).wrapping_add(i as u8 >> 3) ^ seed)
        .collect()
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
