//! `mdu base64`: round trips, Python's `base64` module as the outside
//! encoder, line breaks on decode, strict errors with exit status 2.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{Rng, expect_code, mdu};

fn pipe(mut cmd: Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn b64(op: &str, url: bool, no_pad: bool) -> Command {
    let mut c = mdu();
    c.args(["base64", op]);
    if url {
        c.arg("--url");
    }
    if no_pad {
        c.arg("--no-pad");
    }
    c
}

/// Python's four encodings (standard, url; padded, unpadded) of each file,
/// in one interpreter run; `None` without python3.
fn python_encodings(files: &[std::path::PathBuf]) -> Option<Vec<[String; 4]>> {
    let script = "import base64,sys\n\
        for p in sys.argv[1:]:\n\
        \x20   d = open(p, 'rb').read()\n\
        \x20   s, u = base64.b64encode(d), base64.urlsafe_b64encode(d)\n\
        \x20   print(s.decode(), u.decode(), s.rstrip(b'=').decode() or '.', u.rstrip(b'=').decode() or '.')\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .args(files)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(
        text.lines()
            .map(|l| {
                let f: Vec<String> = l
                    .split(' ')
                    .map(|w| {
                        if w == "." {
                            String::new()
                        } else {
                            w.to_owned()
                        }
                    })
                    .collect();
                [f[0].clone(), f[1].clone(), f[2].clone(), f[3].clone()]
            })
            .collect(),
    )
}

#[test]
fn round_trips_and_matches_python() {
    let mut rng = Rng::new("round_trips_and_matches_python");
    let dir = common::scratch();
    let inputs: Vec<Vec<u8>> = (0..48)
        .map(|case| {
            let len = if case < 6 {
                case
            } else {
                rng.below(5000) as usize
            };
            rng.bytes(len)
        })
        .collect();
    let files: Vec<_> = inputs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let p = dir.path().join(format!("in{i}"));
            std::fs::write(&p, d).unwrap();
            p
        })
        .collect();
    let python = if common::have_tool("python3", "round_trips_and_matches_python") {
        python_encodings(&files)
    } else {
        None
    };
    for (case, data) in inputs.iter().enumerate() {
        let len = data.len();
        let url = case % 2 == 1;
        let no_pad = case % 4 >= 2;
        let enc = pipe(b64("encode", url, no_pad), data);
        expect_code(&enc, 0, "encode");
        assert_eq!(enc.stdout.last(), Some(&b'\n'));
        let text = &enc.stdout[..enc.stdout.len() - 1];
        if let Some(py) = &python {
            let want = &py[case][usize::from(url) + 2 * usize::from(no_pad)];
            assert_eq!(
                String::from_utf8_lossy(text),
                *want,
                "len {len} url {url} no_pad {no_pad}"
            );
        }
        let dec = pipe(b64("decode", url, no_pad), &enc.stdout);
        expect_code(&dec, 0, "decode");
        assert_eq!(&dec.stdout, data, "len {len} url {url} no_pad {no_pad}");
        // Line breaks (\n and \r\n) every 76 symbols are ignored.
        let mut wrapped = Vec::new();
        for chunk in text.chunks(76) {
            wrapped.extend_from_slice(chunk);
            wrapped.extend_from_slice(if case % 3 == 0 { b"\r\n" } else { b"\n" });
        }
        let dec = pipe(b64("decode", url, no_pad), &wrapped);
        expect_code(&dec, 0, "decode wrapped");
        assert_eq!(&dec.stdout, data);
    }
}

#[test]
fn strict_decoding_errors() {
    for (input, url, no_pad, offset) in [
        (&b"QUJD\nR*==\n"[..], false, false, 6),
        (b"QUJD-_==", false, false, 4),
        (b"QUJD+/==", true, false, 4),
        (b"QUI=", false, true, 3),
        (b"QUI", false, false, 3),
        (b"QUJ", false, false, 3),
        (b"QR==", false, false, 1),
    ] {
        let out = pipe(b64("decode", url, no_pad), input);
        let what = String::from_utf8_lossy(input).into_owned();
        expect_code(&out, 2, &what);
        assert!(out.stdout.is_empty(), "{what}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("<stdin>"), "{what}: {err}");
        assert!(
            err.contains(&format!("byte offset {offset}")),
            "{what}: {err}"
        );
    }
}
