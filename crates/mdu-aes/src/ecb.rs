//! AES on independent blocks (ECB), batched: what the dm-crypt `essiv` IV
//! generator encrypts (one block per sector) and the keystream of counter
//! modes to come, and the benchmark report's AES bound runs on it. The
//! driver is written once over [`crate::vector`]; the skeleton (detection,
//! forced backends, key setup and wiping, the dispatch point) is
//! [`Engine`]'s, as for every mode.
//!
//! ECB is not a data-unit cipher (it has no IV and shows equal plaintext
//! blocks as equal ciphertext blocks): it is a building block, with its own
//! small API ([`Ecb`]), not a [`mdu_core::DataUnitCipher`].

use alloc::boxed::Box;

use crypto_common::{Key, KeyInit, KeySizeUser};
use mdu_core::Direction;

use crate::mode::{BlockAes, Engine, EveryKey, Io, KeySize, Mode};
use crate::{Backend, Ivs, SetupError};

/// ECB as the AES skeleton sees it: the mode behind [`Ecb`].
///
/// ```
/// let best = mdu_aes::Backend::<mdu_aes::EcbMode>::detect();
/// assert!(best.is_available());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EcbMode;

/// AES on a batch of independent 16-byte blocks, with the best backend this
/// CPU runs (or one forced), keys wiped on drop.
///
/// ```
/// use mdu_aes::{Aes128, Ecb};
///
/// let ecb = Ecb::<Aes128>::new(&[0u8; 16])?;
/// let mut blocks = [0u8; 64];
/// ecb.encrypt_blocks(&mut blocks);
/// // FIPS 197: AES-128 of the zero block under the zero key, four times.
/// assert_eq!(blocks[..4], [0x66, 0xe9, 0x4b, 0xd4]);
/// assert_eq!(blocks[..16], blocks[48..]);
/// ecb.decrypt_blocks(&mut blocks);
/// assert_eq!(blocks, [0u8; 64]);
/// # Ok::<(), mdu_aes::SetupError>(())
/// ```
pub struct Ecb<K: KeySize> {
    engine: Engine<EcbMode, K>,
}

impl<K: KeySize> Ecb<K> {
    /// Expands `key` (16 bytes for [`Aes128`](crate::Aes128), 32 for
    /// [`Aes256`](crate::Aes256)) for the best backend of this CPU.
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`].
    pub fn new(key: &[u8]) -> Result<Self, SetupError> {
        Self::with_backend(key, Backend::detect())
    }

    /// Expands `key` for `backend`.
    ///
    /// ```
    /// use mdu_aes::{Aes256, Backend, Ecb};
    /// let ecb = Ecb::<Aes256>::with_backend(&[7u8; 32], Backend::Generic)?;
    /// assert_eq!(ecb.backend(), Backend::Generic);
    /// # Ok::<(), mdu_aes::SetupError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`], or [`SetupError::BackendUnavailable`] if
    /// this CPU cannot run `backend`.
    pub fn with_backend(key: &[u8], backend: Backend<EcbMode>) -> Result<Self, SetupError> {
        Ok(Ecb {
            engine: Engine::new(key, backend, false)?,
        })
    }

    /// The backend the keys were expanded for.
    ///
    /// ```
    /// use mdu_aes::{Aes128, Backend, Ecb};
    /// let ecb = Ecb::<Aes128>::new(&[0u8; 16])?;
    /// assert_eq!(ecb.backend(), Backend::detect());
    /// # Ok::<(), mdu_aes::SetupError>(())
    /// ```
    pub fn backend(&self) -> Backend<EcbMode> {
        self.engine.backend()
    }

    /// Encrypts every 16-byte block of `blocks` in place.
    ///
    /// # Panics
    ///
    /// If `blocks.len()` is not a multiple of 16. An empty slice is left
    /// alone.
    ///
    /// ```
    /// use mdu_aes::{Aes256, Ecb};
    /// let ecb = Ecb::<Aes256>::new(&[1u8; 32])?;
    /// let mut two = [[9u8; 16]; 2];
    /// ecb.encrypt_blocks(two.as_flattened_mut());
    /// assert_eq!(two[0], two[1]);
    /// # Ok::<(), mdu_aes::SetupError>(())
    /// ```
    pub fn encrypt_blocks(&self, blocks: &mut [u8]) {
        self.crypt(Direction::Encrypt, blocks);
    }

    /// Decrypts every 16-byte block of `blocks` in place.
    ///
    /// # Panics
    ///
    /// If `blocks.len()` is not a multiple of 16.
    ///
    /// ```
    /// use mdu_aes::{Aes128, Ecb};
    /// let ecb = Ecb::<Aes128>::new(&[2u8; 16])?;
    /// let mut b = *b"sixteen bytes!!!";
    /// ecb.encrypt_blocks(&mut b);
    /// ecb.decrypt_blocks(&mut b);
    /// assert_eq!(&b, b"sixteen bytes!!!");
    /// # Ok::<(), mdu_aes::SetupError>(())
    /// ```
    pub fn decrypt_blocks(&self, blocks: &mut [u8]) {
        self.crypt(Direction::Decrypt, blocks);
    }

    fn crypt(&self, dir: Direction, blocks: &mut [u8]) {
        assert!(
            blocks.len().is_multiple_of(16),
            "ECB works on whole 16-byte blocks, not {} bytes",
            blocks.len()
        );
        if blocks.is_empty() {
            return;
        }
        // One "unit" of the whole buffer: the kernels ignore unit bounds.
        let len = blocks.len();
        let none = Ivs::Counter { first: 0, step: 0 };
        self.engine.crypt(dir, &none, len, Io::InPlace(blocks));
    }
}

impl<K: KeySize> Clone for Ecb<K> {
    fn clone(&self) -> Self {
        Ecb {
            engine: self.engine.clone(),
        }
    }
}

/// RustCrypto's key size: one AES key of size `K`.
///
/// ```
/// use mdu_aes::crypto_common::KeySizeUser;
/// use mdu_aes::{Aes128, Ecb};
/// assert_eq!(Ecb::<Aes128>::key_size(), 16);
/// ```
impl<K: KeySize> KeySizeUser for Ecb<K> {
    type KeySize = K::Len;
}

/// RustCrypto's infallible construction: the key expanded for the best
/// backend of this CPU, as [`Ecb::new`] does (AES has no weak keys).
///
/// ```
/// use mdu_aes::crypto_common::KeyInit;
/// use mdu_aes::{Aes256, Ecb};
///
/// let ecb = <Ecb<Aes256> as KeyInit>::new(&[3u8; 32].into());
/// let (mut a, mut b) = ([5u8; 32], [5u8; 32]);
/// ecb.encrypt_blocks(&mut a);
/// Ecb::<Aes256>::new(&[3; 32])?.encrypt_blocks(&mut b);
/// assert_eq!(a, b);
/// assert!(<Ecb<Aes256> as KeyInit>::new_from_slice(&[3; 16]).is_err());
/// # Ok::<(), mdu_aes::SetupError>(())
/// ```
impl<K: KeySize> KeyInit for Ecb<K> {
    fn new(key: &Key<Self>) -> Self {
        Ecb {
            engine: Engine::best(key.as_slice()),
        }
    }
}

/// The round keys live on the heap and are zeroized on drop; the stack of
/// the key setup is wiped.
///
/// ```
/// fn wipes<T: zeroize::ZeroizeOnDrop>(_: &T) {}
/// wipes(&mdu_aes::Ecb::<mdu_aes::Aes128>::new(&[1; 16])?);
/// # Ok::<(), mdu_aes::SetupError>(())
/// ```
impl<K: KeySize> zeroize::ZeroizeOnDrop for Ecb<K> {}

impl<K: KeySize> core::fmt::Debug for Ecb<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ecb")
            .field("key_bits", &(8 * K::LEN))
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}

/// What each backend of ECB needs of the CPU: the `#[target_feature]`
/// list of its entry point in [`kernels`], written once for both. ECB
/// needs no carry-less multiply.
mod needs {
    mdu_platform::needs! {
        /// `kernels::zmm`: VAES on zmm (AVX-512 F), AES-NI for single blocks.
        pub enum Vaes512: x86_64 "aes,avx2,avx512f,vaes";
        /// `kernels::ymm`: VAES on ymm (AVX2), AES-NI for single blocks.
        pub enum Vaes256: x86_64 "aes,avx2,vaes";
        /// `kernels::xmm`: AES-NI.
        pub enum AesNi: x86_64 "aes";
        /// `kernels::neon`: FEAT_AES (with FEAT_PMULL, as the compiler's
        /// `aes` on arm64).
        pub enum ArmCe: aarch64 "neon,aes";
    }
}

impl Mode for EcbMode {
    const CRATE: &'static str = "mdu-aes";
    type KeyLen<K: KeySize> = K::Len;
    type KeyRule = EveryKey;
    const UNIT_ALIGN: usize = 16;
    const NAMES: [&'static str; 2] = ["AesEcb128", "AesEcb256"];
    type Vaes512 = needs::Vaes512;
    type Vaes256 = needs::Vaes256;
    type AesNi = needs::AesNi;
    type ArmCe = needs::ArmCe;

    type Portable<A: BlockAes> = A;

    #[inline(never)]
    fn portable<A: BlockAes>(key: &[u8]) -> Box<A> {
        let key = <&aes::cipher::Key<A>>::try_from(key)
            .unwrap_or_else(|_| unreachable!("checked key length"));
        Box::write(Box::new_uninit(), A::new(key))
    }

    #[inline(never)]
    fn portable_clone<A: BlockAes>(keys: &A) -> Box<A> {
        Box::write(Box::new_uninit(), keys.clone())
    }

    fn portable_crypt<A: BlockAes>(
        keys: &A,
        dir: Direction,
        _: &Ivs<'_>,
        _: usize,
        buf: &mut [u8],
    ) {
        let (blocks, _) = aes::Block::slice_as_chunks_mut(buf);
        match dir {
            Direction::Encrypt => keys.encrypt_blocks(blocks),
            Direction::Decrypt => keys.decrypt_blocks(blocks),
        }
    }
}

/// The batched ECB kernel, written once over [`Vector`](crate::vector::Vector),
/// and its entry point per width, each taking the witness of its
/// backend's needs (`<EcbMode as Mode>::Vaes512` and its siblings).
#[cfg(simd)]
pub mod kernels {
    use alloc::boxed::Box;

    use super::EcbMode;
    use crate::vector::{Keys, Vector};
    use crate::{Request, RoundKeys, Schedule, SimdKeys};

    pub use arch::*;

    impl SimdKeys for EcbMode {
        type RoundKeys = RoundKeys;

        unsafe fn expand(key: &[u8]) -> Box<RoundKeys> {
            let mut rk = RoundKeys::zeroed();
            // SAFETY: forwarded from the caller (the CPU has the AES
            // instructions).
            unsafe { rk.expand_into(key) };
            rk
        }

        fn simd_clone(keys: &RoundKeys) -> Box<RoundKeys> {
            keys.boxed_clone()
        }
    }

    /// The schedule of direction `ENC`.
    #[inline(always)]
    fn schedule<const ENC: bool>(keys: &RoundKeys) -> &Schedule {
        if ENC { &keys.enc } else { &keys.dec }
    }

    /// `N` vectors of blocks at `src` to `dst`.
    ///
    /// # Safety
    ///
    /// `src` and `dst` are valid for `16 * BLOCKS * N` bytes and are equal
    /// or disjoint.
    #[inline(always)]
    unsafe fn group<V: Vector, const NR: usize, const ENC: bool, const N: usize>(
        k: &Keys<V>,
        src: *const u8,
        dst: *mut u8,
    ) {
        let step = 16 * V::BLOCKS;
        // SAFETY: vector `i < N` lies in the `16 * BLOCKS * N` bytes; every
        // vector is loaded before the first store.
        unsafe {
            let s: [V; N] = mdu_platform::simd::array(|i| V::load(src.add(step * i)));
            for (i, v) in k.crypt::<NR, ENC, N>(s, None, None).iter().enumerate() {
                v.store(dst.add(step * i));
            }
        }
    }

    /// `len` bytes (a multiple of 16) of independent blocks, `W` vectors in
    /// flight, then `W/2, .., 1` vectors, then single blocks.
    ///
    /// # Safety
    ///
    /// `src` and `dst` are valid for `len` bytes and are equal or disjoint;
    /// `len` is a multiple of 16; `NR` matches the schedule of `k`.
    #[inline(always)]
    pub unsafe fn blocks<V: Vector, const NR: usize, const ENC: bool, const W: usize>(
        k: &Keys<V>,
        src: *const u8,
        dst: *mut u8,
        len: usize,
    ) {
        let per_vector = 16 * V::BLOCKS;
        let mut off = 0;
        while len - off >= W * per_vector {
            // SAFETY: `off + W * per_vector <= len`.
            unsafe { group::<V, NR, ENC, W>(k.per_round(), src.add(off), dst.add(off)) };
            off += W * per_vector;
        }
        let mut vectors = (len - off) / per_vector;
        macro_rules! tail {
            ($n:literal) => {
                if $n < W && vectors & $n != 0 {
                    // SAFETY: `off + $n * per_vector <= len`.
                    unsafe { group::<V, NR, ENC, $n>(k, src.add(off), dst.add(off)) };
                    off += $n * per_vector;
                    vectors -= $n;
                }
            };
        }
        tail!(8);
        tail!(4);
        tail!(2);
        tail!(1);
        debug_assert_eq!(vectors, 0);
        let one = k.blocks();
        while off < len {
            // SAFETY: `off + 16 <= len`.
            unsafe { group::<V::Block, NR, ENC, 1>(&one, src.add(off), dst.add(off)) };
            off += 16;
        }
    }

    macro_rules! entry {
        ($(#[$doc:meta])* $name:ident, $v:ty, $w:literal, $needs:ident) => {
            super::super::needs::target_features!($needs =>
                $(#[$doc])*
                ///
                /// # Safety
                ///
                /// `src` and `dst` are valid for `len` bytes (a multiple of 16)
                /// and are equal or disjoint; `NR` matches `s`, which is in the
                /// order of the direction `ENC`. (The witness proves the
                /// features this function enables.)
                pub unsafe fn $name<const NR: usize, const ENC: bool>(
                    _: Witness<$needs>,
                    s: &Schedule,
                    src: *const u8,
                    dst: *mut u8,
                    len: usize,
                ) {
                    // SAFETY: this function runs with the width's features.
                    let k = unsafe { Keys::<$v>::new(s) };
                    // SAFETY: forwarded from the caller.
                    unsafe { blocks::<$v, NR, ENC, $w>(&k, src, dst, len) }
                }
            );
        };
    }

    /// x86_64: one entry point per width, and ECB's kernel table there.
    #[cfg(target_arch = "x86_64")]
    mod arch {
        use mdu_platform::cpu::Witness;

        use super::super::needs::{AesNi, Vaes256, Vaes512};
        use super::{EcbMode, Keys, Request, RoundKeys, Schedule, blocks, schedule};

        entry!(
            /// Eight zmm registers (32 blocks) in flight: with no tweaks to
            /// keep, the fifteen round keys and eight states fit the 32
            /// registers.
            zmm, crate::vector::Zmm, 8, Vaes512
        );
        entry!(
            /// Eight ymm registers (sixteen blocks) in flight.
            ymm, crate::vector::Ymm, 8, Vaes256
        );
        entry!(
            /// Eight xmm registers in flight.
            xmm, crate::vector::Xmm, 8, AesNi
        );

        impl crate::Kernels for EcbMode {
            #[inline]
            unsafe fn vaes512<const NR: usize, const ENC: bool>(
                w: Witness<Vaes512>,
                keys: &RoundKeys,
                r: Request<'_>,
            ) {
                let len = r.unit * r.count;
                // SAFETY: forwarded from the caller.
                unsafe { zmm::<NR, ENC>(w, schedule::<ENC>(keys), r.src, r.dst, len) }
            }

            #[inline]
            unsafe fn vaes256<const NR: usize, const ENC: bool>(
                w: Witness<Vaes256>,
                keys: &RoundKeys,
                r: Request<'_>,
            ) {
                let len = r.unit * r.count;
                // SAFETY: forwarded from the caller.
                unsafe { ymm::<NR, ENC>(w, schedule::<ENC>(keys), r.src, r.dst, len) }
            }

            #[inline]
            unsafe fn aesni<const NR: usize, const ENC: bool>(
                w: Witness<AesNi>,
                keys: &RoundKeys,
                r: Request<'_>,
            ) {
                let len = r.unit * r.count;
                // SAFETY: forwarded from the caller.
                unsafe { xmm::<NR, ENC>(w, schedule::<ENC>(keys), r.src, r.dst, len) }
            }
        }
    }

    /// arm64: the entry point, and ECB's kernel table there.
    #[cfg(target_arch = "aarch64")]
    mod arch {
        use mdu_platform::cpu::Witness;

        use super::super::needs::ArmCe;
        use super::{EcbMode, Keys, Request, RoundKeys, Schedule, blocks, schedule};

        entry!(
            /// Eight registers in flight.
            neon, crate::vector::Neon, 8, ArmCe
        );

        impl crate::Kernels for EcbMode {
            #[inline]
            unsafe fn arm_ce<const NR: usize, const ENC: bool>(
                w: Witness<ArmCe>,
                keys: &RoundKeys,
                r: Request<'_>,
            ) {
                let len = r.unit * r.count;
                // SAFETY: forwarded from the caller.
                unsafe { neon::<NR, ENC>(w, schedule::<ENC>(keys), r.src, r.dst, len) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Aes128, Aes256};
    use std::vec::Vec;

    /// Every backend this CPU runs, both key sizes, both directions, every
    /// length up to 70 blocks (every group size and tail of every width),
    /// in place, against the `aes` crate block by block.
    fn against_aes<K: KeySize, A: BlockAes>(key_len: usize) {
        let key: Vec<u8> = (0..key_len).map(|i| (i * 29 + 3) as u8).collect();
        let oracle = A::new_from_slice(&key).unwrap();
        let data: Vec<u8> = (0..70 * 16).map(|i| (i * 131 + 7) as u8).collect();
        for &backend in Backend::<EcbMode>::available() {
            let ecb = Ecb::<K>::with_backend(&key, backend).unwrap();
            for blocks in 0..=70 {
                let plain = &data[..16 * blocks];
                let mut want = plain.to_vec();
                for b in want.chunks_exact_mut(16) {
                    let mut x = aes::Block::try_from(&*b).unwrap();
                    oracle.encrypt_block(&mut x);
                    b.copy_from_slice(&x);
                }
                let mut got = plain.to_vec();
                ecb.encrypt_blocks(&mut got);
                assert_eq!(got, want, "{backend} encrypt, {blocks} blocks");
                ecb.decrypt_blocks(&mut got);
                assert_eq!(got, plain, "{backend} decrypt, {blocks} blocks");
                if let Some(b) = want.first_chunk_mut::<16>() {
                    let mut x = aes::Block::from(*b);
                    oracle.decrypt_block(&mut x);
                    assert_eq!(&x[..], &plain[..16]);
                }
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "the portable path is the aes crate itself")]
    fn every_backend_matches_the_aes_crate() {
        against_aes::<Aes128, aes::Aes128>(16);
        against_aes::<Aes256, aes::Aes256>(32);
    }

    #[test]
    #[should_panic(expected = "whole 16-byte blocks")]
    fn a_partial_block_is_a_caller_bug() {
        Ecb::<Aes128>::new(&[0; 16])
            .unwrap()
            .encrypt_blocks(&mut [0; 17]);
    }

    #[test]
    fn key_length_is_checked() {
        assert_eq!(
            Ecb::<Aes256>::new(&[0; 16]).unwrap_err(),
            SetupError::InvalidKeyLength {
                len: 16,
                expected: 32
            }
        );
    }
}
