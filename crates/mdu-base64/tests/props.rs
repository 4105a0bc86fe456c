//! Properties: decoding never panics and agrees across backends on arbitrary
//! bytes; decode(encode(x)) == x for every engine and backend.

mod common;

use common::{decode_observed, engines, pinned};
use mdu_base64::{Alphabet, Engine, Padding};
use mdu_core::testing::sample;
use proptest::prelude::*;

/// Any alphabet the engine accepts: 64 distinct printable ASCII bytes other
/// than `=`, in any order (so symbols land in both halves of the 128-entry
/// reverse table in every mix).
fn any_alphabet() -> impl Strategy<Value = Alphabet> {
    let printable: Vec<u8> = (0x20u8..=0x7e).filter(|&b| b != b'=').collect();
    proptest::sample::subsequence(printable, 64)
        .prop_shuffle()
        .prop_map(|v| {
            let chars: [u8; 64] = v.try_into().expect("64 symbols");
            Alphabet::new(&chars).expect("valid alphabet")
        })
}

fn any_padding() -> impl Strategy<Value = Padding> {
    prop_oneof![
        Just(Padding::Required),
        Just(Padding::None),
        Just(Padding::Optional)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(sample::proptest_cases("props.rs", 512)))]

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

    #[test]
    fn random_alphabets_agree_across_backends(
        alphabet in any_alphabet(),
        padding in any_padding(),
        data in proptest::collection::vec(any::<u8>(), 0..300),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..3),
    ) {
        let engine = Engine::new(&alphabet, padding);
        let all = pinned(engine);
        let text = all[0].1.encode_to_string(&data);
        let mut bad = text.clone().into_bytes();
        for &(pos, byte) in &edits {
            if !bad.is_empty() {
                let i = pos % bad.len();
                bad[i] = byte;
            }
        }
        let first = decode_observed(&all[0].1, &bad);
        for (b, e) in &all {
            prop_assert_eq!(&e.encode_to_string(&data), &text, "{:?} {:?}", b, alphabet);
            prop_assert_eq!(e.decode_to_vec(text.as_bytes()), Ok(data.clone()), "{:?}", b);
            prop_assert_eq!(&decode_observed(e, &bad), &first, "{:?} {:?}", b, alphabet);
        }
    }
}
