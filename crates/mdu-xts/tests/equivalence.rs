//! Every backend equals the generic one byte for byte, on every path, and
//! the `xts-mode` crate agrees unit by unit.

mod common;

use common::{Request, all_paths, note_backend, request};
use mdu_core::testing::sample;
use mdu_xts::{Backend, Iv};
use proptest::prelude::*;
use xts_mode::Xts128;

fn backends_agree(test: &str, r: &Request) {
    let plain = r.plaintext();
    let reference = all_paths(Backend::Generic, r, &plain);
    for &backend in Backend::available() {
        if backend == Backend::Generic {
            continue;
        }
        note_backend(test, backend);
        let got = all_paths(backend, r, &plain);
        if got != reference {
            let at = got
                .iter()
                .zip(&reference)
                .position(|(a, b)| a != b)
                .unwrap();
            panic!(
                "{backend:?} differs from Generic at byte {at} (unit {})",
                at / r.unit
            );
        }
    }
}

/// The ciphertext of one unit according to the `xts-mode` crate.
fn xts_mode_unit(key: &[u8], iv: Iv, unit: &mut [u8], enc: bool) {
    use aes::cipher::KeyInit;
    let (k1, k2) = key.split_at(key.len() / 2);
    macro_rules! go {
        ($aes:ty) => {{
            let x = Xts128::<$aes>::new(
                <$aes>::new_from_slice(k1).unwrap(),
                <$aes>::new_from_slice(k2).unwrap(),
            );
            if enc {
                x.encrypt_sector(unit, iv.0.into());
            } else {
                x.decrypt_sector(unit, iv.0.into());
            }
        }};
    }
    match key.len() {
        32 => go!(aes::Aes128),
        _ => go!(aes::Aes256),
    }
}

fn xts_mode_agrees(test: &str, r: &Request) {
    let plain = r.plaintext();
    let mut want = plain.clone();
    for (i, unit) in want.chunks_mut(r.unit).enumerate() {
        let iv = r.iv.advance(i as u128 * u128::from(r.step));
        xts_mode_unit(&r.key, iv, unit, true);
    }
    for &backend in Backend::available() {
        note_backend(test, backend);
        let got = all_paths(backend, r, &plain);
        assert!(got == want, "{backend:?} differs from xts-mode");
    }
    // And xts-mode decrypts our ciphertext.
    for (i, unit) in want.chunks_mut(r.unit).enumerate() {
        let iv = r.iv.advance(i as u128 * u128::from(r.step));
        xts_mode_unit(&r.key, iv, unit, false);
    }
    assert!(want == plain, "xts-mode does not decrypt our ciphertext");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(sample::proptest_cases("every_backend_equals_generic", 1000)))]

    #[test]
    fn every_backend_equals_generic(r in request()) {
        backends_agree("every_backend_equals_generic", &r);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(sample::proptest_cases("xts_mode_crate_agrees_per_unit", 300)))]

    #[test]
    fn xts_mode_crate_agrees_per_unit(r in request()) {
        xts_mode_agrees("xts_mode_crate_agrees_per_unit", &r);
    }
}

/// Every unit length 16..=300 and a few units each, deterministic, so the
/// tail paths of every backend (masked vectors, single blocks, stealing)
/// are all covered whatever proptest draws.
#[test]
fn every_short_length_on_every_backend() {
    for unit in 16..=300 {
        for key_len in [32, 64] {
            let r = Request {
                key: (0..key_len).map(|i| (i * 7 + unit) as u8).collect(),
                unit,
                count: 1 + unit % 5,
                iv: Iv::from_u128((1u128 << 64) - 2),
                step: 1 + (unit as u64 % 3) * 7,
                seed: unit as u64,
                src_off: unit % 17,
                dst_off: unit % 13,
                cuts: vec![unit * 3 / 2, 7],
            };
            backends_agree("every_short_length_on_every_backend", &r);
            if unit % 7 == 0 {
                xts_mode_agrees("every_short_length_on_every_backend", &r);
            }
        }
    }
}
