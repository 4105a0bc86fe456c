//! The one error type of the crate.

use std::fmt;

/// Why an image, a header field, a passphrase or a parameter was refused.
///
/// Every variant names the field or offset at fault and what was expected,
/// so a damaged or hostile image is reported precisely and never used.
///
/// ```
/// use mdu_luks2::{Image, Error};
/// let err = Image::load(&[0u8; 100][..]).unwrap_err();
/// assert!(matches!(err, Error::NoValidHeader { .. }));
/// assert!(err.to_string().contains("no valid LUKS2 header"));
/// ```
#[non_exhaustive]
#[derive(Debug)]
pub enum Error {
    /// Reading the image failed.
    Io(std::io::Error),
    /// Reading `len` bytes at `offset` failed: the file ends before them
    /// (it is shorter than the header says, or shrank), or the read failed.
    ReadAt {
        /// What was to be read.
        what: &'static str,
        /// Where it starts, in bytes.
        offset: u64,
        /// How long it is, in bytes.
        len: u64,
        /// The failure.
        error: std::io::Error,
    },
    /// A structure does not fit inside the image.
    Truncated {
        /// What was to be read.
        what: &'static str,
        /// Where it starts, in bytes.
        offset: u64,
        /// How long it is, in bytes.
        len: u64,
        /// The image length, in bytes.
        image_len: u64,
    },
    /// The binary header at `offset` does not start with the LUKS magic of
    /// its copy (`LUKS\xba\xbe` primary, `SKUL\xba\xbe` secondary).
    BadMagic {
        /// The header's offset.
        offset: u64,
    },
    /// The binary header's version is not 2.
    UnsupportedVersion {
        /// The header's offset.
        offset: u64,
        /// The version found.
        version: u16,
    },
    /// `hdr_size` is not one of [`HEADER_SIZES`](crate::HEADER_SIZES), or a
    /// secondary header's size differs from its offset.
    HeaderSize {
        /// The header's offset.
        offset: u64,
        /// The size found, in bytes.
        size: u64,
    },
    /// The `hdr_offset` field disagrees with where the header was found.
    HeaderOffset {
        /// Where the header was found.
        offset: u64,
        /// What its `hdr_offset` field says.
        found: u64,
    },
    /// The checksum algorithm is not `sha256`.
    ChecksumAlgorithm {
        /// The header's offset.
        offset: u64,
        /// The algorithm named.
        name: String,
    },
    /// The SHA-256 of the header copy does not match its `csum` field.
    ChecksumMismatch {
        /// The header's offset.
        offset: u64,
    },
    /// A text field of the binary header (label, UUID, subsystem, checksum
    /// algorithm) is not NUL-terminated UTF-8.
    HeaderText {
        /// The header's offset.
        offset: u64,
        /// The field.
        field: &'static str,
    },
    /// The JSON area is not a JSON text followed by NUL bytes only.
    JsonArea {
        /// The header's offset.
        offset: u64,
        /// What is wrong.
        problem: &'static str,
    },
    /// The JSON text does not parse.
    JsonSyntax {
        /// The header's offset.
        offset: u64,
        /// The parser's message.
        message: String,
    },
    /// A check policy (`mdu_luks2::check::Policy`) is not JSON.
    PolicySyntax {
        /// The parser's message.
        message: String,
    },
    /// A JSON field is missing or has the wrong type or form.
    Schema {
        /// The field's path, like `keyslots.0.area.offset`.
        field: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A field names a type or feature this crate does not implement
    /// (a `reencrypt` keyslot, a `linear` segment, a `requirements` flag).
    Unsupported {
        /// The field's path.
        field: String,
        /// The value found.
        value: String,
    },
    /// A size, offset or count is out of range or inconsistent with the
    /// header or the image.
    Layout {
        /// The field's path.
        field: String,
        /// The rule that was broken.
        problem: String,
    },
    /// Two keyslot areas overlap.
    KeyslotAreasOverlap {
        /// One keyslot.
        first: u32,
        /// The other.
        second: u32,
    },
    /// A digest lists a keyslot or segment that does not exist.
    DanglingReference {
        /// The digest.
        digest: u32,
        /// `keyslot` or `segment`.
        kind: &'static str,
        /// The missing id.
        id: u32,
    },
    /// Neither header copy is valid; both reasons are kept.
    NoValidHeader {
        /// Why the primary header (at 0) was refused.
        primary: Box<Error>,
        /// Why no secondary header was found or accepted.
        secondary: Box<Error>,
    },
    /// No keyslot opened with the passphrase.
    WrongPassphrase,
    /// The image has no keyslot (or digest) that could open a volume key.
    NoKeyslot,
    /// The keyslots bound to the data segment are all left out of an
    /// unlock by their priority.
    NoUsableKeyslot {
        /// The data segment.
        segment: u32,
        /// Which keyslots were left out and why.
        why: String,
    },
    /// The passphrase opened no keyslot bound to the data segment, but it
    /// opens an unbound keyslot, whose key decrypts no data.
    UnboundKeyslot {
        /// The unbound keyslot the passphrase opens.
        slot: u32,
        /// The data segment.
        segment: u32,
    },
    /// The keyslot named is not bound to the data segment.
    KeyslotNotBound {
        /// The keyslot.
        slot: u32,
        /// The data segment.
        segment: u32,
    },
    /// The keyslot named holds the key of a segment, not an unbound key.
    NotUnbound {
        /// The keyslot.
        slot: u32,
    },
    /// The requested keyslot does not exist.
    NoSuchKeyslot {
        /// The keyslot asked for.
        slot: u32,
    },
    /// The key derivation function refused its parameters.
    Kdf {
        /// The keyslot (or `None` for the digest).
        slot: Option<u32>,
        /// The library's message.
        message: String,
    },
    /// A cipher spec, key or sector size was refused.
    Cipher(mdu_dmcrypt::Error),
    /// A keyslot area or segment names a cipher spec this crate does not
    /// run; the header still loads and dumps, and the error comes when that
    /// keyslot or segment is used.
    UnsupportedCipher {
        /// The field, like `keyslots.1.area.encryption`.
        field: String,
        /// Why the spec was refused (it lists what is supported).
        error: mdu_dmcrypt::Error,
    },
    /// The header carries `config.requirements` this crate must honour
    /// before the data can be used: a reencryption in progress
    /// (`online-reencrypt-v2`/`-v3`), or a feature it does not know.
    Requirements {
        /// `requirements.mandatory` as written.
        requirements: Vec<String>,
    },
    /// The digest of the `reencrypt` keyslot does not match its metadata
    /// and volume keys: the record of the reencryption was changed, or the
    /// keys are not the ones it was made with. Nothing is converted.
    ReencryptDigest {
        /// Why.
        problem: String,
    },
    /// A reencryption cannot go on from this state; nothing was written.
    Reencrypt {
        /// Why.
        problem: String,
    },
    /// The data segment could not be mapped or read as a volume.
    Volume(mdu_dmcrypt::VolumeError),
    /// A parameter of [`FormatParams`](crate::FormatParams) or a call is
    /// out of range.
    Params {
        /// What is wrong.
        problem: String,
    },
    /// A reencryption is in progress where a command asked to start one
    /// (`other`: false) or asked for another run than the one recorded
    /// (`other`: true).
    InProgress {
        /// Whether the command asked for another run.
        other: bool,
    },
    /// A command asked to go on with a reencryption, and none is in
    /// progress; the `refilled` free bytes of the keyslots area were
    /// refilled with random bytes (what a run killed after its final
    /// header left there is gone).
    NotInProgress {
        /// Bytes refilled.
        refilled: u64,
    },
    /// A new keyslot was asked for at an id that a keyslot already has
    /// (or that is out of range).
    KeyslotTaken {
        /// The id asked for.
        slot: u32,
    },
    /// Every keyslot id (0 to 31) is taken.
    KeyslotsFull,
    /// No free range of the keyslots area is large enough for the area of
    /// a new keyslot (and an old keyslot is never overwritten in place).
    NoKeyslotRoom {
        /// The area size needed, in bytes.
        needed: u64,
    },
    /// The volume key given does not match the volume's key digest.
    WrongVolumeKey,
}

impl Error {
    /// Whether the error means the passphrase opened no keyslot (as
    /// opposed to a damaged image or a bad parameter).
    ///
    /// ```
    /// assert!(mdu_luks2::Error::WrongPassphrase.is_wrong_passphrase());
    /// ```
    ///
    /// A passphrase that opens only an unbound keyslot is a wrong one for
    /// the data:
    ///
    /// ```
    /// let e = mdu_luks2::Error::UnboundKeyslot { slot: 1, segment: 0 };
    /// assert!(e.is_wrong_passphrase());
    /// ```
    pub fn is_wrong_passphrase(&self) -> bool {
        matches!(self, Error::WrongPassphrase | Error::UnboundKeyslot { .. })
    }

    pub(crate) fn schema(field: impl Into<String>, expected: &'static str) -> Error {
        Error::Schema {
            field: field.into(),
            expected,
        }
    }

    pub(crate) fn layout(field: impl Into<String>, problem: impl Into<String>) -> Error {
        Error::Layout {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "cannot read the image: {e}"),
            Error::ReadAt {
                what,
                offset,
                len,
                error,
            } if error.kind() == std::io::ErrorKind::UnexpectedEof => write!(
                f,
                "cannot read the {what} ({len} bytes at offset {offset}): the file ends before \
                 them (it is shorter than its header says, or shrank while it was read)"
            ),
            Error::ReadAt {
                what,
                offset,
                len,
                error,
            } => write!(
                f,
                "cannot read the {what} ({len} bytes at offset {offset}): {error}"
            ),
            Error::Truncated {
                what,
                offset,
                len,
                image_len,
            } => write!(
                f,
                "the {what} ({len} bytes at offset {offset}) does not fit in the {image_len}-byte image"
            ),
            Error::BadMagic { offset } => {
                write!(f, "no LUKS magic at offset {offset}")
            }
            Error::UnsupportedVersion { offset, version } => write!(
                f,
                "the header at offset {offset} is LUKS version {version}; only version 2 is supported"
            ),
            Error::HeaderSize { offset, size } => write!(
                f,
                "the header at offset {offset} gives hdr_size {size}; it must be 16 KiB..4 MiB, a power of two (and equal to a secondary header's offset)"
            ),
            Error::HeaderOffset { offset, found } => write!(
                f,
                "the header at offset {offset} says it lies at offset {found}"
            ),
            Error::ChecksumAlgorithm { offset, name } => write!(
                f,
                "the header at offset {offset} uses checksum algorithm {name:?}; only sha256 is supported"
            ),
            Error::ChecksumMismatch { offset } => write!(
                f,
                "the header at offset {offset} fails its SHA-256 checksum: it is damaged"
            ),
            Error::HeaderText { offset, field } => write!(
                f,
                "the {field} field of the header at offset {offset} is not NUL-terminated UTF-8"
            ),
            Error::JsonArea { offset, problem } => {
                write!(
                    f,
                    "the JSON area of the header at offset {offset}: {problem}"
                )
            }
            Error::JsonSyntax { offset, message } => write!(
                f,
                "the JSON metadata of the header at offset {offset} does not parse: {message}"
            ),
            Error::PolicySyntax { message } => {
                write!(f, "the check policy is not valid JSON: {message}")
            }
            Error::Schema { field, expected } => {
                write!(f, "JSON field {field}: expected {expected}")
            }
            Error::Unsupported { field, value } => {
                write!(f, "JSON field {field}: {value:?} is not supported")
            }
            Error::Layout { field, problem } => write!(f, "{field}: {problem}"),
            Error::KeyslotAreasOverlap { first, second } => {
                write!(f, "the areas of keyslots {first} and {second} overlap")
            }
            Error::DanglingReference { digest, kind, id } => {
                write!(f, "digest {digest} lists {kind} {id}, which does not exist")
            }
            Error::NoValidHeader { primary, secondary } => write!(
                f,
                "no valid LUKS2 header: primary: {primary}; secondary: {secondary}"
            ),
            Error::WrongPassphrase => {
                f.write_str("no key available with this passphrase (no keyslot opened)")
            }
            Error::NoKeyslot => f.write_str("the image has no usable keyslot"),
            Error::NoUsableKeyslot { segment, why } => {
                write!(f, "no keyslot bound to segment {segment} is usable: {why}")
            }
            Error::UnboundKeyslot { slot, segment } => write!(
                f,
                "the passphrase opens only unbound keyslot {slot}, which holds no volume key of segment {segment}"
            ),
            Error::KeyslotNotBound { slot, segment } => write!(
                f,
                "keyslot {slot} is not bound to segment {segment}: its key does not decrypt the data"
            ),
            Error::NotUnbound { slot } => write!(
                f,
                "keyslot {slot} does not contain an unbound key (its digest is bound to a segment)"
            ),
            Error::NoSuchKeyslot { slot } => write!(f, "keyslot {slot} does not exist"),
            Error::Kdf { slot, message } => match slot {
                Some(s) => write!(f, "keyslot {s}: key derivation refused: {message}"),
                None => write!(f, "digest: key derivation refused: {message}"),
            },
            Error::Cipher(e) => write!(f, "cipher: {e}"),
            Error::UnsupportedCipher { field, error } => {
                write!(f, "JSON field {field}: {error}")
            }
            Error::Params { problem } => f.write_str(problem),
            Error::Volume(e) => write!(f, "the data segment: {e}"),
            Error::Requirements { requirements } => {
                if requirements
                    .iter()
                    .any(|r| r.starts_with("online-reencrypt"))
                {
                    write!(
                        f,
                        "a reencryption is in progress (requirements {requirements:?}): finish it with `mdu luks reencrypt --resume-only` or `cryptsetup reencrypt --resume-only` before using the data"
                    )
                } else {
                    write!(
                        f,
                        "the header requires features this tool does not have: {requirements:?}"
                    )
                }
            }
            Error::ReencryptDigest { problem } => {
                write!(f, "the reencryption record is not authentic: {problem}")
            }
            Error::Reencrypt { problem } => write!(f, "reencryption: {problem}"),
            Error::InProgress { other: false } => {
                f.write_str("a reencryption is already in progress")
            }
            Error::InProgress { other: true } => f.write_str(
                "a reencryption is already in progress, and not the one asked for: resume it \
                 as it was started",
            ),
            Error::NotInProgress { refilled } => write!(
                f,
                "no reencryption in progress (the {refilled} free bytes of the keyslots area were \
                 refilled with random bytes, so nothing an interrupted run left there remains)"
            ),
            Error::KeyslotTaken { slot } if *slot >= crate::MAX_KEYSLOTS => write!(
                f,
                "keyslot {slot} is out of range: keyslots are 0 to {}",
                crate::MAX_KEYSLOTS - 1
            ),
            Error::KeyslotTaken { slot } => {
                write!(f, "keyslot {slot} is in use; choose another one")
            }
            Error::KeyslotsFull => write!(
                f,
                "all {} keyslots are in use; remove one first",
                crate::MAX_KEYSLOTS
            ),
            Error::NoKeyslotRoom { needed } => write!(
                f,
                "no free range of {needed} bytes is left in the keyslots area for the new \
                 keyslot (an existing keyslot is never overwritten in place); remove a keyslot first"
            ),
            Error::WrongVolumeKey => f.write_str("the volume key does not match the volume"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::ReadAt { error, .. } => Some(error),
            Error::Cipher(e) => Some(e),
            Error::Volume(e) => Some(e),
            Error::UnsupportedCipher { error, .. } => Some(error),
            Error::NoValidHeader { primary, .. } => Some(primary.as_ref()),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e)
    }
}

/// A failed positioned read or size query of the image, as the operating
/// system's error ([`Error::Io`]); reads that name what they read map
/// to [`Error::ReadAt`] where they are made.
impl From<mdu_core::io::IoError> for Error {
    fn from(e: mdu_core::io::IoError) -> Error {
        Error::Io(e.into())
    }
}

impl From<mdu_dmcrypt::Error> for Error {
    fn from(e: mdu_dmcrypt::Error) -> Error {
        Error::Cipher(e)
    }
}

impl From<mdu_core::Error> for Error {
    fn from(e: mdu_core::Error) -> Error {
        Error::Cipher(mdu_dmcrypt::Error::Cipher(e))
    }
}

/// The in-place engine's reads of the data device, as this crate's own
/// reads say them; its writes and syncs as I/O errors.
impl From<mdu_inplace::DeviceError> for Error {
    fn from(e: mdu_inplace::DeviceError) -> Error {
        match e.op {
            mdu_inplace::Op::Read => Error::ReadAt {
                what: "data device",
                offset: e.offset,
                len: e.len,
                error: e.error,
            },
            _ => Error::Io(e.error),
        }
    }
}

impl From<mdu_dmcrypt::VolumeError> for Error {
    fn from(e: mdu_dmcrypt::VolumeError) -> Error {
        Error::Volume(e)
    }
}
