//! The conformance harness against the toy ciphers: the split path and an
//! independent "native" path must both pass it.

mod common;

use common::{NativeToy, Toy};
use mdu_core::testing;

#[test]
fn harness_passes_for_the_auto_splitter() {
    let report = testing::check_cipher(&Toy { key: 0x1234 });
    assert_eq!(report.skipped_sizes, 0);
    if !cfg!(miri) {
        assert!(report.requests > 6 * 33 * 10, "{report:?}");
    }
}

#[test]
fn harness_passes_for_a_native_multi_unit_path() {
    for seed in 0..if cfg!(miri) { 1 } else { 3 } {
        testing::check_cipher_seeded(&NativeToy(Toy { key: seed }), seed);
    }
}

/// A cipher whose multi-unit path gets the IV of every unit after the first
/// wrong must be caught: the harness is a real check, not a formality.
#[test]
fn harness_catches_a_wrong_iv_step() {
    use mdu_core::{DataUnitCipher, DataUnitSize, Direction, Error, Iv};

    struct OffByOne(Toy);
    impl DataUnitCipher for OffByOne {
        type Iv = Iv;
        const NATIVE_MULTI_UNIT: bool = true;
        fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
            self.0.encrypt_unit(iv, u)
        }
        fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
            self.0.decrypt_unit(iv, u)
        }
        fn crypt_units(
            &self,
            dir: Direction,
            iv: Iv,
            step: u64,
            unit: DataUnitSize,
            buf: &mut [u8],
        ) -> Result<(), Error> {
            // Bug: ignores the step and always advances by one.
            let _ = step;
            mdu_core::split_units(&self.0, dir, iv, 1, unit, buf)
        }
    }
    let caught = std::panic::catch_unwind(|| testing::check_cipher(&OffByOne(Toy { key: 5 })));
    let msg = caught.expect_err("a broken multi-unit path passed the harness");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("conformance failure"), "{msg}");
}

/// A cipher whose explicit-IV path uses the IVs in the wrong order is
/// caught too.
#[test]
fn harness_catches_explicit_ivs_used_out_of_order() {
    use mdu_core::{DataUnitCipher, DataUnitSize, Direction, Error, Iv};

    struct Reversed(Toy);
    impl DataUnitCipher for Reversed {
        type Iv = Iv;
        const NATIVE_MULTI_UNIT: bool = true;
        fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
            self.0.encrypt_unit(iv, u)
        }
        fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
            self.0.decrypt_unit(iv, u)
        }
        fn crypt_units_with_ivs(
            &self,
            dir: Direction,
            ivs: &[Iv],
            unit: DataUnitSize,
            buf: &mut [u8],
        ) -> Result<(), Error> {
            let mut rev = ivs.to_vec();
            rev.reverse();
            mdu_core::split_units_with_ivs(&self.0, dir, &rev, unit, buf)
        }
    }
    let caught = std::panic::catch_unwind(|| testing::check_cipher(&Reversed(Toy { key: 6 })));
    let msg = caught.expect_err("explicit IVs out of order passed the harness");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("with_ivs"), "{msg}");
}

/// A cipher that needs whole 16-byte blocks: the sizes it refuses are
/// skipped and counted, and its refusals are checked.
#[test]
fn harness_skips_and_checks_the_sizes_a_block_cipher_refuses() {
    let report = testing::check_cipher(&common::BlockToy(Toy { key: 8 }));
    // 17 and 31 are not multiples of 16.
    assert_eq!(report.skipped_sizes, 2, "{report:?}");
}

/// Likewise for a cipher whose segment-independent paths are right but
/// whose decryption does not invert its encryption.
#[test]
fn harness_catches_a_decryption_that_does_not_invert() {
    use mdu_core::{DataUnitCipher, Error, Iv};

    struct BadDecrypt(Toy);
    impl DataUnitCipher for BadDecrypt {
        type Iv = Iv;
        fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
            self.0.encrypt_unit(iv, u)
        }
        fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
            self.0.decrypt_unit(iv.advance(1), u)
        }
    }
    assert!(
        std::panic::catch_unwind(|| testing::check_cipher(&BadDecrypt(Toy { key: 9 }))).is_err()
    );
}
