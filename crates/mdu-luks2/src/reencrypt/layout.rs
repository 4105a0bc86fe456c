//! Where a run is: the hotzone after a number of converted bytes, and the
//! metadata (segments and their digests) of each state, a pure function of
//! the run and its offset.

use super::*;

impl Reencryption {
    /// The hotzone after `done` bytes are converted, `(offset, length)`:
    /// forward, the `hotzone` bytes
    /// after the converted ones; with a shift, backward in steps of the
    /// shift `s` while at least `2·s` bytes are left, then the rest above
    /// `s`, and last the first `s` bytes (read from the moved copy), so
    /// that no hotzone but the last reads below `s`, where the header is.
    /// A decryption that moves the data down walks forward from the end
    /// of the moved segment (`m` bytes at 0), each hotzone read at `s + o`
    /// and written at `o`, and converts the moved segment in place last.
    pub(super) fn hotzone_at(&self, done: u64) -> (u64, u64) {
        let Some(moved) = &self.moved else {
            let left = self.size - done;
            let l = self.hotzone.min(left);
            return if self.backward() {
                (left - l, l)
            } else {
                (done, l)
            };
        };
        let s = self.shift();
        if self.mode == ReencryptMode::Decrypt {
            // Forward from the end of the moved segment, then the moved
            // segment itself, in place.
            let m = moved.size.unwrap_or(0);
            return if done < self.size - m {
                let o = m + done;
                (o, s.min(self.size - o))
            } else {
                (0, m)
            };
        }
        let r = self.size - done;
        if r >= 2 * s {
            (r - s, s)
        } else if r > s {
            (s, r - s)
        } else {
            (0, r)
        }
    }

    /// The offset of the clean state: the converted bytes forward, the
    /// bytes left with a shift.
    pub(super) fn clean_o(&self) -> u64 {
        match (&self.moved, self.mode) {
            (None, _) if self.backward() => self.size - self.done,
            (None, _) => self.done,
            (Some(_), ReencryptMode::Decrypt) if self.done == self.size => 0,
            (Some(m), ReencryptMode::Decrypt) => m.size.unwrap_or(0) + self.done,
            (Some(_), _) => self.size - self.done,
        }
    }

    /// Whether the hotzones walk backward without moving the data (as
    /// cryptsetup decrypts with a detached header; resumed only).
    pub(super) fn backward(&self) -> bool {
        self.moved.is_none()
            && self
                .meta
                .reencrypt
                .as_ref()
                .is_some_and(|r| r.direction == ReencryptDirection::Backward)
    }

    /// The shift of a run that moves the data (0 without).
    pub(super) fn shift(&self) -> u64 {
        self.area.resilience.shift().unwrap_or(0)
    }

    /// Where the old bytes of the hotzone at `o` are read.
    pub(super) fn source(&self, o: u64) -> u64 {
        match &self.moved {
            Some(m) if o == 0 => m.offset,
            _ => self.old.segment.offset + o,
        }
    }

    /// The key of a side, for the record's digest.
    pub(super) fn key<'a>(&self, side: &'a Side) -> Option<&'a [u8]> {
        side.key.as_deref().map(|k| &k[..])
    }

    /// The hotzone length: at most `limit` (64 MiB by default), what the
    /// area can protect, and a whole number of blocks.
    pub(super) fn hotzone_len(&self, limit: Option<u64>) -> Result<u64, Error> {
        if self.moved.is_some() {
            return Ok(self.shift());
        }
        let want = limit.unwrap_or(64 << 20);
        let cap = match self.area.resilience {
            Resilience::Checksum { hash, sector_size } => {
                (self.area.size / hash.output_len() as u64) * u64::from(sector_size)
            }
            Resilience::Journal => self.area.size,
            _ => u64::MAX,
        };
        let l = want.min(cap).min(self.size) / self.block * self.block;
        if l == 0 {
            return Err(bad(format!(
                "a hotzone of {want} bytes holds no whole {}-byte block",
                self.block
            )));
        }
        Ok(l)
    }

    /// The metadata of the state with `o` bytes converted and the hotzone
    /// `[o, o + l)` in conversion (`l` = 0: a clean state): the active
    /// segments, then the backups, each crypt segment bound to its key's
    /// digest (the hotzone to both).
    pub(super) fn metadata_at(&self, o: u64, l: u64) -> Metadata {
        let mut m = self.meta.clone();
        let piece = |side: &Side, at: u64, len: Option<u64>| {
            let s = &side.segment;
            let mut p = if s.is_crypt() {
                Segment {
                    offset: s.offset + at,
                    size: len,
                    iv_tweak: at / 512,
                    flags: Vec::new(),
                    ..s.clone()
                }
            } else {
                Segment::linear(s.offset + at, len)
            };
            p.flags.clear();
            p
        };
        // (segment, bound to the old digest, bound to the new digest)
        let mut active: Vec<(Segment, bool, bool)> = Vec::new();
        if let Some(moved) = self
            .moved
            .as_ref()
            .filter(|_| self.mode == ReencryptMode::Decrypt)
        {
            // Forward, moving down: the moved segment [0, m) (converted
            // last, in place), [m, o) converted, [o, o + l) hot, the rest
            // old (read `s` bytes above).
            let m = moved.size.unwrap_or(0);
            let r = o + l;
            if o == 0 {
                if l > 0 {
                    let mut hot = piece(&self.new, 0, Some(l));
                    hot.flags.push(HOT.into());
                    active.push((hot, true, true));
                }
                active.push((piece(&self.new, l, None), false, true));
            } else {
                active.push((
                    piece(&Side::plain(moved.clone()), 0, moved.size),
                    true,
                    false,
                ));
                if o > m {
                    let len = (l > 0 || o < self.size).then_some(o - m);
                    active.push((piece(&self.new, m, len), false, true));
                }
                if l > 0 {
                    let mut hot = piece(&self.new, o, Some(l));
                    hot.flags.push(HOT.into());
                    active.push((hot, true, true));
                }
                if r < self.size {
                    active.push((piece(&self.old, r, None), true, false));
                }
            }
        } else if let Some(moved) = &self.moved {
            // Backward with a shift: [0, o) old (its first `s` bytes in
            // the moved copy), [o, o + l) hot, [o + l, size) converted.
            let s = self.shift();
            let r = o + l;
            if r == 0 {
                active.push((piece(&self.new, 0, None), false, true));
            }
            if o > 0 {
                active.push((
                    piece(&Side::plain(moved.clone()), 0, moved.size),
                    true,
                    false,
                ));
                if o > s {
                    active.push((piece(&self.old, s, Some(o - s)), true, false));
                }
            }
            if l > 0 {
                let mut hot = piece(&self.new, o, Some(l));
                hot.flags.push(HOT.into());
                active.push((hot, true, true));
            }
            if r > 0 && r < self.size {
                active.push((piece(&self.new, r, Some(self.size - r)), false, true));
            }
        } else if self.backward() {
            // [0, o) old, [o, o + l) hot, the rest converted.
            if o == 0 && l == 0 {
                active.push((piece(&self.new, 0, None), false, true));
            } else {
                if o > 0 {
                    let len = (o < self.size).then_some(o);
                    active.push((piece(&self.old, 0, len), true, false));
                }
                if l > 0 {
                    let mut hot = piece(&self.new, o, Some(l));
                    hot.flags.push(HOT.into());
                    active.push((hot, true, true));
                }
                if o + l < self.size {
                    active.push((piece(&self.new, o + l, None), false, true));
                }
            }
        } else if o + l >= self.size && l == 0 {
            active.push((piece(&self.new, 0, None), false, true));
        } else {
            if o > 0 {
                active.push((piece(&self.new, 0, Some(o)), false, true));
            }
            if l > 0 {
                let mut hot = piece(&self.new, o, Some(l));
                hot.flags.push(HOT.into());
                active.push((hot, true, true));
            }
            if o + l < self.size {
                active.push((piece(&self.old, o + l, None), true, false));
            }
        }
        m.segments.clear();
        for d in m.digests.values_mut() {
            d.segments.clear();
        }
        let bind = |m: &mut Metadata, id: u32, digest: Option<u32>| {
            if let Some(d) = digest.and_then(|d| m.digests.get_mut(&d)) {
                d.segments.push(id);
            }
        };
        let mut next = 0u32;
        for (seg, old, new) in active {
            let crypt = seg.is_crypt();
            m.segments.insert(next, seg);
            if crypt && old {
                bind(&mut m, next, self.old.digest);
            }
            if crypt && new {
                bind(&mut m, next, self.new.digest);
            }
            next += 1;
        }
        for side in [&self.old, &self.new] {
            m.segments.insert(next, side.segment.clone());
            if side.segment.is_crypt() {
                bind(&mut m, next, side.digest);
            }
            next += 1;
        }
        if let Some(moved) = &self.moved {
            m.segments.insert(next, moved.clone());
            if moved.is_crypt() {
                bind(&mut m, next, self.old.digest);
            }
        }
        for d in m.digests.values_mut() {
            d.segments.sort_unstable();
            d.segments.dedup();
        }
        m
    }
}
