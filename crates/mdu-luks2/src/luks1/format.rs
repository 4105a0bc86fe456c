//! A new LUKS1 image laid out as `cryptsetup luksFormat --type luks1`
//! lays it out.

use mdu_dmcrypt::{CipherSpec, WeakKeys};

use super::header::{
    DIGEST_LEN, HEADER_LEN, Header, MAX_ITERATIONS, MIN_ITERATIONS, SALT_LEN, SLOTS, Slot,
    material_sectors,
};
use super::keyslot::split_material;
use crate::format::{is_uuid, uuid_or_random};
use crate::{Error, FormatChoices, Hash};

/// The first key slot's sector (4 KiB: the header, then alignment).
const FIRST_SLOT: u32 = 8;
/// Key slots start on 4 KiB boundaries.
const SLOT_ALIGN: u32 = 8;
/// cryptsetup's default payload alignment: 1 MiB, in sectors.
const PAYLOAD_ALIGN: u32 = 2048;

/// The parameters of a new LUKS1 image ([`format()`]).
///
/// ```
/// use mdu_luks2::luks1::FormatParams;
/// use mdu_luks2::{CipherSpec, Hash};
/// let p = FormatParams {
///     cipher: CipherSpec::parse("aes-cbc-essiv:sha256")?,
///     key_size: 32,
///     hash: Hash::Sha1,
///     iterations: 1000,
///     ..FormatParams::default()
/// };
/// assert_eq!(p.payload_offset()?, 4096);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatParams {
    /// The cipher spec of the data and the key material.
    pub cipher: CipherSpec,
    /// The volume key length in bytes.
    pub key_size: usize,
    /// The hash of PBKDF2, the AF splitter and the digest.
    pub hash: Hash,
    /// PBKDF2 iterations of key slot 0 (at least 1000).
    pub iterations: u32,
    /// PBKDF2 iterations of the volume-key digest (at least 1000).
    pub digest_iterations: u32,
    /// The UUID (`None`: a random version-4 UUID).
    pub uuid: Option<String>,
    /// Where the data start, in bytes (a multiple of 512 past the key
    /// slots); `None`: the end of the key slots rounded up to 1 MiB, as
    /// cryptsetup does.
    pub data_offset: Option<u64>,
    /// Whether a volume key whose XTS halves are equal is accepted.
    pub weak_keys: WeakKeys,
}

impl Default for FormatParams {
    /// `aes-xts-plain64` with a 512-bit key and SHA-256, cryptsetup's LUKS1
    /// defaults; PBKDF2 iterations [`FormatChoices::PBKDF2_ITERATIONS`] (a
    /// fixed count where cryptsetup measures one) and a digest of
    /// [`FormatChoices::DIGEST_ITERATIONS`].
    fn default() -> FormatParams {
        FormatParams {
            cipher: CipherSpec::new(mdu_dmcrypt::ChainMode::Xts, mdu_dmcrypt::IvMode::Plain64),
            key_size: 64,
            hash: Hash::Sha256,
            iterations: FormatChoices::PBKDF2_ITERATIONS,
            digest_iterations: FormatChoices::DIGEST_ITERATIONS,
            uuid: None,
            data_offset: None,
            weak_keys: WeakKeys::Refuse,
        }
    }
}

/// Each slot's key material offset and the end of the key slots, in
/// sectors, for a `key_bytes`-byte key: slot 0 at sector 8, each next one
/// on the next 4 KiB boundary.
pub(crate) fn slot_layout(key_bytes: u32) -> ([u32; SLOTS], u32) {
    let sectors = material_sectors(key_bytes);
    let mut offsets = [0u32; SLOTS];
    let mut at = FIRST_SLOT;
    for o in &mut offsets {
        *o = at;
        at = (at + sectors).div_ceil(SLOT_ALIGN) * SLOT_ALIGN;
    }
    (offsets, at)
}

impl FormatParams {
    /// The payload offset in 512-byte sectors these parameters give, every
    /// parameter checked.
    ///
    /// # Errors
    ///
    /// [`Error::Params`] for a key size the cipher does not take, too few
    /// iterations, a UUID that is not one, or a data offset that is not a
    /// multiple of 512 past the key slots.
    ///
    /// ```
    /// use mdu_luks2::luks1::FormatParams;
    /// let p = FormatParams { data_offset: Some(4096 * 512), ..FormatParams::default() };
    /// assert_eq!(p.payload_offset()?, 4096);
    /// let small = FormatParams { data_offset: Some(1 << 20), ..FormatParams::default() };
    /// assert!(small.payload_offset().is_err());
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn payload_offset(&self) -> Result<u32, Error> {
        let params = |problem: String| Error::Params { problem };
        self.cipher
            .check_key_len(self.key_size)
            .map_err(|e| params(e.to_string()))?;
        for (what, n) in [
            ("key slot 0", self.iterations),
            ("the volume-key digest", self.digest_iterations),
        ] {
            if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&n) {
                return Err(params(format!(
                    "{what} needs {MIN_ITERATIONS} to {MAX_ITERATIONS} PBKDF2 iterations, not {n}"
                )));
            }
        }
        if let Some(u) = &self.uuid
            && !is_uuid(u)
        {
            return Err(params(format!(
                "{u:?} is not a UUID (8-4-4-4-12 hex digits)"
            )));
        }
        let (_, end) = slot_layout(self.key_size as u32);
        match self.data_offset {
            None => Ok(end.div_ceil(PAYLOAD_ALIGN) * PAYLOAD_ALIGN),
            Some(b) => {
                let sectors = u32::try_from(b / 512).ok().filter(|_| b % 512 == 0);
                match sectors {
                    Some(s) if s >= end => Ok(s),
                    _ => Err(params(format!(
                        "the data offset {b} must be a multiple of 512 bytes at or past the end \
                         of the key slots ({} bytes) and below 2 TiB",
                        u64::from(end) * 512
                    ))),
                }
            }
        }
    }
}

/// The header region of a new LUKS1 image (the payload offset's bytes):
/// the header, key slot 0 holding `volume_key` under `passphrase`, the
/// other slots' areas random and disabled, zeros between, as
/// `cryptsetup luksFormat --type luks1` writes them. The data follow at
/// [`Header::payload_offset`] sectors.
///
/// # Errors
///
/// What [`FormatParams::payload_offset`] refuses; [`Error::Cipher`] for a
/// volume key the cipher or the weak-key policy refuses;
/// [`Error::UnsupportedCipherMode`] never (the spec is one this crate runs).
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// let key: Vec<u8> = (0..64).collect();
/// let region = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &key, &mut mdu_luks2::os_random)?;
/// assert_eq!(region.len(), 2 << 20);
/// let hdr = Header::load(&region[..])?;
/// assert_eq!(&hdr.unlock(&region[..], b"pw")?.key[..], &key[..]);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn format(
    params: &FormatParams,
    passphrase: &[u8],
    volume_key: &[u8],
    random: &mut dyn FnMut(&mut [u8]) -> Result<(), Error>,
) -> Result<Vec<u8>, Error> {
    let payload = params.payload_offset()?;
    if volume_key.len() != params.key_size {
        return Err(Error::Params {
            problem: format!(
                "the volume key has {} bytes, the parameters say {}",
                volume_key.len(),
                params.key_size
            ),
        });
    }
    params.cipher.check_key(volume_key, params.weak_keys)?;
    let key_bytes = params.key_size as u32;
    let (offsets, _) = slot_layout(key_bytes);
    let mut mk_digest_salt = [0u8; SALT_LEN];
    random(&mut mk_digest_salt)?;
    let uuid = uuid_or_random(params.uuid.as_deref(), random)?;
    let spec = params.cipher;
    let name = spec.cipher().name();
    let full = spec.to_string();
    let mut hdr = Header {
        cipher_name: name.to_owned(),
        cipher_mode: full[name.len() + 1..].to_owned(),
        hash: params.hash,
        payload_offset: payload,
        key_bytes,
        mk_digest: [0; DIGEST_LEN],
        mk_digest_salt,
        mk_digest_iterations: params.digest_iterations,
        uuid,
        slots: offsets.map(Slot::disabled),
    };
    params.hash.pbkdf2(
        volume_key,
        &hdr.mk_digest_salt,
        hdr.mk_digest_iterations,
        &mut hdr.mk_digest,
    );
    hdr.slots[0].enabled = true;
    hdr.slots[0].iterations = params.iterations;
    random(&mut hdr.slots[0].salt)?;
    let bytes = hdr.to_bytes()?;

    let mut region = vec![0u8; payload as usize * 512];
    region[..HEADER_LEN].copy_from_slice(&bytes);
    for i in 1..SLOTS {
        let (off, len) = hdr.material_range(i);
        random(&mut region[off as usize..(off + len) as usize])?;
    }
    let material = split_material(&hdr, 0, volume_key, passphrase, spec, random)?;
    let (off, _) = hdr.material_range(0);
    region[off as usize..off as usize + material.len()].copy_from_slice(&material);
    Ok(region)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_and_payload_are_laid_out_as_cryptsetup_lays_them() {
        // Offsets of slots 0 and 1 and the default payload offset, from
        // `cryptsetup luksFormat --type luks1` on image files.
        for (key, slot1, payload) in [(16, 136, 2048), (32, 264, 4096), (64, 512, 4096)] {
            let (offsets, _) = slot_layout(key);
            assert_eq!((offsets[0], offsets[1]), (8, slot1), "{key}-byte key");
            let p = FormatParams {
                key_size: key as usize,
                cipher: CipherSpec::parse(if key == 16 {
                    "aes-cbc-plain"
                } else {
                    "aes-xts-plain64"
                })
                .unwrap(),
                ..FormatParams::default()
            };
            assert_eq!(p.payload_offset().unwrap(), payload, "{key}-byte key");
        }
    }
}
