//! Published vectors: fsverity-utils `test_compute_digest.c` (FORMATS.md
//! 1.6) and cryptsetup `verity-compat-test` (FORMATS.md 2.8), on every
//! SHA-256 backend.

use std::io::Cursor;

use mdu_verity::sha256::{Backend, State};
use mdu_verity::{HashAlg, dmverity, fsverity};

fn upstream_file(size: usize) -> Vec<u8> {
    (0..size)
        .map(|i| ((i % 11) + (i % 439) + (i % 1103)) as u8)
        .collect()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// One line per backend a test runs on, so a CI log shows which SHA-256
/// code each test used (the backends this CPU does not run, and why, are
/// `tests/backends.rs`'s).
fn print_backends(test: &str) {
    for b in Backend::available() {
        println!("{test}: sha256 backend {b}");
    }
}

#[test]
fn detected_backend_is_printed_and_arm64_is_required_when_asked() {
    let best = Backend::detect();
    println!(
        "sha256 backend detected: {best} (available: {})",
        Backend::available()
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert_eq!(State::new().backend(), best);
    if std::env::var("MDU_REQUIRE_ARM64_BACKENDS").as_deref() == Ok("1") {
        assert_eq!(
            best,
            Backend::ArmCe,
            "MDU_REQUIRE_ARM64_BACKENDS=1 but the detected SHA-256 backend is `{best}`, not the \
             arm64 SHA-2 instructions (`arm-ce`)"
        );
        assert!(best.has_interleaved_2x());
    }
}

#[test]
fn fsverity_upstream_vectors() {
    print_backends("fsverity_upstream_vectors");
    let salt32 = b"0123456789:;<=>?@ABCDEFGHIJKLMNO".to_vec();
    let cases: &[(HashAlg, u32, &[u8], usize, &str)] = &[
        (
            HashAlg::Sha256,
            4096,
            b"",
            1000000,
            "48df0c462329cd879661bd05b39aa81b05cc16afd27a7196a559da83531d39d9",
        ),
        (
            HashAlg::Sha256,
            4096,
            b"",
            100000,
            "f2096a36c5cdca4fa33ee8852833150bb324992e5417a9d571f1bffff73b9efc",
        ),
        (
            HashAlg::Sha256,
            4096,
            b"",
            4096,
            "6ac39979016e3ddf3d39fff6cb984f7c118acdf1852919f5c100c4b142c1818e",
        ),
        (
            HashAlg::Sha256,
            4096,
            b"",
            1,
            "b803429503d95915829b29fdbc8bbad142f3abfd11b1cadf5526582e685c0551",
        ),
        (
            HashAlg::Sha256,
            4096,
            b"",
            0,
            "3d248ca542a24fc62d1c43b916eae5016878e2533c88238480b26128a1f1af95",
        ),
        (
            HashAlg::Sha256,
            4096,
            b"abcd",
            1000000,
            "917900b0d299454aa304d5debc6f39e4af7b5abe33bdbc568d5d8f1e5c4d8652",
        ),
        (
            HashAlg::Sha256,
            4096,
            &salt32,
            1000000,
            "bc2d70324c048c220a2cb190832140863eb268e680427939e5d467bea5ec5ad9",
        ),
        (
            HashAlg::Sha256,
            1024,
            b"",
            1000000,
            "e9df927c14fcb961d5f51c666d8ae4c14fe4ff98a374c733e898d00c9e74a8e3",
        ),
        (
            HashAlg::Sha256,
            512,
            b"",
            1000000,
            "0393ee3dfd4a28966e2af4e07cfa5b032c30da5bb8e8ef63b9a55bf963262334",
        ),
        (
            HashAlg::Sha256,
            65536,
            b"",
            1000000,
            "f3b6418f26d4d0e74728193bae76f15cb4bb2ce9777448d76bd8138b69ec61c2",
        ),
        (
            HashAlg::Sha512,
            4096,
            b"abcd",
            1000000,
            "8425c6d0c94f84ed904c12936845fbb7af9953753789712dcc3be142db3d4b6b47a399ad52aa609256ce29a960bf4bb0e595ec386ca58c06519d546dc5b197bb",
        ),
    ];
    let file = upstream_file(1000000);
    for &(hash, block_size, salt, size, want) in cases {
        for &backend in Backend::available() {
            let params = fsverity::Params {
                hash,
                block_size,
                salt: salt.to_vec(),
                backend: Some(backend),
            };
            let m = fsverity::measure(&file[..size], &params).unwrap();
            assert_eq!(
                m.digest().digest().to_hex(),
                want,
                "{params:?} size {size} on {backend}"
            );
            assert_eq!(m.digest().to_string(), format!("{}:{want}", hash.name()));
        }
    }
}

#[test]
fn fsverity_metadata_vector_and_tree_layout() {
    let params = fsverity::Params {
        block_size: 1024,
        ..Default::default()
    };
    let m = fsverity::measure(&vec![0u8; 100000][..], &params).unwrap();
    assert_eq!(
        m.digest().digest().to_hex(),
        "09cbbaeed2a04c2da242c10e1568d96f358a16aa1ebe8cf0286120c13c9366d1"
    );
    let tree = m.tree().to_root_first();
    assert_eq!(tree.len(), 5 * 1024);
    let h = |b: &[u8]| HashAlg::Sha256.hash(b).to_hex();
    // Level 1 (the root block) first, then the four level-0 blocks.
    assert_eq!(
        h(&tree[..1024]),
        "68c538e11958d65d68b6fe8e9fb8ccabecfd928b01d06344e223ed41ddc4544a"
    );
    for i in 1..4 {
        assert_eq!(
            h(&tree[i * 1024..(i + 1) * 1024]),
            "f789baab53859faf36d6d75d1042064294202d6e13e7716f394fba434ccc4986"
        );
    }
    assert_eq!(
        h(&tree[4096..5120]),
        "00fed03c5d6eab213143f3d96a5ca31c2b89f5684e6c8e07873e5e976517b48f"
    );
    assert_eq!(
        m.root_hash().to_hex(),
        "68c538e11958d65d68b6fe8e9fb8ccabecfd928b01d06344e223ed41ddc4544a"
    );
}

#[test]
fn fsverity_worked_examples() {
    let p = fsverity::Params::default();
    let m = fsverity::measure(&b"abc"[..], &p).unwrap();
    assert_eq!(
        m.root_hash().to_hex(),
        "73fbfd76aa2143de160edd509ff93771f44db16924bd51235f311f32aaf5fc42"
    );
    assert_eq!(
        m.descriptor()[..16],
        hex("01010c00000000000300000000000000")[..]
    );
    assert!(m.descriptor()[48..].iter().all(|&b| b == 0));
    assert_eq!(
        m.digest().digest().to_hex(),
        "700b6bd8510f0b4f9bac8b9cf0459151a1c4a99f467892bb4bd289a67df8e19c"
    );

    let m = fsverity::measure(&[0u8; 4096][..], &p).unwrap();
    assert_eq!(
        m.root_hash().to_hex(),
        "ad7facb2586fc6e966c004d7d1d16b024f5805ff7cb47c7a85dabd8b48892ca7"
    );
    assert_eq!(
        m.digest().digest().to_hex(),
        "babc284ee4ffe7f449377fbf6692715b43aec7bc39c094a95878904d34bac97e"
    );

    let m = fsverity::measure(&[0u8; 4097][..], &p).unwrap();
    assert_eq!(
        m.root_hash().to_hex(),
        "90b10db56173e2e7c847f6ff3ed85a3aebb140bc0064ec9a156ae5b2e71db988"
    );
    assert_eq!(
        m.digest().digest().to_hex(),
        "093756e4ea9683329106d4a16982682ed182c14bf076463a9e7f97305cbac743"
    );

    let ps = fsverity::Params {
        salt: vec![0x00, 0x11],
        ..p
    };
    let m = fsverity::measure(&b"abc"[..], &ps).unwrap();
    assert_eq!(
        m.root_hash().to_hex(),
        "ba2eed22e4309862508ab73c0cec833602494a61529c3f9c1c83db16f9c72f5f"
    );
    assert_eq!(m.descriptor()[3], 2);
    assert_eq!(m.descriptor()[80..82], [0x00, 0x11]);
    assert_eq!(
        m.digest().digest().to_hex(),
        "6bbe62f3fb9161205e8be4c037c0ad3ffc9ed0d6284fc8b566af0d45835cd724"
    );

    let m = fsverity::measure(&b""[..], &p).unwrap();
    assert_eq!(m.root_hash().as_bytes(), &[0u8; 32]);
    assert_eq!(m.tree().size(), 0);
}

const SALT: &str = "e48da609055204e89ae53b655ca2216dd983cf3cb829f34f63a297d106d53e2d";

#[test]
fn dmverity_compat_test_vectors() {
    print_backends("dmverity_compat_test_vectors");
    let data = vec![0u8; 8 << 20];
    // (block size, salt, format, root hash, level block counts)
    type Case<'a> = (u32, Option<&'a str>, u32, &'a str, &'a [u64]);
    let cases: &[Case<'_>] = &[
        (
            512,
            Some(SALT),
            1,
            "9de18652fe74edfb9b805aaed72ae2aa48f94333f1ba5c452ac33b1c39325174",
            &[1024, 64, 4, 1],
        ),
        (
            1024,
            Some(SALT),
            1,
            "54d92778750495d1f80832b486ebd007617d746271511bbf0e295e143da2b3df",
            &[256, 8, 1],
        ),
        (
            4096,
            Some(SALT),
            1,
            "e522df0f97da4febb882ac40f30b37dc0b444bf6df418929463fa25280f09d5c",
            &[16, 1],
        ),
        (
            4096,
            Some(SALT),
            0,
            "cbbf4ebd004ef65e29b935bb635a39cf754d677f3fa10b0126da725bbdf10f7d",
            &[16, 1],
        ),
        (
            4096,
            None,
            1,
            "ef29c902d87350f1da4bfa536e16cebc162a909bf89abe448b81ec500d4fb9bf",
            &[16, 1],
        ),
    ];
    for &(bs, salt, format, want, levels) in cases {
        for &backend in Backend::available() {
            for (superblock, hash_offset) in [(true, 0), (false, 0), (true, 8 << 20)] {
                let params = dmverity::Params {
                    data_block_size: bs,
                    hash_block_size: bs,
                    salt: salt.map(hex).unwrap_or_default(),
                    format,
                    superblock,
                    hash_offset,
                    backend: Some(backend),
                    ..Default::default()
                };
                let mut dev = Cursor::new(Vec::new());
                let out = dmverity::format(&data[..], &mut dev, &params).unwrap();
                assert_eq!(out.root_hash().to_hex(), want, "{params:?} on {backend}");
                assert_eq!(out.hash_blocks(), levels.iter().sum::<u64>());
                assert_eq!(dev.get_ref().len() as u64, out.hash_device_size());
                assert_eq!(
                    params.hash_device_size(out.data_blocks()).unwrap(),
                    out.hash_device_size()
                );
                dmverity::verify_range(
                    Cursor::new(&data),
                    &mut dev,
                    &params,
                    &out.root_hash(),
                    0,
                    data.len() as u64 / bs as u64,
                )
                .unwrap();
            }
        }
    }
}

/// The SHA-1 rows of the same suite: 20-byte digests in 32-byte slots,
/// 32 of them per 1024-byte block (format 1), or packed 20 bytes apart,
/// still 32 per block (format 0; the root then differs).
#[test]
fn dmverity_compat_test_vectors_sha1() {
    let data = vec![0u8; 8 << 20];
    for (salt, want) in [
        (hex(SALT), "d0e9163ca8844aaa2e88fe5265a8c5d9ee494a99"),
        (hex("dadada"), "73509e8e868be6b8ac939817a98a3d35121413b2"),
    ] {
        for (superblock, hash_offset) in [(true, 0), (false, 0), (true, 8 << 20)] {
            let params = dmverity::Params {
                hash: HashAlg::Sha1,
                data_block_size: 1024,
                hash_block_size: 1024,
                salt: salt.clone(),
                superblock,
                hash_offset,
                ..Default::default()
            };
            let mut dev = Cursor::new(Vec::new());
            let out = dmverity::format(&data[..], &mut dev, &params).unwrap();
            assert_eq!(out.root_hash().to_hex(), want, "{params:?}");
            // 8192 blocks, 32 digests per block: 256, 8 and 1 blocks.
            assert_eq!(out.hash_blocks(), 256 + 8 + 1);
            let area = &dev.get_ref()[params.hash_start_block() as usize * 1024..];
            // The top block: 8 digests in 32-byte slots, each padded with
            // 12 zero bytes, then zeros.
            let top = &area[..1024];
            for slot in top[..256].chunks(32) {
                assert!(slot[..20].iter().any(|&b| b != 0));
                assert!(slot[20..].iter().all(|&b| b == 0));
            }
            assert!(top[256..].iter().all(|&b| b == 0));
            dmverity::verify(Cursor::new(&data), &mut dev, &params, &out.root_hash()).unwrap();
        }
    }
}

#[test]
fn dmverity_derived_small_examples() {
    let mut data = vec![0u8; 3 * 4096];
    for (i, b) in data.chunks_mut(4096).enumerate() {
        b.fill(i as u8);
    }
    for (format, want) in [
        (
            1,
            "047127ee9714c3e9f9602ef4127c212038cf28103f1a01327cb06c0e4a9be0b9",
        ),
        (
            0,
            "a9dfe385d9c8d9e6e04d401db25f0b25fbef3438067569dfc7db9f23acf43eff",
        ),
    ] {
        let p = dmverity::Params {
            salt: hex(SALT),
            format,
            superblock: false,
            ..Default::default()
        };
        let mut dev = Cursor::new(Vec::new());
        let out = dmverity::format(&data[..], &mut dev, &p).unwrap();
        assert_eq!(out.root_hash().to_hex(), want);
        if format == 1 {
            let area = dev.into_inner();
            assert_eq!(area.len(), 4096);
            assert_eq!(
                area[..32],
                hex("6c14ed2d41cb5590edee916ae19a97bf68fe6b178a6086276a37700f1cc5d727")[..]
            );
            assert_eq!(
                area[32..64],
                hex("749c679f11931721f007281be157f2b3150e461e4a426e4d3b4aafbc0d92fb83")[..]
            );
            assert_eq!(
                area[64..96],
                hex("fc45b0ce2c298f747cf42f62d9004963e238002d38ee71597a62dcd7bfb94663")[..]
            );
            assert!(area[96..].iter().all(|&b| b == 0));
        }
    }
    // One all-zero block: no tree, the root is the block's hash.
    let p = dmverity::Params {
        salt: hex(SALT),
        ..Default::default()
    };
    let out = dmverity::format(&[0u8; 4096][..], &mut Cursor::new(Vec::new()), &p).unwrap();
    assert_eq!(
        out.root_hash().to_hex(),
        "6c14ed2d41cb5590edee916ae19a97bf68fe6b178a6086276a37700f1cc5d727"
    );
    assert_eq!(out.hash_blocks(), 0);
}

#[test]
fn dmverity_superblock_example() {
    let uuid = hex("a60c98d2ae9b4865bfcbb4e3ace11033");
    let p = dmverity::Params {
        salt: hex(SALT),
        uuid: uuid.try_into().unwrap(),
        ..Default::default()
    };
    let mut dev = Cursor::new(Vec::new());
    let out = dmverity::format(&vec![0u8; 8 << 20][..], &mut dev, &p).unwrap();
    let sb = &dev.get_ref()[..512];
    let mut want = vec![0u8; 512];
    want[..0x80].copy_from_slice(&hex(concat!(
        "7665726974790000",
        "0100000001000000",
        "a60c98d2ae9b4865bfcbb4e3ace11033",
        "7368613235360000000000000000000000000000000000000000000000000000",
        "0010000000100000",
        "0008000000000000",
        "2000000000000000",
        "e48da609055204e8",
        "9ae53b655ca2216dd983cf3cb829f34f",
        "63a297d106d53e2d0000000000000000",
    )));
    assert_eq!(sb, &want[..]);
    assert_eq!(out.superblock().unwrap().to_bytes()[..], want[..]);
    let parsed = dmverity::Superblock::read_from(&mut dev, 0).unwrap();
    assert_eq!(
        parsed.params(0),
        dmverity::Params {
            data_blocks: Some(2048),
            ..p
        }
    );
}
