//! One XTS message of any length: decrypt(encrypt(x)) == x on every backend,
//! every backend produces the same ciphertext (ciphertext stealing
//! included), and messages shorter than 16 bytes or keys of the wrong length
//! are errors that change nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mdu_xts::{Backend, Iv, SetupError, XtsAes128, XtsAes256};

fuzz_target!(|data: &[u8]| {
    if data.len() < 17 {
        return;
    }
    let (head, msg) = data.split_at(17);
    let wide = head[0] & 1 == 1;
    let key: Vec<u8> = if wide {
        (0..64u8)
            .map(|i| head[1 + usize::from(i) % 16] ^ i.wrapping_mul(37))
            .collect()
    } else {
        (0..32u8)
            .map(|i| head[1 + usize::from(i) % 16] ^ i.wrapping_mul(37))
            .collect()
    };
    let iv = Iv::from_u128(u128::from_le_bytes(head[1..17].try_into().unwrap()));

    // Wrong key lengths are refused.
    let short = &key[..key.len() - 1];
    assert!(matches!(
        XtsAes256::new(short),
        Err(SetupError::InvalidKeyLength { .. })
    ));
    assert!(matches!(
        XtsAes128::new(short),
        Err(SetupError::InvalidKeyLength { .. })
    ));

    let mut first: Option<Vec<u8>> = None;
    for &backend in Backend::available() {
        let mut buf = msg.to_vec();
        macro_rules! go {
            ($c:expr) => {{
                let c = $c;
                let r = c.encrypt(iv, &mut buf);
                if msg.len() < 16 {
                    assert!(r.is_err());
                    assert_eq!(buf, msg);
                    return;
                }
                r.unwrap();
                match &first {
                    None => first = Some(buf.clone()),
                    Some(f) => assert_eq!(&buf, f, "{backend:?} differs"),
                }
                c.decrypt(iv, &mut buf).unwrap();
                assert_eq!(buf, msg, "{backend:?} does not round-trip");
            }};
        }
        if wide {
            go!(XtsAes256::with_backend_allow_weak_key(&key, backend).unwrap());
        } else {
            go!(XtsAes128::with_backend_allow_weak_key(&key, backend).unwrap());
        }
    }
});
