//! The library's dm-verity errors as the CLI reports them: what keeps
//! the data from verifying fails verification (exit 1), naming the file
//! and the bytes.

use super::*;

/// Turn a library error of `verify` into a CLI error: everything found in
/// DATA or HASH that keeps the data from verifying (a bad, missing or
/// absent block, a damaged superblock, a pin it contradicts) is a
/// verification failure (exit 1); only I/O errors are not.
pub(super) fn verify_error(
    data: &Path,
    hash: &Path,
    p: &dmverity::Params,
    e: VerityError,
) -> CliError {
    match e {
        VerityError::Io(_) | VerityError::UnexpectedEof { .. } => verity_error(data, hash, p, e),
        VerityError::DataLengthUnknown => CliError::Input {
            path: data.to_owned(),
            offset: 0,
            rule: "its length cannot be known before it is read (a pipe): \
                   give --data-blocks, or verify with the superblock"
                .into(),
        },
        VerityError::MissingDataBlock { block, data_blocks } => {
            let at = block * u64::from(p.data_block_size);
            CliError::VerifyFailed(format!(
                "{}: data block {block} (bytes {at}..{}) is missing: the data ends before it, \
                 but the tree covers {data_blocks} blocks",
                data.display(),
                at + u64::from(p.data_block_size)
            ))
        }
        VerityError::NoDataBlocks { data_bytes, .. } => CliError::VerifyFailed(format!(
            "{}: the data ({data_bytes} bytes) holds no whole data block of {} bytes; \
             nothing could be verified",
            data.display(),
            p.data_block_size
        )),
        VerityError::CorruptDataBlock { .. }
        | VerityError::CorruptHashBlock { .. }
        | VerityError::HashAreaTooSmall { .. } => verity_error(data, hash, p, e),
        other => CliError::VerifyFailed(format!("{}: {other}", hash.display())),
    }
}

/// Turn a library error into a CLI error naming the file and offset.
pub(super) fn verity_error(
    data: &Path,
    hash: &Path,
    p: &dmverity::Params,
    e: VerityError,
) -> CliError {
    match e {
        VerityError::CorruptDataBlock { block } => {
            let at = block * u64::from(p.data_block_size);
            CliError::VerifyFailed(format!(
                "{}: data block {block} (bytes {at}..{}) does not match its hash",
                data.display(),
                at + u64::from(p.data_block_size)
            ))
        }
        VerityError::CorruptHashBlock {
            level,
            index,
            hash_block,
        } => {
            let at = hash_block * u64::from(p.hash_block_size);
            CliError::VerifyFailed(format!(
                "{}: hash block {hash_block} (level {level}, index {index}, bytes {at}..{}) \
                 does not match its hash",
                hash.display(),
                at + u64::from(p.hash_block_size)
            ))
        }
        VerityError::HashAreaTooSmall { needed, available } => CliError::VerifyFailed(format!(
            "{}: the hash area ends at byte {available} but the tree needs {needed} bytes",
            hash.display()
        )),
        VerityError::TruncatedInput {
            expected_blocks,
            available_blocks,
        } => CliError::Input {
            path: data.to_owned(),
            offset: available_blocks * u64::from(p.data_block_size),
            rule: format!(
                "the data ends after {available_blocks} whole blocks of {} bytes, \
                 but {expected_blocks} were asked for",
                p.data_block_size
            ),
        },
        VerityError::NoDataBlocks { data_bytes, .. } => CliError::Input {
            path: data.to_owned(),
            offset: data_bytes,
            rule: format!(
                "dm-verity needs at least one whole data block of {} bytes",
                p.data_block_size
            ),
        },
        VerityError::Io(io) => CliError::Library {
            path: data.to_owned(),
            message: format!("I/O error: {io}"),
        },
        e @ VerityError::UnexpectedEof { .. } => input::source_error(data, e),
        other => CliError::lib(data, other),
    }
}
