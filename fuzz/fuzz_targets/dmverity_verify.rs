//! dm-verity verification of arbitrarily corrupted hash areas, data and
//! superblocks: always an answer (never a panic or a hang), a clean device
//! always verifies, and any change to the data is always caught.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mdu_verity::dmverity::{self, Params, Superblock};
use mdu_verity::{Digest, HashAlg};

fuzz_target!(|data: &[u8]| {
    if data.len() < 6 {
        return;
    }
    // Arbitrary bytes as a superblock: parsed or refused.
    let _ = Superblock::parse(data);
    let _ = Superblock::read_from(Cursor::new(data), u64::from(data[0] & 1) * 512);

    let blocks = usize::from(data[0] % 40) + 1;
    let params = Params {
        hash: HashAlg::Sha256,
        data_block_size: 512,
        hash_block_size: 512 << (data[1] & 1),
        salt: data[2..2 + usize::from(data[1] >> 1 & 3)].to_vec(),
        format: u32::from(data[1] >> 3 & 1),
        superblock: data[1] & 0x10 != 0,
        uuid: [data[2]; 16],
        hash_offset: 0,
        data_blocks: None,
        backend: None,
    };
    let dev: Vec<u8> = (0..blocks * 512).map(|i| (i as u8) ^ data[3]).collect();
    let mut hash = Cursor::new(Vec::new());
    let formatted = dmverity::format(&dev[..], &mut hash, &params).expect("valid parameters");
    let root = formatted.root_hash();
    dmverity::verify(
        Cursor::new(&dev),
        Cursor::new(hash.get_ref()),
        &params,
        &root,
    )
    .expect("a clean device verifies");

    // Corrupt: each following 3-byte group flips bits at a position.
    let mut bad_dev = dev.clone();
    let mut bad_hash = hash.into_inner();
    for g in data[4..].chunks_exact(3) {
        let pos = usize::from(u16::from_le_bytes([g[0], g[1]]));
        let flip = g[2] | 1;
        if g[0] & 1 == 0 && !bad_hash.is_empty() {
            let p = pos % bad_hash.len();
            bad_hash[p] ^= flip;
        } else {
            let p = pos % bad_dev.len();
            bad_dev[p] ^= flip;
        }
    }
    let r = dmverity::verify(
        Cursor::new(&bad_dev),
        Cursor::new(&bad_hash),
        &params,
        &root,
    );
    if bad_dev != dev {
        assert!(r.is_err(), "corrupted data verified");
    }
    // A truncated hash area or a root of the wrong length is an error.
    let half = &bad_hash[..bad_hash.len() / 2];
    let _ = dmverity::verify(Cursor::new(&dev), Cursor::new(half), &params, &root);
    let short_root = Digest::from_slice(&root.as_bytes()[..31]);
    assert!(
        dmverity::verify(
            Cursor::new(&dev),
            Cursor::new(&bad_hash),
            &params,
            &short_root
        )
        .is_err()
    );
    // Verify a sub-range, including ranges past the end.
    let start = u64::from(data[5]) % 50;
    let _ = dmverity::verify_range(
        Cursor::new(&bad_dev),
        Cursor::new(&bad_hash),
        &params,
        &root,
        start,
        3,
    );
});
