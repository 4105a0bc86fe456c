//! The conformance checks of every cipher keyed for an AES backend
//! ([`WithBackend`]), written once for the cipher crates' tests
//! (`mdu-xts`, `mdu-cbc`, `mdu-hctr2`): the mdu-core harness
//! ([`mdu_core::testing::check_cipher`]) on every backend this CPU runs,
//! key lengths and backends that are refused with the right error,
//! `Debug` without key bytes, clones that encrypt like their original,
//! and, under `MDU_REQUIRE_ARM64_BACKENDS`, the rule that the arm64
//! backend is the one detected.
//!
//! A backend this CPU lacks is not run, so every check prints the backends
//! it ran ([`note_backend`]; `-- --show-output` shows them): a green run
//! says what it covered. Each check panics on the first failure, naming
//! the cipher type and the backend: call it from a `#[test]`.
//!
//! ```
//! use mdu_aes::testing;
//! use mdu_aes::{Aes128, Ecb};
//!
//! testing::key_lengths_are_refused::<Ecb<Aes128>>();
//! testing::unavailable_backends_are_refused::<Ecb<Aes128>>("mdu-aes");
//! ```

use core::any::type_name;
use core::fmt::Debug;
use std::collections::BTreeSet;
use std::string::{String, ToString};
use std::sync::Mutex;
use std::vec::Vec;
use std::{env, format, println};

use mdu_core::testing::check_cipher_seeded;
use mdu_core::{DataUnitCipher, Tweak};

use crate::__private::Mode;
use crate::{Backend, SetupError, WithBackend};

/// Every backend of mode `M`, whether this CPU (or this target) runs it or
/// not, best first.
fn every_backend<M: Mode>() -> [Backend<M>; 5] {
    [
        Backend::Vaes512,
        Backend::Vaes256,
        Backend::AesNi,
        Backend::ArmCe,
        Backend::Generic,
    ]
}

/// The key lengths the checks offer a cipher: every length an mdu cipher
/// takes (16, 32, 64) and their neighbours.
const KEY_LENGTHS: [usize; 14] = [0, 1, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 128];

/// `C`'s name without its module paths (`Cipher<XtsMode, Aes128>`).
fn name<C>() -> String {
    let last = |path: &str| path.rsplit("::").next().unwrap_or_default().to_string();
    let (mut out, mut path) = (String::new(), String::new());
    for ch in type_name::<C>().chars() {
        if ch.is_alphanumeric() || ch == '_' || ch == ':' {
            path.push(ch);
        } else {
            out += &last(&path);
            path.clear();
            out.push(ch);
        }
    }
    out + &last(&path)
}

/// A key of `len` bytes from `seed` whose halves differ (XTS refuses equal
/// halves).
fn key(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Prints which backend a test exercised, once per (test, backend) however
/// many cases run it, so that a `--show-output` log shows the backends each
/// test covered (under qemu: that the arm64 one was among them). The
/// backends this CPU does not run, and why, are each crate's
/// `tests/backends.rs`'s.
///
/// ```
/// mdu_aes::testing::note_backend("my_test", mdu_xts::Backend::Generic);
/// ```
pub fn note_backend<M: Mode>(test: &str, backend: Backend<M>) {
    static SEEN: Mutex<BTreeSet<(String, &'static str)>> = Mutex::new(BTreeSet::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if seen.insert((format!("{test}\0{}", M::CRATE), backend.name())) {
        println!("{test}: backend {backend}");
    }
}

/// Under qemu (`.ci/qemu-aarch64.toml` sets `MDU_REQUIRE_ARM64_BACKENDS`)
/// the suite must run `C`'s arm64 backend, never silently the portable
/// one: the detected backend is `ArmCe` and the available ones are `ArmCe`
/// and `Generic`. Elsewhere it prints the detected backend.
///
/// # Panics
///
/// When `MDU_REQUIRE_ARM64_BACKENDS` is set and another backend is
/// detected.
///
/// ```
/// mdu_aes::testing::arm64_backend_runs_when_required::<mdu_xts::XtsAes256>();
/// ```
pub fn arm64_backend_runs_when_required<C: WithBackend>() {
    let detected = Backend::<C::Mode>::detect();
    println!("{}: detected backend: {detected}", name::<C>());
    if env::var_os("MDU_REQUIRE_ARM64_BACKENDS").is_some() {
        assert_eq!(
            detected,
            Backend::ArmCe,
            "MDU_REQUIRE_ARM64_BACKENDS is set but the detected backend is {detected}"
        );
        assert_eq!(
            Backend::<C::Mode>::available(),
            [Backend::ArmCe, Backend::Generic]
        );
    }
}

/// The mdu-core harness on every backend this CPU runs, each with its own
/// seed (`seed << 8 | rank`): more than 1000 requests a backend, and
/// exactly `skipped_sizes` of the harness's unit sizes refused by the
/// cipher (CBC: the two that are not whole blocks).
///
/// # Panics
///
/// On the first mismatch of the harness, or another count of skipped
/// sizes.
///
/// ```
/// # if cfg!(miri) { return; }
/// mdu_aes::testing::harness_on_every_backend::<mdu_cbc::AesCbc128>(1, 2);
/// ```
pub fn harness_on_every_backend<C: WithBackend + DataUnitCipher>(seed: u8, skipped_sizes: usize) {
    for &backend in Backend::<C::Mode>::available() {
        let what = format!("harness_on_every_backend {}", name::<C>());
        note_backend(&what, backend);
        let cipher = C::with_backend(&key(C::KEY_LEN, seed), backend)
            .unwrap_or_else(|e| panic!("{what} on {backend}: {e}"));
        let report = check_cipher_seeded(&cipher, u64::from(seed) << 8 | backend.rank() as u64);
        assert_eq!(
            report.skipped_sizes, skipped_sizes,
            "{what} on {backend}: {report:?}"
        );
        assert!(report.requests > 1000, "{what} on {backend}: {report:?}");
    }
}

/// Every key length but `C::KEY_LEN` is refused by `new` and by
/// `with_backend` on every backend this CPU runs, with
/// [`SetupError::InvalidKeyLength`] naming both lengths; a key of the
/// right length is taken.
///
/// # Panics
///
/// On a key length taken, or another error.
///
/// ```
/// mdu_aes::testing::key_lengths_are_refused::<mdu_xts::XtsAes128>();
/// ```
pub fn key_lengths_are_refused<C: WithBackend>() {
    let what = format!("key_lengths_are_refused {}", name::<C>());
    key_lengths_are_refused_by(&what, C::KEY_LEN, C::new);
    for &backend in Backend::<C::Mode>::available() {
        note_backend(&what, backend);
        key_lengths_are_refused_by(&format!("{what} on {backend}"), C::KEY_LEN, |k| {
            C::with_backend(k, backend)
        });
    }
}

/// Every key length but `key_len` is refused by `new`, with
/// [`SetupError::InvalidKeyLength`] naming both lengths, and a key of
/// `key_len` bytes is taken: the check of [`key_lengths_are_refused`], for
/// a cipher without a choice of backend (Adiantum).
///
/// # Panics
///
/// On a key length taken, or another error; `what` names the cipher.
///
/// ```
/// use mdu_aes::{Aes256, Ecb};
///
/// mdu_aes::testing::key_lengths_are_refused_by("Ecb<Aes256>", 32, Ecb::<Aes256>::new);
/// ```
pub fn key_lengths_are_refused_by<C>(
    what: &str,
    key_len: usize,
    new: impl Fn(&[u8]) -> Result<C, SetupError>,
) {
    for len in KEY_LENGTHS.into_iter().chain([key_len]) {
        let got = new(&key(len, 3));
        if len == key_len {
            assert!(got.is_ok(), "{what}: a key of {len} bytes is refused");
            continue;
        }
        let want = SetupError::InvalidKeyLength {
            len,
            expected: key_len,
        };
        match got {
            Err(e) => {
                assert_eq!(e, want, "{what}");
                let msg = e.to_string();
                assert!(
                    msg.contains(&len.to_string()) && msg.contains(&key_len.to_string()),
                    "{what}: {msg}"
                );
            }
            Ok(_) => panic!("{what}: a key of {len} bytes is taken"),
        }
    }
}

/// `with_backend` gives a key for every backend this CPU runs and refuses
/// every other one with [`SetupError::BackendUnavailable`] naming
/// `crate_name` and the backend: never a fallback to another.
///
/// # Panics
///
/// On a backend refused that runs here, taken that does not, or another
/// error.
///
/// ```
/// mdu_aes::testing::unavailable_backends_are_refused::<mdu_cbc::AesCbc256>("mdu-cbc");
/// ```
pub fn unavailable_backends_are_refused<C: WithBackend>(crate_name: &str) {
    for backend in every_backend::<C::Mode>() {
        let got = C::with_backend(&key(C::KEY_LEN, 4), backend);
        if backend.is_available() {
            let c = got.unwrap_or_else(|e| panic!("{}: {backend}: {e}", name::<C>()));
            assert_eq!(c.backend(), backend, "{}", name::<C>());
        } else {
            match got {
                Err(SetupError::BackendUnavailable { cipher, backend: b }) => {
                    assert_eq!((cipher, b), (crate_name, backend.name()), "{}", name::<C>());
                }
                Err(e) => panic!("{}: {backend}: {e}", name::<C>()),
                Ok(_) => panic!("{}: {backend} is taken but does not run here", name::<C>()),
            }
        }
    }
}

/// `Debug` (`{:?}` and `{:#?}`), on every backend this CPU runs, starts
/// with `type_name`, names the backend and prints no byte of the key (in
/// hex or decimal), in under 60 characters.
///
/// # Panics
///
/// On a `Debug` output that does not.
///
/// ```
/// mdu_aes::testing::debug_prints_no_key_bytes::<mdu_xts::XtsAes256>("XtsAes256");
/// ```
pub fn debug_prints_no_key_bytes<C: WithBackend + Debug>(type_name: &str) {
    // 0xa0, 0xa1, ...: two key bytes whose hex and decimal forms no name
    // or backend contains.
    let k: Vec<u8> = (0..C::KEY_LEN).map(|i| 0xa0 ^ i as u8).collect();
    for &backend in Backend::<C::Mode>::available() {
        note_backend(&format!("debug_prints_no_key_bytes {type_name}"), backend);
        let c = C::with_backend(&k, backend).unwrap_or_else(|e| panic!("{type_name}: {e}"));
        for s in [format!("{c:?}"), format!("{c:#?}")] {
            assert!(s.starts_with(type_name), "{s}");
            assert!(s.contains(&format!("{backend:?}")), "{s}");
            assert!(
                ["a0", "a1", "160", "161"].iter().all(|b| !s.contains(b)) && s.len() < 60,
                "{s}"
            );
        }
    }
}

/// A clone encrypts like its original, on every backend this CPU runs,
/// after the original is dropped (the clone owns copies of the keys).
///
/// # Panics
///
/// On different bytes.
///
/// ```
/// mdu_aes::testing::a_clone_encrypts_like_the_original::<mdu_cbc::AesCbc128>();
/// ```
pub fn a_clone_encrypts_like_the_original<C: WithBackend + DataUnitCipher + Clone>() {
    for &backend in Backend::<C::Mode>::available() {
        note_backend(
            &format!("a_clone_encrypts_like_the_original {}", name::<C>()),
            backend,
        );
        let c = C::with_backend(&key(C::KEY_LEN, 7), backend).unwrap();
        let d = c.clone();
        let plain: Vec<u8> = (0..4096)
            .map(|i| ((i % 251) as u8).wrapping_mul(7) ^ 1)
            .collect();
        let (mut a, mut b) = (plain.clone(), plain);
        let iv = C::Iv::from_low_u128(9);
        c.encrypt_unit(iv, &mut a).unwrap();
        drop(c);
        d.encrypt_unit(iv, &mut b).unwrap();
        assert!(a == b, "{} on {backend}", name::<C>());
    }
}
