//! Forward error correction: the parity veritysetup writes, verify and repair,
//! the same parity however the data is read.

use super::*;

/// `--fec-device` against `veritysetup format --fec-device`: the same
/// parity bytes, hash image and summary, for every documented placement
/// (a file of its own, inside the hash image after the tree, all three
/// areas in one file with `--hash-offset`) and roots 2 to 24.
#[test]
fn fec_matches_veritysetup_format() {
    if !have_tool("veritysetup", "fec_matches_veritysetup_format") {
        return;
    }
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new("fec_matches_veritysetup_format");
    let salt = hex(&rng.bytes(32));
    let uuid = "a60c98d2-ae9b-4865-bfcb-b4e3ace11033";
    for (case, roots) in [2u8, 3, 7, 13, 24].into_iter().enumerate() {
        let bs = if case % 2 == 0 { 4096u64 } else { 512 };
        let blocks = [1u64, 253, 254, 700, 1 + rng.below(2000)][case];
        let data = rng.bytes((blocks * bs) as usize);
        let common = |sb: bool| {
            let mut v = vec![
                format!("--salt={salt}"),
                format!("--uuid={uuid}"),
                format!("--data-block-size={bs}"),
                format!("--hash-block-size={bs}"),
                format!("--fec-roots={roots}"),
            ];
            if !sb {
                v.push("--no-superblock".into());
            }
            v
        };
        // (name, extra options, FEC in the hash image at this offset, data
        // and hash in one file)
        let tree_end = {
            let probe = d.join("probe");
            std::fs::write(&probe, &data).unwrap();
            let out = run(mdu()
                .args(["verity", "format"])
                .args(common(true))
                .arg(&probe)
                .arg(d.join("probe-hash")));
            expect_code(&out, 0, "probe");
            std::fs::metadata(d.join("probe-hash")).unwrap().len()
        };
        for (name, sb, placement) in [
            ("separate", case % 3 != 1, 0u8),
            ("in the hash image", true, 1),
            ("one file with --hash-offset", true, 2),
        ] {
            let mut outputs = Vec::new();
            for tool in ["mdu", "veritysetup"] {
                let dd = d.join(format!("{tool}-data"));
                let hh = d.join(format!("{tool}-hash"));
                let ff = d.join(format!("{tool}-fec"));
                for f in [&hh, &ff] {
                    let _ = std::fs::remove_file(f);
                }
                std::fs::write(&dd, &data).unwrap();
                let mut opts = common(sb);
                let (hash, fec) = match placement {
                    0 => (hh.clone(), ff.clone()),
                    1 => {
                        // veritysetup needs the file to reach the offset.
                        let at = tree_end.next_multiple_of(bs) + bs;
                        std::fs::write(&hh, vec![0u8; at as usize]).unwrap();
                        opts.push(format!("--fec-offset={at}"));
                        (hh.clone(), hh.clone())
                    }
                    _ => {
                        let hash_at = blocks * bs;
                        let fec_at = hash_at + tree_end.next_multiple_of(bs);
                        let mut v = data.clone();
                        v.resize(fec_at as usize, 0);
                        std::fs::write(&dd, v).unwrap();
                        opts.push(format!("--data-blocks={blocks}"));
                        opts.push(format!("--hash-offset={hash_at}"));
                        opts.push(format!("--fec-offset={fec_at}"));
                        (dd.clone(), dd.clone())
                    }
                };
                opts.push(format!("--fec-device={}", fec.display()));
                let mut cmd = if tool == "mdu" {
                    let mut c = mdu();
                    c.args(["verity", "format"]);
                    c
                } else {
                    let mut c = Command::new("veritysetup");
                    c.arg("format");
                    c
                };
                let out = run(cmd.args(&opts).arg(&dd).arg(&hash));
                expect_code(&out, 0, &format!("{tool} {name} roots {roots}"));
                let summary = String::from_utf8_lossy(&out.stdout)
                    .replace(&hash.display().to_string(), "HASH");
                outputs.push((
                    std::fs::read(&hash).unwrap(),
                    std::fs::read(&fec).unwrap(),
                    summary,
                ));
            }
            let what = format!("{name}, roots {roots}, {blocks} blocks of {bs}");
            assert!(outputs[0].0 == outputs[1].0, "{what}: hash image differs");
            assert!(outputs[0].1 == outputs[1].1, "{what}: FEC bytes differ");
            assert_eq!(outputs[0].2, outputs[1].2, "{what}: summary differs");
        }
    }
}

/// `verify --fec-device` corrects in view only, `repair` writes the
/// corrections back exactly, damage beyond the parity is exit status 1
/// with nothing written; `veritysetup verify --fec-device` accepts the
/// images mdu wrote and finds the same number of repairable bytes.
#[test]
fn fec_verify_and_repair() {
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new("fec_verify_and_repair");
    let (data, hash, fec) = (d.join("data"), d.join("hash"), d.join("fec"));
    let clean = rng.bytes(300 * 4096);
    std::fs::write(&data, &clean).unwrap();
    let fec_opts = [
        format!("--fec-device={}", fec.display()),
        "--fec-roots=4".to_owned(),
    ];
    let out = run(mdu()
        .args(["verity", "format", "--salt=-"])
        .args(&fec_opts)
        .arg(&data)
        .arg(&hash));
    expect_code(&out, 0, "format");
    let root = root_of(&out.stdout);
    let clean_hash = std::fs::read(&hash).unwrap();
    let tool = have_tool("veritysetup", "fec_verify_and_repair");
    if tool {
        assert!(veritysetup_verify(&data, &hash, &fec_opts, &root));
    }
    // 40 random bytes of the data and 3 of the tree (2 corrections per
    // codeword: a few codewords get two of them).
    let mut bad = clean.clone();
    for _ in 0..40 {
        let at = rng.below(bad.len() as u64) as usize;
        bad[at] ^= 1 + rng.below(255) as u8;
    }
    let mut bad_hash = clean_hash.clone();
    for _ in 0..3 {
        let at = 4096 + rng.below(bad_hash.len() as u64 - 4096) as usize;
        bad_hash[at] ^= 0x5a;
    }
    std::fs::write(&data, &bad).unwrap();
    std::fs::write(&hash, &bad_hash).unwrap();
    expect_code(&mdu_verify(&data, &hash, &[], &root), 1, "no FEC");
    let out = mdu_verify(&data, &hash, &fec_opts, &root);
    expect_code(&out, 0, "verify --fec-device");
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(said.contains("FEC corrected"), "{said}");
    assert_eq!(
        std::fs::read(&data).unwrap(),
        bad,
        "verify wrote to the data"
    );
    if tool {
        let out = run(Command::new("veritysetup")
            .args(["verify", "-v"])
            .args(&fec_opts)
            .arg(&data)
            .arg(&hash)
            .arg(&root));
        let theirs = String::from_utf8_lossy(&out.stderr).to_string();
        let count = |s: &str, pre: &str, post: &str| {
            s.split(pre)
                .nth(1)
                .and_then(|r| r.split(post).next())
                .map(str::to_owned)
        };
        assert_eq!(
            count(&said, "FEC corrected ", " bytes"),
            count(&theirs, "Found ", " repairable"),
            "mdu: {said} veritysetup: {theirs}"
        );
    }
    let repair = |data: &Path| {
        run(mdu()
            .args(["verity", "repair"])
            .args(&fec_opts)
            .arg(data)
            .arg(&hash)
            .arg(&root))
    };
    expect_code(&repair(&data), 0, "repair");
    assert!(std::fs::read(&data).unwrap() == clean, "data not restored");
    assert!(
        std::fs::read(&hash).unwrap() == clean_hash,
        "hash not restored"
    );
    // Beyond the parity: three bytes in a codeword of every other block.
    let mut hopeless = clean.clone();
    for k in (0..300).step_by(2) {
        for at in [5, 9, 77] {
            hopeless[k * 4096 + at] ^= 0xff;
        }
    }
    std::fs::write(&data, &hopeless).unwrap();
    let out = repair(&data);
    expect_code(&out, 1, "beyond the parity");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot repair round"));
    assert!(
        std::fs::read(&data).unwrap() == hopeless,
        "a failed repair wrote"
    );
    // Without --fec-device, repair is a usage error.
    let out = run(mdu()
        .args(["verity", "repair"])
        .arg(&data)
        .arg(&hash)
        .arg(&root));
    expect_code(&out, 2, "repair without parity");
}

/// The parity is veritysetup's however DATA reaches the encoder: fed while
/// it is hashed (a new HASH), taken again from the page cache (an existing
/// HASH longer than the tree, whose every byte is protected), or read
/// (`--no-mmap`); and `verify --no-mmap --fec-device` corrects too.
#[test]
fn fec_parity_is_the_same_however_data_is_read() {
    let dir = scratch();
    let d = dir.path();
    let mut rng = Rng::new("fec_parity_is_the_same_however_data_is_read");
    let data = d.join("data");
    let clean = rng.bytes(300 * 4096 + 100);
    std::fs::write(&data, &clean).unwrap();
    let salt = hex(&rng.bytes(32));
    let old_hash = rng.bytes(9 * 4096 + 512);
    let tool = have_tool("veritysetup", "fec_parity_is_the_same_however_data_is_read");
    let mut root = String::new();
    for (case, (existing, no_mmap)) in [(false, false), (true, false), (false, true), (true, true)]
        .into_iter()
        .enumerate()
    {
        let mut outputs = Vec::new();
        for who in ["mdu", "veritysetup"] {
            if who == "veritysetup" && !tool {
                continue;
            }
            let (hash, fec) = (d.join(format!("{who}-hash")), d.join(format!("{who}-fec")));
            let _ = std::fs::remove_file(&hash);
            let _ = std::fs::remove_file(&fec);
            if existing {
                std::fs::write(&hash, &old_hash).unwrap();
            }
            let mut cmd = if who == "mdu" {
                let mut c = mdu();
                c.args(["verity", "format"]);
                if no_mmap {
                    c.arg("--no-mmap");
                }
                c
            } else {
                let mut c = Command::new("veritysetup");
                c.arg("format");
                c
            };
            let out = run(cmd
                .arg(format!("--salt={salt}"))
                .arg("--uuid=a60c98d2-ae9b-4865-bfcb-b4e3ace11033")
                .arg("--fec-roots=3")
                .arg(format!("--fec-device={}", fec.display()))
                .arg(&data)
                .arg(&hash));
            expect_code(&out, 0, &format!("{who} case {case}"));
            root = root_of(&out.stdout);
            outputs.push((std::fs::read(&hash).unwrap(), std::fs::read(&fec).unwrap()));
        }
        if let [ours, theirs] = &outputs[..] {
            assert!(ours.0 == theirs.0, "case {case}: hash image differs");
            assert!(ours.1 == theirs.1, "case {case}: FEC bytes differ");
        }
    }
    let (hash, fec) = (d.join("mdu-hash"), d.join("mdu-fec"));
    let mut bad = clean.clone();
    bad[77 * 4096 + 5] ^= 0x21;
    std::fs::write(&data, &bad).unwrap();
    let fec_opts = [
        "--no-mmap".to_owned(),
        "--fec-roots=3".to_owned(),
        format!("--fec-device={}", fec.display()),
    ];
    let out = mdu_verify(&data, &hash, &fec_opts, &root);
    expect_code(&out, 0, "verify --no-mmap --fec-device");
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(said.contains("FEC corrected 1 bytes in 1 blocks"), "{said}");
}
