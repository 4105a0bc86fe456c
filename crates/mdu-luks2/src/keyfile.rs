//! Passphrases read as cryptsetup reads them (its man page, "NOTES ON
//! PASSPHRASE PROCESSING" for LUKS; `crypt_keyfile_device_read`): a key
//! file whole, newlines included, up to 8 MiB; a passphrase on standard
//! input that is not a key file up to its first newline, which is not
//! part of it; `--keyfile-offset` bytes skipped first and, with
//! `--keyfile-size`, exactly that many bytes read. And a volume key read
//! from a file of exactly its length (`--volume-key-file`).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use zeroize::Zeroizing;

/// The longest passphrase a key file holds (cryptsetup's limit).
///
/// ```
/// assert_eq!(mdu_luks2::MAX_KEY_FILE, 8 << 20);
/// ```
pub const MAX_KEY_FILE: usize = 8 << 20;

/// Why a key file gave no passphrase.
///
/// ```
/// use mdu_luks2::KeyFileError;
/// assert_eq!(KeyFileError::Empty.offset(), 0);
/// assert_eq!(KeyFileError::Empty.to_string(), "nothing to read on input");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum KeyFileError {
    /// Opening or reading it failed.
    Io(io::Error),
    /// A regular file held more bytes than its size said when it was
    /// opened: `at` bytes were read.
    Grew {
        /// Bytes read when it was found longer.
        at: u64,
    },
    /// More than [`MAX_KEY_FILE`] bytes.
    TooLarge,
    /// A pipe, a device or standard input that gave no byte at all (and no
    /// newline): cryptsetup's "nothing to read on input". An empty
    /// regular file is an empty passphrase, as in cryptsetup.
    Empty,
    /// `--keyfile-offset` lies beyond the end of the key file.
    Offset {
        /// The offset asked for.
        offset: u64,
    },
    /// `--keyfile-size` bytes were asked for and fewer were there (or a
    /// newline ended a passphrase on standard input before them).
    Short {
        /// Bytes read.
        len: usize,
        /// Bytes asked for.
        expected: usize,
    },
    /// A volume key file that does not hold exactly the key's length.
    KeyLength {
        /// Bytes read (at most one more than expected).
        len: usize,
        /// The key's length.
        expected: usize,
    },
}

impl KeyFileError {
    /// The byte of the key file the error is about (0 for an I/O error).
    ///
    /// ```
    /// use mdu_luks2::{KeyFileError, MAX_KEY_FILE};
    /// assert_eq!(KeyFileError::TooLarge.offset(), MAX_KEY_FILE as u64);
    /// ```
    pub fn offset(&self) -> u64 {
        match self {
            KeyFileError::Grew { at } => *at,
            KeyFileError::TooLarge => MAX_KEY_FILE as u64,
            KeyFileError::KeyLength { len, expected } | KeyFileError::Short { len, expected } => {
                (*len).min(*expected) as u64
            }
            KeyFileError::Offset { offset } => *offset,
            KeyFileError::Io(_) | KeyFileError::Empty => 0,
        }
    }
}

impl std::fmt::Display for KeyFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyFileError::Io(e) => write!(f, "cannot read the key file: {e}"),
            KeyFileError::Grew { .. } => f.write_str("the key file grew while it was read"),
            KeyFileError::TooLarge => f.write_str("a key file holds at most 8 MiB"),
            KeyFileError::Empty => f.write_str("nothing to read on input"),
            KeyFileError::Offset { offset } => write!(
                f,
                "--keyfile-offset {offset} lies beyond the end of the key file"
            ),
            KeyFileError::Short { len, expected } => write!(
                f,
                "--keyfile-size {expected}: only {len} bytes of passphrase could be read"
            ),
            KeyFileError::KeyLength { expected, .. } => {
                write!(f, "the volume key file must hold exactly {expected} bytes")
            }
        }
    }
}

impl std::error::Error for KeyFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            KeyFileError::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// How a passphrase is read from a key file or standard input: the
/// options of cryptsetup that shape it. The same rules serve the new
/// passphrase of a keyslot verb (`--new-keyfile-offset`,
/// `--new-keyfile-size`).
///
/// ```
/// use mdu_luks2::KeyFileRules;
/// // `--key-file F`: the whole file.
/// assert_eq!(KeyFileRules::default(), KeyFileRules { offset: 0, size: None, stop_at_newline: false });
/// // A passphrase piped in without --key-file: up to the first newline.
/// assert!(KeyFileRules::stdin_line(0, None).stop_at_newline);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyFileRules {
    /// Bytes skipped first (`--keyfile-offset`).
    pub offset: u64,
    /// Exactly this many bytes are read (`--keyfile-size`, `-l`); `None`:
    /// up to the end, at most [`MAX_KEY_FILE`] bytes.
    pub size: Option<usize>,
    /// Reading stops at the first newline, which is not part of the
    /// passphrase: standard input that is not a key file.
    pub stop_at_newline: bool,
}

impl KeyFileRules {
    /// The rules of a passphrase piped to standard input without
    /// `--key-file` (`--key-file -` reads standard input as a key file:
    /// [`KeyFileRules::default`] with the offset and size).
    ///
    /// ```
    /// let r = mdu_luks2::KeyFileRules::stdin_line(2, Some(8));
    /// assert_eq!((r.offset, r.size, r.stop_at_newline), (2, Some(8), true));
    /// ```
    pub fn stdin_line(offset: u64, size: Option<usize>) -> KeyFileRules {
        KeyFileRules {
            offset,
            size,
            stop_at_newline: true,
        }
    }
}

/// The passphrase in the key file `path`: its whole contents, in a buffer
/// wiped when dropped (allocated once at its final capacity, so no copy is
/// left behind). A pipe, a device or a file whose size is given as 0
/// (procfs, sysfs) is read to its end, up to [`MAX_KEY_FILE`] bytes. An
/// empty regular file is an empty passphrase, as in cryptsetup.
///
/// # Errors
///
/// [`KeyFileError`]: the file cannot be read, grew while it was read, is
/// longer than [`MAX_KEY_FILE`], or is a stream that gave nothing.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("mdu-keyfile-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("key"), b"secret\n")?;
/// assert_eq!(&mdu_luks2::read_key_file(&dir.join("key"))?[..], b"secret\n");
/// std::fs::write(dir.join("empty"), b"")?;
/// assert!(mdu_luks2::read_key_file(&dir.join("empty"))?.is_empty());
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_key_file(path: &Path) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    read_key_file_with(path, &KeyFileRules::default())
}

/// The passphrase in the key file `path`, read by `rules` (the offset and
/// size; a key file never stops at a newline unless `rules` say so).
///
/// # Errors
///
/// As [`read_passphrase`], and [`KeyFileError::Io`] if it cannot be opened.
///
/// ```
/// use mdu_luks2::{read_key_file_with, KeyFileRules};
/// let dir = std::env::temp_dir().join(format!("mdu-keyfile-with-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("key"), b"xxsecretyy")?;
/// let rules = KeyFileRules { offset: 2, size: Some(6), ..KeyFileRules::default() };
/// assert_eq!(&read_key_file_with(&dir.join("key"), &rules)?[..], b"secret");
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_key_file_with(
    path: &Path,
    rules: &KeyFileRules,
) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    let mut f = File::open(path).map_err(KeyFileError::Io)?;
    let regular_len = match f.metadata() {
        Ok(m) if m.is_file() => Some(m.len()),
        _ => None,
    };
    read_passphrase(&mut f, regular_len, rules)
}

/// A passphrase read from `r` by `rules`, as cryptsetup reads a key file
/// or standard input: `regular_len` is the length of a regular file (a
/// stream has none; procfs and sysfs files say 0 and are read to their
/// end). A regular file whose offset is its end, or a newline
/// first on standard input, gives an empty passphrase; a stream that ends
/// before its first byte gives [`KeyFileError::Empty`].
///
/// # Errors
///
/// [`KeyFileError`]: a read fails, the offset lies beyond the end, fewer
/// than `rules.size` bytes come, more than [`MAX_KEY_FILE`] come without
/// a size, or a regular file grew while it was read.
///
/// ```
/// use mdu_luks2::{read_passphrase, KeyFileError, KeyFileRules};
/// // Standard input that is not a key file: the first line, without its newline.
/// let line = KeyFileRules::stdin_line(0, None);
/// assert_eq!(&read_passphrase(&mut &b"pw\nrest"[..], None, &line)?[..], b"pw");
/// // A key file: every byte, newlines too.
/// assert_eq!(&read_passphrase(&mut &b"pw\n"[..], None, &KeyFileRules::default())?[..], b"pw\n");
/// // A pipe that gives nothing.
/// assert!(matches!(read_passphrase(&mut &b""[..], None, &line), Err(KeyFileError::Empty)));
/// # Ok::<(), KeyFileError>(())
/// ```
pub fn read_passphrase(
    r: &mut impl Read,
    regular_len: Option<u64>,
    rules: &KeyFileRules,
) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    // Without --keyfile-size, one byte more than the limit tells a file
    // that is too long.
    let limit = rules.size.unwrap_or(MAX_KEY_FILE + 1);
    if let Some(len) = regular_len
        && rules.offset > len
    {
        return Err(KeyFileError::Offset {
            offset: rules.offset,
        });
    }
    skip(r, rules.offset)?;
    // A regular file's size bounds the buffer (so that wiping it does not
    // touch 8 MiB for a 32-byte key); one byte more tells a file that grew.
    let cap = match regular_len.filter(|&len| len > 0) {
        Some(len) => limit.min(
            (len - rules.offset)
                .saturating_add(1)
                .try_into()
                .unwrap_or(limit),
        ),
        None => limit,
    };
    let mut buf = Zeroizing::new(vec![0u8; cap]);
    let mut n = 0;
    let mut newline = false;
    while n < cap {
        // Up to a newline: one byte at a time, so that nothing after it is
        // consumed. Otherwise in pieces of 64 KiB: procfs and sysfs files
        // allocate a kernel buffer as large as the request and refuse
        // 8 MiB (ENOMEM).
        let end = if rules.stop_at_newline {
            n + 1
        } else {
            cap.min(n + (64 << 10))
        };
        match r.read(&mut buf[n..end]) {
            Ok(0) => break,
            Ok(k) => {
                if rules.stop_at_newline && buf[n] == b'\n' {
                    buf[n] = 0;
                    newline = true;
                    break;
                }
                n += k;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(KeyFileError::Io(e)),
        }
    }
    if n == 0 && regular_len.is_none() && !newline {
        return Err(KeyFileError::Empty);
    }
    match rules.size {
        None if n > MAX_KEY_FILE => return Err(KeyFileError::TooLarge),
        Some(size) if n != size => {
            return Err(KeyFileError::Short {
                len: n,
                expected: size,
            });
        }
        _ => {}
    }
    if let Some(len) = regular_len.filter(|&len| len > 0)
        && n == cap
        && (n as u64) > len - rules.offset
    {
        return Err(KeyFileError::Grew {
            at: rules.offset + n as u64,
        });
    }
    buf.truncate(n);
    Ok(buf)
}

/// Reads and drops the first `offset` bytes of `r` (a pipe cannot seek).
fn skip(r: &mut impl Read, offset: u64) -> Result<(), KeyFileError> {
    let mut scratch = Zeroizing::new([0u8; 4096]);
    let mut left = offset;
    while left > 0 {
        let want = left.min(scratch.len() as u64) as usize;
        match r.read(&mut scratch[..want]) {
            Ok(0) => return Err(KeyFileError::Offset { offset }),
            Ok(k) => left -= k as u64,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(KeyFileError::Io(e)),
        }
    }
    Ok(())
}

/// The volume key in the file `path`, which must hold exactly `len`
/// bytes, in a buffer wiped when dropped.
///
/// # Errors
///
/// [`KeyFileError::Io`] if it cannot be read, [`KeyFileError::KeyLength`]
/// if it is shorter or longer.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("mdu-vkfile-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("vk"), [7u8; 64])?;
/// assert_eq!(mdu_luks2::read_volume_key_file(&dir.join("vk"), 64)?.len(), 64);
/// let e = mdu_luks2::read_volume_key_file(&dir.join("vk"), 32).unwrap_err();
/// assert_eq!((e.offset(), e.to_string().as_str()), (32, "the volume key file must hold exactly 32 bytes"));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_volume_key_file(path: &Path, len: usize) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    let mut f = File::open(path).map_err(KeyFileError::Io)?;
    // One byte more tells a longer file.
    let mut buf = Zeroizing::new(vec![0u8; len + 1]);
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(KeyFileError::Io(e)),
        }
    }
    if n != len {
        return Err(KeyFileError::KeyLength {
            len: n,
            expected: len,
        });
    }
    buf.truncate(len);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_file_up_to_the_limit_and_not_a_byte_more() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        std::fs::write(&path, vec![7u8; MAX_KEY_FILE]).unwrap();
        assert_eq!(read_key_file(&path).unwrap().len(), MAX_KEY_FILE);
        std::fs::write(&path, vec![7u8; MAX_KEY_FILE + 1]).unwrap();
        assert!(matches!(read_key_file(&path), Err(KeyFileError::TooLarge)));
        assert!(matches!(
            read_key_file(&dir.path().join("none")),
            Err(KeyFileError::Io(_))
        ));
    }

    #[test]
    fn a_volume_key_file_holds_the_key_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vk");
        for (have, offset) in [(0, 0), (31, 31), (33, 32)] {
            std::fs::write(&path, vec![1u8; have]).unwrap();
            let e = read_volume_key_file(&path, 32).unwrap_err();
            assert!(matches!(e, KeyFileError::KeyLength { expected: 32, .. }));
            assert_eq!(e.offset(), offset);
        }
        std::fs::write(&path, [5u8; 32]).unwrap();
        assert_eq!(&read_volume_key_file(&path, 32).unwrap()[..], &[5u8; 32]);
    }

    /// Each row: input, regular file or stream, rules, the passphrase or
    /// the error; checked against cryptsetup 2.6 on an image (the CLI
    /// tests run both tools on the same inputs).
    #[test]
    fn cryptsetups_reading_rules() {
        let line = |offset, size| KeyFileRules::stdin_line(offset, size);
        let file = |offset, size| KeyFileRules {
            offset,
            size,
            stop_at_newline: false,
        };
        let ok: &[(&[u8], bool, KeyFileRules, &[u8])] = &[
            (b"pw\n", false, line(0, None), b"pw"),
            (b"pw", false, line(0, None), b"pw"),
            (b"pw\nxx", false, line(0, None), b"pw"),
            (b"pw\r\n", false, line(0, None), b"pw\r"),
            (b"\n", false, line(0, None), b""),
            (b"pwxx\n", false, line(0, Some(2)), b"pw"),
            (b"xxpw\n", false, line(2, None), b"pw"),
            (b"pw\n", false, file(0, None), b"pw\n"),
            (b"xxpw", false, file(2, None), b"pw"),
            (b"pwxx", false, file(0, Some(2)), b"pw"),
            (b"", true, file(0, None), b""),
            (b"xxpw", true, file(4, None), b""),
            (b"xxpwyy", true, file(2, Some(2)), b"pw"),
        ];
        for (input, regular, rules, want) in ok {
            let len = regular.then_some(input.len() as u64);
            let got = read_passphrase(&mut &input[..], len, rules);
            assert_eq!(
                got.as_deref().map(|p| &p[..]).ok(),
                Some(*want),
                "{input:?} {rules:?}"
            );
        }
        let refused: &[(&[u8], bool, KeyFileRules)] = &[
            (b"", false, line(0, None)),
            (b"", false, file(0, None)),
            (b"pw\n", false, line(0, Some(5))),
            (b"pw", false, file(0, Some(3))),
            (b"xxpw", true, file(5, None)),
            (b"xx", false, file(3, None)),
        ];
        for (input, regular, rules) in refused {
            let len = regular.then_some(input.len() as u64);
            assert!(
                read_passphrase(&mut &input[..], len, rules).is_err(),
                "{input:?} {rules:?}"
            );
        }
    }

    #[test]
    fn a_stream_is_read_to_its_end() {
        // /dev/null: not a regular file, read to its end: nothing.
        assert!(matches!(
            read_key_file(Path::new("/dev/null")),
            Err(KeyFileError::Empty)
        ));
    }
}
