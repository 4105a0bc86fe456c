//! The FEC options of `mdu verity` (those of `veritysetup`): parsing,
//! checking, and turning them into the library's FEC parameters and
//! layout. Encoding, decoding and verification with FEC are
//! `mdu_verity::dmverity::fec`'s.

use std::path::{Path, PathBuf};

use clap::Args;
use mdu_verity::Error as VerityError;
use mdu_verity::dmverity::{self, fec};

use crate::error::CliError;
use crate::output::{self, Output};

/// The FEC options (those of `veritysetup`).
#[derive(Args, Debug)]
pub(crate) struct FecArgs {
    /// Reed-Solomon parity over the data and the hash area, as
    /// veritysetup's --fec-device: `format` writes it (to a file of its
    /// own, or to HASH itself with --fec-offset past the tree); `verify`
    /// and `repair` read it. Needs equal data and hash block sizes.
    #[arg(long, value_name = "F")]
    fec_device: Option<PathBuf>,
    /// Parity bytes per 255-byte codeword, 2..=24 (more corrects more,
    /// and takes more space: roots/(255 - roots) of the protected bytes).
    #[arg(long, value_name = "N", default_value_t = 2)]
    fec_roots: u8,
    /// Byte offset of the parity on the FEC device; a multiple of 512.
    #[arg(long, value_name = "N", default_value_t = 0)]
    fec_offset: u64,
}

impl FecArgs {
    /// Checks the options before anything is hashed (nothing to check
    /// without `--fec-device`): the library's rules, named by the options.
    pub(crate) fn check(&self, p: &dmverity::Params) -> Result<(), CliError> {
        if self.fec_device.is_none() {
            return Ok(());
        }
        let f = fec::FecParams {
            roots: self.fec_roots,
            offset: self.fec_offset,
            in_hash_device: false,
        };
        f.validate_for(p).map_err(|e| {
            CliError::Usage(match e {
                VerityError::FecRoots { roots } => format!(
                    "--fec-roots {roots} is invalid: expected {} to {}",
                    fec::MIN_ROOTS,
                    fec::MAX_ROOTS
                ),
                VerityError::FecOffset { offset } => {
                    format!("--fec-offset {offset} is invalid: it must be a multiple of 512")
                }
                VerityError::FecBlockSizes { data, hash } => format!(
                    "--fec-device needs equal block sizes, but the data blocks are {data} bytes \
                     and the hash blocks {hash}"
                ),
                e => format!("invalid dm-verity parameters: {e}"),
            })
        })
    }

    /// Whether `--fec-device` was given.
    pub(crate) fn given(&self) -> bool {
        self.fec_device.is_some()
    }

    /// The `--fec-device` path, if given.
    pub(crate) fn device(&self) -> Option<&PathBuf> {
        self.fec_device.as_ref()
    }

    /// Whether the parity goes into the hash device itself.
    pub(crate) fn shares_hash_file(&self, hash: &Path) -> bool {
        match (&self.fec_device, std::fs::canonicalize(hash)) {
            (Some(f), Ok(h)) => std::fs::canonicalize(f).is_ok_and(|f| f == h) || f == hash,
            (Some(f), Err(_)) => f == hash,
            _ => false,
        }
    }

    /// The options as the library's FEC parameters, for the hash device
    /// `hash_path`.
    pub(crate) fn params(&self, hash_path: &Path) -> fec::FecParams {
        fec::FecParams {
            roots: self.fec_roots,
            offset: self.fec_offset,
            in_hash_device: self.shares_hash_file(hash_path),
        }
    }

    /// The FEC layout of an image of `data_blocks` data blocks whose hash
    /// device `hash_path` is `hash_device_size` bytes (after `check`).
    pub(crate) fn layout(
        &self,
        hash_path: &Path,
        p: &dmverity::Params,
        data_blocks: u64,
        hash_device_size: u64,
    ) -> Result<fec::VerityLayout, CliError> {
        let path = self.fec_device.as_deref().unwrap_or(hash_path);
        fec::Layout::for_verity(p, data_blocks, hash_device_size, &self.params(hash_path))
            .map_err(|e| CliError::lib(path, e))
    }

    /// The FEC device as an output of `format`, checked and opened before
    /// any hashing: `None` without `--fec-device` or when the parity goes
    /// into the hash device itself. It may not be DATA (`data_meta`).
    pub(crate) fn open_output(
        &self,
        data: &Path,
        data_meta: &std::fs::Metadata,
        hash_path: &Path,
    ) -> Result<Option<Output>, CliError> {
        let Some(fec_path) = &self.fec_device else {
            return Ok(None);
        };
        if self.shares_hash_file(hash_path) {
            return Ok(None);
        }
        if output::same_file(data_meta, fec_path) {
            return Err(CliError::Usage(format!(
                "--fec-device {} is the data device: put the parity in the hash \
                 device or a file of its own",
                fec_path.display()
            )));
        }
        let out = Output::to(fec_path)
            .keep_existing()
            .seekable_only()
            .not_same_as(data, data_meta.clone())
            .open()?;
        Ok(Some(out))
    }
}
