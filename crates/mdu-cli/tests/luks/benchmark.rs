//! `mdu luks benchmark` and `mdu benchmark`: cryptsetup benchmark's
//! tables, every row in its shape (no timing is asserted).

use super::*;

/// The arguments that keep a run short: 1 ms per measurement, a 4 KiB
/// buffer, the smallest Argon2 memory.
const QUICK: &[&str] = &[
    "--duration-ms",
    "1",
    "--buffer-size",
    "4096",
    "--iter-time",
    "1",
    "--pbkdf-memory",
    "64",
];

fn bench(args: &[&str]) -> Output {
    run(mdu().arg("benchmark").args(QUICK).args(args))
}

/// `N.N MiB/s` twice after the key size, as cryptsetup's rows: the name
/// right-aligned to 15 columns in the table, to 11 or its own length for
/// --cipher.
fn is_cipher_row(line: &str, name: &str, bits: usize, width: usize) -> bool {
    let Some(rest) = line.strip_prefix(&format!("{name:>width$}  {:>9}b  ", bits)) else {
        return false;
    };
    let speeds: Vec<&str> = rest.split("MiB/s").map(str::trim).collect();
    speeds.len() == 3
        && speeds[..2]
            .iter()
            .all(|s| s.parse::<f64>().is_ok_and(|v| v >= 0.0))
        && rest.starts_with(|c: char| c == ' ' || c.is_ascii_digit())
}

#[test]
fn the_default_run_prints_every_row_of_cryptsetups_tables() {
    for out in [
        bench(&[]),
        run(mdu().args(["luks", "benchmark"]).args(QUICK)),
    ] {
        expect_code(&out, 0, "benchmark");
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + 5 + 2 + 1 + 13, "{text}");
        assert_eq!(
            lines[0],
            "# Tests are approximate using memory only (no storage IO)."
        );
        for (line, hash) in
            lines[1..6]
                .iter()
                .zip(["sha1", "sha256", "sha512", "ripemd160", "whirlpool"])
        {
            let head = format!("PBKDF2-{hash:<9} ");
            let rest = line.strip_prefix(&head).unwrap_or_else(|| panic!("{line}"));
            let ok = rest.trim() == "N/A"
                || rest
                    .strip_suffix(" iterations per second for 256-bit key")
                    .is_some_and(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0));
            assert!(ok, "{line}");
        }
        for (line, kdf) in lines[6..8].iter().zip(["argon2i", "argon2id"]) {
            let rest = line
                .strip_prefix(&format!("{kdf:<10} "))
                .unwrap_or_else(|| panic!("{line}"));
            assert!(
                rest.contains(" iterations, ")
                    && rest.contains(" memory, ")
                    && rest
                        .ends_with("parallel threads (CPUs) for 256-bit key (requested 1 ms time)"),
                "{line}"
            );
        }
        assert_eq!(
            lines[8],
            "#     Algorithm |       Key |      Encryption |      Decryption"
        );
        let rows = [
            ("aes-cbc", 128),
            ("serpent-cbc", 128),
            ("twofish-cbc", 128),
            ("aes-cbc", 256),
            ("serpent-cbc", 256),
            ("twofish-cbc", 256),
            ("aes-xts", 256),
            ("serpent-xts", 256),
            ("twofish-xts", 256),
            ("aes-xts", 512),
            ("serpent-xts", 512),
            ("twofish-xts", 512),
            ("xchacha12,aes-adiantum", 256),
        ];
        for (line, (name, bits)) in lines[9..].iter().zip(rows) {
            assert!(is_cipher_row(line, name, bits, 15), "{name} {bits}: {line}");
        }
    }
}

#[test]
fn one_cipher_one_hash_or_one_kdf_prints_its_line() {
    let out = bench(&["--cipher", "serpent-xts-plain64", "--key-size", "512"]);
    expect_code(&out, 0, "--cipher");
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(
        lines[1],
        "# Algorithm |       Key |      Encryption |      Decryption"
    );
    assert!(is_cipher_row(lines[2], "serpent-xts", 512, 11), "{text}");

    let out = bench(&["--cipher", "aes-cbc", "-s", "128"]);
    expect_code(&out, 0, "--cipher without an IV mode");
    assert!(is_cipher_row(
        stdout(&out).lines().nth(2).unwrap(),
        "aes-cbc",
        128,
        11
    ));

    let out = bench(&["--hash", "sha512"]);
    expect_code(&out, 0, "--hash");
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("PBKDF2-sha512    "),
        "{text}"
    );

    let out = bench(&["--pbkdf", "argon2id", "--pbkdf-parallel", "1"]);
    expect_code(&out, 0, "--pbkdf");
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.contains("argon2id      4 iterations, ")
            && text.contains(" 1 parallel threads (CPUs)"),
        "{text}"
    );
}

#[test]
fn a_bad_cipher_spec_is_refused_before_anything_is_measured() {
    for (spec, key, says) in [
        ("nope-xts", "256", "--cipher nope-xts"),
        ("aes-xts-plain64", "384", "aes-xts with a 384-bit key"),
        ("aes-xts", "100", "--key-size 100"),
    ] {
        let out = bench(&["--cipher", spec, "--key-size", key]);
        assert_ne!(out.status.code(), Some(0), "{spec}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{spec}: {err}");
        assert!(
            stdout(&out).is_empty(),
            "nothing measured: {}",
            stdout(&out)
        );
    }
}
