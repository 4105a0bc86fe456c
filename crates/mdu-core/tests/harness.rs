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
    use mdu_core::{DataUnitCipher, DataUnitSize, Error, Iv};

    struct OffByOne(Toy);
    impl DataUnitCipher for OffByOne {
        const NATIVE_MULTI_UNIT: bool = true;
        fn encrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
            self.0.encrypt_unit(iv, u)
        }
        fn decrypt_unit(&self, iv: Iv, u: &mut [u8]) -> Result<(), Error> {
            self.0.decrypt_unit(iv, u)
        }
        fn encrypt_units(
            &self,
            iv: Iv,
            step: u64,
            unit: DataUnitSize,
            buf: &mut [u8],
        ) -> Result<(), Error> {
            // Bug: ignores the step and always advances by one.
            let _ = step;
            mdu_core::split_encrypt_units(&self.0, iv, 1, unit, buf)
        }
    }
    let caught = std::panic::catch_unwind(|| testing::check_cipher(&OffByOne(Toy { key: 5 })));
    let msg = caught.expect_err("a broken multi-unit path passed the harness");
    let msg = msg.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("conformance failure"), "{msg}");
}

/// Likewise for a cipher whose segment-independent paths are right but
/// whose decryption does not invert its encryption.
#[test]
fn harness_catches_a_decryption_that_does_not_invert() {
    use mdu_core::{DataUnitCipher, Error, Iv};

    struct BadDecrypt(Toy);
    impl DataUnitCipher for BadDecrypt {
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
