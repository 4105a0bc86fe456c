//! IVs, sizes, every error variant (with unchanged buffers), and the shape
//! of the walks (how the cipher gets called).

mod common;

use common::{Counting, Toy, split, split_mut};
use mdu_core::{DataUnitCipher, DataUnitSize, DataUnits, Error, Iv};

#[test]
fn iv_is_a_little_endian_128_bit_counter() {
    let iv = Iv::from_u128(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10);
    assert_eq!(iv.0[0], 0x10);
    assert_eq!(iv.0[15], 0x01);
    assert_eq!(Iv::from(iv.to_bytes()), iv);

    // A carry out of byte 7 goes into byte 8 (plain64 would wrap to 0 here).
    let before = Iv::plain64(u64::MAX);
    let after = before.advance(1);
    assert_eq!(after.0, [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
    assert_ne!(after, Iv::plain64(u64::MAX.wrapping_add(1)));

    // The whole 128 bits wrap.
    assert_eq!(Iv::from_u128(u128::MAX).advance(1), Iv::ZERO);
    assert_eq!(Iv::from_u128(5).advance(u128::MAX), Iv::from_u128(4));

    // plain keeps only 32 bits, plain64 all 64.
    assert_eq!(Iv::plain(0x1_0000_0007), Iv::from_u128(7));
    assert_eq!(Iv::plain64(0x1_0000_0007), Iv::from_u128(0x1_0000_0007));
    assert_eq!(
        format!("{:?}", Iv::from_u128(0xab)),
        format!("Iv(ab{})", "00".repeat(15))
    );
}

#[test]
fn data_unit_size_bounds() {
    assert!(DataUnitSize::new(16).is_ok());
    assert!(DataUnitSize::new(17).is_ok());
    assert!(DataUnitSize::new(16 << 20).is_ok());
    for bad in [0, 1, 15, (16 << 20) + 1, usize::MAX] {
        assert_eq!(
            DataUnitSize::new(bad),
            Err(Error::UnitSizeOutOfRange {
                size: bad,
                min: 16,
                max: 16 << 20
            })
        );
    }
    let u = DataUnitSize::new(48).unwrap();
    assert_eq!(u.units_in(96), Ok(2));
    assert_eq!(u.units_in(0), Err(Error::EmptyRequest));
    assert_eq!(
        u.units_in(100),
        Err(Error::LengthNotMultiple { len: 100, unit: 48 })
    );
}

fn units() -> DataUnits<Toy> {
    DataUnits::new(Toy { key: 3 }, 32).unwrap()
}

#[test]
fn every_error_leaves_the_buffers_unchanged() {
    let u = units();
    let orig: Vec<u8> = (0..100u8).collect();

    // Unit size out of range, at construction and for one unit.
    assert_eq!(
        DataUnits::new(Toy { key: 3 }, 15).err(),
        Some(Error::UnitSizeOutOfRange {
            size: 15,
            min: 16,
            max: 16 << 20
        })
    );
    let mut buf = orig.clone();
    assert!(matches!(
        Toy { key: 3 }.encrypt_unit(Iv::ZERO, &mut buf[..15]),
        Err(Error::UnitSizeOutOfRange { size: 15, .. })
    ));
    assert_eq!(buf, orig);

    // Empty request.
    assert_eq!(u.encrypt(Iv::ZERO, &mut []), Err(Error::EmptyRequest));
    assert_eq!(
        u.decrypt_to(Iv::ZERO, &[], &mut []),
        Err(Error::EmptyRequest)
    );
    assert_eq!(
        u.encrypt_segments(Iv::ZERO, &mut []),
        Err(Error::EmptyRequest)
    );

    // Not a multiple of the unit size: in place, out of place, segments.
    let mut buf = orig.clone();
    let ragged = Error::LengthNotMultiple { len: 100, unit: 32 };
    assert_eq!(u.encrypt(Iv::ZERO, &mut buf), Err(ragged));
    assert_eq!(u.decrypt(Iv::ZERO, &mut buf), Err(ragged));
    assert_eq!(
        u.encrypt_segments(Iv::ZERO, &mut split_mut(&mut buf, &[10, 64])),
        Err(ragged)
    );
    assert_eq!(buf, orig);
    let mut dst = vec![0xee; 100];
    assert_eq!(u.encrypt_to(Iv::ZERO, &orig, &mut dst), Err(ragged));
    assert_eq!(dst, vec![0xee; 100]);

    // Source and destination of different lengths.
    let mut dst = vec![0xee; 96];
    assert_eq!(
        u.encrypt_to(Iv::ZERO, &orig[..64], &mut dst),
        Err(Error::LengthMismatch { src: 64, dst: 96 })
    );
    assert_eq!(dst, vec![0xee; 96]);

    // Segments whose totals differ.
    assert_eq!(
        u.encrypt_segments_to(
            Iv::ZERO,
            &split(&orig[..64], &[7]),
            &mut split_mut(&mut dst, &[50])
        ),
        Err(Error::SegmentTotalMismatch { src: 64, dst: 96 })
    );
    assert_eq!(dst, vec![0xee; 96]);

    // The trait's own multi-unit entry points validate too.
    let size = DataUnitSize::new(32).unwrap();
    let mut buf = orig.clone();
    assert_eq!(
        Toy { key: 3 }.encrypt_units(Iv::ZERO, 1, size, &mut buf),
        Err(ragged)
    );
    assert_eq!(buf, orig);
}

#[test]
fn errors_explain_themselves() {
    let cases = [
        (Error::EmptyRequest, "at least one data unit"),
        (
            Error::LengthNotMultiple { len: 100, unit: 32 },
            "100 is not a multiple of the data-unit size 32",
        ),
        (
            Error::UnitSizeOutOfRange {
                size: 8,
                min: 16,
                max: 99,
            },
            "at least 16",
        ),
        (Error::LengthMismatch { src: 1, dst: 2 }, "must be equal"),
        (
            Error::SegmentTotalMismatch { src: 1, dst: 2 },
            "totals must be equal",
        ),
        (
            Error::UnitSizeMisaligned {
                size: 40,
                align: 16,
            },
            "40 is not a multiple of 16",
        ),
        (
            Error::IvCountMismatch { ivs: 3, units: 4 },
            "3 IVs for 4 data units",
        ),
    ];
    for (err, needle) in cases {
        let text = err.to_string();
        assert!(text.contains(needle), "{text:?} lacks {needle:?}");
    }
}

#[test]
fn a_single_unit_request_goes_straight_to_encrypt_unit() {
    let u = DataUnits::new(Counting::default(), 64).unwrap();
    let mut buf = [1u8; 64];
    u.encrypt(Iv::ZERO, &mut buf).unwrap();
    u.decrypt(Iv::ZERO, &mut buf).unwrap();
    assert_eq!(u.cipher().unit_calls.get(), 2);
    assert_eq!(u.cipher().multi_calls.get(), 0);
    assert_eq!(buf, [1u8; 64]);
}

#[test]
fn a_batch_is_one_call_to_the_multi_unit_path() {
    let u = DataUnits::new(Counting::default(), 64).unwrap();
    let mut buf = vec![1u8; 64 * 100];
    u.encrypt(Iv::ZERO, &mut buf).unwrap();
    assert_eq!(u.cipher().multi_calls.get(), 1);
    assert_eq!(u.cipher().unit_calls.get(), 0);
}

#[test]
fn segments_bounce_only_the_straddling_units() {
    let u = DataUnits::new(Counting::default(), 64).unwrap();
    let mut buf = vec![7u8; 64 * 10];
    // Segment lengths 100, 300, 240: units 1 (64..128) and 6 (384..448)
    // straddle a boundary; the rest lie inside segments.
    let mut segs = split_mut(&mut buf, &[100, 400]);
    u.encrypt_segments(Iv::ZERO, &mut segs).unwrap();
    let c = u.cipher();
    // One-unit calls: unit 0 (a run of one, inside segment 0) and the two
    // straddling units; units 2..6 and 7..10 go through the multi-unit path.
    assert_eq!(c.unit_calls.get(), 3);
    assert_eq!(c.multi_calls.get(), 2);
    assert_eq!(c.multi_units.get(), 7);

    // Whole-unit segments (one of them empty): one multi-unit call per
    // non-empty segment, no bouncing.
    let u = DataUnits::new(Counting::default(), 64).unwrap();
    let mut segs = split_mut(&mut buf, &[128, 128, 384]);
    u.encrypt_segments(Iv::ZERO, &mut segs).unwrap();
    assert_eq!(u.cipher().unit_calls.get(), 0);
    assert_eq!(u.cipher().multi_calls.get(), 3);
}

#[test]
fn many_tiny_segments_are_walked_once() {
    // 4096 one-byte segments holding 64 units of 64 bytes: every unit
    // straddles, and the walk still visits each segment once.
    let mut plain = vec![0u8; 4096];
    plain.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
    let u = DataUnits::new(Toy { key: 11 }, 64).unwrap();
    let mut want = plain.clone();
    u.encrypt(Iv::plain64(9), &mut want).unwrap();

    let mut got = plain.clone();
    let mut segs: Vec<&mut [u8]> = got.chunks_mut(1).collect();
    u.encrypt_segments(Iv::plain64(9), &mut segs).unwrap();
    assert_eq!(got, want);

    let srcs: Vec<&[u8]> = plain.chunks(3).collect();
    let mut out = vec![0u8; 4096];
    let mut dsts: Vec<&mut [u8]> = out.chunks_mut(5).collect();
    u.encrypt_segments_to(Iv::plain64(9), &srcs, &mut dsts)
        .unwrap();
    assert_eq!(out, want);
}

#[test]
fn iv_step_follows_dm_crypt_sectors() {
    // 4 KiB sectors without iv_large_sectors: plain64 IVs 0, 8, 16, ...
    let toy = Toy { key: 1 };
    let u = DataUnits::new(toy, 4096).unwrap().with_iv_step(8);
    let mut batched = vec![5u8; 4 * 4096];
    u.encrypt(Iv::plain64(800), &mut batched).unwrap();
    let mut manual = vec![5u8; 4 * 4096];
    for (i, s) in manual.chunks_mut(4096).enumerate() {
        toy.encrypt_unit(Iv::plain64(800 + 8 * i as u64), s)
            .unwrap();
    }
    assert_eq!(batched, manual);
    assert_eq!(u.iv_of(Iv::plain64(800), 3), Iv::plain64(824));
}

#[test]
#[cfg(feature = "rayon")]
#[cfg_attr(miri, ignore = "megabytes through a thread pool: too slow under Miri")]
fn par_encrypt_matches_the_serial_path() {
    let toy = Toy { key: 77 };
    for (unit, count) in [(512usize, 3000usize), (4096, 257), (17, 40_000), (65536, 3)] {
        let u = DataUnits::new(toy, unit).unwrap().with_iv_step(3);
        let plain: Vec<u8> = (0..unit * count).map(|i| (i * 31 % 251) as u8).collect();
        let mut serial = plain.clone();
        u.encrypt(Iv::from_u128(u64::MAX as u128 - 5), &mut serial)
            .unwrap();
        let mut par = plain.clone();
        u.par_encrypt(Iv::from_u128(u64::MAX as u128 - 5), &mut par)
            .unwrap();
        assert_eq!(par, serial, "unit {unit}");
        u.par_decrypt(Iv::from_u128(u64::MAX as u128 - 5), &mut par)
            .unwrap();
        assert_eq!(par, plain);
    }
    let u = DataUnits::new(toy, 512).unwrap();
    let mut buf = vec![1u8; 1000];
    assert_eq!(
        u.par_encrypt(Iv::ZERO, &mut buf),
        Err(Error::LengthNotMultiple {
            len: 1000,
            unit: 512
        })
    );
    assert_eq!(buf, vec![1u8; 1000]);
}

#[test]
fn an_explicit_iv_batch_is_one_call_and_equals_one_unit_at_a_time() {
    use mdu_core::Direction;

    let u = DataUnits::new(Counting::default(), 64).unwrap();
    let ivs: Vec<Iv> = (0..9u128)
        .map(|i| Iv::from_u128(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)))
        .collect();
    let plain: Vec<u8> = (0..64 * 9).map(|i| (i % 251) as u8).collect();
    let mut buf = plain.clone();
    u.encrypt_with_ivs(&ivs, &mut buf).unwrap();
    assert_eq!(u.cipher().multi_calls.get(), 1);
    assert_eq!(u.cipher().unit_calls.get(), 0);
    let toy = Toy { key: 1 };
    let mut want = plain.clone();
    for (chunk, iv) in want.chunks_mut(64).zip(&ivs) {
        toy.encrypt_unit(*iv, chunk).unwrap();
    }
    assert_eq!(buf, want);
    // A one-unit batch goes straight to the one-unit method.
    u.crypt_with_ivs(Direction::Decrypt, &ivs[..1], &mut buf[..64])
        .unwrap();
    assert_eq!(u.cipher().unit_calls.get(), 1);
    assert_eq!(buf[..64], plain[..64]);
    // The IV list must match the units, and a mismatch changes nothing.
    let before = buf.clone();
    assert_eq!(
        u.encrypt_with_ivs(&ivs[..8], &mut buf),
        Err(Error::IvCountMismatch { ivs: 8, units: 9 })
    );
    assert_eq!(buf, before);
}

#[test]
fn a_block_cipher_refuses_units_that_are_not_whole_blocks() {
    let c = common::BlockToy(Toy { key: 2 });
    assert_eq!(
        DataUnits::new(c, 520).unwrap_err(),
        Error::UnitSizeMisaligned {
            size: 520,
            align: 16
        }
    );
    let mut buf = [3u8; 24];
    assert_eq!(
        c.encrypt_unit(Iv::ZERO, &mut buf),
        Err(Error::UnitSizeMisaligned {
            size: 24,
            align: 16
        })
    );
    assert_eq!(buf, [3u8; 24]);
    let unit = DataUnitSize::new(24).unwrap();
    let mut two = [3u8; 48];
    assert_eq!(
        c.encrypt_units(Iv::ZERO, 1, unit, &mut two),
        Err(Error::UnitSizeMisaligned {
            size: 24,
            align: 16
        })
    );
    assert!(DataUnits::new(c, 512).is_ok());
}
