//! Differential tests: every engine on every backend against the `base64`
//! crate's strict configurations, and every backend against scalar byte for
//! byte (result, error with its index, and the bytes written on error).
//!
//! Oracle configuration: `GeneralPurposeConfig` with trailing bits rejected
//! and `DecodePaddingMode::RequireCanonical` (for `Padding::Required`) or
//! `RequireNone` (for `Padding::None`). `Padding::Optional` accepts exactly
//! what one of those two accepts; the crate's `Indifferent` mode is not the
//! oracle for it because it also accepts partial padding (`"Zg="`), which
//! this crate rejects on purpose.
//!
//! Intentional difference in error *kinds* (acceptance always agrees): the
//! `base64` crate reports a misplaced or surplus `=` as `InvalidByte` or
//! `InvalidPadding` depending on where it sits, and checks lengths after
//! symbols; this crate checks length and the trailing `=` run first (see
//! `DecodeError`). Where both report an invalid symbol, the index and byte
//! must agree.

mod common;

use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use common::{CRYPT, Rng, check_error_writes, decode_observed, engines, pinned};
use mdu_base64::{DecodeError, Engine, Padding};
use mdu_core::testing::sample;

/// The oracle engines for `engine`: (pad-required oracle, pad-none oracle).
fn oracles(name: &str, engine: &Engine) -> (GeneralPurpose, GeneralPurpose) {
    let alpha = match name.split('/').next().unwrap_or_default() {
        "STANDARD" => alphabet::STANDARD,
        "URL_SAFE" | "URL_SAFE_NO_PAD" => alphabet::URL_SAFE,
        "IMAP" => alphabet::IMAP_MUTF7,
        "CRYPT" => alphabet::CRYPT,
        "RANDOM" => {
            let symbols = std::str::from_utf8(engine.alphabet().symbols()).expect("ASCII");
            alphabet::Alphabet::new(symbols).expect("the base64 crate takes the alphabet")
        }
        other => panic!("no oracle alphabet for {other}"),
    };
    assert_eq!(
        alpha.as_str().as_bytes(),
        engine.alphabet().symbols(),
        "oracle alphabet for {name}"
    );
    let base = GeneralPurposeConfig::new().with_decode_allow_trailing_bits(false);
    let padded = GeneralPurpose::new(
        &alpha,
        base.with_encode_padding(true)
            .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
    );
    let unpadded = GeneralPurpose::new(
        &alpha,
        base.with_encode_padding(false)
            .with_decode_padding_mode(DecodePaddingMode::RequireNone),
    );
    (padded, unpadded)
}

struct Case<'a> {
    name: &'a str,
    engine: Engine,
    backends: Vec<(mdu_base64::Backend, Engine)>,
    padded: GeneralPurpose,
    unpadded: GeneralPurpose,
}

impl Case<'_> {
    fn oracle_encode(&self, data: &[u8]) -> String {
        match self.engine.padding() {
            Padding::Required => self.padded.encode(data),
            _ => self.unpadded.encode(data),
        }
    }

    fn oracle_decode(&self, text: &[u8]) -> Result<Vec<u8>, base64::DecodeError> {
        match self.engine.padding() {
            Padding::Required => self.padded.decode(text),
            Padding::None => self.unpadded.decode(text),
            Padding::Optional => self
                .unpadded
                .decode(text)
                .or_else(|_| self.padded.decode(text)),
        }
    }

    /// Decodes `text` on every backend; all must agree with scalar exactly
    /// and with the oracle on acceptance and output. Returns the result.
    fn check_decode(&self, text: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let mut reference: Option<(Result<usize, DecodeError>, Vec<u8>)> = None;
        for (backend, engine) in &self.backends {
            let got = decode_observed(engine, text);
            match &reference {
                None => reference = Some(got),
                Some(r) => assert_eq!(
                    &got,
                    r,
                    "{} on {backend:?} differs from {:?} for {:?}",
                    self.name,
                    self.backends[0].0,
                    String::from_utf8_lossy(text)
                ),
            }
        }
        let (result, buf) = reference.expect("at least one backend");
        let ours = result.map(|n| buf[..n].to_vec());
        let vec = self.engine.decode_to_vec(text);
        assert_eq!(vec, ours, "{}: decode_to_vec vs decode_slice", self.name);
        let theirs = self.oracle_decode(text);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{}: output for {text:?}", self.name),
            (Err(e), Err(t)) => {
                if let (
                    DecodeError::InvalidByte { index, byte },
                    base64::DecodeError::InvalidByte(ti, tb),
                ) = (e, t)
                    && *byte != b'='
                    && *tb != b'='
                {
                    assert_eq!(
                        (index, byte),
                        (ti, tb),
                        "{}: invalid byte of {text:?}",
                        self.name
                    );
                }
                let pads = text.iter().rev().take_while(|&&c| c == b'=').count();
                check_error_writes(*e, text.len() - pads, &buf);
            }
            _ => panic!(
                "{}: acceptance differs for {:?}: ours {ours:?}, base64 crate {theirs:?}",
                self.name,
                String::from_utf8_lossy(text)
            ),
        }
        ours
    }
}

fn cases() -> Vec<Case<'static>> {
    engines()
        .into_iter()
        .map(|(name, engine)| {
            let (padded, unpadded) = oracles(name, &engine);
            Case {
                name,
                engine,
                backends: pinned(engine),
                padded,
                unpadded,
            }
        })
        .collect()
}

/// Positions worth corrupting in a text of `len` symbols whose padding starts
/// at `body`: both ends, SIMD block edges, the tail and the padding.
fn positions(len: usize, body: usize) -> Vec<usize> {
    let mut p = vec![
        0,
        1,
        31,
        32,
        63,
        64,
        127,
        200,
        255,
        256,
        len / 2,
        body.wrapping_sub(3),
        body.wrapping_sub(2),
        body.wrapping_sub(1),
        body,
        len.wrapping_sub(1),
    ];
    p.retain(|&i| i < len);
    p.sort_unstable();
    p.dedup();
    p
}

#[test]
fn every_length_encode_and_roundtrip() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in cases() {
        for n in 0..=300 {
            let data = rng.bytes(n);
            let expected = case.oracle_encode(&data);
            assert_eq!(case.engine.encoded_len(n), Some(expected.len()));
            for (backend, engine) in &case.backends {
                assert_eq!(
                    engine.encode_to_string(&data),
                    expected,
                    "{} encode on {backend:?}, {n} bytes",
                    case.name
                );
                // encode_slice writes exactly the encoded length.
                let mut buf = vec![0xA5u8; expected.len() + 5];
                assert_eq!(engine.encode_slice(&data, &mut buf), Ok(expected.len()));
                assert_eq!(&buf[..expected.len()], expected.as_bytes());
                assert!(buf[expected.len()..].iter().all(|&b| b == 0xA5));
            }
            assert_eq!(case.check_decode(expected.as_bytes()), Ok(data));
        }
    }
}

#[test]
fn every_invalid_byte_at_every_position_class() {
    // Under emulation every 7th length (every residue modulo 3, spread over
    // the SIMD steps): the tests below take every position of chosen
    // lengths there. The same texts as in the full run.
    let stride = sample::emulated_stride(
        "every_invalid_byte_at_every_position_class",
        301,
        "text lengths",
        7,
    );
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for case in cases() {
        let mut rejected = 0usize;
        for n in 0..=300 {
            let data = rng.bytes(n);
            if n % stride != 0 {
                continue;
            }
            let text = case.oracle_encode(&data).into_bytes();
            let body = text.len() - text.iter().rev().take_while(|&&c| c == b'=').count();
            for pos in positions(text.len(), body) {
                for byte in 0..=255u8 {
                    let mut bad = text.clone();
                    bad[pos] = byte;
                    let r = case.check_decode(&bad);
                    if let Err(DecodeError::InvalidByte { index, .. }) = r {
                        // Everything before the corrupted position is intact.
                        assert!(index >= pos.min(body), "{}: {index} < {pos}", case.name);
                        let mut buf = vec![0u8; data.len() + 3];
                        let _ = case.engine.decode_slice(&bad, &mut buf);
                        let keep = index / 4 * 3;
                        assert_eq!(&buf[..keep], &data[..keep]);
                    }
                    rejected += usize::from(r.is_err());
                }
            }
        }
        assert!(
            rejected > 100_000 / stride,
            "{}: only {rejected} rejections",
            case.name
        );
    }
}

#[test]
fn padding_and_tails() {
    let mut rng = Rng(42);
    for case in cases() {
        for n in 0..=300 {
            let data = rng.bytes(n);
            let padded = case.padded.encode(&data).into_bytes();
            let unpadded = case.unpadded.encode(&data).into_bytes();
            let mut variants = vec![padded.clone(), unpadded.clone()];
            // Surplus, missing and misplaced padding.
            for extra in 1..=4 {
                let mut v = padded.clone();
                v.extend(core::iter::repeat_n(b'=', extra));
                variants.push(v);
                let mut v = unpadded.clone();
                v.extend(core::iter::repeat_n(b'=', extra));
                variants.push(v);
            }
            if padded.ends_with(b"==") {
                variants.push(padded[..padded.len() - 1].to_vec());
                let mut v = padded.clone();
                v.push(b'A');
                variants.push(v);
            }
            if !padded.is_empty() {
                let mut v = padded.clone();
                v.insert(padded.len() / 2, b'=');
                variants.push(v);
                let mut v = padded.clone();
                v[0] = b'=';
                variants.push(v);
            }
            // Truncations (every length class, including 1 mod 4).
            for cut in 1..=3 {
                if unpadded.len() >= cut {
                    variants.push(unpadded[..unpadded.len() - cut].to_vec());
                }
            }
            // Every symbol in the last position: canonical and non-canonical.
            if n % 3 != 0 {
                for &s in case.engine.alphabet().symbols() {
                    for base in [&padded, &unpadded] {
                        let mut v = base.clone();
                        let body = v.len() - v.iter().rev().take_while(|&&c| c == b'=').count();
                        v[body - 1] = s;
                        variants.push(v);
                    }
                }
            }
            for v in &variants {
                let r = case.check_decode(v);
                if let Err(DecodeError::NonCanonical { index }) = r {
                    let body = v.len() - v.iter().rev().take_while(|&&c| c == b'=').count();
                    assert_eq!(index, body - 1);
                }
            }
        }
    }
}

#[test]
fn random_texts() {
    // Random strings over the alphabet plus a few extra bytes, so that many
    // are valid and the rest fail in every way.
    let mut rng = Rng(7);
    for case in cases() {
        let mut pool = case.engine.alphabet().symbols().to_vec();
        pool.extend_from_slice(b"==\n +/-_,.\x00\xff");
        let mut ok = 0;
        for _ in 0..3000 {
            let len = rng.below(400);
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    if rng.below(50) == 0 {
                        pool[rng.below(pool.len())]
                    } else {
                        pool[rng.below(64)]
                    }
                })
                .collect();
            ok += usize::from(case.check_decode(&text).is_ok());
        }
        assert!(ok > 100, "{}: only {ok} valid texts", case.name);
    }
}

#[test]
fn crypt_alphabet_is_served_by_every_backend() {
    // The custom alphabet differs from the RFC layout, so this exercises the
    // VBMI table path and the AVX2 four-lookup encoder.
    let engine = Engine::new(&CRYPT, Padding::None);
    let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    let text = engine.encode_to_string(&data);
    assert!(text.starts_with("..20"), "{}", &text[..4]);
    for (b, e) in pinned(engine) {
        assert_eq!(e.encode_to_string(&data), text, "{b:?}");
        assert_eq!(
            e.decode_to_vec(text.as_bytes()).as_deref(),
            Ok(&data[..]),
            "{b:?}"
        );
    }
}

#[test]
fn long_inputs_at_every_output_alignment() {
    // Long enough for the aligned-store prologue and the four-step decode
    // loop, written at every offset within a 64-byte line (16 of them
    // 4-byte aligned).
    let mut rng = Rng(99);
    for case in cases() {
        for n in [511usize, 512, 513, 767, 1000, 4103] {
            let data = rng.bytes(n);
            let want = case.oracle_encode(&data);
            for (backend, engine) in &case.backends {
                let mut buf = vec![0u8; want.len() + 64];
                let mut raw = vec![0u8; n + 64];
                for off in 0..64 {
                    let got = engine.encode_slice(&data, &mut buf[off..]).unwrap();
                    assert_eq!(
                        &buf[off..off + got],
                        want.as_bytes(),
                        "{} {backend:?} n={n} off={off}",
                        case.name
                    );
                    let got = engine
                        .decode_slice(want.as_bytes(), &mut raw[off..])
                        .unwrap();
                    assert_eq!(
                        &raw[off..off + got],
                        &data[..],
                        "{} {backend:?} n={n} off={off}",
                        case.name
                    );
                }
            }
        }
    }
}

#[test]
fn invalid_byte_in_long_texts_at_every_output_alignment() {
    // Texts long enough for the AVX-512 decoder's aligning head (whole
    // groups until the output is 64-byte aligned) and its four-step bulk
    // loop, decoded at output offsets across a 64-byte line, with one bad
    // byte in the head, at the head's end, in the bulk or in the tail: the
    // error names it, the whole groups before it are written correctly,
    // and nothing past them is written.
    let mut rng = Rng(0x1a11);
    for case in cases() {
        let data = rng.bytes(1500);
        let text = case.oracle_encode(&data).into_bytes();
        let body = text.len() - text.iter().rev().take_while(|&&c| c == b'=').count();
        // Besides fixed places, one bad group in each window where a store
        // of the head reaching past the head's own output would leave bytes
        // that the scalar rewrite does not cover: the head is up to 189
        // bytes (252 symbols) in up to four steps, and a step's full store
        // reaches 16 bytes (about 21 symbols) past its 48.
        let windows = [69..=89, 133..=153, 197..=217].into_iter();
        let fixed = [0usize, 3, 61, 64, 127, 200, 251, 252, 255, 256, 700, 1023];
        let positions = fixed
            .into_iter()
            .chain(windows.flat_map(|w| w.step_by(4)))
            .chain([body - 3, body - 1]);
        for pos in positions {
            let mut t = text.clone();
            t[pos] = b'*';
            for (backend, engine) in &case.backends {
                // Every output address modulo 64 (the head's length depends
                // on it), whatever the allocator's alignment.
                let mut store = vec![0xA5u8; 64 + 63 + data.len() + 3];
                let base = store.as_ptr().align_offset(64).min(63);
                for off in 0..64 {
                    let buf = &mut store[base..base + off + data.len() + 3];
                    buf.fill(0xA5);
                    let r = engine.decode_slice(&t, &mut buf[off..]);
                    let what = format!("{} {backend:?} pos={pos} off={off}", case.name);
                    assert_eq!(
                        r,
                        Err(DecodeError::InvalidByte {
                            index: pos,
                            byte: b'*'
                        }),
                        "{what}"
                    );
                    let whole = pos / 4 * 3;
                    assert_eq!(&buf[off..off + whole], &data[..whole], "{what}");
                    check_error_writes(r.unwrap_err(), body, &buf[off..]);
                    assert!(
                        buf[..off].iter().all(|&b| b == 0xA5),
                        "{what}: wrote before dst"
                    );
                }
            }
        }
    }
}

#[test]
fn invalid_byte_at_every_position() {
    // Every position of texts that span several 48-byte / 64-symbol SIMD
    // steps and end in each tail class, with bytes from every range the
    // table lookups treat differently (below 64, 64..=127, 128 and up, the
    // pad byte, and symbols of other alphabets).
    let mut rng = Rng(0x5eed);
    for case in cases() {
        let bad: Vec<u8> = [
            0x00, b' ', b'*', b'=', b'+', b'/', b'-', b'_', b',', b'.', 0x7f, 0x80, 0xc1, 0xff,
        ]
        .into_iter()
        .filter(|&b| case.engine.alphabet().value_of(b).is_none())
        .collect();
        assert!(bad.len() >= 8, "{}: {bad:?}", case.name);
        for n in [
            1usize, 2, 3, 46, 47, 48, 49, 50, 95, 96, 97, 98, 190, 191, 192, 193,
        ] {
            let data = rng.bytes(n);
            let text = case.oracle_encode(&data).into_bytes();
            let body = text.len() - text.iter().rev().take_while(|&&c| c == b'=').count();
            for pos in 0..text.len() {
                for &byte in &bad {
                    let mut t = text.clone();
                    t[pos] = byte;
                    let r = case.check_decode(&t);
                    // A byte in the body is reported itself, unless it is a
                    // `=` that joins the trailing run (then the padding rules
                    // decide, and `check_decode` has compared every backend
                    // and the oracle).
                    let run = t.iter().rev().take_while(|&&c| c == b'=').count();
                    if pos < body && pos < t.len() - run {
                        assert_eq!(
                            r,
                            Err(DecodeError::InvalidByte { index: pos, byte }),
                            "{} n={n} pos={pos}",
                            case.name
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn invalid_byte_at_every_position_of_every_avx2_round() {
    // Texts whose whole groups take each shape of the AVX2 decoder: two
    // 16-symbol lanes (16..=31 symbols), a last round of 1..=4 vectors
    // (the last overlapping the one before by 4..=28 symbols, so that
    // every store is wide or exact), and four-vector rounds before it; with
    // each tail. Every position gets a byte from each class the lookups
    // treat differently. Standard, URL-safe and the random alphabet, padded
    // and not; every backend against scalar (bytes written included) and
    // the `base64` crate.
    let mut rng = Rng(0xa5a5_0f0f);
    let raw_lengths = [
        12usize, 14, 17, 21, 23, 24, 25, 26, 27, 29, 30, 32, 48, 49, 51, 53, 72, 73, 75, 77, 96,
        97, 99, 101, 120, 123, 125, 189, 192, 195, 243,
    ];
    for case in cases() {
        if !matches!(
            case.name,
            "STANDARD" | "URL_SAFE_NO_PAD" | "RANDOM/required" | "RANDOM/none"
        ) {
            continue;
        }
        let bad: Vec<u8> = [
            0x00, b'=', 0x7f, 0x80, 0xff, b'+', b'/', b'-', b'_', b' ', b'~',
        ]
        .into_iter()
        .filter(|&b| case.engine.alphabet().value_of(b).is_none())
        .take(5)
        .collect();
        for &n in &raw_lengths {
            let data = rng.bytes(n);
            let text = case.oracle_encode(&data).into_bytes();
            let body = text.len() - text.iter().rev().take_while(|&&c| c == b'=').count();
            for pos in 0..body {
                for &byte in &bad {
                    let mut t = text.clone();
                    t[pos] = byte;
                    let r = case.check_decode(&t);
                    let run = t.iter().rev().take_while(|&&c| c == b'=').count();
                    if pos < t.len() - run {
                        assert_eq!(
                            r,
                            Err(DecodeError::InvalidByte { index: pos, byte }),
                            "{} n={n} pos={pos}",
                            case.name
                        );
                    }
                }
            }
            // And the same texts valid, with a non-canonical last symbol.
            assert_eq!(case.check_decode(&text), Ok(data.clone()));
            if n % 3 != 0 {
                let mut t = text.clone();
                let last = case
                    .engine
                    .alphabet()
                    .value_of(t[body - 1])
                    .expect("symbol");
                t[body - 1] = case.engine.alphabet().symbols()[usize::from(last | 1)];
                assert_eq!(
                    case.check_decode(&t),
                    Err(DecodeError::NonCanonical { index: body - 1 }),
                    "{} n={n}",
                    case.name
                );
            }
        }
    }
}
