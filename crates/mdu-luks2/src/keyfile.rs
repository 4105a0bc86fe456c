//! A passphrase read from a key file, as cryptsetup's `--key-file` reads
//! it: the whole file, at most 8 MiB, never empty; and a volume key read
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
/// assert_eq!(
///     KeyFileError::Empty.to_string(),
///     "the key file is empty: the passphrase must not be empty"
/// );
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
    /// No bytes at all.
    Empty,
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
            KeyFileError::KeyLength { len, expected } => (*len).min(*expected) as u64,
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
            KeyFileError::Empty => {
                f.write_str("the key file is empty: the passphrase must not be empty")
            }
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

/// The passphrase in the key file `path`: its whole contents, in a buffer
/// wiped when dropped (allocated once at its final capacity, so no copy is
/// left behind). A pipe, a device or a file whose size is given as 0
/// (procfs, sysfs) is read to its end, up to [`MAX_KEY_FILE`] bytes.
///
/// # Errors
///
/// [`KeyFileError`]: the file cannot be read, grew while it was read, is
/// longer than [`MAX_KEY_FILE`] or is empty.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("mdu-keyfile-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("key"), b"secret\n")?;
/// assert_eq!(&mdu_luks2::read_key_file(&dir.join("key"))?[..], b"secret\n");
/// std::fs::write(dir.join("empty"), b"")?;
/// assert!(matches!(mdu_luks2::read_key_file(&dir.join("empty")), Err(mdu_luks2::KeyFileError::Empty)));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_key_file(path: &Path) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    let mut f = File::open(path).map_err(KeyFileError::Io)?;
    // A regular file's size bounds the buffer (so that wiping it does not
    // touch 8 MiB for a 32-byte key); one byte more tells a file that grew.
    let cap = match f.metadata() {
        Ok(m) if m.is_file() && m.len() > 0 => (m.len() as usize).min(MAX_KEY_FILE) + 1,
        _ => MAX_KEY_FILE + 1,
    };
    let mut buf = Zeroizing::new(vec![0u8; cap]);
    // In pieces of 64 KiB: procfs and sysfs files allocate a kernel buffer
    // as large as the request and refuse 8 MiB (ENOMEM).
    let mut n = 0;
    while n < cap {
        let end = cap.min(n + (64 << 10));
        match f.read(&mut buf[n..end]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(KeyFileError::Io(e)),
        }
    }
    if n == cap && cap <= MAX_KEY_FILE {
        return Err(KeyFileError::Grew { at: n as u64 });
    }
    if n > MAX_KEY_FILE {
        return Err(KeyFileError::TooLarge);
    }
    if n == 0 {
        return Err(KeyFileError::Empty);
    }
    buf.truncate(n);
    Ok(buf)
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

    #[test]
    fn a_stream_is_read_to_its_end() {
        // /dev/null: not a regular file, read to its end: empty.
        assert!(matches!(
            read_key_file(Path::new("/dev/null")),
            Err(KeyFileError::Empty)
        ));
    }
}
