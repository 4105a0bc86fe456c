//! Properties: decoding never panics and agrees across backends on arbitrary
//! bytes; decode(encode(x)) == x for every engine and backend.

mod common;

use common::{decode_observed, engines, pinned};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn decode_never_panics_and_backends_agree(text in proptest::collection::vec(any::<u8>(), 0..400)) {
        for (name, engine) in engines() {
            let all = pinned(engine);
            let first = decode_observed(&all[0].1, &text);
            for (b, e) in &all[1..] {
                prop_assert_eq!(&decode_observed(e, &text), &first, "{} {:?}", name, b);
            }
            let _ = engine.decoded_len(&text);
        }
    }

    #[test]
    fn decode_never_panics_on_near_valid_text(
        data in proptest::collection::vec(any::<u8>(), 0..300),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4),
    ) {
        for (name, engine) in engines() {
            let mut text = engine.encode_to_string(&data).into_bytes();
            for &(pos, byte) in &edits {
                if !text.is_empty() {
                    let i = pos % text.len();
                    text[i] = byte;
                }
            }
            let all = pinned(engine);
            let first = decode_observed(&all[0].1, &text);
            for (b, e) in &all[1..] {
                prop_assert_eq!(&decode_observed(e, &text), &first, "{} {:?}", name, b);
            }
        }
    }

    #[test]
    fn roundtrip(data in proptest::collection::vec(any::<u8>(), 0..1200)) {
        for (name, engine) in engines() {
            for (b, e) in pinned(engine) {
                let text = e.encode_to_string(&data);
                prop_assert_eq!(Some(text.len()), e.encoded_len(data.len()));
                prop_assert_eq!(e.decode_to_vec(text.as_bytes()), Ok(data.clone()), "{} {:?}", name, b);
            }
        }
    }
}
