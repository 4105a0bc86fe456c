use super::*;
use proptest::prelude::*;
use sha2::Digest as _;

fn reference(prefix: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut h = sha2::Sha256::new();
    h.update(prefix);
    h.update(msg);
    h.finalize().into()
}

#[test]
fn known_answers_every_backend() {
    for &b in Backend::available() {
        let st = State::with_backend(b).unwrap();
        assert_eq!(
            to_hex(&st.finup(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            to_hex(&st.finup(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let m = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        let (x, y) = st.finup2x(m, m);
        assert_eq!(
            to_hex(&x),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(x, y);
    }
}

fn to_hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn shani_unavailable_is_an_error_not_a_panic() {
    for b in [Backend::ShaNi, Backend::Generic] {
        match State::with_backend(b) {
            Ok(st) => assert_eq!(st.backend(), b),
            Err(e) => {
                assert!(!b.is_available());
                assert!(e.to_string().contains("not available"));
            }
        }
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "too slow under Miri; the proptest covers it at a reduced volume"
)]
fn every_length_around_block_edges() {
    // Exhaustive over small prefix/message lengths crossing block and padding
    // boundaries (55, 56, 63, 64, ...).
    let data: Vec<u8> = (0..400u32).map(|i| (i * 7 + 3) as u8).collect();
    let other: Vec<u8> = (0..400u32).map(|i| (i * 13 + 1) as u8).collect();
    for &b in Backend::available() {
        for plen in 0..=130 {
            let mut st = State::with_backend(b).unwrap();
            st.update(&data[..plen]);
            for mlen in 0..=200 {
                let want_a = reference(&data[..plen], &data[plen..plen + mlen]);
                let want_b = reference(&data[..plen], &other[..mlen]);
                assert_eq!(st.finup(&data[plen..plen + mlen]), want_a);
                let (x, y) = st.finup2x(&data[plen..plen + mlen], &other[..mlen]);
                assert_eq!(
                    (x, y),
                    (want_a, want_b),
                    "backend {b} prefix {plen} len {mlen}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]

    #[test]
    fn finup2x_equals_two_finups_equals_sha2(
        prefix in proptest::collection::vec(any::<u8>(), 0..=200),
        split in 0usize..=200,
        len in 0usize..=9000,
        other_len in 0usize..=9000,
        same_len in any::<bool>(),
        seed in any::<u8>(),
    ) {
        let a: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect();
        let blen = if same_len { len } else { other_len };
        let b: Vec<u8> = (0..blen).map(|i| (i as u8).wrapping_mul(17) ^ seed).collect();
        let want_a = reference(&prefix, &a);
        let want_b = reference(&prefix, &b);
        for &backend in Backend::available() {
            let mut st = State::with_backend(backend).unwrap();
            // The prefix arrives in two updates to exercise the buffer.
            let cut = split.min(prefix.len());
            st.update(&prefix[..cut]);
            st.update(&prefix[cut..]);
            prop_assert_eq!(st.absorbed(), prefix.len() as u64);
            let before = st.clone();
            prop_assert_eq!(st.finup(&a), want_a);
            prop_assert_eq!(st.finup(&b), want_b);
            prop_assert_eq!(st.finup2x(&a, &b), (want_a, want_b));
            // The state is not modified by finishing.
            prop_assert_eq!(st.h, before.h);
            prop_assert_eq!(st.total, before.total);
            prop_assert_eq!(st.buf, before.buf);
        }
    }
}
