//! Adiantum: a length-preserving, tweakable wide-block cipher (Crowley and
//! Biggers, 2018) built from XChaCha12, NH, Poly1305 and one AES-256 block,
//! exactly as the kernel's `adiantum(xchacha12,aes)` runs it.
//!
//! fscrypt uses it as mode 9 (`FSCRYPT_MODE_ADIANTUM`) for both file
//! contents (4 KiB data units) and file names (16 to 255 bytes) on devices
//! whose CPUs have no AES instructions, usually with the `DIRECT_KEY`
//! policy flag, where the 32-byte IV holds the data unit index (bytes
//! 0..8, little-endian) and the file's 16-byte nonce (bytes 8..24).
//!
//! A message of any length from 16 bytes is one block: changing any bit of
//! the plaintext or of the tweak changes every byte of the ciphertext, and
//! the ciphertext is exactly as long as the plaintext.
//!
//! # Structure
//!
//! The 32-byte key `K_S` is the XChaCha12 key. The subkeys come from its
//! keystream under the nonce `1 ‖ 0^23`, in this order: the AES-256 key
//! `K_E` (32 bytes), the header's Poly1305 key `K_T` (16), then the
//! NHPoly1305 key `K_M` (16 bytes of Poly1305 key and 1072 of NH key). A
//! message `P = P_L ‖ P_R` (the bulk `P_L`: everything but the last 16
//! bytes; `P_R`: the last 16) under the tweak `T` is encrypted as
//!
//! ```text
//! P_M = P_R + H(T, P_L)                        (mod 2^128, little-endian)
//! C_M = AES-256_KE(P_M)
//! C_L = P_L ⊕ XChaCha12_KS(nonce = C_M ‖ 1 ‖ 0^7)
//! C_R = C_M − H(T, C_L)
//! C   = C_L ‖ C_R
//! ```
//!
//! where `H(T, L) = Poly1305_KT(le128(8·|L|) ‖ T) + NHPoly1305_KM(L)`:
//! both Poly1305 terms are the bare polynomial evaluation (reduced mod
//! 2^130 − 5, then mod 2^128, no `s` added), and NHPoly1305 is Poly1305
//! over the NH hashes of the bulk's 1024-byte chunks (four passes each).
//! Decryption runs the steps backwards with the AES decryption.
//!
//! [`Adiantum`] implements [`DataUnitCipher`] with the kernel's 32-byte
//! tweak ([`Iv<32>`](Iv)); [`Adiantum::encrypt_with_tweak`] takes a tweak
//! of any length, as the algorithm allows. XChaCha12 runs on SIMD (AVX2
//! or SSE2 chosen at run time on x86-64, NEON on arm64), the AES block on
//! the best AES backend of the CPU (`mdu-aes`), and NH (the hot loop) and
//! the Poly1305 evaluation are portable code. Every subkey is wiped on
//! drop, and `Debug` prints none of them.
//!
//! # Example: a 4 KiB data unit of an fscrypt file
//!
//! ```
//! use mdu_adiantum::{Adiantum, Iv};
//!
//! let contents = Adiantum::new(&[0x42; 32])?;
//! // DIRECT_KEY: the block index, then the file's nonce.
//! let nonce = [0x9c; 16];
//! let mut tweak = [0u8; 32];
//! tweak[..8].copy_from_slice(&7u64.to_le_bytes());
//! tweak[8..24].copy_from_slice(&nonce);
//!
//! let mut block = vec![0u8; 4096];
//! contents.encrypt(Iv(tweak), &mut block)?;
//! assert!(block.iter().any(|&b| b != 0));
//! contents.decrypt(Iv(tweak), &mut block)?;
//! assert_eq!(block, vec![0u8; 4096]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! * `std` (default): `std::error::Error` for [`Error`] and
//!   [`SetupError`], CPU detection through the standard library. Without
//!   it the crate is `no_std` (with `alloc`: the keys live on the heap).
#![no_std]
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

mod hash;
mod nh;
mod poly1305;

use alloc::boxed::Box;

use chacha20::XChaCha12;
use chacha20::cipher::{KeyIvInit, StreamCipher};
use mdu_aes::Ecb;
use mdu_aes::crypto_common::typenum::U32;
use mdu_aes::crypto_common::{InvalidKey, Key, KeyInit, KeySizeUser, TryKeyInit};
use zeroize::{Zeroize, Zeroizing};

use crate::hash::{HashKeys, MESSAGE_KEY_BYTES};

pub use mdu_aes::{Aes256, SetupError, crypto_common};
pub use mdu_core::{DataUnitCipher, DataUnitSize, DataUnits, Direction, Error, Iv};

/// Adiantum's key length in bytes: one XChaCha12 key.
///
/// ```
/// assert_eq!(mdu_adiantum::KEY_LEN, 32);
/// ```
pub const KEY_LEN: usize = 32;

/// The kernel's (and fscrypt's) Adiantum tweak length in bytes.
///
/// ```
/// assert_eq!(mdu_adiantum::TWEAK_LEN, 32);
/// ```
pub const TWEAK_LEN: usize = 32;

/// Bytes at the end of a message that go through AES (the rest is the bulk).
const BLOCK: usize = 16;

/// The XChaCha12 nonce of the subkey derivation: `1` then zeros.
const DERIVATION_NONCE: [u8; 24] = {
    let mut n = [0u8; 24];
    n[0] = 1;
    n
};

/// Keystream bytes the subkeys take: `K_E`, `K_T`, `K_M` (1136).
const DERIVED_BYTES: usize = 32 + 16 + MESSAGE_KEY_BYTES;

/// Adiantum with XChaCha12 and AES-256 (the kernel's
/// `adiantum(xchacha12,aes)`): the cipher with its subkeys derived.
///
/// A data unit is any byte string of at least 16 bytes (and at most
/// [`DataUnitSize::MAX`]), encrypted in place under its own 32-byte tweak.
/// Its many-unit methods are the auto-splitter: one call per unit.
///
/// ```
/// use mdu_adiantum::{Adiantum, Iv};
///
/// // The first 16-byte vector of the Adiantum reference (google/adiantum).
/// let key: [u8; 32] = [
///     0x9e, 0xeb, 0xb2, 0x49, 0x3c, 0x1c, 0xf5, 0xf4, 0x6a, 0x99, 0xc2, 0xc4, 0xdf, 0xb1,
///     0xf4, 0xdd, 0x75, 0x20, 0x57, 0xea, 0x2c, 0x4f, 0xcd, 0xb2, 0xa5, 0x3d, 0x7b, 0x49,
///     0x1e, 0xab, 0xfd, 0x0f,
/// ];
/// let tweak = Iv([
///     0xdf, 0x63, 0xd4, 0xab, 0xd2, 0x49, 0xf3, 0xd8, 0x33, 0x81, 0x37, 0x60, 0x7d, 0xfa,
///     0x73, 0x08, 0xd8, 0x49, 0x6d, 0x80, 0xe8, 0x2f, 0x62, 0x54, 0xeb, 0x0e, 0xa9, 0x39,
///     0x5b, 0x45, 0x7f, 0x8a,
/// ]);
/// let mut msg = [
///     0x67, 0xc9, 0xf2, 0x30, 0x84, 0x41, 0x8e, 0x43, 0xfb, 0xf3, 0xb3, 0x3e, 0x79, 0x36,
///     0x7f, 0xe8,
/// ];
/// let adiantum = Adiantum::new(&key)?;
/// adiantum.encrypt(tweak, &mut msg)?;
/// assert_eq!(
///     msg,
///     [
///         0x6d, 0x32, 0x86, 0x18, 0x67, 0x86, 0x0f, 0x3f, 0x96, 0x7c, 0x9d, 0x28, 0x0d, 0x53,
///         0xec, 0x9f
///     ]
/// );
/// adiantum.decrypt(tweak, &mut msg)?;
/// assert_eq!(msg[..4], [0x67, 0xc9, 0xf2, 0x30]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Adiantum {
    keys: Box<Keys>,
    aes: Ecb<Aes256>,
}

/// The XChaCha12 key and the hash keys, on the heap, wiped on drop (the
/// hash keys wipe themselves).
#[derive(Clone)]
struct Keys {
    stream: [u8; KEY_LEN],
    hash: HashKeys,
}

impl Drop for Keys {
    fn drop(&mut self) {
        self.stream.zeroize();
    }
}

impl Adiantum {
    /// Derives the subkeys of the 32-byte `key`.
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] unless `key` is 32 bytes.
    ///
    /// ```
    /// use mdu_adiantum::{Adiantum, SetupError};
    ///
    /// assert!(Adiantum::new(&[0; 32]).is_ok());
    /// assert_eq!(
    ///     Adiantum::new(&[0; 16]).unwrap_err(),
    ///     SetupError::InvalidKeyLength { len: 16, expected: 32 }
    /// );
    /// ```
    pub fn new(key: &[u8]) -> Result<Adiantum, SetupError> {
        let key: &[u8; KEY_LEN] = key.try_into().map_err(|_| SetupError::InvalidKeyLength {
            len: key.len(),
            expected: KEY_LEN,
        })?;
        Ok(Self::with_key(key))
    }

    /// The subkeys of `key`, with the stack of their derivation wiped.
    fn with_key(key: &[u8; KEY_LEN]) -> Adiantum {
        let cipher = Self::setup(key);
        // The derivation ran in a frame below this one: wipe what it left.
        mdu_aes::__private::wipe::after_key_setup();
        cipher
    }

    /// The subkey derivation, never inlined so that
    /// [`after_key_setup`](mdu_aes::__private::wipe::after_key_setup) can wipe its
    /// stack frame (the keystream, the Poly1305 and NH keys passed by
    /// value).
    #[inline(never)]
    fn setup(key: &[u8; KEY_LEN]) -> Adiantum {
        let mut derived = Zeroizing::new([0u8; DERIVED_BYTES]);
        XChaCha12::new(key.into(), &DERIVATION_NONCE.into()).apply_keystream(&mut derived[..]);
        let (ke, rest) = derived.split_at(32);
        let (kt, km) = rest.split_at(16);
        let aes = <Ecb<Aes256> as KeyInit>::new(ke.try_into().expect("32 bytes"));
        let hash = HashKeys::new(
            kt.try_into().expect("16 bytes"),
            km.try_into().expect("the NHPoly1305 key length"),
        );
        Adiantum {
            keys: Box::new(Keys { stream: *key, hash }),
            aes,
        }
    }

    /// Encrypts `buf` in place as one message under the 32-byte `tweak`.
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeOutOfRange`] if `buf` is shorter than 16 bytes or
    /// longer than 16 MiB; `buf` is then unchanged.
    ///
    /// ```
    /// use mdu_adiantum::{Adiantum, Error, Iv};
    ///
    /// let adiantum = Adiantum::new(&[3; 32])?;
    /// let mut name = *b"a file name, 29 bytes of it..";
    /// adiantum.encrypt(Iv::ZERO, &mut name)?;
    /// assert_ne!(&name[..6], b"a file");
    ///
    /// let mut short = [0u8; 15];
    /// assert!(matches!(
    ///     adiantum.encrypt(Iv::ZERO, &mut short),
    ///     Err(Error::UnitSizeOutOfRange { size: 15, .. })
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt(&self, tweak: Iv<TWEAK_LEN>, buf: &mut [u8]) -> Result<(), Error> {
        self.encrypt_with_tweak(&tweak.0, buf)
    }

    /// Decrypts `buf` in place as one message under the 32-byte `tweak`.
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_adiantum::{Adiantum, Iv};
    ///
    /// let adiantum = Adiantum::new(&[4; 32])?;
    /// let tweak = Iv::<32>::from_low_u128(12);
    /// let mut buf = *b"seventeen bytes!!";
    /// adiantum.encrypt(tweak, &mut buf)?;
    /// adiantum.decrypt(tweak, &mut buf)?;
    /// assert_eq!(&buf, b"seventeen bytes!!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decrypt(&self, tweak: Iv<TWEAK_LEN>, buf: &mut [u8]) -> Result<(), Error> {
        self.decrypt_with_tweak(&tweak.0, buf)
    }

    /// Encrypts `buf` in place under a tweak of any length (the kernel
    /// and fscrypt use 32 bytes: [`encrypt`](Self::encrypt)). A tweak that
    /// is not a whole number of 16-byte blocks is padded as Poly1305 pads
    /// its last block, as the Adiantum reference does.
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_adiantum::{Adiantum, Iv};
    ///
    /// let adiantum = Adiantum::new(&[5; 32])?;
    /// let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
    /// adiantum.encrypt_with_tweak(&[7; 32], &mut a)?;
    /// adiantum.encrypt(Iv([7; 32]), &mut b)?;
    /// assert_eq!(a, b);
    ///
    /// // No tweak at all.
    /// adiantum.encrypt_with_tweak(&[], &mut a)?;
    /// adiantum.decrypt_with_tweak(&[], &mut a)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt_with_tweak(&self, tweak: &[u8], buf: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(buf.len())?;
        let (bulk, right) = buf.split_at_mut(buf.len() - BLOCK);
        let keys = &self.keys.hash;
        let header = keys.header(bulk.len(), tweak);
        // P_M = P_R + H(T, P_L); C_M = E(P_M).
        let mut m = le128(right)
            .wrapping_add(keys.hash(header, bulk))
            .to_le_bytes();
        self.aes.encrypt_blocks(&mut m);
        // C_L = P_L ⊕ XChaCha12(C_M ‖ 1 ‖ 0^7).
        self.xor_keystream(&m, bulk);
        // C_R = C_M − H(T, C_L).
        let cr = u128::from_le_bytes(m).wrapping_sub(keys.hash(header, bulk));
        right.copy_from_slice(&cr.to_le_bytes());
        Ok(())
    }

    /// Decrypts `buf` in place under a tweak of any length; the inverse
    /// of [`encrypt_with_tweak`](Self::encrypt_with_tweak).
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_adiantum::Adiantum;
    ///
    /// let adiantum = Adiantum::new(&[6; 32])?;
    /// let mut buf = *b"a tweak of 17 bytes, as the reference allows";
    /// adiantum.encrypt_with_tweak(&[1; 17], &mut buf)?;
    /// adiantum.decrypt_with_tweak(&[1; 17], &mut buf)?;
    /// assert_eq!(&buf, b"a tweak of 17 bytes, as the reference allows");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decrypt_with_tweak(&self, tweak: &[u8], buf: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(buf.len())?;
        let (bulk, right) = buf.split_at_mut(buf.len() - BLOCK);
        let keys = &self.keys.hash;
        let header = keys.header(bulk.len(), tweak);
        // C_M = C_R + H(T, C_L).
        let mut m = le128(right)
            .wrapping_add(keys.hash(header, bulk))
            .to_le_bytes();
        // P_L = C_L ⊕ XChaCha12(C_M ‖ 1 ‖ 0^7); P_M = D(C_M).
        self.xor_keystream(&m, bulk);
        self.aes.decrypt_blocks(&mut m);
        // P_R = P_M − H(T, P_L).
        let pr = u128::from_le_bytes(m).wrapping_sub(keys.hash(header, bulk));
        right.copy_from_slice(&pr.to_le_bytes());
        Ok(())
    }

    /// XORs `bulk` with the XChaCha12 keystream under the nonce
    /// `c_m ‖ 1 ‖ 0^7`, from block 0.
    fn xor_keystream(&self, c_m: &[u8; BLOCK], bulk: &mut [u8]) {
        if bulk.is_empty() {
            return;
        }
        let mut nonce = [0u8; 24];
        nonce[..BLOCK].copy_from_slice(c_m);
        nonce[BLOCK] = 1;
        XChaCha12::new((&self.keys.stream).into(), &nonce.into()).apply_keystream(bulk);
    }

    /// The copy behind [`Clone`], never inlined so that its stack frame
    /// can be wiped.
    #[inline(never)]
    fn clone_keys(&self) -> Adiantum {
        Adiantum {
            keys: Box::new((*self.keys).clone()),
            aes: self.aes.clone(),
        }
    }
}

/// The little-endian 128-bit number in a 16-byte slice.
fn le128(bytes: &[u8]) -> u128 {
    let mut b = [0u8; BLOCK];
    b.copy_from_slice(bytes);
    u128::from_le_bytes(b)
}

impl Clone for Adiantum {
    /// A copy with its own (equal) subkeys, wiped on its own drop.
    ///
    /// ```
    /// use mdu_adiantum::{Adiantum, Iv};
    ///
    /// let a = Adiantum::new(&[8; 32])?;
    /// let b = a.clone();
    /// let (mut x, mut y) = ([1u8; 32], [1u8; 32]);
    /// a.encrypt(Iv::ZERO, &mut x)?;
    /// drop(a);
    /// b.encrypt(Iv::ZERO, &mut y)?;
    /// assert_eq!(x, y);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn clone(&self) -> Self {
        let copy = self.clone_keys();
        mdu_aes::__private::wipe::after_key_setup();
        copy
    }
}

/// RustCrypto's key size: the 32-byte XChaCha12 key ([`KEY_LEN`]).
///
/// ```
/// use mdu_adiantum::crypto_common::KeySizeUser;
/// assert_eq!(mdu_adiantum::Adiantum::key_size(), mdu_adiantum::KEY_LEN);
/// ```
impl KeySizeUser for Adiantum {
    type KeySize = U32;
}

/// RustCrypto's infallible construction: the subkeys derived as
/// [`new`](Adiantum::new) derives them (Adiantum has no weak keys);
/// `new_from_slice` refuses a key of another length with `InvalidLength`.
///
/// ```
/// use mdu_adiantum::crypto_common::KeyInit;
/// use mdu_adiantum::{Adiantum, Iv};
///
/// let key = [0x42; 32];
/// let contents = Adiantum::new_from_slice(&key).unwrap();
/// let mut a = vec![0u8; 4096];
/// let mut b = vec![0u8; 4096];
/// contents.encrypt(Iv::ZERO, &mut a)?;
/// Adiantum::new(&key)?.encrypt(Iv::ZERO, &mut b)?;
/// assert_eq!(a, b);
/// assert!(Adiantum::new_from_slice(&key[..16]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl KeyInit for Adiantum {
    fn new(key: &Key<Self>) -> Self {
        Self::with_key(key.as_ref())
    }
}

/// RustCrypto's fallible construction, as every cipher type of mdu has
/// it: never refuses a 32-byte key; `new_from_slice` refuses another
/// length with `InvalidKey`.
///
/// ```
/// use mdu_adiantum::Adiantum;
/// use mdu_adiantum::crypto_common::TryKeyInit;
///
/// assert!(Adiantum::new_from_slice(&[1; 32]).is_ok());
/// assert!(Adiantum::new_from_slice(&[1; 31]).is_err());
/// ```
impl TryKeyInit for Adiantum {
    fn new(key: &Key<Self>) -> Result<Self, InvalidKey> {
        Ok(<Self as KeyInit>::new(key))
    }
}

/// Every subkey is zeroized on drop: the XChaCha12 key and the hash keys
/// on the heap, the AES-256 round keys by [`Ecb`]'s own drop.
///
/// ```
/// fn wipes<T: zeroize::ZeroizeOnDrop>(_: &T) {}
/// wipes(&mdu_adiantum::Adiantum::new(&[1; 32])?);
/// # Ok::<(), mdu_adiantum::SetupError>(())
/// ```
impl zeroize::ZeroizeOnDrop for Adiantum {}

impl DataUnitCipher for Adiantum {
    type Iv = Iv<TWEAK_LEN>;

    const MIN_UNIT_BYTES: usize = 16;
    const UNIT_ALIGN: usize = 1;

    #[inline]
    fn encrypt_unit(&self, tweak: Iv<TWEAK_LEN>, unit: &mut [u8]) -> Result<(), Error> {
        self.encrypt(tweak, unit)
    }

    #[inline]
    fn decrypt_unit(&self, tweak: Iv<TWEAK_LEN>, unit: &mut [u8]) -> Result<(), Error> {
        self.decrypt(tweak, unit)
    }
}

impl core::fmt::Debug for Adiantum {
    /// Names the AES backend; prints no key material.
    ///
    /// ```
    /// let a = mdu_adiantum::Adiantum::new(&[0xab; 32])?;
    /// let s = format!("{a:?}");
    /// assert!(s.starts_with("Adiantum"));
    /// assert!(!s.contains("171"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Adiantum")
            .field("stream", &"XChaCha12")
            .field("aes_backend", &self.aes.backend())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod test_util {
    use alloc::vec::Vec;

    /// The bytes of a hex string.
    pub(crate) fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
