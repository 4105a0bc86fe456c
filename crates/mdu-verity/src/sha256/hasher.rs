//! SHA-256 behind RustCrypto's `digest` traits: [`Sha256`], a hasher that
//! starts empty, over the same [`State`] and kernels as the rest of the
//! module, so that code written for `D: digest::Digest` (HMAC, HKDF,
//! PBKDF2, a generic Merkle tree) hashes on the best backend of this CPU.

use core::fmt;

use digest::common::BlockSizeUser;
use digest::consts::{U32, U64};
use digest::{FixedOutput, FixedOutputReset, HashMarker, Output, OutputSizeUser, Reset, Update};

use super::{Backend, BackendUnavailable, State};

/// SHA-256 where RustCrypto's [`Digest`](digest::Digest) is expected: the
/// same bytes as `sha2::Sha256`, computed on the best backend of this CPU
/// (SHA-NI, the Arm Crypto Extensions or the portable code, chosen once
/// per hasher).
///
/// It implements `Default`, `Clone`, [`HashMarker`], [`BlockSizeUser`],
/// [`OutputSizeUser`], [`Update`], [`FixedOutput`], [`Reset`] and
/// [`FixedOutputReset`], hence `Digest` and `DynDigest`. A reset hasher
/// is empty again and keeps its backend. For a salted prefix shared by
/// many messages, or two messages at once, use [`State`].
///
/// ```
/// use mdu_verity::sha256::Sha256;
/// use mdu_verity::sha256::digest::Digest;
///
/// // FIPS 180-4, "abc".
/// let d = Sha256::digest(b"abc");
/// assert_eq!(d[..4], [0xba, 0x78, 0x16, 0xbf]);
///
/// let mut h = Sha256::new();
/// h.update(b"ab");
/// h.update(b"c");
/// assert_eq!(h.finalize_reset(), d);
/// assert_eq!(h.finalize(), Sha256::digest(b""));
///
/// // Any code generic over `Digest` takes it.
/// fn hex<D: Digest>(data: &[u8]) -> String {
///     D::digest(data).iter().map(|b| format!("{b:02x}")).collect()
/// }
/// assert!(hex::<Sha256>(b"").starts_with("e3b0c442"));
/// ```
#[derive(Clone, Default)]
pub struct Sha256 {
    state: State,
}

impl Sha256 {
    /// An empty hasher pinned to `backend` (for tests and benchmarks), or
    /// an error if this CPU cannot run it. `Sha256::default()` (and
    /// `Digest::new`) takes the best backend.
    ///
    /// # Errors
    ///
    /// [`BackendUnavailable`] when this CPU (or this target) lacks
    /// `backend`.
    ///
    /// ```
    /// use mdu_verity::sha256::digest::Digest;
    /// use mdu_verity::sha256::{Backend, Sha256};
    ///
    /// for &b in Backend::available() {
    ///     let h = Sha256::with_backend(b)?;
    ///     assert_eq!(h.backend(), b);
    ///     assert_eq!(h.chain_update(b"abc").finalize(), Sha256::digest(b"abc"));
    /// }
    /// # Ok::<(), mdu_verity::sha256::BackendUnavailable>(())
    /// ```
    pub fn with_backend(backend: Backend) -> Result<Sha256, BackendUnavailable> {
        Ok(Sha256 {
            state: State::with_backend(backend)?,
        })
    }

    /// The backend this hasher runs on.
    ///
    /// ```
    /// use mdu_verity::sha256::{Backend, Sha256};
    /// assert_eq!(Sha256::default().backend(), Backend::detect());
    /// ```
    pub fn backend(&self) -> Backend {
        self.state.backend()
    }
}

/// Prints the backend and the number of bytes absorbed.
///
/// ```
/// let h = mdu_verity::sha256::Sha256::default();
/// assert!(format!("{h:?}").starts_with("Sha256 { absorbed: 0"));
/// ```
impl fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sha256")
            .field("absorbed", &self.state.absorbed())
            .field("backend", &self.backend())
            .finish()
    }
}

/// A cryptographic hash: what `Digest` is implemented for.
impl HashMarker for Sha256 {}

/// 64-byte blocks (what HMAC pads its key to).
///
/// ```
/// use mdu_verity::sha256::Sha256;
/// use mdu_verity::sha256::digest::common::BlockSizeUser;
/// assert_eq!(Sha256::block_size(), 64);
/// ```
impl BlockSizeUser for Sha256 {
    type BlockSize = U64;
}

/// 32-byte digests.
///
/// ```
/// use mdu_verity::sha256::Sha256;
/// use mdu_verity::sha256::digest::OutputSizeUser;
/// assert_eq!(Sha256::output_size(), 32);
/// ```
impl OutputSizeUser for Sha256 {
    type OutputSize = U32;
}

/// Absorbs more of the message ([`State::update`]).
///
/// ```
/// use mdu_verity::sha256::Sha256;
/// use mdu_verity::sha256::digest::{FixedOutput, Update};
///
/// let mut h = Sha256::default();
/// Update::update(&mut h, b"a");
/// Update::update(&mut h, b"bc");
/// assert_eq!(h.finalize_fixed()[..4], [0xba, 0x78, 0x16, 0xbf]);
/// ```
impl Update for Sha256 {
    fn update(&mut self, data: &[u8]) {
        self.state.update(data);
    }
}

/// The digest of everything absorbed ([`State::finup`] of nothing more).
///
/// ```
/// use mdu_verity::sha256::Sha256;
/// use mdu_verity::sha256::digest::{FixedOutput, Output};
///
/// let mut out = Output::<Sha256>::default();
/// Sha256::default().finalize_into(&mut out);
/// assert_eq!(out[..4], [0xe3, 0xb0, 0xc4, 0x42]);
/// ```
impl FixedOutput for Sha256 {
    fn finalize_into(self, out: &mut Output<Self>) {
        out.copy_from_slice(&self.state.finup(&[]));
    }
}

/// Empty again, on the same backend.
///
/// ```
/// use mdu_verity::sha256::Sha256;
/// use mdu_verity::sha256::digest::{Digest, Reset};
///
/// let mut h = Sha256::new_with_prefix(b"discarded");
/// Reset::reset(&mut h);
/// assert_eq!(h.finalize(), Sha256::digest(b""));
/// ```
impl Reset for Sha256 {
    fn reset(&mut self) {
        self.state = State::on(self.state.kernels);
    }
}

/// The digest, then empty again on the same backend.
///
/// ```
/// use mdu_verity::sha256::Sha256;
/// use mdu_verity::sha256::digest::{FixedOutputReset, Update};
///
/// let mut h = Sha256::default();
/// h.update(b"abc");
/// let first = h.finalize_fixed_reset();
/// h.update(b"abc");
/// assert_eq!(h.finalize_fixed_reset(), first);
/// ```
impl FixedOutputReset for Sha256 {
    fn finalize_into_reset(&mut self, out: &mut Output<Self>) {
        out.copy_from_slice(&self.state.finup(&[]));
        Reset::reset(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use digest::Digest;

    /// Message bytes with period 251, so a block out of place shows.
    fn painted(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Every length from 0 to 300 bytes (empty, short, one block, block
    /// boundaries and the 55/56-byte padding edge, several blocks), each
    /// absorbed in two updates at every split point, then finished with
    /// and without a reset: the digests of `sha2::Sha256`, on every
    /// backend of this CPU.
    #[test]
    fn every_length_and_split_gives_the_digest_of_sha2() {
        let data = painted(300);
        // Under a user-mode emulator the splits of every 7th point (the
        // block and padding edges fall at every offset across the lengths).
        let stride = mdu_core::testing::sample::emulated_stride(
            "every_length_and_split_gives_the_digest_of_sha2",
            45_451,
            "length and split pairs",
            7,
        );
        for &backend in Backend::available() {
            let mut reused = Sha256::with_backend(backend).unwrap();
            for len in 0..=300 {
                let msg = &data[..len];
                let want = sha2::Sha256::digest(msg);
                for split in (len % stride..=len).step_by(stride) {
                    let mut h = Sha256::with_backend(backend).unwrap();
                    Digest::update(&mut h, &msg[..split]);
                    Digest::update(&mut h, &msg[split..]);
                    assert_eq!(
                        h.finalize(),
                        want,
                        "{backend}: {len} bytes split at {split}"
                    );
                }
                Digest::update(&mut reused, msg);
                assert_eq!(
                    reused.finalize_reset(),
                    want,
                    "{backend}: {len} bytes, reset"
                );
                assert_eq!(reused.backend(), backend);
            }
        }
        eprintln!(
            "every_length_and_split_gives_the_digest_of_sha2: backends {:?}",
            Backend::available()
        );
    }

    /// FIPS 180-4's examples (and the NIST CAVS "one million a"), through
    /// `Digest::digest`.
    #[test]
    fn nist_vectors_through_digest() {
        let million_a = vec![b'a'; 1_000_000];
        let vectors: [(&[u8], &str); 4] = [
            (
                b"",
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
            (
                b"abc",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
            (
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            ),
            (
                &million_a,
                "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
            ),
        ];
        for (msg, want) in vectors {
            assert_eq!(hex(&Sha256::digest(msg)), want, "{} bytes", msg.len());
            for &backend in Backend::available() {
                let h = Sha256::with_backend(backend).unwrap();
                assert_eq!(hex(&h.chain_update(msg).finalize()), want, "{backend}");
            }
        }
    }

    /// A clone goes on from where the original was, independently.
    #[test]
    fn a_clone_continues_independently() {
        let mut a = Sha256::default();
        Digest::update(&mut a, b"abc");
        let b = a.clone();
        Digest::update(&mut a, b"def");
        assert_eq!(b.finalize(), sha2::Sha256::digest(b"abc"));
        assert_eq!(a.finalize(), sha2::Sha256::digest(b"abcdef"));
    }
}
