//! The contract is open to tweaks wider than 16 bytes: a cipher with a
//! 32-byte tweak (the width of HCTR2 and Adiantum), written here as any
//! outside crate would write one, with mdu-core's public API only, passes
//! the conformance harness and the batched-vs-split property test, and the
//! harness catches a native path that drops the carry out of byte 15.
//!
//! The cipher is a toy and NOT secure: it only makes every tweak byte, byte
//! position and direction visible in the output.

use mdu_core::testing::sample;
use mdu_core::{
    DataUnitCipher, DataUnitSize, DataUnits, Direction, Error, Iv, check_request,
    check_request_with_ivs, testing,
};
use proptest::prelude::*;

/// A 32-byte tweak.
type Tweak32 = Iv<32>;

/// The keystream byte at `pos` under `tweak`: depends on all 32 tweak bytes.
fn pad(key: u64, tweak: &Tweak32, pos: usize) -> u8 {
    let mut x = key ^ (pos as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for word in tweak.0.chunks_exact(8) {
        x ^= u64::from_le_bytes(word.try_into().unwrap());
        x = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }
    (x ^ (x >> 32)) as u8
}

/// How the native path derives the tweak of unit `i`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Derive {
    /// `first.advance(i * step)`: the contract.
    Right,
    /// The low 16 bytes as a `u128` that wraps, the high 16 left alone: a
    /// carry out of byte 15 is lost.
    DropsHighCarry,
}

/// A length-preserving toy cipher over units of any length >= 16 with a
/// 32-byte tweak, and (when `native`) a multi-unit path of its own that
/// walks the units back to front and derives each tweak by multiplication.
#[derive(Clone, Copy, Debug)]
struct Wide {
    key: u64,
    native: Option<Derive>,
}

impl Wide {
    fn crypt(&self, dir: Direction, tweak: &Tweak32, unit: &mut [u8]) {
        let mut prev = 0u8;
        for (i, b) in unit.iter_mut().enumerate() {
            let c = *b;
            *b = match dir {
                Direction::Encrypt => c.wrapping_add(pad(self.key, tweak, i)).wrapping_add(prev),
                Direction::Decrypt => c.wrapping_sub(prev).wrapping_sub(pad(self.key, tweak, i)),
            };
            prev = if dir.is_encrypt() { *b } else { c };
        }
    }

    fn tweak_of(&self, first: Tweak32, n: u128) -> Tweak32 {
        match self.native {
            Some(Derive::DropsHighCarry) => {
                let mut t = first;
                let low = u128::from_le_bytes(t.0[..16].try_into().unwrap()).wrapping_add(n);
                t.0[..16].copy_from_slice(&low.to_le_bytes());
                t
            }
            _ => first.advance(n),
        }
    }
}

impl DataUnitCipher for Wide {
    type Iv = Tweak32;
    const NATIVE_MULTI_UNIT: bool = true;

    fn encrypt_unit(&self, tweak: Tweak32, unit: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(unit.len())?;
        self.crypt(Direction::Encrypt, &tweak, unit);
        Ok(())
    }

    fn decrypt_unit(&self, tweak: Tweak32, unit: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(unit.len())?;
        self.crypt(Direction::Decrypt, &tweak, unit);
        Ok(())
    }

    fn crypt_units(
        &self,
        dir: Direction,
        first: Tweak32,
        step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        if self.native.is_none() {
            return mdu_core::split_units(self, dir, first, step, unit, buf);
        }
        let n = check_request::<Self>(unit, buf.len())?;
        for i in (0..n).rev() {
            let tweak = self.tweak_of(first, i as u128 * u128::from(step));
            self.crypt(dir, &tweak, &mut buf[i * unit.get()..][..unit.get()]);
        }
        Ok(())
    }

    fn crypt_units_with_ivs(
        &self,
        dir: Direction,
        tweaks: &[Tweak32],
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        let n = check_request_with_ivs::<Self>(unit, tweaks.len(), buf.len())?;
        for i in (0..n).rev() {
            self.crypt(dir, &tweaks[i], &mut buf[i * unit.get()..][..unit.get()]);
        }
        Ok(())
    }
}

#[test]
fn a_32_byte_tweak_passes_the_harness() {
    assert_eq!(<Wide as DataUnitCipher>::Iv::LEN, 32);
    let split = Wide {
        key: 7,
        native: None,
    };
    let report = testing::check_cipher(&split);
    assert_eq!(report.skipped_sizes, 0);
    for seed in 0..if cfg!(miri) { 1 } else { 2 } {
        let native = Wide {
            key: seed,
            native: Some(Derive::Right),
        };
        testing::check_cipher_seeded(&native, seed);
    }
}

/// The harness puts carries across byte 15 into its requests, so a native
/// path that counts in 128 bits only is caught.
#[test]
fn the_harness_catches_a_carry_lost_at_byte_16() {
    let bad = Wide {
        key: 3,
        native: Some(Derive::DropsHighCarry),
    };
    let caught = std::panic::catch_unwind(|| testing::check_cipher(&bad));
    let msg = caught.expect_err("a lost carry must fail the harness");
    let msg = msg
        .downcast_ref::<String>()
        .map(String::as_str)
        .unwrap_or_default();
    assert!(msg.contains("vs per-unit"), "{msg}");
}

#[test]
fn batches_of_wide_tweaks_are_validated_before_any_byte_changes() {
    let units = DataUnits::new(
        Wide {
            key: 1,
            native: Some(Derive::Right),
        },
        32,
    )
    .unwrap();
    let mut buf = [5u8; 64];
    assert_eq!(
        units.encrypt_with_ivs(&[Tweak32::ZERO], &mut buf),
        Err(Error::IvCountMismatch { ivs: 1, units: 2 })
    );
    assert_eq!(
        units.encrypt(Tweak32::ZERO, &mut buf[..40]),
        Err(Error::LengthNotMultiple { len: 40, unit: 32 })
    );
    assert_eq!(buf, [5u8; 64]);
}

/// A tweak whose low 16 bytes sit `d` below 2^128 (or 2^64), so that a
/// request of a few units carries into byte 16 (or byte 8).
fn tweak_strategy() -> impl Strategy<Value = Tweak32> {
    let with_low = |low: u128, high: [u8; 16]| {
        let mut t = [0u8; 32];
        t[..16].copy_from_slice(&low.to_le_bytes());
        t[16..].copy_from_slice(&high);
        Iv(t)
    };
    prop_oneof![
        any::<[u8; 32]>().prop_map(Iv),
        ((0u128..64), any::<[u8; 16]>()).prop_map(move |(d, h)| with_low(0u128.wrapping_sub(d), h)),
        ((0u128..64), any::<[u8; 16]>()).prop_map(move |(d, h)| with_low((1u128 << 64) - d, h)),
        (0u128..64).prop_map(move |d| with_low(0u128.wrapping_sub(d), [0xff; 16])),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { sample::proptest_cases("wide_batched_equals_per_unit", 300) }))]

    #[test]
    fn wide_batched_equals_per_unit(
        unit in 16usize..300,
        count in 1usize..20,
        first in tweak_strategy(),
        step in prop_oneof![Just(1u64), Just(8u64), any::<u64>()],
        key in any::<u64>(),
        cut in any::<u16>(),
    ) {
        let len = unit * count;
        let plain: Vec<u8> = (0..len).map(|i| (i as u64 ^ key).wrapping_mul(0x2545_f491_4f6c_dd1d) as u8).collect();
        let split = Wide { key, native: None };
        let mut want = plain.clone();
        for (i, chunk) in want.chunks_mut(unit).enumerate() {
            split.encrypt_unit(first.advance(i as u128 * u128::from(step)), chunk).unwrap();
        }

        let native = DataUnits::new(Wide { key, native: Some(Derive::Right) }, unit)
            .unwrap()
            .with_iv_step(step);
        let mut buf = plain.clone();
        native.encrypt(first, &mut buf).unwrap();
        prop_assert_eq!(&buf, &want);

        let at = cut as usize * len / usize::from(u16::MAX);
        let (a, b) = buf.split_at_mut(at);
        native.decrypt_segments(first, &mut [a, b]).unwrap();
        prop_assert_eq!(&buf, &plain);
    }
}
