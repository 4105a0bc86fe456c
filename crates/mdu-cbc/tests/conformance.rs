//! The mdu-core conformance harness on every backend and both key sizes,
//! the unit lengths CBC refuses, and keys and backends that are refused.

mod common;

use common::{Cbc, note_backend};
use mdu_cbc::{AesCbc128, AesCbc256, Backend, DataUnitCipher, DataUnits, Error, Iv, SetupError};
use mdu_core::testing;

fn key(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed))
        .collect()
}

/// Under qemu (`.ci/qemu-aarch64.toml` sets `MDU_REQUIRE_ARM64_BACKENDS`),
/// the suite must run the arm64 backend, never silently the portable one.
#[test]
fn arm64_runs_the_crypto_extensions_backend_when_required() {
    let detected = Backend::detect();
    println!("detected backend: {detected}");
    if std::env::var_os("MDU_REQUIRE_ARM64_BACKENDS").is_some() {
        assert_eq!(detected, Backend::ArmCe);
        assert_eq!(Backend::available(), [Backend::ArmCe, Backend::Generic]);
    }
}

#[test]
fn harness_on_every_backend_and_both_key_sizes() {
    for &backend in Backend::available() {
        for (len, seed) in [(16usize, 1u64), (32, 2)] {
            note_backend("harness_on_every_backend_and_both_key_sizes", backend);
            let cbc = Cbc::new(&key(len, seed as u8), backend);
            let report = testing::check_cipher_seeded(&cbc, seed << 8 | backend.rank() as u64);
            // 17 and 31 bytes are not whole blocks.
            assert_eq!(report.skipped_sizes, 2, "{backend:?}: {report:?}");
            assert!(report.requests > 1000, "{backend:?}: {report:?}");
        }
    }
}

/// CBC-CS3 takes every length from 16 bytes: the harness runs all its
/// sizes (none skipped), batched requests splitting into one call per
/// unit.
#[test]
fn harness_on_cts_on_every_backend_and_both_key_sizes() {
    for &backend in Backend::available() {
        note_backend(
            "harness_on_cts_on_every_backend_and_both_key_sizes",
            backend,
        );
        let narrow = mdu_cbc::AesCtsCbc128::with_backend(&key(16, 3), backend).unwrap();
        let report = testing::check_cipher_seeded(&narrow, 3 << 8 | backend.rank() as u64);
        assert_eq!(report.skipped_sizes, 0, "{backend:?}: {report:?}");
        assert!(report.requests > 1000, "{backend:?}: {report:?}");
        let wide = mdu_cbc::AesCtsCbc256::with_backend(&key(32, 4), backend).unwrap();
        let report = testing::check_cipher_seeded(&wide, 4 << 8 | backend.rank() as u64);
        assert_eq!(report.skipped_sizes, 0, "{backend:?}: {report:?}");
    }
}

/// Every count of units from 1 to 70 (so every tail of 16-, 8-, 4-, 2- and
/// 1-vector groups and single chains runs) and unit sizes of 1 to 9 blocks,
/// then 1, 2 and 4 KiB and 64 KiB units (whose groups run in phases, see
/// `backend::driver::phases`) with counts around one to four group sizes,
/// batched on each backend, in place and out of place, against one unit at
/// a time on the generic one.
#[test]
fn every_count_and_short_unit_matches_the_generic_backend() {
    for len in [16usize, 32] {
        let k = key(len, 9);
        let generic = Cbc::new(&k, Backend::Generic);
        for &backend in Backend::available() {
            note_backend(
                "every_count_and_short_unit_matches_the_generic_backend",
                backend,
            );
            let fast = Cbc::new(&k, backend);
            let shapes = (1..=9usize)
                .map(|b| (16 * b, (1..=70usize).collect::<Vec<_>>()))
                .chain([1024usize, 2048, 4096, 65536].map(|u| {
                    let mut counts = vec![1, 2, 3, 4, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 35];
                    if u < 65536 {
                        // Three and four whole groups, and a tail after them.
                        counts.extend([47, 48, 50, 64, 67]);
                    }
                    (u, counts)
                }));
            for (unit, counts) in shapes {
                let units = DataUnits::new(&fast, unit).unwrap().with_iv_step(3);
                for count in counts {
                    let plain = common::bytes(unit * count, count as u8);
                    let iv = Iv::from_u128((u128::MAX - 40).wrapping_add(count as u128));
                    let mut want = plain.clone();
                    for (i, u) in want.chunks_mut(unit).enumerate() {
                        generic.encrypt_unit(iv.advance(3 * i as u128), u).unwrap();
                    }
                    let mut got = plain.clone();
                    units.encrypt(iv, &mut got).unwrap();
                    assert!(got == want, "{backend:?} encrypt {count} x {unit}");
                    units.decrypt(iv, &mut got).unwrap();
                    assert!(got == plain, "{backend:?} decrypt {count} x {unit}");
                    let mut out = vec![0u8; plain.len()];
                    units.encrypt_to(iv, &plain, &mut out).unwrap();
                    assert!(out == want, "{backend:?} encrypt_to {count} x {unit}");
                }
            }
        }
    }
}

#[test]
fn units_that_are_not_whole_blocks_are_refused_and_left_alone() {
    let c = AesCbc256::new(&key(32, 3)).unwrap();
    for len in [0usize, 1, 15, 17, 31, 33, 520, 4095] {
        let mut buf = vec![5u8; len];
        let r = c.encrypt(Iv::ZERO, &mut buf);
        let want = if len < 16 {
            Error::UnitSizeOutOfRange {
                size: len,
                min: 16,
                max: 16 << 20,
            }
        } else {
            Error::UnitSizeMisaligned {
                size: len,
                align: 16,
            }
        };
        assert_eq!(r, Err(want), "{len}");
        assert_eq!(c.decrypt(Iv::ZERO, &mut buf), Err(want), "{len}");
        assert!(buf.iter().all(|&b| b == 5));
        if len >= 16 {
            assert_eq!(DataUnits::new(&c, len).unwrap_err(), want);
        }
    }
    assert!(DataUnits::new(&c, 528).is_ok());
}

#[test]
fn key_length_errors() {
    for len in [0, 1, 15, 17, 24, 31, 33, 64] {
        assert_eq!(
            AesCbc128::new(&key(len, 0)).unwrap_err(),
            SetupError::InvalidKeyLength { len, expected: 16 }
        );
        assert_eq!(
            AesCbc256::new(&key(len, 0)).unwrap_err(),
            SetupError::InvalidKeyLength { len, expected: 32 }
        );
    }
}

#[test]
fn unavailable_backend_is_an_error() {
    for b in [
        Backend::Vaes512,
        Backend::Vaes256,
        Backend::AesNi,
        Backend::ArmCe,
        Backend::Generic,
    ] {
        let r = AesCbc256::with_backend(&key(32, 4), b);
        if b.is_available() {
            assert_eq!(r.unwrap().backend(), b);
        } else {
            assert_eq!(
                r.unwrap_err(),
                SetupError::BackendUnavailable {
                    cipher: "mdu-cbc",
                    backend: b.name()
                }
            );
        }
    }
}

#[test]
fn debug_prints_no_key_bytes() {
    let k = [0xabu8; 32];
    let s = format!("{:?}", AesCbc256::new(&k).unwrap());
    assert!(s.starts_with("AesCbc256"), "{s}");
    assert!(
        !s.to_lowercase().contains("ab, ab") && !s.contains("171"),
        "{s}"
    );
}

#[test]
fn a_clone_encrypts_like_the_original() {
    for &backend in Backend::available() {
        let c = AesCbc128::with_backend(&key(16, 7), backend).unwrap();
        let d = c.clone();
        let (mut a, mut b) = (common::bytes(4096, 1), common::bytes(4096, 1));
        c.encrypt(Iv::plain64(9), &mut a).unwrap();
        drop(c);
        d.encrypt(Iv::plain64(9), &mut b).unwrap();
        assert_eq!(a, b, "{backend:?}");
    }
}
