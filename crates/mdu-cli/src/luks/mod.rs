//! `mdu luks format|encrypt|decrypt|dump`: LUKS2 (and LUKS1) images as plain files.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read as _, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use mdu_dmcrypt::CipherSpec;
use mdu_luks2::luks1::Header as Luks1Header;
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

mod benchmark;
mod check;
mod decrypt;
mod dump;
mod image;
mod keyslots;
mod luks1;
mod options;
mod reencrypt;

pub(crate) use benchmark::{BenchmarkArgs, benchmark};
use check::*;
use decrypt::*;
use dump::*;
use image::*;
use keyslots::*;
use luks1::*;
pub(crate) use options::LuksCmd;
use options::*;
use reencrypt::*;

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
        LuksCmd::Benchmark(a) => benchmark(a),
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

/// The LUKS1 header of `path` if it has one (`detached`: a header whose
/// payload offset is not checked against `path`, as that of a detached
/// header or of a dump); `None` for any other file, which is then read as
/// LUKS2.
fn load_luks1(path: &Path, detached: bool) -> Result<Option<(File, Luks1Header)>, CliError> {
    let (f, _) = open_sized(path)?;
    match mdu_luks2::luks1::probe_version(&f) {
        Ok(Some(1)) => {}
        Ok(_) => return Ok(None),
        Err(e) => return Err(image_error(path, e)),
    }
    let hdr = if detached {
        Luks1Header::load_detached(&f)
    } else {
        Luks1Header::load(&f)
    };
    Ok(Some((f, hdr.map_err(|e| image_error(path, e))?)))
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
