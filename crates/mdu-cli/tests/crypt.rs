//! `mdu crypt` against a per-sector reference in Python `cryptography`
//! (tests/dmcrypt_ref.py): aes-xts and aes-cbc with every IV mode, every
//! sector size, with and without --iv-large-sectors, IV offsets whose runs
//! cross 2^32 and 2^64, --offset, one and two threads; decrypt inverts
//! encrypt; bad input is refused with exit status 2 and leaves no output
//! behind.

mod common;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{
    KillSweep, Rng, entries, expect_code, have_python_cryptography, have_tool, mdu, run, scratch,
};

/// The crash sweep of `--in-place` is short (a few seconds): it kills at
/// every sync point, sampled or not.
const SWEEP: KillSweep = KillSweep::every(1);

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

struct Case {
    op: &'static str,
    chain: &'static str,
    mode: &'static str,
    key: PathBuf,
    ss: u64,
    iv_offset: u64,
    large: bool,
    offset: u64,
    threads: u32,
    input: PathBuf,
    want: PathBuf,
    got: PathBuf,
}

fn manifest(cases: &[Case]) -> String {
    let mut s = String::from("[\n");
    for (i, c) in cases.iter().enumerate() {
        let _ = writeln!(
            s,
            "{}{{\"op\": \"{}\", \"chain\": \"{}\", \"mode\": \"{}\", \"key\": {:?}, \
             \"sector_size\": {}, \"iv_offset\": {}, \"large\": {}, \"offset\": {}, \
             \"input\": {:?}, \"output\": {:?}}}",
            if i > 0 { "," } else { "" },
            c.op,
            c.chain,
            c.mode,
            c.key.display().to_string(),
            c.ss,
            c.iv_offset,
            c.large,
            c.offset,
            c.input.display().to_string(),
            c.want.display().to_string(),
        );
    }
    s.push(']');
    s
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

fn base_cmd(op: &str, key: &Path) -> Command {
    let mut cmd = mdu();
    cmd.args(["crypt", op, "--cipher", "aes-xts-plain64", "--key-file"])
        .arg(key);
    cmd
}

#[test]
fn bad_input_is_refused_and_leaves_nothing() {
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, (0..64u8).collect::<Vec<_>>()).unwrap();
    let input = d.join("in");
    std::fs::write(&input, vec![1u8; 3 * 512 + 100]).unwrap();
    let out_path = d.join("out");
    let before = entries(d);

    // Not a whole number of sectors: the file, the offset and the rule.
    let out = run(base_cmd("encrypt", &key).arg(&input).arg(&out_path));
    expect_code(&out, 2, "partial sector");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/in"), "{err}");
    assert!(err.contains("offset 1536"), "{err}");
    assert!(err.contains("whole number of 512-byte sectors"), "{err}");
    assert_eq!(entries(d), before);

    // The same through a pipe (found while streaming, after output began).
    let mut child = base_cmd("encrypt", &key)
        .arg("/dev/stdin")
        .arg(&out_path)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&vec![0u8; (9 << 20) + 700])
        .unwrap();
    let out = child.wait_with_output().unwrap();
    expect_code(&out, 2, "partial sector on a pipe");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("offset {}", (9 << 20) + 512)),
        "{err}"
    );
    assert_eq!(entries(d), before);

    // An existing output stays as it was.
    std::fs::write(&out_path, b"keep me").unwrap();
    let out = run(base_cmd("decrypt", &key).arg(&input).arg(&out_path));
    expect_code(&out, 2, "partial sector, existing output");
    assert_eq!(std::fs::read(&out_path).unwrap(), b"keep me");
    std::fs::remove_file(&out_path).unwrap();

    // Key of the wrong length.
    let short = d.join("short");
    std::fs::write(&short, [7u8; 48]).unwrap();
    let good = d.join("good");
    std::fs::write(&good, vec![0u8; 4096]).unwrap();
    let before = entries(d);
    let out = run(base_cmd("encrypt", &short).arg(&good).arg(&out_path));
    expect_code(&out, 2, "48-byte key");
    assert!(String::from_utf8_lossy(&out.stderr).contains("exactly 32"));

    // Key with equal halves.
    let weak = d.join("weak");
    std::fs::write(&weak, [7u8; 64]).unwrap();
    let out = run(base_cmd("encrypt", &weak).arg(&good).arg(&out_path));
    expect_code(&out, 2, "weak key");
    std::fs::remove_file(&weak).unwrap();

    // Unknown cipher or IV mode, bad sector size, misaligned iv_offset.
    for args in [
        &["--cipher", "aes-ecb-plain64"][..],
        &["--cipher", "aes-cbc-lmk"],
        &["--cipher", "aes-xts-lmk"],
        &["--sector-size", "8192"],
        &["--sector-size", "1000"],
        &["--sector-size", "4096", "--iv-offset", "4"],
    ] {
        let out = run(mdu()
            .args(["crypt", "encrypt", "--key-file"])
            .arg(&key)
            .args(args)
            .arg(&good)
            .arg(&out_path));
        expect_code(&out, 2, &format!("{args:?}"));
    }

    // Decrypt of a file shorter than --offset; empty input.
    let out = run(base_cmd("decrypt", &key)
        .args(["--offset", "100"])
        .arg(&good)
        .arg(&out_path));
    expect_code(&out, 2, "input shorter than --offset");
    let empty = d.join("empty");
    std::fs::write(&empty, b"").unwrap();
    let out = run(base_cmd("encrypt", &key).arg(&empty).arg(&out_path));
    expect_code(&out, 2, "empty input");
    std::fs::remove_file(&empty).unwrap();
    let _ = std::fs::remove_file(d.join("manifest.json"));
    assert_eq!(entries(d), before);
}

/// `mdu crypt OP` with `args` (before IN and OUT) from `input` to `output`.
fn crypt_cmd(op: &str, key: &Path, args: &[&str], input: &Path, output: &Path) -> Command {
    let mut cmd = base_cmd(op, key);
    cmd.args(args).arg(input).arg(output);
    cmd
}

#[test]
fn the_input_as_output_is_refused_without_in_place() {
    use std::os::unix::fs::MetadataExt;

    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, (0..64u8).collect::<Vec<_>>()).unwrap();
    let input = d.join("in");
    let data: Vec<u8> = (0..8 * 512).map(|i| (i % 251) as u8).collect();
    std::fs::write(&input, &data).unwrap();
    let hard = d.join("hard");
    std::fs::hard_link(&input, &hard).unwrap();
    let soft = d.join("soft");
    std::os::unix::fs::symlink(&input, &soft).unwrap();
    // The same file under another spelling of its path.
    let dotted = d.join(".").join("in");
    let before = entries(d);
    let ino = std::fs::metadata(&input).unwrap().ino();

    for op in ["encrypt", "decrypt"] {
        for out in [&input, &hard, &soft, &dotted] {
            let what = format!("{op} onto {}", out.display());
            let res = run(&mut crypt_cmd(op, &key, &[], &input, out));
            expect_code(&res, 2, &what);
            let err = String::from_utf8_lossy(&res.stderr);
            assert!(err.contains("same file or device"), "{what}: {err}");
            assert!(err.contains("--in-place"), "{what}: {err}");
            assert_eq!(std::fs::read(&input).unwrap(), data, "{what}");
            assert_eq!(entries(d), before, "{what}");
            assert_eq!(std::fs::metadata(&input).unwrap().ino(), ino, "{what}");
        }
        // Reading the input through a symlink changes nothing either.
        let res = run(&mut crypt_cmd(op, &key, &[], &soft, &hard));
        expect_code(
            &res,
            2,
            &format!("{op} from the symlink onto the hard link"),
        );
        assert_eq!(std::fs::read(&input).unwrap(), data);
    }

    // --in-place with an OUT that is another file: refused, nothing made.
    let other = d.join("other");
    let res = run(&mut crypt_cmd(
        "encrypt",
        &key,
        &["--in-place"],
        &input,
        &other,
    ));
    expect_code(&res, 2, "--in-place with a different OUT");
    assert!(String::from_utf8_lossy(&res.stderr).contains("not the same file"));
    assert_eq!(entries(d), before);

    // The same character device: refused without --in-place, and --in-place
    // takes only regular files and block devices.
    let null = Path::new("/dev/null");
    let res = run(&mut crypt_cmd("encrypt", &key, &[], null, null));
    expect_code(&res, 2, "/dev/null onto itself");
    let res = run(&mut crypt_cmd("encrypt", &key, &["--in-place"], null, null));
    expect_code(&res, 2, "--in-place on /dev/null");
    assert!(String::from_utf8_lossy(&res.stderr).contains("regular file or a block device"));
    assert_eq!(std::fs::read(&input).unwrap(), data);
}

/// In-place runs, with and without `--offset`, across several chunks (one
/// and two threads, so chunks of 1 and 2 MiB): encrypt gives the bytes of
/// the out-of-place run, and decrypt in place gives back the original, in
/// the same inode. With `--offset`, encrypt moves the data up (processed
/// back to front) and decrypt moves it down; an offset larger than a chunk
/// makes every chunk's destination overlap input that an unsafe order would
/// already have overwritten.
#[test]
fn in_place_equals_out_of_place_and_decrypts_back() {
    use std::os::unix::fs::MetadataExt;

    let mut rng = Rng::new("in_place_equals_out_of_place_and_decrypts_back");
    let dir = scratch();
    let d = dir.path();
    let key64 = d.join("key");
    std::fs::write(&key64, rng.bytes(64)).unwrap();
    let key32 = d.join("key32");
    std::fs::write(&key32, rng.bytes(32)).unwrap();
    // 3 MiB and three 4 KiB sectors: the last chunk is a partial one.
    let original = rng.bytes((3 << 20) + 3 * 4096);
    let plain = d.join("plain");
    std::fs::write(&plain, &original).unwrap();
    let (want, work, back) = (d.join("want"), d.join("work"), d.join("back"));

    for (cipher, ss, offset, threads) in [
        ("aes-xts-plain64", "512", "0", "1"),
        ("aes-cbc-essiv:sha256", "512", "0", "2"),
        ("aes-xts-plain64", "4096", "8", "1"),
        ("aes-xts-essiv:sha256", "512", "7", "2"),
        // 2.5 MiB: more than one chunk of either size.
        ("aes-xts-plain64", "512", "5120", "1"),
        ("aes-xts-benbi", "4096", "5120", "2"),
    ] {
        let what = format!("{cipher} --sector-size {ss} --offset {offset} --threads {threads}");
        let key = if cipher.starts_with("aes-cbc") {
            &key32
        } else {
            &key64
        };
        let args = [
            "--cipher",
            cipher,
            "--sector-size",
            ss,
            "--offset",
            offset,
            "--threads",
            threads,
        ];
        let run_ok = |op: &str, extra: &[&str], from: &Path, to: &Path| {
            let mut cmd = mdu();
            cmd.args(["crypt", op, "--key-file"])
                .arg(key)
                .args(args)
                .args(extra)
                .arg(from)
                .arg(to);
            expect_code(&run(&mut cmd), 0, &format!("{op} {extra:?} {what}"));
        };
        run_ok("encrypt", &[], &plain, &want);
        std::fs::write(&work, &original).unwrap();
        let ino = std::fs::metadata(&work).unwrap().ino();

        let journal = d.join("journal");
        let journal = journal.to_str().unwrap();
        run_ok(
            "encrypt",
            &["--in-place", "--journal", journal],
            &work,
            &work,
        );
        assert!(!Path::new(journal).exists(), "the journal stays: {what}");
        let got = std::fs::read(&work).unwrap();
        assert!(
            got == std::fs::read(&want).unwrap(),
            "in-place encrypt differs from out-of-place: {what}"
        );
        assert_eq!(std::fs::metadata(&work).unwrap().ino(), ino, "{what}");

        run_ok(
            "decrypt",
            &["--in-place", "--journal", journal],
            &work,
            &work,
        );
        assert!(
            std::fs::read(&work).unwrap() == original,
            "in-place decrypt does not give the original back: {what}"
        );
        assert_eq!(std::fs::metadata(&work).unwrap().ino(), ino, "{what}");

        run_ok("decrypt", &[], &want, &back);
        assert!(
            std::fs::read(&back).unwrap() == original,
            "out-of-place decrypt: {what}"
        );
    }
}

#[test]
fn in_place_refusals_leave_the_file_unchanged() {
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, (0..64u8).collect::<Vec<_>>()).unwrap();
    let file = d.join("img");
    let data = vec![5u8; 4 * 512];
    std::fs::write(&file, &data).unwrap();
    let before = entries(d);
    for (op, args, why) in [
        ("decrypt", &["--offset", "5"][..], "ends before --offset 5"),
        (
            "encrypt",
            &["--sector-size", "4096"],
            "whole number of 4096-byte sectors",
        ),
        ("encrypt", &["--cipher", "aes-xts-lmk"], "unknown IV mode"),
        ("encrypt", &["--cipher", "aes-cbc-lmk"], "unknown IV mode"),
    ] {
        let mut cmd = mdu();
        cmd.args(["crypt", op, "--key-file"]).arg(&key);
        if !args.contains(&"--cipher") {
            cmd.args(["--cipher", "aes-xts-plain64"]);
        }
        cmd.args(args)
            .arg(&file)
            .arg(&file)
            .arg("--in-place")
            .arg("--journal")
            .arg(d.join("journal"));
        let res = run(&mut cmd);
        expect_code(&res, 2, why);
        let err = String::from_utf8_lossy(&res.stderr);
        assert!(err.contains(why), "{why}: {err}");
        assert_eq!(std::fs::read(&file).unwrap(), data, "{why}");
        assert_eq!(entries(d), before, "{why}");
    }
}

/// The key is read into a fixed buffer one byte longer than the longest
/// key: files of 31, 33, 63, 65 and 100 bytes are refused with their
/// length, a key of 32 or 64 bytes works.
#[test]
fn key_files_of_any_other_length_are_refused_with_their_length() {
    let dir = scratch();
    let d = dir.path();
    let data = d.join("data");
    std::fs::write(&data, vec![3u8; 1024]).unwrap();
    let out_path = d.join("out");
    for len in [0usize, 31, 33, 63, 65, 100, 32, 64] {
        let key = d.join(format!("key{len}"));
        std::fs::write(&key, (0..len).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
        let res = run(&mut crypt_cmd("encrypt", &key, &[], &data, &out_path));
        if len == 32 || len == 64 {
            expect_code(&res, 0, &format!("{len}-byte key"));
            continue;
        }
        expect_code(&res, 2, &format!("{len}-byte key"));
        let err = String::from_utf8_lossy(&res.stderr);
        assert!(err.contains(&format!("holds {len} bytes")), "{err}");
    }
    // aes-cbc takes 16 or 32 bytes.
    for len in [0usize, 15, 17, 24, 31, 33, 64, 16, 32] {
        let key = d.join(format!("cbc{len}"));
        std::fs::write(&key, (0..len).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
        let res = run(mdu()
            .args([
                "crypt",
                "encrypt",
                "--cipher",
                "aes-cbc-essiv:sha256",
                "--key-file",
            ])
            .arg(&key)
            .arg(&data)
            .arg(&out_path));
        if len == 16 || len == 32 {
            expect_code(&res, 0, &format!("{len}-byte aes-cbc key"));
            continue;
        }
        expect_code(&res, 2, &format!("{len}-byte aes-cbc key"));
        let err = String::from_utf8_lossy(&res.stderr);
        assert!(err.contains(&format!("holds {len} bytes")), "{err}");
        assert!(err.contains("aes-cbc needs exactly 16"), "{err}");
    }
}

/// `--in-place` killed (SIGKILL, by strace's fault injection) at each of
/// its sync points and run again with `--resume` ends with the bytes an
/// out-of-place run writes; a resume with another key is refused.
#[test]
fn in_place_runs_killed_at_any_sync_point_resume_to_the_same_bytes() {
    let test = "crypt::in_place_runs_killed_at_any_sync_point_resume_to_the_same_bytes";
    if !have_tool("strace", test) {
        return;
    }
    if std::env::var("MDU_EMULATED").is_ok_and(|v| v == "1") {
        eprintln!(
            "SKIPPED: {test}: the crash sweep runs on the host only (not under the emulator)"
        );
        return;
    }
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(64)).unwrap();
    let plain = d.join("plain");
    std::fs::write(&plain, rng.bytes(3 << 20)).unwrap();
    let (src, want, work, journal) = (d.join("src"), d.join("want"), d.join("w"), d.join("j"));
    let crypt = |op: &str, extra: &[&str]| {
        let mut c = mdu();
        c.args(["crypt", op, "--threads", "1", "--key-file"])
            .arg(&key)
            .args(extra);
        c
    };
    let mut points = 0;
    for (op, extra) in [
        ("encrypt", &["--offset", "2048"][..]),
        ("decrypt", &["--offset", "2048"][..]),
        ("encrypt", &[][..]),
    ] {
        // The input of the run and what an out-of-place run makes of it.
        if op == "encrypt" {
            std::fs::copy(&plain, &src).unwrap();
        } else {
            expect_code(
                &run(crypt("encrypt", extra).arg(&plain).arg(&src)),
                0,
                "source",
            );
        }
        let _ = std::fs::remove_file(&want);
        expect_code(
            &run(crypt(op, extra).arg(&src).arg(&want)),
            0,
            "out of place",
        );
        let want = std::fs::read(&want).unwrap();
        points += SWEEP.run(test, &format!("{op} {extra:?}"), |n| {
            std::fs::copy(&src, &work).unwrap();
            let _ = std::fs::remove_file(&journal);
            let mut argv = common::mdu_argv();
            argv.extend(["crypt", op, "--threads", "1", "--key-file"].map(str::to_owned));
            argv.push(key.to_str().unwrap().to_owned());
            argv.extend(extra.iter().map(|s| s.to_string()));
            argv.extend(["--in-place", "--journal"].map(str::to_owned));
            for p in [&journal, &work, &work] {
                argv.push(p.to_str().unwrap().to_owned());
            }
            let out = common::killed_at_sync(n, &argv);
            if out.status.code() == Some(0) {
                return false;
            }
            if !journal.exists() {
                // Killed before the journal was in place: nothing began.
                assert!(
                    std::fs::read(&work).unwrap() == std::fs::read(&src).unwrap(),
                    "{op} {extra:?}: killed at sync {n} before its journal existed, IN changed"
                );
                let left = common::entries(d);
                assert!(
                    left.iter().all(|e| !e.contains("mdu")),
                    "{op} {extra:?}: killed at sync {n}: left behind: {left:?}"
                );
                return true;
            }
            {
                let r = run(crypt(op, extra)
                    .args(["--in-place", "--resume", "--journal"])
                    .arg(&journal)
                    .arg(&work)
                    .arg(&work));
                expect_code(&r, 0, &format!("{op} {extra:?}: resume after kill {n}"));
            }
            assert!(
                !journal.exists(),
                "{op} {extra:?} kill {n}: the journal stays"
            );
            assert!(
                std::fs::read(&work).unwrap() == want,
                "{op} {extra:?}: killed at sync {n} and resumed, the bytes differ"
            );
            true
        });
    }
    assert!(points > 20, "only {points} kill points");
    // A journal binds its run: another key is refused, nothing changes.
    std::fs::copy(&plain, &work).unwrap();
    let _ = std::fs::remove_file(&journal);
    let mut argv = common::mdu_argv();
    argv.extend(["crypt", "encrypt", "--threads", "1", "--key-file"].map(str::to_owned));
    argv.push(key.to_str().unwrap().to_owned());
    argv.extend(["--in-place", "--journal"].map(str::to_owned));
    for p in [&journal, &work, &work] {
        argv.push(p.to_str().unwrap().to_owned());
    }
    let _ = common::killed_at_sync(4, &argv);
    let other = d.join("other");
    std::fs::write(&other, rng.bytes(64)).unwrap();
    let before = std::fs::read(&work).unwrap();
    let r = run(mdu()
        .args(["crypt", "encrypt", "--threads", "1", "--key-file"])
        .arg(&other)
        .args(["--in-place", "--resume", "--journal"])
        .arg(&journal)
        .arg(&work)
        .arg(&work));
    expect_code(&r, 2, "a resume with another key");
    assert!(String::from_utf8_lossy(&r.stderr).contains("another cipher, key"));
    assert!(
        std::fs::read(&work).unwrap() == before,
        "a refused resume wrote"
    );
}

/// The argv of `mdu crypt OP --in-place` over `work` with `journal`.
fn in_place_argv(op: &str, key: &Path, extra: &[&str], journal: &Path, work: &Path) -> Vec<String> {
    let mut argv = common::mdu_argv();
    argv.extend(["crypt", op, "--threads", "1", "--key-file"].map(str::to_owned));
    argv.push(key.to_str().unwrap().to_owned());
    argv.extend(extra.iter().map(|s| s.to_string()));
    argv.extend(["--in-place", "--journal"].map(str::to_owned));
    for p in [journal, work, work] {
        argv.push(p.to_str().unwrap().to_owned());
    }
    argv
}

/// The journal `j` with the record slot of the newest record (or both)
/// zeroed.
fn zero_slots(j: &[u8], both: bool) -> Vec<u8> {
    let mut j = j.to_vec();
    let seq = |i: usize| {
        let at = 4096 * (1 + i);
        (j.len() >= at + 16 && &j[at..at + 8] == b"MDUREC02")
            .then(|| u64::from_le_bytes(j[at + 8..at + 16].try_into().unwrap()))
    };
    let newest = if seq(0) > seq(1) { 0 } else { 1 };
    for i in 0..2 {
        if both || i == newest {
            let at = 4096 * (1 + i);
            let end = (at + 4096).min(j.len());
            if at < end {
                j[at..end].fill(0);
            }
        }
    }
    j
}

/// A resume of `crypt --in-place` never trusts a damaged or foreign
/// journal: runs killed at every sync point of three chunks, their
/// journals truncated, with a byte flipped in each part, with the newest or
/// both record slots zeroed, or given with another image of the same size
/// and key, either resume to exactly the bytes of an out-of-place run or
/// are refused (exit 1) with the image as the kill left it. No chunk is
/// converted twice, nothing of one image is written into another. Each
/// damage is tried at every other sync point unless `MDU_EXHAUSTIVE=1`.
#[test]
fn damaged_or_foreign_journals_are_refused_never_trusted() {
    let test = "crypt::damaged_or_foreign_journals_are_refused_never_trusted";
    if !have_tool("strace", test) {
        return;
    }
    if std::env::var("MDU_EMULATED").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED: {test}: the crash sweep runs on the host only");
        return;
    }
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(64)).unwrap();
    // Three chunks of 1 MiB (one thread).
    let (plain, plain_b) = (d.join("plain"), d.join("plain_b"));
    std::fs::write(&plain, rng.bytes(3 << 20)).unwrap();
    std::fs::write(&plain_b, rng.bytes(3 << 20)).unwrap();
    let (src, src_b, want) = (d.join("src"), d.join("src_b"), d.join("want"));
    let (work, journal) = (d.join("w"), d.join("j"));
    let crypt = |op: &str, extra: &[&str]| {
        let mut c = mdu();
        c.args(["crypt", op, "--threads", "1", "--key-file"])
            .arg(&key)
            .args(extra);
        c
    };
    let resume = |op: &str, extra: &[&str], image: &Path| {
        run(crypt(op, extra)
            .args(["--in-place", "--resume", "--journal"])
            .arg(&journal)
            .arg(image)
            .arg(image))
    };
    let (mut cases, mut resumed, mut refused, mut foreign_refused) = (0, 0, 0, 0);
    let (all, mut skipped) = (common::exhaustive(), 0);
    for (op, extra) in [
        ("encrypt", &[][..]),
        ("encrypt", &["--offset", "2048"][..]),
        ("decrypt", &["--offset", "2048"][..]),
    ] {
        if op == "encrypt" {
            std::fs::copy(&plain, &src).unwrap();
            std::fs::copy(&plain_b, &src_b).unwrap();
        } else {
            for (p, s) in [(&plain, &src), (&plain_b, &src_b)] {
                let _ = std::fs::remove_file(s);
                expect_code(&run(crypt("encrypt", extra).arg(p).arg(s)), 0, "source");
            }
        }
        let _ = std::fs::remove_file(&want);
        expect_code(
            &run(crypt(op, extra).arg(&src).arg(&want)),
            0,
            "out of place",
        );
        let want = std::fs::read(&want).unwrap();
        let argv = in_place_argv(op, &key, extra, &journal, &work);
        // Syncs 2..=7: the record and the data of each of the three chunks.
        for n in 2..=7 {
            std::fs::copy(&src, &work).unwrap();
            let _ = std::fs::remove_file(&journal);
            assert_ne!(common::killed_at_sync(n, &argv).status.code(), Some(0));
            let killed = std::fs::read(&work).unwrap();
            let j = std::fs::read(&journal).unwrap();
            let chunk = 1usize << 20;
            let mut damaged: Vec<(String, Vec<u8>)> = vec![("intact".into(), j.clone())];
            for cut in [
                0,
                4000,
                4096 + 100,
                8192 + 100,
                12288,
                12288 + 1000,
                j.len() - 1,
            ] {
                damaged.push((format!("cut to {cut}"), j[..cut.min(j.len())].to_vec()));
            }
            for at in [100, 4096 + 70, 8192 + 70, 12288 + 10, 12288 + chunk + 10] {
                if at < j.len() {
                    let mut x = j.clone();
                    x[at] ^= 0x40;
                    damaged.push((format!("byte {at} flipped"), x));
                }
            }
            damaged.push(("newest slot zeroed".into(), zero_slots(&j, false)));
            damaged.push(("both slots zeroed".into(), zero_slots(&j, true)));
            for (k, (what, bytes)) in damaged.into_iter().enumerate() {
                // Each damage at every other sync point (alternating), the
                // intact journal at each; MDU_EXHAUSTIVE=1: each at each.
                if !all && k > 0 && (k + n) % 2 == 1 {
                    skipped += 1;
                    continue;
                }
                cases += 1;
                std::fs::write(&work, &killed).unwrap();
                std::fs::write(&journal, &bytes).unwrap();
                let r = resume(op, extra, &work);
                let now = std::fs::read(&work).unwrap();
                if r.status.code() == Some(0) {
                    assert!(
                        now == want,
                        "{op} {extra:?}, killed at sync {n}, journal {what}: resumed with exit 0 to wrong bytes"
                    );
                    resumed += 1;
                } else {
                    expect_code(&r, 1, &format!("{op} {extra:?} sync {n} journal {what}"));
                    assert!(
                        now == killed,
                        "{op} {extra:?}, killed at sync {n}, journal {what}: refused but wrote"
                    );
                    assert!(
                        what != "intact",
                        "{op} {extra:?} sync {n}: an intact journal was refused"
                    );
                    refused += 1;
                }
            }
            // The intact journal with another image of the same size, key
            // and options: refused, that image untouched.
            cases += 1;
            std::fs::write(&journal, &j).unwrap();
            let other = d.join("other");
            std::fs::copy(&src_b, &other).unwrap();
            let before = std::fs::read(&other).unwrap();
            let r = resume(op, extra, &other);
            assert_ne!(
                r.status.code(),
                Some(0),
                "{op} {extra:?} sync {n}: a foreign journal was resumed"
            );
            assert!(
                std::fs::read(&other).unwrap() == before,
                "{op} {extra:?} sync {n}: a foreign journal wrote into another image"
            );
            foreign_refused += 1;
        }
    }
    eprintln!(
        "{test}: {cases} resumes of damaged or foreign journals: {resumed} finished to the right bytes, \
         {refused} damaged refused, {foreign_refused} foreign refused, 0 wrong"
    );
    if skipped > 0 {
        println!(
            "{test}: sampled: {cases} of {} resumes (each damage at every other kill point); \
             MDU_EXHAUSTIVE=1 runs all",
            cases + skipped
        );
    }
}

/// Two runs on one image exclude each other: a second `--in-place` run, or
/// a second `--resume` of the same journal, started while the first goes
/// on is refused with exit 5 naming the first, and the first ends with the
/// right bytes.
#[test]
fn a_second_in_place_run_on_one_image_is_refused_while_the_first_goes_on() {
    let test = "crypt::a_second_in_place_run_on_one_image_is_refused_while_the_first_goes_on";
    if std::env::var("MDU_EMULATED").is_ok_and(|v| v == "1") {
        eprintln!("SKIPPED: {test}: locks are the host's; it runs on the host only");
        return;
    }
    let mut rng = Rng::new(test);
    let dir = scratch();
    let d = dir.path();
    let key = d.join("key");
    std::fs::write(&key, rng.bytes(64)).unwrap();
    let plain = d.join("plain");
    std::fs::write(&plain, rng.bytes(96 << 20)).unwrap();
    let want = d.join("want");
    expect_code(
        &run(mdu()
            .args(["crypt", "encrypt", "--threads", "1", "--key-file"])
            .arg(&key)
            .arg(&plain)
            .arg(&want)),
        0,
        "out of place",
    );
    let want = std::fs::read(&want).unwrap();
    let (work, journal, journal2) = (d.join("w"), d.join("j"), d.join("j2"));
    for second_resumes in [false, true] {
        if second_resumes && !have_tool("strace", test) {
            continue;
        }
        std::fs::copy(&plain, &work).unwrap();
        let _ = std::fs::remove_file(&journal);
        let _ = std::fs::remove_file(&journal2);
        let mut argv = in_place_argv("encrypt", &key, &[], &journal, &work);
        if second_resumes {
            // The first run is itself a resume of a run killed early.
            let _ = common::killed_at_sync(3, &argv);
            assert!(journal.exists());
            argv.insert(argv.len() - 2, "--resume".into());
        }
        let mut first = Command::new(&argv[0]);
        first.args(&argv[1..]);
        let first = first
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(150));
        let second_journal = if second_resumes { &journal } else { &journal2 };
        let mut second = mdu();
        second
            .args(["crypt", "encrypt", "--threads", "1", "--key-file"])
            .arg(&key)
            .args(["--in-place", "--journal"])
            .arg(second_journal);
        if second_resumes {
            second.arg("--resume");
        }
        let r = run(second.arg(&work).arg(&work));
        let out = first.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "the first run failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        expect_code(&r, 5, "a second run on the same image");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains("busy") && err.contains("process"), "{err}");
        assert!(
            std::fs::read(&work).unwrap() == want,
            "the first run's result is wrong"
        );
        assert!(!journal2.exists(), "the refused run left a journal");
    }
}

/// The wide-block specs dm-crypt hosts (`aes-hctr2-*`,
/// `xchacha12,aes-adiantum-*`): `mdu crypt` writes what the library's
/// `SectorCipher` makes of the same spec, key and geometry (the library's
/// own test checks those against HCTR2 and Adiantum one sector at a time
/// with the kernel's IVs), and decrypts it back; an IV mode that needs a
/// one-block IV is refused with its name.
#[test]
fn wide_block_specs_encrypt_as_the_library_does() {
    use mdu_dmcrypt::{Direction, Geometry, SectorCipher, WeakKeys};
    let d = scratch();
    let dir = d.path();
    let mut rng = Rng::new("crypt::wide_block_specs_encrypt_as_the_library_does");
    let plain = rng.bytes(64 * 4096);
    let input = dir.join("in");
    std::fs::write(&input, &plain).unwrap();
    for (spec, key_len, ss) in [
        ("aes-hctr2-plain64", 32, 512u32),
        ("aes-hctr2-plain64be", 16, 4096),
        ("xchacha12,aes-adiantum-plain64", 32, 4096),
        ("xchacha12,aes-adiantum-plain", 32, 512),
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
}
