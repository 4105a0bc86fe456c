//! The reencrypt keyslot's digest: what binds the record (mode, direction,
//! resilience, the backup segments) to both volume keys, so a changed record
//! is refused before any byte moves.

use super::*;

/// The bytes cryptsetup's digest of the `reencrypt` keyslot covers (used as
/// the PBKDF2 password of that digest): the requirement version, the old
/// volume key (not for an encryption), the new one (not for a decryption,
/// nor when both sides share a digest), the keyslot's mode, direction and
/// area, and the backup segments.
///
/// ```
/// let m = mdu_luks2::Metadata::parse(include_str!("../../tests/data/reencrypt-encrypt-datashift.json"), 16384)?;
/// let key: Vec<u8> = (0x40..0x80).collect();
/// let input = mdu_luks2::reencrypt::digest_input(&m, None, Some(&key))?;
/// assert_eq!(input.len(), 205);
/// assert!(m.digests[&1].matches(&input));
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn digest_input(
    m: &Metadata,
    old_key: Option<&[u8]>,
    new_key: Option<&[u8]>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let r = m
        .reencrypt
        .as_ref()
        .ok_or_else(|| bad("the header records no reencryption"))?;
    let version = match m.config.reencrypt_requirement() {
        Some("online-reencrypt-v2") => b'2',
        Some("online-reencrypt-v3") => b'3',
        other => {
            return Err(Error::ReencryptDigest {
                problem: format!("requirement {other:?} has no digest version"),
            });
        }
    };
    let (prev_id, prev) = backup(m, PREVIOUS).ok_or_else(|| bad("no backup-previous segment"))?;
    let (fin_id, fin) = backup(m, FINAL).ok_or_else(|| bad("no backup-final segment"))?;
    let same_digest =
        digest_of(m, prev_id).is_some() && digest_of(m, prev_id) == digest_of(m, fin_id);
    let mut v = Zeroizing::new(Vec::with_capacity(256));
    v.extend_from_slice(&[b'v', version]);
    fn need<'k>(k: Option<&'k [u8]>, which: &str) -> Result<&'k [u8], Error> {
        k.ok_or_else(|| Error::ReencryptDigest {
            problem: format!("the {which} volume key is needed"),
        })
    }
    if r.mode != ReencryptMode::Encrypt {
        v.extend_from_slice(need(old_key, "old")?);
    }
    if r.mode != ReencryptMode::Decrypt && !same_digest {
        v.extend_from_slice(need(new_key, "new")?);
    }
    v.extend_from_slice(r.mode.name().as_bytes());
    v.extend_from_slice(r.direction.name().as_bytes());
    v.extend_from_slice(r.area.resilience.name().as_bytes());
    v.extend_from_slice(&r.area.offset.to_be_bytes());
    v.extend_from_slice(&r.area.size.to_be_bytes());
    match r.area.resilience {
        Resilience::Checksum { hash, sector_size }
        | Resilience::DatashiftChecksum {
            hash, sector_size, ..
        } => {
            v.extend_from_slice(hash.name().as_bytes());
            v.extend_from_slice(&sector_size.to_be_bytes());
        }
        _ => {}
    }
    if let Some(shift) = r.area.resilience.shift() {
        v.extend_from_slice(&shift.to_be_bytes());
    }
    let moved = backup(m, MOVED).map(|(_, s)| s);
    for s in [Some(prev), Some(fin), moved].into_iter().flatten() {
        v.extend_from_slice(s.kind.name().as_bytes());
        v.extend_from_slice(&s.offset.to_be_bytes());
        match s.size {
            Some(n) => v.extend_from_slice(&n.to_be_bytes()),
            None => v.extend_from_slice(b"dynamic"),
        }
        if s.is_crypt() {
            v.extend_from_slice(&s.iv_tweak.to_be_bytes());
            v.extend_from_slice(s.encryption.as_str().as_bytes());
            v.extend_from_slice(&s.sector_size.to_be_bytes());
        }
    }
    Ok(v)
}

/// Checks the digest of the `reencrypt` keyslot against the metadata and
/// the volume keys ([`digest_input`]).
///
/// ```
/// let m = mdu_luks2::Metadata::parse(include_str!("../../tests/data/reencrypt-encrypt-datashift.json"), 16384)?;
/// let key: Vec<u8> = (0x40..0x80).collect();
/// assert!(mdu_luks2::reencrypt::verify_digest(&m, None, Some(&key)).is_ok());
/// assert!(mdu_luks2::reencrypt::verify_digest(&m, None, Some(&[0u8; 64])).is_err());
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn verify_digest(
    m: &Metadata,
    old_key: Option<&[u8]>,
    new_key: Option<&[u8]>,
) -> Result<(), Error> {
    let r = m
        .reencrypt
        .as_ref()
        .ok_or_else(|| bad("the header records no reencryption"))?;
    let input = digest_input(m, old_key, new_key)?;
    let digest = m
        .digests
        .values()
        .find(|d| d.keyslots.contains(&r.id))
        .ok_or_else(|| Error::ReencryptDigest {
            problem: format!("no digest lists reencrypt keyslot {}", r.id),
        })?;
    if digest.matches(&input) {
        Ok(())
    } else {
        Err(Error::ReencryptDigest {
            problem: format!(
                "the digest of reencrypt keyslot {} does not match its metadata and volume keys",
                r.id
            ),
        })
    }
}
