//! fs-verity file digests, descriptors and Merkle trees, as computed by the
//! kernel and by `fsverity digest` (fsverity-utils).
//!
//! Every block (data and tree) is hashed as `H(padded_salt || block)`, where
//! the salt is zero-padded to the hash function's input block size (64 bytes
//! for SHA-256, 128 for SHA-512) and nothing is prepended without a salt. A
//! partial last data block is zero-padded. The file digest is the hash of
//! the 256-byte [`descriptor`].
//!
//! ```
//! use mdu_verity::{fsverity, HashAlg};
//!
//! let params = fsverity::Params { hash: HashAlg::Sha256, block_size: 4096, salt: vec![0x00, 0x11] };
//! let d = fsverity::digest(&b"abc"[..], &params)?;
//! assert_eq!(
//!     d.to_string(),
//!     "sha256:6bbe62f3fb9161205e8be4c037c0ad3ffc9ed0d6284fc8b566af0d45835cd724"
//! );
//! # Ok::<(), mdu_verity::Error>(())
//! ```

use core::fmt;
use std::io::Read;

use crate::hash::{BlockHasher, SaltAt};
use crate::merkle::{self, Spec, Tree};
use crate::{Digest, Error, HashAlg, sha256};

/// Largest fs-verity salt in bytes.
pub const MAX_SALT_LEN: usize = 32;
/// Smallest accepted Merkle tree block size.
pub const MIN_BLOCK_SIZE: u32 = 512;
/// Largest accepted Merkle tree block size.
pub const MAX_BLOCK_SIZE: u32 = 65536;
/// Size of the descriptor that is hashed to get the file digest.
pub const DESCRIPTOR_LEN: usize = 256;

/// fs-verity parameters: hash algorithm, Merkle tree block size and salt.
///
/// The block size must be a power of two from 512 to 65536 bytes (the
/// kernel enables files with 1024 up to its page size; fsverity-utils
/// computes digests for any). The salt is 0 to 32 bytes.
///
/// ```
/// use mdu_verity::{fsverity::Params, HashAlg};
/// let p = Params::default();
/// assert_eq!((p.hash, p.block_size, p.salt.len()), (HashAlg::Sha256, 4096, 0));
/// assert!(p.validate().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// Hash algorithm (fs-verity algorithm 1 = SHA-256, 2 = SHA-512).
    pub hash: HashAlg,
    /// Merkle tree block size in bytes.
    pub block_size: u32,
    /// Salt, 0..=32 bytes.
    pub salt: Vec<u8>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            hash: HashAlg::Sha256,
            block_size: 4096,
            salt: Vec::new(),
        }
    }
}

impl Params {
    /// Check the block size and salt length.
    ///
    /// ```
    /// use mdu_verity::{fsverity::Params, Error};
    /// let p = Params { salt: vec![0; 33], ..Params::default() };
    /// assert!(matches!(p.validate(), Err(Error::SaltTooLong { len: 33, max: 32 })));
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        let bs = self.block_size;
        if !bs.is_power_of_two() || !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&bs) {
            return Err(Error::BlockSize {
                what: "fs-verity block",
                size: bs.into(),
                min: MIN_BLOCK_SIZE.into(),
                max: MAX_BLOCK_SIZE.into(),
            });
        }
        if self.salt.len() > MAX_SALT_LEN {
            return Err(Error::SaltTooLong {
                len: self.salt.len(),
                max: MAX_SALT_LEN,
            });
        }
        Ok(())
    }

    /// fs-verity's number for the hash algorithm (1 or 2).
    ///
    /// ```
    /// assert_eq!(mdu_verity::fsverity::Params::default().algorithm_number(), 1);
    /// ```
    pub fn algorithm_number(&self) -> u8 {
        match self.hash {
            HashAlg::Sha256 => 1,
            HashAlg::Sha512 => 2,
        }
    }

    /// The salt zero-padded to the hash function's input block size (empty
    /// without a salt): the prefix of every hashed block.
    ///
    /// ```
    /// let p = mdu_verity::fsverity::Params { salt: vec![1, 2], ..Default::default() };
    /// assert_eq!(p.padded_salt().len(), 64);
    /// ```
    pub fn padded_salt(&self) -> Vec<u8> {
        let mut s = self.salt.clone();
        let hb = self.hash.input_block_len();
        s.resize(s.len().div_ceil(hb) * hb, 0);
        s
    }

    fn hasher(&self, fresh: sha256::State) -> BlockHasher {
        BlockHasher::with_sha256(self.hash, &self.padded_salt(), SaltAt::Prefix, fresh)
    }
}

/// The 256-byte `fsverity_descriptor` whose hash is the file digest.
///
/// The signature size field is zero, as when computing a digest.
///
/// ```
/// use mdu_verity::{fsverity, Digest};
/// let root = Digest::from_slice(&[0xaa; 32]);
/// let d = fsverity::descriptor(&fsverity::Params::default(), 3, &root)?;
/// assert_eq!(d[..4], [1, 1, 12, 0]);
/// assert_eq!(d[8], 3);
/// assert_eq!(d[16..48], [0xaa; 32]);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn descriptor(
    params: &Params,
    data_size: u64,
    root_hash: &Digest,
) -> Result<[u8; DESCRIPTOR_LEN], Error> {
    params.validate()?;
    let root = root_hash.as_bytes();
    if root.len() != params.hash.digest_len() {
        return Err(Error::RootHash {
            reason: format!(
                "{} bytes given, {} needs {}",
                root.len(),
                params.hash,
                params.hash.digest_len()
            ),
        });
    }
    let mut d = [0u8; DESCRIPTOR_LEN];
    d[0] = 1;
    d[1] = params.algorithm_number();
    d[2] = params.block_size.trailing_zeros() as u8;
    d[3] = params.salt.len() as u8;
    d[8..16].copy_from_slice(&data_size.to_le_bytes());
    d[16..16 + root.len()].copy_from_slice(root);
    d[80..80 + params.salt.len()].copy_from_slice(&params.salt);
    Ok(d)
}

/// An fs-verity file digest; `Display` prints it as fsverity-utils does,
/// `"<alg>:<hex>"`.
///
/// ```
/// use mdu_verity::fsverity;
/// let d = fsverity::digest(&b""[..], &fsverity::Params::default())?;
/// assert_eq!(d.alg().name(), "sha256");
/// assert!(d.to_string().starts_with("sha256:3d248ca5"));
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileDigest {
    alg: HashAlg,
    digest: Digest,
}

impl FileDigest {
    /// The hash algorithm.
    ///
    /// ```
    /// use mdu_verity::{fsverity, HashAlg};
    /// let p = fsverity::Params { hash: HashAlg::Sha512, ..Default::default() };
    /// assert_eq!(fsverity::digest(&b"x"[..], &p)?.alg(), HashAlg::Sha512);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn alg(&self) -> HashAlg {
        self.alg
    }

    /// The digest bytes.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let d = fsverity::digest(&b"x"[..], &fsverity::Params::default())?;
    /// assert_eq!(d.digest().as_bytes().len(), 32);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// `struct fsverity_formatted_digest`, what built-in signatures sign:
    /// `"FSVerity"`, le16 algorithm, le16 digest size, the digest.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let d = fsverity::digest(&b"x"[..], &fsverity::Params::default())?;
    /// let f = d.formatted();
    /// assert_eq!(f.len(), 44);
    /// assert_eq!(&f[..12], b"FSVerity\x01\x00\x20\x00");
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn formatted(&self) -> Vec<u8> {
        let mut v = b"FSVerity".to_vec();
        let num: u16 = match self.alg {
            HashAlg::Sha256 => 1,
            HashAlg::Sha512 => 2,
        };
        v.extend_from_slice(&num.to_le_bytes());
        v.extend_from_slice(&(self.alg.digest_len() as u16).to_le_bytes());
        v.extend_from_slice(self.digest.as_bytes());
        v
    }
}

impl fmt::Display for FileDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.alg, self.digest)
    }
}

/// Everything fs-verity computes for a file: digest, descriptor and tree.
///
/// ```
/// use mdu_verity::fsverity;
/// let m = fsverity::measure(&[0u8; 4097][..], &fsverity::Params::default())?;
/// assert_eq!(m.root_hash().to_hex(), "90b10db56173e2e7c847f6ff3ed85a3aebb140bc0064ec9a156ae5b2e71db988");
/// assert_eq!(m.descriptor()[8..16], 4097u64.to_le_bytes());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Measurement {
    digest: FileDigest,
    descriptor: [u8; DESCRIPTOR_LEN],
    tree: Tree,
}

impl Measurement {
    /// The file digest.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let p = fsverity::Params::default();
    /// let m = fsverity::measure(&b"abc"[..], &p)?;
    /// assert_eq!(m.digest(), fsverity::digest(&b"abc"[..], &p)?);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn digest(&self) -> FileDigest {
        self.digest
    }

    /// The root hash of the Merkle tree (all zeros for an empty file).
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&b""[..], &fsverity::Params::default())?;
    /// assert_eq!(m.root_hash().as_bytes(), &[0u8; 32]);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn root_hash(&self) -> Digest {
        self.tree.root_hash()
    }

    /// The 256-byte descriptor (signature size 0).
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&b"abc"[..], &fsverity::Params::default())?;
    /// assert_eq!(m.descriptor()[0], 1);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn descriptor(&self) -> &[u8; DESCRIPTOR_LEN] {
        &self.descriptor
    }

    /// The Merkle tree; [`Tree::to_root_first`] gives the bytes of
    /// `fsverity digest --out-merkle-tree` and `FS_IOC_READ_VERITY_METADATA`.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let m = fsverity::measure(&b"abc"[..], &fsverity::Params::default())?;
    /// assert_eq!(m.tree().size(), 0); // one block: no tree
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn tree(&self) -> &Tree {
        &self.tree
    }
}

/// Compute the file digest, descriptor and Merkle tree of the data in
/// `reader` (read to its end).
///
/// ```
/// use mdu_verity::fsverity;
/// let data = vec![0u8; 100_000];
/// let p = fsverity::Params { block_size: 1024, ..Default::default() };
/// let m = fsverity::measure(&data[..], &p)?;
/// assert_eq!(
///     m.digest().digest().to_hex(),
///     "09cbbaeed2a04c2da242c10e1568d96f358a16aa1ebe8cf0286120c13c9366d1"
/// );
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn measure<R: Read>(reader: R, params: &Params) -> Result<Measurement, Error> {
    measure_with(reader, params, sha256::State::new())
}

/// As [`measure`], with SHA-256 on the given fresh state's backend (for
/// comparing backends); the state's absorbed bytes become part of every
/// hash, so pass a fresh one.
///
/// ```
/// use mdu_verity::{fsverity, sha256::{Backend, State}};
/// let p = fsverity::Params::default();
/// let a = fsverity::measure_with(&[5u8; 9000][..], &p, State::with_backend(Backend::Generic).unwrap())?;
/// assert_eq!(a.digest(), fsverity::digest(&[5u8; 9000][..], &p)?);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn measure_with<R: Read>(
    reader: R,
    params: &Params,
    fresh: sha256::State,
) -> Result<Measurement, Error> {
    measure_tree(params, fresh, |spec| merkle::build(reader, spec))
}

/// As [`measure`], for data already in memory (or mapped into it): the
/// blocks are hashed where they lie, without the copy a reader needs, and
/// with the `rayon` feature the whole input is shared among the pool's
/// threads. The result is the same as `measure(data, params)`.
///
/// ```
/// use mdu_verity::fsverity;
/// let data = vec![9u8; 300_000];
/// let p = fsverity::Params::default();
/// let m = fsverity::measure_bytes(&data, &p)?;
/// assert_eq!(m.digest(), fsverity::measure(&data[..], &p)?.digest());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn measure_bytes(data: &[u8], params: &Params) -> Result<Measurement, Error> {
    measure_chunks(core::iter::once(Ok(data)), params)
}

/// As [`measure_bytes`], for data that arrives in pieces already in memory,
/// in order: for example successive windows of a mapped file, each of which
/// can be unmapped as soon as it has been hashed, so that memory stays
/// bounded by the window and the tree. Chunks may have any lengths; a block
/// split between two chunks is joined. An `Err` item stops the work and is
/// returned as [`Error::Io`].
///
/// ```
/// use mdu_verity::fsverity;
/// let data = vec![3u8; 100_000];
/// let p = fsverity::Params::default();
/// let pieces = data.chunks(10_000).map(Ok::<_, std::io::Error>);
/// let m = fsverity::measure_chunks(pieces, &p)?;
/// assert_eq!(m.digest(), fsverity::measure_bytes(&data, &p)?.digest());
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn measure_chunks<C: AsRef<[u8]>>(
    chunks: impl IntoIterator<Item = std::io::Result<C>>,
    params: &Params,
) -> Result<Measurement, Error> {
    measure_tree(params, sha256::State::new(), |spec| {
        merkle::build_chunks(chunks, spec)
    })
}

/// Checks `params`, builds the tree with `build` and derives the descriptor
/// and the file digest from it.
fn measure_tree(
    params: &Params,
    fresh: sha256::State,
    build: impl FnOnce(&Spec<'_>) -> Result<crate::merkle::Tree, Error>,
) -> Result<Measurement, Error> {
    params.validate()?;
    let hasher = params.hasher(fresh);
    let bs = params.block_size as usize;
    let tree = build(&Spec {
        hasher: &hasher,
        data_block_size: bs,
        hash_block_size: bs,
        pad_partial: true,
        data_blocks: None,
    })?;
    let descriptor = descriptor(params, tree.data_bytes(), &tree.root_hash())?;
    let digest = FileDigest {
        alg: params.hash,
        digest: params.hash.hash(&descriptor),
    };
    Ok(Measurement {
        digest,
        descriptor,
        tree,
    })
}

/// The fs-verity file digest of the data in `reader` (read to its end).
///
/// ```
/// use mdu_verity::fsverity;
/// let d = fsverity::digest(&[0u8; 4096][..], &fsverity::Params::default())?;
/// assert_eq!(d.digest().to_hex(), "babc284ee4ffe7f449377fbf6692715b43aec7bc39c094a95878904d34bac97e");
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn digest<R: Read>(reader: R, params: &Params) -> Result<FileDigest, Error> {
    Ok(measure(reader, params)?.digest)
}
