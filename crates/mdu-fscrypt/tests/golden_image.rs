//! A kernel-made image read offline on every machine: a 1 MiB ext4 image
//! (1 KiB blocks) whose tree the running kernel encrypted under five
//! policies (v2 AES-256-XTS / AES-256-CTS with per-file keys,
//! IV_INO_LBLK_64, IV_INO_LBLK_32 and 512-byte data units; v1), beside
//! unencrypted and inline files, is committed in `tests/data/fscrypt-ext4`
//! with what the kernel showed of it (`golden.json`: every path, type,
//! mode, size, SHA-256 of the contents, symlink target, and the no-key
//! names and targets shown without the keys) and its three test keys.
//! `crates/mdu-testkit/scripts/fscrypt_golden_image.py make` regenerates
//! all of it (as root); `tests/kernel.rs` does the same work with fresh
//! random trees where the kernel is at hand.
//!
//! `image.nz` is the image without its all-zero blocks (see [`expand`]).

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};

use mdu_core::testing::sample;
use mdu_fscrypt::ext4::{self, ROOT_INO};
use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::policy::KeySpec;
use mdu_fscrypt::volume::{Keyring, NameForm, NodeKind, Volume, VolumeError};
use serde_json::Value;
use sha2::{Digest, Sha256};

const IMAGE: &[u8] = include_bytes!("data/fscrypt-ext4/image.nz");
const GOLDEN: &str = include_str!("data/fscrypt-ext4/golden.json");
const KEY_V2_A: &[u8] = include_bytes!("data/fscrypt-ext4/v2-a.key");
const KEY_V2_B: &[u8] = include_bytes!("data/fscrypt-ext4/v2-b.key");
const KEY_V1: &[u8] = include_bytes!("data/fscrypt-ext4/v1.key");
/// The descriptor the v1 key was added under.
const V1_DESCRIPTOR: [u8; 8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef];

/// The raw image from `image.nz`: the magic `MDUZERO1`, the block size
/// (u32) and the image size (u64, little-endian), a bitmap of the blocks
/// stored (bit `i % 8` of byte `i / 8`), then those blocks in order; the
/// others are zeros.
fn expand(nz: &[u8]) -> Vec<u8> {
    assert_eq!(&nz[..8], b"MDUZERO1", "image.nz: magic");
    let bs = u32::from_le_bytes(nz[8..12].try_into().unwrap()) as usize;
    let size = u64::from_le_bytes(nz[12..20].try_into().unwrap()) as usize;
    assert!(
        bs > 0 && size.is_multiple_of(bs),
        "image.nz: sizes {bs} {size}"
    );
    let count = size / bs;
    let (bitmap, mut stored) = nz[20..].split_at(count.div_ceil(8));
    let mut image = vec![0u8; size];
    for (i, block) in image.chunks_exact_mut(bs).enumerate() {
        if bitmap[i / 8] >> (i % 8) & 1 == 1 {
            let (this, rest) = stored.split_at(bs);
            block.copy_from_slice(this);
            stored = rest;
        }
    }
    assert!(
        stored.is_empty(),
        "image.nz: {} bytes left over",
        stored.len()
    );
    image
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

struct Golden {
    image: Vec<u8>,
    json: Value,
}

impl Golden {
    fn load() -> Golden {
        let json: Value = serde_json::from_str(GOLDEN).unwrap();
        let image = expand(IMAGE);
        assert_eq!(
            to_hex(&Sha256::digest(&image)),
            json["image"]["sha256"].as_str().unwrap(),
            "image.nz does not expand to the image golden.json describes"
        );
        Golden { image, json }
    }

    fn entries(&self) -> &[Value] {
        self.json["entries"].as_array().unwrap()
    }

    /// The golden entry at `path`.
    fn entry(&self, path: &str) -> &Value {
        self.entries()
            .iter()
            .find(|e| e["path"] == path)
            .unwrap_or_else(|| panic!("golden.json has no {path}"))
    }

    fn ino(&self, path: &str) -> u32 {
        self.entry(path)["ino"].as_u64().unwrap() as u32
    }

    /// Whether `path` is a policy directory or lies under one.
    fn encrypted(&self, path: &str) -> bool {
        let top = path.split('/').next().unwrap();
        self.json["policies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["path"] == top)
    }
}

fn key(raw: &[u8]) -> MasterKey {
    MasterKey::new(raw).unwrap()
}

fn all_keys() -> Keyring {
    let mut keys = Keyring::new();
    keys.add(key(KEY_V2_A));
    keys.add(key(KEY_V2_B));
    keys.add_v1(V1_DESCRIPTOR, key(KEY_V1));
    keys
}

/// The byte offset of inode `ino` in `image` (read from the group
/// descriptors, as the kernel finds it).
fn inode_offset(vol: &Volume<&[u8]>, image: &[u8], ino: u32) -> usize {
    let sb = vol.ext4().superblock();
    let bs = sb.block_size as usize;
    let group = ((ino - 1) / sb.inodes_per_group) as usize;
    let desc = (sb.first_data_block as usize + 1) * bs + group * sb.desc_size as usize;
    let word = |at: usize| u32::from_le_bytes(image[at..at + 4].try_into().unwrap()) as usize;
    let mut table = word(desc + 0x08);
    if sb.desc_size >= 64 {
        table |= word(desc + 0x28) << 32;
    }
    table * bs + ((ino - 1) % sb.inodes_per_group) as usize * sb.inode_size as usize
}

#[test]
fn the_keys_are_the_ones_the_kernel_was_given() {
    let g = Golden::load();
    let ids: BTreeMap<&str, &str> = g.json["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| Some((k["name"].as_str()?, k["identifier"].as_str()?)))
        .collect();
    assert_eq!(key(KEY_V2_A).identifier().to_string(), ids["v2-a"]);
    assert_eq!(key(KEY_V2_B).identifier().to_string(), ids["v2-b"]);
    let v1 = g.json["keys"].as_array().unwrap().iter();
    let v1 = v1
        .filter_map(|k| k["descriptor"].as_str())
        .collect::<Vec<_>>();
    assert_eq!(v1, [to_hex(&V1_DESCRIPTOR)]);
}

/// The whole tree, walked and read with the keys, is what the kernel
/// showed: the same paths and nothing more, and for each its inode, mode,
/// type, size, modification time, blocks, contents and target; each
/// policy directory carries the policy it was given.
#[test]
fn every_entry_reads_as_the_kernel_showed_it_with_the_keys() {
    let g = Golden::load();
    let vol = Volume::open(&g.image[..], all_keys()).unwrap();
    let bs = u64::from(vol.ext4().block_size());
    assert_eq!(bs, g.json["image"]["block_size"].as_u64().unwrap());
    let tree = vol.walk(ROOT_INO).unwrap();
    let walked: BTreeMap<String, usize> = (1..tree.nodes.len())
        .map(|i| (String::from_utf8(tree.path(i)).unwrap(), i))
        .collect();
    let golden: BTreeSet<&str> = g
        .entries()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        walked.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        golden,
        "the paths walked are not the paths the kernel listed"
    );
    let (mut files, mut bytes, mut links, mut dirs) = (0, 0, 0, 0);
    for e in g.entries() {
        let path = e["path"].as_str().unwrap();
        let node = &tree.nodes[walked[path]];
        assert_eq!(u64::from(node.ino), e["ino"].as_u64().unwrap(), "{path}");
        assert_eq!(vol.lookup(path.as_bytes()).unwrap(), node.ino, "{path}");
        let inode = vol.inode(node.ino).unwrap();
        assert_eq!(u64::from(inode.mode), e["mode"].as_u64().unwrap(), "{path}");
        assert_eq!(inode.is_encrypted(), g.encrypted(path), "{path}");
        match e["type"].as_str().unwrap() {
            "file" => {
                assert_eq!(node.kind, NodeKind::File, "{path}");
                assert_eq!(inode.size, e["size"].as_u64().unwrap(), "{path}");
                let ns =
                    i128::from(inode.mtime.secs) * 1_000_000_000 + i128::from(inode.mtime.nsecs);
                assert_eq!(ns, i128::from(e["mtime_ns"].as_i64().unwrap()), "{path}");
                let contents = vol.contents(&inode).unwrap();
                let data = contents.read_to_vec().unwrap();
                assert_eq!(
                    to_hex(&Sha256::digest(&data)),
                    e["sha256"].as_str().unwrap(),
                    "{path}: contents"
                );
                // A block at a time, as a reader of a range does: the
                // same bytes, holes included.
                let mut pieces = Vec::new();
                let mut block = vec![0u8; bs as usize];
                for b in 0..inode.size.div_ceil(bs) {
                    let n = contents.read(b, &mut block).unwrap();
                    pieces.extend_from_slice(&block[..n]);
                }
                assert!(pieces == data, "{path}: read a block at a time");
                // The kernel counts one sector for inline data (so that
                // tools do not take the file for a sparse one).
                if !inode.has_inline_data() {
                    assert_eq!(inode.blocks, e["blocks"].as_u64().unwrap(), "{path}");
                    // The blocks counted are the data runs'.
                    let runs: u64 = contents.data_runs().iter().map(|r| r.1).sum();
                    assert_eq!(runs * bs / 512, inode.blocks, "{path}: data runs");
                }
                files += 1;
                bytes += data.len();
            }
            "symlink" => {
                assert_eq!(node.kind, NodeKind::Symlink, "{path}");
                let target = e["target"].as_str().unwrap().as_bytes();
                assert_eq!(tree.target(node.ino), Some(target), "{path}");
                assert_eq!(vol.read_link(&inode).unwrap(), target, "{path}");
                links += 1;
            }
            "dir" => {
                assert_eq!(node.kind, NodeKind::Dir, "{path}");
                dirs += 1;
            }
            other => panic!("{path}: type {other}"),
        }
    }
    for p in g.json["policies"].as_array().unwrap() {
        let path = p["path"].as_str().unwrap();
        let inode = vol.inode(g.ino(path)).unwrap();
        let ctx = vol.context(&inode).unwrap().unwrap();
        let policy = ctx.policy();
        let got = [
            policy.version(),
            policy.contents().as_u8(),
            policy.filenames().as_u8(),
            policy.flags().bits(),
            policy.log2_data_unit_size(),
        ];
        let want = [
            "version",
            "contents_mode",
            "filenames_mode",
            "flags",
            "log2_data_unit_size",
        ]
        .map(|f| p[f].as_u64().unwrap() as u8);
        assert_eq!(got, want, "{path}: policy");
    }
    // The sparse file has holes (between its runs and at its end).
    let sparse = vol.inode(g.ino("v2/sparse")).unwrap();
    let runs = vol.contents(&sparse).unwrap().data_runs();
    assert!(
        runs.len() == 2 && runs[1].0 > runs[0].1 && runs[1].0 + runs[1].1 < 16,
        "v2/sparse: {runs:?}"
    );
    // The indexed directory is one.
    assert!(vol.inode(g.ino("v2/many")).unwrap().is_indexed());
    assert!(vol.inode(g.ino("v1")).unwrap().is_indexed());
    println!(
        "{} entries equal to the kernel's: {files} files ({bytes} bytes), {links} symlinks, {dirs} directories",
        g.entries().len()
    );
    assert!(
        files > 80 && links >= 7 && dirs >= 14,
        "too little compared"
    );
}

/// Without the keys, every name and symlink target is the no-key form the
/// kernel showed, a lookup by it finds the same inode, unencrypted files
/// still read, and encrypted contents are refused.
#[test]
fn without_the_keys_names_and_targets_are_the_kernels_no_key_forms() {
    let g = Golden::load();
    let vol = Volume::open(&g.image[..], Keyring::new()).unwrap();
    let mut children: BTreeMap<u32, BTreeSet<Vec<u8>>> = BTreeMap::new();
    let mut nokey = 0;
    for e in g.entries() {
        let path = e["path"].as_str().unwrap();
        let shown = e["nokey_path"].as_str().unwrap();
        let ino = e["ino"].as_u64().unwrap() as u32;
        assert_eq!(vol.lookup(shown.as_bytes()).unwrap(), ino, "{path}");
        let (parent, name) = shown.rsplit_once('/').unwrap_or(("", shown));
        let parent = vol.lookup(parent.as_bytes()).unwrap();
        children
            .entry(parent)
            .or_default()
            .insert(name.as_bytes().to_vec());
        let inode = vol.inode(ino).unwrap();
        match e["type"].as_str().unwrap() {
            "symlink" => {
                let target = e["nokey_target"].as_str().unwrap();
                assert_eq!(vol.read_link(&inode).unwrap(), target.as_bytes(), "{path}");
            }
            "file" if g.encrypted(path) => {
                assert_eq!(
                    vol.contents(&inode).unwrap_err(),
                    VolumeError::NoKey { ino },
                    "{path}"
                );
            }
            "file" => {
                let data = vol.contents(&inode).unwrap().read_to_vec().unwrap();
                assert_eq!(
                    to_hex(&Sha256::digest(&data)),
                    e["sha256"].as_str().unwrap(),
                    "{path}"
                );
            }
            _ => {}
        }
    }
    // Each directory lists exactly those names.
    for (dir, want) in children {
        let listed = vol.list(dir).unwrap();
        nokey += listed.iter().filter(|e| e.form == NameForm::NoKey).count();
        let got: BTreeSet<Vec<u8>> = listed
            .into_iter()
            .filter(|e| !(e.form == NameForm::Clear && (e.name == b"." || e.name == b"..")))
            .map(|e| e.name)
            .collect();
        assert_eq!(got, want, "directory inode {dir}");
    }
    println!("{nokey} no-key names equal to the kernel's");
    assert!(nokey > 80, "too few no-key names compared");
}

/// A key not given is named, with the keys that were; a wrong v1 key
/// (which nothing ties to its descriptor) is refused through the names it
/// decrypts; nothing of an encrypted directory is read with either.
#[test]
fn a_missing_or_wrong_key_is_an_error_not_wrong_output() {
    let g = Golden::load();
    let id = |raw: &[u8]| key(raw).identifier();
    let spec = |raw: &[u8]| KeySpec::V2 {
        identifier: id(raw).0,
    };
    // Key B alone, and a key the image never saw: v2/ needs key A.
    let stranger = [0x55u8; 64];
    for given in [KEY_V2_B, &stranger] {
        let mut keys = Keyring::new();
        keys.add(key(given));
        let vol = Volume::open(&g.image[..], keys).unwrap();
        let v2 = g.ino("v2");
        let want = VolumeError::KeyMissing {
            ino: v2,
            wanted: spec(KEY_V2_A),
            given: vec![spec(given)],
        };
        assert_eq!(vol.list(v2).unwrap_err(), want);
        assert_eq!(vol.lookup(b"v2/sub/inner").unwrap_err(), want);
        let file = vol.inode(g.ino("v2/file")).unwrap();
        assert!(matches!(
            vol.contents(&file).unwrap_err(),
            VolumeError::KeyMissing { .. }
        ));
        let message = vol.walk(ROOT_INO).unwrap_err().to_string();
        assert!(
            message.contains(&id(KEY_V2_A).to_string()) && message.contains(&id(given).to_string()),
            "{message}"
        );
    }
    // Wrong v1 keys under the right descriptor.
    let wrong: [Vec<u8>; 4] = [
        vec![0x55; 64],
        KEY_V2_A.to_vec(),
        KEY_V1.iter().rev().copied().collect(),
        KEY_V1.iter().map(|b| b ^ 1).collect(),
    ];
    for (n, raw) in wrong.iter().enumerate() {
        let mut keys = Keyring::new();
        keys.add_v1(V1_DESCRIPTOR, key(raw));
        let vol = Volume::open(&g.image[..], keys).unwrap();
        for path in ["v1", "v1/sub"] {
            let err = vol.list(g.ino(path)).unwrap_err();
            assert!(
                matches!(
                    err,
                    VolumeError::Crypto {
                        error: mdu_fscrypt::Error::InvalidName,
                        ..
                    }
                ),
                "wrong v1 key {n}, {path}: {err:?}"
            );
        }
        let file = vol.inode(g.ino("v1/file")).unwrap();
        assert!(vol.contents(&file).is_err(), "wrong v1 key {n}: contents");
        let link = vol.inode(g.ino("v1/link")).unwrap();
        assert!(vol.read_link(&link).is_err(), "wrong v1 key {n}: symlink");
        assert!(vol.walk(g.ino("v1")).is_err(), "wrong v1 key {n}: walk");
    }
}

/// Flips in the structures the reader checks: the superblock, a group
/// descriptor, an inode (its extent header, its encryption context), an
/// extent, a directory block; and a truncated image. Each is a typed
/// error naming what is wrong, from the first call that meets it.
#[test]
fn a_flipped_byte_in_a_checked_structure_is_a_typed_error() {
    let g = Golden::load();
    let vol = Volume::open(&g.image[..], all_keys()).unwrap();
    let bs = vol.ext4().block_size() as usize;
    let file = g.ino("v2/size-3089");
    let file_at = inode_offset(&vol, &g.image, file);
    // i_block (0x28): the extent header, then the first extent (12 bytes
    // in: ee_block, ee_len, ee_start_hi, ee_start_lo).
    assert_eq!(g.image[file_at + 0x28..file_at + 0x2a], [0x0a, 0xf3]);
    let inner = g.ino("v2/sub");
    let inner_block = vol.ext4().extents(&vol.inode(inner).unwrap()).unwrap()[0].physical;
    let ctx = vol
        .ext4()
        .encryption_context(&vol.inode(file).unwrap())
        .unwrap()
        .unwrap();
    let ctx_at = file_at
        + g.image[file_at..file_at + vol.ext4().superblock().inode_size as usize]
            .windows(ctx.len())
            .position(|w| w == ctx)
            .expect("the context in the inode");
    let gdt = (vol.ext4().superblock().first_data_block as usize + 1) * bs;
    drop(vol);

    type Check = fn(&Result<(), VolumeError>) -> bool;
    let cases: [(&str, usize, u8, Check); 8] = [
        ("superblock s_magic", 1024 + 0x38, 0xff, |r| {
            matches!(
                r,
                Err(VolumeError::Ext4(ext4::Ext4Error::Superblock {
                    field: "s_magic",
                    ..
                }))
            )
        }),
        ("superblock s_log_block_size", 1024 + 0x18, 0x10, |r| {
            matches!(
                r,
                Err(VolumeError::Ext4(ext4::Ext4Error::Superblock {
                    field: "s_log_block_size",
                    ..
                }))
            )
        }),
        ("superblock s_inodes_per_group", 1024 + 0x2b, 0x40, |r| {
            matches!(
                r,
                Err(VolumeError::Ext4(ext4::Ext4Error::Superblock { .. }))
            )
        }),
        ("group descriptor bg_inode_table", gdt + 0x0a, 0x10, |r| {
            matches!(
                r,
                Err(VolumeError::Ext4(ext4::Ext4Error::Group {
                    field: "bg_inode_table",
                    ..
                }))
            )
        }),
        ("inode extent header magic", file_at + 0x28, 0xff, |r| {
            matches!(
                r,
                Err(VolumeError::Ext4(ext4::Ext4Error::Inode {
                    field: "extent header magic",
                    ..
                }))
            )
        }),
        ("extent ee_start_hi", file_at + 0x28 + 12 + 6, 0x01, |r| {
            matches!(
                r,
                Err(VolumeError::Ext4(ext4::Ext4Error::Inode {
                    field: "extent physical block",
                    ..
                }))
            )
        }),
        ("encryption context version", ctx_at, 0xff, |r| {
            matches!(r, Err(VolumeError::Context { error: Some(_), .. }))
        }),
        (
            "directory block rec_len",
            inner_block as usize * bs + 4,
            0x80,
            |r| {
                matches!(
                    r,
                    Err(VolumeError::Ext4(ext4::Ext4Error::Inode {
                        field: "directory entry rec_len",
                        ..
                    }))
                )
            },
        ),
    ];
    for (what, at, mask, check) in cases {
        let mut image = g.image.clone();
        image[at] ^= mask;
        let r = Volume::open(&image[..], all_keys()).and_then(|vol| {
            let tree = vol.walk(ROOT_INO)?;
            read_every_file(&vol, &tree)
        });
        assert!(check(&r), "{what} (byte {at} ^ {mask:#x}): {r:?}");
        println!("{what}: {}", r.unwrap_err());
    }
    // Cut after the inode tables: the first read past the end says so.
    let cut = &g.image[..g.image.len() / 2];
    let r = Volume::open(cut, all_keys()).and_then(|vol| vol.walk(ROOT_INO).map(drop));
    assert!(
        matches!(
            r,
            Err(VolumeError::Ext4(ext4::Ext4Error::OutOfImage { .. }))
        ),
        "cut in half: {r:?}"
    );
}

fn read_every_file<R: ext4::ReadAt>(
    vol: &Volume<R>,
    tree: &mdu_fscrypt::volume::Tree,
) -> Result<(), VolumeError> {
    for n in tree.nodes.iter().filter(|n| n.kind == NodeKind::File) {
        vol.contents(&vol.inode(n.ino)?)?.read_to_vec()?;
    }
    Ok(())
}

/// What a flipped byte can reach.
#[derive(Clone, Copy)]
enum Reach {
    /// The superblock or a group descriptor: everything.
    All,
    /// One inode: what it holds.
    Inode(u32),
    /// A block of one directory: its entries.
    Dir(u32),
}

/// Every byte of the metadata flipped in turn (the superblock's fields,
/// the group descriptor, the inodes of every directory and of a file and
/// a symlink of each kind, every directory block but lost+found's empty
/// ones): reading what the byte reaches with the keys, and listing every
/// directory and symlink without them, gives an answer or a typed error,
/// never a panic. (What a flip in an unchecked field gives is not
/// asserted: the reader does not verify `metadata_csum`, and a flipped
/// name or data byte decrypts to other bytes.)
#[test]
fn no_flipped_metadata_byte_makes_the_reader_panic() {
    let g = Golden::load();
    let vol = Volume::open(&g.image[..], all_keys()).unwrap();
    let sb = vol.ext4().superblock().clone();
    let bs = sb.block_size as usize;
    let gdt = (sb.first_data_block as usize + 1) * bs;
    let of_type = |t: &str| -> Vec<u32> {
        g.entries()
            .iter()
            .filter(|e| e["type"] == t)
            .map(|e| e["ino"].as_u64().unwrap() as u32)
            .collect()
    };
    let mut dirs = of_type("dir");
    dirs.push(ROOT_INO);
    let links = of_type("symlink");
    let others = [
        "readme.txt",
        "plain.bin",
        "plain-dir/note",
        "v2/size-0",
        "v2/size-3089",
        "v2/sparse",
        "v2/link-short",
        "v2/link-long",
        "v1/file",
        "v1/link",
        "lblk64/file",
        "lblk32/file",
        "du512/file",
    ]
    .map(|p| g.ino(p));
    // The superblock up to s_flags and the 64-bit fields (the rest is
    // neither read nor used).
    let mut ranges = vec![(1024, 1024 + 0x180, Reach::All)];
    ranges.push((gdt, gdt + sb.desc_size as usize, Reach::All));
    for &ino in dirs.iter().chain(&others) {
        let at = inode_offset(&vol, &g.image, ino);
        ranges.push((at, at + sb.inode_size as usize, Reach::Inode(ino)));
    }
    for &ino in &dirs {
        let inode = vol.inode(ino).unwrap();
        let mut extents = vol.ext4().extents(&inode).unwrap();
        if ino == g.ino("lost+found") {
            extents.truncate(1);
            extents[0].len = 1;
        }
        for e in extents {
            let start = e.physical as usize * bs;
            ranges.push((start, start + e.len as usize * bs, Reach::Dir(ino)));
        }
    }
    drop(vol);
    let mut image = g.image.clone();
    let (mut flips, mut refused) = (0, 0);
    // Under an emulator (CI's arm64 run) every 8th byte, which is said; the
    // reader's logic does not depend on the architecture, and the host (and
    // MDU_EXHAUSTIVE=1) flips every byte.
    let step = if sample::sampling() { 8 } else { 1 };
    let total: usize = ranges.iter().map(|(start, end, _)| end - start).sum();
    for (start, end, reach) in ranges {
        for at in (start..end).step_by(step) {
            image[at] ^= 0xff;
            let r = catch_unwind(AssertUnwindSafe(|| {
                if let Ok(vol) = Volume::open(&image[..], Keyring::new()) {
                    for &ino in &dirs {
                        let _ = vol.list(ino);
                    }
                    for &ino in &links {
                        let _ = vol.inode(ino).and_then(|i| vol.read_link(&i));
                    }
                }
                let vol = Volume::open(&image[..], all_keys())?;
                match reach {
                    Reach::All => read_every_file(&vol, &vol.walk(ROOT_INO)?),
                    Reach::Inode(ino) => {
                        let inode = vol.inode(ino)?;
                        match inode.file_type() {
                            ext4::FileType::Dir => vol.list(ino).map(drop),
                            ext4::FileType::Symlink => vol.read_link(&inode).map(drop),
                            _ => vol.contents(&inode)?.read_to_vec().map(drop),
                        }
                    }
                    Reach::Dir(ino) => vol
                        .list(ino)?
                        .iter()
                        .try_for_each(|e| vol.inode(e.ino).map(drop)),
                }
            }));
            image[at] ^= 0xff;
            match r {
                Ok(r) => refused += usize::from(r.is_err()),
                Err(_) => panic!("byte {at} flipped: the reader panicked"),
            }
            flips += 1;
        }
    }
    println!(
        "{flips} bytes of metadata flipped one at a time: {refused} refused with the keys, no panic"
    );
    if step > 1 {
        sample::note(
            "no_flipped_metadata_byte_makes_the_reader_panic",
            flips,
            total,
            "bytes of metadata flipped",
            "MDU_EMULATED=1: every 8th",
        );
    }
    assert!(flips * step > 20_000, "{flips} flips");
}
