//! Interop with the reference tools: `fsverity digest` (fsverity-utils) and
//! `veritysetup format` (cryptsetup), on random files of edge-case sizes and
//! many parameter sets. Same digests, same Merkle tree and descriptor bytes,
//! same root hashes and the same hash-device bytes.
//!
//! Without a tool its test prints a `SKIPPED` line and returns;
//! `reference_tools_of_the_interop_tests_are_installed` then fails with the
//! install command, unless `MDU_SKIP_TOOLS=1`. With `MDU_REQUIRE_TOOLS=1`
//! (CI) a missing tool fails the tests themselves. See
//! `mdu_testkit::tools`.

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;

use mdu_testkit::tools::{self, Search, Tool};
use mdu_testkit::{Rng, hex};
use mdu_verity::sha256::Backend;
use mdu_verity::{HashAlg, dmverity, fsverity};

/// Each tool with the tests of this file that need it.
const USES: [(Tool, &[&str]); 2] = [
    (Tool::Fsverity, &["fsverity_digest_matches_fsverity_utils"]),
    (
        Tool::Veritysetup,
        &[
            "dmverity_format_matches_veritysetup",
            "dmverity_every_hash_matches_veritysetup",
            "fec::fec_matches_veritysetup (tests/fec.rs)",
        ],
    ),
];

/// The tool's path (found on PATH or in the sbin directories: veritysetup
/// lives in /usr/sbin, which is not on every user's PATH), or `None` after a
/// `SKIPPED` line.
fn require(tool: Tool, test: &str) -> Option<PathBuf> {
    tools::require(tool, Search::PathAndSbin, test)
}

#[test]
fn reference_tools_of_the_interop_tests_are_installed() {
    tools::check_installed("mdu-verity", Search::PathAndSbin, &USES);
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("mdu-verity-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Deterministic pseudo-random bytes.
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    Rng::with_seed(seed).bytes(len)
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("tool runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fsverity_sizes(bs: usize, hash: HashAlg) -> Vec<usize> {
    let per = bs / hash.digest_len();
    vec![
        0,
        1,
        bs - 1,
        bs,
        bs + 1,
        2 * bs,
        per * bs,
        per * bs + 1,
        (per + 3) * bs - 7,
    ]
}

#[test]
fn fsverity_digest_matches_fsverity_utils() {
    let Some(fsverity_bin) = require(Tool::Fsverity, "fsverity_digest_matches_fsverity_utils")
    else {
        return;
    };
    println!(
        "fsverity_digest_matches_fsverity_utils: sha256 backend {} against {}",
        Backend::detect(),
        fsverity_bin.display()
    );
    let dir = TempDir::new("fsverity");
    let param_sets = [
        (HashAlg::Sha256, 4096, hex(b"")),
        (HashAlg::Sha256, 1024, hex(b"salt!")),
        (HashAlg::Sha256, 512, hex(&[0xab; 3])),
        (HashAlg::Sha256, 65536, hex(&[0x01])),
        (HashAlg::Sha256, 2048, hex(&random_bytes(32, 99))),
        (HashAlg::Sha512, 4096, hex(&random_bytes(32, 7))),
        (HashAlg::Sha512, 1024, hex(b"")),
        (HashAlg::Sha512, 8192, hex(&random_bytes(17, 8))),
    ];
    let mut cases = 0;
    for (pi, (hash, bs, salt_hex)) in param_sets.iter().enumerate() {
        let mut sizes = fsverity_sizes(*bs, *hash);
        if pi < 2 {
            sizes.push((3 << 20) + 12345); // a few MiB
        }
        for (si, size) in sizes.into_iter().enumerate() {
            let data = random_bytes(size, (pi * 100 + si) as u64);
            let file = dir.path("data");
            std::fs::write(&file, &data).unwrap();
            let (tree_f, desc_f) = (dir.path("tree"), dir.path("desc"));
            let mut cmd = Command::new(&fsverity_bin);
            cmd.arg("digest")
                .arg(&file)
                .arg(format!("--hash-alg={}", hash.name()))
                .arg(format!("--block-size={bs}"))
                .arg(format!("--out-merkle-tree={}", tree_f.display()))
                .arg(format!("--out-descriptor={}", desc_f.display()));
            if !salt_hex.is_empty() {
                cmd.arg(format!("--salt={salt_hex}"));
            }
            let printed = run(&mut cmd);
            let want = printed.split_whitespace().next().unwrap().to_owned();

            let params = fsverity::Params {
                hash: *hash,
                block_size: *bs as u32,
                salt: mdu_verity::Digest::from_hex(salt_hex)
                    .unwrap()
                    .as_bytes()
                    .to_vec(),
                ..Default::default()
            };
            let m = fsverity::measure(&data[..], &params).unwrap();
            assert_eq!(m.digest().to_string(), want, "{params:?} size {size}");
            assert_eq!(
                m.tree().to_root_first(),
                std::fs::read(&tree_f).unwrap(),
                "Merkle tree bytes, {params:?} size {size}"
            );
            assert_eq!(
                &m.descriptor()[..],
                &std::fs::read(&desc_f).unwrap()[..],
                "descriptor, {params:?} size {size}"
            );
            cases += 1;
        }
    }
    eprintln!("{cases} files matched fsverity digest");
}

fn veritysetup_format(bin: &Path, data: &Path, hash_dev: &Path, p: &dmverity::Params) -> String {
    veritysetup_format_named(bin, data, hash_dev, p, p.hash.name())
}

/// [`veritysetup_format`] with the hash given as `hash_name` (an alias).
fn veritysetup_format_named(
    bin: &Path,
    data: &Path,
    hash_dev: &Path,
    p: &dmverity::Params,
    hash_name: &str,
) -> String {
    let mut cmd = Command::new(bin);
    cmd.arg("format")
        .arg(data)
        .arg(hash_dev)
        .arg(format!("--hash={hash_name}"))
        .arg(format!("--data-block-size={}", p.data_block_size))
        .arg(format!("--hash-block-size={}", p.hash_block_size))
        .arg(format!("--format={}", p.format))
        .arg(format!("--hash-offset={}", p.hash_offset));
    if p.salt.is_empty() {
        cmd.arg("--salt=-");
    } else {
        cmd.arg(format!("--salt={}", hex(&p.salt)));
    }
    if p.superblock {
        let u = hex(&p.uuid);
        cmd.arg(format!(
            "--uuid={}-{}-{}-{}-{}",
            &u[..8],
            &u[8..12],
            &u[12..16],
            &u[16..20],
            &u[20..]
        ));
    } else {
        cmd.arg("--no-superblock");
    }
    if let Some(n) = p.data_blocks {
        cmd.arg(format!("--data-blocks={n}"));
    }
    let out = run(&mut cmd);
    out.lines()
        .find_map(|l| l.strip_prefix("Root hash:"))
        .expect("Root hash line")
        .trim()
        .to_owned()
}

#[test]
fn dmverity_format_matches_veritysetup() {
    let Some(bin) = require(Tool::Veritysetup, "dmverity_format_matches_veritysetup") else {
        return;
    };
    println!(
        "dmverity_format_matches_veritysetup: sha256 backend {} against {}",
        Backend::detect(),
        bin.display()
    );
    let dir = TempDir::new("veritysetup");
    let uuid: [u8; 16] = random_bytes(16, 5).try_into().unwrap();
    let base = dmverity::Params {
        uuid,
        ..Default::default()
    };
    let param_sets = vec![
        dmverity::Params {
            salt: random_bytes(32, 1),
            ..base.clone()
        },
        dmverity::Params {
            superblock: false,
            ..base.clone()
        },
        dmverity::Params {
            data_block_size: 512,
            hash_block_size: 512,
            salt: random_bytes(256, 2),
            ..base.clone()
        },
        dmverity::Params {
            data_block_size: 1024,
            hash_block_size: 4096,
            salt: random_bytes(3, 3),
            ..base.clone()
        },
        dmverity::Params {
            data_block_size: 4096,
            hash_block_size: 1024,
            format: 0,
            salt: random_bytes(32, 4),
            ..base.clone()
        },
        dmverity::Params {
            format: 0,
            superblock: false,
            salt: random_bytes(5, 6),
            ..base.clone()
        },
        dmverity::Params {
            hash: HashAlg::Sha512,
            salt: random_bytes(64, 7),
            ..base.clone()
        },
        dmverity::Params {
            hash: HashAlg::Sha512,
            data_block_size: 512,
            hash_block_size: 2048,
            superblock: false,
            ..base.clone()
        },
        dmverity::Params {
            hash_offset: 8192,
            salt: random_bytes(32, 8),
            ..base.clone()
        },
        dmverity::Params {
            hash_offset: 4608,
            superblock: true,
            data_block_size: 512,
            hash_block_size: 512,
            ..base.clone()
        },
        dmverity::Params {
            hash_offset: 12288,
            superblock: false,
            hash_block_size: 4096,
            ..base.clone()
        },
        dmverity::Params {
            data_block_size: 65536,
            hash_block_size: 65536,
            salt: random_bytes(32, 9),
            ..base.clone()
        },
    ];
    let mut cases = 0;
    for (pi, p) in param_sets.iter().enumerate() {
        let bs = p.data_block_size as usize;
        let per = p.hash_block_size as usize / p.hash.digest_len();
        let mut sizes = vec![
            bs,
            bs + 1,
            2 * bs - 1,
            2 * bs,
            3 * bs,
            per * bs,
            (per + 1) * bs,
            (per * per + 1) * bs,
        ];
        if pi < 2 {
            sizes.push(3 << 20);
        }
        for (si, size) in sizes.into_iter().enumerate() {
            if size > 40 << 20 {
                continue;
            }
            let data = random_bytes(size, (pi * 1000 + si) as u64);
            let data_f = dir.path("data");
            let hash_f = dir.path("hash");
            std::fs::write(&data_f, &data).unwrap();
            let _ = std::fs::remove_file(&hash_f);
            let want_root = veritysetup_format(&bin, &data_f, &hash_f, p);
            let theirs = std::fs::read(&hash_f).unwrap();

            let mut ours = Cursor::new(Vec::new());
            let out = dmverity::format(&data[..], &mut ours, p).unwrap();
            assert_eq!(out.root_hash().to_hex(), want_root, "{p:?} size {size}");
            assert_eq!(
                ours.get_ref().len(),
                theirs.len(),
                "hash device length, {p:?} size {size}"
            );
            assert!(
                ours.get_ref() == &theirs,
                "hash device bytes differ, {p:?} size {size}"
            );
            // And our verifier accepts their hash device.
            let mut vp = p.clone();
            if p.superblock {
                let sb =
                    dmverity::Superblock::read_from(Cursor::new(&theirs), p.hash_offset).unwrap();
                vp = sb.params(p.hash_offset);
                assert_eq!(vp.data_blocks, Some(out.data_blocks()));
            }
            dmverity::verify(
                Cursor::new(&data),
                Cursor::new(&theirs),
                &vp,
                &out.root_hash(),
            )
            .unwrap();
            cases += 1;
        }
    }
    // An explicit --data-blocks smaller than the device.
    let data = random_bytes(10 * 4096, 77);
    std::fs::write(dir.path("data"), &data).unwrap();
    let _ = std::fs::remove_file(dir.path("hash"));
    let p = dmverity::Params {
        data_blocks: Some(7),
        salt: random_bytes(32, 10),
        ..base
    };
    let want = veritysetup_format(&bin, &dir.path("data"), &dir.path("hash"), &p);
    let mut ours = Cursor::new(Vec::new());
    assert_eq!(
        dmverity::format(&data[..], &mut ours, &p)
            .unwrap()
            .root_hash()
            .to_hex(),
        want
    );
    assert!(ours.into_inner() == std::fs::read(dir.path("hash")).unwrap());
    eprintln!("{} devices matched veritysetup format", cases + 1);

    // A hash device that already holds bytes: only the superblock and the
    // tree are replaced, the rest is kept (veritysetup's read-modify-write).
    let data = random_bytes(300 * 512, 78);
    std::fs::write(dir.path("data"), &data).unwrap();
    for (hbs, offset, blocks) in [
        (4096u32, 0u64, 300u64),
        (512, 4608, 300),
        (1024, 8192, 1),
        (512, 0, 1),
    ] {
        let old = random_bytes(70_000, u64::from(hbs) + offset);
        std::fs::write(dir.path("hash"), &old).unwrap();
        let p = dmverity::Params {
            data_block_size: 512,
            hash_block_size: hbs,
            hash_offset: offset,
            data_blocks: Some(blocks),
            salt: random_bytes(32, 11),
            uuid,
            ..Default::default()
        };
        let want = veritysetup_format(&bin, &dir.path("data"), &dir.path("hash"), &p);
        let mut ours = Cursor::new(old);
        let out = dmverity::format(&data[..], &mut ours, &p).unwrap();
        assert_eq!(out.root_hash().to_hex(), want, "{p:?}");
        assert!(
            ours.into_inner() == std::fs::read(dir.path("hash")).unwrap(),
            "{p:?}"
        );
    }
}

/// Every hash algorithm, in both formats, with 512- and 4096-byte hash
/// blocks, over trees of one, two and three levels: the same hash device
/// as `veritysetup format --hash NAME`, byte for byte (superblock included),
/// and our verifier takes theirs and refuses it after one flipped data bit.
/// OpenSSL's spellings (`ripemd160`, `blake2b512`, `blake2s256`) give the
/// same tree; the superblock then holds that spelling, which we read.
#[test]
fn dmverity_every_hash_matches_veritysetup() {
    let Some(bin) = require(Tool::Veritysetup, "dmverity_every_hash_matches_veritysetup") else {
        return;
    };
    let dir = TempDir::new("every-hash");
    let data_f = dir.path("data");
    let hash_f = dir.path("hash");
    let uuid: [u8; 16] = random_bytes(16, 11).try_into().unwrap();
    let mut cases = 0;
    for (ai, &hash) in HashAlg::ALL.iter().enumerate() {
        for format in [0, 1] {
            for (dbs, hbs) in [(4096u32, 512u32), (512, 4096)] {
                let p = dmverity::Params {
                    hash,
                    format,
                    data_block_size: dbs,
                    hash_block_size: hbs,
                    salt: random_bytes(1 + ai * 7, ai as u64),
                    uuid,
                    superblock: hbs == 512,
                    ..Default::default()
                };
                let per = 1usize << (hbs as usize / hash.digest_len()).ilog2();
                let blocks = if hbs == 512 {
                    vec![1, per, per + 1, per * per + 1]
                } else {
                    vec![2, per + 1]
                };
                for (bi, n) in blocks.into_iter().enumerate() {
                    let data = random_bytes(n * dbs as usize, (ai * 100 + bi) as u64);
                    std::fs::write(&data_f, &data).unwrap();
                    let _ = std::fs::remove_file(&hash_f);
                    let want = veritysetup_format(&bin, &data_f, &hash_f, &p);
                    let theirs = std::fs::read(&hash_f).unwrap();
                    let mut ours = Cursor::new(Vec::new());
                    let out = dmverity::format(&data[..], &mut ours, &p).unwrap();
                    let what = format!("{hash} format {format} {dbs}/{hbs}, {n} blocks");
                    assert_eq!(out.root_hash().to_hex(), want, "{what}");
                    assert!(
                        ours.get_ref() == &theirs,
                        "hash device bytes differ, {what}"
                    );
                    let root = out.root_hash();
                    dmverity::verify(Cursor::new(&data), Cursor::new(&theirs), &p, &root)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    let mut bad = data.clone();
                    bad[data.len() / 2] ^= 0x10;
                    let err = dmverity::verify(Cursor::new(&bad), Cursor::new(&theirs), &p, &root)
                        .unwrap_err();
                    assert!(
                        matches!(err, mdu_verity::Error::CorruptDataBlock { .. }),
                        "{what}: {err}"
                    );
                    cases += 1;
                }
            }
        }
    }
    // OpenSSL's names for three of them: the same tree; the superblock
    // says the alias, and reading it gives the same algorithm.
    for (alias, hash) in [
        ("ripemd160", HashAlg::Rmd160),
        ("blake2b512", HashAlg::Blake2b512),
        ("blake2s256", HashAlg::Blake2s256),
    ] {
        let p = dmverity::Params {
            hash,
            salt: random_bytes(32, 99),
            uuid,
            ..Default::default()
        };
        let data = random_bytes(300 * 4096, 98);
        std::fs::write(&data_f, &data).unwrap();
        let _ = std::fs::remove_file(&hash_f);
        let want = veritysetup_format_named(&bin, &data_f, &hash_f, &p, alias);
        let theirs = std::fs::read(&hash_f).unwrap();
        let mut ours = Cursor::new(Vec::new());
        let out = dmverity::format(&data[..], &mut ours, &p).unwrap();
        assert_eq!(out.root_hash().to_hex(), want, "{alias}");
        assert!(
            ours.get_ref()[512..] == theirs[512..],
            "{alias}: tree bytes differ"
        );
        let sb = dmverity::Superblock::read_from(Cursor::new(&theirs), 0).unwrap();
        assert_eq!(sb.hash, hash, "{alias}");
        cases += 1;
    }
    eprintln!("{cases} hash devices matched veritysetup format across every hash algorithm");
}
