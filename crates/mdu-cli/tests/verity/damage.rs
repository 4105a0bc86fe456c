//! Bad input refused with the output left alone, and tampered images that
//! never verify.

use super::*;

#[test]
fn bad_input_and_atomic_output() {
    let dir = scratch();
    let d = dir.path();
    let data = d.join("data");
    std::fs::write(&data, vec![5u8; 4000]).unwrap();
    let hash = d.join("hash");
    // No whole data block: exit 2, nothing created.
    let out = run(mdu()
        .args(["verity", "format", "--salt=-"])
        .arg(&data)
        .arg(&hash));
    expect_code(&out, 2, "no whole block");
    assert!(String::from_utf8_lossy(&out.stderr).contains("data"));
    assert!(!hash.exists());
    let entries = common::entries(d);
    assert_eq!(entries, ["data"]);
    // More --data-blocks than the data holds.
    std::fs::write(&data, vec![5u8; 3 * 4096]).unwrap();
    let out = run(mdu()
        .args(["verity", "format", "--data-blocks=4"])
        .arg(&data)
        .arg(&hash));
    expect_code(&out, 2, "--data-blocks too large");
    assert!(!hash.exists());
    for bad in [
        "--data-block-size=1000",
        "--hash-block-size=256",
        "--format=2",
        "--hash-offset=100",
        "--salt=xyz",
        "--uuid=not-a-uuid",
        "--hash=md5",
    ] {
        let out = run(mdu().args(["verity", "format", bad]).arg(&data).arg(&hash));
        expect_code(&out, 2, bad);
        assert!(!hash.exists(), "{bad}");
    }
    // Verify: bad root hex, wrong root length, no superblock.
    let out = run(mdu()
        .args(["verity", "format", "--salt=-"])
        .arg(&data)
        .arg(&hash));
    expect_code(&out, 0, "format");
    let root = root_of(&out.stdout);
    expect_code(&mdu_verify(&data, &hash, &[], "zz"), 2, "bad hex");
    expect_code(&mdu_verify(&data, &hash, &[], &root[..62]), 2, "short root");
    let nosb = d.join("nosb");
    std::fs::write(&nosb, vec![0u8; 8192]).unwrap();
    expect_code(&mdu_verify(&data, &nosb, &[], &root), 2, "no superblock");
    // Same file for data and hash with overlapping areas.
    let out = run(mdu().args(["verity", "format"]).arg(&data).arg(&data));
    expect_code(&out, 2, "overlap");
    assert_eq!(std::fs::read(&data).unwrap(), vec![5u8; 3 * 4096]);
}

/// Write `value` as 8 little-endian bytes at `at` of `path`.
fn poke_u64(path: &Path, at: usize, value: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    std::fs::write(path, bytes).unwrap();
}

/// The attacks on `verify` that once exited 0: each must now fail, the
/// honest image must still verify, and where `veritysetup verify` refuses
/// too the verdicts agree (where it accepts, the case is printed).
#[test]
fn tampered_images_never_verify() {
    let dir = scratch();
    let d = dir.path();
    let data = d.join("data");
    let hash = d.join("hash");
    let bare = d.join("bare");
    let mut rng = Rng::new("tampered_images_never_verify");
    std::fs::write(&data, rng.bytes(16 * 4096)).unwrap();
    let out = run(mdu()
        .args(["verity", "format", "--salt=-"])
        .arg(&data)
        .arg(&hash));
    expect_code(&out, 0, "format");
    let root = root_of(&out.stdout);
    let out = run(mdu()
        .args(["verity", "format", "--salt=-", "--no-superblock"])
        .arg(&data)
        .arg(&bare));
    expect_code(&out, 0, "format --no-superblock");
    assert_eq!(root_of(&out.stdout), root);
    let empty = d.join("empty");
    std::fs::write(&empty, b"").unwrap();
    let short = d.join("short");
    std::fs::write(&short, &std::fs::read(&data).unwrap()[..10 * 4096 + 100]).unwrap();
    let zero_sb = d.join("zero-sb");
    std::fs::copy(&hash, &zero_sb).unwrap();
    poke_u64(&zero_sb, 72, 0);
    let one_sb = d.join("one-sb");
    std::fs::copy(&hash, &one_sb).unwrap();
    poke_u64(&one_sb, 72, 1);
    // A one-block "data device" that is a copy of the top hash block.
    let forged = d.join("forged");
    std::fs::write(&forged, &std::fs::read(&hash).unwrap()[4096..8192]).unwrap();

    let tool = have_tool("veritysetup", "tampered_images_never_verify");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let nosb = s(&["--no-superblock", "--salt=-"]);
    let none: Vec<String> = Vec::new();
    // (what, data, hash, options, exit status, words the message must hold)
    type Case<'a> = (&'a str, &'a Path, &'a Path, Vec<String>, i32, &'a str);
    let cases: Vec<Case<'_>> = vec![
        ("honest image", &data, &hash, none.clone(), 0, ""),
        (
            "honest image, no superblock",
            &data,
            &bare,
            nosb.clone(),
            0,
            "",
        ),
        (
            "honest image, every shape parameter pinned",
            &data,
            &hash,
            s(&[
                "--data-blocks=16",
                "--hash=sha256",
                "--salt=-",
                "--format=1",
            ]),
            0,
            "",
        ),
        (
            "superblock data_blocks = 0",
            &data,
            &zero_sb,
            none.clone(),
            1,
            "data_blocks is 0",
        ),
        (
            "no superblock, empty data",
            &empty,
            &bare,
            nosb.clone(),
            1,
            "no whole data block",
        ),
        (
            "/dev/null as data",
            Path::new("/dev/null"),
            &hash,
            none.clone(),
            1,
            "data block 0 (bytes 0..4096) is missing",
        ),
        (
            "short data",
            &short,
            &hash,
            none.clone(),
            1,
            "data block 10 (bytes 40960..45056) is missing",
        ),
        (
            "--data-blocks 16, superblock says 1",
            &data,
            &one_sb,
            s(&["--data-blocks", "16"]),
            1,
            "the superblock says data_blocks = 1, but 16 was pinned",
        ),
        (
            "forged one-block tree, data_blocks pinned",
            &forged,
            &one_sb,
            s(&["--data-blocks=16"]),
            1,
            "data_blocks = 1",
        ),
        (
            "--hash-block-size 1024 pinned, superblock says 4096",
            &data,
            &hash,
            s(&["--hash-block-size=1024"]),
            1,
            "hash_block_size = 4096, but 1024",
        ),
    ];
    for (what, data, hash, opts, code, words) in cases {
        // The mapped data (the default) and the data read with read(2)
        // give the same verdict and the same message.
        let mut read = opts.clone();
        read.push("--no-mmap".into());
        for opts in [&opts, &read] {
            let out = mdu_verify(data, hash, opts, &root);
            expect_code(&out, code, &format!("{what} {opts:?}"));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(words), "{what} {opts:?}: {stderr}");
        }
        if tool {
            let theirs = veritysetup_verify(data, hash, &opts, &root);
            if code == 0 {
                assert!(theirs, "{what}: veritysetup refuses an honest image");
            } else if theirs {
                println!("{what}: mdu exits {code}, veritysetup verify exits 0");
            }
        }
    }
    // Documented, not hidden: without a pin the superblock chooses the
    // shape, and the forged one-block tree does hash to the root.
    let out = mdu_verify(&forged, &one_sb, &none, &root);
    expect_code(&out, 0, "forged one-block tree, nothing pinned");
}
