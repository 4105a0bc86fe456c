//! Hash algorithms, digests, and the salted block hasher both trees use.

use core::fmt;

use crate::Error;
use crate::sha256;

/// The hash algorithm of a tree.
///
/// fs-verity knows SHA-256 and SHA-512 only. dm-verity takes any hash the
/// kernel has; these are the ones `veritysetup format --hash` accepts that
/// are not broken. Each has one name, the kernel's (what a dm-verity
/// superblock must hold for the kernel to find the hash); the spellings
/// OpenSSL uses for the same functions (`ripemd160`, `blake2b512`,
/// `blake2s256`) are read as aliases. MD4 and MD5 are refused: with
/// collisions at hand, a tree over them proves nothing.
///
/// ```
/// use mdu_verity::HashAlg;
/// assert_eq!(HashAlg::Sha512.digest_len(), 64);
/// assert_eq!(HashAlg::from_name("SHA256")?, HashAlg::Sha256);
/// assert_eq!(HashAlg::from_name("ripemd160")?.name(), "rmd160");
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum HashAlg {
    /// SHA-1 (dm-verity only).
    Sha1,
    /// SHA-224 (dm-verity only).
    Sha224,
    /// SHA-256 (fs-verity algorithm 1), hashed sixteen or two blocks at a
    /// time.
    #[default]
    Sha256,
    /// SHA-384 (dm-verity only).
    Sha384,
    /// SHA-512 (fs-verity algorithm 2).
    Sha512,
    /// SHA3-224 (dm-verity only).
    Sha3_224,
    /// SHA3-256 (dm-verity only).
    Sha3_256,
    /// SHA3-384 (dm-verity only).
    Sha3_384,
    /// SHA3-512 (dm-verity only).
    Sha3_512,
    /// RIPEMD-160, `rmd160` (dm-verity only).
    Rmd160,
    /// SM3 (dm-verity only).
    Sm3,
    /// BLAKE2b with a 512-bit digest, `blake2b-512` (dm-verity only).
    Blake2b512,
    /// BLAKE2s with a 256-bit digest, `blake2s-256` (dm-verity only).
    Blake2s256,
}

/// The functions other than SHA-256 (which has its own multi-lane code),
/// each through its RustCrypto type: `$alg => $ty`.
macro_rules! other_hashes {
    ($($alg:ident => $ty:ty),* $(,)?) => {
        /// A running hash of any algorithm but SHA-256.
        #[derive(Clone)]
        enum Other {
            $($alg($ty),)*
        }

        impl Other {
            fn new(alg: HashAlg) -> Option<Other> {
                match alg {
                    $(HashAlg::$alg => Some(Other::$alg(<$ty as sha2::Digest>::new())),)*
                    HashAlg::Sha256 => None,
                }
            }

            fn update(&mut self, data: &[u8]) {
                match self {
                    $(Other::$alg(h) => sha2::Digest::update(h, data),)*
                }
            }

            /// Finish into `out` (exactly the digest length).
            fn finalize_into(self, out: &mut [u8]) {
                match self {
                    $(Other::$alg(h) => out.copy_from_slice(&sha2::Digest::finalize(h)),)*
                }
            }
        }
    };
}

other_hashes! {
    Sha1 => sha1::Sha1,
    Sha224 => sha2::Sha224,
    Sha384 => sha2::Sha384,
    Sha512 => sha2::Sha512,
    Sha3_224 => sha3::Sha3_224,
    Sha3_256 => sha3::Sha3_256,
    Sha3_384 => sha3::Sha3_384,
    Sha3_512 => sha3::Sha3_512,
    Rmd160 => ripemd::Ripemd160,
    Sm3 => sm3::Sm3,
    Blake2b512 => blake2::Blake2b512,
    Blake2s256 => blake2::Blake2s256,
}

impl HashAlg {
    /// Every algorithm, in the order of the enum.
    ///
    /// ```
    /// assert!(mdu_verity::HashAlg::ALL.contains(&mdu_verity::HashAlg::Sha1));
    /// ```
    pub const ALL: [HashAlg; 13] = [
        HashAlg::Sha1,
        HashAlg::Sha224,
        HashAlg::Sha256,
        HashAlg::Sha384,
        HashAlg::Sha512,
        HashAlg::Sha3_224,
        HashAlg::Sha3_256,
        HashAlg::Sha3_384,
        HashAlg::Sha3_512,
        HashAlg::Rmd160,
        HashAlg::Sm3,
        HashAlg::Blake2b512,
        HashAlg::Blake2s256,
    ];

    /// Digest size in bytes (20 to 64).
    ///
    /// ```
    /// assert_eq!(mdu_verity::HashAlg::Sha256.digest_len(), 32);
    /// assert_eq!(mdu_verity::HashAlg::Sha1.digest_len(), 20);
    /// ```
    pub fn digest_len(self) -> usize {
        match self {
            HashAlg::Sha1 | HashAlg::Rmd160 => 20,
            HashAlg::Sha224 | HashAlg::Sha3_224 => 28,
            HashAlg::Sha256 | HashAlg::Sha3_256 | HashAlg::Sm3 | HashAlg::Blake2s256 => 32,
            HashAlg::Sha384 | HashAlg::Sha3_384 => 48,
            HashAlg::Sha512 | HashAlg::Sha3_512 | HashAlg::Blake2b512 => 64,
        }
    }

    /// Input block size of the hash function in bytes (the SHA-3 rate for
    /// SHA-3); fs-verity pads its salt to this.
    ///
    /// ```
    /// assert_eq!(mdu_verity::HashAlg::Sha512.input_block_len(), 128);
    /// ```
    pub fn input_block_len(self) -> usize {
        match self {
            HashAlg::Sha1
            | HashAlg::Sha224
            | HashAlg::Sha256
            | HashAlg::Rmd160
            | HashAlg::Sm3
            | HashAlg::Blake2s256 => 64,
            HashAlg::Sha384 | HashAlg::Sha512 | HashAlg::Blake2b512 => 128,
            HashAlg::Sha3_224 => 144,
            HashAlg::Sha3_256 => 136,
            HashAlg::Sha3_384 => 104,
            HashAlg::Sha3_512 => 72,
        }
    }

    /// The lowercase name used by fsverity-utils, cryptsetup and the
    /// kernel.
    ///
    /// ```
    /// assert_eq!(mdu_verity::HashAlg::Sha512.name(), "sha512");
    /// assert_eq!(mdu_verity::HashAlg::Blake2b512.name(), "blake2b-512");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            HashAlg::Sha1 => "sha1",
            HashAlg::Sha224 => "sha224",
            HashAlg::Sha256 => "sha256",
            HashAlg::Sha384 => "sha384",
            HashAlg::Sha512 => "sha512",
            HashAlg::Sha3_224 => "sha3-224",
            HashAlg::Sha3_256 => "sha3-256",
            HashAlg::Sha3_384 => "sha3-384",
            HashAlg::Sha3_512 => "sha3-512",
            HashAlg::Rmd160 => "rmd160",
            HashAlg::Sm3 => "sm3",
            HashAlg::Blake2b512 => "blake2b-512",
            HashAlg::Blake2s256 => "blake2s-256",
        }
    }

    /// fs-verity's number for the algorithm (1 for SHA-256, 2 for
    /// SHA-512), or `None` for the algorithms only dm-verity takes.
    ///
    /// ```
    /// use mdu_verity::HashAlg;
    /// assert_eq!(HashAlg::Sha512.fsverity_number(), Some(2));
    /// assert_eq!(HashAlg::Sha1.fsverity_number(), None);
    /// ```
    pub fn fsverity_number(self) -> Option<u8> {
        match self {
            HashAlg::Sha256 => Some(1),
            HashAlg::Sha512 => Some(2),
            _ => None,
        }
    }

    /// Parse a name, ignoring ASCII case (`"sha256"`, `"SHA512"`,
    /// `"sha3-256"`), with OpenSSL's spellings as aliases.
    ///
    /// ```
    /// use mdu_verity::{Error, HashAlg};
    /// assert_eq!(HashAlg::from_name("blake2b512")?, HashAlg::Blake2b512);
    /// assert!(matches!(HashAlg::from_name("md5"), Err(Error::UnknownAlgorithm { .. })));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn from_name(name: &str) -> Result<HashAlg, Error> {
        const ALIASES: [(&str, HashAlg); 3] = [
            ("ripemd160", HashAlg::Rmd160),
            ("blake2b512", HashAlg::Blake2b512),
            ("blake2s256", HashAlg::Blake2s256),
        ];
        HashAlg::ALL
            .iter()
            .map(|&a| (a.name(), a))
            .chain(ALIASES)
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, a)| a)
            .ok_or_else(|| Error::UnknownAlgorithm {
                name: name.to_owned(),
            })
    }

    /// Hash `data` in one go.
    ///
    /// ```
    /// let d = mdu_verity::HashAlg::Sha256.hash(b"abc");
    /// assert!(d.to_hex().starts_with("ba7816bf"));
    /// ```
    pub fn hash(self, data: &[u8]) -> Digest {
        match Other::new(self) {
            None => Digest::from_slice(&sha256::State::new().finup(data)),
            Some(mut h) => {
                h.update(data);
                let mut out = [0u8; 64];
                h.finalize_into(&mut out[..self.digest_len()]);
                Digest::from_slice(&out[..self.digest_len()])
            }
        }
    }
}

impl fmt::Display for HashAlg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A digest of 32 (SHA-256) or 64 (SHA-512) bytes: a root hash or a file
/// digest. `Display` prints lowercase hex.
///
/// ```
/// use mdu_verity::Digest;
/// let d = Digest::from_hex("00ff")?;
/// assert_eq!(d.as_bytes(), &[0x00, 0xff]);
/// assert_eq!(d.to_string(), "00ff");
/// # Ok::<(), mdu_verity::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest {
    bytes: [u8; 64],
    len: u8,
}

impl Digest {
    /// A digest holding `bytes` (the first 64 bytes if longer).
    ///
    /// ```
    /// assert_eq!(mdu_verity::Digest::from_slice(&[1, 2]).as_bytes(), &[1, 2]);
    /// ```
    pub fn from_slice(bytes: &[u8]) -> Digest {
        let len = bytes.len().min(64);
        let mut d = Digest {
            bytes: [0; 64],
            len: len as u8,
        };
        d.bytes[..len].copy_from_slice(&bytes[..len]);
        d
    }

    /// Parse hex (upper or lower case) of at most 64 bytes.
    ///
    /// ```
    /// assert!(mdu_verity::Digest::from_hex("0g").is_err());
    /// ```
    pub fn from_hex(hex: &str) -> Result<Digest, Error> {
        let bytes = parse_hex(hex).ok_or_else(|| Error::RootHash {
            reason: format!("{hex:?} is not an even number of hex digits"),
        })?;
        if bytes.len() > 64 {
            return Err(Error::RootHash {
                reason: format!("{} bytes is longer than any digest (64)", bytes.len()),
            });
        }
        Ok(Digest::from_slice(&bytes))
    }

    /// The digest bytes.
    ///
    /// ```
    /// assert_eq!(mdu_verity::HashAlg::Sha512.hash(b"").as_bytes().len(), 64);
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Lowercase hex.
    ///
    /// ```
    /// assert_eq!(mdu_verity::Digest::from_slice(&[0xab]).to_hex(), "ab");
    /// ```
    pub fn to_hex(&self) -> String {
        to_hex(self.as_bytes())
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

impl AsRef<[u8]> for Digest {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

pub(crate) fn parse_hex(hex: &str) -> Option<Vec<u8>> {
    let h = hex.as_bytes();
    if !h.len().is_multiple_of(2) {
        return None;
    }
    let nib = |c: u8| (c as char).to_digit(16).map(|v| v as u8);
    h.chunks_exact(2)
        .map(|p| Some(nib(p[0])? << 4 | nib(p[1])?))
        .collect()
}

/// A fresh SHA-256 state on the pinned backend, or on the best one.
pub(crate) fn fresh_state(backend: Option<sha256::Backend>) -> Result<sha256::State, Error> {
    match backend {
        None => Ok(sha256::State::new()),
        Some(b) => {
            sha256::State::with_backend(b).map_err(|_| Error::BackendUnavailable { backend: b })
        }
    }
}

/// Where the salt goes in every block hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SaltAt {
    /// `H(salt || block)`: fs-verity (salt padded by the caller) and
    /// dm-verity format 1.
    Prefix,
    /// `H(block || salt)`: dm-verity format 0.
    Suffix,
}

#[derive(Clone)]
enum Prefixed {
    Sha256(sha256::State),
    Other(Other),
}

/// Blocks handed to [`sha256::State::finup_many`] at once: the lanes of
/// the widest kernel.
const GROUP: usize = 16;

/// Hashes equal-length blocks with a salt, sixteen or two at a time where
/// it pays.
#[derive(Clone)]
pub(crate) struct BlockHasher {
    state: Prefixed,
    suffix: Vec<u8>,
    alg: HashAlg,
}

impl BlockHasher {
    /// A hasher with `salt` at `at`, SHA-256 on the given fresh state
    /// (which pins the backend).
    pub(crate) fn with_sha256(
        alg: HashAlg,
        salt: &[u8],
        at: SaltAt,
        fresh: sha256::State,
    ) -> BlockHasher {
        let prefix = if at == SaltAt::Prefix { salt } else { &[] };
        let state = match Other::new(alg) {
            None => {
                let mut st = fresh;
                st.update(prefix);
                Prefixed::Sha256(st)
            }
            Some(mut st) => {
                st.update(prefix);
                Prefixed::Other(st)
            }
        };
        let suffix = if at == SaltAt::Suffix {
            salt.to_vec()
        } else {
            Vec::new()
        };
        BlockHasher { state, suffix, alg }
    }

    pub(crate) fn digest_len(&self) -> usize {
        self.alg.digest_len()
    }

    /// Hash one block into `out` (`digest_len` bytes).
    pub(crate) fn hash1(&self, block: &[u8], out: &mut [u8]) {
        match &self.state {
            Prefixed::Sha256(st) => {
                let d = if self.suffix.is_empty() {
                    st.finup(block)
                } else {
                    let mut st = st.clone();
                    st.update(block);
                    st.finup(&self.suffix)
                };
                out.copy_from_slice(&d);
            }
            Prefixed::Other(st) => {
                let mut st = st.clone();
                st.update(block);
                st.update(&self.suffix);
                st.finalize_into(out);
            }
        }
    }

    /// Hash the `block_size` blocks of `data` into consecutive digests of
    /// `out`, sixteen or two blocks per call where the backend hashes
    /// several messages at once ([`sha256::State::finup_many`]).
    pub(crate) fn hash_blocks(&self, data: &[u8], block_size: usize, out: &mut [u8]) {
        let dl = self.digest_len();
        debug_assert_eq!(data.len() / block_size * dl, out.len());
        match &self.state {
            Prefixed::Sha256(st) if self.suffix.is_empty() => {
                // Sixteen blocks at a time: in the lanes of the many-lane
                // kernel, or in pairs.
                let mut digests = [[0u8; sha256::DIGEST_LEN]; GROUP];
                for (blocks, o) in data
                    .chunks(GROUP * block_size)
                    .zip(out.chunks_mut(GROUP * dl))
                {
                    let k = blocks.len() / block_size;
                    let refs: [&[u8]; GROUP] = core::array::from_fn(|i| {
                        blocks
                            .get(i * block_size..(i + 1) * block_size)
                            .unwrap_or(&[])
                    });
                    st.finup_many(&refs[..k], &mut digests[..k]);
                    for (o, d) in o.chunks_exact_mut(dl).zip(&digests) {
                        o.copy_from_slice(d);
                    }
                }
            }
            Prefixed::Sha256(st) => {
                // Salt after the block: copy each pair next to its salt once,
                // then hash the two equal-length messages together.
                let msg_len = block_size + self.suffix.len();
                let mut scratch = vec![0u8; 2 * msg_len];
                for (s, _) in scratch.chunks_exact_mut(msg_len).zip(0..2) {
                    s[block_size..].copy_from_slice(&self.suffix);
                }
                let mut pairs = data.chunks_exact(2 * block_size);
                let mut outs = out.chunks_exact_mut(2 * dl);
                for (pair, o) in (&mut pairs).zip(&mut outs) {
                    scratch[..block_size].copy_from_slice(&pair[..block_size]);
                    scratch[msg_len..msg_len + block_size].copy_from_slice(&pair[block_size..]);
                    let (a, b) = scratch.split_at(msg_len);
                    let (x, y) = st.finup2x(a, b);
                    o[..dl].copy_from_slice(&x);
                    o[dl..].copy_from_slice(&y);
                }
                let rest = pairs.remainder();
                if !rest.is_empty() {
                    self.hash1(rest, outs.into_remainder());
                }
            }
            Prefixed::Other(_) => {
                for (block, o) in data.chunks_exact(block_size).zip(out.chunks_exact_mut(dl)) {
                    self.hash1(block, o);
                }
            }
        }
    }

    /// Hash the `block_size` blocks of `data` (sixteen or two at a time)
    /// and return the index
    /// of the first one whose digest differs from `expected(index)`, or
    /// `None` if all match. Spread over the rayon pool like
    /// [`hash_blocks_par`](Self::hash_blocks_par); the index returned is
    /// the lowest bad one whatever the number of threads.
    pub(crate) fn first_mismatch<'e>(
        &self,
        data: &[u8],
        block_size: usize,
        expected: &(dyn Fn(usize) -> &'e [u8] + Sync),
    ) -> Option<usize> {
        #[cfg(feature = "rayon")]
        {
            use rayon::prelude::*;
            let per_piece = (65536 / block_size).max(2);
            let piece = per_piece * block_size;
            if data.len() >= 2 * piece && rayon::current_num_threads() > 1 {
                return data.par_chunks(piece).enumerate().find_map_first(|(k, d)| {
                    self.first_mismatch_from(d, block_size, k * per_piece, expected)
                });
            }
        }
        self.first_mismatch_from(data, block_size, 0, expected)
    }

    /// [`first_mismatch`](Self::first_mismatch) on this thread, for blocks
    /// whose indexes start at `base`.
    fn first_mismatch_from<'e>(
        &self,
        data: &[u8],
        block_size: usize,
        base: usize,
        expected: &(dyn Fn(usize) -> &'e [u8] + Sync),
    ) -> Option<usize> {
        const BATCH: usize = 16;
        let dl = self.digest_len();
        let mut out = [0u8; BATCH * 64];
        for (k, batch) in data.chunks(BATCH * block_size).enumerate() {
            let nb = batch.len() / block_size;
            let out = &mut out[..nb * dl];
            self.hash_blocks(&batch[..nb * block_size], block_size, out);
            for (j, got) in out.chunks_exact(dl).enumerate() {
                let i = base + k * BATCH + j;
                if got != expected(i) {
                    return Some(i);
                }
            }
        }
        None
    }

    /// Hash equal-length blocks that lie anywhere (in different files'
    /// buffers) into `out`, one digest each, pairing consecutive blocks.
    pub(crate) fn hash_list(&self, blocks: &[&[u8]], out: &mut [u8]) {
        let dl = self.digest_len();
        debug_assert_eq!(blocks.len() * dl, out.len());
        match &self.state {
            Prefixed::Sha256(st) if self.suffix.is_empty() => {
                let mut digests = [[0u8; sha256::DIGEST_LEN]; GROUP];
                for (group, o) in blocks.chunks(GROUP).zip(out.chunks_mut(GROUP * dl)) {
                    st.finup_many(group, &mut digests[..group.len()]);
                    for (o, d) in o.chunks_exact_mut(dl).zip(&digests) {
                        o.copy_from_slice(d);
                    }
                }
            }
            _ => {
                for (b, o) in blocks.iter().zip(out.chunks_exact_mut(dl)) {
                    self.hash1(b, o);
                }
            }
        }
    }

    /// As [`hash_blocks`](Self::hash_blocks), spread over the rayon pool
    /// when the input is large (same bytes out).
    pub(crate) fn hash_blocks_par(&self, data: &[u8], block_size: usize, out: &mut [u8]) {
        #[cfg(feature = "rayon")]
        {
            use rayon::prelude::*;
            // Pieces of at least 64 KiB and an even number of blocks.
            let per_piece = (65536 / block_size).max(2);
            let piece = per_piece * block_size;
            if data.len() >= 2 * piece && rayon::current_num_threads() > 1 {
                let dl = self.digest_len();
                data.par_chunks(piece)
                    .zip(out.par_chunks_mut(per_piece * dl))
                    .for_each(|(d, o)| self.hash_blocks(d, block_size, o));
                return;
            }
        }
        self.hash_blocks(data, block_size, out)
    }
}
