//! fscrypt no-key names: the length rules of the kernel's lookup and the
//! layout of `struct fscrypt_nokey_name`.

use mdu_base64::URL_SAFE_NO_PAD;
use mdu_fscrypt::DecodeError;
use mdu_fscrypt::nokey::{self, NOKEY_NAME_MAX, NOKEY_NAME_MAX_ENCODED, NoKeyError, NoKeyName};
use sha2::{Digest, Sha256};

fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// Deterministic xorshift64* generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn decoded_length_rule() {
    let mut rng = Rng(5);
    for n in 0..=NOKEY_NAME_MAX {
        let raw = rng.bytes(n);
        let text = URL_SAFE_NO_PAD.encode_to_string(&raw);
        let valid = (9..=157).contains(&n) || n == 189;
        match nokey::decode(text.as_bytes()) {
            Ok(name) => {
                assert!(valid, "{n} bytes accepted");
                assert_eq!(name.as_bytes(), &raw[..]);
                assert_eq!(name.encode(), text);
                assert_eq!(nokey::encode(&raw).as_deref(), Ok(text.as_str()));
            }
            Err(e) => {
                assert!(!valid, "{n} bytes rejected: {e}");
                assert_eq!(e, NoKeyError::DecodedLength { len: n });
                assert_eq!(
                    nokey::encode(&raw),
                    Err(NoKeyError::DecodedLength { len: n })
                );
            }
        }
    }
}

#[test]
fn encoded_length_limit() {
    assert_eq!(
        URL_SAFE_NO_PAD.encoded_len(NOKEY_NAME_MAX),
        Some(NOKEY_NAME_MAX_ENCODED)
    );
    let ok = "A".repeat(252);
    assert_eq!(
        nokey::decode(ok.as_bytes()).map(|n| n.as_bytes().len()),
        Ok(189)
    );
    for len in [253, 255, 256, 1000] {
        assert_eq!(
            nokey::decode(&vec![b'A'; len]),
            Err(NoKeyError::NameTooLong { len })
        );
    }
}

#[test]
fn strict_decoding_errors_pass_through() {
    // A lone trailing 'A' was accepted by the fscrypt decoder of 2021-2025.
    let mut name = nokey::encode(&[0x11; 24]).unwrap();
    assert_eq!(name.len(), 32);
    name.push('A');
    assert_eq!(
        nokey::decode(name.as_bytes()),
        Err(NoKeyError::Decode(DecodeError::InvalidLength { len: 33 }))
    );
    assert_eq!(
        nokey::decode(b"AAAAAAAAAAAAAA=="),
        Err(NoKeyError::Decode(DecodeError::InvalidPadding {
            index: 14
        }))
    );
    assert_eq!(
        nokey::decode(b"AAAAAAAA+AAAAAAA"),
        Err(NoKeyError::Decode(DecodeError::InvalidByte {
            index: 8,
            byte: b'+'
        }))
    );
    assert_eq!(
        nokey::decode(b"AAAAAAAAAAAAAAB"),
        Err(NoKeyError::Decode(DecodeError::NonCanonical { index: 14 }))
    );
    let e = nokey::decode(b"AAAAAAAA+AAAAAAA").unwrap_err();
    assert!(e.to_string().contains("index 8"), "{e}");
}

#[test]
fn names_of_every_ciphertext_length() {
    let mut rng = Rng(11);
    assert_eq!(
        NoKeyName::new(0, 0, &[0; 256]),
        Err(NoKeyError::CiphertextLength { len: 256 })
    );
    for len in 1..=nokey::NAME_MAX {
        let ct = rng.bytes(len);
        let (h, m) = (rng.next() as u32, rng.next() as u32);
        let name = NoKeyName::new(h, m, &ct).unwrap();
        let text = name.encode();
        assert!(text.len() <= NOKEY_NAME_MAX_ENCODED);
        let raw = URL_SAFE_NO_PAD.decode_to_vec(text.as_bytes()).unwrap();
        // Layout: LE hashes, ciphertext prefix, SHA-256 of the rest.
        assert_eq!(&raw[..4], &h.to_le_bytes());
        assert_eq!(&raw[4..8], &m.to_le_bytes());
        if len <= 149 {
            assert_eq!(raw.len(), 8 + len);
            assert_eq!(&raw[8..], &ct[..]);
            assert_eq!(name.sha256(), None);
        } else {
            assert_eq!(raw.len(), 189);
            assert_eq!(&raw[8..157], &ct[..149]);
            assert_eq!(&raw[157..], &sha256(&ct[149..]));
        }
        let back = nokey::decode(text.as_bytes()).unwrap();
        assert_eq!(back, name);
        assert_eq!((back.dirhash(), back.minor_hash()), (h, m));
        assert!(back.matches(&ct));
        let mut other = ct.clone();
        other[len - 1] ^= 1;
        assert!(!back.matches(&other));
        assert!(!back.matches(&ct[..len - 1]));
        let mut buf = [0u8; NOKEY_NAME_MAX_ENCODED];
        let n = name.encode_slice(&mut buf).unwrap();
        assert_eq!(&buf[..n], text.as_bytes());
    }
}

#[test]
fn a_long_name_keeps_149_bytes_and_the_sha256_of_the_rest() {
    // FIPS 180-2's one-block message: SHA-256("abc"), independent of `sha2`.
    let want: [u8; 32] = [
        0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22,
        0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00,
        0x15, 0xad,
    ];
    let mut ct = [0x3cu8; 152];
    ct[149..].copy_from_slice(b"abc");
    let name = NoKeyName::new(0xdead_beef, 0x0102_0304, &ct).unwrap();
    let raw = name.as_bytes();
    assert_eq!(raw.len(), NOKEY_NAME_MAX);
    assert_eq!(&raw[..8], &[0xef, 0xbe, 0xad, 0xde, 4, 3, 2, 1]);
    assert_eq!(&raw[8..157], &ct[..149]);
    assert_eq!(&raw[157..], &want);
    assert_eq!(name.sha256(), Some(&want));
    // The same first 149 bytes with another tail is another file.
    let mut other = ct;
    other[151] = b'd';
    assert!(name.matches(&ct));
    assert!(!name.matches(&other));
}
