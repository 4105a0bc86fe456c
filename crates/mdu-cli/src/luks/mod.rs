//! `mdu luks format|encrypt|decrypt|dump`: LUKS2 images as plain files.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read as _, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use mdu_dmcrypt::{CipherSpec, DmCryptError};
use mdu_luks2::{
    Direction, FormatChoices, FormatParams, Geometry, Hash, Image, Luks2Error, SectorCipher,
};
use zeroize::Zeroizing;

use crate::args::WeakKeyArg;
use crate::error::CliError;
use crate::lock::Locks;
use crate::output::{Output, Target};
use crate::pipeline::{self, Sink, Source};
use crate::{args, error, input, paths, process, progress};

mod dump;
mod image;
mod reencrypt;

use dump::*;
use image::*;
use reencrypt::*;

/// The longest passphrase read from a key file (cryptsetup's limit).
const MAX_PASSPHRASE: usize = 8 << 20;

/// LUKS2 subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum LuksCmd {
    /// Write a new LUKS2 header (and keyslot 0) into IMAGE, as
    /// `cryptsetup luksFormat`.
    ///
    /// A new IMAGE is created holding the header region only (the data
    /// offset, 16 MiB, the part after the keyslots a hole): written
    /// atomically, as every new output. An existing IMAGE (file or block
    /// device) gets the header region written over its start, in place,
    /// like luksFormat: not atomic; the bytes after the data offset are
    /// left as they are, a block device must be at least the data offset
    /// long and not mounted, and it is synced at the end. A FIFO or
    /// character device is refused. Every check runs before the passphrase
    /// is derived. A new random volume key is made unless
    /// --volume-key-file is given.
    Format(FormatArgs),
    /// Encrypt PLAIN into a new LUKS2 image IMAGE: header region, then PLAIN
    /// encrypted as the data segment, in one streaming pass.
    ///
    /// PLAIN must be a whole number of sectors. IMAGE may not be PLAIN.
    #[command(after_long_help = crate::output::HELP)]
    Encrypt(EncryptArgs),
    /// Decrypt the data segment of the LUKS2 image IMAGE into PLAIN, opening
    /// the volume key with the passphrase in --key-file through any keyslot.
    ///
    /// A new PLAIN is readable by its owner only (mode 0600); PLAIN may not
    /// be IMAGE. Exit status 1 if the passphrase opens no keyslot or the
    /// image is damaged.
    #[command(after_long_help = crate::output::HELP)]
    Decrypt(DecryptArgs),
    /// Print what the LUKS2 header of IMAGE says, as `cryptsetup luksDump`.
    ///
    /// With --dump-volume-key and --key-file, prints the volume key instead
    /// (as `cryptsetup luksDump --dump-volume-key`).
    Dump(DumpArgs),
    /// Check the LUKS2 header of IMAGE as a careful opener would, before
    /// trusting it with data.
    ///
    /// LUKS2 metadata are not authenticated: whoever can write the disk can
    /// rewrite them. Reported, each with the field it is in: a keyslot or
    /// segment that does not encrypt (`cipher_null`: the shape of the 2025
    /// confidential-VM header attacks, CVE-2025-59054 and CVE-2025-58356),
    /// a constant IV or ECB, a cipher mdu cannot check, two valid header
    /// copies that disagree or a damaged copy, a data layout a single
    /// header cannot have (two regular segments, backup segments,
    /// overlapping segments, a segment past the end of IMAGE), keyslots
    /// bound to no segment; with --policy, every value that differs from
    /// the policy. Ranges of the keyslots area that no keyslot names and
    /// that hold neither random fill nor one repeated byte (what an
    /// interrupted command left) are warned about on stderr without
    /// changing the exit status; --wipe-free-areas refills every free
    /// range. What no header may have (malformed metadata, keyslot
    /// areas that overlap, digests that bind nothing, a reencryption in
    /// progress) is refused when the header is read, naming the field.
    #[command(after_long_help = CHECK_HELP)]
    Check(CheckArgs),
    /// Convert the data of IMAGE in place, as `cryptsetup reencrypt`: a new
    /// volume key (and --cipher, --key-size, --sector-size) for a LUKS2
    /// volume; --encrypt a plaintext IMAGE, with the header at its start
    /// (--reduce-device-size: the data move up) or in a new detached
    /// header (--header FILE); --decrypt IMAGE, its header exported to a
    /// new --header FILE and the data moved down to offset 0, or with the
    /// detached header it has.
    ///
    /// The progress is recorded in the header as cryptsetup 2.6 records it,
    /// so `cryptsetup reencrypt --resume-only` finishes a run of mdu and
    /// this command finishes a run of cryptsetup (key changes, --encrypt
    /// with --reduce-device-size or --header, --decrypt with the data moved
    /// down or with a detached header, which cryptsetup runs backward and
    /// mdu forward). A run that was killed,
    /// crashed or lost power is resumed by running the command again (or
    /// with --resume-only): the hotzone in flight is repaired first, from
    /// its journal or block by block from its checksums, so no data are
    /// lost. The final header is written in one step and the areas that
    /// held the old keys and the journal are wiped after it. Ctrl-C stops
    /// after the current hotzone, with the progress recorded (exit 1).
    ///
    /// IMAGE (and --header) must not be in use: no dm-crypt mapping, no
    /// mounted file system.
    #[command(after_long_help = REENCRYPT_HELP)]
    Reencrypt(ReencryptArgs),
}

const REENCRYPT_HELP: &str = "\
Resilience: checksum (default) hashes every old block of a hotzone into the
header before it is converted; journal copies the hotzone into the header
(every byte written twice); none writes nothing: a crash in the middle
LOSES DATA, and as nothing on disk says how far such a run got, resuming it
is refused unless --allow-none-resume is given.

--reduce-device-size SIZE: the data move up by SIZE/2 (the data offset),
so IMAGE must end in SIZE bytes its file system does not use (shrink it
first: `resize2fs DEV NEWSIZE`). The first SIZE/2 bytes are copied to the
end of IMAGE, the header is written over them, and the data are encrypted
from the end backward, each hotzone (SIZE/2 bytes) written SIZE/2 above
where it was read, so a crash repeats the hotzone from bytes still there
(datashift resilience; --resilience and --hotzone-size do not apply). The
copy is wiped at the end. The encrypted volume is SIZE/2 smaller than
IMAGE, and the file system SIZE smaller.

--decrypt --header NEW with the header in IMAGE: the header region is
copied to NEW (which keeps the record of the run: keep it until the run
ends), IMAGE's LUKS signatures are wiped and its first data-offset bytes
of ciphertext copied over the old header; the data then move down hotzone
by hotzone (datashift-checksum) and the copied part is decrypted in place
last. Killed before the record is written, the same command goes on with
the existing NEW. The last data-offset bytes of IMAGE are wiped at the end.

Exit status: 0 done (or initialised, with --init-only); 1 a wrong
passphrase, a damaged or refused header, or a run interrupted (resume it);
2 bad usage.";

/// `mdu luks reencrypt`.
#[derive(Args, Debug)]
pub(crate) struct ReencryptArgs {
    /// File whose whole contents are the passphrase: it opens the old key
    /// and keeps the new one.
    #[arg(long, value_name = "F")]
    key_file: PathBuf,
    /// The LUKS2 header is in FILE, not in IMAGE (IMAGE is then all data).
    #[arg(long, value_name = "FILE")]
    header: Option<PathBuf>,
    /// Encrypt the plaintext IMAGE in place: under a new detached header
    /// (--header, a file that must not exist yet), or with the header at
    /// the start of IMAGE and the data moved up (--reduce-device-size).
    #[arg(long, conflicts_with = "decrypt")]
    encrypt: bool,
    /// With --encrypt: make room for the header by moving the data up by
    /// half of SIZE (the data offset), as cryptsetup does. The last SIZE
    /// bytes of IMAGE must be free: shrink the file system by SIZE first.
    /// A number of bytes, or with a K, M or G suffix (powers of 1024).
    #[arg(long, value_name = "SIZE", requires = "encrypt", conflicts_with = "header", value_parser = args::parse_size)]
    reduce_device_size: Option<u64>,
    /// Decrypt IMAGE in place. With the header in IMAGE, --header names a
    /// new file it is exported to (the record of the run is kept there) and
    /// the data move down to offset 0; with a detached header (--header,
    /// an existing file) the data stay where they are. The header ends with
    /// one linear segment and no keyslots.
    #[arg(long, requires = "header")]
    decrypt: bool,
    /// The new cipher (default: the current one; for --encrypt
    /// aes-xts-plain64).
    #[arg(long, value_name = "SPEC", conflicts_with = "decrypt")]
    cipher: Option<String>,
    /// The new volume key size in bits (default: the current one; for
    /// --encrypt the cipher's default).
    #[arg(long, value_name = "BITS", conflicts_with = "decrypt")]
    key_size: Option<u32>,
    /// The new sector size (default: the current one; for --encrypt 4096).
    #[arg(long, value_name = "N", conflicts_with = "decrypt")]
    sector_size: Option<u32>,
    /// Key derivation of a new keyslot made by --encrypt (a key change keeps
    /// the old keyslot's).
    #[arg(long, value_enum, default_value = "argon2id", requires = "encrypt")]
    pbkdf: PbkdfArg,
    /// PBKDF2 iterations or Argon2 passes of the new keyslot (--encrypt).
    #[arg(long, value_name = "N", requires = "encrypt")]
    pbkdf_force_iterations: Option<u32>,
    /// The keyslot to open (and to keep, under the new key); the others of
    /// the old key are removed at the end. Needed when there are several.
    #[arg(long, value_name = "N")]
    key_slot: Option<u32>,
    /// How each hotzone survives a crash (see below; default checksum).
    #[arg(long, value_enum, conflicts_with = "reduce_device_size")]
    resilience: Option<ResilienceArg>,
    /// Hash of checksum resilience: sha1, sha256 or sha512.
    #[arg(long, value_name = "HASH", default_value = "sha256")]
    resilience_hash: String,
    /// The largest hotzone, in bytes or with a K, M or G suffix (default
    /// 64 MiB; journal: at most what
    /// the keyslots area holds).
    #[arg(long, value_name = "SIZE", conflicts_with = "reduce_device_size", value_parser = args::parse_size)]
    hotzone_size: Option<u64>,
    /// Only go on with a reencryption in progress; never start one.
    #[arg(long, conflicts_with_all = ["encrypt", "decrypt", "cipher", "key_size", "sector_size", "init_only"])]
    resume_only: bool,
    /// Write the first state of the reencryption and stop (resume it later).
    #[arg(long)]
    init_only: bool,
    /// Resume a run with resilience none (see below).
    #[arg(long)]
    allow_none_resume: bool,
    /// The data device or image file.
    #[arg(value_name = "IMAGE")]
    image: PathBuf,
}

/// `--resilience`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResilienceArg {
    /// Hashes of the old blocks of each hotzone.
    Checksum,
    /// A copy of each hotzone.
    Journal,
    /// Nothing: a crash loses data.
    None,
}

const CHECK_HELP: &str = "\
Policy: a JSON object with any of the fields cipher (\"aes-xts-plain64\"),
key_size (volume-key bytes), sector_size, data_offset (bytes), data_size
(bytes, or \"dynamic\"), max_keyslots, pbkdf2_min_iterations,
argon2_min_time, argon2_min_memory_kib, argon2_min_parallel and
allow_unbound_keyslots (true or false). An unknown field is refused, so a
misspelt one cannot silently check nothing.

Exit status: 0 nothing found; 1 findings (listed, or in --json), or a header
that cannot be read; 2 bad usage or an unreadable policy.";

/// `mdu luks check`.
#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// The expected values, as JSON (see below).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Print the findings as JSON: {"copy", "seqid", "clean", "findings":
    /// [{"field", "kind", "message"}], "leftovers": [{"offset", "len"}]},
    /// with "wiped" (bytes) after --wipe-free-areas.
    #[arg(long)]
    json: bool,
    /// The LUKS2 header is in FILE (a detached header, as cryptsetup
    /// --header); IMAGE is not read.
    #[arg(long, value_name = "FILE")]
    header: Option<PathBuf>,
    /// Refill every range of the keyslots area that no keyslot names with
    /// random bytes (as cryptsetup fills a new keyslots area), whatever it
    /// holds: what an interrupted command left there, key material too,
    /// is gone. Takes the image's lock, as cryptsetup's.
    #[arg(long)]
    wipe_free_areas: bool,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    image: PathBuf,
}

/// The key derivation of a new keyslot.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PbkdfArg {
    /// PBKDF2-HMAC (--hash; --pbkdf-force-iterations iterations).
    Pbkdf2,
    /// Argon2i.
    Argon2i,
    /// Argon2id (the default, as cryptsetup).
    Argon2id,
}

impl From<PbkdfArg> for mdu_luks2::Pbkdf {
    fn from(p: PbkdfArg) -> Self {
        match p {
            PbkdfArg::Pbkdf2 => mdu_luks2::Pbkdf::Pbkdf2,
            PbkdfArg::Argon2i => mdu_luks2::Pbkdf::Argon2i,
            PbkdfArg::Argon2id => mdu_luks2::Pbkdf::Argon2id,
        }
    }
}

/// Options of a new image (those of `cryptsetup luksFormat`).
#[derive(Args, Debug)]
pub(crate) struct NewImageArgs {
    /// File whose whole contents are the passphrase of keyslot 0 (no
    /// newline is stripped; at most 8 MiB), as cryptsetup --key-file.
    #[arg(long, value_name = "F")]
    key_file: PathBuf,
    /// Cipher of the data segment and of the keyslot area: aes-xts-IVMODE
    /// or aes-cbc-IVMODE (IVMODE plain64, essiv:sha256, plain, ...).
    #[arg(long, value_name = "SPEC", default_value = FormatChoices::CIPHER)]
    cipher: String,
    /// Volume key size in bits: 256 or 512 for aes-xts (AES-128 or AES-256),
    /// 128 or 256 for aes-cbc. Default: 512 for aes-xts, 256 for aes-cbc.
    #[arg(long, value_name = "BITS")]
    key_size: Option<u32>,
    /// Encryption sector size in bytes: 512, 1024, 2048 or 4096 (the
    /// default, what luksFormat picks for a file).
    #[arg(long, value_name = "N", default_value_t = FormatChoices::SECTOR_SIZE)]
    sector_size: u32,
    /// Key derivation of keyslot 0.
    #[arg(long, value_enum, default_value = "argon2id")]
    pbkdf: PbkdfArg,
    /// PBKDF2 iterations (at least 1000), or Argon2 passes (time cost, at
    /// least 4). Without it: 1000000 iterations, or 4 passes. Given, the
    /// volume-key digest takes the minimum 1000 iterations (as cryptsetup).
    #[arg(long, value_name = "N")]
    pbkdf_force_iterations: Option<u32>,
    /// Argon2 memory cost in KiB (at least 32).
    #[arg(long, value_name = "KIB", default_value_t = FormatChoices::ARGON2_MEMORY_KIB)]
    pbkdf_memory: u32,
    /// Argon2 threads (lanes).
    #[arg(long, value_name = "N", default_value_t = FormatChoices::ARGON2_PARALLEL)]
    pbkdf_parallel: u32,
    /// Hash of PBKDF2: sha1, sha256 or sha512.
    #[arg(long, value_name = "HASH", default_value = FormatChoices::HASH)]
    hash: String,
    /// UUID of the image (default: random).
    #[arg(long, value_name = "U")]
    uuid: Option<String>,
    /// Label (at most 47 bytes).
    #[arg(long, value_name = "L", default_value = "")]
    label: String,
    /// Subsystem (at most 47 bytes).
    #[arg(long, value_name = "S", default_value = "")]
    subsystem: String,
    /// Use the raw volume key in this file (key-size/8 bytes) instead of a
    /// random one.
    #[arg(long, value_name = "F")]
    volume_key_file: Option<PathBuf>,
    #[command(flatten)]
    weak: WeakKeyArg,
    /// Where the data segment starts, in 512-byte sectors (cryptsetup
    /// --offset); a multiple of 8. Default: 32768 (16 MiB).
    #[arg(long, value_name = "SECTORS", default_value_t = FormatChoices::DATA_OFFSET / 512)]
    offset: u64,
}

/// `mdu luks format`.
#[derive(Args, Debug)]
pub(crate) struct FormatArgs {
    #[command(flatten)]
    new: NewImageArgs,
    /// Write a detached header into FILE (a new file, written atomically)
    /// for data at offset 0 of IMAGE, as `cryptsetup luksFormat --header`;
    /// IMAGE must exist and is not written.
    #[arg(long, value_name = "FILE")]
    header: Option<PathBuf>,
    /// The image file or block device.
    #[arg(value_name = "IMAGE")]
    image: PathBuf,
}

/// `mdu luks encrypt`.
#[derive(Args, Debug)]
pub(crate) struct EncryptArgs {
    #[command(flatten)]
    new: NewImageArgs,
    /// Write the header into FILE (a new file, written atomically) and
    /// only the encrypted data into IMAGE, from offset 0 (a detached
    /// header, as `cryptsetup --header`).
    #[arg(long, value_name = "FILE")]
    header: Option<PathBuf>,
    /// Encryption threads (default: every core; at most 1024).
    #[arg(long, value_name = "N", value_parser = crate::args::threads_arg)]
    threads: Option<usize>,
    /// The plaintext: a regular file or block device.
    #[arg(value_name = "PLAIN")]
    plain: PathBuf,
    /// The new LUKS2 image (a regular file, replaced atomically).
    #[arg(value_name = "IMAGE")]
    image: PathBuf,
}

/// `mdu luks decrypt`.
#[derive(Args, Debug)]
pub(crate) struct DecryptArgs {
    /// File whose whole contents are the passphrase.
    #[arg(long, value_name = "F")]
    key_file: PathBuf,
    /// The LUKS2 header is in FILE (a detached header, as cryptsetup
    /// --header); IMAGE then holds the data only.
    #[arg(long, value_name = "FILE")]
    header: Option<PathBuf>,
    #[command(flatten)]
    weak: WeakKeyArg,
    /// Decryption threads (default: every core; at most 1024).
    #[arg(long, value_name = "N", value_parser = crate::args::threads_arg)]
    threads: Option<usize>,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    image: PathBuf,
    /// The plaintext output (a regular file, replaced atomically).
    #[arg(value_name = "PLAIN")]
    plain: PathBuf,
}

/// `mdu luks dump`.
#[derive(Args, Debug)]
pub(crate) struct DumpArgs {
    /// Print the header, the copy used and the metadata as JSON.
    #[arg(long)]
    json: bool,
    /// The LUKS2 header is in FILE (a detached header, as cryptsetup
    /// --header); IMAGE is not read.
    #[arg(long, value_name = "FILE")]
    header: Option<PathBuf>,
    /// Print the volume key of the data segment (needs --key-file). Only a
    /// keyslot bound to the data segment gives it: the passphrase of an
    /// unbound keyslot is refused (see --unbound).
    #[arg(long, requires = "key_file")]
    dump_volume_key: bool,
    /// Print the key of the unbound keyslot --key-slot (one bound to no
    /// segment, from `cryptsetup luksAddKey --unbound`), as
    /// `cryptsetup luksDump --unbound`. Needs --key-slot and --key-file.
    #[arg(
        long,
        requires = "key_slot",
        requires = "key_file",
        conflicts_with = "dump_volume_key"
    )]
    unbound: bool,
    /// The keyslot to open (with --unbound, or --dump-volume-key: that
    /// keyslot only, whatever its priority).
    #[arg(long, value_name = "N")]
    key_slot: Option<u32>,
    /// File whose whole contents are the passphrase (with --dump-volume-key
    /// or --unbound).
    #[arg(long, value_name = "F")]
    key_file: Option<PathBuf>,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    image: PathBuf,
}

pub(crate) fn run(cmd: LuksCmd) -> Result<(), CliError> {
    match cmd {
        LuksCmd::Format(a) => format(a),
        LuksCmd::Encrypt(a) => encrypt(a),
        LuksCmd::Decrypt(a) => decrypt(a),
        LuksCmd::Dump(a) => dump(a),
        LuksCmd::Check(a) => check(a),
        LuksCmd::Reencrypt(a) => reencrypt(a),
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
/// (allocated once at its final capacity, so no copy is left behind).
fn read_passphrase(path: &Path) -> Result<Zeroizing<Vec<u8>>, CliError> {
    let mut f = File::open(path).map_err(|e| CliError::io(path, "read the key file", e))?;
    // A regular file's size bounds the buffer (so that wiping it does not
    // touch 8 MiB for a 32-byte key); one byte more tells a file that grew.
    // A pipe, a device or a file whose size stat gives as 0 (procfs,
    // sysfs) is read to its end, up to the limit.
    let cap = match f.metadata() {
        Ok(m) if m.is_file() && m.len() > 0 => (m.len() as usize).min(MAX_PASSPHRASE) + 1,
        _ => MAX_PASSPHRASE + 1,
    };
    let mut buf = Zeroizing::new(vec![0u8; cap]);
    // In pieces of 64 KiB: procfs and sysfs files allocate a kernel buffer
    // as large as the request and refuse 8 MiB (ENOMEM).
    let mut n = 0;
    while n < cap {
        let end = cap.min(n + (64 << 10));
        match std::io::Read::read(&mut f, &mut buf[n..end]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(CliError::io(path, "read the key file", e)),
        }
    }
    if n == cap && cap <= MAX_PASSPHRASE {
        return Err(CliError::Input {
            path: path.to_owned(),
            offset: n as u64,
            rule: "the key file grew while it was read".into(),
        });
    }
    if n > MAX_PASSPHRASE {
        return Err(CliError::Input {
            path: path.to_owned(),
            offset: MAX_PASSPHRASE as u64,
            rule: "a key file holds at most 8 MiB".into(),
        });
    }
    if n == 0 {
        return Err(CliError::Input {
            path: path.to_owned(),
            offset: 0,
            rule: "the key file is empty: the passphrase must not be empty".into(),
        });
    }
    buf.truncate(n);
    Ok(buf)
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

fn decrypt(a: DecryptArgs) -> Result<(), CliError> {
    let mut paths = vec![("--key-file", a.key_file.as_path())];
    if let Some(h) = &a.header {
        paths.push(("--header", h));
    }
    paths.extend([("IMAGE", a.image.as_path()), ("PLAIN", a.plain.as_path())]);
    paths::distinct(&paths)?;
    let header_path = a.header.clone().unwrap_or_else(|| a.image.clone());
    let (hf, img) = load(&header_path)?;
    let (_, seg) = img.segment().map_err(|e| image_error(&header_path, e))?;
    let (f, data_len) = open_sized(&a.image)?;
    let range = if a.header.is_some() {
        img.data_range(seg, data_len)
    } else {
        img.payload_range(seg)
    };
    let (offset, len) = range.map_err(|e| image_error(&header_path, e))?;
    if len == 0 {
        return Err(CliError::Refused {
            path: a.image.clone(),
            message: format!("the image holds no data after its header (data offset {offset})"),
        });
    }
    // The output is checked before the passphrase is derived.
    let in_meta = f
        .metadata()
        .map_err(|e| CliError::io(&a.image, "examine", e))?;
    let mut out = Output::to(&a.plain)
        .not_same_as(&a.image, in_meta)
        .private()
        .len(len)
        .reserve(0, len)
        .open()?;
    let key = unlock(&header_path, &hf, &img, &a.key_file)?;
    let cipher = img
        .segment_cipher(&key, a.weak.policy())
        .map_err(|e| match e {
            Luks2Error::Cipher(e @ DmCryptError::WeakXtsKey { .. }) => {
                error::key_error(&a.image, "the volume key", e)
            }
            e => image_error(&a.image, e),
        })?;
    drop(key);
    let seekable = out.seekable();
    pipeline::run(
        Direction::Decrypt,
        &cipher,
        Source {
            file: &f,
            path: &a.image,
            offset,
            len: Some(len),
        },
        Sink {
            file: out.file(),
            path: &a.plain,
            offset: 0,
            seekable,
        },
        a.threads,
    )?;
    out.commit()
}

fn check(a: CheckArgs) -> Result<(), CliError> {
    let policy = match &a.policy {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| CliError::io(p, "read the policy", e))?;
            Some(
                mdu_luks2::check::Policy::from_json(&text)
                    .map_err(|e| CliError::Usage(format!("{}: {e}", p.display())))?,
            )
        }
        None => None,
    };
    let a = CheckArgs {
        image: a.header.clone().unwrap_or(a.image),
        ..a
    };
    // Held to the end: the header must not change between the check and
    // the refill.
    let mut locks = Locks::new();
    let f = if a.wipe_free_areas {
        locks.file(&a.image)?;
        crate::output::in_place(&a.image, true, false, "open for writing")?
    } else {
        open_sized(&a.image)?.0
    };
    let report =
        mdu_luks2::check::check(&f, policy.as_ref()).map_err(|e| image_error(&a.image, e))?;
    for l in &report.leftovers {
        eprintln!(
            "mdu: warning: {}: {l} of the keyslots area are not named by any keyslot and are \
             neither random fill nor wiped: leftover data from an interrupted command; \
             `mdu luks check --wipe-free-areas` refills them",
            a.image.display()
        );
    }
    let wiped = if a.wipe_free_areas {
        Some(
            mdu_luks2::check::wipe_free_areas(&f, &report.image)
                .map_err(|e| image_error(&a.image, e))?,
        )
    } else {
        None
    };
    drop(locks);
    let mut text = if a.json {
        let mut v = mdu_luks2::check::to_json(&report);
        if let Some(n) = wiped {
            v["wiped"] = n.into();
        }
        let mut t = v.to_string();
        t.push('\n');
        t
    } else if report.is_clean() {
        format!(
            "{}: no findings (the {} header copy, seqid {})\n",
            a.image.display(),
            report.image.copy.name(),
            report.image.header.seqid
        )
    } else {
        report.findings.iter().map(|f| format!("{f}\n")).collect()
    };
    if let (Some(n), false) = (wiped, a.json) {
        let _ = writeln!(
            text,
            "{}: {n} bytes of the keyslots area that no keyslot names refilled with random bytes",
            a.image.display()
        );
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::io(Path::new("stdout"), "write", e))?;
    if report.is_clean() {
        Ok(())
    } else {
        Err(CliError::Refused {
            path: a.image.clone(),
            message: format!("{} finding(s) in the LUKS2 header", report.findings.len()),
        })
    }
}
