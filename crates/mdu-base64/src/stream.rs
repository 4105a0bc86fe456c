//! Base64 between a reader and a writer, a block at a time, in bounded
//! memory (`std` only).
//!
//! Encoding reads blocks whose length is a multiple of 3 bytes, so only the
//! last one may need padding. Decoding reads blocks of text, drops the line
//! breaks and decodes the symbols in groups of 4; it holds back the last 1
//! to 4 symbols until it knows whether more follow, so that only the final
//! group of the whole input is decoded with the padding rules (and may be
//! short), and a `=` anywhere before it is an invalid byte. Errors name the
//! offset in the whole input, line breaks included.

use std::io::{ErrorKind, Read, Write};
use std::vec;
use std::vec::Vec;

use crate::{Alphabet, DecodeError, EncodeError, Engine, Padding};

/// Why a stream was not encoded or decoded.
///
/// ```
/// use mdu_base64::stream::{Decoder, StreamError};
/// // Padding required: a length error blames the end of the input.
/// let err = Decoder::new(&mdu_base64::STANDARD).decode(&b"YQ"[..], Vec::new()).unwrap_err();
/// assert!(matches!(err, StreamError::Decode { offset: 2, .. }));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamError {
    /// Reading the input failed.
    Read(std::io::Error),
    /// Writing the output failed.
    Write(std::io::Error),
    /// The input is not base64 of the engine: the error, and the byte
    /// offset in the whole input that it blames.
    Decode {
        /// Byte offset in the input, line breaks counted.
        offset: u64,
        /// What is wrong there (its indexes count symbols of the whole
        /// input).
        error: DecodeError,
    },
    /// The engine refused to encode a block.
    Encode(EncodeError),
}

impl core::fmt::Display for StreamError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            StreamError::Read(e) => write!(f, "cannot read: {e}"),
            StreamError::Write(e) => write!(f, "cannot write: {e}"),
            StreamError::Decode { offset, error } => {
                write!(f, "at byte offset {offset}: {error}")
            }
            StreamError::Encode(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for StreamError {}

/// Input bytes encoded per block: a multiple of 3 (no padding inside the
/// stream), 768 KiB in and 1 MiB out, large enough that the per-block cost
/// vanishes and small enough to stay in cache. Under Miri, 768 bytes: the
/// tests cross the same block boundaries in an interpreter's time.
const ENCODE_BLOCK: usize = if cfg!(miri) { 3 << 8 } else { 3 << 18 };

/// Input bytes (text and line breaks) read per decode block (1 KiB under
/// Miri, as for [`ENCODE_BLOCK`]).
const DECODE_BLOCK: usize = if cfg!(miri) { 1 << 10 } else { 1 << 20 };

/// Symbols decode holds back at the end of a block: the final group of the
/// input may be short or padded, so a group is decoded as a whole,
/// unpadded one only once a symbol after it has been seen.
const HELD: usize = 4;

/// Reads until `buf` is full or the input ends; returns the bytes read.
/// Filling whole blocks (a pipe gives at most 64 KiB a read) keeps the
/// blocks, and so the cost per block, the same whatever the input is.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> Result<usize, StreamError> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(StreamError::Read(e)),
        }
    }
    Ok(n)
}

fn write(output: &mut impl Write, bytes: &[u8]) -> Result<(), StreamError> {
    output.write_all(bytes).map_err(StreamError::Write)
}

fn flush(output: &mut impl Write) -> Result<(), StreamError> {
    output.flush().map_err(StreamError::Write)
}

/// Encodes `input` to `output` block by block as one line, then a
/// newline, and flushes `output`: memory stays at a few MiB whatever the
/// input's size, and only the last block is padded.
///
/// # Errors
///
/// [`StreamError::Read`] and [`StreamError::Write`] for I/O.
///
/// ```
/// let mut out = Vec::new();
/// mdu_base64::stream::encode(&mdu_base64::STANDARD, &b"hello"[..], &mut out)?;
/// assert_eq!(out, b"aGVsbG8=\n");
/// # Ok::<(), mdu_base64::stream::StreamError>(())
/// ```
pub fn encode(
    engine: &Engine,
    mut input: impl Read,
    mut output: impl Write,
) -> Result<(), StreamError> {
    let (input, output) = (&mut input, &mut output);
    let mut block = vec![0u8; ENCODE_BLOCK];
    // Room for the encoding of a whole block and the final newline.
    let mut text = vec![0u8; ENCODE_BLOCK / 3 * 4 + 1];
    loop {
        let n = fill(input, &mut block)?;
        // Every block but the last is a multiple of 3 bytes: no padding.
        let len = engine
            .encode_slice(&block[..n], &mut text)
            .map_err(StreamError::Encode)?;
        if n < block.len() {
            let Some(end) = text.get_mut(len) else {
                // Unreachable: `text` has room for the newline.
                return Err(StreamError::Encode(EncodeError::OutputTooSmall {
                    needed: len + 1,
                    got: text.len(),
                }));
            };
            *end = b'\n';
            write(output, &text[..=len])?;
            return flush(output);
        }
        write(output, &text[..len])?;
    }
}

/// A decoder of base64 text of any length, read a block at a time: line
/// breaks (`\n`, `\r`) are dropped, every group of 4 symbols but the
/// final one of the whole input is decoded without padding (a `=` there
/// is an invalid byte), and the final group with the engine's padding
/// rules. An error names the byte offset in the whole input, line breaks
/// counted, and comes after the bytes of every group before the one in
/// error have been written. A byte outside the alphabet is reported
/// before a length or padding error.
///
/// ```
/// use mdu_base64::stream::{Decoder, StreamError};
///
/// let mut out = Vec::new();
/// Decoder::new(&mdu_base64::STANDARD).decode(&b"aGVs\nbG8=\n"[..], &mut out)?;
/// assert_eq!(out, b"hello");
///
/// let mut out = Vec::new();
/// let err = Decoder::new(&mdu_base64::STANDARD).decode(&b"aGVs\nbG*=\n"[..], &mut out);
/// assert!(matches!(err, Err(StreamError::Decode { offset: 7, .. })));
/// assert_eq!(out, b"hel");
/// # Ok::<(), StreamError>(())
/// ```
pub struct Decoder {
    /// The caller's engine: decodes the final group of the input.
    last: Engine,
    /// Same alphabet, no padding: decodes whole groups before the final one,
    /// where a `=` is never valid.
    body: Engine,
    /// One block of input as read.
    block: Vec<u8>,
    /// The held-back symbols of earlier blocks (`held` of them), then the
    /// symbols of `block`.
    text: Vec<u8>,
    out: Vec<u8>,
    /// Input offsets of the held-back symbols.
    held_at: [u64; HELD],
    held: usize,
    /// Input offset of `block[0]`.
    block_at: u64,
    /// Symbols of the input before `text[0]`.
    symbols_before: u64,
}

impl Decoder {
    /// A decoder with the alphabet and the padding rule of `engine`.
    ///
    /// ```
    /// let _ = mdu_base64::stream::Decoder::new(&mdu_base64::URL_SAFE_NO_PAD);
    /// ```
    pub fn new(engine: &Engine) -> Decoder {
        Decoder {
            last: *engine,
            body: Engine::new(engine.alphabet(), Padding::None),
            block: vec![0u8; DECODE_BLOCK],
            text: vec![0u8; DECODE_BLOCK + HELD],
            out: vec![0u8; (DECODE_BLOCK + HELD) / 4 * 3],
            held_at: [0; HELD],
            held: 0,
            block_at: 0,
            symbols_before: 0,
        }
    }

    /// Decodes `input` to `output` to its end, and flushes `output`.
    ///
    /// # Errors
    ///
    /// [`StreamError::Read`] and [`StreamError::Write`] for I/O;
    /// [`StreamError::Decode`] for text that is not base64 of this engine,
    /// with the byte offset in the input.
    ///
    /// ```
    /// use mdu_base64::stream::Decoder;
    /// let mut out = Vec::new();
    /// Decoder::new(&mdu_base64::URL_SAFE_NO_PAD).decode(&b"_-8"[..], &mut out)?;
    /// assert_eq!(out, [0xff, 0xef]);
    /// # Ok::<(), mdu_base64::stream::StreamError>(())
    /// ```
    pub fn decode(
        mut self,
        mut input: impl Read,
        mut output: impl Write,
    ) -> Result<(), StreamError> {
        let (input, output) = (&mut input, &mut output);
        loop {
            let n = fill(input, &mut self.block)?;
            if n == 0 {
                break;
            }
            let len = self.held + strip_line_breaks(&self.block[..n], &mut self.text[self.held..]);
            // Decode every whole group but the last 1 to 4 symbols.
            let cut = len.saturating_sub(1) / 4 * 4;
            if cut > 0 {
                self.decode_body(cut, n, output)?;
            }
            self.hold(cut, len, n);
            self.block_at += n as u64;
            if n < self.block.len() {
                break;
            }
        }
        if self.held > 0 {
            self.decode_last(output)?;
        }
        flush(output)
    }

    /// Decodes `text[..cut]` (whole groups followed by more symbols) and
    /// writes the bytes, or fails at its first invalid byte after writing
    /// the groups before it.
    fn decode_body(
        &mut self,
        cut: usize,
        n: usize,
        output: &mut impl Write,
    ) -> Result<(), StreamError> {
        let text = &self.text[..cut];
        let at = match self.body.decode_slice(text, &mut self.out) {
            Ok(len) => return write(output, &self.out[..len]),
            Err(DecodeError::InvalidByte { index, .. }) => index,
            // A trailing `=` run here (the only other error, as `cut` is a
            // multiple of 4) is no padding: the first byte that is not a
            // symbol, `=` included, is the one to blame.
            Err(e) => first_non_symbol(self.body.alphabet(), text).unwrap_or(match e {
                DecodeError::InvalidPadding { index } => index,
                _ => 0,
            }),
        };
        self.fail_at(at, n, output)
    }

    /// Moves the symbols `text[cut..len]` (1 to 4, or none) to the front of
    /// `text`, with their input offsets.
    fn hold(&mut self, cut: usize, len: usize, n: usize) {
        // Offsets from the end backwards: the last symbols of `text` are the
        // last non-line-break bytes of the block (held symbols stay where
        // they are when `cut` is 0).
        let mut at = [0u64; HELD];
        let mut pos = n;
        for i in (cut..len).rev() {
            let Some(slot) = at.get_mut(i - cut) else {
                continue;
            };
            *slot = if i < self.held {
                self.held_at.get(i).copied().unwrap_or_default()
            } else {
                pos = self.block[..pos]
                    .iter()
                    .rposition(|&b| !is_line_break(b))
                    .unwrap_or_default();
                self.block_at + pos as u64
            };
        }
        self.held_at = at;
        self.text.copy_within(cut..len, 0);
        self.held = len - cut;
        self.symbols_before += cut as u64;
    }

    /// Decodes the held-back final group of the input with the padding rules.
    fn decode_last(&mut self, output: &mut impl Write) -> Result<(), StreamError> {
        let text = &self.text[..self.held];
        let e = match self.last.decode_slice(text, &mut self.out) {
            Ok(len) => return write(output, &self.out[..len]),
            Err(e) => e,
        };
        // An invalid byte is reported before a length or padding error: the
        // first byte that is neither a symbol nor part of the trailing `=`.
        let pads = text.iter().rev().take_while(|&&b| b == b'=').count();
        if let Some(at) = first_non_symbol(self.body.alphabet(), &text[..text.len() - pads]) {
            return self.fail_at(at, 0, output);
        }
        let total = self.symbols_before + self.held as u64;
        let global = |index: usize| index_of(self.symbols_before + index as u64);
        let (e, offset) = match e {
            DecodeError::InvalidByte { index, byte } => (
                DecodeError::InvalidByte {
                    index: global(index),
                    byte,
                },
                self.symbol_offset(index, 0),
            ),
            DecodeError::InvalidPadding { index } => (
                DecodeError::InvalidPadding {
                    index: global(index),
                },
                self.symbol_offset(index, 0),
            ),
            DecodeError::NonCanonical { index } => (
                DecodeError::NonCanonical {
                    index: global(index),
                },
                self.symbol_offset(index, 0),
            ),
            // The length of the whole input is at fault: blame its end.
            DecodeError::InvalidLength { .. } => (
                DecodeError::InvalidLength {
                    len: index_of(total),
                },
                self.block_at,
            ),
            e => (e, self.block_at),
        };
        flush(output)?;
        Err(StreamError::Decode { offset, error: e })
    }

    /// Fails on the symbol `text[at]` (not a symbol of the alphabet, or a
    /// `=` that is no valid padding), after writing the decoding of the
    /// whole groups before it. `n`: bytes of the current block.
    fn fail_at(&mut self, at: usize, n: usize, output: &mut impl Write) -> Result<(), StreamError> {
        let whole = at / 4 * 4;
        // No invalid byte before `at`: the groups before it decode.
        if let Ok(len) = self.body.decode_slice(&self.text[..whole], &mut self.out) {
            write(output, &self.out[..len])?;
        }
        flush(output)?;
        let e = DecodeError::InvalidByte {
            index: index_of(self.symbols_before + at as u64),
            byte: self.text.get(at).copied().unwrap_or_default(),
        };
        Err(StreamError::Decode {
            offset: self.symbol_offset(at, n),
            error: e,
        })
    }

    /// Input offset of `text[i]`: a held-back symbol's saved offset, or the
    /// position of the symbol in the block (`n` bytes; a scan, on the error
    /// path only).
    fn symbol_offset(&self, i: usize, n: usize) -> u64 {
        if i < self.held {
            return self.held_at.get(i).copied().unwrap_or(self.block_at);
        }
        self.block[..n]
            .iter()
            .enumerate()
            .filter(|&(_, &b)| !is_line_break(b))
            .nth(i - self.held)
            .map_or(self.block_at + n as u64, |(pos, _)| {
                self.block_at + pos as u64
            })
    }
}

/// A symbol index of the whole input as the library's errors carry it
/// (saturated where `usize` is narrower than the input is long).
fn index_of(symbols: u64) -> usize {
    usize::try_from(symbols).unwrap_or(usize::MAX)
}

fn is_line_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// Index of the first byte of `text` that is not a symbol (`=` included).
fn first_non_symbol(alphabet: &Alphabet, text: &[u8]) -> Option<usize> {
    text.iter().position(|&b| alphabet.value_of(b).is_none())
}

/// Copies the bytes of `src` but line breaks to the front of `dst` (at
/// least as long as `src`); returns how many.
fn strip_line_breaks(src: &[u8], dst: &mut [u8]) -> usize {
    // Text from `mdu base64 encode` is one line: one copy (`contains` on
    // bytes is a memchr).
    if !src.contains(&b'\n') && !src.contains(&b'\r') {
        let len = src.len().min(dst.len());
        dst[..len].copy_from_slice(&src[..len]);
        return len;
    }
    // Wrapped text: 8 bytes at a time, copied whole unless one of them is
    // a line break (a word test, several times faster than a byte loop).
    let mut len = 0;
    let mut words = src.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
        if has_byte(w, b'\n') || has_byte(w, b'\r') {
            len = push_symbols(word, dst, len);
        } else if let Some(to) = dst.get_mut(len..len + 8) {
            to.copy_from_slice(word);
            len += 8;
        }
    }
    push_symbols(words.remainder(), dst, len)
}

/// Whether a byte of `w` is `b` (the exact zero-byte test of `w ^ b...b`).
fn has_byte(w: u64, b: u8) -> bool {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    let v = w ^ (ONES * u64::from(b));
    v.wrapping_sub(ONES) & !v & (ONES << 7) != 0
}

/// Copies the bytes of `src` but line breaks to `dst[len..]`; returns the
/// new length.
fn push_symbols(src: &[u8], dst: &mut [u8], mut len: usize) -> usize {
    for &b in src {
        if !is_line_break(b)
            && let Some(to) = dst.get_mut(len)
        {
            *to = b;
            len += 1;
        }
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(engine: &Engine, text: &[u8]) -> (Vec<u8>, Option<(u64, DecodeError)>) {
        let mut out = Vec::new();
        let err = match Decoder::new(engine).decode(text, &mut out) {
            Ok(()) => None,
            Err(StreamError::Decode { offset, error }) => Some((offset, error)),
            Err(e) => panic!("{e}"),
        };
        (out, err)
    }

    #[test]
    fn blocks_and_line_breaks_do_not_change_the_bytes() {
        // Three decode blocks and a bit, wrapped at 76 columns with CRLF.
        let data: Vec<u8> = (0..(DECODE_BLOCK * 9 / 4 + 5))
            .map(|i| (i % 251) as u8)
            .collect();
        let mut text = Vec::new();
        encode(&crate::STANDARD, &data[..], &mut text).unwrap();
        assert_eq!(text.last(), Some(&b'\n'));
        let wrapped: Vec<u8> = text[..text.len() - 1]
            .chunks(76)
            .flat_map(|l| l.iter().copied().chain(*b"\r\n"))
            .collect();
        assert_eq!(decode(&crate::STANDARD, &wrapped), (data.clone(), None));
        assert_eq!(decode(&crate::STANDARD, &text), (data, None));
    }

    #[test]
    fn an_error_names_the_offset_in_the_whole_input_after_the_groups_before_it() {
        let mut text = b"QUJD\n".repeat(DECODE_BLOCK / 5 + 3);
        let at = text.len() - 3;
        text[at] = b'*';
        let (out, err) = decode(&crate::STANDARD, &text);
        let (offset, error) = err.unwrap();
        assert_eq!(offset, at as u64);
        assert!(matches!(error, DecodeError::InvalidByte { byte: b'*', .. }));
        assert_eq!(out.len(), (DECODE_BLOCK / 5 + 2) * 3);
    }

    #[test]
    fn padding_is_only_valid_at_the_end() {
        let (_, err) = decode(&crate::STANDARD, b"YQ==YQ==");
        assert!(matches!(
            err,
            Some((2, DecodeError::InvalidByte { byte: b'=', .. }))
        ));
        assert_eq!(decode(&crate::STANDARD, b"YQ==\n"), (b"a".to_vec(), None));
        let (_, err) = decode(&crate::URL_SAFE_NO_PAD, b"YQ==");
        assert!(err.is_some());
    }

    #[test]
    fn line_breaks_are_stripped_word_by_word_as_byte_by_byte() {
        let src: Vec<u8> = (0..200u8)
            .map(|i| {
                if i % 7 == 0 {
                    b'\n'
                } else if i % 11 == 0 {
                    b'\r'
                } else {
                    b'A' + i % 26
                }
            })
            .collect();
        let mut dst = vec![0u8; src.len()];
        let n = strip_line_breaks(&src, &mut dst);
        let want: Vec<u8> = src.iter().copied().filter(|&b| !is_line_break(b)).collect();
        assert_eq!(&dst[..n], &want[..]);
        for b in 0..=255u8 {
            let w = u64::from_le_bytes([b'A', b'B', b, b'C', b'D', b'E', b'F', b'G']);
            assert_eq!(has_byte(w, b'\n'), b == b'\n', "{b}");
        }
    }
}
