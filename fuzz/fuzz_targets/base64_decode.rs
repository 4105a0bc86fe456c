//! Arbitrary bytes through every engine constant and every backend: no
//! panic, every backend agrees with the scalar one (result and error), and
//! validity and output agree with the `base64` crate's strict engines.
#![no_main]

use base64::Engine as _;
use base64::engine::general_purpose::GeneralPurpose;
use base64::engine::{DecodePaddingMode, GeneralPurposeConfig};
use libfuzzer_sys::fuzz_target;
use mdu_base64::{Backend, Engine, STANDARD, URL_SAFE, URL_SAFE_NO_PAD};

fn oracle(which: usize) -> GeneralPurpose {
    let strict = |pad: bool| {
        GeneralPurposeConfig::new()
            .with_encode_padding(pad)
            .with_decode_allow_trailing_bits(false)
            .with_decode_padding_mode(if pad {
                DecodePaddingMode::RequireCanonical
            } else {
                DecodePaddingMode::RequireNone
            })
    };
    match which {
        0 => GeneralPurpose::new(&base64::alphabet::STANDARD, strict(true)),
        1 => GeneralPurpose::new(&base64::alphabet::URL_SAFE, strict(true)),
        _ => GeneralPurpose::new(&base64::alphabet::URL_SAFE, strict(false)),
    }
}

fuzz_target!(|data: &[u8]| {
    let engines: [Engine; 3] = [STANDARD, URL_SAFE, URL_SAFE_NO_PAD];
    for (which, engine) in engines.iter().enumerate() {
        let scalar = engine.with_backend(Backend::Generic).unwrap();
        let want = scalar.decode_to_vec(data);
        for &b in Backend::available() {
            let e = engine.with_backend(b).unwrap();
            assert_eq!(e.decode_to_vec(data), want, "{b:?} differs from scalar");
            // decode_slice into a too-small buffer: an error, nothing more.
            if let Ok(v) = &want {
                if !v.is_empty() {
                    let mut small = vec![0u8; v.len() - 1];
                    assert!(e.decode_slice(data, &mut small).is_err());
                }
            }
        }
        let theirs = oracle(which).decode(data);
        match (&want, &theirs) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(_), Err(_)) => {}
            _ => panic!("validity differs from the base64 crate: mdu {want:?}, base64 {theirs:?}"),
        }
    }
});
