//! The tree builder against a plain, independent model written straight
//! from the format descriptions (one block at a time through `sha2`), over
//! random sizes and parameters.

use std::io::Cursor;

use mdu_verity::{HashAlg, dmverity, fsverity};
use proptest::prelude::*;
use sha2::Digest as _;

fn h(alg: HashAlg, parts: &[&[u8]]) -> Vec<u8> {
    match alg {
        HashAlg::Sha256 => {
            let mut s = sha2::Sha256::new();
            parts.iter().for_each(|p| s.update(p));
            s.finalize().to_vec()
        }
        HashAlg::Sha512 => {
            let mut s = sha2::Sha512::new();
            parts.iter().for_each(|p| s.update(p));
            s.finalize().to_vec()
        }
    }
}

/// Levels (level 0 first) and root of a tree whose blocks are hashed by
/// `hash_block`; `blocks` are the (already padded) data blocks.
fn model_tree(
    blocks: Vec<Vec<u8>>,
    hbs: usize,
    hash_block: &dyn Fn(&[u8]) -> Vec<u8>,
) -> (Vec<Vec<u8>>, Vec<u8>) {
    let mut digests: Vec<Vec<u8>> = blocks.iter().map(|b| hash_block(b)).collect();
    let mut levels = Vec::new();
    if digests.len() == 1 {
        return (levels, digests.remove(0));
    }
    loop {
        let mut level = digests.concat();
        level.resize(level.len().div_ceil(hbs) * hbs, 0);
        digests = level.chunks(hbs).map(hash_block).collect();
        levels.push(level);
        if digests.len() == 1 {
            return (levels, digests.remove(0));
        }
    }
}

/// `data` cut at the given fractions of its length (sorted, possibly empty
/// pieces), as the items of a chunk iterator.
fn pieces<'a>(data: &'a [u8], fracs: &[u16]) -> Vec<std::io::Result<&'a [u8]>> {
    let mut cuts: Vec<usize> = fracs
        .iter()
        .map(|&f| usize::from(f) * data.len() / 65535)
        .collect();
    cuts.sort_unstable();
    cuts.push(data.len());
    let mut out = Vec::new();
    let mut at = 0;
    for c in cuts {
        out.push(Ok(&data[at..c]));
        at = c;
    }
    out
}

fn data_of(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| ((i * 131) >> 3) as u8 ^ seed).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 96 }))]

    #[test]
    fn fsverity_matches_model(
        len in 0usize..70_000,
        bs_log in 9u32..=13,
        salt in proptest::collection::vec(any::<u8>(), 0..=32),
        sha512 in any::<bool>(),
        seed in any::<u8>(),
        cuts in proptest::collection::vec(any::<u16>(), 0..8),
    ) {
        let alg = if sha512 { HashAlg::Sha512 } else { HashAlg::Sha256 };
        let bs = 1usize << bs_log;
        let data = data_of(len, seed);
        let mut padded_salt = salt.clone();
        padded_salt.resize(salt.len().div_ceil(alg.input_block_len()) * alg.input_block_len(), 0);
        let hash_block = |b: &[u8]| h(alg, &[&padded_salt, b]);
        let (levels, root) = if len == 0 {
            (Vec::new(), vec![0; alg.digest_len()])
        } else {
            let blocks = data.chunks(bs).map(|c| { let mut v = c.to_vec(); v.resize(bs, 0); v }).collect();
            model_tree(blocks, bs, &hash_block)
        };
        let mut desc = vec![0u8; 256];
        desc[0] = 1;
        desc[1] = if sha512 { 2 } else { 1 };
        desc[2] = bs_log as u8;
        desc[3] = salt.len() as u8;
        desc[8..16].copy_from_slice(&(len as u64).to_le_bytes());
        desc[16..16 + root.len()].copy_from_slice(&root);
        desc[80..80 + salt.len()].copy_from_slice(&salt);

        let p = fsverity::Params { hash: alg, block_size: bs as u32, salt };
        let m = fsverity::measure(&data[..], &p).unwrap();
        prop_assert_eq!(m.root_hash().as_bytes().to_vec(), root.clone());
        prop_assert_eq!(&m.descriptor()[..], &desc[..]);
        prop_assert_eq!(m.digest().digest().as_bytes().to_vec(), h(alg, &[&desc]));
        let tree: Vec<u8> = levels.iter().rev().flatten().copied().collect();
        prop_assert_eq!(m.tree().to_root_first(), tree);
        // The in-memory path hashes the same blocks where they lie.
        let b = fsverity::measure_bytes(&data, &p).unwrap();
        prop_assert_eq!(b.digest(), m.digest());
        prop_assert_eq!(b.descriptor(), m.descriptor());
        prop_assert_eq!(b.tree().to_root_first(), m.tree().to_root_first());
        // And in pieces cut anywhere, blocks straddling the cuts.
        let c = fsverity::measure_chunks(pieces(&data, &cuts), &p).unwrap();
        prop_assert_eq!(c.digest(), m.digest());
        prop_assert_eq!(c.tree().to_root_first(), m.tree().to_root_first());
    }

    #[test]
    fn dmverity_matches_model(
        blocks in 1usize..300,
        extra in 0usize..512,
        dbs_log in 9u32..=12,
        hbs_log in 9u32..=12,
        salt in proptest::collection::vec(any::<u8>(), 0..=256),
        format in 0u32..=1,
        sha512 in any::<bool>(),
        superblock in any::<bool>(),
        offset_sectors in 0u64..20,
        seed in any::<u8>(),
        cuts in proptest::collection::vec(any::<u16>(), 0..8),
    ) {
        let alg = if sha512 { HashAlg::Sha512 } else { HashAlg::Sha256 };
        let (dbs, hbs) = (1usize << dbs_log, 1usize << hbs_log);
        let data = data_of(blocks * dbs + extra.min(dbs - 1), seed);
        let hash_block = |b: &[u8]| if format == 1 { h(alg, &[&salt, b]) } else { h(alg, &[b, &salt]) };
        let (levels, root) = model_tree(data.chunks_exact(dbs).map(<[u8]>::to_vec).collect(), hbs, &hash_block);

        let p = dmverity::Params {
            hash: alg,
            data_block_size: dbs as u32,
            hash_block_size: hbs as u32,
            salt,
            format,
            superblock,
            hash_offset: offset_sectors * 512,
            ..Default::default()
        };
        let mut dev = Cursor::new(Vec::new());
        let out = dmverity::format(&data[..], &mut dev, &p).unwrap();
        prop_assert_eq!(out.root_hash().as_bytes().to_vec(), root.clone());
        prop_assert_eq!(out.data_blocks(), blocks as u64);
        let start = p.hash_start_block() as usize * hbs;
        let tree: Vec<u8> = levels.iter().rev().flatten().copied().collect();
        let dev = dev.into_inner();
        // No tree (one data block): nothing is written at `start`.
        prop_assert_eq!(dev.get(start..).unwrap_or(&[]), &tree[..]);
        if superblock {
            let sb = dmverity::Superblock::read_from(Cursor::new(&dev), p.hash_offset).unwrap();
            prop_assert_eq!(sb, p.superblock_for(blocks as u64));
        }
        dmverity::verify(Cursor::new(&data), Cursor::new(&dev), &p, &out.root_hash()).unwrap();

        // The in-memory path: the same device bytes, and with an explicit
        // block count the same result or the same error.
        let mut dev2 = Cursor::new(Vec::new());
        let out2 = dmverity::format_bytes(&data, &mut dev2, &p).unwrap();
        prop_assert_eq!(out2.root_hash(), out.root_hash());
        prop_assert_eq!(dev2.into_inner(), dev);
        for n in [blocks as u64 - 1, blocks as u64, blocks as u64 + 1, u64::MAX] {
            let q = dmverity::Params { data_blocks: Some(n), ..p.clone() };
            let mut a = Cursor::new(Vec::new());
            let mut b = Cursor::new(Vec::new());
            let ra = dmverity::format(&data[..], &mut a, &q).map(|f| f.root_hash());
            let rb = dmverity::format_bytes(&data, &mut b, &q).map(|f| f.root_hash());
            prop_assert_eq!(format!("{ra:?}"), format!("{rb:?}"), "data_blocks {}", n);
            let mut c = Cursor::new(Vec::new());
            let rc = dmverity::format_chunks(pieces(&data, &cuts), &mut c, &q).map(|f| f.root_hash());
            prop_assert_eq!(format!("{ra:?}"), format!("{rc:?}"), "chunks, data_blocks {}", n);
            let a = a.into_inner();
            prop_assert_eq!(&a, &b.into_inner());
            prop_assert_eq!(&a, &c.into_inner());
        }
        // A failing piece stops the work, comes back as an I/O error and
        // leaves the hash device untouched.
        let mut broken = pieces(&data, &cuts);
        let at = usize::from(seed) % broken.len();
        broken.insert(at, Err(std::io::Error::other("window lost")));
        let mut d = Cursor::new(vec![7u8; 3]);
        let r = dmverity::format_chunks(broken, &mut d, &p);
        prop_assert!(matches!(r, Err(mdu_verity::Error::Io(_))), "{:?}", r);
        prop_assert_eq!(d.into_inner(), vec![7u8; 3]);
    }
}
