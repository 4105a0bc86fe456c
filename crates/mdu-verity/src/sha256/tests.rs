use super::*;
use mdu_core::testing::sample;
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
    for b in [
        Backend::ShaNi,
        Backend::ArmCe,
        Backend::Avx512,
        Backend::Generic,
    ] {
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
        let Some(two) = Kernels::of(b).and_then(|k| k.two) else {
            println!("sha256 two-way kernel: backend {b} has none, skipped");
            continue;
        };
        println!("sha256 two-way kernel on unequal block counts: backend {b}");
        for na in 0..=blocks.len() {
            for nb in 0..=blocks.len() {
                let (x, y) = (&blocks[..na], &blocks[blocks.len() - nb..]);
                let (mut ha, mut hb) = (H0, start_b);
                two.run(&mut ha, &mut hb, x, y);
                let (mut wa, mut wb) = (H0, start_b);
                generic::compress(&mut wa, x);
                generic::compress(&mut wb, y);
                assert_eq!((ha, hb), (wa, wb), "backend {b}: {na} and {nb} blocks");
            }
        }
    }
}

#[test]
fn many_lane_kernels_equal_one_finup_per_message() {
    // Groups of sixteen equal lengths (the many-lane kernel), groups with
    // one odd length (pairs and single hashes), and leftovers of every size
    // below sixteen, after prefixes that leave the buffer at every edge.
    let data: Vec<u8> = (0..40 * 4200u32)
        .map(|i| (i * 31 + (i >> 9)) as u8)
        .collect();
    for &b in Backend::available() {
        println!("sha256 finup_many: backend {b} ({} lanes)", b.lanes());
        for plen in [0usize, 1, 32, 55, 56, 63, 64, 65, 200] {
            let mut st = State::with_backend(b).unwrap();
            st.update(&data[..plen]);
            for len in [0usize, 1, 55, 56, 64, 119, 120, 1000, 4096] {
                for count in [0usize, 1, 2, 15, 16, 17, 31, 32, 33, 40] {
                    for odd in [None, Some(count / 2)] {
                        let msgs: Vec<&[u8]> = (0..count)
                            .map(|i| {
                                let l = if odd == Some(i) { len + 1 } else { len };
                                &data[plen + i * 4100..plen + i * 4100 + l]
                            })
                            .collect();
                        let mut out = vec![[0u8; 32]; count];
                        st.finup_many(&msgs, &mut out);
                        for (i, (m, d)) in msgs.iter().zip(&out).enumerate() {
                            assert_eq!(
                                *d,
                                reference(&data[..plen], m),
                                "backend {b} prefix {plen} len {len} count {count} odd {odd:?} message {i}"
                            );
                        }
                    }
                }
            }
        }
        // A shorter output slice: only as far as both go.
        let st = State::with_backend(b).unwrap();
        let msgs: Vec<&[u8]> = (0..20).map(|i| &data[i * 64..i * 64 + 64]).collect();
        let mut out = vec![[0u8; 32]; 17];
        st.finup_many(&msgs, &mut out);
        assert_eq!(out[16], st.finup(msgs[16]));
    }
}

#[test]
fn many_lane_kernel_equals_generic_from_different_states() {
    let Some(many) = Backend::available()
        .iter()
        .find_map(|&b| Kernels::of(b)?.many.map(|k| (b, k)))
    else {
        println!("sha256 many-lane kernel: no backend of this CPU has one, skipped");
        return;
    };
    println!(
        "sha256 many-lane kernel from different states: backend {}",
        many.0
    );
    let blocks: Vec<[u8; BLOCK_LEN]> = (0..16 * 5u32)
        .map(|i| core::array::from_fn(|j| ((j as u32 * 37) ^ (i * 101)) as u8))
        .collect();
    for n in 0..=5 {
        let starts: [[u32; 8]; MANY] = core::array::from_fn(|lane| {
            core::array::from_fn(|i| H0[i].rotate_left(lane as u32) ^ (lane as u32 * 0x0101_0101))
        });
        let lanes: [&[[u8; BLOCK_LEN]]; MANY] =
            core::array::from_fn(|lane| &blocks[lane * 5..lane * 5 + n]);
        let mut h: [[u32; MANY]; 8] =
            core::array::from_fn(|i| core::array::from_fn(|l| starts[l][i]));
        many.1.run(&mut h, &lanes);
        for lane in 0..MANY {
            let mut want = starts[lane];
            generic::compress(&mut want, lanes[lane]);
            let got: [u32; 8] = core::array::from_fn(|i| h[i][lane]);
            assert_eq!(got, want, "{n} blocks, lane {lane}");
        }
    }
}

#[test]
fn kernels_exist_exactly_for_the_available_backends() {
    for b in [
        Backend::ShaNi,
        Backend::ArmCe,
        Backend::Avx512,
        Backend::Generic,
    ] {
        let k = Kernels::of(b);
        assert_eq!(k.is_some(), b.is_available(), "{b}");
        assert_eq!(k.map(|k| k.backend), k.is_some().then_some(b));
        if let Err(e) = State::with_backend(b) {
            let msg = e.to_string();
            let missing = b.needs().difference(Features::get());
            if !b.compiled() {
                assert!(msg.contains("not compiled for this target"), "{msg}");
            } else {
                assert!(msg.contains(&format!("it lacks {missing}")), "{msg}");
            }
        }
    }
}

#[test]
fn selection_on_cpu_profiles() {
    use Backend::{ArmCe, Avx512, Generic, ShaNi};
    use mdu_platform::cpu::{Profile, Vendor};
    let x86 = cfg!(target_arch = "x86_64");
    let cpu = |sha: bool, avx512: bool, vendor| Profile {
        features: Features {
            sha,
            sse2: true,
            ssse3: true,
            sse4_1: true,
            avx512f: avx512,
            avx512bw: avx512,
            ..Features::NONE
        },
        vendor,
    };
    // (name, SHA-NI, AVX-512 F+BW, vendor) -> order on x86_64
    let profiles: [(&str, Profile, &[Backend]); 6] = [
        (
            "Intel Sapphire/Emerald Rapids, Ice Lake",
            cpu(true, true, Vendor::Intel),
            &[Avx512, ShaNi, Generic],
        ),
        (
            "AMD Zen 4, Zen 5",
            cpu(true, true, Vendor::Amd),
            &[ShaNi, Avx512, Generic],
        ),
        (
            "AMD Zen 2, Zen 3; Intel Alder Lake",
            cpu(true, false, Vendor::Amd),
            &[ShaNi, Generic],
        ),
        (
            "Intel Skylake-SP, Cascade Lake",
            cpu(false, true, Vendor::Intel),
            &[Avx512, Generic],
        ),
        (
            "Intel Haswell",
            cpu(false, false, Vendor::Intel),
            &[Generic],
        ),
        (
            "Intel Goldmont",
            cpu(true, false, Vendor::Intel),
            &[ShaNi, Generic],
        ),
    ];
    for (name, profile, want) in profiles {
        let got = Backend::available_on(profile);
        assert_eq!(got, if x86 { want } else { &[Generic] }, "{name}");
        assert_eq!(Backend::detect_on(profile), got[0], "{name}");
    }
    let arm64 = Features {
        neon: true,
        sha2: true,
        ..Features::NONE
    };
    let want: &[Backend] = if cfg!(target_arch = "aarch64") {
        &[ArmCe, Generic]
    } else {
        &[Generic]
    };
    assert_eq!(Backend::available_on(arm64), want);
    assert_eq!(Backend::available(), Backend::available_on(Profile::get()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) {
        4
    } else {
        sample::proptest_cases("finup2x_equals_two_finups_equals_sha2", 256)
    }))]

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
                println!("sha256 finup/finup2x/finup_many vs sha2 proptest: backend {backend}");
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
            // Sixteen copies of `a` (the many-lane kernel where there is
            // one), then `b`.
            let mut msgs = vec![&a[..]; 16];
            msgs.push(&b);
            let mut out = vec![[0u8; 32]; 17];
            st.finup_many(&msgs, &mut out);
            prop_assert!(out[..16].iter().all(|d| *d == want_a));
            prop_assert_eq!(out[16], want_b);
            // The state is not modified by finishing.
            prop_assert_eq!(st.h, before.h);
            prop_assert_eq!(st.total, before.total);
            prop_assert_eq!(st.buf, before.buf);
        }
    }
}
