//! The options of `mdu luks`, as cryptsetup names them.

use super::*;

/// `mdu luks`: cryptsetup's global options, then the verb.
#[derive(Args, Debug)]
pub(crate) struct LuksArgs {
    #[command(flatten)]
    pub(super) global: GlobalArgs,
    #[command(subcommand)]
    pub(super) cmd: LuksCmd,
}

/// The options cryptsetup takes with every verb, before or after it.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct GlobalArgs {
    /// The type of the header: luks (any version), luks1 or luks2. An
    /// image of another type is refused (exit 1), as cryptsetup does.
    #[arg(
        short = 'M',
        long = "type",
        value_enum,
        value_name = "TYPE",
        global = true
    )]
    pub(super) luks_type: Option<LuksType>,
    /// Do not ask for confirmation (and do not verify a new passphrase
    /// unless -y is given).
    #[arg(short = 'q', long = "batch-mode", global = true)]
    pub(super) batch: bool,
    /// Say what was done: the keyslot opened or made, and the result.
    #[arg(short = 'v', long, global = true)]
    pub(super) verbose: bool,
    /// Say on stderr what mdu does step by step: the header copy used, the
    /// keyslots tried, the KDF parameters chosen.
    #[arg(long, global = true)]
    pub(super) debug: bool,
    /// Do not lock the image (cryptsetup's flock): another process may
    /// change it meanwhile.
    #[arg(long, global = true)]
    pub(super) disable_locks: bool,
    /// Ask for a passphrase typed on a terminal twice.
    #[arg(short = 'y', long, global = true)]
    pub(super) verify_passphrase: bool,
}

/// `--type`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LuksType {
    /// LUKS of any version.
    Luks,
    /// LUKS version 1.
    Luks1,
    /// LUKS version 2.
    Luks2,
}

/// How the passphrase is given, as cryptsetup takes it: a key file, or
/// standard input, or a prompt on a terminal.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct KeyArgs {
    /// Read the passphrase from file F: all of it, newlines included (at
    /// most 8 MiB). `-` reads standard input as a key file. Without it,
    /// the passphrase is asked for on a terminal, or read from standard
    /// input up to its first newline.
    #[arg(long, short = 'd', value_name = "F")]
    pub(super) key_file: Option<PathBuf>,
    /// Skip this many bytes of the key file (or of standard input).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub(super) keyfile_offset: u64,
    /// Read exactly this many bytes of the key file (or at most up to the
    /// first newline of standard input).
    #[arg(long, short = 'l', value_name = "BYTES")]
    pub(super) keyfile_size: Option<usize>,
    /// How many times a passphrase typed on a terminal may be tried (0:
    /// until one opens).
    #[arg(long, short = 'T', value_name = "N", default_value_t = 3)]
    pub(super) tries: u32,
}

/// LUKS2 subcommands. Each takes cryptsetup's name as well
/// (`luksFormat`, `luksDump`), or the short form shown here.
#[derive(Subcommand, Debug)]
pub(crate) enum LuksCmd {
    /// Write a new LUKS2 header (or with --type luks1 a LUKS1 one) and
    /// keyslot 0 into IMAGE, as `cryptsetup luksFormat`.
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
    /// --volume-key-file is given. On a terminal, an existing IMAGE is
    /// overwritten only after a confirmation (not with -q).
    #[command(alias = "luksFormat")]
    Format(FormatArgs),
    /// Encrypt PLAIN into a new LUKS2 image IMAGE: header region, then PLAIN
    /// encrypted as the data segment, in one streaming pass.
    ///
    /// PLAIN must be a whole number of sectors. IMAGE may not be PLAIN.
    #[command(after_long_help = crate::output::HELP)]
    Encrypt(EncryptArgs),
    /// Decrypt the data segment of the LUKS2 (or LUKS1) image IMAGE into
    /// PLAIN, opening the volume key with the passphrase in --key-file
    /// through any keyslot.
    ///
    /// A new PLAIN is readable by its owner only (mode 0600); PLAIN may not
    /// be IMAGE. Exit status 1 if the passphrase opens no keyslot or the
    /// image is damaged.
    #[command(after_long_help = crate::output::HELP)]
    Decrypt(DecryptArgs),
    /// Print what the LUKS2 or LUKS1 header of IMAGE says, as
    /// `cryptsetup luksDump`.
    ///
    /// With --dump-volume-key and --key-file, prints the volume key instead
    /// (as `cryptsetup luksDump --dump-volume-key`).
    #[command(alias = "luksDump")]
    Dump(DumpArgs),
    /// Measure the KDFs and ciphers of LUKS on mdu's own engines, as
    /// `cryptsetup benchmark` prints them (no kernel crypto API needed).
    ///
    /// PBKDF2 iterations per second per hash, the Argon2i and Argon2id
    /// cost that takes --iter-time, then MiB/s of encryption and
    /// decryption of 1 MiB in 512-byte sectors for cryptsetup's ciphers
    /// and key sizes (and Adiantum). --cipher, --hash or --pbkdf measure
    /// one only. Also `mdu benchmark`.
    Benchmark(BenchmarkArgs),
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
    /// Add a keyslot, as `cryptsetup luksAddKey`: the volume key opened
    /// with --key-file (or taken from --volume-key-file) kept under the
    /// new passphrase in NEW_KEY_FILE, at --key-slot or the lowest free
    /// id, in the first free area large enough; with --unbound, a new
    /// key bound to no segment.
    ///
    /// The key material is written before the header that names it, so a
    /// crash leaves the old keyslots or the new ones.
    #[command(name = "add-key", alias = "luksAddKey")]
    AddKey(AddKeyArgs),
    /// Change a passphrase, as `cryptsetup luksChangeKey`: the keyslot
    /// --key-file opens is replaced by one keeping the key under the
    /// passphrase in NEW_KEY_FILE (and the PBKDF options), under the same
    /// id and priority.
    ///
    /// The new keyslot is written into a free area before the header
    /// names it, and the old area is wiped after: never in place, so the
    /// change is refused when the keyslots area has no room left.
    #[command(name = "change-key", alias = "luksChangeKey")]
    ChangeKey(ChangeKeyArgs),
    /// Rewrite the keyslot --key-file opens with new PBKDF parameters and
    /// the same passphrase, as `cryptsetup luksConvertKey` (written as
    /// change-key writes).
    #[command(name = "convert-key", alias = "luksConvertKey")]
    ConvertKey(ChangeKeyArgs),
    /// Remove keyslot KEY_SLOT, as `cryptsetup luksKillSlot`, after
    /// checking a passphrase of another keyslot (see --key-file). The
    /// header is written first, then the area is wiped.
    #[command(name = "kill-slot", alias = "luksKillSlot")]
    KillSlot(KillSlotArgs),
    /// Remove the keyslot the passphrase opens, as `cryptsetup
    /// luksRemoveKey`. Removing the last one asks for confirmation on a
    /// terminal.
    #[command(name = "remove-key", alias = "luksRemoveKey")]
    RemoveKey(RemoveKeyArgs),
    /// Exit 0 if IMAGE has a LUKS header (of --type), 1 if not, as
    /// `cryptsetup isLuks`.
    #[command(name = "is-luks", alias = "isLuks")]
    IsLuks(IsLuksArgs),
    /// Print the UUID of IMAGE, or set it with --uuid, as `cryptsetup
    /// luksUUID`.
    #[command(alias = "luksUUID")]
    Uuid(UuidArgs),
    /// Set the label and subsystem (--label, --subsystem) or a keyslot's
    /// priority (--priority, --key-slot), as `cryptsetup config`.
    Config(ConfigArgs),
    /// Add, remove, import, export or unassign a token, as `cryptsetup
    /// token` (tokens are what systemd-cryptenroll, clevis and the kernel
    /// keyring unlock with).
    ///
    /// An imported token is checked as cryptsetup checks it: a JSON object
    /// with a non-empty string "type" and a "keyslots" array of existing
    /// keyslot ids as strings; a luks2-keyring token has exactly "type",
    /// "keyslots" and "key_description"; it must fit the metadata area.
    /// export prints it byte for byte as cryptsetup does.
    Token(TokenArgs),
    /// Copy the header region of IMAGE (both header copies and the
    /// keyslots area) into a new file, as `cryptsetup luksHeaderBackup`.
    #[command(name = "header-backup", alias = "luksHeaderBackup")]
    HeaderBackup(HeaderBackupArgs),
    /// Write a header backup back into IMAGE, as `cryptsetup
    /// luksHeaderRestore`.
    ///
    /// Refused: a backup that is not a valid LUKS2 header or records a
    /// reencryption in progress, and one whose data offset or header and
    /// keyslots size differ from IMAGE's header. A backup of another volume
    /// (another UUID) replaces the header only when confirmed on a
    /// terminal. The write is crash-safe: a kill at any point leaves
    /// IMAGE's header or the backup's.
    #[command(name = "header-restore", alias = "luksHeaderRestore")]
    HeaderRestore(HeaderBackupArgs),
    /// Remove every keyslot of IMAGE and wipe their key material, as
    /// `cryptsetup luksErase`: without a header backup the data are gone.
    #[command(alias = "luksErase")]
    Erase(HeaderOnlyArgs),
    /// Rewrite a damaged or outdated header copy from the good one, as
    /// `cryptsetup repair`, and say what was repaired.
    Repair(HeaderOnlyArgs),
    /// With --test-passphrase: check that the passphrase opens IMAGE (a
    /// keyslot bound to the data, or --key-slot), as `cryptsetup open
    /// --test-passphrase`. Mapping a volume is not available.
    Open(OpenArgs),
    /// Convert the header of IMAGE to --type luks2 or --type luks1 in
    /// place, as `cryptsetup convert`: the keyslots keep their material
    /// (moved 28 KiB up or down), the data are not touched.
    ///
    /// What the other format cannot hold is refused before anything is
    /// written (to LUKS1: Argon2 keyslots, tokens, sectors other than 512
    /// bytes, keyslots 8 and up, several segments, a reencryption; to
    /// LUKS2: a payload too close to the key slots for the larger header).
    /// Like cryptsetup's, the conversion rewrites the header in place and
    /// is not crash-safe: take a `header-backup` first. On a terminal it
    /// asks for confirmation unless -q is given.
    Convert(ConvertArgs),
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

Exit status (cryptsetup's): 0 done (or initialised, with --init-only); 1
bad usage, a damaged or refused header, or a run interrupted (resume it);
2 a wrong passphrase; 4 IMAGE missing; 5 busy.";

/// `mdu luks reencrypt`.
#[derive(Args, Debug)]
pub(crate) struct ReencryptArgs {
    /// The passphrase: it opens the old key and keeps the new one.
    #[command(flatten)]
    pub(super) key: KeyArgs,
    /// The LUKS2 header is in FILE, not in IMAGE (IMAGE is then all data).
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// Encrypt the plaintext IMAGE in place: under a new detached header
    /// (--header, a file that must not exist yet), or with the header at
    /// the start of IMAGE and the data moved up (--reduce-device-size).
    #[arg(long, conflicts_with = "decrypt")]
    pub(super) encrypt: bool,
    /// With --encrypt: make room for the header by moving the data up by
    /// half of SIZE (the data offset), as cryptsetup does. The last SIZE
    /// bytes of IMAGE must be free: shrink the file system by SIZE first.
    /// A number of bytes, or with a K, M or G suffix (powers of 1024).
    #[arg(long, value_name = "SIZE", requires = "encrypt", conflicts_with = "header", value_parser = args::parse_size)]
    pub(super) reduce_device_size: Option<u64>,
    /// Decrypt IMAGE in place. With the header in IMAGE, --header names a
    /// new file it is exported to (the record of the run is kept there) and
    /// the data move down to offset 0; with a detached header (--header,
    /// an existing file) the data stay where they are. The header ends with
    /// one linear segment and no keyslots.
    #[arg(long, requires = "header")]
    pub(super) decrypt: bool,
    /// The new cipher (default: the current one; for --encrypt
    /// aes-xts-plain64).
    #[arg(long, value_name = "SPEC", conflicts_with = "decrypt")]
    pub(super) cipher: Option<String>,
    /// The new volume key size in bits (default: the current one; for
    /// --encrypt the cipher's default).
    #[arg(long, value_name = "BITS", conflicts_with = "decrypt")]
    pub(super) key_size: Option<u32>,
    /// The new sector size (default: the current one; for --encrypt 4096).
    #[arg(long, value_name = "N", conflicts_with = "decrypt")]
    pub(super) sector_size: Option<u32>,
    /// Key derivation of a new keyslot made by --encrypt (a key change keeps
    /// the old keyslot's).
    #[arg(long, value_enum, default_value = "argon2id", requires = "encrypt")]
    pub(super) pbkdf: PbkdfArg,
    /// PBKDF2 iterations or Argon2 passes of the new keyslot (--encrypt),
    /// with no benchmark.
    #[arg(long, value_name = "N", requires = "encrypt")]
    pub(super) pbkdf_force_iterations: Option<u32>,
    /// The time the new keyslot's key derivation should take, in
    /// milliseconds: its cost is benchmarked on this machine to take it,
    /// as `format` does (a key change keeps the opened keyslot's KDF and
    /// hash, and benchmarks its cost).
    #[arg(long, short = 'i', value_name = "MS", default_value_t = FormatChoices::ITER_TIME_MS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) iter_time: u32,
    /// The keyslot to open (and to keep, under the new key); the others of
    /// the old key are removed at the end. Needed when there are several.
    #[arg(long, value_name = "N")]
    pub(super) key_slot: Option<u32>,
    /// How each hotzone survives a crash (see below; default checksum).
    #[arg(long, value_enum, conflicts_with = "reduce_device_size")]
    pub(super) resilience: Option<ResilienceArg>,
    /// Hash of checksum resilience: sha1, sha256 or sha512.
    #[arg(long, value_name = "HASH", default_value = "sha256")]
    pub(super) resilience_hash: String,
    /// The largest hotzone, in bytes or with a K, M or G suffix (default
    /// 64 MiB; journal: at most what
    /// the keyslots area holds).
    #[arg(long, value_name = "SIZE", conflicts_with = "reduce_device_size", value_parser = args::parse_size)]
    pub(super) hotzone_size: Option<u64>,
    /// Only go on with a reencryption in progress; never start one.
    #[arg(long, conflicts_with_all = ["encrypt", "decrypt", "cipher", "key_size", "sector_size", "init_only"])]
    pub(super) resume_only: bool,
    /// Write the first state of the reencryption and stop (resume it later).
    #[arg(long)]
    pub(super) init_only: bool,
    /// Resume a run with resilience none (see below).
    #[arg(long)]
    pub(super) allow_none_resume: bool,
    /// The data device or image file.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
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

Exit status: 0 nothing found; 1 findings (listed, or in --json), a header
that cannot be read, bad usage or an unreadable policy; 4 IMAGE missing; 5
busy (--wipe-free-areas).";

/// `mdu luks check`.
#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// The expected values, as JSON (see below).
    #[arg(long, value_name = "FILE")]
    pub(super) policy: Option<PathBuf>,
    /// Print the findings as JSON: {"copy", "seqid", "clean", "findings":
    /// [{"field", "kind", "message"}], "leftovers": [{"offset", "len"}]},
    /// with "wiped" (bytes) after --wipe-free-areas.
    #[arg(long)]
    pub(super) json: bool,
    /// The LUKS2 header is in FILE (a detached header, as cryptsetup
    /// --header); IMAGE is not read.
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// Refill every range of the keyslots area that no keyslot names with
    /// random bytes (as cryptsetup fills a new keyslots area), whatever it
    /// holds: what an interrupted command left there, key material too,
    /// is gone. Takes the image's lock, as cryptsetup's.
    #[arg(long)]
    pub(super) wipe_free_areas: bool,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
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
    /// The passphrase of keyslot 0 (on a terminal: asked for twice, unless
    /// -q is given without -y).
    #[command(flatten)]
    pub(super) key: KeyArgs,
    /// Cipher of the data segment and of the keyslot area: aes-xts-IVMODE
    /// or aes-cbc-IVMODE (IVMODE plain64, essiv:sha256, plain, ...).
    #[arg(long, value_name = "SPEC", default_value = FormatChoices::CIPHER)]
    pub(super) cipher: String,
    /// Volume key size in bits: 256 or 512 for aes-xts (AES-128 or AES-256),
    /// 128 or 256 for aes-cbc. Default: 512 for aes-xts, 256 for aes-cbc.
    #[arg(long, value_name = "BITS")]
    pub(super) key_size: Option<u32>,
    /// Encryption sector size in bytes: 512, 1024, 2048 or 4096 (the
    /// default, what luksFormat picks for a file).
    #[arg(long, value_name = "N", default_value_t = FormatChoices::SECTOR_SIZE)]
    pub(super) sector_size: u32,
    /// Key derivation of keyslot 0.
    #[arg(long, value_enum, default_value = "argon2id")]
    pub(super) pbkdf: PbkdfArg,
    /// PBKDF2 iterations (at least 1000), or Argon2 passes (time cost, at
    /// least 4), with no benchmark. Given, the volume-key digest takes the
    /// minimum 1000 iterations (as cryptsetup).
    #[arg(long, value_name = "N")]
    pub(super) pbkdf_force_iterations: Option<u32>,
    /// The time the key derivation of keyslot 0 should take, in
    /// milliseconds: its cost is benchmarked on this machine to take it
    /// (as cryptsetup; PBKDF2 at least 1000 iterations, Argon2 at least
    /// 4 passes, its memory up to --pbkdf-memory but at most half the
    /// physical memory, its threads at most the CPUs).
    #[arg(long, short = 'i', value_name = "MS", default_value_t = FormatChoices::ITER_TIME_MS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) iter_time: u32,
    /// Argon2 memory cost in KiB (at least 32; with a benchmark, the most).
    #[arg(long, value_name = "KIB", default_value_t = FormatChoices::ARGON2_MEMORY_KIB)]
    pub(super) pbkdf_memory: u32,
    /// Argon2 threads (lanes).
    #[arg(long, value_name = "N", default_value_t = FormatChoices::ARGON2_PARALLEL)]
    pub(super) pbkdf_parallel: u32,
    /// Hash of PBKDF2 (and, for LUKS1, of the AF splitter and the digest):
    /// sha1, sha256, sha512, ripemd160 or whirlpool.
    #[arg(long, value_name = "HASH", default_value = FormatChoices::HASH)]
    pub(super) hash: String,
    /// UUID of the image (default: random).
    #[arg(long, value_name = "U")]
    pub(super) uuid: Option<String>,
    /// Label (at most 47 bytes).
    #[arg(long, value_name = "L", default_value = "")]
    pub(super) label: String,
    /// Subsystem (at most 47 bytes).
    #[arg(long, value_name = "S", default_value = "")]
    pub(super) subsystem: String,
    /// Use the raw volume key in this file (key-size/8 bytes) instead of a
    /// random one.
    #[arg(long, value_name = "F")]
    pub(super) volume_key_file: Option<PathBuf>,
    #[command(flatten)]
    pub(super) weak: WeakKeyArg,
    /// Where the data segment starts, in 512-byte sectors (cryptsetup
    /// --offset); a multiple of 8. Default: 32768 (16 MiB); for LUKS1 the
    /// end of the key slots rounded up to 1 MiB (2048 or 4096).
    #[arg(long, value_name = "SECTORS")]
    pub(super) offset: Option<u64>,
}

impl NewImageArgs {
    /// `--offset`, or the LUKS2 default.
    pub(super) fn offset_sectors(&self) -> u64 {
        self.offset.unwrap_or(FormatChoices::DATA_OFFSET / 512)
    }
}

/// `mdu luks format`.
#[derive(Args, Debug)]
pub(crate) struct FormatArgs {
    #[command(flatten)]
    pub(super) new: NewImageArgs,
    /// Write a detached header into FILE (a new file, written atomically)
    /// for data at offset 0 of IMAGE, as `cryptsetup luksFormat --header`;
    /// IMAGE must exist and is not written.
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The image file or block device.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
}

/// `mdu luks encrypt`.
#[derive(Args, Debug)]
pub(crate) struct EncryptArgs {
    #[command(flatten)]
    pub(super) new: NewImageArgs,
    /// Write the header into FILE (a new file, written atomically) and
    /// only the encrypted data into IMAGE, from offset 0 (a detached
    /// header, as `cryptsetup --header`).
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// Encryption threads (default: every core; at most 1024).
    #[arg(long, value_name = "N", value_parser = crate::args::threads_arg)]
    pub(super) threads: Option<usize>,
    /// The plaintext: a regular file or block device.
    #[arg(value_name = "PLAIN")]
    pub(super) plain: PathBuf,
    /// The new LUKS2 image (a regular file, replaced atomically).
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
}

/// `mdu luks decrypt`.
#[derive(Args, Debug)]
pub(crate) struct DecryptArgs {
    /// The passphrase.
    #[command(flatten)]
    pub(super) key: KeyArgs,
    /// The LUKS2 header is in FILE (a detached header, as cryptsetup
    /// --header); IMAGE then holds the data only.
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    #[command(flatten)]
    pub(super) weak: WeakKeyArg,
    /// Decryption threads (default: every core; at most 1024).
    #[arg(long, value_name = "N", value_parser = crate::args::threads_arg)]
    pub(super) threads: Option<usize>,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
    /// The plaintext output (a regular file, replaced atomically).
    #[arg(value_name = "PLAIN")]
    pub(super) plain: PathBuf,
}

/// `mdu luks dump`.
#[derive(Args, Debug)]
pub(crate) struct DumpArgs {
    /// Print the header, the copy used and the metadata as JSON.
    #[arg(long)]
    pub(super) json: bool,
    /// The LUKS2 header is in FILE (a detached header, as cryptsetup
    /// --header); IMAGE is not read.
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// Print the volume key of the data segment (after the passphrase, and
    /// on a terminal a confirmation). Only a keyslot bound to the data
    /// segment gives it: the passphrase of an unbound keyslot is refused
    /// (see --unbound).
    #[arg(long)]
    pub(super) dump_volume_key: bool,
    /// Print the key of the unbound keyslot --key-slot (one bound to no
    /// segment, from `cryptsetup luksAddKey --unbound`), as
    /// `cryptsetup luksDump --unbound`. Needs --key-slot.
    #[arg(long, requires = "key_slot", conflicts_with = "dump_volume_key")]
    pub(super) unbound: bool,
    /// The keyslot to open (with --unbound, or --dump-volume-key: that
    /// keyslot only, whatever its priority).
    #[arg(long, value_name = "N")]
    pub(super) key_slot: Option<u32>,
    /// The passphrase (with --dump-volume-key or --unbound).
    #[command(flatten)]
    pub(super) key: KeyArgs,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
}
