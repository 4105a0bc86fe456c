//! Shared helpers of the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeSet;
use std::sync::Mutex;

use mdu_base64::{Alphabet, Backend, DecodeError, Engine, Padding};

/// The crypt(3) alphabet: a custom ordering (symbols 0..=61 are not the RFC
/// layout, so AVX2 encodes it with its four-lookup translation and decodes
/// it with the nibble-class one; VBMI serves it from its tables).
pub const CRYPT: Alphabet =
    match Alphabet::new(b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
        Ok(a) => a,
        Err(_) => panic!("bad alphabet"),
    };

/// A fixed shuffle of printable ASCII: its rows of 16 bytes hold symbols of
/// many offsets, so the AVX2 backend needs its long (any-alphabet) lookups
/// in both directions.
pub fn random_alphabet() -> Alphabet {
    let mut pool: Vec<u8> = (0x20u8..=0x7e).filter(|&b| b != b'=').collect();
    let mut rng = Rng(0x0bad_5eed_1234_5678);
    let chars: Vec<u8> = (0..64)
        .map(|_| pool.swap_remove(rng.below(pool.len())))
        .collect();
    Alphabet::new(&chars.try_into().expect("64 symbols")).expect("valid alphabet")
}

/// Every engine under test, with a name.
pub fn engines() -> Vec<(&'static str, Engine)> {
    vec![
        ("STANDARD", mdu_base64::STANDARD),
        ("URL_SAFE", mdu_base64::URL_SAFE),
        ("URL_SAFE_NO_PAD", mdu_base64::URL_SAFE_NO_PAD),
        (
            "IMAP/optional",
            Engine::new(&Alphabet::IMAP, Padding::Optional),
        ),
        (
            "STANDARD/none",
            Engine::new(&Alphabet::STANDARD, Padding::None),
        ),
        ("CRYPT/required", Engine::new(&CRYPT, Padding::Required)),
        ("CRYPT/none", Engine::new(&CRYPT, Padding::None)),
        (
            "RANDOM/required",
            Engine::new(&random_alphabet(), Padding::Required),
        ),
        (
            "RANDOM/none",
            Engine::new(&random_alphabet(), Padding::None),
        ),
    ]
}

/// `engine` pinned to every backend this CPU runs (announced once per test,
/// see [`announce`]).
pub fn pinned(engine: Engine) -> Vec<(Backend, Engine)> {
    let all = Backend::available();
    announce(all);
    all.iter()
        .copied()
        .map(|b| (b, engine.with_backend(b).expect("available backend")))
        .collect()
}

/// Prints one line per backend the current test exercises, once per test
/// (not per property case): the test harness names each test's thread after
/// the test, so the log (`-- --show-output`) says which backends every test
/// ran on. The backends this CPU does not run, and why, are
/// `tests/backends.rs`'s.
pub fn announce(backends: &[Backend]) {
    static SEEN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let test = std::thread::current().name().unwrap_or("main").to_owned();
    let first = SEEN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(test.clone());
    if first {
        for b in backends {
            println!("{test}: backend {}", b.name());
        }
    }
}

/// [`announce`] for a test that uses the engines' default, detected backend.
pub fn announce_detected() {
    announce(&[Backend::detect()]);
}

/// Deterministic xorshift64* generator.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Decodes with `engine` into a buffer prefilled with a sentinel, so the
/// untouched part is visible; returns the result and the whole buffer.
pub fn decode_observed(engine: &Engine, src: &[u8]) -> (Result<usize, DecodeError>, Vec<u8>) {
    let mut buf = vec![0xA5u8; src.len() / 4 * 3 + 3];
    let r = engine.decode_slice(src, &mut buf);
    (r, buf)
}

/// Checks the documented write contract of `decode_slice` on error against
/// the expected decoding of the whole groups (`prefix` = correct output of
/// every valid whole group, as far as known).
pub fn check_error_writes(err: DecodeError, body_len: usize, buf: &[u8]) {
    let written = match err {
        DecodeError::InvalidByte { index, .. } => index / 4 * 3,
        DecodeError::NonCanonical { .. } => body_len / 4 * 3,
        _ => 0,
    };
    assert!(
        buf[written..].iter().all(|&b| b == 0xA5),
        "{err:?}: bytes past {written} were written"
    );
}
