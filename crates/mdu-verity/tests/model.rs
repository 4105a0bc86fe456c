//! The tree builder against a plain, independent model written straight
//! from the format descriptions (one block at a time through `sha2`), over
//! random sizes and parameters.

use std::io::Cursor;

use mdu_core::testing::sample;
use mdu_verity::{HashAlg, Source, dmverity, fsverity};
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
        // The other digests (dm-verity only) are checked against
        // veritysetup (tests/interop.rs) and the dmverity_trust fuzz model.
        other => unreachable!("the model hashes with SHA-256 and SHA-512, not {other}"),
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
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { sample::proptest_cases("model.rs (tree shapes)", 96) }))]

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

        let p = fsverity::Params { hash: alg, block_size: bs as u32, salt, ..Default::default() };
        // The reader path is the reference of the others.
        let m = fsverity::measure(Source::reader(&data[..]), &p).unwrap();
        prop_assert_eq!(m.root_hash().as_bytes().to_vec(), root.clone());
        prop_assert_eq!(&m.descriptor()[..], &desc[..]);
        prop_assert_eq!(m.digest().digest().as_bytes().to_vec(), h(alg, &[&desc]));
        let tree: Vec<u8> = levels.iter().rev().flatten().copied().collect();
        prop_assert_eq!(m.tree().to_root_first(), tree);
        // The in-memory path hashes the same blocks where they lie.
        let b = fsverity::measure(&data, &p).unwrap();
        prop_assert_eq!(b.digest(), m.digest());
        prop_assert_eq!(b.descriptor(), m.descriptor());
        prop_assert_eq!(b.tree().to_root_first(), m.tree().to_root_first());
        // And in pieces cut anywhere, blocks straddling the cuts.
        let c = fsverity::measure(Source::chunks(pieces(&data, &cuts)), &p).unwrap();
        prop_assert_eq!(c.digest(), m.digest());
        prop_assert_eq!(c.tree().to_root_first(), m.tree().to_root_first());
        // Streamed through `update` in the same pieces.
        let mut h = fsverity::Hasher::new(&p).unwrap();
        for piece in pieces(&data, &cuts) {
            h.update(piece.unwrap());
        }
        let s = h.finalize().unwrap();
        prop_assert_eq!(s.digest(), m.digest());
        prop_assert_eq!(s.descriptor(), m.descriptor());
        prop_assert_eq!(s.tree().to_root_first(), m.tree().to_root_first());
        // Among other inputs, through `digest_many`.
        let others = [&data[..data.len() / 3], &data[..], &[][..]];
        let many: Vec<_> = fsverity::digest_many(others.iter().map(|d| Source::bytes(d)), &p)
            .collect::<Result<_, _>>()
            .unwrap();
        prop_assert_eq!(many[1], m.digest());
        prop_assert_eq!(many[0], fsverity::digest(Source::reader(others[0]), &p).unwrap());
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
        let out = dmverity::format(Source::reader(&data[..]), &mut dev, &p).unwrap();
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
        let out2 = dmverity::format(&data, &mut dev2, &p).unwrap();
        prop_assert_eq!(out2.root_hash(), out.root_hash());
        prop_assert_eq!(dev2.into_inner(), dev);
        for n in [blocks as u64 - 1, blocks as u64, blocks as u64 + 1, u64::MAX] {
            let q = dmverity::Params { data_blocks: Some(n), ..p.clone() };
            let mut a = Cursor::new(Vec::new());
            let mut b = Cursor::new(Vec::new());
            let ra = dmverity::format(Source::reader(&data[..]), &mut a, &q).map(|f| f.root_hash());
            let rb = dmverity::format(&data, &mut b, &q).map(|f| f.root_hash());
            prop_assert_eq!(format!("{ra:?}"), format!("{rb:?}"), "data_blocks {}", n);
            let mut c = Cursor::new(Vec::new());
            let rc = dmverity::format(Source::chunks(pieces(&data, &cuts)), &mut c, &q).map(|f| f.root_hash());
            prop_assert_eq!(format!("{ra:?}"), format!("{rc:?}"), "chunks, data_blocks {}", n);
            // Streamed through `update` in the same pieces.
            let mut e = Cursor::new(Vec::new());
            let re = dmverity::Hasher::new(&q).and_then(|mut h| {
                for piece in pieces(&data, &cuts) {
                    h.update(piece.unwrap());
                }
                h.finalize(&mut e)
            }).map(|f| f.root_hash());
            prop_assert_eq!(format!("{ra:?}"), format!("{re:?}"), "streamed, data_blocks {}", n);
            let a = a.into_inner();
            prop_assert_eq!(&a, &b.into_inner());
            prop_assert_eq!(&a, &c.into_inner());
            prop_assert_eq!(&a, &e.into_inner());
        }
        // A failing piece stops the work, comes back as an I/O error and
        // leaves the hash device untouched.
        let mut broken = pieces(&data, &cuts);
        let at = usize::from(seed) % broken.len();
        broken.insert(at, Err(std::io::Error::other("window lost")));
        let mut d = Cursor::new(vec![7u8; 3]);
        let r = dmverity::format(Source::chunks(broken), &mut d, &p);
        prop_assert!(matches!(r, Err(mdu_verity::Error::Io(_))), "{:?}", r);
        prop_assert_eq!(d.into_inner(), vec![7u8; 3]);
    }
}

/// `f` on a pool of three threads (with the `rayon` feature).
fn on_three_threads<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    #[cfg(feature = "rayon")]
    {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        pool.install(f)
    }
    #[cfg(not(feature = "rayon"))]
    f()
}

/// `data` as every kind of source, the seekable reader first (the
/// reference), pieces cut at `cuts`; `len` is told to the kinds that cannot
/// find it themselves (`None` leaves them to learn it, or fail to).
fn verify_sources<'a>(
    data: &'a [u8],
    cuts: &[u16],
    len: Option<u64>,
) -> Vec<(&'static str, Source<'a>)> {
    let tell = |s: Source<'a>| match len {
        Some(l) => s.with_len(l),
        None => s,
    };
    vec![
        ("seekable reader", Source::seekable(Cursor::new(data))),
        ("bytes", Source::bytes(data)),
        ("cursor", Cursor::new(data).into()),
        ("plain reader", tell(Source::reader(data))),
        ("chunks", tell(Source::chunks(pieces(data, cuts)))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { sample::proptest_cases("model.rs (verification)", 128) }))]

    /// Every way of handing the data to verification (bytes, a cursor, a
    /// seekable or plain reader, chunks cut anywhere), on one thread and on
    /// several, gives the same result or the same error as the seekable
    /// reader: over honest images, flipped bytes in the data, the tree or
    /// the superblock, short and long data and hash devices, ranges and
    /// pins.
    #[test]
    fn every_verify_entry_point_agrees_with_the_reader(
        blocks in 1usize..80,
        dbs_log in 9u32..=12,
        hbs_log in 9u32..=11,
        salt in proptest::collection::vec(any::<u8>(), 0..=40),
        format in 0u32..=1,
        sha512 in any::<bool>(),
        superblock in any::<bool>(),
        edit in 0u8..7,
        at in any::<u32>(),
        xor in 1u8..=255,
        range in (any::<u16>(), any::<u16>()),
        cuts in proptest::collection::vec(any::<u16>(), 0..8),
        pin_blocks in any::<bool>(),
    ) {
        let (dbs, hbs) = (1usize << dbs_log, 1usize << hbs_log);
        let alg = if sha512 { HashAlg::Sha512 } else { HashAlg::Sha256 };
        let p = dmverity::Params {
            hash: alg,
            data_block_size: dbs as u32,
            hash_block_size: hbs as u32,
            salt,
            format,
            superblock,
            ..Default::default()
        };
        let mut data = data_of(blocks * dbs + usize::from(xor), xor);
        let mut dev = Cursor::new(Vec::new());
        let root = dmverity::format(&data, &mut dev, &p).unwrap().root_hash();
        let mut hash = dev.into_inner();
        let at = at as usize;
        match edit {
            1 => { let i = at % blocks * dbs % data.len(); data[i] ^= xor }
            2 if !hash.is_empty() => { let n = hash.len(); hash[at % n] ^= xor }
            3 => data.truncate(at % (data.len() + 1)),
            4 => hash.truncate(at % (hash.len() + 1)),
            5 => data.extend_from_slice(&vec![xor; at % 5000]),
            6 if !hash.is_empty() => {
                let n = data.len();
                data[at % n] ^= xor;
                let m = hash.len();
                hash[m - 1 - at % m.min(64)] ^= xor;
            }
            _ => {}
        }
        let p = dmverity::Params { data_blocks: pin_blocks.then_some(blocks as u64), ..p };
        let n = blocks as u64;
        let start = u64::from(range.0) % n;
        let count = 1 + u64::from(range.1) % (n - start);
        let len = Some(data.len() as u64);
        type Run<'r> = dyn Fn(Source<'_>) -> Result<String, mdu_verity::Error> + Sync + 'r;
        let entry_points: Vec<(&str, Box<Run<'_>>)> = vec![
            ("verify", Box::new(|s| dmverity::verify(s, Cursor::new(&hash), &p, &root).map(|()| String::new()))),
            ("verify_range", Box::new(|s| {
                dmverity::verify_range(s, Cursor::new(&hash), &p, &root, start, count).map(|()| String::new())
            })),
            ("verify_with_superblock", Box::new(|s| {
                let pins = dmverity::Pins { data_blocks: p.data_blocks, ..Default::default() };
                dmverity::verify_with_superblock(s, Cursor::new(&hash), 0, &pins, &root).map(|q| format!("{q:?}"))
            })),
        ];
        for (name, run) in &entry_points {
            if *name == "verify_with_superblock" && !superblock {
                continue;
            }
            let want = format!("{:?}", run(Source::seekable(Cursor::new(&data))));
            for tell in [len, None] {
                for (kind, src) in verify_sources(&data, &cuts, tell) {
                    let got = format!("{:?}", run(src));
                    if tell.is_none() && (kind == "plain reader" || kind == "chunks") {
                        // Without a length, these fail only for want of it.
                        if got.contains("DataLengthUnknown") {
                            prop_assert!(p.data_blocks.is_none() && *name != "verify_with_superblock");
                            continue;
                        }
                    }
                    prop_assert_eq!(&got, &want, "{} from {} (length told: {:?})", name, kind, tell);
                }
            }
            let threaded = on_three_threads(|| format!("{:?}", run(Source::bytes(&data))));
            prop_assert_eq!(&threaded, &want, "{} on 3 threads", name);
        }
    }

    /// The streaming hashers give the one-shot result for any split of the
    /// input, down to single bytes.
    #[test]
    fn streaming_any_split_matches_one_shot(
        len in 0usize..200_000,
        sizes in proptest::collection::vec(1usize..20_000, 1..40),
        bs_log in 9u32..=13,
        seed in any::<u8>(),
    ) {
        let data = data_of(len, seed);
        let fp = fsverity::Params { block_size: 1 << bs_log, ..Default::default() };
        let dp = dmverity::Params { data_block_size: 1 << bs_log, hash_block_size: 4096, ..Default::default() };
        let mut fh = fsverity::Hasher::new(&fp).unwrap();
        let mut dh = dmverity::Hasher::new(&dp).unwrap();
        let mut rest = &data[..];
        for s in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (piece, r) = rest.split_at((*s).min(rest.len()));
            fh.update(piece);
            dh.update(piece);
            rest = r;
        }
        prop_assert_eq!(fh.len(), len as u64);
        let fm = fh.finalize().unwrap();
        let want = fsverity::measure(&data, &fp).unwrap();
        prop_assert_eq!(fm.digest(), want.digest());
        prop_assert_eq!(fm.tree().to_root_first(), want.tree().to_root_first());
        let mut a = Cursor::new(Vec::new());
        let mut b = Cursor::new(Vec::new());
        let ra = dh.finalize(&mut a).map(|f| f.root_hash());
        let rb = dmverity::format(&data, &mut b, &dp).map(|f| f.root_hash());
        prop_assert_eq!(format!("{ra:?}"), format!("{rb:?}"));
        prop_assert_eq!(a.into_inner(), b.into_inner());
    }
}
