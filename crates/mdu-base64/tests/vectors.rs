//! Published vectors: RFC 4648 section 10 and the Linux lib/base64 KUnit
//! cases, on every backend.

mod common;

use common::pinned;
use mdu_base64::{Alphabet, DecodeError, Engine, Padding, STANDARD, URL_SAFE, URL_SAFE_NO_PAD};

const RFC4648: [(&str, &str); 7] = [
    ("", ""),
    ("f", "Zg=="),
    ("fo", "Zm8="),
    ("foo", "Zm9v"),
    ("foob", "Zm9vYg=="),
    ("fooba", "Zm9vYmE="),
    ("foobar", "Zm9vYmFy"),
];

/// KUnit encode cases (standard alphabet, padded).
const KUNIT: [(&str, &str); 11] = [
    ("", ""),
    ("f", "Zg=="),
    ("fo", "Zm8="),
    ("foo", "Zm9v"),
    ("foob", "Zm9vYg=="),
    ("fooba", "Zm9vYmE="),
    ("foobar", "Zm9vYmFy"),
    ("Hello, world!", "SGVsbG8sIHdvcmxkIQ=="),
    (
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=",
    ),
    (
        "abcdefghijklmnopqrstuvwxyz",
        "YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo=",
    ),
    ("0123456789+/", "MDEyMzQ1Njc4OSsv"),
];

const STD_NO_PAD: Engine = Engine::new(&Alphabet::STANDARD, Padding::None);
const IMAP: Engine = Engine::new(&Alphabet::IMAP, Padding::Required);
const IMAP_NO_PAD: Engine = Engine::new(&Alphabet::IMAP, Padding::None);

#[test]
fn rfc4648_section10() {
    for (plain, b64) in RFC4648 {
        for (engine, text) in [
            (STANDARD, b64.to_string()),
            (URL_SAFE, b64.to_string()),
            (URL_SAFE_NO_PAD, b64.trim_end_matches('=').to_string()),
            (STD_NO_PAD, b64.trim_end_matches('=').to_string()),
        ] {
            for (b, e) in pinned(engine) {
                assert_eq!(e.encode_to_string(plain.as_bytes()), text, "{b:?}");
                assert_eq!(
                    e.decode_to_vec(text.as_bytes()).unwrap(),
                    plain.as_bytes(),
                    "{b:?}"
                );
                assert_eq!(e.decoded_len(text.as_bytes()), Ok(plain.len()));
            }
        }
    }
}

#[test]
fn rfc4648_alphabets_differ_only_in_62_63() {
    let data = [0xfbu8, 0xff, 0xbf];
    assert_eq!(STANDARD.encode_to_string(&data), "+/+/");
    assert_eq!(URL_SAFE.encode_to_string(&data), "-_-_");
    assert_eq!(IMAP.encode_to_string(&data), "+,+,");
    assert_eq!(
        URL_SAFE_NO_PAD.decode_to_vec(b"+/+/"),
        Err(DecodeError::InvalidByte {
            index: 0,
            byte: b'+'
        })
    );
}

#[test]
fn kunit_encode_decode() {
    for (plain, b64) in KUNIT {
        let unpadded = b64.trim_end_matches('=');
        for (b, e) in pinned(STANDARD) {
            assert_eq!(e.encode_to_string(plain.as_bytes()), b64, "{b:?}");
            assert_eq!(e.decode_to_vec(b64.as_bytes()).unwrap(), plain.as_bytes());
        }
        for (b, e) in pinned(STD_NO_PAD) {
            assert_eq!(e.encode_to_string(plain.as_bytes()), unpadded, "{b:?}");
            assert_eq!(
                e.decode_to_vec(unpadded.as_bytes()).unwrap(),
                plain.as_bytes()
            );
        }
    }
    for (_, e) in pinned(STANDARD) {
        assert_eq!(e.decode_to_vec(b"TWFu").unwrap(), b"Man");
    }
}

#[test]
fn kunit_decode_errors_with_padding() {
    let cases: [(&[u8], DecodeError); 7] = [
        (
            b"Zg=!",
            DecodeError::InvalidByte {
                index: 2,
                byte: b'=',
            },
        ),
        (
            b"Zm$=",
            DecodeError::InvalidByte {
                index: 2,
                byte: b'$',
            },
        ),
        (b"Z===", DecodeError::InvalidPadding { index: 1 }),
        (b"Zg", DecodeError::InvalidLength { len: 2 }),
        (b"Zm9v====", DecodeError::InvalidPadding { index: 4 }),
        (b"Zm==A", DecodeError::InvalidLength { len: 5 }),
        (b"Zg\0=", DecodeError::InvalidByte { index: 2, byte: 0 }),
    ];
    for (text, err) in cases {
        for (b, e) in pinned(STANDARD) {
            assert_eq!(e.decode_to_vec(text), Err(err), "{b:?} {text:?}");
        }
    }
}

#[test]
fn kunit_decode_errors_without_padding() {
    let cases: [(&[u8], DecodeError); 7] = [
        (
            b"Zg=!",
            DecodeError::InvalidByte {
                index: 2,
                byte: b'=',
            },
        ),
        (b"Zm$=", DecodeError::InvalidPadding { index: 3 }),
        (b"Z===", DecodeError::InvalidPadding { index: 1 }),
        (b"Zg=", DecodeError::InvalidPadding { index: 2 }),
        (b"Zm9v====", DecodeError::InvalidPadding { index: 4 }),
        (b"Zm==", DecodeError::InvalidPadding { index: 2 }),
        (b"Zg\0=", DecodeError::InvalidPadding { index: 3 }),
    ];
    for (text, err) in cases {
        for (b, e) in pinned(STD_NO_PAD) {
            assert_eq!(e.decode_to_vec(text), Err(err), "{b:?} {text:?}");
        }
    }
    // Without any '=', the invalid byte itself is reported.
    assert_eq!(
        STD_NO_PAD.decode_to_vec(b"Zm$A"),
        Err(DecodeError::InvalidByte {
            index: 2,
            byte: b'$'
        })
    );
    assert_eq!(
        STD_NO_PAD.decode_to_vec(b"Zg\0A"),
        Err(DecodeError::InvalidByte { index: 2, byte: 0 })
    );
}

#[test]
fn kunit_variants() {
    let data = [0x00u8, 0xfb, 0xff, 0x7f, 0x80];
    let std = STD_NO_PAD.encode_to_string(&data);
    assert_eq!(std, "APv/f4A");
    assert_eq!(
        URL_SAFE_NO_PAD.encode_to_string(&data),
        std.replace('+', "-").replace('/', "_")
    );
    assert_eq!(URL_SAFE_NO_PAD.encode_to_string(&data), "APv_f4A");
    assert_eq!(IMAP_NO_PAD.encode_to_string(&data), std.replace('/', ","));
    for e in [URL_SAFE_NO_PAD, IMAP_NO_PAD] {
        assert_eq!(
            e.decode_to_vec(b"Zg=="),
            Err(DecodeError::InvalidPadding { index: 2 })
        );
    }
}

#[test]
fn fscrypt_decoder_strictness_table() {
    // FORMATS.md 5.3: what the 2021-2025 fscrypt decoder and the generic
    // lib/base64 decoder do, and what this crate does (the latter).
    let e = URL_SAFE_NO_PAD;
    assert_eq!(e.decode_to_vec(b"AAAA").unwrap(), [0, 0, 0]);
    assert_eq!(
        e.decode_to_vec(b"AAAAA"),
        Err(DecodeError::InvalidLength { len: 5 })
    );
    assert_eq!(
        e.decode_to_vec(b"A"),
        Err(DecodeError::InvalidLength { len: 1 })
    );
    assert_eq!(e.decode_to_vec(b"Zg").unwrap(), b"f");
    assert_eq!(e.decode_to_vec(b"Zm9vYmE").unwrap(), b"fooba");
    assert_eq!(
        e.decode_to_vec(b"Zg=="),
        Err(DecodeError::InvalidPadding { index: 2 })
    );
    assert_eq!(
        e.decode_to_vec(b"QR"),
        Err(DecodeError::NonCanonical { index: 1 })
    );
    assert_eq!(
        e.decode_to_vec(b"QUF"),
        Err(DecodeError::NonCanonical { index: 2 })
    );
    assert_eq!(
        e.decode_to_vec(b"Zh"),
        Err(DecodeError::NonCanonical { index: 1 })
    );
    for bad in [b'=', 0, b' ', b'\n', b'+', b'/'] {
        assert_eq!(
            e.decode_to_vec(&[b'Z', b'g', bad, b'A']),
            Err(DecodeError::InvalidByte {
                index: 2,
                byte: bad
            })
        );
    }
}

#[test]
fn optional_padding() {
    let e = Engine::new(&Alphabet::STANDARD, Padding::Optional);
    assert_eq!(e.encode_to_string(b"fo"), "Zm8");
    assert_eq!(e.decode_to_vec(b"Zm8=").unwrap(), b"fo");
    assert_eq!(e.decode_to_vec(b"Zm8").unwrap(), b"fo");
    assert_eq!(
        e.decode_to_vec(b"Zg=").unwrap_err(),
        DecodeError::InvalidPadding { index: 2 }
    );
    assert_eq!(
        e.decode_to_vec(b"Zm8=="),
        Err(DecodeError::InvalidPadding { index: 3 })
    );
    assert_eq!(
        e.decode_to_vec(b"Zm9v="),
        Err(DecodeError::InvalidPadding { index: 4 })
    );
}

#[test]
fn error_messages_name_value_and_rule() {
    let msg = DecodeError::InvalidByte {
        index: 7,
        byte: b'$',
    }
    .to_string();
    assert!(
        msg.contains("'$'") && msg.contains('7') && msg.contains("alphabet"),
        "{msg}"
    );
    let msg = DecodeError::InvalidLength { len: 5 }.to_string();
    assert!(msg.contains('5') && msg.contains("1 mod 4"), "{msg}");
    let msg = DecodeError::OutputTooSmall { needed: 9, got: 3 }.to_string();
    assert!(msg.contains('9') && msg.contains('3'), "{msg}");
    let msg = DecodeError::NonCanonical { index: 1 }.to_string();
    assert!(msg.contains("unused") && msg.contains('1'), "{msg}");
}

#[test]
fn custom_alphabets_are_checked() {
    use mdu_base64::AlphabetError;
    let mut chars = *Alphabet::STANDARD.symbols();
    chars[5] = b'\n';
    assert_eq!(
        Alphabet::new(&chars),
        Err(AlphabetError::NotPrintable {
            index: 5,
            byte: b'\n'
        })
    );
    chars[5] = 0x80;
    assert_eq!(
        Alphabet::new(&chars),
        Err(AlphabetError::NotPrintable {
            index: 5,
            byte: 0x80
        })
    );
    chars[5] = b'=';
    assert_eq!(
        Alphabet::new(&chars),
        Err(AlphabetError::PadByte { index: 5 })
    );
    chars[5] = b'Z';
    assert_eq!(
        Alphabet::new(&chars),
        Err(AlphabetError::Duplicate {
            byte: b'Z',
            first: 5,
            second: 25
        })
    );
}

#[test]
fn output_too_small_writes_nothing() {
    let mut buf = [0xA5u8; 7];
    assert_eq!(
        STANDARD.encode_slice(b"hello", &mut buf),
        Err(mdu_base64::EncodeError::OutputTooSmall { needed: 8, got: 7 })
    );
    assert_eq!(buf, [0xA5; 7]);
    let mut buf = [0xA5u8; 4];
    assert_eq!(
        STANDARD.decode_slice(b"aGVsbG8=", &mut buf),
        Err(DecodeError::OutputTooSmall { needed: 5, got: 4 })
    );
    assert_eq!(buf, [0xA5; 4]);
}

#[test]
#[cfg(x86_simd)]
fn detection_matches_std() {
    use mdu_base64::Backend;
    assert_eq!(
        Backend::Avx2.is_available(),
        is_x86_feature_detected!("avx2")
    );
    assert_eq!(
        Backend::Avx512Vbmi.is_available(),
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vbmi")
            && is_x86_feature_detected!("bmi2")
    );
    assert_eq!(
        Backend::available().len(),
        1 + Backend::Avx2.is_available() as usize + Backend::Avx512Vbmi.is_available() as usize
    );
    eprintln!("backends: {:?}", Backend::available());
}

#[test]
#[cfg(arm_cpu)]
fn detection_matches_std() {
    use mdu_base64::Backend;
    assert_eq!(
        Backend::Neon.is_available(),
        std::arch::is_aarch64_feature_detected!("neon")
    );
    assert!(!Backend::Avx2.is_available());
    assert!(!Backend::Avx512Vbmi.is_available());
    let want: Vec<Backend> = [Backend::Neon, Backend::Generic]
        .into_iter()
        .filter(|b| b.is_available())
        .collect();
    assert_eq!(Backend::available(), want.as_slice());
    eprintln!("backends: {:?}", Backend::available());
}

/// The detected backend, printed on every target. With
/// `MDU_REQUIRE_ARM64_BACKENDS=1` (the arm64 emulation runs set it), the
/// suite must run on NEON and never silently on the portable code.
#[test]
fn detected_backend() {
    use mdu_base64::Backend;
    let detected = Backend::detect();
    println!("mdu-base64 detected backend: {}", detected.name());
    assert!(detected.is_available());
    assert_eq!(Backend::available().first(), Some(&detected));
    if std::env::var("MDU_REQUIRE_ARM64_BACKENDS").as_deref() == Ok("1") {
        assert_eq!(
            detected,
            Backend::Neon,
            "MDU_REQUIRE_ARM64_BACKENDS=1 but the detected backend is {}, not neon",
            detected.name()
        );
        assert_eq!(mdu_base64::URL_SAFE_NO_PAD.backend(), Backend::Neon);
    }
}
