//! LUKS1 ↔ LUKS2 in place, as `cryptsetup convert --type luks2|luks1`
//! does it: the key slots keep their material, salts and iterations, the
//! volume key and the data stay where they are; only the headers change
//! and the key material moves by 28 KiB (the LUKS1 key slots start at
//! 4 KiB, LUKS2's after two 16 KiB headers).
//!
//! Neither direction is crash-safe, as neither is in cryptsetup: the key
//! material is moved over the old header's areas before the new header is
//! written. Back the header up first (`cryptsetup luksHeaderBackup`).

use std::collections::BTreeMap;

use mdu_core::io::WriteAt;

use super::format::slot_layout;
use super::header::{HEADER_LEN, Header, SALT_LEN, SLOTS, STRIPES, Slot};
use super::keyslot::write_header;
use crate::format::header_copies;
use crate::image::read_checked;
use crate::{
    BinaryHeader, Config, Digest, Encryption, Error, Image, Kdf, Keyslot, KeyslotArea, Metadata,
    Segment, SegmentKind,
};

/// The LUKS2 header size a conversion writes (each of the two copies).
const LUKS2_HDR: u64 = 16 << 10;
/// How far the key material moves: from 4 KiB to 32 KiB.
const SHIFT: u64 = 2 * LUKS2_HDR - 4096;
/// The epoch of a converted header: cryptsetup writes the new metadata
/// with sequence 1 and its header write increments it.
const CONVERTED_EPOCH: u64 = 2;

fn refuse(problem: impl Into<String>) -> Error {
    Error::Params {
        problem: problem.into(),
    }
}

/// The LUKS2 metadata `cryptsetup convert --type luks2` makes of `hdr`:
/// a `luks2` keyslot (PBKDF2, the header's hash for the KDF and the AF
/// splitter) for each enabled slot, its area 28 KiB further; the
/// `pbkdf2` digest of the header's 20 bytes; one crypt segment from the
/// payload offset, 512-byte sectors.
///
/// # Errors
///
/// [`Error::Params`] for a detached header (payload offset 0) or key
/// slots that cannot move 28 KiB up before the payload ("not enough
/// space", as cryptsetup says).
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
/// let m = luks1::luks2_metadata(&Header::load(&image[..])?)?;
/// assert_eq!(m.keyslots[&0].area.offset, 32768);
/// assert_eq!(m.config.keyslots_size, (2 << 20) - 32768);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn luks2_metadata(hdr: &Header) -> Result<Metadata, Error> {
    let payload = u64::from(hdr.payload_offset) * 512;
    if payload == 0 {
        return Err(refuse(
            "a detached LUKS1 header (payload offset 0) is not converted",
        ));
    }
    let (_, area_len) = hdr.material_range(0);
    let end = (0..SLOTS)
        .map(|i| hdr.material_range(i).0 + area_len)
        .max()
        .unwrap_or(0);
    if end + SHIFT > payload {
        return Err(refuse(format!(
            "unable to move the key slot area 28 KiB up: not enough space before the payload \
             (key slots end at {end}, the payload starts at {payload})"
        )));
    }
    let encryption = Encryption::parse(&format!("{}-{}", hdr.cipher_name, hdr.cipher_mode));
    let area_size = area_len.div_ceil(4096) * 4096;
    let mut keyslots = BTreeMap::new();
    for (i, s) in hdr.slots.iter().enumerate().filter(|(_, s)| s.enabled) {
        keyslots.insert(
            i as u32,
            Keyslot {
                key_size: hdr.key_bytes,
                af_stripes: i64::from(s.stripes),
                af_hash: hdr.hash,
                area: KeyslotArea {
                    offset: u64::from(s.key_material_offset) * 512 + SHIFT,
                    size: area_size,
                    encryption: encryption.clone(),
                    key_size: hdr.key_bytes,
                },
                kdf: Kdf::Pbkdf2 {
                    hash: hdr.hash,
                    iterations: s.iterations,
                    salt: s.salt.to_vec(),
                },
                priority: None,
            },
        );
    }
    let digest = Digest {
        keyslots: keyslots.keys().copied().collect(),
        segments: vec![0],
        hash: hdr.hash,
        iterations: hdr.mk_digest_iterations,
        salt: hdr.mk_digest_salt.to_vec(),
        digest: hdr.mk_digest.to_vec(),
    };
    let m = Metadata {
        keyslots,
        unusable_keyslots: BTreeMap::new(),
        unusable_digests: BTreeMap::new(),
        reencrypt: None,
        tokens: serde_json::Map::new(),
        segments: BTreeMap::from([(
            0,
            Segment {
                kind: SegmentKind::Crypt,
                offset: payload,
                size: None,
                iv_tweak: 0,
                encryption,
                sector_size: 512,
                flags: Vec::new(),
                extra: serde_json::Map::new(),
            },
        )]),
        digests: BTreeMap::from([(0, digest)]),
        config: Config {
            json_size: LUKS2_HDR - crate::BINARY_HEADER_LEN as u64,
            keyslots_size: payload - 2 * LUKS2_HDR,
            flags: Vec::new(),
            requirements: None,
        },
    };
    m.validate(LUKS2_HDR, Some(payload))?;
    Ok(m)
}

/// Converts the LUKS1 image `dev` whose header is `hdr` to LUKS2 in place,
/// as `cryptsetup convert --type luks2`: the key slot area moves 28 KiB up
/// (synced), then both LUKS2 header copies ([`luks2_metadata`], the
/// header's UUID, epoch 2 as cryptsetup writes it) are written over the
/// start (synced). The passphrases and the volume key stay as they were.
///
/// # Errors
///
/// What [`luks2_metadata`] refuses (nothing is written then); a failed
/// read or write.
///
/// ```
/// use mdu_luks2::luks1::{self, FormatParams, Header};
/// # let image = luks1::format(&FormatParams { iterations: 1000, digest_iterations: 1000, ..FormatParams::default() }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut mdu_luks2::os_random)?;
/// let path = std::env::temp_dir().join(format!("mdu-luks1-to-2-{}", std::process::id()));
/// std::fs::write(&path, &image)?;
/// let f = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
/// luks1::convert_to_luks2(&f, &Header::load(&f)?)?;
/// let img = mdu_luks2::Image::load(&f)?;
/// assert_eq!(&img.unlock(&f, b"pw")?.key[..], &(0..64).collect::<Vec<u8>>()[..]);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert_to_luks2<W: WriteAt + ?Sized>(dev: &W, hdr: &Header) -> Result<(), Error> {
    let m = luks2_metadata(hdr)?;
    let template = BinaryHeader::new(LUKS2_HDR, &hdr.uuid);
    let copies = header_copies(&template, CONVERTED_EPOCH, &m)?;
    let (_, area_len) = hdr.material_range(0);
    let end = (0..SLOTS)
        .map(|i| hdr.material_range(i).0 + area_len)
        .max()
        .unwrap_or(0);
    let len = dev.size()?;
    let area = zeroize::Zeroizing::new(read_checked(
        dev,
        len,
        "LUKS1 key slot area",
        4096,
        end - 4096,
    )?);
    dev.write_all_at(&area, 4096 + SHIFT)?;
    dev.sync()?;
    dev.write_all_at(&copies, 0)?;
    Ok(dev.sync()?)
}

/// The LUKS1 header `cryptsetup convert --type luks1` makes of the LUKS2
/// image `img`, after checking that LUKS1 can hold it: one crypt segment
/// to the end of the image with 512-byte sectors, no tokens, no
/// reencryption or other requirement, one PBKDF2 digest bound to it and
/// to every keyslot, keyslots 0 to 7 only, each `luks2` with PBKDF2 and AF
/// (4000 stripes) under the digest's hash and the segment's cipher and key
/// size, their areas at least 32 KiB in and where a LUKS1 slot can lie
/// 28 KiB lower. Disabled slots take LUKS1's default places.
///
/// # Errors
///
/// [`Error::Params`] naming the first thing LUKS1 cannot hold.
///
/// ```
/// use mdu_luks2::{format, os_random, FormatParams, Hash, Image, KdfParams};
/// let p = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
///     digest_iterations: 1000, data_offset: 2 << 20, ..FormatParams::default() };
/// let image = format(&p, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// let hdr = mdu_luks2::luks1::luks1_header(&Image::load(&image[..])?)?;
/// assert_eq!((hdr.payload_offset, hdr.slots[0].key_material_offset), (4096, 8));
/// // Argon2 keyslots cannot be held: refused.
/// let argon = format(&FormatParams { data_offset: 2 << 20, kdf: KdfParams::Argon2 { variant: mdu_luks2::Argon2Variant::Argon2id, time: 4, memory: 32, cpus: 1 }, ..p }, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// assert!(mdu_luks2::luks1::luks1_header(&Image::load(&argon[..])?).is_err());
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn luks1_header(img: &Image) -> Result<Header, Error> {
    let m = &img.metadata;
    if m.reencrypt.is_some()
        || m.config
            .requirements
            .as_ref()
            .is_some_and(|r| !r.is_empty())
    {
        return Err(refuse(
            "a LUKS2 header with requirements (a reencryption in progress) cannot become LUKS1",
        ));
    }
    if !m.tokens.is_empty() {
        return Err(refuse("LUKS1 has no tokens: remove them first"));
    }
    let [(seg_id, seg)] = m.segments.iter().collect::<Vec<_>>()[..] else {
        return Err(refuse("LUKS1 holds one data segment"));
    };
    if !seg.is_crypt() || seg.sector_size != 512 || seg.size.is_some() || seg.iv_tweak != 0 {
        return Err(refuse(
            "LUKS1 holds one crypt segment of 512-byte sectors to the end of the device",
        ));
    }
    let payload = u32::try_from(seg.offset / 512)
        .ok()
        .filter(|&s| s > 0 && seg.offset % 512 == 0)
        .ok_or_else(|| refuse("the data offset does not fit a LUKS1 payload offset"))?;
    let [(_, digest)] = m.digests.iter().collect::<Vec<_>>()[..] else {
        return Err(refuse("LUKS1 holds one volume-key digest"));
    };
    if digest.segments != [*seg_id] || digest.salt.len() != SALT_LEN || digest.digest.len() < 20 {
        return Err(refuse("the digest is not one a LUKS1 header can hold"));
    }
    let spec = seg.encryption.as_str();
    let (name, mode) = spec
        .split_once('-')
        .ok_or_else(|| refuse(format!("cipher {spec:?} has no mode")))?;
    let key_bytes = m.keyslots.values().next().map_or(0, |k| k.key_size);
    let (layout, _) = slot_layout(key_bytes);
    let mut slots = layout.map(Slot::disabled);
    for (&id, k) in &m.keyslots {
        let i = usize::try_from(id)
            .ok()
            .filter(|&i| i < SLOTS)
            .ok_or_else(|| refuse(format!("keyslot {id}: LUKS1 has slots 0 to 7 only")))?;
        let Kdf::Pbkdf2 {
            hash,
            iterations,
            salt,
        } = &k.kdf
        else {
            return Err(refuse(format!(
                "keyslot {id}: LUKS1 keyslots use PBKDF2, not {}",
                k.kdf.name()
            )));
        };
        let fits = *hash == digest.hash
            && k.af_hash == digest.hash
            && k.af_stripes == i64::from(STRIPES)
            && k.key_size == key_bytes
            && k.area.key_size == key_bytes
            && k.area.encryption.as_str() == spec
            && digest.keyslots.contains(&id)
            && salt.len() == SALT_LEN;
        if !fits {
            return Err(refuse(format!(
                "keyslot {id} differs from what a LUKS1 slot holds (the digest's hash for PBKDF2 \
                 and AF, 4000 stripes, the segment's cipher and key size, bound to the digest)"
            )));
        }
        let offset = k
            .area
            .offset
            .checked_sub(SHIFT)
            .filter(|&o| o >= 4096 && o % 512 == 0)
            .and_then(|o| u32::try_from(o / 512).ok())
            .ok_or_else(|| refuse(format!("keyslot {id}: its area cannot move 28 KiB down")))?;
        slots[i] = Slot {
            enabled: true,
            iterations: *iterations,
            salt: salt[..].try_into().unwrap_or([0; SALT_LEN]),
            key_material_offset: offset,
            stripes: STRIPES,
        };
    }
    let hdr = Header {
        cipher_name: name.to_owned(),
        cipher_mode: mode.to_owned(),
        hash: digest.hash,
        payload_offset: payload,
        key_bytes,
        mk_digest: digest.digest[..20].try_into().unwrap_or([0; 20]),
        mk_digest_salt: digest.salt[..].try_into().unwrap_or([0; SALT_LEN]),
        mk_digest_iterations: digest.iterations,
        uuid: img.header.uuid.clone(),
        slots,
    };
    hdr.to_bytes()?;
    Ok(hdr)
}

/// Converts the LUKS2 image `dev` whose loaded header is `img` to LUKS1 in
/// place, as `cryptsetup convert --type luks1`: the keyslots area moves
/// 28 KiB down (synced; both LUKS2 copies are overwritten by it), then the
/// LUKS1 header is written at 0 with zeros to 4 KiB (synced). Returns the
/// new header.
///
/// # Errors
///
/// What [`luks1_header`] refuses (nothing is written then); a failed read
/// or write.
///
/// ```
/// use mdu_luks2::{format, os_random, FormatParams, Hash, Image, KdfParams};
/// # let p = FormatParams { kdf: KdfParams::Pbkdf2 { hash: Hash::Sha256, iterations: 1000 },
/// #     digest_iterations: 1000, data_offset: 2 << 20, ..FormatParams::default() };
/// # let image = format(&p, b"pw", &(0..64).collect::<Vec<u8>>(), &mut os_random)?;
/// let path = std::env::temp_dir().join(format!("mdu-luks2-to-1-{}", std::process::id()));
/// std::fs::write(&path, &image)?;
/// let f = std::fs::OpenOptions::new().read(true).write(true).open(&path)?;
/// let hdr = mdu_luks2::luks1::convert_from_luks2(&f, &Image::load(&f)?)?;
/// assert_eq!(hdr.unlock(&f, b"pw")?.slot, 0);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert_from_luks2<W: WriteAt + ?Sized>(dev: &W, img: &Image) -> Result<Header, Error> {
    let hdr = luks1_header(img)?;
    let bytes = hdr.to_bytes()?;
    let (start, end) = img.metadata.keyslots_area(img.header.hdr_size);
    if start != 2 * LUKS2_HDR {
        return Err(refuse(format!(
            "the keyslots area starts at {start}, not 32 KiB: its header is not 16 KiB"
        )));
    }
    let len = dev.size()?;
    let area =
        zeroize::Zeroizing::new(read_checked(dev, len, "keyslots area", start, end - start)?);
    dev.write_all_at(&area, start - SHIFT)?;
    dev.sync()?;
    let mut head = vec![0u8; 4096];
    head[..HEADER_LEN].copy_from_slice(&bytes);
    dev.write_all_at(&head[HEADER_LEN..], HEADER_LEN as u64)?;
    write_header(dev, &bytes)?;
    Ok(hdr)
}
