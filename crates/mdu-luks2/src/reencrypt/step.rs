//! The steps of a hotzone as the in-place engine drives them: the record
//! committed, the bytes converted, the final header and the clean-up.

use super::*;

impl Reencryption {
    /// Commits the state `(o, l)` with `seqid`.
    pub(super) fn commit(&mut self, o: u64, l: u64, seqid: u64) -> Result<(), Error> {
        self.refill_unnamed()?;
        let m = self.metadata_at(o, l);
        write_header(&self.header_dev, &self.header, seqid, &m)?;
        self.header.seqid = seqid;
        Ok(())
    }

    /// Refills the ranges the loaded header named to no one (once; the
    /// header write that follows syncs them).
    pub(super) fn refill_unnamed(&mut self) -> Result<(), Error> {
        for (offset, len) in std::mem::take(&mut self.refill) {
            wipe(&self.header_dev, offset, len)?;
        }
        Ok(())
    }

    /// Converts `buf`, the bytes at logical offset `at`, from the old side
    /// to the new.
    pub(super) fn convert(&self, at: u64, buf: &mut [u8]) -> Result<(), Error> {
        if let Some(c) = &self.old.cipher {
            crypt(c, Direction::Decrypt, at / u64::from(c.sector_size()), buf)?;
        }
        if let Some(c) = &self.new.cipher {
            crypt(c, Direction::Encrypt, at / u64::from(c.sector_size()), buf)?;
        }
        Ok(())
    }

    /// Writes the final header (one segment, no record, the old keyslots
    /// and digests gone), then wipes the areas of the old keyslots and of
    /// the record. With a shift, the copy of the first bytes is wiped
    /// first, once a header no longer names it (only the final segment
    /// active): a kill then leaves a state the next resume finishes, never
    /// plaintext behind a final header.
    pub(super) fn finish(&mut self) -> Result<(), Error> {
        let moved = self.moved.clone();
        if let Some(moved) = moved
            .as_ref()
            .filter(|_| self.mode == ReencryptMode::Encrypt)
        {
            self.commit(0, 0, self.header.seqid + 1)?;
            wipe(&self.data_dev, moved.offset, moved.size.unwrap_or(0))?;
            self.data_dev.sync_data().map_err(Error::Io)?;
        }
        let mut m = self.meta.clone();
        let mut seg = self.new.segment.clone();
        seg.flags.clear();
        m.segments = BTreeMap::from([(0, seg)]);
        let mut wipes: Vec<(u64, u64)> = Vec::new();
        if let Some(r) = m.reencrypt.take() {
            wipes.push((r.area.offset, r.area.size));
            m.digests.retain(|_, d| !d.keyslots.contains(&r.id));
        }
        if self.mode != ReencryptMode::Encrypt {
            for id in &self.old_keyslots {
                if let Some(k) = m.keyslots.remove(id) {
                    wipes.push((k.area.offset, k.area.size));
                }
            }
            if let Some(d) = self.old.digest {
                // The keyslots of the old key this crate could not open go
                // with it, as cryptsetup wipes every keyslot of the old
                // digest.
                if let Some(old) = m.digests.remove(&d) {
                    for id in old.keyslots {
                        if let Some(k) = m.unusable_keyslots.remove(&id) {
                            wipes.push(k.area());
                        }
                    }
                }
            }
        }
        if let Some(d) = self.new.digest.and_then(|d| m.digests.get_mut(&d)) {
            d.segments = vec![0];
        }
        if !self.new.segment.is_crypt() {
            m.digests.clear();
            m.keyslots.clear();
            m.unusable_digests.clear();
            wipes.extend(m.unusable_keyslots.values().map(|k| k.area()));
            m.unusable_keyslots.clear();
        }
        if let Some(r) = &mut m.config.requirements {
            r.retain(|x| !x.starts_with("online-reencrypt"));
        }
        if m.config.requirements.as_ref().is_some_and(Vec::is_empty) {
            m.config.requirements = None;
        }
        let seqid = self.header.seqid + 1;
        self.refill_unnamed()?;
        write_header(&self.header_dev, &self.header, seqid, &m)?;
        self.header.seqid = seqid;
        self.meta = m;
        for (offset, len) in wipes {
            wipe(&self.header_dev, offset, len)?;
        }
        self.header_dev.sync_data().map_err(Error::Io)?;
        if moved.is_some() && self.mode == ReencryptMode::Decrypt && self.verified {
            // The old ciphertext of the last `s` bytes, past the data.
            wipe(&self.data_dev, self.size, self.shift())?;
            self.data_dev.sync_data().map_err(Error::Io)?;
        }
        self.finished = true;
        Ok(())
    }
}

/// The hotzone loop is the in-place engine's; this is what the LUKS2
/// record does at each of its steps.
impl mdu_inplace::Journal for Reencryption {
    type Error = Error;
    const PROTECTS_NEXT: bool = false;

    fn device(&self) -> &File {
        &self.data_dev
    }

    /// A run with `none` resilience records no progress, so it does not
    /// sync either.
    fn sync_each(&self) -> bool {
        self.area.resilience != Resilience::None
    }

    fn progress(&self) -> (u64, u64) {
        (self.done, self.size)
    }

    fn hotzone(&self, done: u64) -> Option<mdu_inplace::Hotzone> {
        (done < self.size).then(|| {
            let (o, l) = self.hotzone_at(done);
            mdu_inplace::Hotzone {
                seq: 0,
                pos: o,
                len: l,
                from: self.source(o),
                to: self.new.segment.offset + o,
                done: done + l,
            }
        })
    }

    /// Writes what repairs the hotzone (the hash of every block for
    /// `checksum`, the bytes themselves for `journal`; with a shift, only
    /// for the moved segment, converted in place) into the keyslot area,
    /// then commits the header with the hotzone flagged.
    fn protect(
        &mut self,
        hz: &mdu_inplace::Hotzone,
        old: &[u8],
        _next: Option<&[u8]>,
    ) -> Result<(), Error> {
        let (o, l) = (hz.pos, hz.len);
        match self.area.resilience {
            Resilience::Checksum { hash, sector_size }
            | Resilience::DatashiftChecksum {
                hash, sector_size, ..
            } if o == 0 || self.moved.is_none() => {
                let bs = sector_size as usize;
                let n = hash.output_len();
                let mut sums = vec![0u8; old.len() / bs * n];
                if sums.len() as u64 > self.area.size {
                    return Err(bad("the hotzone has more checksums than its area holds"));
                }
                block_hashes(hash, bs, old, &mut sums);
                write_at(&self.header_dev, &sums, self.area.offset)?;
            }
            Resilience::Journal => write_at(&self.header_dev, old, self.area.offset)?,
            _ => {}
        }
        if self.area.resilience != Resilience::None {
            self.commit(o, l, self.header.seqid + 1)?;
            self.unrecorded = false;
        }
        Ok(())
    }

    fn convert(&self, hz: &mdu_inplace::Hotzone, buf: &mut [u8]) -> Result<(), Error> {
        Reencryption::convert(self, hz.pos, buf)
    }

    /// Counts the hotzone converted: with a shift, the next hotzone's
    /// commit records it (no header write in between); the last one's
    /// record is the final header.
    fn converted(&mut self, hz: &mdu_inplace::Hotzone, _written: &[u8]) -> Result<(), Error> {
        self.done = hz.done;
        if self.done < self.size {
            if self.moved.is_some() {
                self.unrecorded = true;
            } else if self.area.resilience != Resilience::None {
                self.commit(self.clean_o(), 0, self.header.seqid + 1)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), Error> {
        if self.finished {
            return Ok(());
        }
        Reencryption::finish(self)
    }

    fn interrupted(&mut self) -> Result<(), Error> {
        if self.area.resilience == Resilience::None || self.unrecorded {
            self.commit(self.clean_o(), 0, self.header.seqid + 1)?;
        }
        Ok(())
    }
}

/// The hash of every `bs`-byte block of `data` into `out`, across the
/// rayon pool when the crate has it.
fn block_hashes(hash: Hash, bs: usize, data: &[u8], out: &mut [u8]) {
    let n = hash.output_len();
    #[cfg(feature = "rayon")]
    {
        use rayon::prelude::*;
        data.par_chunks_exact(bs)
            .zip(out.par_chunks_exact_mut(n))
            .with_min_len(64)
            .for_each(|(blk, o)| hash.hash_into(&[blk], o));
    }
    #[cfg(not(feature = "rayon"))]
    for (blk, o) in data.chunks_exact(bs).zip(out.chunks_exact_mut(n)) {
        hash.hash_into(&[blk], o);
    }
}

/// One batched call, split over the rayon pool when the crate has it.
fn crypt(c: &SectorCipher, dir: Direction, first: u64, buf: &mut [u8]) -> Result<(), Error> {
    #[cfg(feature = "rayon")]
    {
        Ok(c.par_crypt(dir, first, buf)?)
    }
    #[cfg(not(feature = "rayon"))]
    {
        Ok(c.crypt(dir, first, buf)?)
    }
}
