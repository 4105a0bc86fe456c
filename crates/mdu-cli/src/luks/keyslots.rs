//! `mdu luks add-key|change-key|convert-key|kill-slot|remove-key`: the
//! keyslot verbs of cryptsetup, each header write crash-safe
//! (`mdu_luks2::Image::add_keyslot` and its siblings); a LUKS1 image
//! goes to `luks1_keyslots.rs`.

use std::io::{BufRead as _, IsTerminal as _};

use mdu_luks2::KeyslotParams;

use super::*;

/// How a new keyslot is made (cryptsetup's options of the same names).
#[derive(Args, Debug)]
pub(crate) struct NewKeyslotArgs {
    /// Skip this many bytes of the new key file (NEW_KEY_FILE or
    /// --new-keyfile).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub(super) new_keyfile_offset: u64,
    /// Read exactly this many bytes of the new key file.
    #[arg(long, value_name = "BYTES")]
    pub(super) new_keyfile_size: Option<usize>,
    /// Key derivation of the new keyslot (default argon2id, as cryptsetup).
    #[arg(long, value_enum)]
    pub(super) pbkdf: Option<PbkdfArg>,
    /// PBKDF2 iterations (at least 1000), or Argon2 passes (at least 4),
    /// with no benchmark.
    #[arg(long, value_name = "N")]
    pub(super) pbkdf_force_iterations: Option<u32>,
    /// The time the new keyslot's key derivation should take, in
    /// milliseconds: its cost is benchmarked on this machine to take it
    /// (as cryptsetup; PBKDF2 at least 1000 iterations, Argon2 at least
    /// 4 passes, its memory up to --pbkdf-memory but at most half the
    /// physical memory, its threads at most the CPUs).
    #[arg(long, short = 'i', value_name = "MS", default_value_t = FormatChoices::ITER_TIME_MS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(super) iter_time: u32,
    /// Argon2 memory cost in KiB (default 1048576; with a benchmark, the
    /// most).
    #[arg(long, value_name = "KIB")]
    pub(super) pbkdf_memory: Option<u32>,
    /// Argon2 threads (default 4).
    #[arg(long, value_name = "N")]
    pub(super) pbkdf_parallel: Option<u32>,
    /// Hash of PBKDF2 and of the anti-forensic splitter: sha1, sha256
    /// (the default) or sha512.
    #[arg(long, value_name = "HASH")]
    pub(super) hash: Option<String>,
    /// Cipher of the new keyslot's area (default: the data segment's).
    #[arg(long, value_name = "SPEC", requires = "keyslot_key_size")]
    pub(super) keyslot_cipher: Option<String>,
    /// Key size of the keyslot cipher, in bits.
    #[arg(long, value_name = "BITS", requires = "keyslot_cipher")]
    pub(super) keyslot_key_size: Option<u32>,
}

impl NewKeyslotArgs {
    /// The checked parameters of the new keyslot, its KDF cost fixed
    /// (forced, or the defaults until [`benchmarked`](Self::benchmarked)).
    fn params(&self) -> Result<KeyslotParams, CliError> {
        let mut params = KeyslotParams::from_choices(&self.choices()?).map_err(new_header_error)?;
        if let (Some(c), Some(bits)) = (&self.keyslot_cipher, self.keyslot_key_size) {
            let (spec, bytes) = FormatChoices::cipher_and_key_bits(c, Some(bits))
                .map_err(|e| CliError::Usage(format!("--keyslot-cipher {c}: {e}")))?;
            params.area = Some((spec, bytes.unwrap_or(spec.default_key_len())));
        }
        Ok(params)
    }

    /// `params` with the KDF cost benchmarked to --iter-time as `format`
    /// benchmarks it ([`benchmark_to`]), unless
    /// --pbkdf-force-iterations fixes it.
    fn benchmarked(&self, params: KeyslotParams, image: &Path) -> Result<KeyslotParams, CliError> {
        let forced = self.pbkdf_force_iterations.is_some();
        let Some(ms) = benchmark_to(image, self.iter_time, forced) else {
            return Ok(params);
        };
        let choices = FormatChoices {
            iter_time_ms: Some(ms),
            ..self.choices()?
        };
        let b = KeyslotParams::from_choices(&choices).map_err(new_header_error)?;
        Ok(KeyslotParams {
            kdf: b.kdf,
            digest_iterations: b.digest_iterations,
            ..params
        })
    }

    /// The KDF choices of the options.
    fn choices(&self) -> Result<FormatChoices, CliError> {
        let hash = match &self.hash {
            Some(h) => Some(Hash::parse(h).ok_or_else(|| {
                CliError::Usage(format!("--hash {h}: use sha1, sha256 or sha512"))
            })?),
            None => None,
        };
        Ok(FormatChoices {
            pbkdf: self.pbkdf.map_or(mdu_luks2::Pbkdf::default(), Into::into),
            iterations: self.pbkdf_force_iterations,
            memory_kib: self.pbkdf_memory,
            parallel: self.pbkdf_parallel,
            hash,
            ..FormatChoices::default()
        })
    }
}

/// `mdu luks add-key`.
#[derive(Args, Debug)]
pub(crate) struct AddKeyArgs {
    /// An existing passphrase (not needed with --unbound or
    /// --volume-key-file).
    #[command(flatten)]
    pub(super) key: KeyArgs,
    /// The new passphrase, in a file (as the positional NEW_KEY_FILE).
    #[arg(long, value_name = "F", conflicts_with = "new_key_file")]
    pub(super) new_keyfile: Option<PathBuf>,
    /// The id of the new keyslot (default: the lowest free one); with
    /// --new-key-slot, the keyslot --key-file must open.
    #[arg(short = 'S', long, value_name = "N")]
    pub(super) key_slot: Option<u32>,
    /// The id of the new keyslot (then --key-slot names the existing one).
    #[arg(long, value_name = "N")]
    pub(super) new_key_slot: Option<u32>,
    /// Add a keyslot bound to no segment, keeping a new random key of
    /// --key-size bits (or the key in --volume-key-file); no existing
    /// passphrase is needed.
    #[arg(long, requires = "key_size")]
    pub(super) unbound: bool,
    /// The key size of an unbound keyslot, in bits (or of the volume key
    /// in --volume-key-file when no keyslot is left to say it).
    #[arg(long, value_name = "BITS")]
    pub(super) key_size: Option<u32>,
    /// Take the volume key from this file instead of opening a keyslot
    /// (it is checked against the volume's digest).
    #[arg(long, value_name = "F")]
    pub(super) volume_key_file: Option<PathBuf>,
    #[command(flatten)]
    pub(super) new: NewKeyslotArgs,
    /// The LUKS2 header is in FILE (a detached header); IMAGE is not read.
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
    /// File whose whole contents are the new passphrase.
    #[arg(value_name = "NEW_KEY_FILE")]
    pub(super) new_key_file: Option<PathBuf>,
}

/// `mdu luks change-key` and `mdu luks convert-key`.
#[derive(Args, Debug)]
pub(crate) struct ChangeKeyArgs {
    /// The passphrase to change.
    #[command(flatten)]
    pub(super) key: KeyArgs,
    /// The keyslot the passphrase must open (default: any).
    #[arg(short = 'S', long, value_name = "N")]
    pub(super) key_slot: Option<u32>,
    #[command(flatten)]
    pub(super) new: NewKeyslotArgs,
    /// The LUKS2 header is in FILE (a detached header); IMAGE is not read.
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
    /// File whose whole contents are the new passphrase (change-key only).
    #[arg(value_name = "NEW_KEY_FILE")]
    pub(super) new_key_file: Option<PathBuf>,
}

/// `mdu luks kill-slot`.
#[derive(Args, Debug)]
pub(crate) struct KillSlotArgs {
    /// File whose whole contents are a passphrase of another keyslot (of
    /// this one if it is the last). Without it, a passphrase piped on
    /// standard input (up to its first newline) is checked; nothing there,
    /// the keyslot is removed unchecked, as cryptsetup does.
    #[arg(long, value_name = "F")]
    pub(super) key_file: Option<PathBuf>,
    /// The LUKS2 header is in FILE (a detached header); IMAGE is not read.
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
    /// The keyslot to remove.
    #[arg(value_name = "KEY_SLOT")]
    pub(super) slot: u32,
}

/// `mdu luks remove-key`.
#[derive(Args, Debug)]
pub(crate) struct RemoveKeyArgs {
    /// The passphrase to remove.
    #[command(flatten)]
    pub(super) key: KeyArgs,
    /// The LUKS2 header is in FILE (a detached header); IMAGE is not read.
    #[arg(long, value_name = "FILE")]
    pub(super) header: Option<PathBuf>,
    /// The LUKS2 image.
    #[arg(value_name = "IMAGE")]
    pub(super) image: PathBuf,
    /// The passphrase to remove, in a file (as --key-file).
    #[arg(value_name = "KEY_FILE")]
    pub(super) key_file_arg: Option<PathBuf>,
}

/// The image (or detached header) to change, locked and opened for
/// writing, with its header.
fn open_for_change(
    image: &Path,
    header: Option<&Path>,
    locks: &mut Locks,
) -> Result<(PathBuf, File, Image), CliError> {
    let path = header.unwrap_or(image).to_owned();
    locks.file(&path)?;
    let f = crate::output::in_place(&path, true, false, "open for writing")?;
    let (_, img) = load(&path)?;
    Ok((path, f, img))
}

/// What a keyslot verb failed at: a write of the header or keyslots area
/// (the only I/O that yields [`Luks2Error::Io`]), or what
/// [`image_error`] says.
pub(super) fn change_error(path: &Path, e: Luks2Error) -> CliError {
    match e {
        Luks2Error::Io(e) => CliError::io(path, "write the header or keyslots area", e),
        e => image_error(path, e),
    }
}

/// The new passphrase of a keyslot of `image`: `file` when one is named
/// (all of it, or --new-keyfile-size bytes after --new-keyfile-offset),
/// otherwise as cryptsetup asks for it (a prompt typed twice
/// on a terminal, or the first line of standard input).
pub(super) fn new_passphrase(
    image: &Path,
    file: Option<&Path>,
    n: &NewKeyslotArgs,
) -> Result<Zeroizing<Vec<u8>>, CliError> {
    let rules = mdu_luks2::KeyFileRules {
        offset: n.new_keyfile_offset,
        size: n.new_keyfile_size,
        stop_at_newline: false,
    };
    match file {
        Some(p) => mdu_luks2::read_key_file_with(p, &rules).map_err(|e| match e {
            mdu_luks2::KeyFileError::Io(e) => CliError::io(p, "read the new key file", e),
            e => key_file_error(p, e),
        }),
        None if rules.offset > 0 || rules.size.is_some() => Err(CliError::Usage(
            "--new-keyfile-offset and --new-keyfile-size apply to a new key file: give \
             NEW_KEY_FILE or --new-keyfile"
                .into(),
        )),
        None => KeyArgs::default().new_passphrase(image),
    }
}

pub(super) fn add_key(a: AddKeyArgs) -> Result<(), CliError> {
    if let Some(path) = luks1_path(&a.image, a.header.as_deref())? {
        return luks1_add_key(&a, &path);
    }
    let params = a.new.params()?;
    let (new_slot, open_slot) = match a.new_key_slot {
        Some(n) => (Some(n), a.key_slot),
        None => (a.key_slot, None),
    };
    let mut locks = Locks::new();
    let (path, f, mut img) = open_for_change(&a.image, a.header.as_deref(), &mut locks)?;
    let err = |e| change_error(&path, e);
    let new_file = a.new_key_file.as_deref().or(a.new_keyfile.as_deref());
    let unbound_len = a.key_size.map(|bits| (bits / 8) as usize);
    if a.key_size.is_some_and(|bits| bits == 0 || bits % 8 != 0) {
        return Err(CliError::Usage(
            "--key-size must be a positive multiple of 8 bits".into(),
        ));
    }
    // The cheap refusals (a taken id, a full table, no room) before any
    // key derivation.
    let key_len = match (a.unbound, img.volume_key_size(), unbound_len) {
        (true, _, Some(n)) | (false, Some(n), _) | (false, None, Some(n)) => n,
        (true, _, None) => return Err(CliError::Usage("--unbound needs --key-size".into())),
        (false, None, None) if a.volume_key_file.is_some() => {
            return Err(CliError::Usage(
                "no keyslot says the volume key size: give --key-size".into(),
            ));
        }
        (false, None, None) => return Err(err(Luks2Error::NoKeyslot)),
    };
    img.keyslot_place(new_slot, key_len).map_err(err)?;
    let key = match (&a.volume_key_file, a.unbound) {
        (Some(p), _) => mdu_luks2::read_volume_key_file(p, key_len).map_err(|e| match e {
            mdu_luks2::KeyFileError::Io(e) => CliError::io(p, "read the volume key", e),
            e => key_file_error(p, e),
        })?,
        (None, true) => {
            let mut key = Zeroizing::new(vec![0u8; key_len]);
            process::random_bytes(&mut key)?;
            key
        }
        (None, false) => {
            a.key
                .open_with(&path, |pass| {
                    match open_slot {
                        Some(s) => img.unlock_slot(&f, s, pass),
                        None => img.unlock(&f, pass),
                    }
                    .map_err(err)
                })?
                .key
        }
    };
    let new_pass = new_passphrase(&path, new_file, &a.new)?;
    let params = a.new.benchmarked(params, &path)?;
    if a.unbound {
        img.add_unbound_keyslot(&f, &key, new_slot, &new_pass, &params)
    } else {
        img.add_keyslot(&f, &key, new_slot, &new_pass, &params)
    }
    .map_err(err)?;
    Ok(())
}

/// `change-key` (a new passphrase) and `convert-key` (`convert`: the
/// same one, new parameters).
pub(super) fn change_key(a: ChangeKeyArgs, convert: bool) -> Result<(), CliError> {
    if let Some(path) = luks1_path(&a.image, a.header.as_deref())? {
        return luks1_change_key(&a, &path, convert);
    }
    let params = a.new.params()?;
    if convert && a.new_key_file.is_some() {
        return Err(CliError::Usage(
            "convert-key keeps the passphrase: it takes no NEW_KEY_FILE".into(),
        ));
    }
    let mut locks = Locks::new();
    let (path, f, mut img) = open_for_change(&a.image, a.header.as_deref(), &mut locks)?;
    let err = |e| change_error(&path, e);
    if let Some(s) = a.key_slot
        && !img.metadata.keyslots.contains_key(&s)
    {
        return Err(err(Luks2Error::NoSuchKeyslot { slot: s }));
    }
    // No room even for the smallest keyslot: refused before the key
    // derivation.
    let smallest = img.metadata.keyslots.values().map(|k| k.key_size).min();
    if let Some(n) = smallest {
        img.keyslot_area(n as usize).map_err(err)?;
    }
    let mut pass = Zeroizing::new(Vec::new());
    let key = a.key.open_with(&path, |p| {
        let key = img.unlock_any(&f, a.key_slot, p).map_err(err)?;
        pass = Zeroizing::new(p.to_vec());
        Ok(key)
    })?;
    let new_pass = match convert {
        true => pass,
        false => new_passphrase(&path, a.new_key_file.as_deref(), &a.new)?,
    };
    let params = a.new.benchmarked(params, &path)?;
    img.change_keyslot(&f, key.slot, &key.key, &new_pass, &params)
        .map_err(err)
}

pub(super) fn kill_slot(a: KillSlotArgs) -> Result<(), CliError> {
    if let Some(path) = luks1_path(&a.image, a.header.as_deref())? {
        return luks1_kill_slot(&a, &path);
    }
    let mut locks = Locks::new();
    let (path, f, mut img) = open_for_change(&a.image, a.header.as_deref(), &mut locks)?;
    let err = |e| change_error(&path, e);
    let m = &img.metadata;
    if !m.keyslots.contains_key(&a.slot) {
        return Err(CliError::Refused {
            path: path.clone(),
            message: format!("keyslot {} is not active", a.slot),
        });
    }
    let pass = match &a.key_file {
        Some(p) => Some(read_passphrase(p)?),
        None => stdin_passphrase()?,
    };
    if let Some(pass) = pass {
        // cryptsetup's rule: a passphrase of another bound keyslot, or of
        // this one if it is the last bound keyslot.
        let bound: Vec<u32> = m
            .keyslots
            .keys()
            .copied()
            .filter(|&k| !m.keyslot_is_unbound(k))
            .collect();
        let last = bound == [a.slot];
        let others: Vec<u32> = match last {
            true => vec![a.slot],
            false => bound.into_iter().filter(|&k| k != a.slot).collect(),
        };
        let opened = others
            .iter()
            .any(|&k| img.unlock_slot(&f, k, &pass).is_ok());
        if !opened {
            return Err(err(Luks2Error::WrongPassphrase));
        }
    }
    img.remove_keyslot(&f, a.slot).map_err(err)
}

pub(super) fn remove_key(a: RemoveKeyArgs) -> Result<(), CliError> {
    if let Some(path) = luks1_path(&a.image, a.header.as_deref())? {
        return luks1_remove_key(&a, &path);
    }
    let mut locks = Locks::new();
    let (path, f, mut img) = open_for_change(&a.image, a.header.as_deref(), &mut locks)?;
    let err = |e| change_error(&path, e);
    let key = match a.key_file_arg.as_deref() {
        Some(p) => img.unlock(&f, &read_passphrase(p)?).map_err(err)?,
        None => a
            .key
            .open_with(&path, |pass| img.unlock(&f, pass).map_err(err))?,
    };
    let m = &img.metadata;
    let last = m
        .keyslots
        .keys()
        .all(|&k| k == key.slot || m.keyslot_is_unbound(k));
    let question =
        "This is the last keyslot. The volume will become unusable after purging this key.";
    if last && !confirm(question, flags().batch)? {
        return Err(CliError::Refused {
            path: path.clone(),
            message: "operation aborted, the keyslot was NOT wiped".into(),
        });
    }
    img.remove_keyslot(&f, key.slot).map_err(err)
}

/// A passphrase piped on standard input, up to its first newline; `None`
/// when nothing is there. On a terminal: refused (give --key-file).
pub(super) fn stdin_passphrase() -> Result<Option<Zeroizing<Vec<u8>>>, CliError> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(CliError::Usage(
            "--key-file (a remaining passphrase) is needed".into(),
        ));
    }
    let mut line = Zeroizing::new(Vec::new());
    stdin
        .lock()
        .read_until(b'\n', &mut line)
        .map_err(|e| CliError::io(Path::new("stdin"), "read the passphrase", e))?;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    Ok((!line.is_empty()).then_some(line))
}
