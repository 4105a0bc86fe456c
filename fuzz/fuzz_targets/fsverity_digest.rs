//! The fs-verity file digest against a deliberately plain reference written
//! here from the on-disk rules (salt padded to the hash block and prepended
//! to every hashed block, zero-padded blocks, levels until one block, the
//! 256-byte descriptor), for both hash algorithms; and the in-memory entry
//! points (one slice, pieces cut anywhere) against the reader.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdu_verity::fsverity::{self, Params};
use mdu_verity::{HashAlg, Source};
use sha2::{Digest, Sha256, Sha512};

fn hash(alg: u8, data: &[u8]) -> Vec<u8> {
    if alg == 1 {
        Sha256::digest(data).to_vec()
    } else {
        Sha512::digest(data).to_vec()
    }
}

/// The file digest, computed the obvious way with whole-buffer hashing.
fn reference(alg: u8, block: usize, salt: &[u8], file: &[u8]) -> Vec<u8> {
    let hblk = if alg == 1 { 64 } else { 128 };
    let mut padded = salt.to_vec();
    if !salt.is_empty() {
        while padded.len() % hblk != 0 {
            padded.push(0);
        }
    }
    let salted = |b: &[u8]| {
        let mut m = padded.clone();
        m.extend_from_slice(b);
        hash(alg, &m)
    };
    let blocks_of = |bytes: &[u8]| -> Vec<Vec<u8>> {
        bytes
            .chunks(block)
            .map(|c| {
                let mut v = c.to_vec();
                v.resize(block, 0);
                v
            })
            .collect()
    };
    let dlen = if alg == 1 { 32 } else { 64 };
    let root = if file.is_empty() {
        vec![0u8; dlen]
    } else {
        let mut hashes: Vec<Vec<u8>> = blocks_of(file).iter().map(|b| salted(b)).collect();
        if hashes.len() == 1 {
            hashes.remove(0)
        } else {
            loop {
                let level = blocks_of(&hashes.concat());
                let next: Vec<Vec<u8>> = level.iter().map(|b| salted(b)).collect();
                if level.len() == 1 {
                    break next.into_iter().next().unwrap();
                }
                hashes = next;
            }
        }
    };
    let mut desc = vec![0u8; 256];
    desc[0] = 1;
    desc[1] = alg;
    desc[2] = block.trailing_zeros() as u8;
    desc[3] = salt.len() as u8;
    desc[8..16].copy_from_slice(&(file.len() as u64).to_le_bytes());
    desc[16..16 + dlen].copy_from_slice(&root);
    desc[80..80 + salt.len()].copy_from_slice(salt);
    hash(alg, &desc)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let alg = if data[0] & 1 == 0 { 1u8 } else { 2u8 };
    let block = 1024usize << (data[0] >> 1 & 3);
    let salt_len = usize::from(data[1]) % 33;
    let salt: Vec<u8> = (0..salt_len)
        .map(|i| data[2].wrapping_add(i as u8))
        .collect();
    // Files up to ~300 KiB from a short input, so multi-level trees occur.
    let len = (usize::from(u16::from_le_bytes([data[2], data[3]])) * 5) % 300_000;
    let body = &data[4..];
    let file: Vec<u8> = if body.is_empty() {
        vec![0u8; len]
    } else {
        body.iter().copied().cycle().take(len).collect()
    };
    let params = Params {
        hash: if alg == 1 {
            HashAlg::Sha256
        } else {
            HashAlg::Sha512
        },
        block_size: block as u32,
        salt: salt.clone(),
        ..Default::default()
    };
    // The reader path, checked against the reference.
    let got = fsverity::digest(Source::reader(&file[..]), &params).expect("valid parameters");
    assert_eq!(
        got.digest().as_bytes(),
        &reference(alg, block, &salt, &file)[..]
    );
    // The in-memory paths: the whole file as one slice, and in pieces cut
    // at input-chosen lengths (blocks straddle the cuts), also streamed
    // through `Hasher::update` and among other files in `digest_many`.
    let bytes = fsverity::measure(&file, &params).expect("valid parameters");
    assert_eq!(bytes.digest(), got);
    let mut pieces = Vec::new();
    let mut rest = &file[..];
    for &b in body.iter().cycle().take(64) {
        if rest.is_empty() {
            break;
        }
        let n = (usize::from(b) * 97).min(rest.len());
        let (piece, tail) = rest.split_at(n);
        pieces.push(Ok::<_, std::io::Error>(piece));
        rest = tail;
    }
    pieces.push(Ok(rest));
    let mut streamed = fsverity::Hasher::new(&params).expect("valid parameters");
    for piece in &pieces {
        if let Ok(p) = piece {
            streamed.update(p);
        }
    }
    assert_eq!(streamed.finalize().expect("valid").digest(), got);
    let chunks = fsverity::measure(Source::chunks(pieces), &params).expect("valid parameters");
    assert_eq!(chunks.digest(), got);
    let head = &file[..file.len() / 2];
    let many: Vec<_> = fsverity::digest_many(
        [
            Source::bytes(head),
            Source::bytes(&file),
            Source::reader(head),
        ],
        &params,
    )
    .map(|r| r.expect("in memory"))
    .collect();
    assert_eq!(many[1], got);
    assert_eq!(many[0], many[2]);
    assert_eq!(many[0], fsverity::digest(head, &params).expect("valid"));
});
