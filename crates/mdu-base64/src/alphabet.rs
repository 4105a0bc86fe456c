//! Alphabets (the 64 symbols) and padding modes.

use core::fmt;

use crate::backend::nibble::NibbleTables;

/// The padding byte of RFC 4648. No alphabet may contain it.
pub const PAD: u8 = b'=';

/// Marker in a decode table for a byte outside the alphabet (high bit set, so
/// one OR over a group of looked-up values detects any invalid byte).
pub(crate) const INVALID: u8 = 0xFF;

const STANDARD_CHARS: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE_CHARS: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const IMAP_CHARS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,";

/// The 64 symbols of a base64 variant, value 0 first, with the reverse table
/// and the lookup tables of the SIMD backends built once at construction (at
/// compile time for a `const` alphabet), so no encode or decode call builds
/// a table.
///
/// Any 64 distinct printable ASCII bytes (`0x20..=0x7e`) other than the pad
/// byte `=` make an alphabet; [`Alphabet::new`] checks this and says which
/// byte broke which rule.
///
/// ```
/// use mdu_base64::{Alphabet, AlphabetError};
///
/// assert_eq!(Alphabet::URL_SAFE.symbols()[62], b'-');
/// // The bcrypt alphabet: a custom ordering.
/// let bcrypt = Alphabet::new(
///     b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
/// )?;
/// assert_eq!(bcrypt.symbols()[0], b'.');
///
/// let mut bad = *Alphabet::STANDARD.symbols();
/// bad[63] = b'A';
/// assert_eq!(
///     Alphabet::new(&bad),
///     Err(AlphabetError::Duplicate { byte: b'A', first: 0, second: 63 })
/// );
/// # Ok::<(), AlphabetError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Alphabet {
    pub(crate) encode: [u8; 64],
    /// Byte -> 6-bit value, or [`INVALID`].
    pub(crate) decode: [u8; 256],
    /// The 16-entry lookup tables of the AVX2 kernels, built here once.
    pub(crate) nibble: NibbleTables,
}

/// Why a byte string is not a valid alphabet.
///
/// ```
/// use mdu_base64::{Alphabet, AlphabetError};
///
/// let mut chars = *Alphabet::STANDARD.symbols();
/// chars[10] = b'=';
/// let err = Alphabet::new(&chars).unwrap_err();
/// assert_eq!(err, AlphabetError::PadByte { index: 10 });
/// assert!(err.to_string().contains("pad byte"));
/// ```
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlphabetError {
    /// A symbol is not printable ASCII (`0x20..=0x7e`).
    NotPrintable {
        /// Position of the symbol in the alphabet (its 6-bit value).
        index: usize,
        /// The offending byte.
        byte: u8,
    },
    /// A symbol is the pad byte `=`, which would make padding ambiguous.
    PadByte {
        /// Position of the symbol in the alphabet.
        index: usize,
    },
    /// Two positions hold the same symbol, so decoding would be ambiguous.
    Duplicate {
        /// The repeated byte.
        byte: u8,
        /// Its first position.
        first: usize,
        /// Its second position.
        second: usize,
    },
}

impl fmt::Display for AlphabetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AlphabetError::NotPrintable { index, byte } => write!(
                f,
                "alphabet symbol {index} is byte {byte:#04x}: symbols must be printable ASCII (0x20..=0x7e)"
            ),
            AlphabetError::PadByte { index } => write!(
                f,
                "alphabet symbol {index} is the pad byte '=': the pad byte cannot be a symbol"
            ),
            AlphabetError::Duplicate {
                byte,
                first,
                second,
            } => write!(
                f,
                "alphabet symbols {first} and {second} are both {:?}: the 64 symbols must be distinct",
                byte as char
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for AlphabetError {}

impl Alphabet {
    /// RFC 4648 section 4, `A-Z a-z 0-9 + /`.
    ///
    /// ```
    /// assert_eq!(mdu_base64::Alphabet::STANDARD.symbols()[63], b'/');
    /// ```
    pub const STANDARD: Alphabet = Alphabet::unwrap_const(STANDARD_CHARS);

    /// RFC 4648 section 5 base64url, `A-Z a-z 0-9 - _` (fscrypt's alphabet).
    ///
    /// ```
    /// assert_eq!(mdu_base64::Alphabet::URL_SAFE.symbols()[63], b'_');
    /// ```
    pub const URL_SAFE: Alphabet = Alphabet::unwrap_const(URL_SAFE_CHARS);

    /// RFC 3501 modified base64 for IMAP mailbox names, `A-Z a-z 0-9 + ,`
    /// (the kernel's `BASE64_IMAP`, used by Ceph).
    ///
    /// ```
    /// assert_eq!(mdu_base64::Alphabet::IMAP.symbols()[63], b',');
    /// ```
    pub const IMAP: Alphabet = Alphabet::unwrap_const(IMAP_CHARS);

    const fn unwrap_const(chars: &[u8; 64]) -> Alphabet {
        match Alphabet::new(chars) {
            Ok(a) => a,
            Err(_) => panic!("built-in alphabet is invalid"),
        }
    }

    /// Checks `chars` (symbol for value 0 first) and builds the alphabet.
    ///
    /// Errors name the first offending position: a byte outside printable
    /// ASCII, the pad byte `=`, or a repeated byte.
    ///
    /// ```
    /// use mdu_base64::Alphabet;
    ///
    /// const CRYPT: Alphabet = match Alphabet::new(
    ///     b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    /// ) {
    ///     Ok(a) => a,
    ///     Err(_) => panic!("bad alphabet"),
    /// };
    /// assert_eq!(CRYPT.symbols()[2], b'0');
    /// ```
    pub const fn new(chars: &[u8; 64]) -> Result<Alphabet, AlphabetError> {
        let mut decode = [INVALID; 256];
        let mut i = 0;
        while i < 64 {
            let byte = chars[i];
            if byte < 0x20 || byte > 0x7e {
                return Err(AlphabetError::NotPrintable { index: i, byte });
            }
            if byte == PAD {
                return Err(AlphabetError::PadByte { index: i });
            }
            if decode[byte as usize] != INVALID {
                return Err(AlphabetError::Duplicate {
                    byte,
                    first: decode[byte as usize] as usize,
                    second: i,
                });
            }
            decode[byte as usize] = i as u8;
            i += 1;
        }
        Ok(Alphabet {
            encode: *chars,
            decode,
            nibble: NibbleTables::new(chars, &decode),
        })
    }

    /// The 64 symbols, value 0 first.
    ///
    /// ```
    /// assert_eq!(&mdu_base64::Alphabet::IMAP.symbols()[..4], b"ABCD");
    /// ```
    pub const fn symbols(&self) -> &[u8; 64] {
        &self.encode
    }

    /// The 6-bit value of `byte`, or `None` if it is not a symbol.
    ///
    /// ```
    /// use mdu_base64::Alphabet;
    /// assert_eq!(Alphabet::URL_SAFE.value_of(b'_'), Some(63));
    /// assert_eq!(Alphabet::URL_SAFE.value_of(b'/'), None);
    /// ```
    pub const fn value_of(&self, byte: u8) -> Option<u8> {
        match self.decode[byte as usize] {
            INVALID => None,
            v => Some(v),
        }
    }
}

impl fmt::Debug for Alphabet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The symbols are printable ASCII by construction.
        let s = core::str::from_utf8(&self.encode).unwrap_or("<invalid>");
        f.debug_tuple("Alphabet").field(&s).finish()
    }
}

/// What an engine does with the `=` padding of RFC 4648.
///
/// ```
/// use mdu_base64::{Alphabet, Engine, Padding};
///
/// let lax = Engine::new(&Alphabet::STANDARD, Padding::Optional);
/// assert_eq!(lax.encode_to_string(b"f"), "Zg");
/// assert_eq!(lax.decode_to_vec(b"Zg==").unwrap(), b"f");
/// assert_eq!(lax.decode_to_vec(b"Zg").unwrap(), b"f");
/// assert!(lax.decode_to_vec(b"Zg=").is_err()); // present, so must be exact
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Padding {
    /// Encode pads to a multiple of 4; decode requires exactly the canonical
    /// padding (the input length is a multiple of 4).
    Required,
    /// Encode emits no padding; decode rejects any `=` (fscrypt, RFC 4648
    /// section 3.2 "padding not required").
    None,
    /// Encode emits no padding; decode accepts input with no padding or with
    /// exactly the canonical padding, nothing in between.
    Optional,
}
