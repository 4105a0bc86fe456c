//! The cost of a new keyslot's key derivation: every verb that makes a
//! keyslot benchmarks it to `--iter-time` as cryptsetup does (a short
//! time here keeps the tests fast: the cost lands far below the fixed
//! defaults), and `--pbkdf-force-iterations` still fixes it exactly.
//! cryptsetup opens each keyslot and its dump shows the cost.

use std::fs::File;

use super::*;

fn luks(args: &[&str]) -> Output {
    run(mdu().arg("luks").args(args))
}

/// The `key: value` lines of keyslot `slot` in cryptsetup's luksDump of
/// `img` (LUKS2).
fn slot_dump(dir: &Path, img: &str, slot: u32) -> Vec<(String, String)> {
    let out = cryptsetup(dir, &["luksDump", img]);
    expect_code(&out, 0, "luksDump");
    stdout(&out)
        .lines()
        .skip_while(|l| l.trim() != format!("{slot}: luks2"))
        .skip(1)
        .take_while(|l| l.starts_with('\t'))
        .filter_map(|l| l.trim().split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

fn field(lines: &[(String, String)], key: &str) -> u64 {
    let v = &lines
        .iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("no {key} in {lines:?}"))
        .1;
    v.split_whitespace().next().unwrap().parse().unwrap()
}

fn opens(dir: &Path, img: &str, key: &str, slot: u32) -> bool {
    let s = slot.to_string();
    let out = cryptsetup(
        dir,
        &[
            "open",
            "--test-passphrase",
            "--key-file",
            key,
            "--key-slot",
            &s,
            img,
        ],
    );
    out.status.success()
}

#[test]
fn the_keyslot_verbs_benchmark_to_iter_time_unless_forced() {
    let test = "luks::cost::the_keyslot_verbs_benchmark_to_iter_time_unless_forced";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let dir = scratch();
    let d = dir.path();
    let p: Vec<String> = (0..4)
        .map(|i| write(d, &format!("p{i}"), format!("pass {i}").as_bytes()))
        .collect();
    let img = write(d, "img", &[]);
    File::create(&img).unwrap().set_len(16 << 20).unwrap();
    let out = cryptsetup(
        d,
        &[
            &["luksFormat", "-q", "--type", "luks2", "--key-file", &p[0]][..],
            PBKDF2,
            &[&img],
        ]
        .concat(),
    );
    expect_code(&out, 0, "luksFormat");

    // add-key: PBKDF2 benchmarked to 1 ms, far below the fixed 1000000.
    let fast = ["--pbkdf", "pbkdf2", "--iter-time", "1"];
    expect_code(
        &luks(&[&["add-key", "--key-file", &p[0]][..], &fast, &[&img, &p[1]]].concat()),
        0,
        "add-key --iter-time 1",
    );
    assert!(opens(d, &img, &p[1], 1));
    let it = field(&slot_dump(d, &img, 1), "Iterations");
    assert!((1000..1_000_000).contains(&it), "{it}");

    // change-key: Argon2id benchmarked to 1 ms within 64 KiB and 1 thread.
    let argon = [
        "--pbkdf",
        "argon2id",
        "--iter-time",
        "1",
        "--pbkdf-memory",
        "64",
        "--pbkdf-parallel",
        "1",
    ];
    expect_code(
        &luks(
            &[
                &["change-key", "-S", "1", "--key-file", &p[1]][..],
                &argon,
                &[&img, &p[2]],
            ]
            .concat(),
        ),
        0,
        "change-key --iter-time 1",
    );
    assert!(opens(d, &img, &p[2], 1));
    let s = slot_dump(d, &img, 1);
    assert!(field(&s, "Time cost") >= 4);
    assert!((32..=64).contains(&field(&s, "Memory")), "{s:?}");
    assert_eq!(field(&s, "Threads"), 1);

    // convert-key: forced iterations are exactly that count.
    expect_code(
        &luks(&[
            "convert-key",
            "-S",
            "1",
            "--key-file",
            &p[2],
            "--pbkdf",
            "pbkdf2",
            "--pbkdf-force-iterations",
            "1234",
            "--iter-time",
            "1",
            &img,
        ]),
        0,
        "convert-key --pbkdf-force-iterations",
    );
    assert!(opens(d, &img, &p[2], 1));
    assert_eq!(field(&slot_dump(d, &img, 1), "Iterations"), 1234);
}

/// `Iterations` of LUKS1 keyslot 0 and `MK iterations` in cryptsetup's
/// luksDump of `img`.
fn luks1_costs(dir: &Path, img: &str) -> (u64, u64) {
    let out = cryptsetup(dir, &["luksDump", img]);
    expect_code(&out, 0, "luksDump");
    let text = stdout(&out);
    let value = |l: &str| l.split(':').nth(1).unwrap().trim().parse::<u64>().unwrap();
    let mk = text
        .lines()
        .find(|l| l.starts_with("MK iterations:"))
        .map(value);
    let slot = text
        .lines()
        .skip_while(|l| !l.starts_with("Key Slot 0: ENABLED"))
        .find(|l| l.trim_start().starts_with("Iterations:"))
        .map(value);
    (
        slot.expect("keyslot 0 iterations"),
        mk.expect("MK iterations"),
    )
}

#[test]
fn luks1_format_benchmarks_to_iter_time_unless_forced() {
    let test = "luks::cost::luks1_format_benchmarks_to_iter_time_unless_forced";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let dir = scratch();
    let d = dir.path();
    let pass = write(d, "pass", b"luks1 pass");
    let img = d.join("img").to_str().unwrap().to_owned();
    let format = |extra: &[&str]| {
        let _ = std::fs::remove_file(&img);
        let args = [
            &["format", "--type", "luks1", "--key-file", &pass][..],
            extra,
            &[&img],
        ];
        expect_code(&luks(&args.concat()), 0, "format --type luks1");
        assert!(opens(d, &img, &pass, 0));
        luks1_costs(d, &img)
    };
    // 1 ms of PBKDF2: far below the fixed 1000000; the digest's 125 ms of
    // the same rate.
    let (slot, mk) = format(&["--iter-time", "1"]);
    assert!((1000..1_000_000).contains(&slot), "{slot}");
    assert_eq!(mk, (slot * 125).max(1000), "{slot}");
    // Forced: exactly that count, the digest cryptsetup's minimum.
    assert_eq!(format(&["--pbkdf-force-iterations", "1234"]), (1234, 1000));
}

/// The ids of the keyslots in cryptsetup's luksDump of `img`.
fn keyslot_ids(dir: &Path, img: &str) -> Vec<u32> {
    let out = cryptsetup(dir, &["luksDump", img]);
    expect_code(&out, 0, "luksDump");
    stdout(&out)
        .lines()
        .filter_map(|l| l.trim().strip_suffix(": luks2")?.parse().ok())
        .collect()
}

#[test]
fn reencrypt_benchmarks_the_new_keyslot_to_iter_time_unless_forced() {
    let test = "luks::cost::reencrypt_benchmarks_the_new_keyslot_to_iter_time_unless_forced";
    if !have_tool("cryptsetup", test) {
        return;
    }
    let dir = scratch();
    let d = dir.path();
    let pass = write(d, "pass", b"reencrypt pass");
    // A key change: the opened keyslot's PBKDF2 and hash, its cost
    // benchmarked to 1 ms (far below the old 200000).
    let img = write(d, "img", &[]);
    File::create(&img)
        .unwrap()
        .set_len((16 << 20) + (64 << 10))
        .unwrap();
    let out = cryptsetup(
        d,
        &[
            "luksFormat",
            "-q",
            "--type",
            "luks2",
            "--pbkdf",
            "pbkdf2",
            "--hash",
            "sha512",
            "--pbkdf-force-iterations",
            "200000",
            "--key-file",
            &pass,
            &img,
        ],
    );
    expect_code(&out, 0, "luksFormat");
    let out = luks(&["reencrypt", "--key-file", &pass, "--iter-time", "1", &img]);
    expect_code(&out, 0, "reencrypt --iter-time 1");
    let ids = keyslot_ids(d, &img);
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert!(opens(d, &img, &pass, ids[0]));
    let s = slot_dump(d, &img, ids[0]);
    assert!(s.iter().any(|(k, v)| k == "Hash" && v == "sha512"), "{s:?}");
    let it = field(&s, "Iterations");
    assert!((1000..200_000).contains(&it), "{it}");

    // An encryption: benchmarked below the fixed 1000000, or forced.
    let data = write(d, "data", &[7u8; 64 << 10]);
    for (extra, want) in [
        (&["--iter-time", "1"][..], None),
        (&["--pbkdf-force-iterations", "1234"][..], Some(1234)),
    ] {
        let hdr = d.join("hdr").to_str().unwrap().to_owned();
        let _ = std::fs::remove_file(&hdr);
        let args = [
            &[
                "reencrypt",
                "--encrypt",
                "--header",
                &hdr,
                "--pbkdf",
                "pbkdf2",
                "--key-file",
                &pass,
            ][..],
            extra,
            &[&data],
        ];
        expect_code(&luks(&args.concat()), 0, "reencrypt --encrypt");
        assert!(opens(d, &hdr, &pass, 0));
        let it = field(&slot_dump(d, &hdr, 0), "Iterations");
        match want {
            Some(n) => assert_eq!(it, n),
            None => assert!((1000..1_000_000).contains(&it), "{it}"),
        }
    }
}
