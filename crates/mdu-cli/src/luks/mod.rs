//! `mdu luks format|encrypt|decrypt|dump`: LUKS2 (and LUKS1) images as plain files.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{IsTerminal as _, Read as _, Seek, SeekFrom, Write};
use std::os::fd::AsFd as _;
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

mod backup;
mod benchmark;
mod check;
mod convert;
mod decrypt;
mod dump;
mod header;
mod image;
mod keyslots;
mod luks1;
mod luks1_header;
mod luks1_keyslots;
mod options;
mod passphrase;
mod reencrypt;
mod terminal;
mod token;

use backup::*;
pub(crate) use benchmark::{BenchmarkArgs, benchmark};
use check::*;
use convert::*;
use decrypt::*;
use dump::*;
use header::*;
use image::*;
use keyslots::*;
use luks1::*;
use luks1_header::*;
use luks1_keyslots::*;
pub(crate) use options::LuksArgs;
use options::*;
use reencrypt::*;
pub(crate) use terminal::confirm;
use token::*;

/// cryptsetup's exit statuses ("RETURN CODES" in cryptsetup(8)): 1 wrong
/// parameters (usage, a damaged or foreign header, an unreadable key file),
/// 2 no permission or a wrong passphrase, 3 out of memory, 4 a wrong
/// device (missing, or not a file or block device), 5 busy.
pub(crate) const WRONG_PARAMETERS: u8 = 1;
/// See [`WRONG_PARAMETERS`].
pub(crate) const NO_PERMISSION: u8 = 2;
/// See [`WRONG_PARAMETERS`].
pub(crate) const OUT_OF_MEMORY: u8 = 3;
/// See [`WRONG_PARAMETERS`].
pub(crate) const WRONG_DEVICE: u8 = 4;

/// The global options of this run (set once by [`run`]).
static FLAGS: std::sync::OnceLock<GlobalArgs> = std::sync::OnceLock::new();

/// The global options of this run: -q, -v, --debug, --type,
/// --disable-locks, -y.
pub(crate) fn flags() -> &'static GlobalArgs {
    FLAGS.get_or_init(GlobalArgs::default)
}

/// `--debug`: what mdu does, on stderr.
pub(crate) fn debug(what: std::fmt::Arguments<'_>) {
    if flags().debug {
        eprintln!("mdu: debug: {what}");
    }
}

/// `-v`: what was done, on stderr.
pub(crate) fn verbose(what: std::fmt::Arguments<'_>) {
    if flags().verbose || flags().debug {
        eprintln!("mdu: {what}");
    }
}

pub(crate) fn run(args: LuksArgs) -> Result<(), CliError> {
    let _ = FLAGS.set(args.global.clone());
    let r = match args.cmd {
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
        LuksCmd::Convert(a) => convert(a),
        LuksCmd::Benchmark(a) => benchmark(a),
    };
    let r = r.map_err(|e| match e {
        e @ (CliError::Status { .. } | CliError::Busy { .. }) => e,
        e => status(WRONG_PARAMETERS, e),
    });
    match &r {
        Ok(()) => verbose(format_args!("command successful")),
        Err(e) => verbose(format_args!(
            "command failed with exit status {} ({})",
            e.exit_code(),
            match e.exit_code() {
                NO_PERMISSION => "no permission or bad passphrase",
                OUT_OF_MEMORY => "out of memory",
                WRONG_DEVICE => "wrong device or file specified",
                crate::error::EXIT_BUSY => "device busy",
                _ => "wrong or missing parameters",
            }
        )),
    }
    r
}

/// `e` with cryptsetup's exit status `code`.
pub(crate) fn status(code: u8, e: CliError) -> CliError {
    CliError::Status {
        code,
        error: Box::new(e),
    }
}

/// A damaged, foreign or unreadable header (exit 1), a wrong passphrase
/// (exit 2), or a key derivation out of memory (exit 3), as cryptsetup
/// tells them.
fn image_error(path: &Path, e: Luks2Error) -> CliError {
    let refused = |message: String| CliError::Refused {
        path: path.to_owned(),
        message,
    };
    match e {
        Luks2Error::Io(e) => CliError::io(path, "read the image", e),
        // A passphrase that opens only an unbound keyslot is a wrong
        // parameter to cryptsetup (exit 1), not a wrong passphrase.
        e @ Luks2Error::WrongPassphrase => status(NO_PERMISSION, refused(e.to_string())),
        e @ Luks2Error::OutOfMemory { .. } => status(OUT_OF_MEMORY, refused(e.to_string())),
        Luks2Error::NoValidHeader { primary, secondary }
            if matches!(
                *primary,
                Luks2Error::BadMagic { offset: 0 } | Luks2Error::Truncated { offset: 0, .. }
            ) =>
        {
            refused(format!(
                "not a LUKS device: no LUKS header at its start ({primary}), and no secondary \
                 header ({secondary})"
            ))
        }
        e => refused(e.to_string()),
    }
}

/// The whole of the key file `path` (a new passphrase named by a file),
/// in a buffer wiped when dropped ([`mdu_luks2::read_key_file`]).
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

/// Opens the image or device `path` for reading, with its size (a block
/// device's too). Missing, unreadable or a directory: a wrong device
/// (exit 4), as cryptsetup.
fn open_sized(path: &Path) -> Result<(File, u64), CliError> {
    let open = || {
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
    };
    open().map_err(|e| status(WRONG_DEVICE, e))
}

/// `--type`: an image that is LUKS2 is refused with `--type luks1` (exit
/// 1, as cryptsetup's "not a valid LUKS device").
fn check_type(path: &Path) -> Result<(), CliError> {
    match flags().luks_type {
        Some(LuksType::Luks1) => Err(CliError::Refused {
            path: path.to_owned(),
            message: "not a LUKS1 device (--type luks1): it holds a LUKS2 header".into(),
        }),
        _ => Ok(()),
    }
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
    load_as(path, true)
}

/// As [`load`]; `check_type`: whether `--type` names the type of the
/// header (not for `convert`, where it names the type to convert to).
fn load_as(path: &Path, check_type: bool) -> Result<(File, Image), CliError> {
    let (f, _) = open_sized(path)?;
    // cryptsetup reads headers from files and block devices only.
    if f.metadata()
        .is_ok_and(|m| m.file_type().is_char_device() || m.file_type().is_fifo())
    {
        return Err(status(
            WRONG_DEVICE,
            CliError::Usage(format!(
                "{}: is a character device or FIFO: a LUKS header is read from a file or a block \
                 device",
                path.display()
            )),
        ));
    }
    let img = Image::load(&f).map_err(|e| image_error(path, e))?;
    if check_type {
        self::check_type(path)?;
    }
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
    debug(format_args!(
        "{}: using the {} header copy (seqid {}, header size {} bytes)",
        path.display(),
        img.copy.name(),
        img.header.seqid,
        img.hdr_size()
    ));
    Ok((f, img))
}

/// `--debug`: the keyslots of `img` and their key derivations.
fn debug_keyslots(path: &Path, img: &Image) {
    if !flags().debug {
        return;
    }
    for (id, ks) in &img.metadata.keyslots {
        debug(format_args!(
            "{}: keyslot {id}: {} (priority {:?})",
            path.display(),
            kdf_words(&ks.kdf),
            ks.priority
        ));
    }
}

/// A KDF's parameters in words.
pub(crate) fn kdf_words(kdf: &mdu_luks2::Kdf) -> String {
    match kdf {
        mdu_luks2::Kdf::Pbkdf2 {
            hash, iterations, ..
        } => format!("pbkdf2-{hash}, {iterations} iterations"),
        mdu_luks2::Kdf::Argon2 {
            variant,
            time,
            memory,
            cpus,
            ..
        } => format!(
            "{}, {time} passes, {memory} KiB, {cpus} threads",
            variant.name()
        ),
    }
}

/// Opens the volume key of `img` with the passphrase `key` gives.
fn unlock(
    path: &Path,
    f: &File,
    img: &Image,
    key: &KeyArgs,
) -> Result<mdu_luks2::VolumeKey, CliError> {
    debug_keyslots(path, img);
    let vk = key.open_with(path, |pass| {
        img.unlock(f, pass).map_err(|e| image_error(path, e))
    })?;
    verbose(format_args!("keyslot {} unlocked", vk.slot));
    Ok(vk)
}

/// Takes the lock of `path` into `locks`, unless --disable-locks is given
/// (then a warning says that nothing keeps another process out).
fn lock_file(locks: &mut Locks, path: &Path) -> Result<(), CliError> {
    if flags().disable_locks {
        eprintln!(
            "mdu: warning: --disable-locks: {} is not locked; another process may change it meanwhile",
            path.display()
        );
        return Ok(());
    }
    Ok(locks.file(path)?)
}
