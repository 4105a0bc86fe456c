//! Taking up a run from its record: the state the header shows, checked
//! against the run it describes, and the hotzone in doubt repaired.

use super::classify::State;
use super::*;

impl Reencryption {
    /// Opens a reencryption in progress, whoever started it (this crate or
    /// cryptsetup), checks its record against the keys the passphrase
    /// opens, and repairs the hotzone a crash left (`in-reencryption`):
    /// from the journal copy, or block by block where the checksum says
    /// the old bytes are still there. It is then ready to
    /// [`run`](Self::run) from where the record says.
    ///
    /// A run with `none` resilience records no progress: resuming it is
    /// refused unless `allow_none` (it restarts from the last recorded
    /// position, and converts again what a killed run converted after it).
    ///
    /// # Errors
    ///
    /// No reencryption in progress; a record whose digest does not match
    /// ([`Error::ReencryptDigest`]); segments that are not exactly a
    /// state of the run the record describes (forward, backward as
    /// cryptsetup decrypts with a detached header, or moving the data).
    pub fn resume(
        header: File,
        data: File,
        passphrase: &[u8],
        hotzone_size: Option<u64>,
        allow_none: bool,
    ) -> Result<Reencryption, Error> {
        let img = Image::load(&header)?;
        Self::resume_loaded(header, data, img, passphrase, hotzone_size, allow_none)
    }

    /// [`resume`](Self::resume) with the header already loaded as `img`.
    pub(super) fn resume_loaded(
        header: File,
        data: File,
        img: Image,
        passphrase: &[u8],
        hotzone_size: Option<u64>,
        allow_none: bool,
    ) -> Result<Reencryption, Error> {
        let m = img.metadata.clone();
        let r = m
            .reencrypt
            .clone()
            .ok_or_else(|| bad("the header records no reencryption in progress"))?;
        let shift_run = backup(&m, MOVED).is_some();
        let want = if shift_run && r.mode == ReencryptMode::Decrypt {
            REQUIREMENT_V3
        } else {
            REQUIREMENT_V2
        };
        if m.config.reencrypt_requirement() != Some(want) {
            return Err(bad(format!(
                "requirement {:?}: a {} run is resumed under {want}",
                m.config.reencrypt_requirement(),
                r.mode.name()
            )));
        }
        match (r.direction, r.area.resilience, r.mode, shift_run) {
            (
                ReencryptDirection::Forward,
                Resilience::Checksum { .. } | Resilience::Journal | Resilience::None,
                _,
                false,
            )
            | (
                ReencryptDirection::Backward,
                Resilience::Datashift { .. },
                ReencryptMode::Encrypt,
                true,
            )
            | (
                ReencryptDirection::Forward,
                Resilience::DatashiftChecksum { .. },
                ReencryptMode::Decrypt,
                true,
            )
            | (
                ReencryptDirection::Backward,
                Resilience::Checksum { .. } | Resilience::Journal | Resilience::None,
                ReencryptMode::Decrypt,
                false,
            ) => {}
            (d, res, _, _) => {
                return Err(bad(format!(
                    "a {} run with {} resilience is not resumed by this version (cryptsetup reencrypt --resume-only finishes it)",
                    d.name(),
                    res.name()
                )));
            }
        }
        if r.area.resilience == Resilience::None && !allow_none {
            return Err(bad(
                "the run uses resilience none, which records no progress: a resume restarts at the recorded position and converts again what was converted after it, destroying that data if the run was killed; resume only if it was stopped cleanly",
            ));
        }
        let (prev_id, prev) =
            backup(&m, PREVIOUS).ok_or_else(|| bad("no backup-previous segment"))?;
        let (fin_id, fin) = backup(&m, FINAL).ok_or_else(|| bad("no backup-final segment"))?;
        let (prev, fin) = (prev.clone(), fin.clone());
        let total = data_len(&data)?;
        let moved = match backup(&m, MOVED) {
            None if prev.offset != fin.offset || prev.size.is_some() || fin.size.is_some() => {
                return Err(bad(
                    "the backup segments describe a data shift or a fixed size",
                ));
            }
            None => None,
            Some((_, moved)) if r.mode == ReencryptMode::Decrypt => {
                // cryptsetup's in-place decryption: the data at `s` move
                // down to 0; the first `m` bytes of ciphertext were copied
                // to 0 (over the old header) and are converted last.
                let s = r.area.resilience.shift().unwrap_or(0);
                let m_len = moved.size.unwrap_or(0);
                if s == 0
                    || !prev.is_crypt()
                    || prev.offset != s
                    || prev.size.is_some()
                    || prev.iv_tweak != 0
                    || fin.is_crypt()
                    || fin.offset != 0
                    || fin.size.is_some()
                    || !moved.is_crypt()
                    || moved.offset != 0
                    || moved.iv_tweak != 0
                    || m_len == 0
                    || m_len > s
                    || moved.encryption != prev.encryption
                    || moved.sector_size != prev.sector_size
                    || s.checked_add(m_len).is_none_or(|e| total <= e)
                {
                    return Err(bad(format!(
                        "the backup segments are not the layout of a decryption that moves the data over this device ({total} bytes)"
                    )));
                }
                Some(moved.clone())
            }
            Some((_, moved)) => {
                // cryptsetup's layout of `--reduce-device-size`: the data
                // kept at 0, moving up by the shift `s`, their first `s`
                // bytes copied to the last `s` of the device.
                let s = r.area.resilience.shift().unwrap_or(0);
                let kept = prev.size.unwrap_or(0);
                if s == 0
                    || prev.offset != 0
                    || fin.offset != s
                    || fin.size.is_some()
                    || moved.is_crypt()
                    || moved.size != Some(s)
                    || kept.checked_add(s) != Some(moved.offset)
                    || moved.offset.checked_add(s) != Some(total)
                    || kept < s
                {
                    return Err(bad(format!(
                        "the backup segments are not the layout of an encryption with a data shift over this device ({total} bytes)"
                    )));
                }
                // Started but its primary copy never written: redo the
                // start when nothing else has happened.
                let first = [
                    Segment::linear(moved.offset, Some(s)),
                    Segment::linear(s, Some(kept - s)),
                ];
                let active: Vec<&Segment> =
                    m.segments.values().filter(|x| !x.is_backup()).collect();
                // (its start still the plaintext the copy holds)
                if matches!(img.primary_error, Some(Error::BadMagic { offset: 0 }))
                    && active.len() == 2
                    && active.iter().zip(&first).all(|(a, b)| *a == b)
                    && same_bytes(&data, 0, &data, moved.offset, img.hdr_size().min(s))?
                {
                    return Self::redo_shift_start(header, data, passphrase, &img, s, kept, total);
                }
                Some(moved.clone())
            }
        };
        let want_kinds = match r.mode {
            ReencryptMode::Encrypt => (false, true),
            ReencryptMode::Decrypt => (true, false),
            ReencryptMode::Reencrypt => (true, true),
        };
        if (prev.is_crypt(), fin.is_crypt()) != want_kinds {
            return Err(bad(format!(
                "the backup segments do not fit mode {}",
                r.mode.name()
            )));
        }
        let old_digest = digest_of(&m, prev_id).filter(|_| prev.is_crypt());
        let new_digest = digest_of(&m, fin_id).filter(|_| fin.is_crypt());
        let open = |d: Option<u32>| -> Result<Option<Zeroizing<Vec<u8>>>, Error> {
            d.map(|d| {
                img.unlock_digest(&header, d, None, passphrase)
                    .map(|k| k.key)
            })
            .transpose()
        };
        // Converted to the end but not torn down (cryptsetup's post-final
        // state, where its clean-up may already have removed the old
        // keyslots): only the new key is needed, and no data move.
        let active_ids: Vec<u32> = m
            .segments
            .iter()
            .filter(|(_, s)| !s.is_backup())
            .map(|(&i, _)| i)
            .collect();
        let teardown_only = match active_ids[..] {
            [id] => {
                let s = &m.segments[&id];
                s.offset == fin.offset
                    && s.size.is_none()
                    && new_side(&m, s, id, &fin.kind, old_digest, new_digest)
            }
            _ => false,
        };
        // Whether the record's digest was checked (a clean-up whose old
        // keyslots are gone cannot be: it then writes nothing outside the
        // header).
        let mut verified = true;
        let (old_key, new_key) = if teardown_only {
            let new_key = open(new_digest)?;
            let old_kept = old_digest
                .and_then(|d| m.digests.get(&d))
                .is_some_and(|d| !d.keyslots.is_empty());
            // (cryptsetup's clean-up may have wiped the old keyslots'
            // areas already: then the old key no longer opens)
            let old_key = if old_kept {
                open(old_digest).ok().flatten()
            } else {
                None
            };
            if old_digest.is_none() || old_key.is_some() {
                verify_digest(
                    &m,
                    old_key.as_deref().map(|k| &k[..]),
                    new_key.as_deref().map(|k| &k[..]),
                )?;
            } else {
                verified = false;
            }
            (None, new_key)
        } else {
            let old_key = open(old_digest)?;
            let new_key = if new_digest == old_digest {
                None
            } else {
                open(new_digest)?
            };
            verify_digest(
                &m,
                old_key.as_deref().map(|k| &k[..]),
                new_key.as_deref().map(|k| &k[..]),
            )?;
            (old_key, new_key)
        };
        let side =
            |segment: Segment, key: Option<Zeroizing<Vec<u8>>>, digest| -> Result<Side, Error> {
                let key = key.filter(|_| segment.is_crypt());
                let cipher = key
                    .as_ref()
                    .map(|k| segment_cipher(&segment, k))
                    .transpose()?;
                Ok(Side {
                    segment,
                    key,
                    cipher,
                    digest,
                })
            };
        if let Some(moved) = &moved {
            let shift = r.area.resilience.shift().unwrap_or(0);
            if shift > MAX_SHIFT {
                return Err(bad(format!(
                    "a shift of {shift} bytes is above {MAX_SHIFT}, the largest this version resumes"
                )));
            }
            if let Resilience::DatashiftChecksum {
                hash, sector_size, ..
            } = r.area.resilience
            {
                let m_len = moved.size.unwrap_or(0);
                let bs = u64::from(sector_size);
                if bs == 0
                    || !m_len.is_multiple_of(bs)
                    || (m_len / bs).saturating_mul(hash.output_len() as u64) > r.area.size
                {
                    return Err(bad(format!(
                        "the moved segment ({m_len} bytes) is not a whole number of {bs}-byte checksum blocks that the {}-byte area holds",
                        r.area.size
                    )));
                }
            }
        }
        let new_key = new_key.or_else(|| old_key.clone());
        let old = side(prev, old_key, old_digest)?;
        let new = side(fin, new_key, new_digest)?;
        let old_keyslots = old_digest
            .filter(|d| Some(*d) != new_digest)
            .map(|d| m.digests[&d].keyslots.clone())
            .unwrap_or_default();
        let mut block = old.sector().max(new.sector()).max(4096);
        if let Resilience::Checksum { sector_size, .. }
        | Resilience::DatashiftChecksum { sector_size, .. } = r.area.resilience
        {
            block = block.max(u64::from(sector_size));
        }
        let d = new.segment.offset;
        data_clear_of_header(&header, &data, img.hdr_size(), &m, d)?;
        let size = match &moved {
            Some(_) if r.mode == ReencryptMode::Encrypt => old.segment.size,
            Some(_) => total.checked_sub(old.segment.offset),
            None => total.checked_sub(d),
        }
        .filter(|n| *n > 0 && n.is_multiple_of(block) && d.is_multiple_of(block))
        .ok_or_else(|| bad(format!("the data device ({total} bytes) does not match the record (data at {d}, {block}-byte blocks)")))?;
        // Base (pre-record) metadata: the record's keyslot and digest stay;
        // the segments are rebuilt at every commit.
        let mut base = m.clone();
        base.segments.clear();
        let mut rr = Reencryption {
            header_dev: header,
            data_dev: data,
            header: img.header.clone(),
            meta: base,
            mode: r.mode,
            area: r.area.clone(),
            old,
            new,
            size,
            done: 0,
            hotzone: 0,
            block,
            old_keyslots,
            moved,
            verified,
            refill: img.free_areas(),
            unrecorded: false,
            finished: false,
        };
        rr.hotzone = rr.hotzone_len(hotzone_size)?;
        // Where the active segments say the run is; then the hotzone in
        // doubt is repaired and recorded, or the run finished.
        match rr.classify(&m)? {
            State::Hot { o, l, done } => {
                rr.recover(o, l)?;
                rr.done = done;
                if done == size {
                    rr.finish()?;
                } else {
                    rr.commit(rr.clean_o(), 0, rr.header.seqid + 1)?;
                }
            }
            State::Clean { done } => {
                rr.done = done;
                if done == size {
                    rr.finish()?;
                }
            }
        }
        Ok(rr)
    }

    /// Repairs the hotzone `[o, o + l)` after a crash and syncs it.
    pub(super) fn recover(&mut self, o: u64, l: u64) -> Result<(), Error> {
        let d = self.new.segment.offset;
        const CHUNK: u64 = 16 << 20;
        match self.area.resilience {
            Resilience::Checksum { hash, sector_size }
            | Resilience::DatashiftChecksum {
                hash, sector_size, ..
            } if o == 0 || self.moved.is_none() => {
                let bs = u64::from(sector_size);
                let n = hash.output_len();
                let blocks = l / bs;
                if blocks * n as u64 > self.area.size {
                    return Err(bad("the hotzone is larger than its checksums"));
                }
                let mut sums = vec![0u8; blocks as usize * n];
                read_at(
                    &self.header_dev,
                    "checksums in the keyslots area",
                    &mut sums,
                    self.area.offset,
                )?;
                let mut buf = vec![0u8; CHUNK.min(l) as usize];
                let mut sum = vec![0u8; n];
                let mut at = 0;
                while at < l {
                    let len = (l - at).min(CHUNK) as usize;
                    let chunk = &mut buf[..len];
                    read_at(&self.data_dev, "data device", chunk, d + o + at)?;
                    for (i, blk) in chunk.chunks_exact_mut(bs as usize).enumerate() {
                        let b = (at / bs) as usize + i;
                        hash.hash_into(&[blk], &mut sum);
                        if sum[..] == sums[b * n..(b + 1) * n] {
                            let pos = o + at + i as u64 * bs;
                            self.convert(pos, blk)?;
                            write_at(&self.data_dev, blk, d + pos)?;
                        }
                    }
                    at += len as u64;
                }
            }
            Resilience::Journal => {
                if l > self.area.size {
                    return Err(bad("the hotzone is larger than its journal"));
                }
                // The journal is trusted only if it is this hotzone's: every
                // 512-byte unit on the device must still hold its old bytes
                // (the journal's) or already its new ones, checked for the
                // whole hotzone before anything is written.
                let mut buf = vec![0u8; CHUNK.min(l) as usize];
                let mut on_disk = vec![0u8; CHUNK.min(l) as usize];
                let mut new = vec![0u8; CHUNK.min(l) as usize];
                let mut at = 0;
                while at < l {
                    let len = (l - at).min(CHUNK) as usize;
                    read_at(
                        &self.header_dev,
                        "journal in the keyslots area",
                        &mut buf[..len],
                        self.area.offset + at,
                    )?;
                    read_at(
                        &self.data_dev,
                        "data device",
                        &mut on_disk[..len],
                        d + o + at,
                    )?;
                    new[..len].copy_from_slice(&buf[..len]);
                    self.convert(o + at, &mut new[..len])?;
                    let torn = on_disk[..len]
                        .chunks(512)
                        .zip(buf[..len].chunks(512).zip(new[..len].chunks(512)))
                        .position(|(disk, (old, new))| disk != old && disk != new);
                    if let Some(i) = torn {
                        return Err(bad(format!(
                            "the journal does not match the hotzone: the device's bytes at {} are neither the journal's nor their conversion (a damaged journal, or a header of another device); nothing was written",
                            d + o + at + i as u64 * 512
                        )));
                    }
                    at += len as u64;
                }
                let mut at = 0;
                while at < l {
                    let len = (l - at).min(CHUNK) as usize;
                    let chunk = &mut buf[..len];
                    read_at(
                        &self.header_dev,
                        "journal in the keyslots area",
                        chunk,
                        self.area.offset + at,
                    )?;
                    self.convert(o + at, chunk)?;
                    write_at(&self.data_dev, chunk, d + o + at)?;
                    at += len as u64;
                }
            }
            Resilience::Datashift { .. } | Resilience::DatashiftChecksum { .. }
                if self.moved.is_some() =>
            {
                // The source is untouched (the hotzone is written `s`
                // bytes away from it): convert it again.
                let mut buf = vec![0u8; CHUNK.min(l) as usize];
                let mut at = 0;
                while at < l {
                    let len = (l - at).min(CHUNK) as usize;
                    let chunk = &mut buf[..len];
                    read_at(&self.data_dev, "data device", chunk, self.source(o) + at)?;
                    self.convert(o + at, chunk)?;
                    write_at(&self.data_dev, chunk, d + o + at)?;
                    at += len as u64;
                }
            }
            other => {
                return Err(bad(format!(
                    "a hotzone in conversion under {} resilience cannot be repaired",
                    other.name()
                )));
            }
        }
        self.data_dev.sync_data().map_err(Error::Io)
    }
}
