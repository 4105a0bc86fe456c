//! Starting a run: the first record written over a volume, with the data
//! shift and the header export of the runs that move the data.

use super::*;

impl Reencryption {
    /// Starts a reencryption: writes the header of its first state (for
    /// [`Plan::Reencrypt`], first the new keyslot, unbound, then the record;
    /// for [`Plan::Encrypt`], the new header in one write) and returns it
    /// ready to [`run`](Self::run). The passphrase opens the old key and
    /// keeps the new one. `header` and `data` are the same file for a
    /// header inside the image (two handles); for [`Plan::Encrypt`],
    /// `header` is the empty file the detached header goes to.
    ///
    /// # Errors
    ///
    /// A wrong passphrase, a volume already in reencryption
    /// ([`Error::Requirements`]), no room in the keyslots area, a
    /// data size that is not a whole number of sectors: all before anything
    /// is written.
    pub fn init(
        header: File,
        data: File,
        passphrase: &[u8],
        plan: &Plan,
        options: &Options,
    ) -> Result<Reencryption, Error> {
        match plan {
            Plan::Encrypt(params) => Self::init_encrypt(header, data, passphrase, params, options),
            Plan::EncryptShift(params) => Self::init_shift(header, data, passphrase, params),
            Plan::DecryptShift { key_slot } => {
                Self::init_decrypt_shift(header, data, passphrase, *key_slot, options)
            }
            Plan::Reencrypt { .. } | Plan::Decrypt { .. } => {
                let img = Image::load(&header)?;
                Self::init_in_header(header, data, img, passphrase, plan, options)
            }
        }
    }

    pub(super) fn init_in_header(
        header: File,
        data: File,
        img: Image,
        passphrase: &[u8],
        plan: &Plan,
        options: &Options,
    ) -> Result<Reencryption, Error> {
        let mut refill = img.free_areas();
        let (_, seg) = img.segment()?;
        let seg = seg.clone();
        data_clear_of_header(&header, &data, img.hdr_size(), &img.metadata, seg.offset)?;
        let detached = seg.offset == 0;
        if matches!(plan, Plan::Decrypt { .. }) && !detached {
            return Err(bad(
                "decryption in place of a header inside the image moves the data (datashift); only a detached header (data offset 0) is decrypted in place",
            ));
        }
        let key_slot = match plan {
            Plan::Reencrypt { key_slot, .. }
            | Plan::Decrypt { key_slot }
            | Plan::DecryptShift { key_slot } => *key_slot,
            Plan::Encrypt(_) | Plan::EncryptShift(_) => None,
        };
        let key = match key_slot {
            Some(s) => img.unlock_slot(&header, s, passphrase)?,
            None => img.unlock(&header, passphrase)?,
        };
        let old_digest = key.digest;
        let old_keyslots = img.metadata.digests[&old_digest].keyslots.clone();
        if key_slot.is_none() && old_keyslots.len() > 1 {
            return Err(bad(format!(
                "the old key is kept by keyslots {old_keyslots:?}: name the one to keep with a key slot (the others are removed at the end)"
            )));
        }
        // (the old key opens the data: checked before anything is written)
        segment_cipher(&seg, &key.key)?;
        let mut meta = img.metadata.clone();
        let mut seqid = img.header.seqid;
        let mut prev = seg.clone();
        prev.flags = vec![PREVIOUS.into()];
        let (mode, fin, new_cipher, new_digest) = match plan {
            Plan::Reencrypt {
                cipher,
                key_size,
                sector_size,
                ..
            } => {
                let mut new_key = Zeroizing::new(vec![0u8; *key_size]);
                os_random(&mut new_key)?;
                cipher.check_key(&new_key, WeakKeys::Refuse)?;
                // The new keyslot: the opened one's KDF (its cost
                // benchmarked when asked) with a new salt, in the first
                // free gap that holds its material.
                let old_ks = &meta.keyslots[&key.slot];
                let mut salt = vec![0u8; 32];
                os_random(&mut salt)?;
                let kdf = crate::KdfParams::of(&old_ks.kdf);
                let kdf = match options.iter_time_ms {
                    Some(ms) => crate::cost::benchmarked_like(kdf, ms, *key_size)?,
                    None => kdf,
                }
                .salted(salt);
                let area_size =
                    ((*key_size as u64) * u64::from(crate::AF_STRIPES)).div_ceil(4096) * 4096;
                let (area_offset, _) = meta
                    .free_areas(img.hdr_size())
                    .into_iter()
                    .find(|&(o, n)| o.is_multiple_of(4096) && n >= area_size)
                    .ok_or_else(|| bad("no room in the keyslots area for the new keyslot"))?;
                let slot = free_id(
                    meta.keyslots
                        .keys()
                        .chain(meta.unusable_keyslots.keys())
                        .copied(),
                );
                let (keyslot, material) = new_keyslot(
                    kdf,
                    AreaCrypt::of(*cipher, *key_size),
                    passphrase,
                    &new_key,
                    (area_offset, area_size),
                    slot,
                    &mut os_random,
                )?;
                let digest_id = free_id(meta.digests.keys().copied());
                let old_iter = meta.digests[&old_digest].iterations;
                let mut dsalt = vec![0u8; 32];
                os_random(&mut dsalt)?;
                let digest =
                    Digest::of_key(&new_key, Hash::Sha256, old_iter, dsalt, vec![slot], vec![]);
                meta.keyslots.insert(slot, keyslot);
                meta.digests.insert(digest_id, digest);
                // What a killed command left unnamed goes before the first
                // header write (which syncs it).
                for (offset, len) in std::mem::take(&mut refill) {
                    wipe(&header, offset, len)?;
                }
                // Commit 1: the new keyslot, unbound (opens no data yet).
                wipe(&header, area_offset, area_size)?;
                write_at(&header, &material, area_offset)?;
                seqid += 1;
                write_header(&header, &img.header, seqid, &meta)?;
                let mut fin = Segment::crypt(seg.offset, None, 0, *cipher, *sector_size);
                fin.flags = vec![FINAL.into()];
                let c = segment_cipher(&fin, &new_key)?;
                (
                    ReencryptMode::Reencrypt,
                    fin,
                    Some((new_key, c)),
                    Some(digest_id),
                )
            }
            Plan::Decrypt { .. } => {
                let mut fin = Segment::linear(seg.offset, None);
                fin.flags = vec![FINAL.into()];
                (ReencryptMode::Decrypt, fin, None, None)
            }
            Plan::Encrypt(_) | Plan::EncryptShift(_) | Plan::DecryptShift { .. } => {
                return Err(bad("not a conversion of the data in place"));
            }
        };
        let old = Side::keyed(prev, key.key, old_digest)?;
        let (new_key, new_cipher) = new_cipher.unzip();
        let new = Side {
            segment: fin,
            key: new_key,
            cipher: new_cipher,
            digest: new_digest,
        };
        let mut r = Self::start(
            header,
            data,
            img.header,
            meta,
            mode,
            old,
            new,
            old_keyslots,
            None,
            options,
        )?;
        r.refill = refill;
        r.commit(0, 0, seqid + 1)?;
        Ok(r)
    }

    pub(super) fn init_encrypt(
        header: File,
        data: File,
        passphrase: &[u8],
        params: &FormatParams,
        options: &Options,
    ) -> Result<Reencryption, Error> {
        if data_len(&header)? != 0 {
            return Err(bad("the detached header file must be empty"));
        }
        let mut key = Zeroizing::new(vec![0u8; params.key_size]);
        os_random(&mut key)?;
        let region = crate::format_detached(params, passphrase, &key, &mut os_random)?;
        let img = Image::load(&region[..])?;
        let mut meta = img.metadata.clone();
        let cipher = params.cipher;
        let mut fin = Segment::crypt(0, None, 0, cipher, params.sector_size);
        fin.flags = vec![FINAL.into()];
        let mut prev = Segment::linear(0, None);
        prev.flags = vec![PREVIOUS.into()];
        // The region as formatted (keyslot material, random fill); its
        // header copies are rewritten by the first commit below.
        meta.segments.clear();
        meta.segments.insert(0, Segment::linear(0, None));
        meta.digests
            .get_mut(&0)
            .expect("format makes digest 0")
            .segments = vec![0];
        let (old, new) = (Side::plain(prev), Side::keyed(fin, key, 0)?);
        // The keyslots area first, with both header copies left zero: the
        // formatted copies describe the data as encrypted already, and a
        // crash before `start` commits the record must not leave a header
        // that opens plaintext as ciphertext.
        let mut region = region;
        let copies = (2 * img.header.hdr_size) as usize;
        region[..copies].fill(0);
        write_at(&header, &region, 0)?;
        let mut r = Self::start(
            header,
            data,
            img.header,
            meta,
            ReencryptMode::Encrypt,
            old,
            new,
            Vec::new(),
            None,
            options,
        )?;
        r.commit(0, 0, 1)?;
        Ok(r)
    }

    pub(super) fn init_decrypt_shift(
        header: File,
        data: File,
        passphrase: &[u8],
        key_slot: Option<u32>,
        options: &Options,
    ) -> Result<Reencryption, Error> {
        use std::os::unix::fs::MetadataExt;
        let (h, d) = (header.metadata()?, data.metadata()?);
        if (h.dev(), h.ino()) == (d.dev(), d.ino()) {
            return Err(bad(
                "a decryption that moves the data exports the header: the header file must be another file",
            ));
        }
        // A new export, or one interrupted before its record was written.
        // While IMAGE still has its header, it is the one exported (the
        // header file may only hold a part of it, from an interrupted
        // copy); once its magics are gone, the header file is taken only
        // if it is this image's header (see `export_interrupted`).
        let in_image = Image::load(&data).ok();
        let exported = data_len(&header)? != 0 && in_image.is_none();
        if let Some(img) = &in_image
            && data_len(&header)? != 0
        {
            // Ours, cut short; or an export of this very header (the same
            // metadata, as cryptsetup's export is): written again. A stale
            // backup (other keyslots or digests) is refused.
            let region_len = img.metadata.keyslots_area(img.hdr_size()).1;
            let n = data_len(&header)?.min(region_len);
            let same_header = Image::load(&header)
                .is_ok_and(|h| h.header.uuid == img.header.uuid && h.metadata == img.metadata);
            if !same_header && !same_bytes(&header, 0, &data, 0, n)? {
                return Err(bad(
                    "the header file exists and is not a copy of this image's header: give a new file (it receives the exported header)",
                ));
            }
        }
        let img = match in_image {
            Some(img) => img,
            None => Image::load(&header)?,
        };
        if img.metadata.reencrypt.is_some() {
            return Err(Error::Requirements {
                requirements: img.metadata.config.requirements.clone().unwrap_or_default(),
            });
        }
        let (_, seg) = img.segment()?;
        let seg = seg.clone();
        let s = seg.offset;
        let hdr = img.hdr_size();
        let region_len = img.metadata.keyslots_area(hdr).1;
        if s == 0 || s < region_len {
            return Err(bad(format!(
                "the data start at {s}: only a header inside the image, before the data, is exported and the data moved down"
            )));
        }
        let key = match key_slot {
            Some(k) => img.unlock_slot(if exported { &header } else { &data }, k, passphrase)?,
            None => img.unlock(if exported { &header } else { &data }, passphrase)?,
        };
        let total = data_len(&data)?;
        let block = u64::from(seg.sector_size).max(4096);
        let size = total
            .checked_sub(s)
            .filter(|&n| n > s && n.is_multiple_of(block) && s.is_multiple_of(block))
            .ok_or_else(|| {
                bad(format!(
                    "the image ({total} bytes) holds less than twice the data offset ({s}), or not whole {block}-byte blocks"
                ))
            })?;
        // The whole shift is moved: a resume by cryptsetup 2.6 then takes
        // the same hotzones.
        let m = s;
        if s > MAX_SHIFT {
            return Err(bad(format!(
                "the data offset ({s} bytes) is above {MAX_SHIFT}, the largest shift (each hotzone is held in memory twice)"
            )));
        }
        let sums = checksum_len(m, block);
        let area_room = img
            .metadata
            .free_areas(hdr)
            .into_iter()
            .filter(|&(o, _)| o.is_multiple_of(4096))
            .map(|(_, n)| n)
            .max()
            .unwrap_or(0);
        if sums > area_room {
            return Err(bad(format!(
                "the keyslots area has {area_room} bytes free, too few for the {sums} bytes of checksums of the {m}-byte moved segment"
            )));
        }
        if exported && !export_interrupted(&data, &header, s, m)? {
            return Err(bad(
                "the header file exists and is not an interrupted export of this image's header: give a new file (a detached header's data are decrypted with it as --header, in place); if this image's header was exported to it and its signature wiped, `cryptsetup luksHeaderRestore` puts it back",
            ));
        }
        // The sides of the run (its cipher checked) before any write.
        let old_digest = key.digest;
        let old_keyslots = img.metadata.digests[&old_digest].keyslots.clone();
        let mut prev = seg.clone();
        prev.flags = vec![PREVIOUS.into()];
        let mut fin = Segment::linear(0, None);
        fin.flags = vec![FINAL.into()];
        let mut moved = Segment {
            offset: 0,
            size: Some(m),
            iv_tweak: 0,
            ..seg.clone()
        };
        moved.flags = vec![MOVED.into()];
        let old = Side::keyed(prev, key.key, old_digest)?;
        if !exported {
            // 1. The header region, verbatim, to the header file.
            copy_between(&data, &header, region_len)?;
            header.sync_all().map_err(Error::Io)?;
        }
        // What a killed command left unnamed does not travel with the
        // exported header.
        for (offset, len) in img.free_areas() {
            wipe(&header, offset, len)?;
        }
        // 2. The image stops being a LUKS volume: its magics go (the rest
        // of the binary header, with its UUID, stays until step 3).
        for at in [0, hdr] {
            write_at(&data, &[0u8; 6], at)?;
        }
        data.sync_data().map_err(Error::Io)?;
        // 3. The first `m` bytes of ciphertext over the old header, the
        // block holding the binary header last.
        copy_range(&data, s + 4096, 4096, m - 4096)?;
        data.sync_data().map_err(Error::Io)?;
        copy_range(&data, s, 0, 4096)?;
        data.sync_data().map_err(Error::Io)?;
        // 4. The record, in the exported header.
        let mut meta = img.metadata.clone();
        meta.segments.clear();
        let mut r = Self::start(
            header,
            data,
            img.header.clone(),
            meta,
            ReencryptMode::Decrypt,
            old,
            Side::plain(fin),
            old_keyslots,
            Some(moved),
            options,
        )?;
        debug_assert_eq!(r.size, size);
        r.commit(m, 0, img.header.seqid + 1)?;
        Ok(r)
    }

    pub(super) fn init_shift(
        header: File,
        data: File,
        passphrase: &[u8],
        params: &FormatParams,
    ) -> Result<Reencryption, Error> {
        use std::os::unix::fs::MetadataExt;
        let (h, d) = (header.metadata()?, data.metadata()?);
        if (h.dev(), h.ino()) != (d.dev(), d.ino()) {
            return Err(bad(
                "an encryption with a data shift puts the header at the start of the data device: give the device as both",
            ));
        }
        params.validate()?;
        refuse_luks_signature(&data)?;
        let s = params.data_offset;
        if s > MAX_SHIFT {
            return Err(bad(format!(
                "a shift of {s} bytes is above {MAX_SHIFT}, the largest (each hotzone is held in memory twice)"
            )));
        }
        let total = data_len(&data)?;
        let block = u64::from(params.sector_size).max(4096);
        let kept = total
            .checked_sub(2 * s)
            .filter(|&k| k >= s)
            .ok_or_else(|| {
                bad(format!(
                    "the device ({total} bytes) is smaller than three times the shift of {s} bytes: it must hold the header, the data and a copy of their first {s} bytes"
                ))
            })?;
        if !kept.is_multiple_of(block) {
            return Err(bad(format!(
                "the data kept ({kept} bytes: the device less twice the shift) are not a whole number of {block}-byte blocks"
            )));
        }
        Self::shift_header(header, data, passphrase, params, total, kept, true)
    }

    /// Writes the first state of an encryption with a data shift under a
    /// new key; with `copy`, first the copy of the first `s` bytes (not
    /// when an interrupted start is redone: the copy then holds them).
    pub(super) fn shift_header(
        header: File,
        data: File,
        passphrase: &[u8],
        params: &FormatParams,
        total: u64,
        kept: u64,
        copy: bool,
    ) -> Result<Reencryption, Error> {
        let s = params.data_offset;
        let mut key = Zeroizing::new(vec![0u8; params.key_size]);
        os_random(&mut key)?;
        let mut region = crate::format(params, passphrase, &key, &mut os_random)?;
        // A shift beyond the largest keyslots area: the bytes between the
        // area and the data are zeroed (they held plaintext).
        region.resize(s as usize, 0);
        let img = Image::load(&region[..])?;
        let mut meta = img.metadata.clone();
        let mut fin = Segment::crypt(s, None, 0, params.cipher, params.sector_size);
        fin.flags = vec![FINAL.into()];
        let mut prev = Segment::linear(0, Some(kept));
        prev.flags = vec![PREVIOUS.into()];
        let mut moved = Segment::linear(total - s, Some(s));
        moved.flags = vec![MOVED.into()];
        meta.segments.clear();
        meta.digests
            .get_mut(&0)
            .expect("format makes digest 0")
            .segments
            .clear();
        let (old, new) = (Side::plain(prev), Side::keyed(fin, key, 0)?);
        let mut r = Self::start(
            header,
            data,
            img.header,
            meta,
            ReencryptMode::Encrypt,
            old,
            new,
            Vec::new(),
            Some(moved),
            &Options::default(),
        )?;
        r.write_shift_init(&region, 1, copy)?;
        Ok(r)
    }

    /// Redoes the start of an encryption with a data shift that was
    /// interrupted before its primary header copy was written: the keyslot
    /// material behind the secondary copy may be incomplete, so no
    /// passphrase can be trusted to open it, but nothing is encrypted yet
    /// and the first `s` bytes are in the moved copy. A new key and header
    /// are written with the parameters the secondary copy records.
    pub(super) fn redo_shift_start(
        header: File,
        data: File,
        passphrase: &[u8],
        img: &Image,
        s: u64,
        kept: u64,
        total: u64,
    ) -> Result<Reencryption, Error> {
        let m = &img.metadata;
        let (_, fin) = backup(m, FINAL).ok_or_else(|| bad("no backup-final segment"))?;
        let ks = m
            .keyslots
            .values()
            .next()
            .ok_or_else(|| bad("the interrupted start has no keyslot"))?;
        let kdf = crate::KdfParams::of(&ks.kdf);
        let params = FormatParams {
            cipher: fin
                .encryption
                .spec_of(|| "the backup-final segment's encryption".into())?,
            key_size: ks.key_size as usize,
            sector_size: fin.sector_size,
            kdf,
            digest_iterations: m
                .digests
                .values()
                .map(|d| d.iterations)
                .max()
                .unwrap_or(1000)
                .max(1000),
            uuid: Some(img.header.uuid.clone()),
            label: img.header.label.clone(),
            subsystem: img.header.subsystem.clone(),
            hdr_size: img.hdr_size(),
            data_offset: s,
            ..FormatParams::default()
        };
        Self::shift_header(header, data, passphrase, &params, total, kept, false)
    }

    /// The first state of an encryption with a data shift, in an order in
    /// which every kill leaves the first `s` bytes somewhere a header
    /// names, or untouched: (1) the copy of the first `s` bytes to the end
    /// of the device, synced; (2) the secondary header copy, which
    /// describes the data where they are (its first `s` bytes in the copy):
    /// from here on the device is a LUKS2 volume in reencryption and a new
    /// start is refused; (3) the keyslots area; (4) the primary copy.
    pub(super) fn write_shift_init(
        &mut self,
        region: &[u8],
        seqid: u64,
        copy: bool,
    ) -> Result<(), Error> {
        let moved = self.moved.clone().expect("a shift run");
        let s = self.new.segment.offset;
        if copy {
            copy_range(&self.data_dev, 0, moved.offset, s)?;
            self.data_dev.sync_data().map_err(Error::Io)?;
        }
        let m = self.metadata_at(self.size, 0);
        let copies = crate::format::header_copies(&self.header, seqid, &m)?;
        let hdr = self.header.hdr_size as usize;
        let dev = &self.header_dev;
        for (bytes, at) in [
            (&copies[hdr..], hdr),
            (&region[2 * hdr..], 2 * hdr),
            (&copies[..hdr], 0),
        ] {
            write_at(dev, bytes, at as u64)?;
            dev.sync_data().map_err(Error::Io)?;
        }
        self.header.seqid = seqid;
        Ok(())
    }

    /// Adds the record (reencrypt keyslot, its digest, the backups, the
    /// requirement) to `meta` and commits it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start(
        header_dev: File,
        data_dev: File,
        header: BinaryHeader,
        mut meta: Metadata,
        mode: ReencryptMode,
        old: Side,
        new: Side,
        old_keyslots: Vec<u32>,
        moved: Option<Segment>,
        options: &Options,
    ) -> Result<Reencryption, Error> {
        let block = old.sector().max(new.sector()).max(4096);
        let gaps = meta
            .free_areas(header.hdr_size)
            .into_iter()
            .filter(|&(o, _)| o.is_multiple_of(4096));
        // A data shift needs no copy of the old bytes: one block of area,
        // as cryptsetup allots; otherwise the largest gap.
        let up = moved.is_some() && mode == ReencryptMode::Encrypt;
        let (area_offset, area_size) = if up {
            gaps.filter(|&(_, n)| n >= 4096)
                .map(|(o, _)| (o, 4096))
                .next()
        } else {
            gaps.max_by_key(|&(_, n)| n)
        }
        .ok_or_else(|| bad("no room in the keyslots area for the reencryption record"))?;
        let (resilience, direction) = match (&moved, options.resilience) {
            (Some(_), _) if up => (
                Resilience::Datashift {
                    shift: new.segment.offset,
                },
                ReencryptDirection::Backward,
            ),
            (Some(_), _) => (
                Resilience::DatashiftChecksum {
                    hash: options.hash,
                    sector_size: block as u32,
                    shift: old.segment.offset,
                },
                ReencryptDirection::Forward,
            ),
            (None, ResilienceChoice::Checksum) => (
                Resilience::Checksum {
                    hash: options.hash,
                    sector_size: block as u32,
                },
                ReencryptDirection::Forward,
            ),
            (None, ResilienceChoice::Journal) => (Resilience::Journal, ReencryptDirection::Forward),
            (None, ResilienceChoice::None) => (Resilience::None, ReencryptDirection::Forward),
        };
        let area = ReencryptArea {
            offset: area_offset,
            size: area_size,
            resilience,
        };
        let id = free_id(
            meta.keyslots
                .keys()
                .chain(meta.unusable_keyslots.keys())
                .copied(),
        );
        let reenc = ReencryptKeyslot {
            id,
            area: area.clone(),
            mode,
            direction,
            priority: Some(0),
        };
        meta.reencrypt = Some(reenc);
        let mut requirements = meta.config.requirements.clone().unwrap_or_default();
        requirements.push(if moved.is_some() && !up {
            REQUIREMENT_V3.into()
        } else {
            REQUIREMENT_V2.into()
        });
        meta.config.requirements = Some(requirements);
        let data_offset = new.segment.offset;
        let total = data_len(&data_dev)?;
        let size = match old.segment.size {
            // A shift up: the data kept, before the moved copy.
            Some(kept) => kept,
            // A shift down: the data after the old header.
            None if moved.is_some() => total.saturating_sub(old.segment.offset),
            None => total
                .checked_sub(data_offset)
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    bad(format!(
                        "the data device ({total} bytes) holds no data past offset {data_offset}"
                    ))
                })?,
        };
        if !size.is_multiple_of(block) {
            return Err(bad(format!(
                "the data ({size} bytes) are not a whole number of {block}-byte blocks"
            )));
        }
        let mut r = Reencryption {
            header_dev,
            data_dev,
            header,
            meta,
            mode,
            area,
            old,
            new,
            size,
            done: 0,
            hotzone: 0,
            block,
            old_keyslots,
            moved,
            verified: true,
            refill: Vec::new(),
            unrecorded: false,
            finished: false,
        };
        r.hotzone = r.hotzone_len(options.hotzone_size)?;
        // The record's digest over the keys and the backups.
        let m = r.metadata_at(0, 0);
        let input = digest_input(&m, r.key(&r.old), r.key(&r.new))?;
        let digest_id = free_id(r.meta.digests.keys().copied());
        let mut salt = vec![0u8; 32];
        os_random(&mut salt)?;
        let d = Digest::of_key(
            &input,
            Hash::Sha256,
            RECORD_DIGEST_ITERATIONS,
            salt,
            vec![id],
            vec![],
        );
        r.meta.digests.insert(digest_id, d);
        Ok(r)
    }
}
