//! Formatting a new image: the parameters of a new header region
//! ([`FormatParams`], checked by [`FormatParams::validate`]) and
//! [`format()`], which writes both header copies and keyslot 0.

use std::collections::BTreeMap;

use mdu_dmcrypt::{CipherSpec, WeakKeys};
use zeroize::Zeroizing;

use crate::header::{BINARY_HEADER_LEN, BinaryHeader, HEADER_SIZES, seal};
use crate::image::{AF_STRIPES, area_cipher};
use crate::kdf::{Argon2Variant, Hash, Kdf};
use crate::metadata::{
    Config, Digest, Encryption, Keyslot, KeyslotArea, MAX_KEYSLOTS_SIZE, Metadata, Segment,
};
use crate::{Direction, Error, FormatChoices, af};

/// The key derivation of a new keyslot.
///
/// ```
/// use mdu_luks2::{Argon2Variant, KdfParams};
/// let k = KdfParams::Argon2 { variant: Argon2Variant::Argon2id, time: 4, memory: 32, cpus: 1 };
/// assert_eq!(k.name(), "argon2id");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KdfParams {
    /// PBKDF2-HMAC with `hash` and `iterations` (at least 1000).
    Pbkdf2 {
        /// The hash.
        hash: Hash,
        /// The iteration count.
        iterations: u32,
    },
    /// Argon2 v1.3.
    Argon2 {
        /// Argon2i or Argon2id.
        variant: Argon2Variant,
        /// Passes (at least 4, cryptsetup's minimum).
        time: u32,
        /// Memory in KiB (at least 32).
        memory: u32,
        /// Threads and lanes.
        cpus: u32,
    },
}

impl KdfParams {
    /// The KDF's name in the metadata.
    ///
    /// ```
    /// use mdu_luks2::{Hash, KdfParams};
    /// assert_eq!(KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 }.name(), "pbkdf2");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            KdfParams::Pbkdf2 { .. } => "pbkdf2",
            KdfParams::Argon2 { variant, .. } => variant.name(),
        }
    }
    /// The KDF of a keyslot with these parameters and `salt`.
    pub(crate) fn salted(self, salt: Vec<u8>) -> Kdf {
        match self {
            KdfParams::Pbkdf2 { hash, iterations } => Kdf::Pbkdf2 {
                hash,
                iterations,
                salt,
            },
            KdfParams::Argon2 {
                variant,
                time,
                memory,
                cpus,
            } => Kdf::Argon2 {
                variant,
                time,
                memory,
                cpus,
                salt,
            },
        }
    }

    /// The parameters of `kdf`, its salt left out.
    pub(crate) fn of(kdf: &Kdf) -> KdfParams {
        match *kdf {
            Kdf::Pbkdf2 {
                hash, iterations, ..
            } => KdfParams::Pbkdf2 { hash, iterations },
            Kdf::Argon2 {
                variant,
                time,
                memory,
                cpus,
                ..
            } => KdfParams::Argon2 {
                variant,
                time,
                memory,
                cpus,
            },
        }
    }
}

/// What a new image looks like.
///
/// ```
/// let p = mdu_luks2::FormatParams::default();
/// assert_eq!((p.cipher.to_string(), p.key_size, p.data_offset), ("aes-xts-plain64".into(), 64, 16 << 20));
/// assert_eq!(p.weak_keys, mdu_luks2::WeakKeys::Refuse);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatParams {
    /// Cipher spec of the data segment and of the keyslot area.
    pub cipher: CipherSpec,
    /// Volume key size in bytes.
    pub key_size: usize,
    /// Encryption sector size (512..4096).
    pub sector_size: u32,
    /// Keyslot 0's key derivation.
    pub kdf: KdfParams,
    /// Iterations of the volume-key digest (PBKDF2-SHA-256), at least 1000.
    pub digest_iterations: u32,
    /// UUID (`None`: a random version-4 UUID).
    pub uuid: Option<String>,
    /// Label.
    pub label: String,
    /// Subsystem.
    pub subsystem: String,
    /// Header copy size, one of [`HEADER_SIZES`].
    pub hdr_size: u64,
    /// Start of the data segment in bytes; the keyslots area fills the
    /// space between the headers and it.
    pub data_offset: u64,
    /// Whether a volume key whose XTS halves are equal is accepted
    /// ([`WeakKeys`]; refused by default).
    pub weak_keys: WeakKeys,
}

impl Default for FormatParams {
    /// cryptsetup's defaults ([`FormatChoices`]' constants):
    /// aes-xts-plain64 with a 512-bit key, Argon2id with 4 passes, 1 GiB
    /// and 4 threads, 16 KiB headers, data at 16 MiB; 512-byte sectors
    /// (those any device takes; [`FormatChoices`] picks 4096, as
    /// luksFormat does for a file).
    fn default() -> FormatParams {
        FormatParams {
            cipher: CipherSpec::new(mdu_dmcrypt::ChainMode::Xts, mdu_dmcrypt::IvMode::Plain64),
            key_size: 64,
            sector_size: 512,
            kdf: KdfParams::Argon2 {
                variant: Argon2Variant::Argon2id,
                time: FormatChoices::ARGON2_TIME,
                memory: FormatChoices::ARGON2_MEMORY_KIB,
                cpus: FormatChoices::ARGON2_PARALLEL,
            },
            digest_iterations: FormatChoices::DIGEST_ITERATIONS,
            uuid: None,
            label: String::new(),
            subsystem: String::new(),
            hdr_size: 16 << 10,
            data_offset: FormatChoices::DATA_OFFSET,
            weak_keys: WeakKeys::Refuse,
        }
    }
}

/// Random bytes from the operating system (for [`format()`]).
///
/// ```
/// let mut a = [0u8; 32];
/// mdu_luks2::os_random(&mut a)?;
/// assert!(a.iter().any(|&b| b != 0));
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn os_random(buf: &mut [u8]) -> Result<(), Error> {
    getrandom::fill(buf).map_err(|e| Error::Params {
        problem: format!("cannot get random bytes: {e}"),
    })
}

/// Whether `s` is a textual UUID: 8-4-4-4-12 hex digits.
fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The largest data offset [`FormatParams::validate`] accepts: the data
/// segment's first sector must end at a file offset (`off_t`, below
/// 2^63), as on Linux every file and block device.
///
/// ```
/// assert_eq!(mdu_luks2::MAX_DATA_OFFSET, (1 << 63) - 4096);
/// ```
pub const MAX_DATA_OFFSET: u64 = (1 << 63) - 4096;

impl FormatParams {
    /// Checks every parameter, cheaply and before any key derivation (so a
    /// caller can call it before it reads a passphrase): the header size;
    /// the cipher spec, key size and sector size; the data offset (a
    /// multiple of 4096 and of the sector size, at most
    /// [`MAX_DATA_OFFSET`], leaving room for keyslot 0 after the two
    /// headers); the digest and KDF costs (cryptsetup's minimums); the
    /// label and subsystem (at most 47 bytes, no NUL); the UUID.
    /// [`format()`] calls it first.
    ///
    /// ```
    /// use mdu_luks2::FormatParams;
    /// assert!(FormatParams::default().validate().is_ok());
    /// let p = FormatParams { data_offset: 1 << 62, label: "x".repeat(48), ..FormatParams::default() };
    /// let err = p.validate().unwrap_err().to_string();
    /// assert!(err.contains("label"), "{err}");
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |problem: String| Err(Error::Params { problem });
        let hdr = self.hdr_size;
        if !HEADER_SIZES.contains(&hdr) {
            return bad(format!(
                "header size {hdr} is not a power of two in 16 KiB..4 MiB"
            ));
        }
        self.cipher.check_key_len(self.key_size)?;
        let ss = self.sector_size;
        if !matches!(ss, 512 | 1024 | 2048 | 4096) {
            return bad(format!(
                "sector size {ss} is not 512, 1024, 2048 or 4096 bytes"
            ));
        }
        let off = self.data_offset;
        if !off.is_multiple_of(4096) || !off.is_multiple_of(u64::from(ss)) {
            return bad(format!(
                "data offset {off} is not a multiple of 4096 and of the sector size {ss}"
            ));
        }
        if off > MAX_DATA_OFFSET {
            return bad(format!(
                "data offset {off} lies beyond {MAX_DATA_OFFSET}, the last sector a file offset (below 2^63) can reach"
            ));
        }
        let keyslots_size = off.saturating_sub(2 * hdr).min(MAX_KEYSLOTS_SIZE);
        let area_size = self.keyslot_area_size();
        if keyslots_size < area_size {
            return bad(format!(
                "data offset {off} leaves {keyslots_size} bytes for keyslots after the two {hdr}-byte headers; keyslot 0 needs {area_size}"
            ));
        }
        if self.digest_iterations < 1000 {
            return bad(format!(
                "the digest needs at least 1000 iterations, not {}",
                self.digest_iterations
            ));
        }
        match self.kdf {
            KdfParams::Pbkdf2 { iterations, .. } => {
                if iterations < 1000 {
                    return bad(format!(
                        "PBKDF2 needs at least 1000 iterations, not {iterations}"
                    ));
                }
            }
            KdfParams::Argon2 {
                time, memory, cpus, ..
            } => {
                if time < 4
                    || memory < 32
                    || cpus == 0
                    || cpus > (1 << 24) - 1
                    || u64::from(memory) < 8 * u64::from(cpus)
                    || memory > crate::ARGON2_MAX_MEMORY_KIB
                {
                    return bad(format!(
                        "Argon2 needs time >= 4, memory 32..={} KiB and >= 8 KiB per thread, threads 1..2^24 (got time {time}, memory {memory}, threads {cpus})",
                        crate::ARGON2_MAX_MEMORY_KIB
                    ));
                }
            }
        }
        for (field, s) in [("label", &self.label), ("subsystem", &self.subsystem)] {
            if s.len() > 47 || s.as_bytes().contains(&0) {
                return bad(format!(
                    "the {field} {s:?} does not fit: at most 47 bytes, no NUL"
                ));
            }
        }
        if let Some(u) = &self.uuid
            && !is_uuid(u)
        {
            return bad(format!("{u:?} is not a UUID (8-4-4-4-12 hex digits)"));
        }
        Ok(())
    }

    /// The keyslots area size of a new image: the space between the
    /// headers and the data, at most [`MAX_KEYSLOTS_SIZE`].
    fn keyslots_size(&self) -> u64 {
        self.data_offset
            .saturating_sub(2 * self.hdr_size)
            .min(MAX_KEYSLOTS_SIZE)
    }

    /// The area of keyslot 0: its AF material rounded up to 4096 bytes.
    fn keyslot_area_size(&self) -> u64 {
        (self.key_size as u64)
            .saturating_mul(u64::from(AF_STRIPES))
            .div_ceil(4096)
            .saturating_mul(4096)
    }

    /// The length of the header region [`format()`] returns: both headers
    /// and the keyslots area, `2 * hdr_size + keyslots_size`.
    ///
    /// ```
    /// let p = mdu_luks2::FormatParams { data_offset: 1 << 40, ..Default::default() };
    /// assert_eq!(p.header_region_len(), 2 * 16384 + (128 << 20));
    /// ```
    pub fn header_region_len(&self) -> u64 {
        2 * self.hdr_size + self.keyslots_size()
    }
}

/// Writes a new LUKS2 header region: both header copies (seqid 1) and the
/// keyslots area, filled with random bytes and holding keyslot 0, which
/// keeps `volume_key` under `passphrase`; `2 * hdr_size + keyslots_size`
/// bytes ([`FormatParams::header_region_len`]), where the keyslots area
/// fills the space up to the data offset, at most 128 MiB.
///
/// The data segment (size `dynamic`) starts at `params.data_offset`,
/// which may lie far beyond the region: the caller places the data there,
/// and the bytes between the region and it are not part of the header (in
/// a new file, a hole of zeros). Salts, the UUID and the AF stripes come
/// from `random`. The parameters are checked first
/// ([`FormatParams::validate`]).
///
/// ```
/// use mdu_luks2::{format, os_random, FormatParams, Hash, Image, KdfParams};
/// let params = FormatParams {
///     cipher: "aes-cbc-essiv:sha256".parse()?, key_size: 32, sector_size: 4096,
///     kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
///     digest_iterations: 1000, data_offset: 2 << 20, ..FormatParams::default()
/// };
/// let mut image = format(&params, b"pw", &[9u8; 32], &mut os_random)?;
/// assert_eq!(image.len(), 2 << 20);
/// // Data far away: the region stays small, the data go at data_offset.
/// let far = FormatParams { data_offset: 1 << 40, ..params.clone() };
/// let region = format(&far, b"pw", &[9u8; 32], &mut os_random)?;
/// assert_eq!(region.len() as u64, far.header_region_len());
/// assert_eq!(Image::load(&image[..])?.metadata.segments[&0].sector_size, 4096);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn format(
    params: &FormatParams,
    passphrase: &[u8],
    volume_key: &[u8],
    random: &mut dyn FnMut(&mut [u8]) -> Result<(), Error>,
) -> Result<Vec<u8>, Error> {
    params.validate()?;
    let bad = |problem: String| Err(Error::Params { problem });
    let hdr = params.hdr_size;
    if volume_key.len() != params.key_size {
        return bad(format!(
            "the volume key has {} bytes, the parameters say {}",
            volume_key.len(),
            params.key_size
        ));
    }
    // The key itself: its length and the weak-key policy (XTS halves).
    params.cipher.check_key(volume_key, params.weak_keys)?;
    let off = params.data_offset;
    let keyslots_size = params.keyslots_size();
    let area_size = params.keyslot_area_size();
    let mut salt = vec![0u8; 32];
    random(&mut salt)?;
    let kdf = params.kdf.salted(salt);
    let uuid = match &params.uuid {
        Some(u) => u.to_ascii_lowercase(),
        None => {
            let mut b = [0u8; 16];
            random(&mut b)?;
            b[6] = (b[6] & 0x0f) | 0x40;
            b[8] = (b[8] & 0x3f) | 0x80;
            let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
            format!(
                "{}-{}-{}-{}-{}",
                &h[..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..]
            )
        }
    };
    let area_offset = 2 * hdr;

    let (keyslot, material) = new_keyslot(
        kdf,
        AreaCrypt::of(params.cipher, volume_key.len()),
        passphrase,
        volume_key,
        (area_offset, area_size),
        0,
        random,
    )?;

    let mut digest_salt = vec![0u8; 32];
    random(&mut digest_salt)?;
    let digest = Digest::of_key(
        volume_key,
        Hash::Sha256,
        params.digest_iterations,
        digest_salt,
        vec![0],
        vec![0],
    );
    let metadata = Metadata {
        reencrypt: None,
        keyslots: BTreeMap::from([(0, keyslot)]),
        tokens: serde_json::Map::new(),
        segments: BTreeMap::from([(
            0,
            Segment::crypt(off, None, 0, params.cipher, params.sector_size),
        )]),
        digests: BTreeMap::from([(0, digest)]),
        config: Config {
            json_size: hdr - BINARY_HEADER_LEN as u64,
            keyslots_size,
            flags: Vec::new(),
            requirements: None,
        },
    };
    metadata.validate(hdr, Some(off))?;
    let json = metadata.to_json();
    if json.len() >= (hdr as usize) - BINARY_HEADER_LEN {
        return bad(format!(
            "the metadata ({} bytes) do not fit the {hdr}-byte header",
            json.len()
        ));
    }

    // At most 2 * 4 MiB + 128 MiB, whatever the data offset.
    let region_len = usize::try_from(params.header_region_len()).map_err(|_| Error::Params {
        problem: "the header region does not fit in memory".into(),
    })?;
    let mut image = vec![0u8; region_len];
    let area = area_offset as usize;
    random(&mut image[area..])?;
    image[area..area + material.len()].copy_from_slice(&material);
    for secondary in [false, true] {
        let at = if secondary { hdr as usize } else { 0 };
        let mut bh = BinaryHeader::new(hdr, &uuid);
        bh.secondary = secondary;
        bh.hdr_offset = at as u64;
        bh.label = params.label.clone();
        bh.subsystem = params.subsystem.clone();
        random(&mut bh.salt)?;
        let copy = &mut image[at..at + hdr as usize];
        copy[..BINARY_HEADER_LEN].copy_from_slice(&bh.to_bytes()?);
        copy[BINARY_HEADER_LEN..BINARY_HEADER_LEN + json.len()].copy_from_slice(json.as_bytes());
        seal(copy);
    }
    Ok(image)
}

/// How a keyslot area is encrypted and its key split: the area cipher,
/// its key size in bytes (what the KDF derives) and the hash of the
/// anti-forensic splitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AreaCrypt {
    pub(crate) cipher: CipherSpec,
    pub(crate) key_size: usize,
    pub(crate) af_hash: Hash,
}

impl AreaCrypt {
    /// `cipher` with a key of `key_size` bytes, split with SHA-256 (what
    /// luksFormat writes by default).
    pub(crate) fn of(cipher: CipherSpec, key_size: usize) -> AreaCrypt {
        AreaCrypt {
            cipher,
            key_size,
            af_hash: Hash::Sha256,
        }
    }
}

/// A `luks2` keyslot `slot` keeping `volume_key` under `passphrase` with
/// `kdf` (its salt included), its area `(offset, size)` encrypted as
/// `crypt` says: the keyslot and its encrypted AF material (a multiple of
/// 512 bytes, to write at the area offset).
pub(crate) fn new_keyslot(
    kdf: Kdf,
    crypt: AreaCrypt,
    passphrase: &[u8],
    volume_key: &[u8],
    (area_offset, area_size): (u64, u64),
    slot: u32,
    random: &mut dyn FnMut(&mut [u8]) -> Result<(), Error>,
) -> Result<(Keyslot, Zeroizing<Vec<u8>>), Error> {
    let key_size = u32::try_from(volume_key.len()).unwrap_or(u32::MAX);
    let area_key_size = u32::try_from(crypt.key_size).unwrap_or(u32::MAX);
    crypt.cipher.check_key_len(crypt.key_size)?;
    let material_len = volume_key.len() * AF_STRIPES as usize;
    let derived = kdf.derive(passphrase, crypt.key_size, slot)?;
    let split = af::split(volume_key, AF_STRIPES, crypt.af_hash, random)?;
    let mut material = Zeroizing::new(vec![0u8; material_len.div_ceil(512) * 512]);
    material[..material_len].copy_from_slice(&split);
    drop(split);
    area_cipher(crypt.cipher, &derived)?.crypt(Direction::Encrypt, 0, &mut material)?;
    drop(derived);
    let keyslot = Keyslot {
        key_size,
        af_stripes: i64::from(AF_STRIPES),
        af_hash: crypt.af_hash,
        area: KeyslotArea {
            offset: area_offset,
            size: area_size,
            encryption: Encryption::from(crypt.cipher),
            key_size: area_key_size,
        },
        kdf,
        priority: None,
    };
    Ok((keyslot, material))
}

/// Both header copies (`2 * hdr_size` bytes) holding `m`, with `seqid`,
/// the text fields of `template` and a new random salt each.
pub(crate) fn header_copies(
    template: &BinaryHeader,
    seqid: u64,
    m: &Metadata,
) -> Result<Vec<u8>, Error> {
    let hdr = template.hdr_size;
    m.validate(hdr, None)?;
    let json = m.to_json();
    let hdr_len = usize::try_from(hdr).map_err(|_| Error::Params {
        problem: "the header does not fit in memory".into(),
    })?;
    if json.len() >= hdr_len - BINARY_HEADER_LEN {
        return Err(Error::Params {
            problem: format!(
                "the metadata ({} bytes) do not fit the {hdr}-byte header",
                json.len()
            ),
        });
    }
    let mut out = vec![0u8; 2 * hdr_len];
    for (secondary, copy) in [false, true].into_iter().zip(out.chunks_exact_mut(hdr_len)) {
        let mut bh = template.clone();
        bh.secondary = secondary;
        bh.hdr_offset = if secondary { hdr } else { 0 };
        bh.seqid = seqid;
        os_random(&mut bh.salt)?;
        copy[..BINARY_HEADER_LEN].copy_from_slice(&bh.to_bytes()?);
        copy[BINARY_HEADER_LEN..BINARY_HEADER_LEN + json.len()].copy_from_slice(json.as_bytes());
        seal(copy);
    }
    Ok(out)
}

/// As [`format()`], for a detached header (`cryptsetup luksFormat
/// --header`): the data segment starts at offset 0 of another device, and
/// `data_offset` only sizes the keyslots area. The region returned is the
/// whole header file.
///
/// ```
/// use mdu_luks2::{format_detached, os_random, FormatParams, Hash, Image, KdfParams};
/// let params = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
///     data_offset: 1 << 20, ..FormatParams::default() };
/// let header = format_detached(&params, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// let img = Image::load(&header[..])?;
/// assert_eq!(img.segment()?.1.offset, 0);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn format_detached(
    params: &FormatParams,
    passphrase: &[u8],
    volume_key: &[u8],
    random: &mut dyn FnMut(&mut [u8]) -> Result<(), Error>,
) -> Result<Vec<u8>, Error> {
    let mut region = format(params, passphrase, volume_key, random)?;
    let img = crate::Image::load(&region[..])?;
    let mut m = img.metadata;
    for s in m.segments.values_mut() {
        s.offset = 0;
    }
    let copies = header_copies(&img.header, img.header.seqid, &m)?;
    region[..copies.len()].copy_from_slice(&copies);
    Ok(region)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Image, KdfParams};
    use mdu_dmcrypt::{Direction, Geometry, SectorCipher};

    /// Images over the other block ciphers: the keyslot area and the data
    /// segment use the spec; the image loads, unlocks through the keyslot
    /// (whose area is encrypted with that cipher) and its segment cipher
    /// is dm-crypt's for the spec. (cryptsetup cannot open these where
    /// the kernel lacks the cipher's module.)
    #[test]
    #[cfg_attr(
        miri,
        ignore = "PBKDF2 and whole key areas are minutes in the interpreter"
    )]
    fn images_over_serpent_twofish_camellia_and_sm4_unlock_and_encrypt() {
        let cases = [
            ("serpent-xts-plain64", 64),
            ("twofish-xts-plain64", 32),
            ("camellia-xts-plain64", 48),
            ("sm4-xts-plain64", 32),
            ("serpent-cbc-essiv:sha256", 32),
            ("twofish-cbc-essiv:sha256", 32),
            ("camellia-cbc-essiv:sha256", 16),
            ("sm4-cbc-plain64", 16),
        ];
        for (spec, key_size) in cases {
            let p = FormatParams {
                cipher: spec.parse().unwrap(),
                key_size,
                kdf: KdfParams::Pbkdf2 {
                    hash: crate::Hash::Sha256,
                    iterations: 1000,
                },
                digest_iterations: 1000,
                data_offset: 1 << 20,
                ..FormatParams::default()
            };
            let vk: Vec<u8> = (0..key_size as u8)
                .map(|b| b.wrapping_mul(11) ^ 5)
                .collect();
            let mut img = format(&p, b"pw", &vk, &mut os_random).unwrap();
            img.resize((1 << 20) + 4096, 0);
            let loaded = Image::load(&img[..]).unwrap();
            let json = loaded.metadata.to_json();
            assert_eq!(
                json.matches(&format!("\"encryption\":\"{spec}\"")).count(),
                2,
                "{json}"
            );
            let key = loaded.unlock(&img[..], b"pw").unwrap();
            assert_eq!(&key.key[..], &vk[..], "{spec}");
            assert!(
                loaded
                    .unlock(&img[..], b"px")
                    .unwrap_err()
                    .is_wrong_passphrase()
            );
            let c = loaded.segment_cipher(&key, WeakKeys::Refuse).unwrap();
            let direct = SectorCipher::new(
                p.cipher,
                &vk,
                Geometry::new(p.sector_size, 0, false).unwrap(),
                WeakKeys::Refuse,
            )
            .unwrap();
            let (mut a, mut b) = (vec![7u8; 2048], vec![7u8; 2048]);
            c.crypt(Direction::Encrypt, 3, &mut a).unwrap();
            direct.crypt(Direction::Encrypt, 3, &mut b).unwrap();
            assert_eq!(a, b, "{spec}");
            assert_ne!(a, vec![7u8; 2048]);
        }
    }
}
