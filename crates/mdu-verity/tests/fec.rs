//! dm-verity FEC against `veritysetup format --fec-device`: the published
//! images of the reference (FORMATS-2 8.5), and random images made by the
//! tool itself when it is installed.
//!
//! Without `veritysetup` the interop test prints a `SKIPPED` line (see
//! `mdu_core::testing::tools`); the published images need no tool.

use std::io::Cursor;
use std::process::Command;

use mdu_core::testing::tools::{self, Search, Tool};
use mdu_verity::dmverity::{self, fec};
use sha2::{Digest, Sha256};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const SALT: &str = "e48da609055204e89ae53b655ca2216dd983cf3cb829f34f63a297d106d53e2d";
const UUID: [u8; 16] = [
    0xa6, 0x0c, 0x98, 0xd2, 0xae, 0x9b, 0x48, 0x65, 0xbf, 0xcb, 0xb4, 0xe3, 0xac, 0xe1, 0x10, 0x33,
];

/// The FEC input of an image: the data blocks, then the hash device from
/// the tree's first block to its end.
fn fec_input(data: &[u8], hash: &[u8], p: &dmverity::Params, data_blocks: u64) -> Vec<u8> {
    let bs = p.data_block_size as usize;
    let start = p.hash_start_block() as usize * bs;
    let end = hash.len() / bs * bs;
    let mut input = data[..data_blocks as usize * bs].to_vec();
    input.extend_from_slice(&hash[start..end]);
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
/// parity equals the FEC file `veritysetup format --fec-device` writes.
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
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
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
        assert!(
            parity == want,
            "case {case}: roots {roots}, {blocks} blocks of {bs}, superblock {superblock}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
