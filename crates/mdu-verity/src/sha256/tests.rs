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
        println!("sha256 known answers: backend {b}");
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
fn unavailable_backend_is_an_error_not_a_panic() {
    for b in [Backend::ShaNi, Backend::ArmCe, Backend::Generic] {
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
        println!("sha256 every length around block edges: backend {b}");
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

#[test]
#[cfg_attr(
    miri,
    ignore = "too slow under Miri; the proptest covers it at a reduced volume"
)]
fn selected_lengths_and_salts_every_backend() {
    // Prefix (salt) lengths and message lengths at the padding and block
    // edges, multi-block bodies and a 4 KiB Merkle block, through finup and
    // both messages of finup2x.
    let data: Vec<u8> = (0..9000u32).map(|i| (i * 29 + 5) as u8).collect();
    let other: Vec<u8> = (0..9000u32).map(|i| (i * 11 + 7) as u8).collect();
    let prefixes = [0usize, 1, 32, 55, 56, 63, 64, 65, 100, 128, 200];
    let lens = [
        0usize, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 191, 192, 1000, 4095, 4096, 4097,
        8192,
    ];
    for &b in Backend::available() {
        println!("sha256 selected lengths and salts: backend {b}");
        for &plen in &prefixes {
            let mut st = State::with_backend(b).unwrap();
            st.update(&other[..plen]);
            for &mlen in &lens {
                let (ma, mb) = (&data[..mlen], &other[plen..plen + mlen]);
                let want_a = reference(&other[..plen], ma);
                let want_b = reference(&other[..plen], mb);
                assert_eq!(st.finup(ma), want_a, "backend {b} prefix {plen} len {mlen}");
                assert_eq!(
                    st.finup2x(ma, mb),
                    (want_a, want_b),
                    "backend {b} prefix {plen} len {mlen}"
                );
                assert_eq!(
                    st.finup2x(mb, ma),
                    (want_b, want_a),
                    "backend {b} prefix {plen} len {mlen}"
                );
            }
        }
    }
}

#[test]
fn two_way_kernels_equal_generic_on_any_block_counts() {
    // The two-way kernels directly, from two different states and with
    // unequal block counts (the excess of the longer side goes through the
    // one-way kernel).
    let blocks: Vec<[u8; BLOCK_LEN]> = (0..7u8)
        .map(|i| core::array::from_fn(|j| (j as u8).wrapping_mul(37) ^ i.wrapping_mul(101)))
        .collect();
    let start_b: [u32; 8] = core::array::from_fn(|i| H0[i].rotate_left(7) ^ 0x5a5a_0f0f);
    for &b in Backend::available() {
        let Some(two) = kernels(b).two else {
            println!("sha256 two-way kernel: backend {b} has none, skipped");
            continue;
        };
        println!("sha256 two-way kernel on unequal block counts: backend {b}");
        for na in 0..=blocks.len() {
            for nb in 0..=blocks.len() {
                let (x, y) = (&blocks[..na], &blocks[blocks.len() - nb..]);
                let (mut ha, mut hb) = (H0, start_b);
                two(&mut ha, &mut hb, x, y);
                let (mut wa, mut wb) = (H0, start_b);
                generic::compress(&mut wa, x);
                generic::compress(&mut wb, y);
                assert_eq!((ha, hb), (wa, wb), "backend {b}: {na} and {nb} blocks");
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
        static PRINTED: std::sync::Once = std::sync::Once::new();
        PRINTED.call_once(|| {
            for &backend in Backend::available() {
                println!("sha256 finup/finup2x vs sha2 proptest: backend {backend}");
            }
        });
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
