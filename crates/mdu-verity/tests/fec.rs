//! dm-verity FEC against `veritysetup format --fec-device`: the published
//! images of the reference (FORMATS-2 8.5), and random images made by the
//! tool itself when it is installed.
//!
//! Without `veritysetup` the interop test prints a `SKIPPED` line (see
//! `mdu_testkit::tools`); the published images need no tool.

use std::cell::RefCell;
use std::io::Cursor;
use std::process::Command;

use mdu_testkit::tools::{self, Search, Tool};
use mdu_testkit::{Rng, hex, unhex};
use mdu_verity::dmverity::{self, fec};
use sha2::{Digest, Sha256};

const SALT: &str = "e48da609055204e89ae53b655ca2216dd983cf3cb829f34f63a297d106d53e2d";
const UUID: [u8; 16] = [
    0xa6, 0x0c, 0x98, 0xd2, 0xae, 0x9b, 0x48, 0x65, 0xbf, 0xcb, 0xb4, 0xe3, 0xac, 0xe1, 0x10, 0x33,
];

/// The FEC input of an image, block by block where the library's verity
/// layout puts it: the data blocks, then the hash device from the tree's
/// first block to its end.
fn fec_input(data: &[u8], hash: &[u8], p: &dmverity::Params, data_blocks: u64) -> Vec<u8> {
    let bs = p.data_block_size as usize;
    let l =
        fec::Layout::for_verity(p, data_blocks, hash.len() as u64, &Default::default()).unwrap();
    let mut input = Vec::new();
    for k in 0..l.layout().blocks() {
        let (area, at) = l.block(k).unwrap();
        let dev = if area == fec::Area::Data { data } else { hash };
        input.extend_from_slice(&dev[at as usize..at as usize + bs]);
    }
    input
}

fn image(p: &dmverity::Params, data: &[u8]) -> (Vec<u8>, u64) {
    let mut dev = Cursor::new(Vec::new());
    let out = dmverity::format(data, &mut dev, p).unwrap();
    (dev.into_inner(), out.data_blocks())
}

#[test]
fn published_fec_images() {
    let data: Vec<u8> = (0..1usize << 20).map(|i| (i * 7 + 3) as u8).collect();
    let base = dmverity::Params {
        salt: unhex(SALT),
        uuid: UUID,
        ..Default::default()
    };
    // (params, roots, sha256 of the FEC file)
    let cases = [
        (
            base.clone(),
            2,
            "668cfc058d4ab23b1e4a1e233e2c7563032a8c562c9ea903809d1be1d2a3bcf8",
        ),
        (
            base.clone(),
            24,
            "684e1bfc27549879789732d2d93c03e9a45a7ad453ac7c526c2ea70b57ec70a2",
        ),
        (
            dmverity::Params {
                superblock: false,
                ..base.clone()
            },
            7,
            "40055f18060aabad1524d40283387ceffec7ec9aed5cedd490e99cf22f4c2b59",
        ),
        (
            dmverity::Params {
                data_block_size: 512,
                hash_block_size: 512,
                ..base.clone()
            },
            10,
            "c3c66ecb2ae8b478fc667a55cc645550636ab0330a0558a872de86e98df6b74e",
        ),
    ];
    for (p, roots, want) in cases {
        let (hash, blocks) = image(&p, &data);
        let input = fec_input(&data, &hash, &p, blocks);
        let parity = fec::encode_bytes(&input, p.data_block_size, roots).unwrap();
        assert_eq!(hex(&Sha256::digest(&parity)), want, "roots {roots} {p:?}");
    }
}

/// Random data sizes (including counts that are not a multiple of 255 -
/// roots), roots and block sizes, with and without a superblock: the
/// parity, from the FEC input or from the image's devices
/// (`encode_verity`), equals the FEC file `veritysetup format
/// --fec-device` writes.
#[test]
fn fec_matches_veritysetup() {
    let Some(veritysetup) = tools::require(
        Tool::Veritysetup,
        Search::PathAndSbin,
        "fec_matches_veritysetup",
    ) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("mdu-verity-fec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng::with_seed(0x9e37_79b9_7f4a_7c15);
    let mut next = |n: u64| rng.below(n);
    for case in 0..12 {
        let roots = [2u8, 3, 7, 13, 24][case % 5];
        let bs = if next(3) == 0 { 512u32 } else { 4096 };
        let blocks = match case % 4 {
            0 => 1,
            1 => 255 - u64::from(roots),
            2 => 255 - u64::from(roots) + 1,
            _ => 1 + next(3000),
        };
        let superblock = next(2) == 0;
        let data: Vec<u8> = (0..blocks * u64::from(bs))
            .map(|i| (i as u8) ^ (i >> 9) as u8 ^ case as u8)
            .collect();
        let (d, h, f) = (dir.join("d"), dir.join("h"), dir.join("f"));
        std::fs::write(&d, &data).unwrap();
        let _ = std::fs::remove_file(&h);
        let _ = std::fs::remove_file(&f);
        let mut cmd = Command::new(&veritysetup);
        cmd.arg("format")
            .arg(format!("--salt={SALT}"))
            .arg(format!("--data-block-size={bs}"))
            .arg(format!("--hash-block-size={bs}"))
            .arg(format!("--fec-roots={roots}"))
            .arg(format!("--fec-device={}", f.display()));
        if !superblock {
            cmd.arg("--no-superblock");
        }
        let out = cmd.arg(&d).arg(&h).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want = std::fs::read(&f).unwrap();
        let hash = std::fs::read(&h).unwrap();
        let p = dmverity::Params {
            data_block_size: bs,
            hash_block_size: bs,
            superblock,
            ..Default::default()
        };
        let input = fec_input(&data, &hash, &p, blocks);
        let parity = fec::encode_bytes(&input, bs, roots).unwrap();
        let what =
            format!("case {case}: roots {roots}, {blocks} blocks of {bs}, superblock {superblock}");
        assert!(parity == want, "{what}");
        // The same from the two devices, read by position where the
        // layout of a new image puts the blocks.
        let fec_params = fec::FecParams {
            roots,
            ..Default::default()
        };
        let layout = fec::Layout::for_new_verity(&p, blocks, &fec_params).unwrap();
        let parity = fec::encode_verity(&layout, &data, &hash).unwrap();
        assert!(parity == want, "{what}: encode_verity");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `verify_with_fec` on an image whose parity follows the tree in the hash
/// device: clean (FEC not needed; also after the caller's own
/// verification, `verify_with_fec_after`), damaged data and tree (corrected in
/// view, then repaired exactly), a data device that ends early (erasures,
/// and still not verified), a short parity and hostile parity (typed
/// outcomes, never a panic).
#[test]
fn verify_with_fec_corrects_repairs_and_refuses() {
    let p = dmverity::Params {
        salt: unhex(SALT),
        data_blocks: Some(64),
        ..Default::default()
    };
    let data: Vec<u8> = (0..64 * 4096).map(|i| (i * 7 + 3) as u8).collect();
    let (mut hash, blocks) = image(&p, &data);
    let root = dmverity::format(&data[..], &mut Cursor::new(Vec::new()), &p)
        .unwrap()
        .root_hash();
    let offset = hash.len() as u64;
    let fec_params = fec::FecParams {
        roots: 4,
        offset,
        in_hash_device: true,
    };
    let input = fec_input(&data, &hash, &p, blocks);
    hash.extend(fec::encode_bytes(&input, 4096, 4).unwrap());
    let shape = fec::Shape::Params(&p);
    let run =
        |d: &[u8], h: &[u8], f: &[u8]| fec::verify_with_fec(d, h, f, shape, &root, &fec_params);

    let out = run(&data, &hash, &hash).unwrap();
    assert!(out.verified() && out.first_failure().is_none() && out.corrections().is_empty());

    // After the caller's own verification: a clean one reads no parity,
    // an I/O error comes back as it was, a failure is corrected as above.
    let after = |first, d: &[u8], f: &[u8]| {
        fec::verify_with_fec_after(first, d, &hash[..], f, shape, &root, &fec_params)
    };
    let out = after(Ok(()), &data, &[]).unwrap();
    assert!(out.verified() && out.layout().is_none());
    let eio = std::io::Error::other("the caller's read failed");
    assert!(matches!(
        after(Err(mdu_verity::Error::Io(eio)), &data, &hash),
        Err(mdu_verity::Error::Io(_))
    ));
    let mut one = data.clone();
    one[40 * 4096] ^= 4;
    let first = dmverity::verify(&one[..], Cursor::new(&hash), &p, &root);
    let out = after(first, &one, &hash).unwrap();
    assert!(out.verified() && out.corrections().len(fec::Area::Data) == 1);

    let (mut bad, mut bad_hash) = (data.clone(), hash.clone());
    bad[9 * 4096 + 77] ^= 0x10;
    bad_hash[4096 + 5] ^= 0x01; // the tree's first block
    let out = run(&bad, &bad_hash, &bad_hash).unwrap();
    assert!(out.verified());
    assert!(matches!(
        out.first_failure(),
        Some(mdu_verity::Error::CorruptHashBlock { .. })
    ));
    let c = out.corrections();
    assert_eq!(
        (c.bytes(), c.len(fec::Area::Data), c.len(fec::Area::Hash)),
        (2, 1, 1)
    );
    let (d, h) = (RefCell::new(bad.clone()), RefCell::new(bad_hash.clone()));
    out.repair(&d, &h).unwrap();
    assert!(d.into_inner() == data && h.into_inner() == hash);

    // The last data block missing: an erasure FEC restores, but only in
    // the decoder; the device still ends early.
    let short = &data[..63 * 4096];
    let out = run(short, &hash, &hash).unwrap();
    assert!(!out.verified());
    assert_eq!(out.corrections().len(fec::Area::Data), 1);
    assert!(matches!(
        out.failure_after_correction(),
        Some(mdu_verity::Error::MissingDataBlock { block: 63, .. })
    ));
    let (d, h) = (RefCell::new(short.to_vec()), RefCell::new(hash.clone()));
    assert!(out.repair(&d, &h).is_err());
    assert!(d.into_inner() == short, "a refused repair wrote");

    // A parity that ends early, and parity of other data.
    let cut = &hash[..offset as usize + 100];
    assert!(matches!(
        run(&bad, cut, cut),
        Err(mdu_verity::Error::FecParityShort { round: 0, .. })
    ));
    let mut forged = bad_hash.clone();
    for (i, b) in forged[offset as usize..].iter_mut().enumerate() {
        *b = (i * 131 + 7) as u8;
    }
    let out = run(&bad, &forged, &forged).unwrap();
    assert!(!out.verified());
    assert!(out.into_result().is_err());
}
