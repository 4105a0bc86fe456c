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
