//! The LUKS1 header: one 1024-byte copy at offset 0, big-endian integers,
//! NUL-padded text fields, eight key slots; parsed as untrusted input.

use mdu_dmcrypt::{CipherSpec, Geometry, SectorCipher, WeakKeys};

use crate::image::read_checked;
use crate::{Error, Hash, ReadAt, VolumeKey};

/// The length of the header as cryptsetup reads and writes it (592 bytes
/// of fields, then zero padding).
///
/// ```
/// assert_eq!(mdu_luks2::luks1::HEADER_LEN, 1024);
/// ```
pub const HEADER_LEN: usize = 1024;

/// The number of key slots.
///
/// ```
/// assert_eq!(mdu_luks2::luks1::SLOTS, 8);
/// ```
pub const SLOTS: usize = 8;

/// The anti-forensic stripes of every LUKS1 key slot (cryptsetup refuses
/// any other count).
///
/// ```
/// assert_eq!(mdu_luks2::luks1::STRIPES, 4000);
/// ```
pub const STRIPES: u32 = 4000;

/// The largest PBKDF2 iteration count accepted in a header (2^30, minutes
/// of work per try; cryptsetup's benchmark gives a few million): a hostile
/// header cannot make an unlock run for hours.
///
/// ```
/// assert_eq!(mdu_luks2::luks1::MAX_ITERATIONS, 1 << 30);
/// ```
pub const MAX_ITERATIONS: u32 = 1 << 30;

/// The fewest PBKDF2 iterations mdu writes into a new key slot or digest
/// (cryptsetup's minimum); a header read may hold fewer.
///
/// ```
/// assert_eq!(mdu_luks2::luks1::MIN_ITERATIONS, 1000);
/// ```
pub const MIN_ITERATIONS: u32 = 1000;

/// The largest volume key accepted, in bytes (4096 bits; a key slot then
/// takes 4000 sectors).
///
/// ```
/// assert_eq!(mdu_luks2::luks1::MAX_KEY_BYTES, 512);
/// ```
pub const MAX_KEY_BYTES: u32 = 512;

/// The magic of a LUKS header (both versions).
pub(crate) const MAGIC: [u8; 6] = *b"LUKS\xba\xbe";
/// The length of the volume-key digest kept in the header.
///
/// ```
/// assert_eq!(mdu_luks2::luks1::DIGEST_LEN, 20);
/// ```
pub const DIGEST_LEN: usize = 20;
/// The length of the digest's and each key slot's salt.
///
/// ```
/// assert_eq!(mdu_luks2::luks1::SALT_LEN, 32);
/// ```
pub const SALT_LEN: usize = 32;

const KEY_ENABLED: u32 = 0x00AC_71F3;
const KEY_DISABLED: u32 = 0x0000_DEAD;
const OFF_SLOTS: usize = 208;
const SLOT_LEN: usize = 48;

/// One key slot of a LUKS1 header.
///
/// ```
/// use mdu_luks2::luks1::Slot;
/// let s = Slot::disabled(8);
/// assert!(!s.enabled);
/// assert_eq!((s.key_material_offset, s.stripes), (8, 4000));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Whether the slot holds a key (`0x00AC71F3`) or not (`0x0000DEAD`).
    pub enabled: bool,
    /// PBKDF2 iterations of the passphrase.
    pub iterations: u32,
    /// PBKDF2 salt of the passphrase.
    pub salt: [u8; SALT_LEN],
    /// Where the key material starts, in 512-byte sectors.
    pub key_material_offset: u32,
    /// Anti-forensic stripes ([`STRIPES`]).
    pub stripes: u32,
}

impl Slot {
    /// A disabled slot whose material lies at sector `key_material_offset`
    /// (zero salt and iterations, as cryptsetup leaves a killed slot).
    ///
    /// ```
    /// assert_eq!(mdu_luks2::luks1::Slot::disabled(264).iterations, 0);
    /// ```
    pub const fn disabled(key_material_offset: u32) -> Slot {
        Slot {
            enabled: false,
            iterations: 0,
            salt: [0; SALT_LEN],
            key_material_offset,
            stripes: STRIPES,
        }
    }
}

/// A LUKS1 header, every field checked: see [`Header::parse`].
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// let params = FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() };
/// let image = luks1::format(&params, b"pw", &[7u8; 32].iter().chain(&[9u8; 32]).copied().collect::<Vec<_>>(), &mut mdu_luks2::os_random)?;
/// let hdr = Header::load(&image[..])?;
/// assert_eq!((hdr.cipher_name.as_str(), hdr.cipher_mode.as_str()), ("aes", "xts-plain64"));
/// assert_eq!(hdr.payload_offset, 4096);
/// assert!(hdr.slots[0].enabled && !hdr.slots[1].enabled);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The cipher (`aes`, `serpent`, `twofish`).
    pub cipher_name: String,
    /// The chaining and IV mode (`xts-plain64`, `cbc-essiv:sha256`).
    pub cipher_mode: String,
    /// The hash of PBKDF2, the AF splitter and the digest (`hashSpec`).
    pub hash: Hash,
    /// Where the data start, in 512-byte sectors (0: a detached header).
    pub payload_offset: u32,
    /// The volume key length in bytes.
    pub key_bytes: u32,
    /// The first 20 bytes of PBKDF2(volume key, digest salt, iterations).
    pub mk_digest: [u8; DIGEST_LEN],
    /// The salt of the volume-key digest.
    pub mk_digest_salt: [u8; SALT_LEN],
    /// The PBKDF2 iterations of the volume-key digest.
    pub mk_digest_iterations: u32,
    /// The UUID as text.
    pub uuid: String,
    /// The eight key slots.
    pub slots: [Slot; SLOTS],
}

fn be32(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

/// A NUL-terminated text field of `len` bytes at `off`.
fn text(b: &[u8], off: usize, len: usize, field: &'static str) -> Result<String, Error> {
    let raw = &b[off..off + len];
    let end = raw
        .iter()
        .position(|&c| c == 0)
        .ok_or(Error::HeaderText { offset: 0, field })?;
    std::str::from_utf8(&raw[..end])
        .map(str::to_owned)
        .map_err(|_| Error::HeaderText { offset: 0, field })
}

fn put_text(out: &mut [u8], off: usize, len: usize, s: &str) -> Result<(), Error> {
    if s.len() >= len || s.bytes().any(|c| c == 0) {
        return Err(Error::Params {
            problem: format!(
                "{s:?} does not fit a {len}-byte LUKS1 text field (at most {} bytes, no NUL)",
                len - 1
            ),
        });
    }
    out[off..off + s.len()].copy_from_slice(s.as_bytes());
    Ok(())
}

fn bad(field: impl Into<String>, problem: impl Into<String>) -> Error {
    Error::Luks1Header {
        field: field.into(),
        problem: problem.into(),
    }
}

/// Whether `r` starts with the LUKS magic, and then which version its
/// header has: `None` for no LUKS header (or a file shorter than 8 bytes).
///
/// ```
/// let mut image = b"LUKS\xba\xbe\x00\x01".to_vec();
/// assert_eq!(mdu_luks2::luks1::probe_version(&image[..])?, Some(1));
/// image[0] = b'X';
/// assert_eq!(mdu_luks2::luks1::probe_version(&image[..])?, None);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
///
/// # Errors
///
/// A failed read ([`Error::Io`]).
pub fn probe_version<R: ReadAt + ?Sized>(r: &R) -> Result<Option<u16>, Error> {
    if r.size()? < 8 {
        return Ok(None);
    }
    let mut b = [0u8; 8];
    r.read_exact_at(&mut b, 0)?;
    Ok((b[..6] == MAGIC).then(|| u16::from_be_bytes([b[6], b[7]])))
}

impl Header {
    /// Parses and checks the 1024 header bytes, as cryptsetup's
    /// `LUKS_read_phdr` does and more strictly: the magic and version 1;
    /// every text field NUL-terminated UTF-8; a hash this crate computes; a
    /// key of 1..=[`MAX_KEY_BYTES`] bytes; every slot enabled or disabled,
    /// with [`STRIPES`] stripes, its material after the header, before the
    /// payload and overlapping no other slot's; iterations 1..=
    /// [`MAX_ITERATIONS`] for the digest and every enabled slot. The cipher
    /// is checked when it is used ([`cipher_spec`](Self::cipher_spec)), so
    /// a header of a mode this crate does not run still dumps.
    ///
    /// # Errors
    ///
    /// [`Error::BadMagic`], [`Error::HeaderText`], [`Error::Luks1Header`]
    /// naming the field.
    ///
    /// ```
    /// let err = mdu_luks2::luks1::Header::parse(&[0u8; 1024]).unwrap_err();
    /// assert!(matches!(err, mdu_luks2::Error::BadMagic { offset: 0 }));
    /// ```
    pub fn parse(b: &[u8; HEADER_LEN]) -> Result<Header, Error> {
        if b[..6] != MAGIC {
            return Err(Error::BadMagic { offset: 0 });
        }
        let version = u16::from_be_bytes([b[6], b[7]]);
        if version != 1 {
            return Err(bad(
                "version",
                format!("{version}, not 1 (LUKS2 headers are read with Image::load)"),
            ));
        }
        let cipher_name = text(b, 8, 32, "cipherName")?;
        let cipher_mode = text(b, 40, 32, "cipherMode")?;
        let hash_spec = text(b, 72, 32, "hashSpec")?;
        // cryptsetup lowers the case of the hash name before it uses it.
        let hash = Hash::parse(&hash_spec.to_ascii_lowercase()).ok_or_else(|| {
            bad(
                "hashSpec",
                format!(
                    "{hash_spec:?} is not a supported hash (sha1, sha256, sha512, ripemd160, \
                     whirlpool)"
                ),
            )
        })?;
        let uuid = text(b, 168, 40, "uuid")?;
        let mut hdr = Header {
            cipher_name,
            cipher_mode,
            hash,
            payload_offset: be32(b, 104),
            key_bytes: be32(b, 108),
            mk_digest: b[112..132].try_into().unwrap_or([0; DIGEST_LEN]),
            mk_digest_salt: b[132..164].try_into().unwrap_or([0; SALT_LEN]),
            mk_digest_iterations: be32(b, 164),
            uuid,
            slots: [Slot::disabled(0); SLOTS],
        };
        for (i, slot) in hdr.slots.iter_mut().enumerate() {
            let o = OFF_SLOTS + i * SLOT_LEN;
            let enabled = match be32(b, o) {
                KEY_ENABLED => true,
                KEY_DISABLED => false,
                other => {
                    return Err(bad(
                        format!("key slot {i} state"),
                        format!(
                            "0x{other:08x} is neither enabled (0x00ac71f3) nor disabled (0x0000dead)"
                        ),
                    ));
                }
            };
            *slot = Slot {
                enabled,
                iterations: be32(b, o + 4),
                salt: b[o + 8..o + 40].try_into().unwrap_or([0; SALT_LEN]),
                key_material_offset: be32(b, o + 40),
                stripes: be32(b, o + 44),
            };
        }
        hdr.check()?;
        Ok(hdr)
    }

    /// The rules of [`parse`](Self::parse) on the fields (a header built
    /// in memory is checked by the same rules before it is written).
    pub(crate) fn check(&self) -> Result<(), Error> {
        if self.key_bytes == 0 || self.key_bytes > MAX_KEY_BYTES {
            return Err(bad(
                "keyBytes",
                format!(
                    "a {}-byte volume key; 1 to {MAX_KEY_BYTES} bytes are accepted",
                    self.key_bytes
                ),
            ));
        }
        let iterations = |field: String, n: u32| {
            if n == 0 || n > MAX_ITERATIONS {
                Err(bad(
                    field,
                    format!("{n} PBKDF2 iterations; 1 to {MAX_ITERATIONS} are accepted"),
                ))
            } else {
                Ok(())
            }
        };
        iterations("mkDigestIterations".into(), self.mk_digest_iterations)?;
        let sectors = u64::from(self.material_sectors());
        let payload = u64::from(self.payload_offset);
        for (i, s) in self.slots.iter().enumerate() {
            if s.stripes != STRIPES {
                return Err(bad(
                    format!("key slot {i} stripes"),
                    format!("{}; LUKS1 key slots have {STRIPES}", s.stripes),
                ));
            }
            if (u64::from(s.key_material_offset) * 512) < HEADER_LEN as u64 {
                return Err(bad(
                    format!("key slot {i} key material offset"),
                    format!(
                        "sector {} overlaps the header (sectors 0 and 1)",
                        s.key_material_offset
                    ),
                ));
            }
            let end = u64::from(s.key_material_offset) + sectors;
            if payload != 0 && end > payload {
                return Err(bad(
                    format!("key slot {i} key material offset"),
                    format!(
                        "sectors {}..{end} run past the payload offset {payload}",
                        s.key_material_offset
                    ),
                ));
            }
            if s.enabled {
                iterations(format!("key slot {i} iterations"), s.iterations)?;
            }
        }
        for i in 0..SLOTS {
            for j in i + 1..SLOTS {
                let (a, b) = (
                    u64::from(self.slots[i].key_material_offset),
                    u64::from(self.slots[j].key_material_offset),
                );
                if a < b + sectors && b < a + sectors {
                    return Err(bad(
                        format!("key slot {j} key material offset"),
                        format!(
                            "sectors {b}..{} overlap key slot {i}'s, {a}..{}",
                            b + sectors,
                            a + sectors
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Reads and parses the header at the start of `r` and checks it
    /// against the image: every slot's key material and the payload offset
    /// lie inside it.
    ///
    /// # Errors
    ///
    /// What [`parse`](Self::parse) refuses; [`Error::Truncated`] for a
    /// header, key material or payload offset past the end of `r`.
    ///
    /// ```
    /// let err = mdu_luks2::luks1::Header::load(&[0u8; 100][..]).unwrap_err();
    /// assert!(matches!(err, mdu_luks2::Error::Truncated { .. }));
    /// ```
    pub fn load<R: ReadAt + ?Sized>(r: &R) -> Result<Header, Error> {
        let (hdr, len) = Header::load_detached_len(r)?;
        let payload = u64::from(hdr.payload_offset) * 512;
        if payload > len {
            return Err(Error::Truncated {
                what: "LUKS1 payload",
                offset: payload,
                len: 0,
                image_len: len,
            });
        }
        Ok(hdr)
    }

    /// [`load`](Self::load) for a detached header (a file holding the
    /// header and key material, whose payload offset is in another file).
    ///
    /// # Errors
    ///
    /// What [`load`](Self::load) refuses, but for the payload offset.
    ///
    /// ```
    /// # use mdu_luks2::luks1::{self, FormatParams, Header};
    /// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
    /// // The header and key slots alone, without the payload.
    /// let keyslots_end = 8 * 512 + 8 * 504 * 512;
    /// assert!(Header::load(&image[..keyslots_end]).is_err());
    /// assert!(Header::load_detached(&image[..keyslots_end]).is_ok());
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn load_detached<R: ReadAt + ?Sized>(r: &R) -> Result<Header, Error> {
        Header::load_detached_len(r).map(|(h, _)| h)
    }

    fn load_detached_len<R: ReadAt + ?Sized>(r: &R) -> Result<(Header, u64), Error> {
        let len = r.size()?;
        let bytes = read_checked(r, len, "LUKS1 header", 0, HEADER_LEN as u64)?;
        let mut b = [0u8; HEADER_LEN];
        b.copy_from_slice(&bytes);
        let hdr = Header::parse(&b)?;
        for i in 0..SLOTS {
            let (offset, n) = hdr.material_range(i);
            if offset + n > len {
                return Err(Error::Truncated {
                    what: "LUKS1 key slot material",
                    offset,
                    len: n,
                    image_len: len,
                });
            }
        }
        Ok((hdr, len))
    }

    /// The header as its 1024 bytes (padding zero).
    ///
    /// # Errors
    ///
    /// [`Error::Params`] for a text field that does not fit, and what
    /// [`parse`](Self::parse) would refuse.
    ///
    /// ```
    /// # use mdu_luks2::luks1::{self, FormatParams, Header};
    /// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
    /// let hdr = Header::load(&image[..])?;
    /// assert_eq!(&hdr.to_bytes()?[..], &image[..1024]);
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Result<[u8; HEADER_LEN], Error> {
        self.check()?;
        let mut b = [0u8; HEADER_LEN];
        b[..6].copy_from_slice(&MAGIC);
        b[6..8].copy_from_slice(&1u16.to_be_bytes());
        put_text(&mut b, 8, 32, &self.cipher_name)?;
        put_text(&mut b, 40, 32, &self.cipher_mode)?;
        put_text(&mut b, 72, 32, self.hash.name())?;
        b[104..108].copy_from_slice(&self.payload_offset.to_be_bytes());
        b[108..112].copy_from_slice(&self.key_bytes.to_be_bytes());
        b[112..132].copy_from_slice(&self.mk_digest);
        b[132..164].copy_from_slice(&self.mk_digest_salt);
        b[164..168].copy_from_slice(&self.mk_digest_iterations.to_be_bytes());
        put_text(&mut b, 168, 40, &self.uuid)?;
        for (i, s) in self.slots.iter().enumerate() {
            let o = OFF_SLOTS + i * SLOT_LEN;
            let state = if s.enabled { KEY_ENABLED } else { KEY_DISABLED };
            b[o..o + 4].copy_from_slice(&state.to_be_bytes());
            b[o + 4..o + 8].copy_from_slice(&s.iterations.to_be_bytes());
            b[o + 8..o + 40].copy_from_slice(&s.salt);
            b[o + 40..o + 44].copy_from_slice(&s.key_material_offset.to_be_bytes());
            b[o + 44..o + 48].copy_from_slice(&s.stripes.to_be_bytes());
        }
        Ok(b)
    }

    /// The 512-byte sectors one slot's key material takes:
    /// `key_bytes * 4000` rounded up to a sector.
    ///
    /// ```
    /// # use mdu_luks2::luks1::{self, FormatParams, Header};
    /// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
    /// assert_eq!(Header::load(&image[..])?.material_sectors(), 500);
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn material_sectors(&self) -> u32 {
        material_sectors(self.key_bytes)
    }

    /// The byte range `(offset, len)` of slot `slot`'s key material.
    pub(crate) fn material_range(&self, slot: usize) -> (u64, u64) {
        (
            u64::from(self.slots[slot].key_material_offset) * 512,
            u64::from(self.material_sectors()) * 512,
        )
    }

    /// The cipher spec `cipherName-cipherMode` of the key material and
    /// the data.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedCipherMode`] for one this crate does not run
    /// (`aes-lrw-plain64`, `aes-xts-essiv:wp256`, `cipher_null-ecb`).
    ///
    /// ```
    /// # use mdu_luks2::luks1::{self, FormatParams, Header};
    /// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
    /// let mut hdr = Header::load(&image[..])?;
    /// assert_eq!(hdr.cipher_spec()?.to_string(), "aes-xts-plain64");
    /// hdr.cipher_mode = "lrw-plain64".into();
    /// assert!(hdr.cipher_spec().unwrap_err().to_string().contains("unsupported cipher mode"));
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn cipher_spec(&self) -> Result<CipherSpec, Error> {
        CipherSpec::parse(&format!("{}-{}", self.cipher_name, self.cipher_mode)).map_err(|error| {
            Error::UnsupportedCipherMode {
                cipher: self.cipher_name.clone(),
                mode: self.cipher_mode.clone(),
                error,
            }
        })
    }

    /// The data cipher under volume key `key`: 512-byte sectors, IV sector
    /// 0 at the payload offset. `weak`: whether an XTS key with equal
    /// halves is accepted.
    ///
    /// # Errors
    ///
    /// [`Error::UnsupportedCipherMode`]; [`Error::Cipher`] for a key the
    /// cipher or the weak-key policy refuses.
    ///
    /// ```
    /// # use mdu_luks2::luks1::{self, FormatParams, Header};
    /// # use mdu_luks2::WeakKeys;
    /// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
    /// let hdr = Header::load(&image[..])?;
    /// let key = hdr.unlock(&image[..], b"pw")?;
    /// assert_eq!(hdr.data_cipher(&key, WeakKeys::Refuse)?.sector_size(), 512);
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn data_cipher(&self, key: &VolumeKey, weak: WeakKeys) -> Result<SectorCipher, Error> {
        let spec = self.cipher_spec()?;
        Ok(SectorCipher::new(
            spec,
            &key.key,
            Geometry::new(512, 0, false)?,
            weak,
        )?)
    }

    /// The byte range `(offset, len)` of the data in an image of
    /// `image_len` bytes holding this header: from the payload offset to
    /// the end (for a detached header, `image_len` is the data file's
    /// length and a payload offset of 0 the whole of it).
    ///
    /// # Errors
    ///
    /// [`Error::Truncated`] for a payload offset past the end.
    ///
    /// ```
    /// # use mdu_luks2::luks1::{self, FormatParams, Header};
    /// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
    /// let hdr = Header::load(&image[..])?;
    /// assert_eq!(hdr.data_range((2 << 20) + 4096)?, (2 << 20, 4096));
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn data_range(&self, image_len: u64) -> Result<(u64, u64), Error> {
        let off = u64::from(self.payload_offset) * 512;
        if off > image_len {
            return Err(Error::Truncated {
                what: "LUKS1 payload",
                offset: off,
                len: 0,
                image_len,
            });
        }
        let len = image_len - off;
        if !len.is_multiple_of(512) {
            return Err(bad(
                "payload",
                format!(
                    "the data ({len} bytes after the payload offset) are not a whole number of 512-byte sectors"
                ),
            ));
        }
        Ok((off, len))
    }
}

/// `AF_split_sectors(key_bytes, 4000)`.
pub(crate) fn material_sectors(key_bytes: u32) -> u32 {
    let sectors = (u64::from(key_bytes) * u64::from(STRIPES)).div_ceil(512);
    u32::try_from(sectors).unwrap_or(u32::MAX)
}
