//! `mdu fsverity digest` against `fsverity digest` (fsverity-utils): the
//! same stdout byte for byte, the same Merkle tree and descriptor files,
//! over random sizes, hash algorithms, block sizes and salts.

use std::path::PathBuf;
use std::process::Command;

use crate::common::{Rng, expect_code, have_tool, mdu, run, scratch};
use mdu_testkit::hex;

#[test]
fn matches_fsverity_digest() {
    if !have_tool("fsverity", "matches_fsverity_digest") {
        return;
    }
    let mut rng = Rng::new("matches_fsverity_digest");
    let dir = scratch();
    let d = dir.path();
    for case in 0..40 {
        let nfiles = 1 + rng.below(3) as usize;
        let mut files: Vec<PathBuf> = Vec::new();
        for f in 0..nfiles {
            let len = match rng.below(8) {
                0 => rng.pick(&[0usize, 1, 4095, 4096, 4097, 65536]),
                1 => 1 + rng.below(3 << 20) as usize,
                _ => rng.below(300_000) as usize,
            };
            let p = d.join(format!("file{case}_{f}.bin"));
            // Mostly random, sometimes zeros (equal blocks).
            let data = if rng.below(4) == 0 {
                vec![0u8; len]
            } else {
                rng.bytes(len)
            };
            std::fs::write(&p, data).unwrap();
            files.push(p);
        }
        let alg = rng.pick(&["sha256", "sha512"]);
        let bs = rng.pick(&[512u32, 1024, 2048, 4096, 4096, 8192, 65536]);
        let mut opts = vec![format!("--hash-alg={alg}"), format!("--block-size={bs}")];
        if rng.below(2) == 0 {
            let salt_len = rng.below(33) as usize;
            let mut salt = hex(&rng.bytes(salt_len));
            if rng.below(3) == 0 {
                salt = salt.to_uppercase();
            }
            opts.push(format!("--salt={salt}"));
        }
        match rng.below(4) {
            0 => opts.push("--compact".into()),
            1 => opts.push("--for-builtin-sig".into()),
            _ => {}
        }
        let single = files.len() == 1 && rng.below(2) == 0;
        if single {
            opts.push(format!(
                "--out-merkle-tree={}",
                d.join("ref.tree").display()
            ));
            opts.push(format!("--out-descriptor={}", d.join("ref.desc").display()));
        }
        let want = run(Command::new("fsverity")
            .arg("digest")
            .args(&files)
            .args(&opts));
        let mine_opts: Vec<String> = opts
            .iter()
            .map(|o| {
                o.replace("ref.tree", "mdu.tree")
                    .replace("ref.desc", "mdu.desc")
            })
            .collect();
        let threads = rng.pick(&["1", "2"]);
        // Half the cases read the files instead of mapping them.
        let read = rng.below(2) == 0;
        let got = run(mdu()
            .args(["fsverity", "digest", "--threads", threads])
            .args(read.then_some("--no-mmap"))
            .args(&files)
            .args(&mine_opts));
        let what = format!("case {case}: {opts:?} threads={threads} no-mmap={read}");
        expect_code(&want, 0, &format!("fsverity digest, {what}"));
        expect_code(&got, 0, &what);
        assert_eq!(
            String::from_utf8_lossy(&got.stdout),
            String::from_utf8_lossy(&want.stdout),
            "{what}"
        );
        if single {
            for (a, b) in [("ref.tree", "mdu.tree"), ("ref.desc", "mdu.desc")] {
                let a = std::fs::read(d.join(a)).unwrap();
                let b = std::fs::read(d.join(b)).unwrap();
                assert!(a == b, "{what}: {} differs", b.len());
            }
        }
        for f in files {
            std::fs::remove_file(f).unwrap();
        }
    }
}

#[test]
fn bad_input_exits_2() {
    let dir = scratch();
    let d = dir.path();
    let f = d.join("f");
    std::fs::write(&f, b"abc").unwrap();
    let missing = d.join("missing");
    for (args, what) in [
        (vec!["--salt=abc"], "odd hex salt"),
        (vec!["--salt=zz"], "non-hex salt"),
        (
            vec!["--salt=", "--block-size=1000"],
            "block size not a power of two",
        ),
        (vec!["--hash-alg=md5"], "unknown hash"),
    ] {
        let out = run(mdu().args(["fsverity", "digest"]).args(args).arg(&f));
        expect_code(&out, 2, what);
    }
    let long_salt = format!("--salt={}", "ab".repeat(33));
    let out = run(mdu().args(["fsverity", "digest", &long_salt]).arg(&f));
    expect_code(&out, 2, "33-byte salt");
    let out = run(mdu().args(["fsverity", "digest"]).arg(&missing));
    expect_code(&out, 1, "missing file (fsverity's 1)");
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing"));
    let out = run(mdu()
        .args(["fsverity", "digest", "--out-descriptor"])
        .arg(d.join("desc"))
        .arg(&f)
        .arg(&f));
    expect_code(&out, 2, "--out-descriptor with two files");
    assert!(!d.join("desc").exists());
}

#[test]
fn published_vector() {
    // fsverity-utils test_compute_digest.c: byte i = (i%11 + i%439 + i%1103) mod 256,
    // 1000000 bytes, SHA-256, 4096-byte blocks, salt "abcd".
    let dir = scratch();
    let f = dir.path().join("v");
    let data: Vec<u8> = (0..1_000_000u32)
        .map(|i| ((i % 11 + i % 439 + i % 1103) % 256) as u8)
        .collect();
    std::fs::write(&f, data).unwrap();
    let out = run(mdu()
        .args(["fsverity", "digest", "--compact", "--salt=61626364"])
        .arg(&f));
    expect_code(&out, 0, "vector");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "917900b0d299454aa304d5debc6f39e4af7b5abe33bdbc568d5d8f1e5c4d8652\n"
    );
}

/// A file larger than one mapping window (64 MiB) is hashed window by
/// window; the digest, tree and descriptor still match fsverity-utils, and
/// `veritysetup format` for the same file as a data image.
#[test]
fn a_file_larger_than_one_mapping_window() {
    if !have_tool("fsverity", "a_file_larger_than_one_mapping_window")
        || !have_tool("veritysetup", "a_file_larger_than_one_mapping_window")
    {
        return;
    }
    let mut rng = Rng::new("a_file_larger_than_one_mapping_window");
    let dir = scratch();
    let d = dir.path();
    let f = d.join("big");
    // Two windows and a partial block: 64 MiB + 3 blocks + 100 bytes.
    let mut data = rng.bytes(1 << 20).repeat(64);
    data.extend(rng.bytes(3 * 4096 + 100));
    std::fs::write(&f, &data).unwrap();
    drop(data);
    for threads in ["1", "2"] {
        let want = run(Command::new("fsverity")
            .args(["digest", "--out-merkle-tree"])
            .arg(d.join("ref.tree"))
            .arg(&f));
        let got = run(mdu()
            .args([
                "fsverity",
                "digest",
                "--threads",
                threads,
                "--out-merkle-tree",
            ])
            .arg(d.join("mdu.tree"))
            .arg(&f));
        expect_code(&want, 0, "fsverity digest");
        expect_code(&got, 0, "mdu fsverity digest");
        assert_eq!(got.stdout, want.stdout, "threads={threads}");
        let same = std::fs::read(d.join("ref.tree")).unwrap()
            == std::fs::read(d.join("mdu.tree")).unwrap();
        assert!(same, "Merkle trees differ, threads={threads}");

        let salt = "--salt=0123456789abcdef";
        let want = run(Command::new("veritysetup")
            .args(["format", "--no-superblock", salt])
            .arg(&f)
            .arg(d.join("ref.hash")));
        let got = run(mdu()
            .args([
                "verity",
                "format",
                "--no-superblock",
                salt,
                "--threads",
                threads,
            ])
            .arg(&f)
            .arg(d.join("mdu.hash")));
        expect_code(&want, 0, "veritysetup format");
        expect_code(&got, 0, "mdu verity format");
        let root = |o: &std::process::Output| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find(|l| l.starts_with("Root hash"))
                .map(str::to_owned)
        };
        assert_eq!(root(&got), root(&want), "threads={threads}");
        assert!(root(&want).is_some());
        let same = std::fs::read(d.join("ref.hash")).unwrap()
            == std::fs::read(d.join("mdu.hash")).unwrap();
        assert!(same, "hash devices differ, threads={threads}");
    }
}

/// Many small files at once (the image-builder case): the same stdout as
/// `fsverity digest` byte for byte, with empty files, sizes at and around
/// block boundaries, every option that changes the lines, one and two
/// threads, whatever the mapping option.
#[test]
fn many_files_print_what_fsverity_digest_prints() {
    if !have_tool("fsverity", "many_files_print_what_fsverity_digest_prints") {
        return;
    }
    let mut rng = Rng::new("many_files_print_what_fsverity_digest_prints");
    let dir = scratch();
    let d = dir.path();
    let mut files: Vec<PathBuf> = Vec::new();
    for i in 0..300 {
        let len = match rng.below(6) {
            0 => rng.pick(&[0usize, 1, 4095, 4096, 4097, 8192, 131_072]),
            1 => 1 + rng.below(3 << 20) as usize,
            _ => rng.below(128 << 10) as usize,
        };
        let p = d.join(format!("f{i:03}"));
        std::fs::write(&p, rng.bytes(len)).unwrap();
        files.push(p);
    }
    for case in 0..8 {
        let alg = rng.pick(&["sha256", "sha512"]);
        let bs = rng.pick(&[1024u32, 4096, 4096, 65536]);
        let mut opts = vec![format!("--hash-alg={alg}"), format!("--block-size={bs}")];
        if rng.below(2) == 0 {
            let salt_len = rng.below(33) as usize;
            opts.push(format!("--salt={}", hex(&rng.bytes(salt_len))));
        }
        match case % 4 {
            1 => opts.push("--compact".into()),
            2 => opts.push("--for-builtin-sig".into()),
            _ => {}
        }
        let want = run(Command::new("fsverity")
            .arg("digest")
            .args(&files)
            .args(&opts));
        expect_code(&want, 0, "fsverity digest");
        let threads = rng.pick(&["1", "2"]);
        let got = run(mdu()
            .args(["fsverity", "digest", "--threads", threads])
            .args((case % 2 == 1).then_some("--no-mmap"))
            .args(&files)
            .args(&opts));
        let what = format!("case {case}: {opts:?} threads={threads}");
        expect_code(&got, 0, &what);
        assert!(got.stdout == want.stdout, "{what}: stdout differs");
    }
}

/// A FILE that cannot be read in the middle of the list: `fsverity digest`
/// prints the lines before it and stops; so does mdu (exit status 2, the
/// path in the message), wherever it lies in mdu's batches.
#[test]
fn many_files_stop_at_the_first_that_fails_like_fsverity_digest() {
    if !have_tool(
        "fsverity",
        "many_files_stop_at_the_first_that_fails_like_fsverity_digest",
    ) {
        return;
    }
    let mut rng = Rng::new("many_files_stop_at_the_first_that_fails_like_fsverity_digest");
    let dir = scratch();
    let d = dir.path();
    let mut files: Vec<PathBuf> = Vec::new();
    for i in 0..200 {
        let p = d.join(format!("f{i:03}"));
        let len = rng.below(20_000) as usize;
        std::fs::write(&p, rng.bytes(len)).unwrap();
        files.push(p);
    }
    std::fs::create_dir(d.join("a-directory")).unwrap();
    for (bad, at) in [
        ("missing", 0),
        ("missing", 37),
        ("a-directory", 150),
        ("missing", 200),
    ] {
        let mut list = files.clone();
        list.insert(at, d.join(bad));
        let want = run(Command::new("fsverity").arg("digest").args(&list));
        let got = run(mdu().args(["fsverity", "digest"]).args(&list));
        let what = format!("{bad} at {at}");
        expect_code(&want, 1, &format!("fsverity digest, {what}"));
        expect_code(&got, 1, &what);
        assert!(got.stdout == want.stdout, "{what}: stdout differs");
        assert_eq!(
            String::from_utf8_lossy(&got.stdout).lines().count(),
            at,
            "{what}"
        );
        assert!(String::from_utf8_lossy(&got.stderr).contains(bad), "{what}");
    }
}

/// `--json` gives one object per file with the same digest and formatted
/// digest as the text forms, for every file, in order.
#[test]
fn json_lines_say_what_the_text_says() {
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new("json_lines_say_what_the_text_says");
    let files: Vec<PathBuf> = (0..3)
        .map(|i| {
            let p = d.join(format!("f{i}"));
            let len = rng.below(20_000) as usize;
            std::fs::write(&p, rng.bytes(len)).unwrap();
            p
        })
        .collect();
    let digest = |extra: &[&str]| {
        let out = run(mdu()
            .args(["fsverity", "digest", "--salt=0a0b"])
            .args(extra)
            .args(&files));
        expect_code(&out, 0, "digest");
        String::from_utf8(out.stdout).unwrap()
    };
    let text = digest(&[]);
    let sig = digest(&["--for-builtin-sig"]);
    let json = digest(&["--json"]);
    let lines: Vec<&str> = json.lines().collect();
    assert_eq!(lines.len(), files.len());
    for ((j, t), s) in lines.iter().zip(text.lines()).zip(sig.lines()) {
        let v: serde_json::Value = serde_json::from_str(j).expect("one JSON object per line");
        let file = v["file"].as_str().unwrap();
        assert_eq!(
            t,
            format!("sha256:{} {file}", v["digest"].as_str().unwrap())
        );
        assert_eq!(
            s,
            format!("{} {file}", v["formatted_digest"].as_str().unwrap())
        );
        assert_eq!(v["salt"], "0a0b");
        assert_eq!(v["block_size"], 4096);
    }
    let out = run(mdu()
        .args(["fsverity", "digest", "--json", "--compact"])
        .args(&files));
    expect_code(&out, 2, "--json with --compact");
}

#[test]
fn the_null_device_has_the_empty_file_digest_like_fsverity_digest() {
    let test = "the_null_device_has_the_empty_file_digest_like_fsverity_digest";
    let dir = scratch();
    let d = dir.path();
    let empty = d.join("empty");
    std::fs::write(&empty, b"").unwrap();
    let option_sets: [&[&str]; 4] = [
        &[],
        &["--compact"],
        &["--for-builtin-sig"],
        &[
            "--hash-alg",
            "sha512",
            "--block-size",
            "1024",
            "--salt",
            "00ff",
        ],
    ];
    for opts in option_sets {
        for mmap in [&[][..], &["--no-mmap"][..]] {
            let out = run(mdu()
                .args(["fsverity", "digest"])
                .args(opts)
                .args(mmap)
                .arg("/dev/null"));
            expect_code(
                &out,
                0,
                &format!("mdu fsverity digest {opts:?} {mmap:?} /dev/null"),
            );
            let of_empty = run(mdu().args(["fsverity", "digest"]).args(opts).arg(&empty));
            expect_code(&of_empty, 0, "mdu fsverity digest of an empty file");
            let want = String::from_utf8_lossy(&of_empty.stdout)
                .replace(&*empty.to_string_lossy(), "/dev/null");
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                want,
                "{opts:?} {mmap:?}"
            );
        }
    }
    // Among many files, and with its tree and descriptor written out.
    let many = run(mdu()
        .args(["fsverity", "digest", "/dev/null"])
        .arg(&empty)
        .arg("/dev/null"));
    expect_code(&many, 0, "mdu fsverity digest of many files with /dev/null");
    let one = |out: &str| {
        run(mdu()
            .args(["fsverity", "digest", "--out-merkle-tree"])
            .arg(d.join(format!("{out}.tree")))
            .arg("--out-descriptor")
            .arg(d.join(format!("{out}.desc")))
            .arg("/dev/null"))
    };
    expect_code(&one("mdu"), 0, "mdu fsverity digest --out-* /dev/null");
    if !have_tool("fsverity", test) {
        return;
    }
    for opts in option_sets {
        let theirs = run(Command::new("fsverity")
            .arg("digest")
            .args(opts)
            .arg("/dev/null"));
        expect_code(&theirs, 0, "fsverity digest /dev/null");
        let ours = run(mdu()
            .args(["fsverity", "digest"])
            .args(opts)
            .arg("/dev/null"));
        assert_eq!(ours.stdout, theirs.stdout, "{opts:?}");
    }
    let theirs = run(Command::new("fsverity")
        .args(["digest", "/dev/null"])
        .arg(&empty)
        .arg("/dev/null"));
    assert_eq!(many.stdout, theirs.stdout, "many files");
    let theirs = run(Command::new("fsverity")
        .args(["digest", "--out-merkle-tree"])
        .arg(d.join("theirs.tree"))
        .arg("--out-descriptor")
        .arg(d.join("theirs.desc"))
        .arg("/dev/null"));
    expect_code(&theirs, 0, "fsverity digest --out-* /dev/null");
    for ext in ["tree", "desc"] {
        assert_eq!(
            std::fs::read(d.join(format!("mdu.{ext}"))).unwrap(),
            std::fs::read(d.join(format!("theirs.{ext}"))).unwrap(),
            "{ext}"
        );
    }
}
