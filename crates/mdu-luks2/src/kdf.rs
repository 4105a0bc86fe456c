//! Hash names, PBKDF2 and Argon2: the key derivations of keyslots and of
//! the volume-key digest.

use std::fmt;

use sha2::Digest as _;
use zeroize::Zeroizing;

use crate::Error;

/// A hash of the `pbkdf2` KDF, the AF splitter or the digest.
///
/// ```
/// use mdu_luks2::Hash;
/// assert_eq!(Hash::parse("sha512"), Some(Hash::Sha512));
/// assert_eq!(Hash::Sha256.name(), "sha256");
/// assert_eq!(Hash::Sha1.output_len(), 20);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Hash {
    /// SHA-1 (LUKS1's default; still readable).
    Sha1,
    /// SHA-256 (cryptsetup's default).
    Sha256,
    /// SHA-512.
    Sha512,
    /// RIPEMD-160 (a LUKS1 hash; cryptsetup reads and writes it in LUKS2
    /// keyslots too).
    Ripemd160,
    /// Whirlpool (a LUKS1 hash, 512 bits).
    Whirlpool,
}

impl Hash {
    /// Every hash this crate implements.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::Hash::ALL.len(), 5);
    /// ```
    pub const ALL: [Hash; 5] = [
        Hash::Sha1,
        Hash::Sha256,
        Hash::Sha512,
        Hash::Ripemd160,
        Hash::Whirlpool,
    ];

    /// The name used in the JSON metadata.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::Hash::Sha1.name(), "sha1");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Hash::Sha1 => "sha1",
            Hash::Sha256 => "sha256",
            Hash::Sha512 => "sha512",
            Hash::Ripemd160 => "ripemd160",
            Hash::Whirlpool => "whirlpool",
        }
    }

    /// The hash named `name` (lower case, as cryptsetup writes it).
    ///
    /// ```
    /// assert_eq!(mdu_luks2::Hash::parse("md5"), None);
    /// ```
    pub fn parse(name: &str) -> Option<Hash> {
        Hash::ALL.into_iter().find(|h| h.name() == name)
    }

    /// The digest length in bytes.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::Hash::Sha512.output_len(), 64);
    /// ```
    pub const fn output_len(self) -> usize {
        match self {
            Hash::Sha1 | Hash::Ripemd160 => 20,
            Hash::Sha256 => 32,
            Hash::Sha512 | Hash::Whirlpool => 64,
        }
    }

    /// PBKDF2-HMAC with this hash into `out`.
    ///
    /// ```
    /// use mdu_luks2::Hash;
    /// // RFC 7914 section 11, the first PBKDF2-HMAC-SHA256 vector.
    /// let mut out = [0u8; 8];
    /// Hash::Sha256.pbkdf2(b"passwd", b"salt", 1, &mut out);
    /// assert_eq!(out, [0x55, 0xac, 0x04, 0x6e, 0x56, 0xe3, 0x08, 0x9f]);
    /// ```
    pub fn pbkdf2(self, password: &[u8], salt: &[u8], iterations: u32, out: &mut [u8]) {
        match self {
            Hash::Sha1 => pbkdf2::pbkdf2_hmac::<sha1::Sha1>(password, salt, iterations, out),
            Hash::Sha256 => pbkdf2::pbkdf2_hmac::<sha2::Sha256>(password, salt, iterations, out),
            Hash::Sha512 => pbkdf2::pbkdf2_hmac::<sha2::Sha512>(password, salt, iterations, out),
            Hash::Ripemd160 => {
                pbkdf2::pbkdf2_hmac::<ripemd::Ripemd160>(password, salt, iterations, out)
            }
            Hash::Whirlpool => {
                pbkdf2::pbkdf2_hmac::<whirlpool::Whirlpool>(password, salt, iterations, out)
            }
        }
    }

    /// The hash of the concatenation of `parts` into `out` (at most
    /// [`output_len`](Self::output_len) bytes; the first `out.len()`).
    pub(crate) fn hash_into(self, parts: &[&[u8]], out: &mut [u8]) {
        fn run<D: sha2::Digest>(parts: &[&[u8]], out: &mut [u8]) {
            let mut h = D::new();
            for p in parts {
                h.update(p);
            }
            let mut d = h.finalize();
            let n = out.len();
            out.copy_from_slice(&d[..n]);
            // The digest is a diffused piece of a key: wipe it.
            zeroize::Zeroize::zeroize(d.as_mut_slice());
        }
        match self {
            Hash::Sha1 => run::<sha1::Sha1>(parts, out),
            Hash::Sha256 => run::<sha2::Sha256>(parts, out),
            Hash::Sha512 => run::<sha2::Sha512>(parts, out),
            Hash::Ripemd160 => run::<ripemd::Ripemd160>(parts, out),
            Hash::Whirlpool => run::<whirlpool::Whirlpool>(parts, out),
        }
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The Argon2 variants LUKS2 keyslots use.
///
/// ```
/// use mdu_luks2::Argon2Variant;
/// assert_eq!(Argon2Variant::Argon2id.name(), "argon2id");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Argon2Variant {
    /// Argon2i (data-independent memory access).
    Argon2i,
    /// Argon2id (cryptsetup's default).
    Argon2id,
}

impl Argon2Variant {
    /// The name used in the JSON metadata.
    ///
    /// ```
    /// assert_eq!(mdu_luks2::Argon2Variant::Argon2i.name(), "argon2i");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Argon2Variant::Argon2i => "argon2i",
            Argon2Variant::Argon2id => "argon2id",
        }
    }
}

/// Largest Argon2 memory cost accepted, in KiB (4 GiB, cryptsetup's
/// maximum): a hostile header cannot make an unlock allocate more.
///
/// ```
/// assert_eq!(mdu_luks2::ARGON2_MAX_MEMORY_KIB, 4 << 20);
/// ```
pub const ARGON2_MAX_MEMORY_KIB: u32 = 4 * 1024 * 1024;

/// The key derivation function of a keyslot, with its parameters.
///
/// ```
/// use mdu_luks2::{Hash, Kdf};
/// let kdf = Kdf::Pbkdf2 { hash: Hash::Sha256, iterations: 1000, salt: vec![7; 32] };
/// let key = kdf.derive(b"passphrase", 32, 0)?;
/// assert_eq!(key.len(), 32);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kdf {
    /// PBKDF2-HMAC.
    Pbkdf2 {
        /// The HMAC hash.
        hash: Hash,
        /// The iteration count.
        iterations: u32,
        /// The salt (32 bytes as cryptsetup writes it).
        salt: Vec<u8>,
    },
    /// Argon2 version 1.3 without secret or associated data.
    Argon2 {
        /// Argon2i or Argon2id.
        variant: Argon2Variant,
        /// Passes (`time`).
        time: u32,
        /// Memory in KiB (`memory`).
        memory: u32,
        /// Lanes and threads (`cpus`).
        cpus: u32,
        /// The salt.
        salt: Vec<u8>,
    },
}

impl Kdf {
    /// The salt.
    ///
    /// ```
    /// use mdu_luks2::{Hash, Kdf};
    /// let kdf = Kdf::Pbkdf2 { hash: Hash::Sha1, iterations: 1000, salt: vec![1, 2] };
    /// assert_eq!(kdf.salt(), &[1, 2]);
    /// ```
    pub fn salt(&self) -> &[u8] {
        match self {
            Kdf::Pbkdf2 { salt, .. } | Kdf::Argon2 { salt, .. } => salt,
        }
    }

    /// The name used in the JSON metadata (`pbkdf2`, `argon2i`, `argon2id`).
    ///
    /// ```
    /// use mdu_luks2::{Argon2Variant, Kdf};
    /// let kdf = Kdf::Argon2 { variant: Argon2Variant::Argon2id, time: 4, memory: 32, cpus: 1, salt: vec![0; 32] };
    /// assert_eq!(kdf.name(), "argon2id");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Kdf::Pbkdf2 { .. } => "pbkdf2",
            Kdf::Argon2 { variant, .. } => variant.name(),
        }
    }

    /// Derives `len` bytes from `passphrase` (for keyslot `slot`, named in
    /// errors). Argon2 parameters out of range are a [`Error::Kdf`].
    ///
    /// ```
    /// use mdu_luks2::{Argon2Variant, Kdf};
    /// let kdf = Kdf::Argon2 { variant: Argon2Variant::Argon2id, time: 4, memory: 32, cpus: 1, salt: vec![0; 32] };
    /// let a = kdf.derive(b"pw", 64, 0)?;
    /// let b = kdf.derive(b"pw", 64, 0)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn derive(
        &self,
        passphrase: &[u8],
        len: usize,
        slot: u32,
    ) -> Result<Zeroizing<Vec<u8>>, Error> {
        let mut out = Zeroizing::new(vec![0u8; len]);
        match self {
            Kdf::Pbkdf2 {
                hash,
                iterations,
                salt,
            } => {
                if *iterations == 0 {
                    return Err(Error::Kdf {
                        slot: Some(slot),
                        message: "zero PBKDF2 iterations".into(),
                    });
                }
                hash.pbkdf2(passphrase, salt, *iterations, &mut out);
            }
            Kdf::Argon2 {
                variant,
                time,
                memory,
                cpus,
                salt,
            } => {
                let err = |m: String| Error::Kdf {
                    slot: Some(slot),
                    message: m,
                };
                if *memory > ARGON2_MAX_MEMORY_KIB {
                    return Err(err(format!(
                        "Argon2 memory {memory} KiB is above the maximum {ARGON2_MAX_MEMORY_KIB} KiB"
                    )));
                }
                let params = argon2::Params::new(*memory, *time, *cpus, Some(len))
                    .map_err(|e| err(e.to_string()))?;
                let alg = match variant {
                    Argon2Variant::Argon2i => argon2::Algorithm::Argon2i,
                    Argon2Variant::Argon2id => argon2::Algorithm::Argon2id,
                };
                argon2::Argon2::new(alg, argon2::Version::V0x13, params)
                    .hash_password_into(passphrase, salt, &mut out)
                    .map_err(|e| match e {
                        argon2::Error::OutOfMemory => Error::OutOfMemory {
                            what: format!("the Argon2 memory of keyslot {slot} ({memory} KiB)"),
                        },
                        e => err(e.to_string()),
                    })?;
            }
        }
        Ok(out)
    }
}

/// SHA-256 of `data` (the header checksum).
pub(crate) fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// PBKDF2-HMAC of ("pw", "salt", 1000 iterations, 20 bytes) for every
    /// hash OpenSSL computes (Python's `hashlib.pbkdf2_hmac`); Whirlpool is
    /// checked against cryptsetup by the LUKS1 interop tests.
    #[test]
    fn pbkdf2_matches_openssl_for_every_hash_it_has() {
        let cases = [
            (Hash::Sha1, "ba95848a9b5ce11f1b43d7d167d8413daa5ed22b"),
            (Hash::Sha256, "0a38253555ce37f5c72a6b703f996814ebf241f2"),
            (Hash::Sha512, "dba2956d5d8f05e6f06dc9732ca6037d32a4fcbc"),
            (Hash::Ripemd160, "3aa0014b8af777eccdc82b9e22ad8c967453bf76"),
        ];
        for (hash, want) in cases {
            let mut out = [0u8; 20];
            hash.pbkdf2(b"pw", b"salt", 1000, &mut out);
            assert_eq!(hex(&out), want, "{hash}");
        }
    }

    #[test]
    fn names_parse_back_and_lengths_match_the_digests() {
        for hash in Hash::ALL {
            assert_eq!(Hash::parse(hash.name()), Some(hash));
            let mut full = [0u8; 64];
            hash.hash_into(&[b"abc"], &mut full[..hash.output_len()]);
            assert!(full[..hash.output_len()].iter().any(|&b| b != 0));
        }
        // Whirlpool("abc"), from the NESSIE test vectors.
        let mut w = [0u8; 64];
        Hash::Whirlpool.hash_into(&[b"abc"], &mut w);
        assert_eq!(hex(&w[..8]), "4e2448a4c6f486bb");
        let mut r = [0u8; 20];
        Hash::Ripemd160.hash_into(&[b"abc"], &mut r);
        assert_eq!(hex(&r), "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc");
    }
}
