//! `mdu base64`: round trips, Python's `base64` module and the `base64`
//! crate as outside codecs, line breaks on decode, strict errors with exit
//! status 2 naming the offset in the whole input, streaming across the
//! tool's block boundaries in bounded memory.

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
        // Decoding streams: the groups of 4 before the one in error (here
        // `QUJD`, "ABC") have been written.
        let written: &[u8] = if offset >= 4 { b"ABC" } else { b"" };
        assert_eq!(out.stdout, written, "{what}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("<stdin>"), "{what}: {err}");
        assert!(
            err.contains(&format!("byte offset {offset}")),
            "{what}: {err}"
        );
    }
}

/// The block sizes of `src/base64.rs` (keep in step): encode reads
/// `ENCODE_BLOCK` bytes at a time, decode `DECODE_BLOCK` bytes of text,
/// line breaks included. The tests place their lengths and their errors
/// around multiples of these.
const ENCODE_BLOCK: usize = 3 << 18;
const DECODE_BLOCK: usize = 1 << 20;

/// The `base64` crate's strict engine for `url` and `no_pad` (canonical
/// padding required, or none allowed; no trailing bits).
fn reference(url: bool, no_pad: bool) -> base64::engine::GeneralPurpose {
    use base64::engine::general_purpose as gp;
    match (url, no_pad) {
        (false, false) => gp::STANDARD,
        (false, true) => gp::STANDARD_NO_PAD,
        (true, false) => gp::URL_SAFE,
        (true, true) => gp::URL_SAFE_NO_PAD,
    }
}

/// `text` with `breaks` bytes of line breaks (`\n` or `\r\n`, at random)
/// inserted at random places.
fn scatter_line_breaks(rng: &mut Rng, text: &[u8], breaks: usize) -> Vec<u8> {
    let mut sizes = Vec::new();
    let mut left = breaks;
    while left > 0 {
        let size = if left >= 2 && rng.below(2) == 0 { 2 } else { 1 };
        sizes.push(size);
        left -= size;
    }
    let mut cuts: Vec<usize> = sizes
        .iter()
        .map(|_| rng.below(text.len() as u64 + 1) as usize)
        .collect();
    cuts.sort_unstable();
    let mut out = Vec::with_capacity(text.len() + breaks);
    let mut from = 0;
    for (cut, size) in cuts.into_iter().zip(sizes) {
        out.extend_from_slice(&text[from..cut]);
        out.extend_from_slice(if size == 2 { b"\r\n" } else { b"\n" });
        from = cut;
    }
    out.extend_from_slice(&text[from..]);
    out
}

/// `text` with `breaks` bytes of line breaks inserted at random places;
/// with `straddle`, one `\r\n` among them has its `\r` at that offset of
/// the result (so the pair is split across a block boundary), where the
/// lengths allow it.
fn with_line_breaks(rng: &mut Rng, text: &[u8], breaks: usize, straddle: Option<usize>) -> Vec<u8> {
    let total = text.len() + breaks;
    // Breaks after the pair: at most what fits between it and the end.
    let room = straddle.and_then(|s| Some(breaks.checked_sub(2)?.min(total.checked_sub(s + 2)?)));
    let (Some(s), Some(room)) = (straddle, room) else {
        return scatter_line_breaks(rng, text, breaks);
    };
    let after = rng.below(room as u64 + 1) as usize;
    let before = breaks - 2 - after;
    let head = s - before;
    let mut out = scatter_line_breaks(rng, &text[..head], before);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&scatter_line_breaks(rng, &text[head..], after));
    out
}

#[test]
fn streaming_agrees_with_the_base64_crate_across_block_boundaries() {
    use base64::Engine as _;
    let mut rng = Rng::new("streaming_agrees_with_the_base64_crate_across_block_boundaries");
    for (url, no_pad) in [(false, false), (false, true), (true, false), (true, true)] {
        let reference = reference(url, no_pad);
        // Encode: lengths around one and two blocks.
        for len in [
            ENCODE_BLOCK - 1,
            ENCODE_BLOCK,
            ENCODE_BLOCK + 1,
            2 * ENCODE_BLOCK + 2,
        ] {
            let data = rng.bytes(len);
            let enc = pipe(b64("encode", url, no_pad), &data);
            expect_code(&enc, 0, "encode");
            let mut want = reference.encode(&data).into_bytes();
            want.push(b'\n');
            assert!(
                enc.stdout == want,
                "encode of {len} bytes, url {url} no_pad {no_pad}: differs from the base64 crate"
            );
        }
        // Decode: texts of DECODE_BLOCK - 1, DECODE_BLOCK, DECODE_BLOCK + 1
        // and 2 * DECODE_BLOCK + 1 bytes, line breaks included.
        for total in [
            DECODE_BLOCK - 1,
            DECODE_BLOCK,
            DECODE_BLOCK + 1,
            2 * DECODE_BLOCK + 1,
        ] {
            // Up to ~600 bytes of the total are line breaks.
            let data_len = (total - 100 - rng.below(500) as usize) / 4 * 3 + rng.below(3) as usize;
            let data = rng.bytes(data_len);
            let text = reference.encode(&data).into_bytes();
            let breaks = total - text.len();
            let straddle = match rng.below(3) {
                0 => None,
                1 => Some(DECODE_BLOCK - 1),
                _ => Some(DECODE_BLOCK - 1 - rng.below(8) as usize),
            };
            let input = with_line_breaks(&mut rng, &text, breaks, straddle);
            assert_eq!(input.len(), total);
            if let Some(s) = straddle.filter(|s| s + 2 <= total) {
                assert_eq!(&input[s..s + 2], b"\r\n", "straddling pair at {s}");
            }
            let dec = pipe(b64("decode", url, no_pad), &input);
            expect_code(&dec, 0, "decode");
            assert!(
                dec.stdout == data,
                "decode of {total} bytes ({} symbols, straddle {straddle:?}), url {url} no_pad {no_pad}: \
                 differs from the input of the encoding",
                text.len()
            );
            // The same text without line breaks (one symbol more or less
            // than a block for the first three totals).
            let dec = pipe(b64("decode", url, no_pad), &text);
            expect_code(&dec, 0, "decode unbroken");
            assert!(dec.stdout == data, "decode of {} symbols", text.len());
        }
    }
    // Symbols on either side of more than a block of line breaks.
    let mut input = b"QUJD\r\n".to_vec();
    input.extend(std::iter::repeat_n(b'\n', DECODE_BLOCK + 3));
    input.extend_from_slice(b"QUI=\n");
    let dec = pipe(b64("decode", false, false), &input);
    expect_code(&dec, 0, "decode across a block of line breaks");
    assert_eq!(dec.stdout, b"ABCAB");
}

/// Runs `mdu base64 decode` on `input` and checks the failure: exit status
/// 2, stderr one line naming `<stdin>`, `offset` and `rule`, and stdout
/// the decoding of every whole group of 4 symbols before the one at
/// `symbol` (the index of the offending symbol among the non-line-break
/// bytes; `None`: every whole group before the final one).
fn expect_decode_error(
    input: &[u8],
    url: bool,
    no_pad: bool,
    offset: usize,
    rule: &str,
    what: &str,
) {
    use base64::Engine as _;
    let out = pipe(b64("decode", url, no_pad), input);
    expect_code(&out, 2, what);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{what}: stderr: {err}");
    let want = format!("<stdin>: at byte offset {offset}: ");
    assert!(err.contains(&want), "{what}: stderr {err:?} lacks {want:?}");
    assert!(err.contains(rule), "{what}: stderr {err:?} lacks {rule:?}");
    // Groups before the one holding the offending byte (or, for a length
    // error at the end, before the final group) were decoded and written.
    let symbols: Vec<u8> = input[..offset.min(input.len())]
        .iter()
        .copied()
        .filter(|&b| b != b'\n' && b != b'\r')
        .collect();
    let whole = if offset >= input.len() {
        (symbols.len() - 1) / 4 * 4
    } else {
        symbols.len() / 4 * 4
    };
    let written = reference(url, true)
        .decode(&symbols[..whole])
        .expect("the groups before the error are valid");
    assert!(
        out.stdout == written,
        "{what}: stdout has {} bytes, want the {} bytes of the groups before the error",
        out.stdout.len(),
        written.len()
    );
}

/// A valid text of about 2.5 decode blocks: the encoding of random data in
/// lines of 76 symbols, ending in `\n` or `\r\n` at random.
fn wrapped_text(rng: &mut Rng, url: bool, no_pad: bool) -> Vec<u8> {
    use base64::Engine as _;
    let len = DECODE_BLOCK * 15 / 8 + rng.below(3) as usize;
    let data = rng.bytes(len);
    let text = reference(url, no_pad).encode(&data).into_bytes();
    let mut out = Vec::new();
    for line in text.chunks(76) {
        out.extend_from_slice(line);
        out.extend_from_slice(if rng.below(2) == 0 { b"\n" } else { b"\r\n" });
    }
    out
}

#[test]
fn decode_errors_name_the_offset_in_the_whole_input() {
    let mut rng = Rng::new("decode_errors_name_the_offset_in_the_whole_input");
    let mut offsets = vec![0, 1, 5, 79, 200];
    offsets.extend(DECODE_BLOCK - 6..DECODE_BLOCK + 6);
    offsets.extend([2 * DECODE_BLOCK - 4, 2 * DECODE_BLOCK + 1]);
    for (case, &at) in offsets.iter().enumerate() {
        let url = case % 2 == 1;
        let no_pad = case % 4 >= 2;
        let mut input = wrapped_text(&mut rng, url, no_pad);
        // The first symbol at or after `at` (a line break is skipped, not
        // an error).
        let offset = (at..input.len())
            .find(|&i| input[i] != b'\n' && input[i] != b'\r')
            .expect("a symbol");
        // `=` in the middle of the stream, or a byte of neither alphabet.
        let (bad, rule) = match rng.below(3) {
            0 => (b'=', "invalid byte '='"),
            1 => (b'*', "invalid byte '*'"),
            _ => (b' ', "invalid byte 0x20"),
        };
        input[offset] = bad;
        let what = format!(
            "{:?} at offset {offset} (url {url} no_pad {no_pad})",
            bad as char
        );
        expect_decode_error(&input, url, no_pad, offset, rule, &what);
    }
}

#[test]
fn invalid_byte_is_blamed_before_length_and_padding() {
    // Short inputs: one block.
    for (input, no_pad, offset, rule) in [
        (&b"aGVs bG8="[..], false, 4, "invalid byte 0x20"),
        (b"aGVsbG8 =", false, 7, "invalid byte 0x20"),
        (b"aGVs\nbG8*\n=", false, 8, "invalid byte '*'"),
        (b"QU=D==", false, 2, "invalid byte '='"),
        (b"QU*", true, 2, "invalid byte '*'"),
        (b"QUJD*", true, 4, "invalid byte '*'"),
        (b"QUJD\r\nQ*=", false, 7, "invalid byte '*'"),
    ] {
        let what = String::from_utf8_lossy(input).into_owned();
        expect_decode_error(input, false, no_pad, offset, rule, &what);
    }
    // The same in a stream of several blocks: a space near the end of a
    // text whose length and padding are wrong too.
    let mut rng = Rng::new("invalid_byte_is_blamed_before_length_and_padding");
    let mut input = wrapped_text(&mut rng, false, false);
    let offset = (0..input.len() - 10)
        .rev()
        .find(|&i| input[i] != b'\n' && input[i] != b'\r')
        .expect("a symbol");
    input[offset] = b' ';
    input.extend_from_slice(b"QU=");
    expect_decode_error(&input, false, false, offset, "invalid byte 0x20", "long");
}

#[test]
fn truncated_final_group_is_a_length_error_at_the_end() {
    use base64::Engine as _;
    let mut rng = Rng::new("truncated_final_group_is_a_length_error_at_the_end");
    for (case, (no_pad, rule)) in [
        // A padded text cut short (`...QUI=` -> `...QUI`).
        (false, "invalid length"),
        // One symbol of a group (1 mod 4).
        (true, "invalid length"),
        // `=` where none is allowed.
        (true, "invalid padding"),
    ]
    .into_iter()
    .enumerate()
    {
        // DECODE_BLOCK is 1 mod 3: the encoding ends in a group of two
        // symbols (and `==`).
        let len = DECODE_BLOCK + 3 * rng.below(1000) as usize;
        let data = rng.bytes(len);
        let mut text = reference(false, no_pad).encode(&data).into_bytes();
        match case {
            0 => {
                text.pop();
            }
            1 => text.truncate(text.len() - 1),
            _ => text.extend_from_slice(b"=="),
        }
        text.extend_from_slice(b"\r\n");
        let (offset, rule) = match case {
            2 => (text.len() - 4, rule),
            _ => (text.len(), rule),
        };
        expect_decode_error(&text, false, no_pad, offset, rule, rule);
    }
}

/// Runs `cmd`, `feed` writing its stdin and `check` reading its stdout in
/// threads of their own, and returns its exit status, its stderr and its
/// peak resident set size in KiB: the last `VmHWM` of `/proc/<pid>/status`
/// read while it ran (the high-water mark only grows; it is sampled every
/// few milliseconds until the process has exited, and the final stretch,
/// its exit, allocates nothing).
///
/// Not the `ru_maxrss` of `wait4` or `getrusage(RUSAGE_CHILDREN)`: a child
/// spawned with vfork semantics (as `Command` does) is charged the parent's
/// high-water mark at its exec, here this whole test process's.
fn peak_rss_kib(
    mut cmd: Command,
    feed: impl FnOnce(&mut dyn Write) + Send + 'static,
    check: impl FnOnce(&mut dyn std::io::Read) + Send + 'static,
) -> (Option<i32>, String, u64) {
    use std::io::Read;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let feeder = std::thread::spawn(move || feed(&mut stdin));
    let checker = std::thread::spawn(move || check(&mut stdout));
    let errors = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    // `spawn` returns once the child has exec'd, so every reading is of
    // the tool's own memory. Until it is waited for, the pid is not reused;
    // once it has exited (a zombie), its status has no `VmHWM` line.
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = None;
    while let Some(kib) = std::fs::read_to_string(&status_file)
        .ok()
        .as_deref()
        .and_then(vm_hwm_kib)
    {
        peak = Some(kib);
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let status = child.wait().expect("wait");
    feeder.join().expect("stdin writer");
    checker.join().expect("stdout reader");
    let peak = peak.unwrap_or_else(|| panic!("no VmHWM in {status_file} while {cmd:?} ran"));
    (status.code(), errors.join().unwrap_or_default(), peak)
}

/// The `VmHWM` (peak resident set) of a `/proc/<pid>/status` text, in KiB.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Piece `i` of the deterministic stream of the bounded-memory test, 48
/// KiB: a multiple of 3, so the encodings of the pieces concatenate to the
/// encoding of the stream.
fn stream_piece(i: u64) -> Vec<u8> {
    Rng::with_seed(i).bytes(STREAM_PIECE)
}

const STREAM_PIECE: usize = 3 << 14;

/// Reads exactly `want.len()` bytes of `r` and compares them with `want`.
fn expect_next(r: &mut dyn std::io::Read, want: &[u8], what: &str) {
    let mut got = vec![0u8; want.len()];
    r.read_exact(&mut got)
        .unwrap_or_else(|e| panic!("{what}: output ends early: {e}"));
    assert!(got == want, "{what}: output differs");
}

#[test]
fn decode_and_encode_stream_in_bounded_memory() {
    use base64::Engine as _;
    // A 256 MiB stream, written by a thread as it is generated and checked
    // as it comes out, so that neither this test nor a streaming tool holds
    // it. Under a user-mode emulator the peak is the emulator's own: a
    // smaller stream, bounded by the peak of an empty one plus the margin.
    let emulated = std::env::var_os("MDU_EMULATED").is_some();
    // 256 MiB of data (32 MiB emulated) in pieces of 48 KiB.
    let pieces: u64 = if emulated { 683 } else { 5462 };
    const LIMIT_KIB: u64 = 64 << 10;
    let baseline = if emulated {
        let (code, err, peak) = peak_rss_kib(b64("decode", false, false), |_| {}, |_| {});
        assert_eq!(code, Some(0), "empty decode: {err}");
        peak
    } else {
        0
    };
    // Encode: raw bytes in, one line of base64 out.
    let (code, err, peak) = peak_rss_kib(
        b64("encode", false, false),
        move |w| {
            for i in 0..pieces {
                if w.write_all(&stream_piece(i)).is_err() {
                    return;
                }
            }
        },
        move |r| {
            for i in 0..pieces {
                let want = base64::engine::general_purpose::STANDARD.encode(stream_piece(i));
                expect_next(r, want.as_bytes(), "encode");
            }
            expect_next(r, b"\n", "encode");
        },
    );
    assert_eq!(code, Some(0), "encode: {err}");
    eprintln!(
        "encode of {} MiB: peak RSS {peak} KiB",
        (pieces * STREAM_PIECE as u64) >> 20
    );
    assert!(
        peak.saturating_sub(baseline) < LIMIT_KIB,
        "encode of {} MiB: peak RSS {peak} KiB (baseline {baseline} KiB), want under {LIMIT_KIB} KiB more",
        (pieces * STREAM_PIECE as u64) >> 20
    );
    // Decode: the encoding in lines of 76 symbols (`\n`) in, raw bytes out.
    let (code, err, peak) = peak_rss_kib(
        b64("decode", false, false),
        move |w| {
            let mut column = 0;
            for i in 0..pieces {
                let text = base64::engine::general_purpose::STANDARD.encode(stream_piece(i));
                let mut lines = Vec::with_capacity(text.len() * 78 / 76 + 2);
                for &b in text.as_bytes() {
                    lines.push(b);
                    column += 1;
                    if column == 76 {
                        lines.push(b'\n');
                        column = 0;
                    }
                }
                if w.write_all(&lines).is_err() {
                    return;
                }
            }
            let _ = w.write_all(b"\n");
        },
        move |r| {
            for i in 0..pieces {
                expect_next(r, &stream_piece(i), "decode");
            }
            let mut rest = Vec::new();
            let _ = r.read_to_end(&mut rest);
            assert!(rest.is_empty(), "decode: {} bytes too many", rest.len());
        },
    );
    assert_eq!(code, Some(0), "decode: {err}");
    eprintln!(
        "decode of {} MiB: peak RSS {peak} KiB",
        (pieces * STREAM_PIECE as u64 * 4 / 3) >> 20
    );
    assert!(
        peak.saturating_sub(baseline) < LIMIT_KIB,
        "decode of {} MiB: peak RSS {peak} KiB (baseline {baseline} KiB), want under {LIMIT_KIB} KiB more",
        (pieces * STREAM_PIECE as u64 * 4 / 3) >> 20
    );
}
