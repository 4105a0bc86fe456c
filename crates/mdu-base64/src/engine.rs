//! The engine: an alphabet, a padding mode and (optionally) a pinned backend.

use alloc::string::String;
use alloc::vec::Vec;

use crate::alphabet::{Alphabet, PAD, Padding};
use crate::backend::{self, Backend, BodyError, Kernel};
use crate::error::{BackendUnavailable, DecodeError, EncodeError};

/// Unpadded encoded length, `ceil(4 * n / 3)`, for lengths where it fits
/// (every slice length does: a slice holds at most `isize::MAX` bytes).
#[inline]
pub(crate) const fn unpadded_len(n: usize) -> usize {
    n / 3 * 4
        + match n % 3 {
            0 => 0,
            rest => rest + 1,
        }
}

/// A base64 codec: one [`Alphabet`], one [`Padding`] mode.
///
/// Encoding works 3 bytes -> 4 symbols (48 -> 64 with AVX-512 VBMI or NEON); decoding
/// is strict (see [`DecodeError`] for the checks and their order) and gives
/// the same result, error and index included, on every [`Backend`].
///
/// ```
/// use mdu_base64::{Alphabet, Engine, Padding, URL_SAFE_NO_PAD};
///
/// assert_eq!(URL_SAFE_NO_PAD.encode_to_string(b"\x00\xfb\xff\x7f\x80"), "APv_f4A");
///
/// const IMAP: Engine = Engine::new(&Alphabet::IMAP, Padding::None);
/// assert_eq!(IMAP.encode_to_string(b"\x00\xfb\xff\x7f\x80"), "APv,f4A");
/// assert_eq!(IMAP.decode_to_vec(b"APv,f4A")?, b"\x00\xfb\xff\x7f\x80");
/// # Ok::<(), mdu_base64::DecodeError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Engine {
    alphabet: Alphabet,
    padding: Padding,
    /// `None`: the process-wide best ([`Backend::detect`]); a pinned
    /// backend keeps the witness its kernels take, checked once by
    /// [`Engine::with_backend`].
    pinned: Option<Kernel>,
}

impl core::fmt::Debug for Engine {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Engine")
            .field("alphabet", &self.alphabet)
            .field("padding", &self.padding)
            .field("pinned", &self.pinned.map(Kernel::backend))
            .finish()
    }
}

impl Engine {
    /// An engine for `alphabet` and `padding`, using the best backend of the
    /// CPU it runs on.
    ///
    /// ```
    /// use mdu_base64::{Alphabet, Engine, Padding};
    ///
    /// const STD_NO_PAD: Engine = Engine::new(&Alphabet::STANDARD, Padding::None);
    /// assert_eq!(STD_NO_PAD.encode_to_string(b"fo"), "Zm8");
    /// ```
    pub const fn new(alphabet: &Alphabet, padding: Padding) -> Engine {
        Engine {
            alphabet: *alphabet,
            padding,
            pinned: None,
        }
    }

    /// The same engine pinned to `backend` (for tests and benchmarks), or an
    /// error if this CPU cannot run it.
    ///
    /// ```
    /// use mdu_base64::{Backend, URL_SAFE_NO_PAD};
    ///
    /// let scalar = URL_SAFE_NO_PAD.with_backend(Backend::Generic)?;
    /// assert_eq!(scalar.backend(), Backend::Generic);
    /// assert_eq!(scalar.encode_to_string(b"hi"), URL_SAFE_NO_PAD.encode_to_string(b"hi"));
    /// # Ok::<(), mdu_base64::BackendUnavailable>(())
    /// ```
    pub fn with_backend(self, backend: Backend) -> Result<Engine, BackendUnavailable> {
        let kernel = Kernel::of(backend).ok_or(BackendUnavailable {
            backend: backend.name(),
        })?;
        Ok(Engine {
            pinned: Some(kernel),
            ..self
        })
    }

    /// The backend that serves this engine's calls: the pinned one or the
    /// detected best. Every backend serves every alphabet.
    ///
    /// ```
    /// use mdu_base64::{Alphabet, Backend, Engine, Padding};
    ///
    /// let crypt = Alphabet::new(
    ///     b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    /// )?;
    /// let engine = Engine::new(&crypt, Padding::None);
    /// assert_eq!(engine.backend(), Backend::detect());
    /// if Backend::Avx2.is_available() {
    ///     let pinned = engine.with_backend(Backend::Avx2).unwrap();
    ///     assert_eq!(pinned.backend(), Backend::Avx2);
    /// }
    /// # Ok::<(), mdu_base64::AlphabetError>(())
    /// ```
    #[inline]
    pub fn backend(&self) -> Backend {
        self.kernel().backend()
    }

    /// The kernels that serve this engine's calls: the pinned ones, or the
    /// best ones of the CPU (its features are detected once per process;
    /// this reads the cache).
    #[inline]
    fn kernel(&self) -> Kernel {
        self.pinned.unwrap_or_else(Kernel::detect)
    }

    /// The alphabet.
    ///
    /// ```
    /// assert_eq!(mdu_base64::STANDARD.alphabet(), &mdu_base64::Alphabet::STANDARD);
    /// ```
    pub const fn alphabet(&self) -> &Alphabet {
        &self.alphabet
    }

    /// The padding mode.
    ///
    /// ```
    /// assert_eq!(mdu_base64::URL_SAFE_NO_PAD.padding(), mdu_base64::Padding::None);
    /// ```
    pub const fn padding(&self) -> Padding {
        self.padding
    }

    /// Length of the encoding of `n` bytes (with `=` padding if the mode is
    /// [`Padding::Required`]), or `None` if it does not fit in `usize`.
    ///
    /// ```
    /// use mdu_base64::{STANDARD, URL_SAFE_NO_PAD};
    ///
    /// assert_eq!(STANDARD.encoded_len(4), Some(8));
    /// assert_eq!(URL_SAFE_NO_PAD.encoded_len(4), Some(6));
    /// assert_eq!(URL_SAFE_NO_PAD.encoded_len(189), Some(252));
    /// assert_eq!(STANDARD.encoded_len(usize::MAX), None);
    /// ```
    pub const fn encoded_len(&self, n: usize) -> Option<usize> {
        let tail = match (self.padding, n % 3) {
            (_, 0) => 0,
            (Padding::Required, _) => 4,
            (_, r) => r + 1,
        };
        match (n / 3).checked_mul(4) {
            Some(full) => full.checked_add(tail),
            None => None,
        }
    }

    /// Exact decoded length of `src`, after the length and padding checks
    /// (steps 1 and 2 of [`DecodeError`]); the symbols themselves are not
    /// checked.
    ///
    /// ```
    /// use mdu_base64::{DecodeError, STANDARD, URL_SAFE_NO_PAD};
    ///
    /// assert_eq!(STANDARD.decoded_len(b"Zm8="), Ok(2));
    /// assert_eq!(URL_SAFE_NO_PAD.decoded_len(b"Zm8"), Ok(2));
    /// assert_eq!(STANDARD.decoded_len(b"Zm8"), Err(DecodeError::InvalidLength { len: 3 }));
    /// ```
    pub fn decoded_len(&self, src: &[u8]) -> Result<usize, DecodeError> {
        self.structure(src).map(|s| s.1)
    }

    /// Upper bound of the decoded length of any `n`-byte input (what to
    /// allocate before [`decode_slice`](Engine::decode_slice) without looking
    /// at the input).
    ///
    /// ```
    /// assert_eq!(mdu_base64::URL_SAFE_NO_PAD.decoded_len_max(252), 189);
    /// ```
    pub const fn decoded_len_max(&self, n: usize) -> usize {
        n / 4 * 3 + n % 4 * 3 / 4
    }

    /// Length and padding checks: `(symbols before padding, decoded length)`.
    #[inline(always)]
    fn structure(&self, src: &[u8]) -> Result<(usize, usize), DecodeError> {
        let len = src.len();
        if self.padding == Padding::Required && !len.is_multiple_of(4) {
            return Err(DecodeError::InvalidLength { len });
        }
        // No padding (every unpadded text, fscrypt's names): one test.
        if src.last() != Some(&PAD) {
            if len % 4 == 1 {
                return Err(DecodeError::InvalidLength { len });
            }
            return Ok((len, len / 4 * 3 + (len % 4).saturating_sub(1)));
        }
        let pads = src.iter().rev().take_while(|&&c| c == PAD).count();
        let body = len - pads;
        if pads == 0 {
            if body % 4 == 1 {
                return Err(DecodeError::InvalidLength { len });
            }
        } else {
            let canonical = match body % 4 {
                2 => 2,
                3 => 1,
                _ => 0,
            };
            if self.padding == Padding::None || !len.is_multiple_of(4) || pads != canonical {
                return Err(DecodeError::InvalidPadding { index: body });
            }
        }
        Ok((body, self.decoded_len_max(body)))
    }

    /// Encodes `src` into the front of `dst`, returning the number of bytes
    /// written. On error nothing is written.
    ///
    /// ```
    /// use mdu_base64::STANDARD;
    ///
    /// let mut buf = [0u8; 16];
    /// let n = STANDARD.encode_slice(b"foob", &mut buf)?;
    /// assert_eq!(&buf[..n], b"Zm9vYg==");
    /// # Ok::<(), mdu_base64::EncodeError>(())
    /// ```
    #[inline]
    pub fn encode_slice(&self, src: &[u8], dst: &mut [u8]) -> Result<usize, EncodeError> {
        // A slice holds at most `isize::MAX` bytes, so 4/3 of it plus 4
        // fits in `usize`; the quotient and remainder by 3 here and in
        // `unpadded_len` are one division once inlined.
        let body = unpadded_len(src.len());
        let pads = match (self.padding, src.len() % 3) {
            (Padding::Required, rest @ (1 | 2)) => 3 - rest,
            _ => 0,
        };
        let needed = body + pads;
        let got = dst.len();
        let Some(out) = dst.get_mut(..needed) else {
            return Err(EncodeError::OutputTooSmall { needed, got });
        };
        let (body, pads) = out.split_at_mut(body);
        backend::encode(self.kernel(), &self.alphabet, src, body);
        // 0, 1 or 2 bytes: plain stores (`fill` calls memset, even for 0).
        match pads {
            [a] => *a = PAD,
            [a, b] => (*a, *b) = (PAD, PAD),
            _ => debug_assert!(pads.is_empty()),
        }
        Ok(needed)
    }

    /// Encodes `src` into a new `String`.
    ///
    /// Like every allocation, this aborts or panics only if the encoded text
    /// cannot be allocated; its length always fits in `usize`.
    ///
    /// ```
    /// assert_eq!(mdu_base64::STANDARD.encode_to_string(b"foobar"), "Zm9vYmFy");
    /// ```
    pub fn encode_to_string(&self, src: &[u8]) -> String {
        let mut out = Vec::new();
        self.encode_to_vec_into(src, &mut out);
        // Every symbol and the pad byte are ASCII.
        String::from_utf8(out).unwrap_or_default()
    }

    /// Appends the encoding of `src` to `out`.
    ///
    /// ```
    /// let mut out = b"name: ".to_vec();
    /// mdu_base64::URL_SAFE_NO_PAD.encode_to_vec_into(b"\xff", &mut out);
    /// assert_eq!(out, b"name: _w");
    /// ```
    pub fn encode_to_vec_into(&self, src: &[u8], out: &mut Vec<u8>) {
        // A slice holds at most isize::MAX bytes, so 4/3 of it fits in usize.
        let needed = self.encoded_len(src.len()).unwrap_or(usize::MAX);
        let start = out.len();
        out.resize(start + needed, 0);
        let written = self.encode_slice(src, &mut out[start..]).unwrap_or(0);
        out.truncate(start + written);
    }

    /// Decodes `src` into the front of `dst`, returning the number of bytes
    /// written.
    ///
    /// On error: for [`InvalidLength`](DecodeError::InvalidLength),
    /// [`InvalidPadding`](DecodeError::InvalidPadding) and
    /// [`OutputTooSmall`](DecodeError::OutputTooSmall) nothing is written.
    /// For [`InvalidByte { index, .. }`](DecodeError::InvalidByte) exactly
    /// the whole groups before the one holding the byte have been written,
    /// `dst[..index / 4 * 3]`; for [`NonCanonical`](DecodeError::NonCanonical)
    /// all whole groups have been written (not the last, partial one). No
    /// other byte of `dst` is touched. This holds on every backend.
    ///
    /// ```
    /// use mdu_base64::{DecodeError, URL_SAFE_NO_PAD};
    ///
    /// let mut buf = [0u8; 8];
    /// assert_eq!(URL_SAFE_NO_PAD.decode_slice(b"Zm9vYmE", &mut buf), Ok(5));
    /// assert_eq!(&buf[..5], b"fooba");
    /// assert_eq!(
    ///     URL_SAFE_NO_PAD.decode_slice(b"Zm9vYmE", &mut buf[..4]),
    ///     Err(DecodeError::OutputTooSmall { needed: 5, got: 4 })
    /// );
    /// ```
    #[inline]
    pub fn decode_slice(&self, src: &[u8], dst: &mut [u8]) -> Result<usize, DecodeError> {
        let (body, needed) = self.structure(src)?;
        let got = dst.len();
        let Some(out) = dst.get_mut(..needed) else {
            return Err(DecodeError::OutputTooSmall { needed, got });
        };
        self.decode_body(&src[..body], out)?;
        Ok(needed)
    }

    /// Decodes `body` (no padding, length not 1 mod 4) into all of `out`.
    #[inline(always)]
    fn decode_body(&self, body: &[u8], out: &mut [u8]) -> Result<(), DecodeError> {
        backend::decode_body(self.kernel(), &self.alphabet, body, out).map_err(|e| match e {
            BodyError::InvalidByte(index) => DecodeError::InvalidByte {
                index,
                byte: body.get(index).copied().unwrap_or_default(),
            },
            BodyError::NonCanonical(index) => DecodeError::NonCanonical { index },
        })
    }

    /// Decodes `src` into a new vector.
    ///
    /// ```
    /// use mdu_base64::{DecodeError, URL_SAFE_NO_PAD};
    ///
    /// assert_eq!(URL_SAFE_NO_PAD.decode_to_vec(b"Zm9vYmE")?, b"fooba");
    /// assert_eq!(
    ///     URL_SAFE_NO_PAD.decode_to_vec(b"Zg=="),
    ///     Err(DecodeError::InvalidPadding { index: 2 })
    /// );
    /// # Ok::<(), DecodeError>(())
    /// ```
    pub fn decode_to_vec(&self, src: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let (body, needed) = self.structure(src)?;
        let mut out = alloc::vec![0u8; needed];
        self.decode_body(&src[..body], &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    //! Small enough to run under Miri (where only the scalar backend exists).
    extern crate std;

    use alloc::vec;
    use alloc::vec::Vec;

    use super::*;

    /// The backends to exercise, each announced with one line in the log.
    fn backends(test: &str) -> Vec<Backend> {
        let all = Backend::available();
        for b in all {
            std::println!("{test}: backend {}", b.name());
        }
        all.to_vec()
    }

    /// Bit-at-a-time reference encoder (the pre-2021 style, MSB first).
    fn reference_encode(alphabet: &Alphabet, pad: bool, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let (mut acc, mut bits) = (0u32, 0);
        for &b in data {
            acc = acc << 8 | u32::from(b);
            bits += 8;
            while bits >= 6 {
                bits -= 6;
                out.push(alphabet.symbols()[(acc >> bits) as usize & 63]);
            }
        }
        if bits > 0 {
            out.push(alphabet.symbols()[(acc << (6 - bits)) as usize & 63]);
        }
        while pad && out.len() % 4 != 0 {
            out.push(PAD);
        }
        out
    }

    #[test]
    fn matches_bitwise_reference_on_every_backend() {
        let crypt =
            Alphabet::new(b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
                .unwrap();
        let engines = [
            (crate::STANDARD, true),
            (crate::URL_SAFE_NO_PAD, false),
            (Engine::new(&Alphabet::IMAP, Padding::Optional), false),
            (Engine::new(&crypt, Padding::None), false),
        ];
        let data: Vec<u8> = (0..50u32).map(|i| (i * 97 + 13) as u8).collect();
        let all = backends("matches_bitwise_reference_on_every_backend");
        for (engine, pad) in engines {
            for &b in &all {
                let e = engine.with_backend(b).unwrap();
                for n in 0..=data.len() {
                    let want = reference_encode(e.alphabet(), pad, &data[..n]);
                    let mut buf = vec![0u8; want.len()];
                    assert_eq!(e.encode_slice(&data[..n], &mut buf), Ok(want.len()));
                    assert_eq!(buf, want, "{b:?} n={n}");
                    assert_eq!(e.decode_to_vec(&want).as_deref(), Ok(&data[..n]));
                }
            }
        }
    }

    #[test]
    fn errors_and_write_contract() {
        for b in backends("errors_and_write_contract") {
            let e = crate::URL_SAFE_NO_PAD.with_backend(b).unwrap();
            let mut text = e.encode_to_string(&[0x5a; 60]).into_bytes(); // 80 symbols
            text[45] = b'*';
            let mut out = [0xeeu8; 60];
            assert_eq!(
                e.decode_slice(&text, &mut out),
                Err(DecodeError::InvalidByte {
                    index: 45,
                    byte: b'*'
                })
            );
            assert!(out[..33].iter().all(|&x| x == 0x5a));
            assert!(out[33..].iter().all(|&x| x == 0xee));
            assert_eq!(
                e.decode_to_vec(b"Zh"),
                Err(DecodeError::NonCanonical { index: 1 })
            );
            assert_eq!(
                e.decode_to_vec(b"Zg="),
                Err(DecodeError::InvalidPadding { index: 2 })
            );
            assert_eq!(
                e.decode_to_vec(b"Zm9vY"),
                Err(DecodeError::InvalidLength { len: 5 })
            );
        }
    }
}
