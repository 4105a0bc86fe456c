//! The error type of every fallible call in this crate.

use core::fmt;

/// What was wrong with a parameter, an input or a verified device.
///
/// Every variant names the offending value and the rule it broke.
///
/// ```
/// use mdu_verity::{fsverity, Error, HashAlg};
///
/// let params = fsverity::Params { hash: HashAlg::Sha256, block_size: 3000, ..Default::default() };
/// let err = fsverity::digest(&b""[..], &params).unwrap_err();
/// assert!(matches!(err, Error::BlockSize { size: 3000, .. }));
/// assert!(err.to_string().contains("power of two"));
/// ```
#[non_exhaustive]
#[derive(Debug)]
pub enum Error {
    /// A block size is not a power of two in the accepted range.
    BlockSize {
        /// Which block size (`"fs-verity block"`, `"data block"`, `"hash block"`).
        what: &'static str,
        /// The size that was given.
        size: u64,
        /// Smallest accepted size.
        min: u64,
        /// Largest accepted size.
        max: u64,
    },
    /// The salt is longer than the format allows.
    SaltTooLong {
        /// Length of the given salt in bytes.
        len: usize,
        /// The format's maximum.
        max: usize,
    },
    /// A hash algorithm name that this crate (or the format) does not know.
    UnknownAlgorithm {
        /// The name as found.
        name: String,
    },
    /// A hash algorithm that dm-verity takes but fs-verity does not
    /// (fs-verity has SHA-256 and SHA-512 only).
    NotFsverityAlgorithm {
        /// The algorithm that was given.
        alg: crate::HashAlg,
    },
    /// A dm-verity hash type (format) other than 0 or 1.
    UnknownHashType {
        /// The value that was given or found.
        hash_type: u32,
    },
    /// The dm-verity hash offset is not a multiple of 512 bytes.
    HashOffset {
        /// The offset in bytes.
        offset: u64,
    },
    /// dm-verity needs at least one whole data block.
    NoDataBlocks {
        /// Bytes available on the data device.
        data_bytes: u64,
        /// The data block size.
        data_block_size: u32,
    },
    /// A dm-verity block count of zero: from the parameters, a superblock
    /// or a verify range. Verifying zero blocks would prove nothing, so it
    /// is refused rather than reported as success.
    ZeroDataBlocks {
        /// Where the zero came from (`"the superblock's data_blocks"`,
        /// `"Params::data_blocks"`, `"the verify range"`).
        source: &'static str,
    },
    /// A parameter the caller pinned disagrees with the superblock of the
    /// hash device.
    PinMismatch {
        /// The field (`"data_blocks"`, `"hash"`, `"salt"`, ...).
        field: &'static str,
        /// The pinned value, as text.
        pinned: String,
        /// The value in the superblock, as text.
        superblock: String,
    },
    /// The data device ends before a data block the tree covers: a
    /// verification failure (the device is shorter than the verified
    /// image), not a parameter error.
    MissingDataBlock {
        /// Index of the first data block that is not on the device.
        block: u64,
        /// Data blocks the tree covers.
        data_blocks: u64,
    },
    /// The dm-verity hash offset is so large that the superblock or the
    /// tree cannot be addressed with 64-bit byte offsets.
    HashOffsetTooLarge {
        /// The offset in bytes.
        offset: u64,
        /// The largest accepted offset.
        max: u64,
    },
    /// The input ended before the number of data blocks that was asked for.
    TruncatedInput {
        /// Data blocks asked for.
        expected_blocks: u64,
        /// Whole data blocks that were available.
        available_blocks: u64,
    },
    /// The hash area (buffer or device) cannot hold the tree.
    HashAreaTooSmall {
        /// Bytes needed (from offset 0 of the hash area).
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// The tree would have more levels or bytes than can be addressed.
    TreeTooLarge {
        /// Number of data blocks.
        data_blocks: u64,
    },
    /// A verify range that does not lie inside the data device.
    BlockRange {
        /// First data block asked for.
        start: u64,
        /// Number of data blocks asked for.
        count: u64,
        /// Data blocks on the device.
        data_blocks: u64,
    },
    /// A root hash of the wrong length or not valid hex.
    RootHash {
        /// What was wrong.
        reason: String,
    },
    /// The superblock does not start with `"verity\0\0"`.
    BadSignature,
    /// A superblock version other than 1.
    UnknownVersion {
        /// The version found.
        version: u32,
    },
    /// A data block does not match its hash.
    CorruptDataBlock {
        /// Index of the data block (0 = first block of the data device).
        block: u64,
    },
    /// A hash block does not match the hash one level up (or the root hash).
    CorruptHashBlock {
        /// Tree level (0 = the level just above the data).
        level: usize,
        /// Index of the block within its level.
        index: u64,
        /// Position of the block on the hash device, in hash blocks.
        hash_block: u64,
    },
    /// The last hash block of a level has non-zero bytes after its last
    /// digest: the tree was made over more data blocks than are verified.
    HashBlockSpare {
        /// Position of the block on the hash device, in hash blocks.
        hash_block: u64,
        /// Offset of the first non-zero spare byte within the block.
        offset: usize,
    },
    /// A SHA-256 backend pinned in the parameters that this CPU does not
    /// run.
    BackendUnavailable {
        /// The pinned backend.
        backend: crate::sha256::Backend,
    },
    /// dm-verity verification without a pinned number of data blocks needs
    /// the length of the data before reading it, and the source cannot
    /// tell it (chunks or a plain reader without
    /// [`Source::with_len`](crate::Source::with_len)).
    DataLengthUnknown,
    /// A number of FEC parity bytes per codeword outside 2..=24.
    FecRoots {
        /// The number given.
        roots: u8,
    },
    /// FEC input that does not fit its layout (partial blocks, too many or
    /// too few blocks).
    FecInput {
        /// What was wrong.
        reason: String,
    },
    /// A FEC round whose damage is beyond what its parity corrects.
    FecUncorrectable {
        /// The round (blocks `i * R + round` of the FEC input).
        round: u64,
        /// The first byte offset within the blocks whose codeword failed.
        byte: usize,
    },
    /// FEC over a dm-verity image whose data and hash block sizes differ
    /// (`veritysetup` protects both areas in blocks of one size).
    FecBlockSizes {
        /// The data block size.
        data: u32,
        /// The hash block size.
        hash: u32,
    },
    /// A FEC parity offset that is not a multiple of 512.
    FecOffset {
        /// The offset given.
        offset: u64,
    },
    /// FEC parity placed on the hash device at an offset inside the hash
    /// tree ([`FecParams::check_placement`](crate::dmverity::fec::FecParams::check_placement)).
    FecOffsetInTree {
        /// The parity's offset.
        offset: u64,
        /// Where the tree ends on the hash device.
        tree_end: u64,
    },
    /// FEC parity placed on the hash device at an offset past its end
    /// (`veritysetup` needs the device that long first).
    FecOffsetPastEnd {
        /// The parity's offset.
        offset: u64,
        /// The hash device's length.
        device_len: u64,
    },
    /// Data and hash on one device, with the data area running into the
    /// hash area ([`Params::check_shared_device`](crate::dmverity::Params::check_shared_device)).
    DataOverlapsHash {
        /// Where the data area ends.
        data_end: u64,
        /// Where the hash area starts.
        hash_offset: u64,
    },
    /// The FEC device ends before the parity of a round: a short or
    /// truncated parity, which cannot correct anything.
    FecParityShort {
        /// The round whose parity is missing.
        round: u64,
        /// Rounds of the layout.
        rounds: u64,
        /// Where the round's parity starts on the FEC device.
        offset: u64,
        /// Where it ends.
        end: u64,
    },
    /// An I/O error reading one of the devices for FEC decoding.
    FecIo {
        /// Which device: `"data"`, `"hash"` or `"FEC"`.
        device: &'static str,
        /// The byte offset of the read.
        offset: u64,
        /// What the read said.
        error: std::io::Error,
    },
    /// The input ended before the length it was known to have: the length
    /// given to [`Source::with_len`](crate::Source::with_len), or the size
    /// a file, device or seekable reader had when the work started (a file
    /// truncated while it was read, or one whose size overstates what it
    /// holds). Only the bytes up to that length are the input; a shorter
    /// read is never taken for the whole of it.
    ///
    /// ```
    /// use mdu_verity::{fsverity, Error, Source};
    /// let short = Source::reader(&[1u8; 100][..]).with_len(4096);
    /// let e = fsverity::digest(short, &fsverity::Params::default()).unwrap_err();
    /// assert!(matches!(e, Error::UnexpectedEof { expected: 4096, got: 100 }));
    /// ```
    UnexpectedEof {
        /// Bytes the input was to hold (from its starting position).
        expected: u64,
        /// Bytes it held when it ended.
        got: u64,
    },
    /// An input whose length cannot be known before it is read (a
    /// character device such as `/dev/zero`, a FIFO, a socket), given as a
    /// path: it might never end. Read such an input with
    /// [`Source::reader`](crate::Source::reader), which reads it to its
    /// end, or give its length with [`Source::with_len`](crate::Source::with_len).
    ///
    /// ```
    /// use mdu_verity::{fsverity, Error, Source};
    /// # #[cfg(target_os = "linux")]
    /// # {
    /// let e = fsverity::digest(Source::path("/dev/zero"), &fsverity::Params::default());
    /// assert!(matches!(e, Err(Error::NotSized { kind: "a character device" })));
    /// // Read as a stream, with a length, it is fine.
    /// let zero = std::fs::File::open("/dev/zero").unwrap();
    /// let d = fsverity::digest(Source::reader(zero).with_len(4096), &fsverity::Params::default());
    /// assert_eq!(d.unwrap(), fsverity::digest(&[0u8; 4096], &fsverity::Params::default()).unwrap());
    /// # }
    /// ```
    NotSized {
        /// What the input is (`"a character device"`, `"a FIFO"`, `"a socket"`).
        kind: &'static str,
    },
    /// An input given as a path that is a directory (reading it fails, and
    /// some file systems give it a size of 2^63 - 1 bytes).
    Directory,
    /// An I/O error from the reader or writer.
    Io(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BlockSize {
                what,
                size,
                min,
                max,
            } => write!(
                f,
                "{what} size {size} is invalid: it must be a power of two from {min} to {max} bytes"
            ),
            Error::SaltTooLong { len, max } => {
                write!(f, "salt of {len} bytes is too long: at most {max} bytes")
            }
            Error::UnknownAlgorithm { name } => {
                write!(f, "unknown or unsupported hash algorithm {name:?}: expected ")?;
                for (i, alg) in crate::HashAlg::ALL.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{alg}")?;
                }
                f.write_str(" (fs-verity: sha256 or sha512)")
            }
            Error::NotFsverityAlgorithm { alg } => write!(
                f,
                "fs-verity has no hash algorithm {alg}: expected sha256 or sha512"
            ),
            Error::UnknownHashType { hash_type } => write!(
                f,
                "unknown dm-verity hash type (format) {hash_type}: expected 0 or 1"
            ),
            Error::HashOffset { offset } => {
                write!(f, "hash offset {offset} is not a multiple of 512 bytes")
            }
            Error::NoDataBlocks {
                data_bytes,
                data_block_size,
            } => write!(
                f,
                "the data ({data_bytes} bytes) holds no whole data block of {data_block_size} bytes; dm-verity needs at least one"
            ),
            Error::ZeroDataBlocks { source } => write!(
                f,
                "{source} is 0: verifying zero data blocks would prove nothing, so at least one is required"
            ),
            Error::PinMismatch {
                field,
                pinned,
                superblock,
            } => write!(
                f,
                "the superblock says {field} = {superblock}, but {pinned} was pinned by the caller"
            ),
            Error::MissingDataBlock { block, data_blocks } => write!(
                f,
                "data block {block} is missing: the data device ends before it, but the tree covers {data_blocks} blocks"
            ),
            Error::HashOffsetTooLarge { offset, max } => {
                write!(f, "hash offset {offset} is too large: at most {max} bytes")
            }
            Error::TruncatedInput {
                expected_blocks,
                available_blocks,
            } => write!(
                f,
                "truncated input: {expected_blocks} data blocks asked for, only {available_blocks} available"
            ),
            Error::HashAreaTooSmall { needed, available } => write!(
                f,
                "hash area too small: {needed} bytes needed, {available} available"
            ),
            Error::TreeTooLarge { data_blocks } => write!(
                f,
                "a tree over {data_blocks} data blocks is too large to address with 64-bit byte offsets"
            ),
            Error::BlockRange {
                start,
                count,
                data_blocks,
            } => write!(
                f,
                "data blocks {start}..{start}+{count} are outside the device of {data_blocks} blocks"
            ),
            Error::RootHash { reason } => write!(f, "invalid root hash: {reason}"),
            Error::BadSignature => {
                f.write_str("not a dm-verity superblock: signature is not \"verity\\0\\0\"")
            }
            Error::UnknownVersion { version } => write!(
                f,
                "unknown dm-verity superblock version {version}: expected 1"
            ),
            Error::CorruptDataBlock { block } => {
                write!(f, "data block {block} does not match its hash")
            }
            Error::CorruptHashBlock {
                level,
                index,
                hash_block,
            } => write!(
                f,
                "hash block {hash_block} (level {level}, index {index}) does not match its hash"
            ),
            Error::HashBlockSpare { hash_block, offset } => write!(
                f,
                "hash block {hash_block} has a non-zero byte at offset {offset}, after its last digest: \
                 the tree covers more data blocks than are being verified"
            ),
            Error::BackendUnavailable { backend } => write!(
                f,
                "the SHA-256 backend {backend} was pinned, but this CPU does not run it"
            ),
            Error::DataLengthUnknown => f.write_str(
                "the length of the data is unknown: pin the number of data blocks or give the source's length",
            ),
            Error::FecRoots { roots } => write!(
                f,
                "{roots} FEC parity bytes per codeword is invalid: expected 2 to 24"
            ),
            Error::FecInput { reason } => write!(f, "invalid FEC input: {reason}"),
            Error::FecUncorrectable { round, byte } => write!(
                f,
                "FEC round {round} cannot be repaired: the codeword of byte {byte} has more damage than its parity corrects"
            ),
            Error::FecBlockSizes { data, hash } => write!(
                f,
                "FEC needs equal block sizes, but the data blocks are {data} bytes and the hash \
                 blocks {hash}"
            ),
            Error::FecOffset { offset } => write!(
                f,
                "FEC offset {offset} is invalid: it must be a multiple of 512"
            ),
            Error::FecOffsetInTree { offset, tree_end } => write!(
                f,
                "FEC offset {offset} lies inside the hash tree, which ends at byte {tree_end}"
            ),
            Error::FecOffsetPastEnd { offset, device_len } => write!(
                f,
                "FEC offset {offset} is past the end of the hash device ({device_len} bytes)"
            ),
            Error::DataOverlapsHash {
                data_end,
                hash_offset,
            } => write!(
                f,
                "the data area ({data_end} bytes) overlaps the hash area starting at byte \
                 {hash_offset} of the same device"
            ),
            Error::FecParityShort {
                round,
                rounds,
                offset,
                end,
            } => write!(
                f,
                "the FEC parity ends before byte {end}, but round {round} of {rounds} needs bytes \
                 {offset}..{end}: a short parity cannot correct anything"
            ),
            Error::FecIo {
                device,
                offset,
                error,
            } => write!(
                f,
                "I/O error reading the {device} device at byte {offset} for FEC decoding: {error}"
            ),
            Error::UnexpectedEof { expected, got } => write!(
                f,
                "unexpected end of file after {got} bytes: the input was to hold {expected} bytes \
                 (was it truncated while it was read?)"
            ),
            Error::NotSized { kind } => write!(
                f,
                "the input is {kind}, which has no size to read up to: expected a regular file \
                 or a block device"
            ),
            Error::Directory => f.write_str(
                "the input is a directory: expected a regular file or a block device",
            ),
            Error::Io(e) => write!(f, "I/O error: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) | Error::FecIo { error: e, .. } => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// A failed positioned read, write or size query (of a FEC, data or hash
/// device) as an I/O error: a read past the end becomes one of kind
/// [`UnexpectedEof`](std::io::ErrorKind::UnexpectedEof) that names the
/// range and the size.
impl From<mdu_core::io::IoError> for Error {
    fn from(e: mdu_core::io::IoError) -> Self {
        Error::Io(e.into())
    }
}
