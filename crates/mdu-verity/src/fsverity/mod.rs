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
//! let params = fsverity::Params { hash: HashAlg::Sha256, block_size: 4096, salt: vec![0x00, 0x11], ..Default::default() };
//! let d = fsverity::digest(&b"abc"[..], &params)?;
//! assert_eq!(
//!     d.to_string(),
//!     "sha256:6bbe62f3fb9161205e8be4c037c0ad3ffc9ed0d6284fc8b566af0d45835cd724"
//! );
//! # Ok::<(), mdu_verity::Error>(())
//! ```

use core::fmt;

use crate::hash::{BlockHasher, SaltAt};
use crate::merkle::{Level0, Tree};
use crate::source::Stager;
use crate::{Digest, Error, HashAlg, Source, sha256};

mod many;

pub use many::{DigestMany, digest_many};

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
    /// The SHA-256 backend to hash with; `None` (the default) takes the
    /// best this CPU runs. Pinned for tests and benchmarks; the bytes out
    /// are the same with every backend.
    pub backend: Option<sha256::Backend>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            hash: HashAlg::Sha256,
            block_size: 4096,
            salt: Vec::new(),
            backend: None,
        }
    }
}

impl Params {
    /// Check the block size, the salt length and that a pinned backend
    /// runs on this CPU.
    ///
    /// ```
    /// use mdu_verity::{fsverity::Params, Error};
    /// let p = Params { salt: vec![0; 33], ..Params::default() };
    /// assert!(matches!(p.validate(), Err(Error::SaltTooLong { len: 33, max: 32 })));
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        crate::hash::fresh_state(self.backend)?;
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
        self.hash
            .fsverity_number()
            .ok_or(Error::NotFsverityAlgorithm { alg: self.hash })?;
        Ok(())
    }

    /// fs-verity's number for the hash algorithm (1 or 2; 0 for an
    /// algorithm fs-verity does not have, which [`Params::validate`]
    /// refuses).
    ///
    /// ```
    /// assert_eq!(mdu_verity::fsverity::Params::default().algorithm_number(), 1);
    /// ```
    pub fn algorithm_number(&self) -> u8 {
        self.hash.fsverity_number().unwrap_or(0)
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

    /// How digests sit in a tree block: back to back, filling it.
    fn packing(&self) -> crate::merkle::Packing {
        crate::merkle::Packing::new(self.block_size as usize, self.hash.digest_len(), false)
    }

    /// The salted block hasher (after [`Params::validate`]).
    fn hasher(&self) -> Result<BlockHasher, Error> {
        let fresh = crate::hash::fresh_state(self.backend)?;
        Ok(BlockHasher::with_sha256(
            self.hash,
            &self.padded_salt(),
            SaltAt::Prefix,
            fresh,
        ))
    }

    /// The file digest: the hash of the descriptor, unsalted.
    fn file_digest(&self, descriptor: &[u8; DESCRIPTOR_LEN]) -> Result<FileDigest, Error> {
        let digest = match self.hash {
            HashAlg::Sha256 => {
                Digest::from_slice(&crate::hash::fresh_state(self.backend)?.finup(descriptor))
            }
            _ => self.hash.hash(descriptor),
        };
        Ok(FileDigest {
            alg: self.hash,
            digest,
        })
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
    Ok(descriptor_of(params, data_size, root_hash))
}

/// The descriptor, for valid parameters and a root hash of their digest
/// length.
fn descriptor_of(params: &Params, data_size: u64, root_hash: &Digest) -> [u8; DESCRIPTOR_LEN] {
    let root = root_hash.as_bytes();
    let mut d = [0u8; DESCRIPTOR_LEN];
    d[0] = 1;
    d[1] = params.algorithm_number();
    d[2] = params.block_size.trailing_zeros() as u8;
    d[3] = params.salt.len() as u8;
    d[8..16].copy_from_slice(&data_size.to_le_bytes());
    d[16..16 + root.len()].copy_from_slice(root);
    d[80..80 + params.salt.len()].copy_from_slice(&params.salt);
    d
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
        // A FileDigest only comes from validated parameters.
        let num = u16::from(self.alg.fsverity_number().unwrap_or(0));
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

/// Compute the file digest, descriptor and Merkle tree of `data` (a byte
/// slice, a file, a reader, pieces in memory: any [`Source`], read to its
/// end).
///
/// ```
/// use mdu_verity::fsverity;
/// let data = vec![0u8; 100_000];
/// let p = fsverity::Params { block_size: 1024, ..Default::default() };
/// let m = fsverity::measure(&data, &p)?;
/// assert_eq!(
///     m.digest().digest().to_hex(),
///     "09cbbaeed2a04c2da242c10e1568d96f358a16aa1ebe8cf0286120c13c9366d1"
/// );
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn measure<'a>(data: impl Into<Source<'a>>, params: &Params) -> Result<Measurement, Error> {
    params.validate()?;
    let bs = params.block_size as usize;
    let mut level0 = Level0::new(params.hasher()?, bs);
    let fed = data.into().feed(0, u64::MAX, bs, &mut |run| {
        level0.add(run);
        Ok(())
    })?;
    level0.add_padded(&fed.tail);
    measurement(params, level0.finish(fed.bytes, params.packing()))
}

/// The descriptor and the file digest of a finished tree.
fn measurement(params: &Params, tree: Tree) -> Result<Measurement, Error> {
    let descriptor = descriptor(params, tree.data_bytes(), &tree.root_hash())?;
    let digest = params.file_digest(&descriptor)?;
    Ok(Measurement {
        digest,
        descriptor,
        tree,
    })
}

/// The fs-verity file digest of `data` (any [`Source`], read to its end).
///
/// ```
/// use mdu_verity::fsverity;
/// let d = fsverity::digest(&[0u8; 4096], &fsverity::Params::default())?;
/// assert_eq!(d.digest().to_hex(), "babc284ee4ffe7f449377fbf6692715b43aec7bc39c094a95878904d34bac97e");
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn digest<'a>(data: impl Into<Source<'a>>, params: &Params) -> Result<FileDigest, Error> {
    Ok(measure(data, params)?.digest)
}

/// The fs-verity digest of data that arrives piece by piece, for callers
/// that produce it on the fly (an archive being unpacked, a file being
/// written): [`update`](Hasher::update) takes pieces of any size, and
/// [`finalize`](Hasher::finalize) returns the same [`Measurement`] as
/// [`measure`] of the whole data. Memory: the tree (the digests of the
/// data, 1/128 of its size with SHA-256 and 4 KiB blocks) and a staging
/// buffer of 64 KiB; pieces of 64 KiB and more are hashed where they lie.
///
/// ```
/// use mdu_verity::fsverity;
/// let p = fsverity::Params::default();
/// let mut h = fsverity::Hasher::new(&p)?;
/// h.update(b"hello ");
/// h.update(b"world");
/// assert_eq!(h.finalize()?.digest(), fsverity::digest(&b"hello world"[..], &p)?);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone)]
pub struct Hasher {
    params: Params,
    level0: Level0,
    stager: Stager,
    bytes: u64,
}

impl Hasher {
    /// A hasher for `params` (checked here, so [`update`](Hasher::update)
    /// cannot fail).
    ///
    /// ```
    /// use mdu_verity::{fsverity, Error};
    /// let bad = fsverity::Params { block_size: 100, ..Default::default() };
    /// assert!(matches!(fsverity::Hasher::new(&bad), Err(Error::BlockSize { .. })));
    /// ```
    pub fn new(params: &Params) -> Result<Hasher, Error> {
        params.validate()?;
        let bs = params.block_size as usize;
        Ok(Hasher {
            params: params.clone(),
            level0: Level0::new(params.hasher()?, bs),
            stager: Stager::new(bs),
            bytes: 0,
        })
    }

    /// Take the next piece of the data.
    ///
    /// ```
    /// use mdu_verity::fsverity;
    /// let p = fsverity::Params::default();
    /// let mut h = fsverity::Hasher::new(&p)?;
    /// for b in [1u8; 9000] {
    ///     h.update(&[b]);
    /// }
    /// assert_eq!(h.finalize()?.digest(), fsverity::digest(&[1u8; 9000], &p)?);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn update(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        let level0 = &mut self.level0;
        // The sink cannot fail.
        let _ = self.stager.push(data, &mut |run| {
            level0.add(run);
            Ok(())
        });
    }

    /// Bytes taken so far.
    ///
    /// ```
    /// let mut h = mdu_verity::fsverity::Hasher::new(&Default::default())?;
    /// h.update(b"abc");
    /// assert_eq!(h.len(), 3);
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn len(&self) -> u64 {
        self.bytes
    }

    /// Whether no byte was taken yet.
    ///
    /// ```
    /// assert!(mdu_verity::fsverity::Hasher::new(&Default::default())?.is_empty());
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// The digest, descriptor and tree of everything taken.
    ///
    /// ```
    /// let h = mdu_verity::fsverity::Hasher::new(&Default::default())?;
    /// assert!(h.finalize()?.digest().to_string().starts_with("sha256:3d248ca5"));
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn finalize(mut self) -> Result<Measurement, Error> {
        let level0 = &mut self.level0;
        let tail = self.stager.finish(&mut |run| {
            level0.add(run);
            Ok(())
        })?;
        self.level0.add_padded(&tail);
        measurement(
            &self.params,
            self.level0.finish(self.bytes, self.params.packing()),
        )
    }
}

impl core::fmt::Debug for Hasher {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Hasher")
            .field("params", &self.params)
            .field("bytes", &self.bytes)
            .finish()
    }
}
