//! AES-HCTR2: a length-preserving, tweakable wide-block cipher (Crowley,
//! Huckleberry and Biggers, 2021), as the kernel's `hctr2(aes)` runs it and
//! fscrypt uses it for file names (names mode 10, `AES-256-HCTR2`).
//!
//! A message of any length from 16 bytes is one block: changing any bit of
//! the plaintext or of the tweak changes every byte of the ciphertext, and
//! the ciphertext is exactly as long as the plaintext. For a message
//! `P = M ‖ N` (`M` its first 16 bytes) under tweak `T`, with the AES key
//! `K`, the hash key `h = E_K(0)` and `L = E_K(1)` (both little-endian
//! 128-bit numbers):
//!
//! ```text
//! MM = M ⊕ H(T, N)         H: POLYVAL under h over a length block, T, N
//! UU = E_K(MM)
//! S  = MM ⊕ UU ⊕ L
//! V  = N ⊕ XCTR_K(S)       XCTR: block i (from 1) is E_K(S ⊕ le128(i))
//! U  = UU ⊕ H(T, V)
//! C  = U ‖ V
//! ```
//!
//! The hash `H(T, X)` is POLYVAL over `le128(2·bits(T) + 2)`, `T`
//! zero-padded to whole blocks, and `X`; when `X` is not a whole number of
//! blocks the length block is `le128(2·bits(T) + 3)` and `X` is padded
//! with one `0x01` byte and zeros. Decryption runs the same steps
//! backwards with `D_K`.
//!
//! [`Hctr2`] implements [`DataUnitCipher`] with the kernel's 32-byte tweak
//! ([`Iv<32>`](Iv)); [`Hctr2::encrypt_with_tweak`] takes a tweak of any
//! length, as the algorithm does. The XCTR keystream is batched AES on the
//! best backend of this CPU (`mdu-aes`: VAES, AES-NI, the Armv8 Crypto
//! Extensions or portable code, chosen once per key); POLYVAL picks CLMUL,
//! PMULL or portable code at run time. The round keys, the hash key and
//! `L` are wiped on drop.
//!
//! # Example: an fscrypt file name
//!
//! ```
//! use mdu_hctr2::{Hctr2Aes256, Iv};
//!
//! let names = Hctr2Aes256::new(&[0x5a; 32])?;
//! // Names are NUL-padded to at least 16 bytes; per-file keys use a zero tweak.
//! let mut name = *b"holiday-photos-2026.tar\0\0\0\0\0\0\0\0\0";
//! names.encrypt(Iv::ZERO, &mut name)?;
//! assert_ne!(&name[..7], b"holiday");
//! names.decrypt(Iv::ZERO, &mut name)?;
//! assert_eq!(&name[..23], b"holiday-photos-2026.tar");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! * `std` (default): `std::error::Error` for [`Error`] and
//!   [`SetupError`], CPU detection through the standard library. Without
//!   it the crate is `no_std` (with `alloc`: the AES round keys live on the
//!   heap).
#![no_std]
#![deny(unsafe_code)]

use mdu_aes::crypto_common::{InvalidKey, Key, KeyInit, KeySizeUser, TryKeyInit};
use mdu_aes::{Ecb, EcbMode};
use polyval::Polyval;
use polyval::universal_hash::UniversalHash;
use zeroize::Zeroize;

pub use mdu_aes::{Aes128, Aes256, KeySize, SetupError, crypto_common};
pub use mdu_core::{DataUnitCipher, DataUnitSize, DataUnits, Direction, Error, Iv};

/// The AES backend the XCTR keystream and the wide-block step run on.
///
/// ```
/// use mdu_hctr2::Backend;
///
/// assert!(Backend::available().contains(&Backend::detect()));
/// ```
pub type Backend = mdu_aes::Backend<EcbMode>;

/// The kernel's (and fscrypt's) HCTR2 tweak length, in bytes.
///
/// ```
/// assert_eq!(mdu_hctr2::TWEAK_LEN, 32);
/// ```
pub const TWEAK_LEN: usize = 32;

/// Blocks of XCTR keystream made per batch of AES (512 bytes of stack):
/// enough for the 8-lane AES paths, and a 255-byte name is one batch.
const BATCH_BLOCKS: usize = 32;

/// AES-HCTR2 with AES key size `K`: the type behind [`Hctr2Aes128`] and
/// [`Hctr2Aes256`].
///
/// A data unit is any byte string of 16 bytes to
/// [`DataUnitSize::MAX`](mdu_core::DataUnitSize::MAX), encrypted in place
/// as one wide block under its own tweak. A request of many units is one
/// call per unit (the many-unit methods of [`DataUnitCipher`] split it):
/// HCTR2 has no chaining between units for a batch to hide, and its AES
/// work within a unit is already batched.
///
/// ```
/// use mdu_hctr2::{Aes128, Hctr2, Iv};
///
/// let c = Hctr2::<Aes128>::new(&[1; 16])?;
/// let mut buf = [7u8; 40];
/// c.encrypt(Iv::from_low_u128(9), &mut buf)?;
/// c.decrypt(Iv::from_low_u128(9), &mut buf)?;
/// assert_eq!(buf, [7u8; 40]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Hctr2<K: KeySize> {
    aes: Ecb<K>,
    /// POLYVAL keyed with `h = E_K(0)`, before any block: each hash starts
    /// from a clone.
    hash: Polyval,
    /// `L = E_K(1)`.
    l: [u8; 16],
}

/// AES-128-HCTR2 (16-byte key).
///
/// ```
/// use mdu_hctr2::{Hctr2Aes128, Iv};
///
/// let c = Hctr2Aes128::new(&[2; 16])?;
/// let mut buf = [0u8; 16];
/// c.encrypt(Iv::ZERO, &mut buf)?;
/// assert_ne!(buf, [0u8; 16]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type Hctr2Aes128 = Hctr2<Aes128>;

/// AES-256-HCTR2 (32-byte key): fscrypt's names mode 10.
///
/// ```
/// use mdu_hctr2::{Hctr2Aes256, Iv};
///
/// let c = Hctr2Aes256::new(&[3; 32])?;
/// let mut buf = [0u8; 255];
/// c.encrypt(Iv::ZERO, &mut buf)?;
/// c.decrypt(Iv::ZERO, &mut buf)?;
/// assert_eq!(buf, [0u8; 255]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type Hctr2Aes256 = Hctr2<Aes256>;

impl<K: KeySize> Hctr2<K> {
    /// Expands `key` (16 bytes for [`Aes128`], 32 for [`Aes256`]) for the
    /// best AES backend of this CPU.
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] unless `key` is `K`'s length.
    ///
    /// ```
    /// use mdu_hctr2::{Hctr2Aes256, SetupError};
    ///
    /// assert!(Hctr2Aes256::new(&[0; 32]).is_ok());
    /// assert_eq!(
    ///     Hctr2Aes256::new(&[0; 16]).err(),
    ///     Some(SetupError::InvalidKeyLength { len: 16, expected: 32 })
    /// );
    /// ```
    pub fn new(key: &[u8]) -> Result<Self, SetupError> {
        Self::with_backend(key, Backend::detect())
    }

    /// Expands `key` for the given AES backend (for tests and benchmarks).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), and [`SetupError::BackendUnavailable`] when
    /// this CPU cannot run `backend`.
    ///
    /// ```
    /// use mdu_hctr2::{Backend, Hctr2Aes256};
    ///
    /// let c = Hctr2Aes256::with_backend(&[0; 32], Backend::Generic)?;
    /// assert_eq!(c.backend(), Backend::Generic);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_backend(key: &[u8], backend: Backend) -> Result<Self, SetupError> {
        Ok(Self::from_aes(Ecb::with_backend(key, backend)?))
    }

    /// The hash key and `L` of the AES key `aes`.
    fn from_aes(aes: Ecb<K>) -> Self {
        // h = E_K(le128(0)), L = E_K(le128(1)).
        let mut hl = [0u8; 32];
        hl[16] = 1;
        aes.encrypt_blocks(&mut hl);
        let mut h = [0u8; 16];
        let mut l = [0u8; 16];
        h.copy_from_slice(&hl[..16]);
        l.copy_from_slice(&hl[16..]);
        let hash = Polyval::new(&h.into());
        hl.zeroize();
        h.zeroize();
        Hctr2 { aes, hash, l }
    }

    /// The AES backend this key runs on.
    ///
    /// ```
    /// use mdu_hctr2::{Backend, Hctr2Aes128};
    ///
    /// let c = Hctr2Aes128::new(&[0; 16])?;
    /// assert_eq!(c.backend(), Backend::detect());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn backend(&self) -> Backend {
        self.aes.backend()
    }

    /// Encrypts `buf` in place as one wide block under a 32-byte tweak.
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeOutOfRange`] if `buf` is shorter than 16 bytes or
    /// longer than 16 MiB; `buf` is then unchanged.
    ///
    /// ```
    /// use mdu_hctr2::{Error, Hctr2Aes256, Iv};
    ///
    /// let c = Hctr2Aes256::new(&[4; 32])?;
    /// let mut short = [0u8; 15];
    /// assert!(matches!(
    ///     c.encrypt(Iv::ZERO, &mut short),
    ///     Err(Error::UnitSizeOutOfRange { size: 15, .. })
    /// ));
    /// assert_eq!(short, [0u8; 15]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt(&self, tweak: Iv<TWEAK_LEN>, buf: &mut [u8]) -> Result<(), Error> {
        self.encrypt_with_tweak(&tweak.0, buf)
    }

    /// Decrypts `buf` in place as one wide block under a 32-byte tweak.
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_hctr2::{Hctr2Aes256, Iv};
    ///
    /// let c = Hctr2Aes256::new(&[5; 32])?;
    /// let mut buf = *b"seventeen bytes!!";
    /// c.encrypt(Iv::from_low_u128(3), &mut buf)?;
    /// c.decrypt(Iv::from_low_u128(3), &mut buf)?;
    /// assert_eq!(&buf, b"seventeen bytes!!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decrypt(&self, tweak: Iv<TWEAK_LEN>, buf: &mut [u8]) -> Result<(), Error> {
        self.decrypt_with_tweak(&tweak.0, buf)
    }

    /// Encrypts `buf` in place under a tweak of any length (HCTR2 defines
    /// one for every length; the kernel's is 32 bytes).
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_hctr2::{Hctr2Aes128, Iv};
    ///
    /// let c = Hctr2Aes128::new(&[6; 16])?;
    /// let (mut a, mut b) = ([0u8; 20], [0u8; 20]);
    /// c.encrypt_with_tweak(&[0u8; 32], &mut a)?;
    /// c.encrypt(Iv::ZERO, &mut b)?;
    /// assert_eq!(a, b);
    /// // The tweak's length is part of the hash: no tweak is another one.
    /// c.encrypt_with_tweak(&[], &mut b)?;
    /// assert_ne!(a, b);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt_with_tweak(&self, tweak: &[u8], buf: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(buf.len())?;
        let (m, n) = buf.split_at_mut(16);
        let mut mm = xor(m, &self.hash(tweak, n));
        let mut uu = mm;
        self.aes.encrypt_blocks(&mut uu);
        let mut s = xor(&xor(&mm, &uu), &self.l);
        self.xctr(&s, n);
        m.copy_from_slice(&xor(&uu, &self.hash(tweak, n)));
        mm.zeroize();
        uu.zeroize();
        s.zeroize();
        Ok(())
    }

    /// Decrypts `buf` in place under a tweak of any length.
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_hctr2::Hctr2Aes256;
    ///
    /// let c = Hctr2Aes256::new(&[7; 32])?;
    /// let mut buf = [9u8; 100];
    /// c.encrypt_with_tweak(b"a tweak of 19 bytes", &mut buf)?;
    /// c.decrypt_with_tweak(b"a tweak of 19 bytes", &mut buf)?;
    /// assert_eq!(buf, [9u8; 100]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decrypt_with_tweak(&self, tweak: &[u8], buf: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(buf.len())?;
        let (u, v) = buf.split_at_mut(16);
        let mut uu = xor(u, &self.hash(tweak, v));
        let mut mm = uu;
        self.aes.decrypt_blocks(&mut mm);
        let mut s = xor(&xor(&mm, &uu), &self.l);
        self.xctr(&s, v);
        u.copy_from_slice(&xor(&mm, &self.hash(tweak, v)));
        mm.zeroize();
        uu.zeroize();
        s.zeroize();
        Ok(())
    }

    /// `H(T, X)`: POLYVAL over the length block, the padded tweak and the
    /// padded message.
    fn hash(&self, tweak: &[u8], msg: &[u8]) -> [u8; 16] {
        let mut p = self.hash.clone();
        let tail = msg.len() % 16;
        // 2·bits(T) + 2, + 1 when the message is not whole blocks. A tweak
        // is a slice, so its bit length fits in u128 without overflow.
        let lengths = (tweak.len() as u128) * 16 + 2 + u128::from(tail != 0);
        p.update(&[lengths.to_le_bytes().into()]);
        p.update_padded(tweak);
        let whole = msg.len() - tail;
        p.update_padded(&msg[..whole]);
        if tail != 0 {
            let mut last = [0u8; 16];
            last[..tail].copy_from_slice(&msg[whole..]);
            last[tail] = 1;
            p.update(&[last.into()]);
            last.zeroize();
        }
        p.finalize().into()
    }

    /// XORs `data` with the XCTR keystream of `s`: block `i` (from 1) is
    /// `E_K(s ⊕ le128(i))`.
    fn xctr(&self, s: &[u8; 16], data: &mut [u8]) {
        let s = u128::from_le_bytes(*s);
        let mut ks = [0u8; BATCH_BLOCKS * 16];
        let mut counter: u128 = 1;
        let mut used = 0;
        for chunk in data.chunks_mut(BATCH_BLOCKS * 16) {
            let blocks = chunk.len().div_ceil(16);
            used = used.max(blocks * 16);
            for block in ks[..blocks * 16].chunks_exact_mut(16) {
                block.copy_from_slice(&(s ^ counter).to_le_bytes());
                counter += 1;
            }
            self.aes.encrypt_blocks(&mut ks[..blocks * 16]);
            for (d, k) in chunk.iter_mut().zip(&ks) {
                *d ^= k;
            }
        }
        // Only the bytes a keystream was written to need wiping.
        ks[..used].zeroize();
    }
}

/// `a ⊕ b` for two 16-byte blocks (`a` may be a slice of 16 bytes).
fn xor(a: &[u8], b: &[u8; 16]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x ^ y;
    }
    out
}

impl<K: KeySize> Clone for Hctr2<K> {
    fn clone(&self) -> Self {
        Hctr2 {
            aes: self.aes.clone(),
            hash: self.hash.clone(),
            l: self.l,
        }
    }
}

impl<K: KeySize> Drop for Hctr2<K> {
    fn drop(&mut self) {
        // The round keys and POLYVAL's key wipe themselves.
        self.l.zeroize();
    }
}

/// RustCrypto's key size: one AES key of size `K`.
///
/// ```
/// use mdu_hctr2::crypto_common::KeySizeUser;
/// assert_eq!(mdu_hctr2::Hctr2Aes256::key_size(), 32);
/// ```
impl<K: KeySize> KeySizeUser for Hctr2<K> {
    type KeySize = K::Len;
}

/// RustCrypto's infallible construction: the key expanded for the best
/// AES backend of this CPU, as [`new`](Hctr2::new) does (HCTR2 has no
/// weak keys); `new_from_slice` refuses a key of another length with
/// `InvalidLength`.
///
/// ```
/// use mdu_hctr2::crypto_common::KeyInit;
/// use mdu_hctr2::{Hctr2Aes256, Iv};
///
/// let key = [0x5a; 32];
/// let names = Hctr2Aes256::new_from_slice(&key).unwrap();
/// let mut a = *b"holiday-photos-2026.tar\0\0\0\0\0\0\0\0\0";
/// let mut b = a;
/// names.encrypt(Iv::ZERO, &mut a)?;
/// Hctr2Aes256::new(&key)?.encrypt(Iv::ZERO, &mut b)?;
/// assert_eq!(a, b);
/// assert!(Hctr2Aes256::new_from_slice(&key[..16]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<K: KeySize> KeyInit for Hctr2<K> {
    fn new(key: &Key<Self>) -> Self {
        Self::from_aes(<Ecb<K> as KeyInit>::new(key))
    }
}

/// RustCrypto's fallible construction, as every cipher type of mdu has
/// it: never refuses a key of the right length; `new_from_slice` refuses
/// another length with `InvalidKey`.
///
/// ```
/// use mdu_hctr2::Hctr2Aes128;
/// use mdu_hctr2::crypto_common::TryKeyInit;
///
/// assert!(Hctr2Aes128::new_from_slice(&[1; 16]).is_ok());
/// assert!(Hctr2Aes128::new_from_slice(&[1; 32]).is_err());
/// ```
impl<K: KeySize> TryKeyInit for Hctr2<K> {
    fn new(key: &Key<Self>) -> Result<Self, InvalidKey> {
        Ok(<Self as KeyInit>::new(key))
    }
}

/// The AES round keys, POLYVAL's hash key and `L` are zeroized on drop.
///
/// ```
/// fn wipes<T: zeroize::ZeroizeOnDrop>(_: &T) {}
/// wipes(&mdu_hctr2::Hctr2Aes256::new(&[1; 32])?);
/// # Ok::<(), mdu_hctr2::SetupError>(())
/// ```
impl<K: KeySize> zeroize::ZeroizeOnDrop for Hctr2<K> {}

/// Prints the backend only, never key material.
///
/// ```
/// let c = mdu_hctr2::Hctr2Aes256::new(&[0; 32])?;
/// assert!(format!("{c:?}").starts_with("Hctr2 {"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<K: KeySize> core::fmt::Debug for Hctr2<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hctr2")
            .field("key_bytes", &K::LEN)
            .field("backend", &self.backend())
            .finish()
    }
}

/// The shape every cipher keyed for one AES backend shares: the shared
/// conformance checks (`mdu_aes::testing`) run on HCTR2 too.
///
/// ```
/// use mdu_aes::WithBackend;
/// use mdu_hctr2::{Backend, Hctr2Aes256};
///
/// assert_eq!(<Hctr2Aes256 as WithBackend>::KEY_LEN, 32);
/// let c = <Hctr2Aes256 as WithBackend>::with_backend(&[1; 32], Backend::Generic)?;
/// assert_eq!(WithBackend::backend(&c), Backend::Generic);
/// # Ok::<(), mdu_hctr2::SetupError>(())
/// ```
impl<K: KeySize> mdu_aes::WithBackend for Hctr2<K> {
    type Mode = EcbMode;
    const KEY_LEN: usize = K::LEN;

    fn new(key: &[u8]) -> Result<Self, SetupError> {
        Hctr2::new(key)
    }

    fn with_backend(key: &[u8], backend: Backend) -> Result<Self, SetupError> {
        Hctr2::with_backend(key, backend)
    }

    fn backend(&self) -> Backend {
        Hctr2::backend(self)
    }
}

/// One wide block per data unit, under its 32-byte tweak.
///
/// ```
/// use mdu_hctr2::{DataUnits, Hctr2Aes256, Iv};
///
/// // Three 4 KiB units with consecutive tweaks (a little-endian counter).
/// let units = DataUnits::new(Hctr2Aes256::new(&[8; 32])?, 4096)?;
/// let mut buf = vec![0u8; 3 * 4096];
/// units.encrypt(Iv::from_low_u128(10), &mut buf)?;
/// let mut third = vec![0u8; 4096];
/// units.cipher().encrypt(Iv::from_low_u128(12), &mut third)?;
/// assert_eq!(&buf[8192..], &third[..]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<K: KeySize> DataUnitCipher for Hctr2<K> {
    type Iv = Iv<TWEAK_LEN>;

    fn encrypt_unit(&self, iv: Iv<TWEAK_LEN>, unit: &mut [u8]) -> Result<(), Error> {
        self.encrypt(iv, unit)
    }

    fn decrypt_unit(&self, iv: Iv<TWEAK_LEN>, unit: &mut [u8]) -> Result<(), Error> {
        self.decrypt(iv, unit)
    }
}

// The README's example runs with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
