//! Every cipher spec, IV mode and sector size against the Python reference,
//! and the wide-block specs against the library's SectorCipher.

use super::*;

const MODES: [&str; 7] = [
    "plain",
    "plain64",
    "plain64be",
    "essiv:sha256",
    "benbi",
    "null",
    "eboiv",
];

const SECTOR_SIZES: [u64; 4] = [512, 1024, 2048, 4096];

const CHAINS: [&str; 2] = ["xts", "cbc"];

/// The key lengths of a chaining mode: AES-128 and AES-256.
fn key_lens(chain: &str) -> [usize; 2] {
    if chain == "cbc" { [16, 32] } else { [32, 64] }
}

fn run_python(dir: &Path, cases: &[Case]) {
    let m = dir.join("manifest.json");
    std::fs::write(&m, manifest(cases)).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dmcrypt_ref.py");
    let out = run(Command::new("python3").arg(script).arg(&m));
    assert!(
        out.status.success(),
        "python reference failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn mdu_crypt(c: &Case) -> std::process::Output {
    let mut cmd = mdu();
    cmd.args(["crypt", c.op, "--cipher"])
        .arg(format!("aes-{}-{}", c.chain, c.mode))
        .arg("--key-file")
        .arg(&c.key)
        .args(["--sector-size", &c.ss.to_string()])
        .args(["--iv-offset", &c.iv_offset.to_string()])
        .args(["--offset", &c.offset.to_string()])
        .args(["--threads", &c.threads.to_string()]);
    if c.large {
        cmd.arg("--iv-large-sectors");
    }
    cmd.arg(&c.input).arg(&c.got);
    run(&mut cmd)
}

/// IV offsets (512-byte units, multiples of ss/512) whose run of `n`
/// sectors crosses the 2^32 wrap of `plain` and the 2^64 wrap of
/// `cc_sector` at sector `n/2`, plus a random one.
fn iv_offsets(rng: &mut Rng, ss: u64, large: bool, n: u64) -> [u64; 3] {
    let d = ss / 512;
    let half = n / 2;
    let near32 = if large {
        ((1u64 << 32) - half) * d
    } else {
        (1u64 << 32) - half * d
    };
    let near64 = 0u64.wrapping_sub(half * d);
    let random = if rng.below(2) == 0 {
        rng.below(1 << 20) * d
    } else {
        rng.next_u64() / d * d
    };
    [random, near32, near64]
}

#[test]
fn matches_python_reference_for_every_mode() {
    if !have_python_cryptography("matches_python_reference_for_every_mode") {
        return;
    }
    let mut rng = Rng::new("matches_python_reference_for_every_mode");
    let dir = scratch();
    let d = dir.path();
    let mut cases = Vec::new();
    let n_sectors = 24u64;
    let mut id = 0;
    // Under a user-mode emulator (MDU_EMULATED, set by
    // .ci/qemu-aarch64.toml) every mdu run is slow: there CBC takes the two
    // IV modes that matter for it (LUKS1's essiv:sha256 and plain64), XTS
    // all seven, each mode two of the four sector sizes (alternating from
    // mode to mode, so each size runs with half of the modes), and each
    // sector size one of the three IV offsets; natively, and with
    // MDU_EXHAUSTIVE=1, every combination runs.
    let emulated = mdu_core::testing::sample::sampling();
    let every = CHAINS.iter().flat_map(|c| MODES.map(|m| (*c, m)));
    let (mut taken, mut all) = (0, 0);
    for (k, (chain, mode)) in every.enumerate() {
        all += SECTOR_SIZES.len() * 2 * 3;
        if emulated && chain == "cbc" && mode != "plain64" && mode != "essiv:sha256" {
            continue;
        }
        for (i, ss) in SECTOR_SIZES.into_iter().enumerate() {
            if emulated && (k + i) % 2 == 1 {
                continue;
            }
            for large in [false, true] {
                taken += if emulated { 1 } else { 3 };
                // Under emulation one of the three offsets, at random.
                let offsets = iv_offsets(&mut rng, ss, large, n_sectors);
                let pick = rng.below(3) as usize;
                let offsets = if emulated {
                    &offsets[pick..=pick]
                } else {
                    &offsets[..]
                };
                for &iv_offset in offsets {
                    id += 1;
                    let key = d.join(format!("k{id}"));
                    let klen = key_lens(chain)[rng.below(2) as usize];
                    std::fs::write(&key, rng.bytes(klen)).unwrap();
                    let offset = rng.pick(&[0u64, 0, 1, 8, 24]);
                    let threads = rng.pick(&[1u32, 2]);
                    // Encrypt: plaintext -> python vs mdu.
                    let plain = d.join(format!("p{id}"));
                    std::fs::write(&plain, rng.bytes((n_sectors * ss) as usize)).unwrap();
                    cases.push(Case {
                        op: "encrypt",
                        chain,
                        mode,
                        key: key.clone(),
                        ss,
                        iv_offset,
                        large,
                        offset,
                        threads,
                        input: plain,
                        want: d.join(format!("pe{id}")),
                        got: d.join(format!("me{id}")),
                    });
                    // Decrypt: a random backing image -> python vs mdu.
                    let image = d.join(format!("i{id}"));
                    std::fs::write(&image, rng.bytes((offset * 512 + n_sectors * ss) as usize))
                        .unwrap();
                    cases.push(Case {
                        op: "decrypt",
                        chain,
                        mode,
                        key,
                        ss,
                        iv_offset,
                        large,
                        offset,
                        threads,
                        input: image,
                        want: d.join(format!("pd{id}")),
                        got: d.join(format!("md{id}")),
                    });
                }
            }
        }
    }
    if taken < all {
        mdu_core::testing::sample::note(
            "matches_python_reference_for_every_mode",
            taken,
            all,
            "cipher, IV mode, sector size, large-sector and IV offset combinations",
            "MDU_EMULATED=1: CBC in plain64 and essiv:sha256, two sector sizes a mode, \
             one offset",
        );
    }
    run_python(d, &cases);
    for c in &cases {
        let out = mdu_crypt(c);
        let what = format!(
            "{} aes-{}-{} ss={} iv_offset={} large={} offset={} threads={}",
            c.op, c.chain, c.mode, c.ss, c.iv_offset, c.large, c.offset, c.threads
        );
        expect_code(&out, 0, &what);
        let want = std::fs::read(&c.want).unwrap();
        let got = std::fs::read(&c.got).unwrap();
        assert!(want == got, "{what}: mdu and the reference differ");
    }
    // Decrypt inverts encrypt (mdu alone, on the encrypted outputs).
    for c in cases.iter().filter(|c| c.op == "encrypt") {
        let back = Case {
            op: "decrypt",
            input: c.got.clone(),
            got: c.got.with_extension("back"),
            key: c.key.clone(),
            want: PathBuf::new(),
            ..*c
        };
        expect_code(&mdu_crypt(&back), 0, "decrypt of encrypt");
        assert_eq!(
            std::fs::read(&back.got).unwrap(),
            std::fs::read(&c.input).unwrap(),
            "decrypt does not invert encrypt: aes-{}-{} ss={} iv_offset={} large={}",
            c.chain,
            c.mode,
            c.ss,
            c.iv_offset,
            c.large
        );
    }
}

/// Large enough that two threads split the work into several chunks, with
/// the 2^32 wrap of `plain` in the middle of a chunk.
#[test]
fn two_threads_match_reference_on_a_long_run() {
    if !have_python_cryptography("two_threads_match_reference_on_a_long_run") {
        return;
    }
    let mut rng = Rng::new("two_threads_match_reference_on_a_long_run");
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(64)).unwrap();
    let key32 = d.join("key32");
    std::fs::write(&key32, rng.bytes(32)).unwrap();
    let plain = d.join("plain");
    std::fs::write(&plain, rng.bytes(6 << 20)).unwrap();
    let mut cases = Vec::new();
    for (i, (chain, mode, ss, iv_offset, large)) in [
        ("xts", "plain", 512u64, (1u64 << 32) - 5000, false),
        ("xts", "plain", 4096, ((1u64 << 32) - 700) * 8, true),
        ("xts", "plain64", 4096, u64::MAX - 8 * 1000 + 1, false),
        ("xts", "eboiv", 1024, 0, false),
        ("cbc", "essiv:sha256", 512, 0, false),
        ("cbc", "plain64", 4096, u64::MAX - 8 * 1000 + 1, false),
        ("cbc", "plain", 512, (1u64 << 32) - 5000, false),
    ]
    .into_iter()
    .enumerate()
    {
        cases.push(Case {
            op: "encrypt",
            chain,
            mode,
            key: if chain == "cbc" {
                key32.clone()
            } else {
                key.clone()
            },
            ss,
            iv_offset,
            large,
            offset: 0,
            threads: 2,
            input: plain.clone(),
            want: d.join(format!("want{i}")),
            got: d.join(format!("got{i}")),
        });
    }
    run_python(d, &cases);
    for c in &cases {
        expect_code(&mdu_crypt(c), 0, c.mode);
        assert!(
            std::fs::read(&c.want).unwrap() == std::fs::read(&c.got).unwrap(),
            "aes-{}-{} ss={} differs from the reference",
            c.chain,
            c.mode,
            c.ss
        );
    }
}

/// The wide-block specs dm-crypt hosts (`aes-hctr2-*`,
/// `xchacha12,aes-adiantum-*`) and the other block ciphers (`serpent-*`,
/// `twofish-*`, `camellia-*`, `sm4-*`): `mdu crypt` writes what the
/// library's `SectorCipher` makes of the same spec, key and geometry (the
/// library's own tests check those against HCTR2 and Adiantum one sector
/// at a time with the kernel's IVs, and against xts-mode and a CBC chain
/// over the RustCrypto block ciphers), and decrypts it back; an IV mode
/// that needs a one-block IV, or `essiv` on SM4, is refused with its name,
/// and a key of the wrong length names the cipher's key sizes.
#[test]
fn wide_block_specs_encrypt_as_the_library_does() {
    use mdu_dmcrypt::{Direction, Geometry, SectorCipher, WeakKeys};
    let d = scratch();
    let dir = d.path();
    let mut rng = Rng::new("crypt::reference::wide_block_specs_encrypt_as_the_library_does");
    let plain = rng.bytes(16 * 4096);
    let input = dir.join("in");
    std::fs::write(&input, &plain).unwrap();
    for (spec, key_len, ss) in [
        ("aes-hctr2-plain64", 32, 512u32),
        ("aes-hctr2-plain64be", 16, 4096),
        ("xchacha12,aes-adiantum-plain64", 32, 4096),
        ("xchacha12,aes-adiantum-plain", 32, 512),
        ("serpent-xts-plain64", 64, 512),
        ("twofish-cbc-essiv:sha256", 32, 4096),
        ("camellia-xts-benbi", 48, 512),
        ("sm4-cbc-eboiv", 16, 4096),
    ] {
        let key = rng.bytes(key_len);
        let key_file = dir.join("key");
        std::fs::write(&key_file, &key).unwrap();
        let (enc, dec) = (dir.join("enc"), dir.join("dec"));
        let _ = std::fs::remove_file(&enc);
        let _ = std::fs::remove_file(&dec);
        let sector = ss.to_string();
        for (verb, from, to) in [("encrypt", &input, &enc), ("decrypt", &enc, &dec)] {
            let out = run(mdu()
                .args(["crypt", verb, "--cipher", spec, "--sector-size", &sector])
                .arg("--key-file")
                .arg(&key_file)
                .arg(from)
                .arg(to));
            expect_code(&out, 0, &format!("{spec}: mdu crypt {verb}"));
        }
        let c = SectorCipher::new(
            spec.parse().unwrap(),
            &key,
            Geometry::new(ss, 0, false).unwrap(),
            WeakKeys::Refuse,
        )
        .unwrap();
        let mut want = plain.clone();
        c.crypt(Direction::Encrypt, 0, &mut want).unwrap();
        assert!(
            std::fs::read(&enc).unwrap() == want,
            "{spec}: mdu crypt encrypt"
        );
        assert!(
            std::fs::read(&dec).unwrap() == plain,
            "{spec}: mdu crypt decrypt"
        );
    }
    let out = mdu()
        .args([
            "crypt",
            "encrypt",
            "--cipher",
            "aes-hctr2-essiv:sha256",
            "--key-file",
        ])
        .arg(dir.join("key"))
        .arg(&input)
        .arg(dir.join("x"))
        .output()
        .unwrap();
    expect_code(&out, 2, "aes-hctr2-essiv:sha256");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("essiv:sha256"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (spec, says) in [
        ("sm4-xts-essiv:sha256", "essiv:sha256"),
        (
            "serpent-xts-plain64",
            "32 (Serpent-128) or 48 (Serpent-192) or 64 (Serpent-256)",
        ),
    ] {
        // The key file holds 16 bytes: right for SM4, short for Serpent.
        std::fs::write(dir.join("key"), [7u8; 16]).unwrap();
        let out = mdu()
            .args(["crypt", "encrypt", "--cipher", spec, "--key-file"])
            .arg(dir.join("key"))
            .arg(&input)
            .arg(dir.join("x"))
            .output()
            .unwrap();
        expect_code(&out, 2, spec);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{spec}: {err}");
    }
}
