//! Small fixtures of the workspace's tests: hex text and a deterministic
//! pseudo-random generator.
//!
//! Only tests that stay in the workspace can use them: a crate's packaged
//! tests (those `.ci/package.sh` runs from the `.crate`) cannot reach this
//! unpublished crate and keep their own few lines.

use std::fmt::Write;

/// `bytes` as lowercase hex.
///
/// ```
/// assert_eq!(mdu_testkit::hex(&[0x00, 0xab, 0x7f]), "00ab7f");
/// ```
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 * bytes.len());
    for b in bytes {
        // Writing to a String does not fail.
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The bytes of hex text `s` (either case; ASCII whitespace between the
/// digits is skipped, so test vectors may be laid out in groups).
///
/// # Panics
///
/// On a character that is not a hex digit or whitespace, or an odd number
/// of digits: a test's constant is wrong.
///
/// ```
/// assert_eq!(mdu_testkit::unhex("00AB 7f"), [0x00, 0xab, 0x7f]);
/// ```
pub fn unhex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .map(|b| match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => panic!("unhex: {:?} is not a hex digit in {s:?}", char::from(b)),
        })
        .collect();
    assert!(
        digits.len().is_multiple_of(2),
        "unhex: an odd number of hex digits ({}) in {s:?}",
        digits.len()
    );
    digits.chunks(2).map(|p| p[0] << 4 | p[1]).collect()
}

/// A small deterministic generator (xorshift64*): the same seed gives the
/// same stream on every machine and every run, so a test's inputs can be
/// replayed. Not for anything but tests.
///
/// ```
/// use mdu_testkit::Rng;
///
/// let mut a = Rng::with_seed(7);
/// let mut b = Rng::with_seed(7);
/// assert_eq!(a.bytes(100), b.bytes(100));
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// The stream of `seed`. Any seed will do, 0 included: it is spread
    /// over the state's bits first, so that nearby seeds give unrelated
    /// streams.
    ///
    /// See [`Rng`].
    pub fn with_seed(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// A stream seeded for one test: by `MDU_TEST_SEED` when set (to replay
    /// a failure), else by the clock, so that each run tries other inputs.
    /// The seed is printed (on stderr) with the test's name.
    ///
    /// ```
    /// let mut rng = mdu_testkit::Rng::new("a_test");
    /// let _ = rng.pick(&[1, 2, 3]);
    /// ```
    pub fn new(test: &str) -> Rng {
        let seed = std::env::var("MDU_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            });
        eprintln!("{test}: MDU_TEST_SEED={seed}");
        Rng::with_seed(seed)
    }

    /// The next 64 bits.
    ///
    /// See [`Rng`].
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform enough in `0..n` (`n` > 0).
    ///
    /// See [`Rng`].
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        self.next_u64() % n
    }

    /// One element of `xs` (not empty).
    ///
    /// See [`Rng::new`].
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// `buf` filled with the next draws, eight bytes each (little-endian).
    ///
    /// ```
    /// let mut buf = [0u8; 12];
    /// mdu_testkit::Rng::with_seed(1).fill(&mut buf);
    /// assert_eq!(buf.to_vec(), mdu_testkit::Rng::with_seed(1).bytes(12));
    /// ```
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }

    /// The next `n` bytes, as [`fill`](Self::fill) writes them.
    ///
    /// See [`Rng`].
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.fill(&mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unhex_inverts_hex() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&all)), all);
        assert_eq!(unhex(&hex(&all).to_uppercase()), all);
        assert_eq!(unhex(""), Vec::<u8>::new());
    }

    #[test]
    #[should_panic(expected = "odd number")]
    fn unhex_refuses_an_odd_length() {
        unhex("abc");
    }

    #[test]
    #[should_panic(expected = "not a hex digit")]
    fn unhex_refuses_a_non_digit() {
        unhex("0g");
    }

    /// The stream is xorshift64* from the spread seed, eight bytes a draw
    /// (the bytes mdu-verity's interop tests drew before they used this
    /// generator): a change would change every test's inputs.
    #[test]
    fn the_stream_is_pinned() {
        assert_eq!(
            hex(&Rng::with_seed(5).bytes(16)),
            "e210893f2b2184ea81bbbc19ba33bbd4"
        );
        let mut split = Rng::with_seed(5);
        assert_eq!(split.bytes(3), unhex("e21089"));
        assert_eq!(split.bytes(2), unhex("81bb"));
        assert_ne!(Rng::with_seed(0).next_u64(), 0);
    }
}
