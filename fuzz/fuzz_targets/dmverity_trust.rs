//! The dm-verity trust model under attack: an honest image, then edits an
//! attacker controls (superblock fields, truncated or extended data and
//! hash devices, flipped bytes, hash blocks copied over the data) and
//! parameters the caller pins. Whatever verification returns, `Ok` must be
//! implied by the root hash and the parameters that were used:
//!
//! * every pinned value is the one used;
//! * the data device holds every block of the shape used, and a plain
//!   reference tree, written here from the on-disk rules with whole-buffer
//!   hashing, over exactly those blocks gives the trusted root;
//! * with every parameter pinned to the truth, the blocks are the original
//!   bytes.
#![no_main]

use std::io::Cursor;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mdu_verity::dmverity::{self, Params, Pins};
use mdu_verity::{HashAlg, Source};
use sha2::{Digest, Sha256, Sha512};

/// The algorithm a fuzzed byte picks.
fn alg_of(n: u8) -> HashAlg {
    [HashAlg::Sha256, HashAlg::Sha512, HashAlg::Sha1][usize::from(n) % 3]
}

#[derive(Arbitrary, Debug)]
struct Shape {
    blocks: u8,
    log_data_block: bool,
    log_hash_block: bool,
    salt: Vec<u8>,
    chrome_os: bool,
    /// SHA-256, SHA-512 or SHA-1 (a digest that is not a power of two).
    alg: u8,
    seed: u8,
}

#[derive(Arbitrary, Debug)]
enum Edit {
    Version(u32),
    HashType(u32),
    DataBlockSize(u32),
    HashBlockSize(u32),
    DataBlocks(u64),
    SmallDataBlocks(u8),
    SaltSize(u16),
    SaltByte {
        at: u8,
        xor: u8,
    },
    Name(u8),
    TruncateData(u16),
    TruncateHash(u16),
    ExtendData(u16),
    DataByte {
        at: u16,
        xor: u8,
    },
    HashByte {
        at: u16,
        xor: u8,
    },
    /// Replace the data device by hash blocks `from..from + count`.
    HashBlocksAsData {
        from: u8,
        count: u8,
    },
}

/// A pinned value: not pinned, the truth, or a value of the attacker's
/// (or a confused caller's) choosing.
#[derive(Arbitrary, Debug)]
enum Pin<T> {
    No,
    Truth,
    Other(T),
}

#[derive(Arbitrary, Debug)]
struct Input {
    shape: Shape,
    edits: Vec<Edit>,
    hash: Pin<u8>,
    data_block_size: Pin<u32>,
    hash_block_size: Pin<u32>,
    salt: Pin<Vec<u8>>,
    format: Pin<u32>,
    data_blocks: Pin<u64>,
    /// Verify with the pins as trusted parameters, not reading the
    /// superblock (`dmverity::verify`), instead of `verify_with_superblock`.
    trusted_params: bool,
    /// How the data device is handed over: in memory, a seekable reader, a
    /// plain reader told its length, or pieces of input-chosen sizes told
    /// their length (every kind must give the same answer).
    source: u8,
}

/// The data device as the source kind `kind` picks.
fn source(data: &[u8], kind: u8) -> Source<'_> {
    let len = data.len() as u64;
    match kind % 4 {
        0 => Source::bytes(data),
        1 => Source::seekable(Cursor::new(data)),
        2 => Source::reader(data).with_len(len),
        _ => Source::chunks(data.chunks(usize::from(kind / 4) * 61 + 1).map(Ok)).with_len(len),
    }
}

fn pin<T: Clone>(p: &Pin<T>, truth: T) -> Option<T> {
    match p {
        Pin::No => None,
        Pin::Truth => Some(truth),
        Pin::Other(v) => Some(v.clone()),
    }
}

fn hash(alg: HashAlg, data: &[u8]) -> Vec<u8> {
    match alg {
        HashAlg::Sha256 => Sha256::digest(data).to_vec(),
        HashAlg::Sha1 => sha1::Sha1::digest(data).to_vec(),
        _ => Sha512::digest(data).to_vec(),
    }
}

/// The root of a dm-verity tree over `data` (whole blocks only), computed
/// the obvious way; `None` for no blocks.
fn reference_root(p: &Params, data: &[u8]) -> Option<Vec<u8>> {
    let salted = |block: &[u8]| {
        let m = if p.format == 0 {
            [block, &p.salt].concat()
        } else {
            [&p.salt, block].concat()
        };
        hash(p.hash, &m)
    };
    let dbs = p.data_block_size as usize;
    let hbs = p.hash_block_size as usize;
    let mut level: Vec<Vec<u8>> = data.chunks_exact(dbs).map(salted).collect();
    if level.is_empty() {
        return None;
    }
    while level.len() > 1 {
        // A hash block holds 2^floor(log2(hbs / digest size)) digests,
        // each in a slot of the next power of two bytes (format 1) or of
        // its own size (format 0), zeros after.
        let dl = level[0].len();
        let mut per_block = 1;
        while per_block * 2 * dl <= hbs {
            per_block *= 2;
        }
        let slot = if p.format == 1 { dl.next_power_of_two() } else { dl };
        level = level
            .chunks(per_block)
            .map(|ds| {
                let mut b = vec![0u8; hbs];
                for (i, d) in ds.iter().enumerate() {
                    b[i * slot..i * slot + dl].copy_from_slice(d);
                }
                salted(&b)
            })
            .collect();
    }
    level.pop()
}

fuzz_target!(|input: Input| {
    let s = &input.shape;
    let salt: Vec<u8> = s.salt.iter().copied().take(40).collect();
    let truth = Params {
        hash: alg_of(s.alg),
        data_block_size: 512 << u32::from(s.log_data_block),
        hash_block_size: 512 << u32::from(s.log_hash_block),
        salt,
        format: u32::from(!s.chrome_os),
        superblock: true,
        uuid: [s.seed; 16],
        hash_offset: 0,
        data_blocks: None,
        backend: None,
    };
    let blocks = usize::from(s.blocks % 48) + 1;
    let honest: Vec<u8> = (0..blocks * truth.data_block_size as usize)
        .map(|i| (i as u8).wrapping_mul(s.seed | 1) ^ (i >> 9) as u8)
        .collect();
    let mut dev = Cursor::new(Vec::new());
    let root = dmverity::format(&honest[..], &mut dev, &truth)
        .expect("valid parameters")
        .root_hash();
    let truth = Params {
        data_blocks: Some(blocks as u64),
        ..truth
    };
    assert_eq!(
        reference_root(&truth, &honest).as_deref(),
        Some(root.as_bytes()),
        "format disagrees with the reference tree"
    );

    let mut data = honest.clone();
    let mut hdev = dev.into_inner();
    let edited = !input.edits.is_empty();
    for e in input.edits.iter().take(8) {
        let put = |h: &mut Vec<u8>, at: usize, b: &[u8]| {
            if h.len() >= at + b.len() {
                h[at..at + b.len()].copy_from_slice(b);
            }
        };
        match *e {
            Edit::Version(v) => put(&mut hdev, 8, &v.to_le_bytes()),
            Edit::HashType(v) => put(&mut hdev, 12, &v.to_le_bytes()),
            Edit::DataBlockSize(v) => put(&mut hdev, 64, &v.to_le_bytes()),
            Edit::HashBlockSize(v) => put(&mut hdev, 68, &v.to_le_bytes()),
            Edit::DataBlocks(v) => put(&mut hdev, 72, &v.to_le_bytes()),
            Edit::SmallDataBlocks(v) => put(&mut hdev, 72, &u64::from(v).to_le_bytes()),
            Edit::SaltSize(v) => put(&mut hdev, 80, &v.to_le_bytes()),
            Edit::SaltByte { at, xor } => {
                if let Some(b) = hdev.get_mut(88 + usize::from(at)) {
                    *b ^= xor;
                }
            }
            Edit::Name(n) => {
                let names: [&[u8; 8]; 5] = [
                    b"sha256\0\0",
                    b"sha512\0\0",
                    b"sha1\0\0\0\0",
                    b"SHA256\0\0",
                    b"\0\0\0\0\0\0\0\0",
                ];
                put(&mut hdev, 32, names[usize::from(n) % names.len()]);
            }
            Edit::TruncateData(n) => data.truncate(usize::from(n) % (data.len() + 1)),
            Edit::TruncateHash(n) => hdev.truncate(usize::from(n) % (hdev.len() + 1)),
            Edit::ExtendData(n) => data.extend((0..n % 5000).map(|i| i as u8)),
            Edit::DataByte { at, xor } => {
                if !data.is_empty() {
                    let i = usize::from(at) % data.len();
                    data[i] ^= xor;
                }
            }
            Edit::HashByte { at, xor } => {
                if !hdev.is_empty() {
                    let i = usize::from(at) % hdev.len();
                    hdev[i] ^= xor;
                }
            }
            Edit::HashBlocksAsData { from, count } => {
                let hbs = truth.hash_block_size as usize;
                let from = usize::from(from) * hbs;
                let to = (from + usize::from(count) * hbs).min(hdev.len());
                if from < to {
                    data = hdev[from..to].to_vec();
                }
            }
        }
    }

    let pins = Pins {
        hash: pin(&input.hash, s.alg).map(alg_of),
        data_block_size: pin(&input.data_block_size, truth.data_block_size),
        hash_block_size: pin(&input.hash_block_size, truth.hash_block_size),
        salt: pin(&input.salt, truth.salt.clone()),
        format: pin(&input.format, truth.format),
        data_blocks: pin(&input.data_blocks, blocks as u64),
    };
    let result = if input.trusted_params {
        // Every parameter is the caller's; unpinned ones take the defaults
        // and the count, if unpinned, the data device's size.
        let d = Params::default();
        let p = Params {
            hash: pins.hash.unwrap_or(d.hash),
            data_block_size: pins.data_block_size.unwrap_or(d.data_block_size),
            hash_block_size: pins.hash_block_size.unwrap_or(d.hash_block_size),
            salt: pins.salt.clone().unwrap_or_default(),
            format: pins.format.unwrap_or(d.format),
            data_blocks: pins.data_blocks,
            ..d
        };
        dmverity::verify(source(&data, input.source), Cursor::new(&hdev), &p, &root).map(|()| {
            let n = p
                .data_blocks
                .unwrap_or(data.len() as u64 / u64::from(p.data_block_size));
            Params {
                data_blocks: Some(n),
                ..p
            }
        })
    } else {
        let data = source(&data, input.source);
        dmverity::verify_with_superblock(data, Cursor::new(&hdev), 0, &pins, &root)
    };

    let Ok(used) = result else {
        // An honest image with honest (or no) pins must verify.
        let honest_pins = [
            matches!(input.hash, Pin::No | Pin::Truth),
            matches!(input.data_block_size, Pin::No | Pin::Truth),
            matches!(input.hash_block_size, Pin::No | Pin::Truth),
            matches!(input.salt, Pin::No | Pin::Truth),
            matches!(input.format, Pin::No | Pin::Truth),
            matches!(input.data_blocks, Pin::No | Pin::Truth),
        ];
        assert!(
            edited || input.trusted_params || honest_pins.contains(&false),
            "the honest image failed to verify: {result:?}"
        );
        return;
    };

    // Ok: the pins were respected ...
    let check = |field: &str, pinned: bool, ok: bool| {
        assert!(!pinned || ok, "pinned {field} not the one used: {used:?}");
    };
    check("hash", pins.hash.is_some(), pins.hash == Some(used.hash));
    check(
        "data_block_size",
        pins.data_block_size.is_some(),
        pins.data_block_size == Some(used.data_block_size),
    );
    check(
        "hash_block_size",
        pins.hash_block_size.is_some(),
        pins.hash_block_size == Some(used.hash_block_size),
    );
    check(
        "salt",
        pins.salt.is_some(),
        pins.salt.as_ref() == Some(&used.salt),
    );
    check(
        "format",
        pins.format.is_some(),
        pins.format == Some(used.format),
    );
    check(
        "data_blocks",
        pins.data_blocks.is_some(),
        pins.data_blocks == used.data_blocks,
    );
    // ... every block of the shape used is on the data device ...
    let n = used.data_blocks.expect("the count used") as usize;
    let len = n
        .checked_mul(used.data_block_size as usize)
        .expect("an addressable count");
    assert!(
        n > 0 && data.len() >= len,
        "Ok with {n} data blocks of {} bytes over {} bytes of data",
        used.data_block_size,
        data.len()
    );
    // ... they hash to the trusted root under that shape ...
    let want: &[u8] = root.as_bytes();
    assert_eq!(
        reference_root(&used, &data[..len]).as_deref(),
        Some(want),
        "Ok, but the data do not hash to the root under {used:?}"
    );
    // ... and with the whole truth pinned they are the original bytes.
    if pins == Pins::from_params(&truth) {
        assert!(
            data[..len] == honest[..],
            "Ok with every pin true, other data"
        );
    }
});
