//! Where a passphrase comes from, as cryptsetup decides it: --key-file F
//! (the whole file), standard input as a key file (`--key-file -`), the
//! first line of standard input (no --key-file), or a prompt on a
//! terminal (with --tries, and -y for a second entry). The reading rules
//! are the library's ([`mdu_luks2::read_passphrase`]).

use mdu_luks2::{KeyFileError, KeyFileRules};

use super::terminal::{read_hidden, stdin_is_tty};
use super::*;

/// Where the passphrase of one command comes from.
enum Entry<'a> {
    /// A prompt on the terminal.
    Terminal,
    /// Standard input, by these rules.
    Stdin(KeyFileRules),
    /// A key file, by these rules.
    File(&'a Path, KeyFileRules),
}

impl KeyArgs {
    /// The key file named, unless it is standard input (`-`): for the
    /// checks that no two files of a command are one.
    pub(super) fn file(&self) -> Option<&Path> {
        self.key_file.as_deref().filter(|p| *p != Path::new("-"))
    }

    fn entry(&self) -> Result<Entry<'_>, CliError> {
        let rules = KeyFileRules {
            offset: self.keyfile_offset,
            size: self.keyfile_size,
            stop_at_newline: false,
        };
        Ok(match (&self.key_file, self.file()) {
            (_, Some(p)) => Entry::File(p, rules),
            _ if stdin_is_tty() => {
                if self.keyfile_offset > 0 {
                    return Err(CliError::Usage(
                        "--keyfile-offset cannot be used with a passphrase typed on a terminal"
                            .into(),
                    ));
                }
                Entry::Terminal
            }
            (Some(_), None) => Entry::Stdin(rules),
            (None, _) => Entry::Stdin(KeyFileRules::stdin_line(
                self.keyfile_offset,
                self.keyfile_size,
            )),
        })
    }

    /// The passphrase of an existing keyslot of `image`, given to `open`
    /// until it opens one: on a terminal up to --tries times (each wrong
    /// one said), otherwise once. A wrong passphrase is `open`'s error
    /// with exit status 2.
    pub(super) fn open_with<T>(
        &self,
        image: &Path,
        mut open: impl FnMut(&[u8]) -> Result<T, CliError>,
    ) -> Result<T, CliError> {
        let entry = self.entry()?;
        let tries = match entry {
            // 0: until one opens, as cryptsetup's count that never
            // reaches 0.
            Entry::Terminal if self.tries == 0 => u32::MAX,
            Entry::Terminal => self.tries,
            _ => 1,
        };
        if flags().verify_passphrase && !matches!(entry, Entry::Terminal) {
            cannot_verify();
        }
        for left in (0..tries).rev() {
            let pass = match &entry {
                Entry::Terminal => {
                    let pass = typed(&prompt(image))?;
                    if flags().verify_passphrase {
                        same_again(&pass)?;
                    }
                    pass
                }
                e => read(e)?,
            };
            kdf_note(image);
            match open(&pass) {
                Err(e) if e.exit_code() == NO_PERMISSION && left > 0 => eprintln!("mdu: {e}"),
                r => return r,
            }
        }
        unreachable!("the last try returns")
    }

    /// The passphrase of a new keyslot of `image`: on a terminal typed
    /// twice unless -q is given without -y, as `cryptsetup luksFormat`.
    pub(super) fn new_passphrase(&self, image: &Path) -> Result<Zeroizing<Vec<u8>>, CliError> {
        let f = flags();
        match self.entry()? {
            Entry::Terminal => {
                let pass = typed(&prompt(image))?;
                if f.verify_passphrase || !f.batch {
                    same_again(&pass)?;
                }
                Ok(pass)
            }
            e => {
                if f.verify_passphrase {
                    cannot_verify();
                }
                read(&e)
            }
        }
    }
}

/// cryptsetup's prompt.
fn prompt(image: &Path) -> String {
    format!("Enter passphrase for {}: ", image.display())
}

fn typed(prompt: &str) -> Result<Zeroizing<Vec<u8>>, CliError> {
    read_hidden(prompt).map_err(|e| CliError::io(Path::new("<terminal>"), "read the passphrase", e))
}

/// -y: the passphrase typed again, and the two compared (exit 2 if they
/// differ, as cryptsetup).
fn same_again(first: &[u8]) -> Result<(), CliError> {
    let again = typed("Verify passphrase: ")?;
    if again[..] != first[..] {
        return Err(status(
            NO_PERMISSION,
            CliError::Usage("the passphrases do not match".into()),
        ));
    }
    Ok(())
}

fn cannot_verify() {
    eprintln!("mdu: warning: -y: a passphrase that is not typed on a terminal cannot be verified");
}

/// A passphrase from a key file or standard input.
fn read(entry: &Entry<'_>) -> Result<Zeroizing<Vec<u8>>, CliError> {
    let (path, r) = match entry {
        Entry::File(p, rules) => (*p, mdu_luks2::read_key_file_with(p, rules)),
        Entry::Stdin(rules) => {
            let stdin = Path::new("<stdin>");
            // A descriptor of its own: std's stdin would keep a copy of the
            // passphrase in its buffer, and read past the newline.
            let mut f = std::io::stdin()
                .as_fd()
                .try_clone_to_owned()
                .map(File::from)
                .map_err(|e| CliError::io(stdin, "read the passphrase", e))?;
            // Standard input is a stream to cryptsetup, even from a file.
            (stdin, mdu_luks2::read_passphrase(&mut f, None, rules))
        }
        Entry::Terminal => unreachable!("a terminal is read by a prompt"),
    };
    r.map_err(|e| match e {
        KeyFileError::Io(e) => CliError::io(path, "read the passphrase", e),
        e => key_file_error(path, e),
    })
}

/// The key derivation takes seconds: said on a terminal or with -v, so
/// that the screen is not blank meanwhile.
fn kdf_note(image: &Path) {
    if flags().verbose || std::io::stderr().is_terminal() {
        eprintln!(
            "mdu: {}: deriving the keys of the keyslots...",
            image.display()
        );
    }
}
