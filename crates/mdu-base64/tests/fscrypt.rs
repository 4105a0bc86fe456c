//! fscrypt no-key names: the length rules of the kernel's lookup and the
//! layout of `struct fscrypt_nokey_name`.

mod common;

use common::{Rng, announce_detected};
use mdu_base64::fscrypt::{self, Error, NOKEY_NAME_MAX, NOKEY_NAME_MAX_ENCODED, NoKeyName};
use mdu_base64::{DecodeError, URL_SAFE_NO_PAD};
use sha2::{Digest, Sha256};

fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

#[test]
fn decoded_length_rule() {
    announce_detected();
    let mut rng = Rng(5);
    for n in 0..=NOKEY_NAME_MAX {
        let raw = rng.bytes(n);
        let text = URL_SAFE_NO_PAD.encode_to_string(&raw);
        let valid = (9..=157).contains(&n) || n == 189;
        match fscrypt::decode(text.as_bytes()) {
            Ok(name) => {
                assert!(valid, "{n} bytes accepted");
                assert_eq!(name.as_bytes(), &raw[..]);
                assert_eq!(name.encode(), text);
                assert_eq!(fscrypt::encode(&raw).as_deref(), Ok(text.as_str()));
            }
            Err(e) => {
                assert!(!valid, "{n} bytes rejected: {e}");
                assert_eq!(e, Error::DecodedLength { len: n });
                assert_eq!(fscrypt::encode(&raw), Err(Error::DecodedLength { len: n }));
            }
        }
    }
}

#[test]
fn encoded_length_limit() {
    announce_detected();
    assert_eq!(
        URL_SAFE_NO_PAD.encoded_len(NOKEY_NAME_MAX),
        Some(NOKEY_NAME_MAX_ENCODED)
    );
    let ok = "A".repeat(252);
    assert_eq!(
        fscrypt::decode(ok.as_bytes()).map(|n| n.as_bytes().len()),
        Ok(189)
    );
    for len in [253, 255, 256, 1000] {
        assert_eq!(
            fscrypt::decode(&vec![b'A'; len]),
            Err(Error::NameTooLong { len })
        );
    }
}

#[test]
fn strict_decoding_errors_pass_through() {
    announce_detected();
    // A lone trailing 'A' was accepted by the fscrypt decoder of 2021-2025.
    let mut name = fscrypt::encode(&[0x11; 24]).unwrap();
    assert_eq!(name.len(), 32);
    name.push('A');
    assert_eq!(
        fscrypt::decode(name.as_bytes()),
        Err(Error::Decode(DecodeError::InvalidLength { len: 33 }))
    );
    assert_eq!(
        fscrypt::decode(b"AAAAAAAAAAAAAA=="),
        Err(Error::Decode(DecodeError::InvalidPadding { index: 14 }))
    );
    assert_eq!(
        fscrypt::decode(b"AAAAAAAA+AAAAAAA"),
        Err(Error::Decode(DecodeError::InvalidByte {
            index: 8,
            byte: b'+'
        }))
    );
    assert_eq!(
        fscrypt::decode(b"AAAAAAAAAAAAAAB"),
        Err(Error::Decode(DecodeError::NonCanonical { index: 14 }))
    );
    let e = fscrypt::decode(b"AAAAAAAA+AAAAAAA").unwrap_err();
    assert!(e.to_string().contains("index 8"), "{e}");
}

#[test]
fn names_of_every_ciphertext_length() {
    announce_detected();
    let mut rng = Rng(11);
    assert_eq!(
        NoKeyName::new(0, 0, &[0; 256], sha256),
        Err(Error::CiphertextLength { len: 256 })
    );
    for len in 1..=fscrypt::NAME_MAX {
        let ct = rng.bytes(len);
        let (h, m) = (rng.next() as u32, rng.next() as u32);
        let name = NoKeyName::new(h, m, &ct, sha256).unwrap();
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
        let back = fscrypt::decode(text.as_bytes()).unwrap();
        assert_eq!(back, name);
        assert_eq!((back.dirhash(), back.minor_hash()), (h, m));
        assert!(back.matches(&ct, sha256));
        let mut other = ct.clone();
        other[len - 1] ^= 1;
        assert!(!back.matches(&other, sha256));
        assert!(!back.matches(&ct[..len - 1], sha256));
        let mut buf = [0u8; NOKEY_NAME_MAX_ENCODED];
        let n = name.encode_slice(&mut buf).unwrap();
        assert_eq!(&buf[..n], text.as_bytes());
    }
}
