//! Scatter-gather walks: one pass over the segments with a pair of cursors.
//!
//! Runs of whole units that sit inside one destination segment are handed to
//! the cipher's multi-unit path as they are; only a unit that straddles a
//! destination boundary is gathered into a bounce buffer, processed, and
//! scattered back. Each segment and each unit is visited once, so a walk is
//! O(segments + units).

use alloc::vec::Vec;
use zeroize::Zeroizing;

use crate::cipher::check_request;
use crate::units::run;
use crate::{DataUnitCipher, DataUnits, Direction, Error, Tweak};

/// A position in a list of segments: segment index and offset within it.
#[derive(Clone, Copy, Default)]
struct Cursor {
    seg: usize,
    off: usize,
}

impl Cursor {
    /// Moves past exhausted (or empty) segments.
    fn settle<S: AsRef<[u8]>>(&mut self, segs: &[S]) {
        while self.seg < segs.len() && self.off == segs[self.seg].as_ref().len() {
            self.seg += 1;
            self.off = 0;
        }
    }

    /// The unread rest of the current segment (empty past the end).
    fn rest<'a, S: AsRef<[u8]>>(&self, segs: &'a [S]) -> &'a [u8] {
        segs.get(self.seg)
            .map_or(&[][..], |s| &s.as_ref()[self.off..])
    }
}

/// The sum of the segment lengths (saturating: a total that does not fit a
/// `usize` cannot be a whole number of units of a real buffer anyway).
fn total<S: AsRef<[u8]>>(segs: &[S]) -> usize {
    segs.iter()
        .fold(0usize, |acc, s| acc.saturating_add(s.as_ref().len()))
}

/// Copies `out.len()` bytes from `segs` at `cur` into `out`, advancing `cur`.
fn gather<S: AsRef<[u8]>>(segs: &[S], cur: &mut Cursor, out: &mut [u8]) {
    let mut filled = 0;
    while filled < out.len() {
        cur.settle(segs);
        let rest = cur.rest(segs);
        let take = rest.len().min(out.len() - filled);
        out[filled..filled + take].copy_from_slice(&rest[..take]);
        filled += take;
        cur.off += take;
    }
}

/// Copies `data` into `segs` at `cur`, advancing `cur`.
fn scatter(segs: &mut [&mut [u8]], cur: &mut Cursor, data: &[u8]) {
    let mut done = 0;
    while done < data.len() {
        cur.settle(segs);
        let seg = &mut segs[cur.seg][cur.off..];
        let take = seg.len().min(data.len() - done);
        seg[..take].copy_from_slice(&data[done..done + take]);
        done += take;
        cur.off += take;
    }
}

pub(crate) fn in_place<C: DataUnitCipher>(
    units: &DataUnits<C>,
    dir: Direction,
    first_iv: C::Iv,
    segs: &mut [&mut [u8]],
) -> Result<(), Error> {
    let unit = units.unit_size();
    let step = units.iv_step();
    let cipher = units.cipher();
    let mut left = check_request::<C>(unit, total(segs))?;
    let mut bounce: Zeroizing<Vec<u8>> = Zeroizing::new(Vec::new());
    let mut cur = Cursor::default();
    let mut iv = first_iv;
    while left > 0 {
        cur.settle(segs);
        let whole = (cur.rest(segs).len() / unit.get()).min(left);
        if whole > 0 {
            let bytes = whole * unit.get();
            let whole_run = &mut segs[cur.seg][cur.off..cur.off + bytes];
            run(cipher, dir, iv, step, unit, whole_run)?;
            cur.off += bytes;
            iv = iv.advance(whole as u128 * u128::from(step));
            left -= whole;
        } else {
            bounce.resize(unit.get(), 0);
            let start = cur;
            gather(segs, &mut cur, &mut bounce);
            cipher.crypt_unit(dir, iv, &mut bounce)?;
            scatter(segs, &mut { start }, &bounce);
            iv = iv.advance(u128::from(step));
            left -= 1;
        }
    }
    Ok(())
}

pub(crate) fn out_of_place<C: DataUnitCipher>(
    units: &DataUnits<C>,
    dir: Direction,
    first_iv: C::Iv,
    src: &[&[u8]],
    dst: &mut [&mut [u8]],
) -> Result<(), Error> {
    let unit = units.unit_size();
    let step = units.iv_step();
    let cipher = units.cipher();
    let (src_total, dst_total) = (total(src), total(dst));
    let mut left = check_request::<C>(unit, src_total)?;
    if src_total != dst_total {
        return Err(Error::SegmentTotalMismatch {
            src: src_total,
            dst: dst_total,
        });
    }
    let mut bounce: Zeroizing<Vec<u8>> = Zeroizing::new(Vec::new());
    let (mut sc, mut dc) = (Cursor::default(), Cursor::default());
    let mut iv = first_iv;
    while left > 0 {
        dc.settle(dst);
        sc.settle(src);
        let whole = (dc.rest(dst).len() / unit.get()).min(left);
        if whole > 0 {
            // The destination holds `whole` units contiguously. Take as many
            // as the source also holds contiguously straight through the
            // fused out-of-place path, or else gather them into place.
            let src_whole = sc.rest(src).len() / unit.get();
            let n = if src_whole > 0 {
                whole.min(src_whole)
            } else {
                whole
            };
            let bytes = n * unit.get();
            let whole_run = &mut dst[dc.seg][dc.off..dc.off + bytes];
            if src_whole > 0 {
                let from = &sc.rest(src)[..bytes];
                cipher.crypt_units_to(dir, iv, step, unit, from, whole_run)?;
                sc.off += bytes;
            } else {
                gather(src, &mut sc, whole_run);
                run(cipher, dir, iv, step, unit, whole_run)?;
            }
            dc.off += bytes;
            iv = iv.advance(n as u128 * u128::from(step));
            left -= n;
        } else {
            bounce.resize(unit.get(), 0);
            gather(src, &mut sc, &mut bounce);
            cipher.crypt_unit(dir, iv, &mut bounce)?;
            scatter(dst, &mut dc, &bounce);
            iv = iv.advance(u128::from(step));
            left -= 1;
        }
    }
    Ok(())
}
