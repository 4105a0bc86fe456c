//! `mdu fscrypt`: an ext4 image's fscrypt-encrypted files read offline, as
//! the kernel shows them with the key (or, for `ls`, without it).

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use clap::{Args, Subcommand};
use mdu_fscrypt::ext4::{FileType, Inode, Timestamp};
use mdu_fscrypt::key::MasterKey;
use mdu_fscrypt::policy::{Context, KeySpec};
use mdu_fscrypt::volume::{Keyring, NameForm, NodeKind, Tree, Volume};
use rayon::prelude::*;

use crate::error::CliError;

mod extract;

use crate::{args, process, progress};
use extract::extract;

const KEY_HELP: &str = "\
Keys: --key FILE holds a raw v2 master key (16 to 64 bytes, as given to
FS_IOC_ADD_ENCRYPTION_KEY); its identifier is derived from it, and a
directory or file whose policy names another identifier is refused with both
identifiers. --key-v1 DESCRIPTOR:FILE gives a v1 key with the 16-hex-digit
descriptor its owner chose. A v1 policy stores nothing to check its key by
(the kernel does not check it either): a v1 key is checked only through the
names it decrypts. Each name, and each symlink target, must decrypt to what
the kernel writes (no NUL, no `/` in a name, then NULs up to its stored
length); under a wrong key a stored name of L bytes passes with a
probability of about (254/256)^L (0.88 for a 16-byte name), so the first
time a v1 key is needed, mdu decrypts stored names under it (from that
directory, then from the root) until 2048 bytes of them or 1024
directories are read (a wrong key then passes with a probability under
10^-6) and refuses it when one fails. What cannot be checked: an image with
few or no names under that key (a directory with no entries, a regular file
alone), whose files then decrypt to garbage with exit 0.

Exit status: 0 success; 1 the image is damaged (the error names the inode
and the field) or a key does not open it; 2 bad usage, or a path not found.";

/// fscrypt subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum FscryptCmd {
    /// List a directory as `ls -a` would on the mounted file system: names
    /// decrypted with the key, or, without any --key, the no-key names the
    /// kernel shows (byte for byte, the htree hash included).
    #[command(after_long_help = KEY_HELP)]
    Ls(LsArgs),
    /// Write a file's plaintext to stdout.
    #[command(after_long_help = KEY_HELP)]
    Cat(CatArgs),
    /// Extract a directory tree's plaintext: files with their modes and
    /// modification times, directories, symlinks. Files are written in
    /// parallel, each in 1 MiB pieces, as sparse as in the image (holes and
    /// unwritten extents are not written). OUT must not exist or be
    /// empty, and nothing in it is ever overwritten; an interrupted run
    /// leaves what it had written (plaintext) in OUT; the whole tree (keys,
    /// names, block maps) is checked before the first write. Owners are not
    /// restored, so setuid and setgid bits are dropped (as tar does when it
    /// does not restore owners). FIFOs are recreated, device nodes too as root (else
    /// skipped, as sockets are, with a line on stderr).
    #[command(after_long_help = KEY_HELP)]
    Extract(ExtractArgs),
    /// Print the encryption policy and nonce of a file or directory (no key
    /// needed; PATH in no-key names where the names are encrypted).
    Policy(PolicyArgs),
    /// Print the identifier the kernel derives for a v2 master key (what
    /// FS_IOC_ADD_ENCRYPTION_KEY returns and `fscrypt status` shows).
    KeyId(KeyIdArgs),
}

/// The keys of a read.
#[derive(Args, Debug)]
pub(crate) struct KeyArgs {
    /// A raw v2 master key (repeat for several).
    #[arg(long, value_name = "FILE")]
    key: Vec<PathBuf>,
    /// A v1 master key and its descriptor: 16 hex digits, a colon, a file.
    #[arg(long, value_name = "DESCRIPTOR:FILE")]
    key_v1: Vec<String>,
}

/// Options of `mdu fscrypt ls`.
#[derive(Args, Debug)]
pub(crate) struct LsArgs {
    /// The ext4 image or block device.
    image: PathBuf,
    /// The directory (default: the root), its components as `ls` names
    /// them.
    path: Option<String>,
    #[command(flatten)]
    keys: KeyArgs,
    /// One line per entry: type, mode, size, inode, name.
    #[arg(short, long)]
    long: bool,
    /// One JSON object per entry, one per line: the name (UTF-8, else
    /// `name_hex`), how it was read (clear, decrypted, nokey), the inode,
    /// type, mode, size, times, and the stored name in hex.
    #[arg(long, conflicts_with = "long")]
    json: bool,
}

/// Options of `mdu fscrypt cat`.
#[derive(Args, Debug)]
pub(crate) struct CatArgs {
    /// The ext4 image or block device.
    image: PathBuf,
    /// The file.
    path: String,
    #[command(flatten)]
    keys: KeyArgs,
}

/// Options of `mdu fscrypt extract`.
#[derive(Args, Debug)]
pub(crate) struct ExtractArgs {
    /// The ext4 image or block device.
    image: PathBuf,
    /// The directory to extract (default: the root).
    path: Option<String>,
    #[command(flatten)]
    keys: KeyArgs,
    /// Where to write the tree (created; must not exist, or be empty).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Threads (default: every core; at most 1024).
    #[arg(long, value_name = "N", value_parser = crate::args::threads_arg)]
    threads: Option<usize>,
}

/// Options of `mdu fscrypt policy`.
#[derive(Args, Debug)]
pub(crate) struct PolicyArgs {
    /// The ext4 image or block device.
    image: PathBuf,
    /// The file or directory.
    path: String,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Options of `mdu fscrypt key-id`.
#[derive(Args, Debug)]
pub(crate) struct KeyIdArgs {
    /// The raw master key.
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
}

pub(crate) fn run(cmd: FscryptCmd) -> Result<(), CliError> {
    match cmd {
        FscryptCmd::Ls(a) => ls(a),
        FscryptCmd::Cat(a) => cat(a),
        FscryptCmd::Extract(a) => extract(a),
        FscryptCmd::Policy(a) => policy(a),
        FscryptCmd::KeyId(a) => key_id(a),
    }
}

fn read_key(path: &Path) -> Result<MasterKey, CliError> {
    let raw =
        zeroize::Zeroizing::new(fs::read(path).map_err(|e| CliError::io(path, "read the key", e))?);
    MasterKey::new(&raw).map_err(|e| CliError::lib(path, e))
}

fn keyring(k: &KeyArgs) -> Result<Keyring, CliError> {
    let mut keys = Keyring::new();
    for path in &k.key {
        keys.add(read_key(path)?);
    }
    for spec in &k.key_v1 {
        let (desc, file) = spec
            .split_once(':')
            .ok_or_else(|| CliError::Usage(format!("--key-v1 {spec}: expected DESCRIPTOR:FILE")))?;
        let d: [u8; 8] = args::parse_hex("--key-v1 descriptor", desc)?
            .try_into()
            .map_err(|_| {
                CliError::Usage(format!("--key-v1 {spec}: the descriptor is 16 hex digits"))
            })?;
        keys.add_v1(d, read_key(Path::new(file))?);
    }
    Ok(keys)
}

/// The volume in `image`, and a mapping of its errors to the CLI's.
struct Image {
    path: PathBuf,
    vol: Volume<File>,
}

impl Image {
    fn open(path: &Path, keys: Keyring) -> Result<Image, CliError> {
        let file = File::open(path).map_err(|e| CliError::io(path, "open", e))?;
        let vol = Volume::open(file, keys).map_err(|e| refused(path, e))?;
        Ok(Image {
            path: path.to_owned(),
            vol,
        })
    }

    fn err(&self, e: mdu_fscrypt::volume::VolumeError) -> CliError {
        refused(&self.path, e)
    }

    fn lookup(&self, path: &str) -> Result<(u32, Inode), CliError> {
        let ino = self.vol.lookup(path.as_bytes()).map_err(|e| self.err(e))?;
        let inode = self.vol.inode(ino).map_err(|e| self.err(e))?;
        Ok((ino, inode))
    }
}

fn refused(path: &Path, e: mdu_fscrypt::volume::VolumeError) -> CliError {
    use mdu_fscrypt::volume::VolumeError as E;
    match e {
        E::NotFound { .. } | E::NotADirectory { .. } => {
            CliError::Usage(format!("{}: {e}", path.display()))
        }
        // Taken when the image is opened: an I/O error of the opening, as
        // before anything is read (exit 2).
        e @ E::Ext4(mdu_fscrypt::ext4::Ext4Error::ImageSize { .. }) => CliError::lib(path, e),
        e => CliError::Refused {
            path: path.to_owned(),
            message: e.to_string(),
        },
    }
}

fn kind(t: FileType) -> &'static str {
    match t {
        FileType::Regular => "file",
        FileType::Dir => "dir",
        FileType::Symlink => "symlink",
        FileType::CharDev => "chardev",
        FileType::BlockDev => "blockdev",
        FileType::Fifo => "fifo",
        FileType::Socket => "socket",
        _ => "unknown",
    }
}

fn ls(a: LsArgs) -> Result<(), CliError> {
    let img = Image::open(&a.image, keyring(&a.keys)?)?;
    let (ino, _) = img.lookup(a.path.as_deref().unwrap_or("/"))?;
    let mut entries = img.vol.list(ino).map_err(|e| img.err(e))?;
    entries.sort_by(|x, y| x.name.cmp(&y.name));
    let mut out = std::io::stdout().lock();
    for e in entries {
        let line = if a.long || a.json {
            let inode = img.vol.inode(e.ino).map_err(|er| img.err(er))?;
            if a.json {
                let mut o = serde_json::Map::new();
                match std::str::from_utf8(&e.name) {
                    Ok(s) => o.insert("name".into(), s.into()),
                    Err(_) => o.insert("name_hex".into(), args::to_hex(&e.name).into()),
                };
                let form = match e.form {
                    NameForm::Clear => "clear",
                    NameForm::Decrypted => "decrypted",
                    NameForm::NoKey => "nokey",
                };
                o.insert("form".into(), form.into());
                o.insert("ino".into(), e.ino.into());
                o.insert("type".into(), kind(e.file_type).into());
                o.insert("mode".into(), format!("{:o}", inode.permissions()).into());
                o.insert("size".into(), inode.size.into());
                o.insert("encrypted".into(), inode.is_encrypted().into());
                o.insert("mtime".into(), inode.mtime.secs.into());
                o.insert("stored_hex".into(), args::to_hex(&e.stored).into());
                serde_json::Value::Object(o).to_string().into_bytes()
            } else {
                let mut l = format!(
                    "{:<8} {:04o} {:>12} {:>8} ",
                    kind(e.file_type),
                    inode.permissions(),
                    inode.size,
                    e.ino
                )
                .into_bytes();
                l.extend_from_slice(&e.name);
                l
            }
        } else {
            e.name
        };
        match out.write_all(&line).and_then(|()| out.write_all(b"\n")) {
            Ok(()) => {}
            // `mdu fscrypt ls | head`: the reader has all it wanted.
            Err(er) if er.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            Err(er) => return Err(CliError::io(Path::new("<stdout>"), "write", er)),
        }
    }
    Ok(())
}

/// Streams regular file `inode` to `out` (stdout) in 1 MiB pieces.
fn copy_file(
    img: &Image,
    inode: &Inode,
    out: &mut dyn Write,
    done: &AtomicU64,
) -> Result<(), CliError> {
    let contents = img.vol.contents(inode).map_err(|e| img.err(e))?;
    let bs = u64::from(img.vol.ext4().block_size());
    let blocks = (1 << 20) / bs;
    let mut buf = vec![0u8; (blocks * bs) as usize];
    let mut block = 0;
    while block * bs < contents.size() {
        let n = contents.read(block, &mut buf).map_err(|e| img.err(e))?;
        out.write_all(&buf[..n])
            .map_err(|e| CliError::io(Path::new("<stdout>"), "write", e))?;
        done.fetch_add(n as u64, Ordering::Relaxed);
        block += blocks;
    }
    Ok(())
}
fn cat(a: CatArgs) -> Result<(), CliError> {
    let img = Image::open(&a.image, keyring(&a.keys)?)?;
    let (_, inode) = img.lookup(&a.path)?;
    if !inode.is_file() {
        return Err(CliError::Usage(format!(
            "{}: {}: not a regular file",
            a.image.display(),
            a.path
        )));
    }
    let mut out = std::io::stdout().lock();
    let r = copy_file(&img, &inode, &mut out, &AtomicU64::new(0)).and_then(|()| {
        out.flush()
            .map_err(|e| CliError::io(Path::new("<stdout>"), "write", e))
    });
    match r {
        // `mdu fscrypt cat ... | head`: the reader has all it wanted.
        Err(CliError::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(())
        }
        r => r,
    }
}
fn policy(a: PolicyArgs) -> Result<(), CliError> {
    let img = Image::open(&a.image, Keyring::new())?;
    let (ino, inode) = img.lookup(&a.path)?;
    let ctx: Option<Context> = img.vol.context(&inode).map_err(|e| img.err(e))?;
    let Some(ctx) = ctx else {
        println!("{}: inode {ino} is not encrypted", a.path);
        return Ok(());
    };
    let p = ctx.policy();
    let key = match p.key() {
        KeySpec::V1 { descriptor } => ("descriptor", args::to_hex(&descriptor)),
        KeySpec::V2 { identifier } => ("identifier", args::to_hex(&identifier)),
    };
    let unit = p.data_unit_size(img.vol.ext4().block_size());
    if a.json {
        let o = serde_json::json!({
            "ino": ino,
            "version": p.version(),
            "contents": p.contents().name(),
            "filenames": p.filenames().name(),
            "flags": p.flags().bits(),
            "padding": p.flags().name_padding(),
            "direct_key": p.flags().direct_key(),
            "iv_ino_lblk_64": p.flags().iv_ino_lblk_64(),
            "iv_ino_lblk_32": p.flags().bits() & 0x10 != 0,
            "data_unit_size": unit,
            key.0: key.1,
            "nonce": args::to_hex(ctx.nonce()),
            "context": args::to_hex(&ctx.to_bytes()),
        });
        println!("{o}");
    } else {
        println!("inode {ino}: policy v{}", p.version());
        println!("  contents:  {}", p.contents().name());
        println!("  filenames: {}", p.filenames().name());
        println!(
            "  flags:     {:#04x} (padding {})",
            p.flags().bits(),
            p.flags().name_padding()
        );
        println!("  data unit: {unit} bytes");
        println!("  key {}: {}", key.0, key.1);
        println!("  nonce:     {}", args::to_hex(ctx.nonce()));
    }
    Ok(())
}

fn key_id(a: KeyIdArgs) -> Result<(), CliError> {
    println!("{}", read_key(&a.key)?.identifier());
    Ok(())
}
