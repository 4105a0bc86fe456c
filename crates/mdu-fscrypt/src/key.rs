//! Master keys and the keys derived from them, exactly as the kernel
//! derives them.
//!
//! * **v2**: HKDF-SHA512 with no salt over the master key; every use has
//!   its own info, `"fscrypt\0"`, a context byte and the use's own bytes:
//!
//!   | context | use | info after the context byte |
//!   |---|---|---|
//!   | 1 | the key identifier (16 bytes) | none |
//!   | 2 | a per-file key | the inode's nonce |
//!   | 3 | a DIRECT_KEY per-mode key | the mode |
//!   | 4 | an IV_INO_LBLK_64 per-mode key | the mode, the file system UUID |
//!   | 6 | an IV_INO_LBLK_32 per-mode key | the mode, the file system UUID |
//!   | 7 | the inode-number hash key (16 bytes) | none |
//!
//! * **v1**: the per-file key is the master key's first bytes encrypted
//!   with AES-128-ECB under the inode's nonce; DIRECT_KEY uses the master
//!   key's first bytes as they are.
//!
//! Every key lives in memory that is zeroed when it is dropped.

use alloc::vec::Vec;
use core::fmt;

use hkdf::Hkdf;
use sha2::{Digest, Sha512};
use siphasher::sip::SipHasher24;
use zeroize::Zeroizing;

use crate::policy::{KeySpec, Mode, Policy};

/// HKDF contexts (`HKDF_CONTEXT_*` in the kernel).
mod context {
    pub(super) const KEY_IDENTIFIER: u8 = 1;
    pub(super) const PER_FILE_KEY: u8 = 2;
    pub(super) const DIRECT_KEY: u8 = 3;
    pub(super) const IV_INO_LBLK_64_KEY: u8 = 4;
    pub(super) const IV_INO_LBLK_32_KEY: u8 = 6;
    pub(super) const INODE_HASH_KEY: u8 = 7;
}

/// The shortest master key the kernel accepts.
pub const MASTER_KEY_MIN: usize = 16;
/// The longest master key the kernel accepts.
pub const MASTER_KEY_MAX: usize = 64;

/// A raw fscrypt master key, 16 to 64 bytes, zeroed on drop.
///
/// ```
/// use mdu_fscrypt::key::MasterKey;
///
/// let bytes: Vec<u8> = (0u8..64).collect();
/// let key = MasterKey::new(&bytes)?;
/// // The identifier the kernel reports for this key (FS_IOC_ADD_ENCRYPTION_KEY).
/// assert_eq!(key.identifier().to_string(), "8699c2c53707405da5aba5ae4d8583c0");
/// # Ok::<(), mdu_fscrypt::key::KeyError>(())
/// ```
#[derive(Clone)]
pub struct MasterKey {
    raw: Zeroizing<Vec<u8>>,
}

impl MasterKey {
    /// A master key from its raw bytes.
    ///
    /// # Errors
    ///
    /// [`KeyError::MasterKeyLength`] unless `raw` is 16 to 64 bytes.
    ///
    /// ```
    /// use mdu_fscrypt::key::{KeyError, MasterKey};
    /// assert!(matches!(MasterKey::new(&[0; 15]), Err(KeyError::MasterKeyLength { len: 15 })));
    /// ```
    pub fn new(raw: &[u8]) -> Result<MasterKey, KeyError> {
        if !(MASTER_KEY_MIN..=MASTER_KEY_MAX).contains(&raw.len()) {
            return Err(KeyError::MasterKeyLength { len: raw.len() });
        }
        Ok(MasterKey {
            raw: Zeroizing::new(raw.to_vec()),
        })
    }

    /// The key's length in bytes.
    ///
    /// ```
    /// use mdu_fscrypt::key::MasterKey;
    /// assert_eq!(MasterKey::new(&[1; 32])?.len(), 32);
    /// # Ok::<(), mdu_fscrypt::key::KeyError>(())
    /// ```
    #[allow(clippy::len_without_is_empty)] // never empty
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// The v2 key identifier: what a v2 policy names and what the kernel
    /// returns when the key is added.
    ///
    /// See [`MasterKey`].
    pub fn identifier(&self) -> KeyIdentifier {
        let mut id = [0u8; 16];
        self.hkdf(context::KEY_IDENTIFIER, &[], &mut id);
        KeyIdentifier(id)
    }

    /// The conventional v1 key descriptor of this key (the first 8 bytes
    /// of SHA-512(SHA-512(key)), as `e4crypt` and `fscrypt` compute it).
    /// A v1 descriptor is whatever its owner chose, so this is only a
    /// guess to check a key against.
    ///
    /// ```
    /// use mdu_fscrypt::key::MasterKey;
    /// let bytes: Vec<u8> = (0x40u8..0x80).collect();
    /// assert_eq!(MasterKey::new(&bytes)?.v1_descriptor(), [0x73, 0xcc, 0x4d, 0x88, 0x26, 0x31, 0xf1, 0xd5]);
    /// # Ok::<(), mdu_fscrypt::key::KeyError>(())
    /// ```
    pub fn v1_descriptor(&self) -> [u8; 8] {
        let once: Zeroizing<[u8; 64]> = Zeroizing::new(Sha512::digest(&self.raw[..]).into());
        let twice = Sha512::digest(&once[..]);
        let mut d = [0u8; 8];
        d.copy_from_slice(&twice[..8]);
        d
    }

    /// HKDF-SHA512-Expand of this key under `"fscrypt\0" || ctx || info`.
    fn hkdf(&self, ctx: u8, info: &[&[u8]], out: &mut [u8]) {
        let hk = Hkdf::<Sha512>::new(None, &self.raw);
        let mut parts: [&[u8]; 4] = [b"fscrypt\0", core::slice::from_ref(&ctx), &[], &[]];
        for (slot, part) in parts[2..].iter_mut().zip(info) {
            *slot = part;
        }
        // The longest output is a 64-byte key, far below HKDF's limit.
        hk.expand_multi_info(&parts, out)
            .expect("fscrypt keys are at most 64 bytes");
    }

    /// Checks that this key is the one `policy` names: for v2 its
    /// identifier; a v1 descriptor is not derived from the key, so for v1
    /// only the length is checked.
    ///
    /// # Errors
    ///
    /// [`KeyError::WrongKey`] naming both identifiers;
    /// [`KeyError::MasterKeyTooShort`] when the key is shorter than the
    /// policy's modes need.
    ///
    /// ```
    /// use mdu_fscrypt::key::{KeyError, MasterKey};
    /// use mdu_fscrypt::policy::{Flags, KeySpec, Mode, Policy};
    ///
    /// let key = MasterKey::new(&[5; 32])?;
    /// let policy = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::default(), 0,
    ///     KeySpec::V2 { identifier: [0; 16] }).unwrap();
    /// assert!(matches!(key.check(&policy), Err(KeyError::WrongKey { .. })));
    /// # Ok::<(), KeyError>(())
    /// ```
    pub fn check(&self, policy: &Policy) -> Result<(), KeyError> {
        let need = match policy.key() {
            KeySpec::V1 { .. } => policy
                .contents()
                .key_len()
                .max(policy.filenames().key_len()),
            KeySpec::V2 { .. } => policy
                .contents()
                .min_master_key_len_v2()
                .max(policy.filenames().min_master_key_len_v2()),
        };
        if self.len() < need {
            return Err(KeyError::MasterKeyTooShort {
                len: self.len(),
                need,
            });
        }
        if let KeySpec::V2 { identifier } = policy.key() {
            let given = self.identifier();
            if given.0 != identifier {
                return Err(KeyError::WrongKey {
                    expected: KeyIdentifier(identifier),
                    given,
                });
            }
        }
        Ok(())
    }

    /// The key of `mode` for one inode of `policy`, as the kernel derives
    /// it: a per-file key from `nonce`, or the per-mode key of a
    /// DIRECT_KEY or IV_INO_LBLK policy (which takes the file system's
    /// `fs_uuid`).
    ///
    /// The key is not checked against the policy; see
    /// [`check`](Self::check).
    ///
    /// # Errors
    ///
    /// [`KeyError::MasterKeyTooShort`] for a v1 key shorter than the mode's
    /// key.
    ///
    /// ```
    /// use mdu_fscrypt::key::MasterKey;
    /// use mdu_fscrypt::policy::{Flags, KeySpec, Mode, Policy};
    ///
    /// let master = MasterKey::new(&(0u8..64).collect::<Vec<_>>())?;
    /// let policy = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::from_bits(3).unwrap(), 0,
    ///     KeySpec::V2 { identifier: master.identifier().0 }).unwrap();
    /// let nonce = [0x82, 0x70, 0x92, 0x20, 0x64, 0x9b, 0xa1, 0x90,
    ///              0xf6, 0x48, 0xf6, 0x8a, 0x5f, 0xf1, 0xea, 0xba];
    /// let key = master.derive(&policy, Mode::Aes256Cts, &nonce, &[0; 16])?;
    /// assert_eq!(key.as_bytes()[..4], [0xad, 0xa2, 0x60, 0x1c]);
    /// # Ok::<(), mdu_fscrypt::key::KeyError>(())
    /// ```
    pub fn derive(
        &self,
        policy: &Policy,
        mode: Mode,
        nonce: &[u8; 16],
        fs_uuid: &[u8; 16],
    ) -> Result<DerivedKey, KeyError> {
        let len = mode.key_len();
        let mut key = DerivedKey {
            bytes: Zeroizing::new([0u8; 64]),
            len,
        };
        let out = &mut key.bytes[..len];
        let flags = policy.flags();
        match policy.key() {
            KeySpec::V1 { .. } => {
                if self.len() < len {
                    return Err(KeyError::MasterKeyTooShort {
                        len: self.len(),
                        need: len,
                    });
                }
                out.copy_from_slice(&self.raw[..len]);
                if !flags.direct_key() {
                    // AES-128-ECB under the nonce, the master key as the
                    // plaintext; every mode's key is whole blocks.
                    let ecb = mdu_aes::Ecb::<mdu_aes::Aes128>::new(nonce)
                        .expect("a nonce is a 16-byte AES-128 key");
                    ecb.encrypt_blocks(out);
                }
            }
            KeySpec::V2 { .. } => {
                let m = [mode.as_u8()];
                if flags.direct_key() {
                    self.hkdf(context::DIRECT_KEY, &[&m], out);
                } else if flags.iv_ino_lblk_64() {
                    self.hkdf(context::IV_INO_LBLK_64_KEY, &[&m, fs_uuid], out);
                } else if flags.iv_ino_lblk_32() {
                    self.hkdf(context::IV_INO_LBLK_32_KEY, &[&m, fs_uuid], out);
                } else {
                    self.hkdf(context::PER_FILE_KEY, &[nonce], out);
                }
            }
        }
        Ok(key)
    }

    /// The IV_INO_LBLK_32 inode-number hash key (HKDF context 7), a
    /// SipHash-2-4 key.
    ///
    /// ```
    /// use mdu_fscrypt::key::MasterKey;
    /// let master = MasterKey::new(&(0u8..64).collect::<Vec<_>>())?;
    /// let k = master.inode_hash_key();
    /// assert_eq!(k.hash(31), 0xfc39_adbd);
    /// # Ok::<(), mdu_fscrypt::key::KeyError>(())
    /// ```
    pub fn inode_hash_key(&self) -> InodeHashKey {
        let mut k = Zeroizing::new([0u8; 16]);
        self.hkdf(context::INODE_HASH_KEY, &[], &mut k[..]);
        InodeHashKey(k)
    }
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MasterKey")
            .field("len", &self.len())
            .field("identifier", &self.identifier())
            .finish_non_exhaustive()
    }
}

/// A v2 key identifier (16 bytes), shown in lowercase hex.
///
/// See [`MasterKey`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyIdentifier(pub [u8; 16]);

impl fmt::Display for KeyIdentifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// A key derived for one mode (a per-file or per-mode key), zeroed on
/// drop.
///
/// See [`MasterKey::derive`].
#[derive(Clone)]
pub struct DerivedKey {
    bytes: Zeroizing<[u8; 64]>,
    len: usize,
}

impl DerivedKey {
    /// The key bytes (the mode's key length).
    ///
    /// See [`MasterKey::derive`].
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl fmt::Debug for DerivedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DerivedKey")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// The SipHash-2-4 key of IV_INO_LBLK_32 policies, zeroed on drop.
///
/// See [`MasterKey::inode_hash_key`].
#[derive(Clone)]
pub struct InodeHashKey(Zeroizing<[u8; 16]>);

impl InodeHashKey {
    /// The inode number's hash as IV_INO_LBLK_32 adds it to data-unit
    /// indices: the low 32 bits of SipHash-2-4 of `le64(ino)`.
    ///
    /// See [`MasterKey::inode_hash_key`].
    pub fn hash(&self, ino: u64) -> u32 {
        SipHasher24::new_with_key(&self.0).hash(&ino.to_le_bytes()) as u32
    }
}

impl fmt::Debug for InodeHashKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InodeHashKey { .. }")
    }
}

/// Why a key could not be used.
///
/// ```
/// use mdu_fscrypt::key::{KeyError, MasterKey};
/// let e = MasterKey::new(&[0; 70]).unwrap_err();
/// assert_eq!(e.to_string(), "master key of 70 bytes: must be 16 to 64 bytes");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyError {
    /// A master key shorter than 16 or longer than 64 bytes.
    MasterKeyLength {
        /// Its length.
        len: usize,
    },
    /// A master key shorter than the policy's modes need.
    MasterKeyTooShort {
        /// Its length.
        len: usize,
        /// The length needed.
        need: usize,
    },
    /// The key is not the one the policy names.
    WrongKey {
        /// The identifier in the policy.
        expected: KeyIdentifier,
        /// The identifier of the key given.
        given: KeyIdentifier,
    },
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::MasterKeyLength { len } => write!(
                f,
                "master key of {len} bytes: must be {MASTER_KEY_MIN} to {MASTER_KEY_MAX} bytes"
            ),
            KeyError::MasterKeyTooShort { len, need } => write!(
                f,
                "master key of {len} bytes is too short for this policy: it needs {need}"
            ),
            KeyError::WrongKey { expected, given } => write!(
                f,
                "wrong key: the policy names key {expected}, the key given is {given}"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for KeyError {}
