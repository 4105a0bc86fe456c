//! Where a run is, from its record alone: a pure function of the run and
//! the active segments on disk that names the state, or refuses a layout
//! that is not exactly one this run can be in. Nothing is read or written
//! here; [`Reencryption::resume`] then acts on the state.

use super::*;

/// A state a resumed run can be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// No hotzone in doubt, `done` bytes converted (all of them: only the
    /// final header and the clean-up are left).
    Clean {
        /// Bytes converted.
        done: u64,
    },
    /// The hotzone `[o, o + l)` was being converted: it is repaired first,
    /// and `done` bytes are converted then.
    Hot {
        /// Its offset in the data.
        o: u64,
        /// Its length.
        l: u64,
        /// Bytes converted once it is repaired.
        done: u64,
    },
}

impl Reencryption {
    /// The state the active segments of `m` (the metadata as loaded) show,
    /// for this run: forward, backward in place (cryptsetup's decryption
    /// with a detached header) or moving the data. A layout that is not
    /// exactly one this run writes (or cryptsetup writes for it) is
    /// refused.
    pub(super) fn classify(&self, m: &Metadata) -> Result<State, Error> {
        let active: Vec<(u32, &Segment)> = m
            .segments
            .iter()
            .filter(|(_, s)| !s.is_backup())
            .map(|(&i, s)| (i, s))
            .collect();
        let hot = active.iter().position(|(_, s)| s.has_flag(HOT));
        if active.is_empty() {
            return Err(bad("no active segment"));
        }
        if self.moved.is_some() || self.backward() {
            let on_disk: Vec<Segment> = active.iter().map(|(_, s)| (*s).clone()).collect();
            return self.classify_layout(&on_disk, hot);
        }
        let (size, block, d) = (self.size, self.block, self.new.segment.offset);
        let old_digest = self.old.digest;
        let new_like = |id: u32, s: &Segment| {
            new_side(
                m,
                s,
                id,
                &self.new.segment.kind,
                old_digest,
                self.new.digest,
            )
        };
        match hot {
            Some(h) => {
                let s = active[h].1;
                let l = s.size.ok_or_else(|| bad("the hotzone has no fixed size"))?;
                let o = s
                    .offset
                    .checked_sub(d)
                    .ok_or_else(|| bad("the hotzone lies before the data"))?;
                if h != usize::from(o > 0)
                    || l == 0
                    || o.checked_add(l).is_none_or(|r| r > size)
                    || !o.is_multiple_of(block)
                    || !l.is_multiple_of(block)
                {
                    return Err(bad("the hotzone is not where a forward run puts it"));
                }
                Ok(State::Hot { o, l, done: o + l })
            }
            None => match active[..] {
                // Converted to the end but not torn down (cryptsetup's
                // post-final state): the header only.
                [(id, s)] if new_like(id, s) => Ok(State::Clean { done: size }),
                [_] => Ok(State::Clean { done: 0 }),
                [(id, first), (_, rest)] => {
                    let o = first
                        .size
                        .ok_or_else(|| bad("the converted segment has no fixed size"))?;
                    if !new_like(id, first)
                        || Some(rest.offset) != d.checked_add(o)
                        || o == 0
                        || !o.is_multiple_of(block)
                        || o >= size
                    {
                        return Err(bad("the segments are not a state of a forward run"));
                    }
                    Ok(State::Clean { done: o })
                }
                _ => Err(bad(format!(
                    "{} active segments: not a state of a forward run",
                    active.len()
                ))),
            },
        }
    }

    /// The state of a run that moves the data or walks backward: the
    /// active segments must be exactly the layout this module writes for
    /// the hotzone they flag (or for the progress their linear segments
    /// show), and a hotzone never overlaps the place it is written to,
    /// nor reads where the header or the moved segment is but from the
    /// moved copy.
    fn classify_layout(&self, on_disk: &[Segment], hot: Option<usize>) -> Result<State, Error> {
        let (size, block) = (self.size, self.block);
        let s = self.shift();
        let d = self.new.segment.offset;
        let down = self.mode == ReencryptMode::Decrypt;
        let m = self.moved.as_ref().and_then(|x| x.size).unwrap_or(0);
        let layout = |o: u64, l: u64| -> Vec<Segment> {
            self.metadata_at(o, l)
                .segments
                .into_values()
                .filter(|x| !x.is_backup())
                .collect()
        };
        let refuse = || bad("the segments are not a state of the run the record describes");
        let hotzone = |h: usize| -> Result<(u64, u64), Error> {
            let x = &on_disk[h];
            let l = x.size.ok_or_else(refuse)?;
            let o = x.offset.checked_sub(d).ok_or_else(refuse)?;
            let placed = if self.backward() {
                true
            } else if down {
                (o == 0 && l == m) || (o >= m && l <= s)
            } else {
                l <= s && (o == 0 || o >= s)
            };
            if l == 0
                || !placed
                || !o.is_multiple_of(block)
                || !l.is_multiple_of(block)
                || o.checked_add(l).is_none_or(|r| r > size)
                || layout(o, l) != on_disk
            {
                return Err(refuse());
            }
            Ok((o, l))
        };
        if self.backward() {
            // cryptsetup's decryption with a detached header: [0, o) old,
            // [o, o + l) hot, the rest converted; in place.
            return match hot {
                Some(h) => {
                    let (o, l) = hotzone(h)?;
                    Ok(State::Hot {
                        o,
                        l,
                        done: size - o,
                    })
                }
                None => [0, size, on_disk[0].size.unwrap_or(0)]
                    .into_iter()
                    .find(|&o| o <= size && o.is_multiple_of(block) && layout(o, 0) == on_disk)
                    .map(|o| State::Clean { done: size - o })
                    .ok_or_else(refuse),
            };
        }
        if let Some(h) = hot {
            let (o, l) = hotzone(h)?;
            let done = match (down, o) {
                (true, 0) => size,
                (true, _) => o + l - m,
                (false, _) => size - o,
            };
            return Ok(State::Hot { o, l, done });
        }
        let o = if down {
            // No linear segment: nothing done; one at 0: all; one at `m`:
            // that much after the moved segment.
            match on_disk.iter().find(|x| !x.is_crypt()) {
                None => m,
                Some(x) if x.offset == 0 => 0,
                Some(x) => x.size.map_or(size, |n| m.saturating_add(n)),
            }
        } else {
            on_disk
                .iter()
                .filter(|x| !x.is_crypt())
                .map(|x| x.size.unwrap_or(u64::MAX))
                .fold(0u64, u64::saturating_add)
        };
        if o > size
            || !o.is_multiple_of(block)
            || (down && o != 0 && o < m)
            || layout(o, 0) != on_disk
        {
            return Err(refuse());
        }
        let done = match (down, o) {
            (true, 0) => size,
            (true, _) => o - m,
            (false, _) => size - o,
        };
        Ok(State::Clean { done })
    }
}
