//! CBC with ciphertext stealing, variant CS3 (the kernel's `cts(cbc(aes))`,
//! Kerberos' AES-CTS of RFC 3962, NIST SP 800-38A Addendum CS3): a data
//! unit of any length from 16 bytes, ciphertext exactly as long as the
//! plaintext. fscrypt encrypts file names and symlink targets with it.
//!
//! For a unit of `L` bytes in `m = ⌈L/16⌉` blocks, the last one `r` bytes
//! long (1 to 16): the plaintext is zero-padded to `16m` bytes and
//! CBC-encrypted into `C1 .. Cm`; the output is `C1 .. C(m-2)`, `Cm`, then
//! the first `r` bytes of `C(m-1)`. The last two blocks are swapped even
//! when `L` is a multiple of 16; a single block (`L = 16`) is plain CBC.
//!
//! Both directions run through [`Cbc`]'s backends: all blocks but the last
//! as one CBC unit, the stolen block as one more.

use mdu_aes::crypto_common::{InvalidKey, Key, KeyInit, KeySizeUser, TryKeyInit};
use mdu_core::{DataUnitCipher, Error, Iv};

use crate::{Aes128, Aes256, Backend, Cbc, CbcMode, KeySize, SetupError};

/// AES-CBC-CS3 with AES key size `K`: the type behind [`AesCtsCbc128`] and
/// [`AesCtsCbc256`].
///
/// A data unit is any byte string of at least 16 bytes (and at most
/// [`DataUnitSize::MAX`](mdu_core::DataUnitSize::MAX)), encrypted in place
/// under its own IV. A request of many units (names of different lengths)
/// is one call per unit: CBC encryption of one unit is a single chain, and
/// fscrypt's names are at most 255 bytes, so a batch would gain nothing a
/// per-unit call does not have.
///
/// ```
/// use mdu_cbc::{Aes128, CtsCbc, Iv};
///
/// // RFC 3962, Appendix B: AES-128 key "chicken teriyaki", IV 0.
/// let cts = CtsCbc::<Aes128>::new(b"chicken teriyaki")?;
/// let mut msg = *b"I would like the ";
/// cts.encrypt(Iv::default(), &mut msg)?;
/// assert_eq!(msg[..4], [0xc6, 0x35, 0x35, 0x68]);
/// assert_eq!(msg[16], 0x97);
/// cts.decrypt(Iv::default(), &mut msg)?;
/// assert_eq!(&msg, b"I would like the ");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct CtsCbc<K: KeySize> {
    cbc: Cbc<K>,
}

/// AES-128-CBC-CS3: fscrypt's names mode 6 (`AES-128-CBC-CTS`).
///
/// ```
/// use mdu_cbc::{AesCtsCbc128, Iv};
///
/// let cts = AesCtsCbc128::new(&[1; 16])?;
/// let mut name = *b"twenty-byte name....";
/// cts.encrypt(Iv::default(), &mut name)?;
/// cts.decrypt(Iv::default(), &mut name)?;
/// assert_eq!(&name, b"twenty-byte name....");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type AesCtsCbc128 = CtsCbc<Aes128>;

/// AES-256-CBC-CS3: fscrypt's names mode 4 (`AES-256-CTS`), the names
/// mode of every default policy.
///
/// ```
/// use mdu_cbc::{AesCtsCbc256, Iv};
///
/// let cts = AesCtsCbc256::new(&[2; 32])?;
/// let mut name = [b'x'; 33];
/// cts.encrypt(Iv::default(), &mut name)?;
/// assert_ne!(name, [b'x'; 33]);
/// cts.decrypt(Iv::default(), &mut name)?;
/// assert_eq!(name, [b'x'; 33]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type AesCtsCbc256 = CtsCbc<Aes256>;

impl<K: KeySize> CtsCbc<K> {
    /// Expands `key` for the best CBC backend of this CPU.
    ///
    /// # Errors
    ///
    /// [`SetupError::InvalidKeyLength`] unless `key` is `K`'s length.
    ///
    /// ```
    /// use mdu_cbc::{AesCtsCbc256, SetupError};
    ///
    /// assert!(AesCtsCbc256::new(&[0; 32]).is_ok());
    /// assert_eq!(
    ///     AesCtsCbc256::new(&[0; 16]).unwrap_err(),
    ///     SetupError::InvalidKeyLength { len: 16, expected: 32 }
    /// );
    /// ```
    pub fn new(key: &[u8]) -> Result<Self, SetupError> {
        Ok(CtsCbc {
            cbc: Cbc::new(key)?,
        })
    }

    /// Expands `key` for the given CBC backend (for tests and
    /// benchmarks).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new), and [`SetupError::BackendUnavailable`] when
    /// this CPU cannot run `backend`.
    ///
    /// ```
    /// use mdu_cbc::{AesCtsCbc128, Backend};
    ///
    /// let cts = AesCtsCbc128::with_backend(&[0; 16], Backend::Generic)?;
    /// assert_eq!(cts.backend(), Backend::Generic);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_backend(key: &[u8], backend: Backend) -> Result<Self, SetupError> {
        Ok(CtsCbc {
            cbc: Cbc::with_backend(key, backend)?,
        })
    }

    /// The CBC backend this key runs on.
    ///
    /// ```
    /// use mdu_cbc::AesCtsCbc256;
    ///
    /// let cts = AesCtsCbc256::new(&[0; 32])?;
    /// assert!(mdu_cbc::Backend::available().contains(&cts.backend()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn backend(&self) -> Backend {
        self.cbc.backend()
    }

    /// Encrypts `buf` in place as one unit under `iv`.
    ///
    /// # Errors
    ///
    /// [`Error::UnitSizeOutOfRange`] if `buf` is shorter than 16 bytes or
    /// longer than 16 MiB; `buf` is then unchanged.
    ///
    /// ```
    /// use mdu_cbc::{AesCtsCbc256, Error, Iv};
    ///
    /// let cts = AesCtsCbc256::new(&[3; 32])?;
    /// let mut short = [0u8; 15];
    /// assert!(matches!(
    ///     cts.encrypt(Iv::default(), &mut short),
    ///     Err(Error::UnitSizeOutOfRange { size: 15, .. })
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn encrypt(&self, iv: Iv, buf: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(buf.len())?;
        let Some((full, r)) = split(buf.len()) else {
            return self.cbc.encrypt(iv, buf);
        };
        // C1 .. C(m-1).
        self.cbc.encrypt(iv, &mut buf[..full])?;
        let prev: [u8; 16] = block(&buf[full - 16..full]);
        // Cm = E(Pm padded with zeros ^ C(m-1)).
        let mut last = [0u8; 16];
        last[..r].copy_from_slice(&buf[full..]);
        self.cbc.encrypt(Iv(prev), &mut last)?;
        buf[full - 16..full].copy_from_slice(&last);
        buf[full..].copy_from_slice(&prev[..r]);
        Ok(())
    }

    /// Decrypts `buf` in place as one unit under `iv`.
    ///
    /// # Errors
    ///
    /// As for [`encrypt`](Self::encrypt).
    ///
    /// ```
    /// use mdu_cbc::{AesCtsCbc128, Iv};
    ///
    /// let cts = AesCtsCbc128::new(&[4; 16])?;
    /// let mut buf = *b"seventeen bytes!!";
    /// cts.encrypt(Iv::plain64(7), &mut buf)?;
    /// cts.decrypt(Iv::plain64(7), &mut buf)?;
    /// assert_eq!(&buf, b"seventeen bytes!!");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn decrypt(&self, iv: Iv, buf: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(buf.len())?;
        let Some((full, r)) = split(buf.len()) else {
            return self.cbc.decrypt(iv, buf);
        };
        // Z = D(Cm): CBC decryption of one block under a zero IV.
        let mut z: [u8; 16] = block(&buf[full - 16..full]);
        self.cbc.decrypt(Iv::default(), &mut z)?;
        // C(m-1) = Y || Z[r..]; Pm = Z[..r] ^ Y.
        let mut prev = z;
        prev[..r].copy_from_slice(&buf[full..]);
        for (p, y) in buf[full..].iter_mut().zip(&z[..r]) {
            *p ^= y;
        }
        buf[full - 16..full].copy_from_slice(&prev);
        self.cbc.decrypt(iv, &mut buf[..full])
    }
}

/// For a unit of `len >= 16` bytes in more than one block: the bytes of
/// all blocks but the last, and the length of the last (1 to 16).
fn split(len: usize) -> Option<(usize, usize)> {
    let blocks = len.div_ceil(16);
    (blocks > 1).then(|| {
        let full = 16 * (blocks - 1);
        (full, len - full)
    })
}

fn block(bytes: &[u8]) -> [u8; 16] {
    let mut b = [0u8; 16];
    b.copy_from_slice(bytes);
    b
}

impl<K: KeySize> DataUnitCipher for CtsCbc<K> {
    type Iv = Iv;

    #[inline]
    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.encrypt(iv, unit)
    }

    #[inline]
    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.decrypt(iv, unit)
    }
}

/// RustCrypto's key size: one AES key of size `K`.
///
/// ```
/// use mdu_cbc::crypto_common::KeySizeUser;
/// assert_eq!(mdu_cbc::AesCtsCbc256::key_size(), 32);
/// ```
impl<K: KeySize> KeySizeUser for CtsCbc<K> {
    type KeySize = K::Len;
}

/// RustCrypto's infallible construction: the key expanded for the best
/// CBC backend of this CPU, as [`new`](CtsCbc::new) does (no weak keys);
/// `new_from_slice` refuses a key of another length with `InvalidLength`.
///
/// ```
/// use mdu_cbc::crypto_common::KeyInit;
/// use mdu_cbc::{AesCtsCbc128, Iv};
///
/// let cts = <AesCtsCbc128 as KeyInit>::new(b"chicken teriyaki".into());
/// let mut msg = *b"I would like the ";
/// cts.encrypt(Iv::default(), &mut msg)?;
/// assert_eq!(msg[..4], [0xc6, 0x35, 0x35, 0x68]);
/// assert!(<AesCtsCbc128 as KeyInit>::new_from_slice(&[0; 32]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl<K: KeySize> KeyInit for CtsCbc<K> {
    fn new(key: &Key<Self>) -> Self {
        CtsCbc {
            cbc: <Cbc<K> as KeyInit>::new(key),
        }
    }
}

/// RustCrypto's fallible construction, as every cipher type of mdu has
/// it: never refuses a key of the right length; `new_from_slice` refuses
/// another length with `InvalidKey`.
///
/// ```
/// use mdu_cbc::AesCtsCbc256;
/// use mdu_cbc::crypto_common::TryKeyInit;
///
/// assert!(AesCtsCbc256::new_from_slice(&[4; 32]).is_ok());
/// assert!(AesCtsCbc256::new_from_slice(&[4; 16]).is_err());
/// ```
impl<K: KeySize> TryKeyInit for CtsCbc<K> {
    fn new(key: &Key<Self>) -> Result<Self, InvalidKey> {
        Ok(<Self as KeyInit>::new(key))
    }
}

/// The CBC key's round keys are zeroized on drop ([`Cbc`]'s).
///
/// ```
/// fn wipes<T: zeroize::ZeroizeOnDrop>(_: &T) {}
/// wipes(&mdu_cbc::AesCtsCbc128::new(&[1; 16])?);
/// # Ok::<(), mdu_cbc::SetupError>(())
/// ```
impl<K: KeySize> zeroize::ZeroizeOnDrop for CtsCbc<K> {}

impl<K: KeySize> core::fmt::Debug for CtsCbc<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CtsCbc")
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}

/// The shape every cipher keyed for one AES backend shares: the shared
/// conformance checks (`mdu_aes::testing`) run on CBC-CS3 too.
///
/// ```
/// use mdu_aes::WithBackend;
/// use mdu_cbc::{AesCtsCbc128, Backend};
///
/// let c = <AesCtsCbc128 as WithBackend>::with_backend(&[1; 16], Backend::Generic)?;
/// assert_eq!(WithBackend::backend(&c), Backend::Generic);
/// # Ok::<(), mdu_cbc::SetupError>(())
/// ```
impl<K: KeySize> mdu_aes::WithBackend for CtsCbc<K> {
    type Mode = CbcMode;
    const KEY_LEN: usize = K::LEN;

    fn new(key: &[u8]) -> Result<Self, SetupError> {
        CtsCbc::new(key)
    }

    fn with_backend(key: &[u8], backend: Backend) -> Result<Self, SetupError> {
        CtsCbc::with_backend(key, backend)
    }

    fn backend(&self) -> Backend {
        CtsCbc::backend(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// RFC 3962, Appendix B: AES-128 "chicken teriyaki", IV zero.
    const RFC3962: [(&str, &str); 6] = [
        ("I would like the ", "c6353568f2bf8cb4d8a580362da7ff7f97"),
        (
            "I would like the General Gau's ",
            "fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5",
        ),
        (
            "I would like the General Gau's C",
            "39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584",
        ),
        (
            "I would like the General Gau's Chicken, please,",
            "97687268d6ecccc0c07b25e25ecfe584b3fffd940c16a18c1b5549d2f838029e\
             39312523a78662d5be7fcbcc98ebf5",
        ),
        (
            "I would like the General Gau's Chicken, please, ",
            "97687268d6ecccc0c07b25e25ecfe5849dad8bbb96c4cdc03bc103e1a194bbd8\
             39312523a78662d5be7fcbcc98ebf5a8",
        ),
        (
            "I would like the General Gau's Chicken, please, and wonton soup.",
            "97687268d6ecccc0c07b25e25ecfe58439312523a78662d5be7fcbcc98ebf5a8\
             4807efe836ee89a526730dbc2f7bc8409dad8bbb96c4cdc03bc103e1a194bbd8",
        ),
    ];

    fn hex(s: &str) -> Vec<u8> {
        let s: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        s.chunks(2)
            .map(|p| u8::from_str_radix(core::str::from_utf8(p).unwrap(), 16).unwrap())
            .collect()
    }

    #[test]
    fn rfc3962_vectors_on_every_backend() {
        for &backend in Backend::available() {
            let cts = AesCtsCbc128::with_backend(b"chicken teriyaki", backend).unwrap();
            for (plain, cipher) in RFC3962 {
                let mut buf = plain.as_bytes().to_vec();
                cts.encrypt(Iv::default(), &mut buf).unwrap();
                assert_eq!(buf, hex(cipher), "{backend}: {} bytes", plain.len());
                cts.decrypt(Iv::default(), &mut buf).unwrap();
                assert_eq!(buf, plain.as_bytes(), "{backend}: {} bytes", plain.len());
            }
        }
    }

    #[test]
    fn short_units_are_refused_and_left_alone() {
        let cts = AesCtsCbc256::new(&[9; 32]).unwrap();
        for len in 0..16 {
            let mut buf = [0x5a; 15];
            let buf = &mut buf[..len];
            assert!(matches!(
                cts.encrypt(Iv::default(), buf),
                Err(Error::UnitSizeOutOfRange { size, min: 16, .. }) if size == len
            ));
            assert!(cts.decrypt(Iv::default(), buf).is_err());
            assert!(buf.iter().all(|&b| b == 0x5a));
        }
    }
}
