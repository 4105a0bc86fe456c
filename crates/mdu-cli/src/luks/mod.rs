//! `mdu luks format|encrypt|decrypt|dump`: LUKS2 images as plain files.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read as _, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use mdu_dmcrypt::CipherSpec;
use mdu_luks2::{
    Direction, Error as Luks2Error, FormatChoices, FormatParams, Geometry, Hash, Image,
    SectorCipher,
};
use zeroize::Zeroizing;

use crate::args::WeakKeyArg;
use crate::error::CliError;
use crate::output::{Output, Target};
use crate::pipeline::{self, Sink, Source};
use crate::{args, error, paths, process, progress};
use mdu_inplace::lock::Locks;

mod backup;
mod check;
mod decrypt;
mod dump;
mod header;
mod image;
mod keyslots;
mod options;
mod reencrypt;
mod token;

use backup::*;
use check::*;
use decrypt::*;
use dump::*;
use header::*;
use image::*;
use keyslots::*;
pub(crate) use options::LuksCmd;
use options::*;
use reencrypt::*;
use token::*;

pub(crate) fn run(cmd: LuksCmd) -> Result<(), CliError> {
    match cmd {
        LuksCmd::Format(a) => format(a),
        LuksCmd::Encrypt(a) => encrypt(a),
        LuksCmd::Decrypt(a) => decrypt(a),
        LuksCmd::Dump(a) => dump(a),
        LuksCmd::Check(a) => check(a),
        LuksCmd::Reencrypt(a) => reencrypt(a),
        LuksCmd::AddKey(a) => add_key(a),
        LuksCmd::ChangeKey(a) => change_key(a, false),
        LuksCmd::ConvertKey(a) => change_key(a, true),
        LuksCmd::KillSlot(a) => kill_slot(a),
        LuksCmd::RemoveKey(a) => remove_key(a),
        LuksCmd::IsLuks(a) => is_luks(a),
        LuksCmd::Uuid(a) => uuid(a),
        LuksCmd::Config(a) => config(a),
        LuksCmd::Token(a) => token(a),
        LuksCmd::HeaderBackup(a) => header_backup(a),
        LuksCmd::HeaderRestore(a) => header_restore(a),
        LuksCmd::Erase(a) => erase(a),
        LuksCmd::Repair(a) => repair(a),
        LuksCmd::Open(a) => open(a),
    }
}

/// A damaged or unreadable image, or a wrong passphrase: exit status 1.
fn image_error(path: &Path, e: Luks2Error) -> CliError {
    match e {
        Luks2Error::Io(e) => CliError::io(path, "read the image", e),
        e => CliError::Refused {
            path: path.to_owned(),
            message: e.to_string(),
        },
    }
}

/// The passphrase: the whole key file, in a buffer wiped when dropped
/// ([`mdu_luks2::read_key_file`]).
fn read_passphrase(path: &Path) -> Result<Zeroizing<Vec<u8>>, CliError> {
    mdu_luks2::read_key_file(path).map_err(|e| match e {
        mdu_luks2::KeyFileError::Io(e) => CliError::io(path, "read the key file", e),
        e => key_file_error(path, e),
    })
}

/// A key file that does not hold what it must, at the byte named.
fn key_file_error(path: &Path, e: mdu_luks2::KeyFileError) -> CliError {
    CliError::Input {
        path: path.to_owned(),
        offset: e.offset(),
        rule: e.to_string(),
    }
}

/// Opens `path` for reading, with its size (a block device's too).
fn open_sized(path: &Path) -> Result<(File, u64), CliError> {
    let mut f = File::open(path).map_err(|e| CliError::io(path, "open for reading", e))?;
    // A directory opens, and seeks to an end of 2^63 on some file systems.
    if f.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(CliError::Input {
            path: path.to_owned(),
            offset: 0,
            rule: "is a directory: an image, a device or a file of data was expected".into(),
        });
    }
    let len = f
        .seek(SeekFrom::End(0))
        .map_err(|e| CliError::io(path, "read its size", e))?;
    Ok((f, len))
}

/// Loads the header of `path`, printing a warning when a copy is damaged.
fn load(path: &Path) -> Result<(File, Image), CliError> {
    let (f, _) = open_sized(path)?;
    let img = Image::load(&f).map_err(|e| image_error(path, e))?;
    if let Some(e) = &img.primary_error {
        eprintln!(
            "mdu: warning: {}: the primary LUKS2 header is damaged ({e}); using the secondary copy",
            path.display()
        );
    } else if let Some(e) = &img.secondary_error {
        eprintln!(
            "mdu: warning: {}: the secondary LUKS2 header is damaged ({e})",
            path.display()
        );
    }
    Ok((f, img))
}

fn unlock(
    path: &Path,
    f: &File,
    img: &Image,
    key_file: &Path,
) -> Result<mdu_luks2::VolumeKey, CliError> {
    let pass = read_passphrase(key_file)?;
    img.unlock(f, &pass).map_err(|e| image_error(path, e))
}
