//! `mdu luks format|encrypt|decrypt|dump`: LUKS2 images as plain files.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use mdu_dmcrypt::{CipherSpec, DmCryptError};
use mdu_luks2::{
    Argon2Variant, Direction, FormatParams, Geometry, Hash, HeaderCopy, Image, Kdf, KdfParams,
    Luks2Error, SectorCipher,
};
use zeroize::Zeroizing;

use crate::lock::Locks;
use crate::output::{Output, Target};
use crate::pipeline::{self, Sink, Source};
use crate::util::{self, CliError, WeakKeyArg};

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
    #[arg(long, value_name = "SIZE", requires = "encrypt", conflicts_with = "header", value_parser = util::parse_size)]
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
    #[arg(long, value_name = "SIZE", conflicts_with = "reduce_device_size", value_parser = util::parse_size)]
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

/// Options of a new image (those of `cryptsetup luksFormat`).
#[derive(Args, Debug)]
pub(crate) struct NewImageArgs {
    /// File whose whole contents are the passphrase of keyslot 0 (no
    /// newline is stripped; at most 8 MiB), as cryptsetup --key-file.
    #[arg(long, value_name = "F")]
    key_file: PathBuf,
    /// Cipher of the data segment and of the keyslot area: aes-xts-IVMODE
    /// or aes-cbc-IVMODE (IVMODE plain64, essiv:sha256, plain, ...).
    #[arg(long, value_name = "SPEC", default_value = "aes-xts-plain64")]
    cipher: String,
    /// Volume key size in bits: 256 or 512 for aes-xts (AES-128 or AES-256),
    /// 128 or 256 for aes-cbc. Default: 512 for aes-xts, 256 for aes-cbc.
    #[arg(long, value_name = "BITS")]
    key_size: Option<u32>,
    /// Encryption sector size in bytes: 512, 1024, 2048 or 4096 (the
    /// default, what luksFormat picks for a file).
    #[arg(long, value_name = "N", default_value_t = 4096)]
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
    #[arg(long, value_name = "KIB", default_value_t = 1 << 20)]
    pbkdf_memory: u32,
    /// Argon2 threads (lanes).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pbkdf_parallel: u32,
    /// Hash of PBKDF2: sha1, sha256 or sha512.
    #[arg(long, value_name = "HASH", default_value = "sha256")]
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
    #[arg(long, value_name = "SECTORS", default_value_t = 32768)]
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
    #[arg(long, value_name = "N", value_parser = crate::util::threads_arg)]
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
    #[arg(long, value_name = "N", value_parser = crate::util::threads_arg)]
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

/// Set by SIGINT, SIGTERM and SIGHUP while a reencryption runs: it stops
/// after the current hotzone.
static STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, std::sync::atomic::Ordering::SeqCst);
}

fn reencrypt(a: ReencryptArgs) -> Result<(), CliError> {
    use mdu_luks2::reencrypt::{Began, Goal, Header, Outcome, Reencryption};
    // Every parameter is checked before anything is locked, read or
    // written.
    let request = reencrypt_request(&a)?;
    let header_path = a.header.clone().unwrap_or_else(|| a.image.clone());
    util::distinct(&[("--key-file", &a.key_file), ("IMAGE", &a.image)])?;
    if a.header.is_some() {
        util::distinct(&[("--key-file", &a.key_file), ("--header", &header_path)])?;
    }
    let open_rw = |p: &Path| {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(p)
            .map_err(|e| CliError::io(p, "open", e))
    };
    // Ctrl-C from here on stops the run where it is recorded: during the
    // key derivation of a new keyslot, once the header that records the
    // run is whole (a new header file is never left empty).
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: `on_stop` only stores to an atomic, which is
        // async-signal-safe, and has the signature signal() expects.
        unsafe { libc::signal(sig, on_stop as *const () as libc::sighandler_t) };
    }
    // Nothing is read for the run, nor written, before the image and the
    // header are this run's alone.
    let mut locks = Locks::new();
    locks.file(&a.image)?;
    locks.file(&header_path)?;
    let data = open_rw(&a.image)?;
    // A second handle on IMAGE.
    let dup = || {
        data.try_clone()
            .map_err(|e| CliError::io(&a.image, "open", e))
    };
    let pass = read_passphrase(&a.key_file)?;
    // An empty header file is what a run killed before it wrote its
    // header leaves: nothing depends on it.
    if a.header.is_some()
        && std::fs::metadata(&header_path).is_ok_and(|m| m.is_file() && m.len() == 0)
    {
        std::fs::remove_file(&header_path)
            .map_err(|e| CliError::io(&header_path, "remove the empty header file", e))?;
    }
    // A new header file: the detached header of an encryption, or the
    // export of a decryption that moves the data; it must not exist.
    let created = a.header.is_some()
        && !header_path.exists()
        && matches!(request.goal, Goal::Encrypt(_) | Goal::Decrypt { .. });
    let header_file = if created {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&header_path)
            .map_err(|e| CliError::io(&header_path, "create the header file", e))?
    } else if a.header.is_some() {
        open_rw(&header_path)?
    } else {
        dup()?
    };
    // The header, read once; a cryptsetup reencryption of this volume
    // holds this lock for its whole run. The library decides from the
    // header whether the run asked for starts or the one in progress goes
    // on (the same command again after a kill goes on with the run it
    // started, as `cryptsetup reencrypt` does).
    let header = Header::load(header_file);
    if let Some(uuid) = header.uuid() {
        locks.reencryption(uuid, &a.image)?;
    }
    let (mut run, began) = match Reencryption::open_or_start(header, dup()?, &pass, &request) {
        Ok(opened) => opened,
        Err(e) => {
            // A new header file goes while nothing depends on it: an
            // encryption's, or an export while it is empty or IMAGE still
            // has its header.
            if created
                && (matches!(request.goal, Goal::Encrypt(_))
                    || std::fs::metadata(&header_path).is_ok_and(|m| m.len() == 0)
                    || Image::load(&data).is_ok())
            {
                let _ = std::fs::remove_file(&header_path);
            }
            return Err(reencrypt_error(&header_path, e));
        }
    };
    if began == Began::Resumed && a.resilience.is_some() && !a.resume_only {
        eprintln!("mdu: resuming with the resilience recorded in the header");
    }
    if a.init_only {
        eprintln!(
            "mdu: reencryption of {} initialised ({} resilience); run again with --resume-only to convert",
            a.image.display(),
            run.resilience().name()
        );
        return Ok(());
    }
    let (done, total) = run.progress();
    let pb = util::progress(
        total,
        &format!("{} {}", run.mode().name(), a.image.display()),
    );
    pb.set_position(done);
    let outcome = run
        .run(&mut |d, _| pb.set_position(d), &|| {
            STOP.load(std::sync::atomic::Ordering::SeqCst)
        })
        .map_err(|e| image_error(&header_path, e))?;
    pb.finish_and_clear();
    match outcome {
        Outcome::Finished => Ok(()),
        Outcome::Interrupted { done, total } => Err(interrupted(&a, done, total)),
    }
}

/// The library request of `mdu luks reencrypt`: its options checked and
/// turned into the goal (new key, decryption, encryption with a detached
/// header or a data shift) and the resilience of a new run.
fn reencrypt_request(a: &ReencryptArgs) -> Result<mdu_luks2::reencrypt::Request, CliError> {
    use mdu_luks2::reencrypt::{Goal, Options, Request, ResilienceChoice};
    let hash = Hash::parse(&a.resilience_hash).ok_or_else(|| {
        CliError::Usage(format!(
            "--resilience-hash {}: use sha1, sha256 or sha512",
            a.resilience_hash
        ))
    })?;
    if let Some(h) = a.hotzone_size.filter(|&h| h < 4096) {
        return Err(CliError::Usage(format!(
            "--hotzone-size {h}: a hotzone holds at least one 4096-byte block"
        )));
    }
    if a.encrypt && a.header.is_none() && a.reduce_device_size.is_none() {
        return Err(CliError::Usage(
            "--encrypt needs --header FILE (a detached header) or --reduce-device-size SIZE (the header at the start of IMAGE, the data moved up)".into(),
        ));
    }
    let options = Options {
        resilience: match a.resilience.unwrap_or(ResilienceArg::Checksum) {
            ResilienceArg::Checksum => ResilienceChoice::Checksum,
            ResilienceArg::Journal => ResilienceChoice::Journal,
            ResilienceArg::None => ResilienceChoice::None,
        },
        hash,
        hotzone_size: a.hotzone_size,
    };
    // The encryption plan's parameters are checked before anything else.
    let shift = match a.reduce_device_size {
        Some(r) if r == 0 || r % 8192 != 0 => {
            return Err(CliError::Usage(format!(
                "--reduce-device-size {r}: a positive multiple of 8 KiB (twice a data offset that is a multiple of 4096)"
            )));
        }
        r => r.map(|r| r / 2),
    };
    let encrypt_params = if a.encrypt {
        let new = NewImageArgs {
            key_file: a.key_file.clone(),
            cipher: a.cipher.clone().unwrap_or_else(|| "aes-xts-plain64".into()),
            key_size: a.key_size,
            sector_size: a.sector_size.unwrap_or(4096),
            pbkdf: a.pbkdf,
            pbkdf_force_iterations: a.pbkdf_force_iterations,
            pbkdf_memory: 1 << 20,
            pbkdf_parallel: 4,
            hash: "sha256".into(),
            uuid: None,
            label: String::new(),
            subsystem: String::new(),
            volume_key_file: None,
            weak: WeakKeyArg {
                allow_weak_key: false,
            },
            offset: 32768,
        };
        let mut params = format_params(&new)?;
        if let Some(s) = shift {
            params.data_offset = s;
            params
                .validate()
                .map_err(|e| CliError::Usage(format!("--reduce-device-size: {e}")))?;
        }
        Some(params)
    } else {
        None
    };
    let goal = match encrypt_params {
        Some(params) if shift.is_some() => Goal::EncryptShift(params),
        Some(params) => Goal::Encrypt(params),
        None if a.decrypt => Goal::Decrypt {
            key_slot: a.key_slot,
        },
        None => Goal::NewKey {
            cipher: a
                .cipher
                .as_deref()
                .map(|c| {
                    CipherSpec::parse(c).map_err(|e| CliError::Usage(format!("--cipher {c}: {e}")))
                })
                .transpose()?,
            key_size: match a.key_size {
                Some(bits) if bits % 8 != 0 => {
                    return Err(CliError::Usage(format!(
                        "--key-size {bits}: not a whole number of bytes"
                    )));
                }
                bits => bits.map(|b| (b / 8) as usize),
            },
            sector_size: a.sector_size,
            key_slot: a.key_slot,
        },
    };
    Ok(Request {
        goal,
        options,
        start_only: a.init_only,
        resume_only: a.resume_only,
        allow_none: a.allow_none_resume,
    })
}

/// An interrupted run: the progress, and the command that goes on with it.
fn interrupted(a: &ReencryptArgs, done: u64, total: u64) -> CliError {
    let mut again = format!(
        "mdu luks reencrypt --resume-only --key-file {}",
        util::shell_word(&a.key_file)
    );
    if let Some(h) = &a.header {
        again += &format!(" --header {}", util::shell_word(h));
    }
    again += &format!(" {}", util::shell_word(&a.image));
    CliError::Refused {
        path: a.image.clone(),
        message: format!(
            "interrupted after {done} of {total} bytes, progress recorded; go on with: {again}"
        ),
    }
}

/// Refuses a command that makes a new image or header when two of its
/// files (the key files, the detached header and `others`) are one.
fn new_image_paths(
    a: &NewImageArgs,
    header: Option<&Path>,
    others: &[(&str, &Path)],
) -> Result<(), CliError> {
    let mut paths = vec![("--key-file", a.key_file.as_path())];
    if let Some(v) = &a.volume_key_file {
        paths.push(("--volume-key-file", v));
    }
    if let Some(h) = header {
        paths.push(("--header", h));
    }
    paths.extend_from_slice(others);
    util::distinct(&paths)
}

/// What `open_or_start` refused: a run asked for that is not the one in
/// progress is a usage error; the rest as [`image_error`].
fn reencrypt_error(header: &Path, e: Luks2Error) -> CliError {
    match e {
        Luks2Error::InProgress { other: true } => CliError::Usage(format!(
            "{}: a reencryption is already in progress; resume it with --resume-only",
            header.display()
        )),
        Luks2Error::Params { problem } => CliError::Usage(problem),
        e => image_error(header, e),
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

/// `--offset` (512-byte sectors) in bytes, with the reason when it cannot
/// be a data offset: not a multiple of 8 sectors (4096 bytes), or beyond
/// the largest file offset.
fn offset_bytes(sectors: u64) -> Result<u64, CliError> {
    if !sectors.is_multiple_of(8) {
        return Err(CliError::Usage(format!(
            "--offset {sectors}: must be a multiple of 8 sectors (4096 bytes)"
        )));
    }
    sectors
        .checked_mul(512)
        .filter(|&b| b <= mdu_luks2::MAX_DATA_OFFSET)
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--offset {sectors}: {sectors} sectors of 512 bytes lie beyond the largest data offset, {} bytes (a file offset is below 2^63)",
                mdu_luks2::MAX_DATA_OFFSET
            ))
        })
}

/// The format parameters of a new image, every one checked: no file is
/// read, nothing is opened and no key derived before they are.
fn format_params(a: &NewImageArgs) -> Result<FormatParams, CliError> {
    let spec = CipherSpec::parse(&a.cipher)
        .map_err(|e| CliError::Usage(format!("--cipher {}: {e}", a.cipher)))?;
    let default_bits = u32::try_from(spec.default_key_len() * 8).unwrap_or(u32::MAX);
    let bits = a.key_size.unwrap_or(default_bits);
    let bytes = (bits / 8) as usize;
    if !bits.is_multiple_of(8) || spec.check_key_len(bytes).is_err() {
        let lens: Vec<String> = spec
            .key_lens()
            .iter()
            .map(|n| (n * 8).to_string())
            .collect();
        return Err(CliError::Usage(format!(
            "--key-size {bits}: {} takes {}",
            a.cipher,
            lens.join(" or ")
        )));
    }
    let hash = Hash::parse(&a.hash)
        .ok_or_else(|| CliError::Usage(format!("--hash {}: use sha1, sha256 or sha512", a.hash)))?;
    let kdf = match a.pbkdf {
        PbkdfArg::Pbkdf2 => KdfParams::Pbkdf2 {
            hash,
            iterations: a.pbkdf_force_iterations.unwrap_or(1_000_000),
        },
        PbkdfArg::Argon2i | PbkdfArg::Argon2id => KdfParams::Argon2 {
            variant: if a.pbkdf == PbkdfArg::Argon2i {
                Argon2Variant::Argon2i
            } else {
                Argon2Variant::Argon2id
            },
            time: a.pbkdf_force_iterations.unwrap_or(4),
            memory: a.pbkdf_memory,
            cpus: a.pbkdf_parallel,
        },
    };
    let data_offset = offset_bytes(a.offset)?;
    let params = FormatParams {
        cipher: spec,
        weak_keys: a.weak.policy(),
        key_size: bytes,
        sector_size: a.sector_size,
        kdf,
        digest_iterations: if a.pbkdf_force_iterations.is_some() {
            1000
        } else {
            100_000
        },
        uuid: a.uuid.clone(),
        label: a.label.clone(),
        subsystem: a.subsystem.clone(),
        data_offset,
        ..FormatParams::default()
    };
    // Every parameter is checked before a key file is read or a key derived.
    params
        .validate()
        .map_err(|e| CliError::Usage(format!("{e}")))?;
    Ok(params)
}

/// The volume key of a new image: from --volume-key-file, or random.
fn volume_key(a: &NewImageArgs, bytes: usize) -> Result<Zeroizing<Vec<u8>>, CliError> {
    let mut key = Zeroizing::new(vec![0u8; bytes]);
    match &a.volume_key_file {
        Some(p) => {
            let mut f = File::open(p).map_err(|e| CliError::io(p, "read the volume key", e))?;
            let mut buf = Zeroizing::new(vec![0u8; bytes + 1]);
            let n = util::read_full(&mut f, &mut buf)
                .map_err(|e| CliError::io(p, "read the volume key", e))?;
            if n != bytes {
                return Err(CliError::Input {
                    path: p.clone(),
                    offset: n.min(bytes) as u64,
                    rule: format!("the volume key file must hold exactly {bytes} bytes"),
                });
            }
            key.copy_from_slice(&buf[..bytes]);
        }
        None => util::random_bytes(&mut key)?,
    }
    Ok(key)
}

/// A new image's header region, its parameters and its volume key.
struct NewImage {
    region: Vec<u8>,
    params: FormatParams,
    key: Zeroizing<Vec<u8>>,
}

/// The header region of a new image with the checked `params`: reads the
/// volume key and the passphrase, and derives the keyslot's key.
fn header_region(a: &NewImageArgs, params: FormatParams) -> Result<NewImage, CliError> {
    let key = volume_key(a, params.key_size)?;
    let pass = read_passphrase(&a.key_file)?;
    let region =
        mdu_luks2::format(&params, &pass, &key, &mut mdu_luks2::os_random).map_err(|e| {
            match (e, &a.volume_key_file) {
                (Luks2Error::Cipher(e @ DmCryptError::WeakXtsKey { .. }), Some(p)) => {
                    util::key_error(p, "the volume key", e)
                }
                (e, _) => CliError::Usage(e.to_string()),
            }
        })?;
    Ok(NewImage {
        region,
        params,
        key,
    })
}

/// Writes the header region `region` at the start of `out` and leaves the
/// rest up to `data_offset` a hole (a new file) or as it was (a device);
/// on a stream, zeros.
fn write_region(out: &mut Output, region: &[u8], data_offset: u64) -> Result<(), CliError> {
    let path = out.path().to_owned();
    let len = region.len() as u64;
    let r = out.file().write_all(region).and_then(|()| {
        if out.seekable() {
            out.file().seek(SeekFrom::Start(data_offset)).map(drop)
        } else {
            let gap = data_offset.saturating_sub(len);
            std::io::copy(&mut std::io::repeat(0).take(gap), out.file()).map(drop)
        }
    });
    r.map_err(|e| CliError::io(&path, "write the header", e))
}

fn format(a: FormatArgs) -> Result<(), CliError> {
    let path = &a.image;
    new_image_paths(&a.new, a.header.as_deref(), &[("IMAGE", path)])?;
    let params = format_params(&a.new)?;
    if let Some(h) = &a.header {
        File::open(path).map_err(|e| CliError::io(path, "open", e))?;
        // A header holds the keyslots: readable by its owner only.
        let mut out = Output::to(h).private().open()?;
        let key = volume_key(&a.new, params.key_size)?;
        let pass = read_passphrase(&a.new.key_file)?;
        let region = mdu_luks2::format_detached(&params, &pass, &key, &mut mdu_luks2::os_random)
            .map_err(|e| CliError::Usage(e.to_string()))?;
        out.file()
            .write_all(&region)
            .map_err(|e| CliError::io(h, "write the header", e))?;
        return out.commit();
    }
    let end = params.data_offset;
    // An existing image gets the header written over its start, in place,
    // as luksFormat does; a new one is created atomically. Both are checked
    // before the passphrase is derived.
    // A header written over an existing image: the image is this
    // command's alone from here on.
    let mut locks = Locks::new();
    locks.file(path)?;
    let in_place = match Target::resolve(path)? {
        Target::New(_) => None,
        Target::Stream(_, _, Some(_)) => {
            // /dev/stdout, /dev/fd/N: whatever the descriptor is open on
            // (a file too), it is written through as a stream.
            return Err(CliError::Usage(format!(
                "{}: is written as a stream through this process's descriptor: a LUKS2 header \
                 is written at positions of a regular file or a block device; name the file \
                 itself instead of redirecting to it",
                path.display()
            )));
        }
        Target::Stream(..) => {
            return Err(CliError::Usage(format!(
                "{}: is a FIFO or character device: a LUKS2 header is written at positions \
                 of a regular file or a block device",
                path.display()
            )));
        }
        Target::File(p, _) | Target::Block(p, _) => {
            let f = OpenOptions::new()
                .write(true)
                // A device is opened exclusively: the kernel refuses a
                // mounted one.
                .custom_flags(if p.is_file() { 0 } else { libc::O_EXCL })
                .open(&p)
                .map_err(|e| CliError::io(path, "open for writing", e))?;
            let size = (&f)
                .seek(SeekFrom::End(0))
                .map_err(|e| CliError::io(path, "read its size", e))?;
            let block = f.metadata().is_ok_and(|m| m.file_type().is_block_device());
            if block && size < end {
                return Err(CliError::Usage(format!(
                    "{}: the device holds {size} bytes, less than the data offset {end}: \
                     nothing was written",
                    path.display()
                )));
            }
            Some(f)
        }
    };
    match in_place {
        Some(f) => {
            let region = header_region(&a.new, params)?.region;
            f.write_all_at(&region, 0)
                .map_err(|e| CliError::io(path, "write the header", e))?;
            f.sync_all()
                .map_err(|e| CliError::io(path, "sync to stable storage", e))
        }
        None => {
            let mut out = Output::to(path).open()?;
            // The image's length is taken before the key derivation, so an
            // offset the file system cannot hold fails at once.
            out.file().set_len(end).map_err(|e| {
                CliError::Usage(format!(
                    "{}: cannot make an image of {end} bytes (--offset {}): {e}; nothing was written",
                    path.display(),
                    a.new.offset
                ))
            })?;
            let region = header_region(&a.new, params)?.region;
            write_region(&mut out, &region, end)?;
            out.file()
                .set_len(end)
                .map_err(|e| CliError::io(path, "write the header", e))?;
            out.commit()
        }
    }
}

fn encrypt(a: EncryptArgs) -> Result<(), CliError> {
    new_image_paths(
        &a.new,
        a.header.as_deref(),
        &[("PLAIN", &a.plain), ("IMAGE", &a.image)],
    )?;
    let (input, len) = open_sized(&a.plain)?;
    let ss = u64::from(a.new.sector_size);
    if len == 0 || !len.is_multiple_of(ss) {
        return Err(CliError::Input {
            path: a.plain.clone(),
            offset: len - len % ss,
            rule: format!(
                "the plaintext ({len} bytes) must be a whole, non-zero number of {ss}-byte sectors"
            ),
        });
    }
    let params = format_params(&a.new)?;
    // A detached header: the data from offset 0 of IMAGE.
    let start = if a.header.is_some() {
        0
    } else {
        params.data_offset
    };
    let total = start.checked_add(len).ok_or_else(|| {
        CliError::Usage(format!(
            "--offset {}: the image would be too large",
            a.new.offset
        ))
    })?;
    let in_meta = input
        .metadata()
        .map_err(|e| CliError::io(&a.plain, "examine", e))?;
    let mut out = Output::to(&a.image)
        .not_same_as(&a.plain, in_meta)
        .len(total)
        .reserve(start, len)
        .open()?;
    let mut header_out = match &a.header {
        Some(h) => Some(
            Output::to(h)
                .private()
                .not_same_as(
                    &a.plain,
                    input
                        .metadata()
                        .map_err(|e| CliError::io(&a.plain, "examine", e))?,
                )
                .open()?,
        ),
        None => None,
    };
    let NewImage {
        region,
        params,
        key,
    } = match header_out {
        Some(_) => {
            let key = volume_key(&a.new, params.key_size)?;
            let pass = read_passphrase(&a.new.key_file)?;
            let region =
                mdu_luks2::format_detached(&params, &pass, &key, &mut mdu_luks2::os_random)
                    .map_err(|e| CliError::Usage(e.to_string()))?;
            NewImage {
                region,
                params,
                key,
            }
        }
        None => header_region(&a.new, params)?,
    };
    let geometry =
        Geometry::new(params.sector_size, 0, false).map_err(|e| CliError::Usage(e.to_string()))?;
    let cipher = SectorCipher::new(params.cipher, &key, geometry, params.weak_keys)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    drop(key);
    match &mut header_out {
        Some(h) => {
            let path = h.path().to_owned();
            h.file()
                .write_all(&region)
                .map_err(|e| CliError::io(&path, "write the header", e))?;
        }
        None => write_region(&mut out, &region, params.data_offset)?,
    }
    let seekable = out.seekable();
    pipeline::run(
        Direction::Encrypt,
        &cipher,
        Source {
            file: &input,
            path: &a.plain,
            offset: 0,
            len: Some(len),
        },
        Sink {
            file: out.file(),
            path: &a.image,
            offset: start,
            seekable,
        },
        a.threads,
    )?;
    out.commit()?;
    match header_out {
        Some(h) => h.commit(),
        None => Ok(()),
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

fn decrypt(a: DecryptArgs) -> Result<(), CliError> {
    let mut paths = vec![("--key-file", a.key_file.as_path())];
    if let Some(h) = &a.header {
        paths.push(("--header", h));
    }
    paths.extend([("IMAGE", a.image.as_path()), ("PLAIN", a.plain.as_path())]);
    util::distinct(&paths)?;
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
                util::key_error(&a.image, "the volume key", e)
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

fn dump(a: DumpArgs) -> Result<(), CliError> {
    let a = DumpArgs {
        image: a.header.clone().unwrap_or(a.image),
        ..a
    };
    let (f, img) = load(&a.image)?;
    let key = match (&a.key_file, a.dump_volume_key, a.unbound, a.key_slot) {
        (Some(kf), _, true, Some(slot)) => {
            let pass = read_passphrase(kf)?;
            Some(
                img.unlock_unbound(&f, slot, &pass)
                    .map_err(|e| image_error(&a.image, e))?,
            )
        }
        (Some(kf), true, _, Some(slot)) => {
            let pass = read_passphrase(kf)?;
            Some(
                img.unlock_slot(&f, slot, &pass)
                    .map_err(|e| image_error(&a.image, e))?,
            )
        }
        (Some(kf), true, _, None) => Some(unlock(&a.image, &f, &img, kf)?),
        _ => None,
    };
    let text = match &key {
        _ if a.json => dump_json(&img, key.as_ref()),
        Some(k) if k.segment.is_none() => dump_unbound_key(&a.image, &img, k),
        Some(k) => dump_volume_key(&a.image, &img, k)?,
        None => dump_text(&img),
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::io(Path::new("stdout"), "write", e))
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
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(&a.image)
            .map_err(|e| CliError::io(&a.image, "open for writing", e))?
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

fn hex_lines(out: &mut String, bytes: &[u8], indent: &str) {
    for (i, line) in bytes.chunks(16).enumerate() {
        if i > 0 {
            out.push_str(indent);
        }
        for b in line {
            let _ = write!(out, "{b:02x} ");
        }
        out.push('\n');
    }
}

/// A keyslot priority as `cryptsetup luksDump` prints it.
fn priority_name(p: Option<i64>) -> &'static str {
    match p {
        Some(0) => "ignored",
        None | Some(1) => "normal",
        Some(2) => "high",
        Some(_) => "invalid",
    }
}

fn dump_text(img: &Image) -> String {
    let h = &img.header;
    let m = &img.metadata;
    let mut o = String::new();
    let or = |s: &str, none: &str| {
        if s.is_empty() {
            none.to_owned()
        } else {
            s.to_owned()
        }
    };
    let _ = writeln!(o, "LUKS header information");
    let _ = writeln!(o, "Version:       \t2");
    let _ = writeln!(o, "Epoch:         \t{}", h.seqid);
    let _ = writeln!(o, "Metadata area: \t{} [bytes]", h.hdr_size);
    let _ = writeln!(o, "Keyslots area: \t{} [bytes]", m.config.keyslots_size);
    let _ = writeln!(o, "UUID:          \t{}", h.uuid);
    let _ = writeln!(o, "Label:         \t{}", or(&h.label, "(no label)"));
    let _ = writeln!(o, "Subsystem:     \t{}", or(&h.subsystem, "(no subsystem)"));
    let flags = m.config.flags.join(" ");
    let _ = writeln!(o, "Flags:       \t{}", or(&flags, "(no flags)"));
    if let Some(r) = &m.config.requirements {
        let mut line = String::new();
        for x in r {
            let _ = write!(line, "{x} ");
        }
        let _ = writeln!(o, "Requirements:\t{line}");
    }
    if img.copy == HeaderCopy::Secondary {
        let _ = writeln!(o, "Header copy:   \tsecondary (the primary is damaged)");
    }
    let _ = writeln!(o, "\nData segments:");
    for (n, (id, s)) in m.segments.iter().enumerate() {
        if n > 0 {
            o.push('\n');
        }
        let _ = writeln!(o, "  {id}: {}", s.kind.name());
        let _ = writeln!(o, "\toffset: {} [bytes]", s.offset);
        match s.size {
            None => {
                let _ = writeln!(o, "\tlength: (whole device)");
            }
            Some(n) => {
                let _ = writeln!(o, "\tlength: {n} [bytes]");
            }
        }
        if s.is_crypt() {
            let _ = writeln!(o, "\tcipher: {}", s.encryption);
            let _ = writeln!(o, "\tsector: {} [bytes]", s.sector_size);
        }
        if !s.flags.is_empty() {
            let _ = writeln!(o, "\tflags : {}", s.flags.join(" "));
        }
    }
    let _ = writeln!(o, "\nKeyslots:");
    let digest_ids = |o: &mut String, id: u32| {
        for (did, d) in &m.digests {
            if d.keyslots.contains(&id) {
                let _ = writeln!(o, "\tDigest ID:  {did}");
            }
        }
    };
    let reencrypt_slot = |o: &mut String, r: &mdu_luks2::ReencryptKeyslot| {
        let _ = writeln!(o, "  {}: reencrypt (unbound)", r.id);
        let _ = writeln!(o, "\tKey:        8 bits");
        let _ = writeln!(o, "\tPriority:   {}", priority_name(r.priority));
        let _ = writeln!(o, "\tMode:       {}", r.mode.name());
        let _ = writeln!(o, "\tDirection:  {}", r.direction.name());
        let _ = writeln!(o, "\tResilience: {}", r.area.resilience.name());
        match r.area.resilience {
            mdu_luks2::Resilience::Checksum { hash, sector_size }
            | mdu_luks2::Resilience::DatashiftChecksum {
                hash, sector_size, ..
            } => {
                let _ = writeln!(o, "\tHash:       {hash}");
                let _ = writeln!(o, "\tHash data:  {sector_size} [bytes]");
            }
            _ => {}
        }
        if let Some(shift) = r.area.resilience.shift() {
            let _ = writeln!(o, "\tShift size: {shift} [bytes]");
        }
        let _ = writeln!(o, "\tArea offset:{} [bytes]", r.area.offset);
        let _ = writeln!(o, "\tArea length:{} [bytes]", r.area.size);
        digest_ids(o, r.id);
    };
    let mut pending = m.reencrypt.as_ref();
    for (id, k) in &m.keyslots {
        if let Some(r) = pending.filter(|r| r.id < *id) {
            reencrypt_slot(&mut o, r);
            pending = None;
        }
        let unbound = if m.keyslot_is_unbound(*id) {
            " (unbound)"
        } else {
            ""
        };
        let _ = writeln!(o, "  {id}: luks2{unbound}");
        let _ = writeln!(o, "\tKey:        {} bits", k.key_size * 8);
        let _ = writeln!(o, "\tPriority:   {}", priority_name(k.priority));
        let _ = writeln!(o, "\tCipher:     {}", k.area.encryption);
        let _ = writeln!(o, "\tCipher key: {} bits", k.area.key_size * 8);
        let _ = writeln!(o, "\tPBKDF:      {}", k.kdf.name());
        match &k.kdf {
            Kdf::Pbkdf2 {
                hash, iterations, ..
            } => {
                let _ = writeln!(o, "\tHash:       {hash}");
                let _ = writeln!(o, "\tIterations: {iterations}");
            }
            Kdf::Argon2 {
                time, memory, cpus, ..
            } => {
                let _ = writeln!(o, "\tTime cost:  {time}");
                let _ = writeln!(o, "\tMemory:     {memory}");
                let _ = writeln!(o, "\tThreads:    {cpus}");
            }
        }
        o.push_str("\tSalt:       ");
        hex_lines(&mut o, k.kdf.salt(), "\t            ");
        // As cryptsetup prints it: read as a C int, printed unsigned.
        let stripes = k.af_stripes.clamp(i32::MIN.into(), i32::MAX.into()) as i32 as u32;
        let _ = writeln!(o, "\tAF stripes: {stripes}");
        let _ = writeln!(o, "\tAF hash:    {}", k.af_hash);
        let _ = writeln!(o, "\tArea offset:{} [bytes]", k.area.offset);
        let _ = writeln!(o, "\tArea length:{} [bytes]", k.area.size);
        digest_ids(&mut o, *id);
    }
    if let Some(r) = pending {
        reencrypt_slot(&mut o, r);
    }
    let _ = writeln!(o, "Tokens:");
    for id in m.tokens.keys() {
        let _ = writeln!(o, "  {id}: (kept as is)");
    }
    let _ = writeln!(o, "Digests:");
    for (id, d) in &m.digests {
        let _ = writeln!(o, "  {id}: pbkdf2");
        let _ = writeln!(o, "\tHash:       {}", d.hash);
        let _ = writeln!(o, "\tIterations: {}", d.iterations);
        o.push_str("\tSalt:       ");
        hex_lines(&mut o, &d.salt, "\t            ");
        o.push_str("\tDigest:     ");
        hex_lines(&mut o, &d.digest, "\t            ");
    }
    o
}

fn dump_volume_key(
    path: &Path,
    img: &Image,
    key: &mdu_luks2::VolumeKey,
) -> Result<String, CliError> {
    let (_, seg) = img.segment().map_err(|e| image_error(path, e))?;
    let mut parts = seg.encryption.as_str().splitn(2, '-');
    let name = parts.next().unwrap_or_default();
    let mode = parts.next().unwrap_or_default();
    let mut o = String::new();
    let _ = writeln!(o, "LUKS header information for {}", path.display());
    let _ = writeln!(o, "Cipher name:   \t{name}");
    let _ = writeln!(o, "Cipher mode:   \t{mode}");
    let _ = writeln!(o, "Payload offset:\t{}", seg.offset / 512);
    let _ = writeln!(o, "UUID:          \t{}", img.header.uuid);
    let _ = writeln!(o, "MK bits:       \t{}", key.key.len() * 8);
    o.push_str("MK dump:\t");
    hex_lines(&mut o, &key.key, "\t\t");
    Ok(o)
}

/// The key of an unbound keyslot, as `cryptsetup luksDump --unbound`.
fn dump_unbound_key(path: &Path, img: &Image, key: &mdu_luks2::VolumeKey) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "LUKS header information for {}", path.display());
    let _ = writeln!(o, "UUID:    \t{}", img.header.uuid);
    let _ = writeln!(o, "Keyslot: \t{}", key.slot);
    let _ = writeln!(o, "Key bits:\t{}", key.key.len() * 8);
    o.push_str("Unbound Key:\t");
    hex_lines(&mut o, &key.key, "\t\t");
    o
}

fn dump_json(img: &Image, key: Option<&mdu_luks2::VolumeKey>) -> String {
    use serde_json::{Value, json};
    let h = &img.header;
    let metadata: Value = serde_json::from_str(&img.metadata.to_json()).unwrap_or(Value::Null);
    let mut v = json!({
        "version": 2,
        "epoch": h.seqid,
        "hdr_size": h.hdr_size,
        "uuid": h.uuid,
        "label": h.label,
        "subsystem": h.subsystem,
        "header_copy": img.copy.name(),
        "primary_error": img.primary_error.as_ref().map(|e| e.to_string()),
        "secondary_error": img.secondary_error.as_ref().map(|e| e.to_string()),
        "metadata": metadata,
    });
    // Per keyslot: its digest, whether it is unbound (its key opens no
    // segment) and its priority as luksDump names it.
    let m = &img.metadata;
    let keyslots: serde_json::Map<String, Value> = m
        .keyslots
        .iter()
        .map(|(id, k)| {
            let priority = match k.priority {
                Some(0) => "ignored",
                None | Some(1) => "normal",
                Some(2) => "high",
                Some(_) => "invalid",
            };
            let status = json!({
                "digest": m.keyslot_digest(*id),
                "unbound": m.keyslot_is_unbound(*id),
                "priority": priority,
            });
            (id.to_string(), status)
        })
        .collect();
    v["keyslots"] = Value::Object(keyslots);
    if let Some(k) = key {
        v["volume_key"] = Value::String(util::to_hex(&k.key));
        v["keyslot"] = json!(k.slot);
        v["unbound"] = json!(k.segment.is_none());
    }
    let mut s = v.to_string();
    s.push('\n');
    s
}
