//! Portable block-wise kernels: 3 bytes <-> 4 symbols, with 64-bit loads
//! (6 bytes -> 8 symbols) in the encoder's main loop. No `unsafe`.

use super::BodyError;
use crate::alphabet::INVALID;

/// Encodes one 24-bit group (in the low bits of `v`) into 4 symbols.
#[inline(always)]
fn sym4(enc: &[u8; 64], v: u32) -> [u8; 4] {
    [
        enc[(v >> 18) as usize & 63],
        enc[(v >> 12) as usize & 63],
        enc[(v >> 6) as usize & 63],
        enc[v as usize & 63],
    ]
}

/// Encodes all of `src` without padding into `dst`, whose length is exactly
/// the unpadded encoded length.
pub(crate) fn encode(enc: &[u8; 64], src: &[u8], dst: &mut [u8]) {
    let mut si = 0;
    let mut di = 0;
    // Main loop: one big-endian 64-bit load covers two groups (6 bytes); the
    // two bytes past them are read but not used (they exist: 8 <= remaining).
    while let (Some(inp), Some(out)) = (
        src.get(si..).and_then(|s| s.first_chunk::<8>()),
        dst.get_mut(di..).and_then(|d| d.first_chunk_mut::<8>()),
    ) {
        let w = u64::from_be_bytes(*inp);
        let hi = sym4(enc, (w >> 40) as u32);
        let lo = sym4(enc, (w >> 16) as u32);
        *out = [hi[0], hi[1], hi[2], hi[3], lo[0], lo[1], lo[2], lo[3]];
        si += 6;
        di += 8;
    }
    let rest = src.get(si..).unwrap_or_default();
    let out = dst.get_mut(di..).unwrap_or_default();
    let mut groups = rest.chunks_exact(3);
    let mut outs = out.chunks_exact_mut(4);
    for (g, o) in (&mut groups).zip(&mut outs) {
        let v = u32::from(g[0]) << 16 | u32::from(g[1]) << 8 | u32::from(g[2]);
        o.copy_from_slice(&sym4(enc, v));
    }
    encode_partial(enc, groups.remainder(), outs.into_remainder());
}

/// Encodes the 1 or 2 bytes of a partial last group into its 2 or 3
/// symbols (`out`); nothing for an empty `tail`.
#[inline]
pub(crate) fn encode_partial(enc: &[u8; 64], tail: &[u8], out: &mut [u8]) {
    match (tail, out) {
        ([a], [x, y]) => {
            let s = sym4(enc, u32::from(*a) << 16);
            *x = s[0];
            *y = s[1];
        }
        ([a, b], [x, y, z]) => {
            let s = sym4(enc, u32::from(*a) << 16 | u32::from(*b) << 8);
            *x = s[0];
            *y = s[1];
            *z = s[2];
        }
        (t, o) => debug_assert!(t.is_empty() && o.is_empty()),
    }
}

/// Index of the first byte of `group` outside the alphabet, if any.
#[inline]
pub(crate) fn first_invalid(dec: &[u8; 256], group: &[u8]) -> Option<usize> {
    group.iter().position(|&c| dec[usize::from(c)] == INVALID)
}

/// Decodes whole groups of 4 symbols; see the contract in `backend/mod.rs`.
pub(crate) fn decode_groups(dec: &[u8; 256], src: &[u8], dst: &mut [u8]) -> Result<(), usize> {
    let mut base = 0;
    // Two groups per step: one validity test for 8 symbols.
    let mut pairs = src.chunks_exact(8);
    let mut opairs = dst.chunks_exact_mut(6);
    for (s, o) in (&mut pairs).zip(&mut opairs) {
        let v: [u8; 8] = core::array::from_fn(|i| dec[usize::from(s[i])]);
        if v.iter().fold(0, |acc, &x| acc | x) & 0x80 != 0 {
            return decode_slow(dec, s, o).map_err(|i| base + i);
        }
        let a =
            u32::from(v[0]) << 18 | u32::from(v[1]) << 12 | u32::from(v[2]) << 6 | u32::from(v[3]);
        let b =
            u32::from(v[4]) << 18 | u32::from(v[5]) << 12 | u32::from(v[6]) << 6 | u32::from(v[7]);
        let w = (u64::from(a) << 24 | u64::from(b)).to_be_bytes();
        o.copy_from_slice(&w[2..]);
        base += 8;
    }
    decode_slow(dec, pairs.remainder(), opairs.into_remainder()).map_err(|i| base + i)
}

/// Decodes a whole body (no padding, length not 1 mod 4): the groups, then
/// the 2- or 3-symbol tail with its canonical check. See `backend/mod.rs`.
pub(crate) fn decode_body(dec: &[u8; 256], src: &[u8], dst: &mut [u8]) -> Result<(), BodyError> {
    let full = src.len() / 4 * 4;
    let (groups, tail) = src.split_at(full);
    let (gout, tout) = dst.split_at_mut(full / 4 * 3);
    decode_groups(dec, groups, gout).map_err(BodyError::InvalidByte)?;
    decode_partial(dec, tail, tout, full)
}

/// Decodes the 2 or 3 symbols of a partial last group (`tail`, at index
/// `base` of the body) into its 1 or 2 bytes (`out`), with the canonical
/// check; nothing for an empty `tail`. Error indices are absolute.
#[inline]
pub(crate) fn decode_partial(
    dec: &[u8; 256],
    tail: &[u8],
    out: &mut [u8],
    base: usize,
) -> Result<(), BodyError> {
    let v = |c: u8| dec[usize::from(c)];
    let (bits, any) = match *tail {
        [a, b] => (u32::from(v(a)) << 6 | u32::from(v(b)), v(a) | v(b)),
        [a, b, c] => (
            u32::from(v(a)) << 12 | u32::from(v(b)) << 6 | u32::from(v(c)),
            v(a) | v(b) | v(c),
        ),
        _ => {
            debug_assert!(tail.is_empty() && out.is_empty());
            return Ok(());
        }
    };
    // Invalid symbols look up with the high bit set.
    if any & 0x80 != 0 {
        let i = first_invalid(dec, tail).unwrap_or_default();
        return Err(BodyError::InvalidByte(base + i));
    }
    match out {
        [a] if bits & 0xf == 0 => *a = (bits >> 4) as u8,
        [a, b] if bits & 0x3 == 0 => {
            *a = (bits >> 10) as u8;
            *b = (bits >> 2) as u8;
        }
        _ => return Err(BodyError::NonCanonical(base + tail.len() - 1)),
    }
    Ok(())
}

/// [`decode_body`] of the rest of a body from symbol `si` (a multiple of
/// 4, so byte `si / 4 * 3` of the output) on, with error indices made
/// absolute: how a SIMD backend hands over the rest of a body, to find (and
/// stop at) the first error or to finish a tail it does not handle.
#[cfg(any(x86_simd, arm_cpu))]
pub(crate) fn decode_body_from(
    dec: &[u8; 256],
    src: &[u8],
    dst: &mut [u8],
    si: usize,
) -> Result<(), BodyError> {
    debug_assert!(si.is_multiple_of(4));
    let (s, d) = (
        src.get(si..).unwrap_or_default(),
        dst.get_mut(si / 4 * 3..).unwrap_or_default(),
    );
    decode_body(dec, s, d).map_err(|e| e.shift(si))
}

/// One group at a time, stopping at the first invalid byte.
fn decode_slow(dec: &[u8; 256], src: &[u8], dst: &mut [u8]) -> Result<(), usize> {
    for (gi, (s, o)) in src.chunks_exact(4).zip(dst.chunks_exact_mut(3)).enumerate() {
        if let Some(i) = first_invalid(dec, s) {
            return Err(gi * 4 + i);
        }
        let v = u32::from(dec[usize::from(s[0])]) << 18
            | u32::from(dec[usize::from(s[1])]) << 12
            | u32::from(dec[usize::from(s[2])]) << 6
            | u32::from(dec[usize::from(s[3])]);
        o.copy_from_slice(&v.to_be_bytes()[1..]);
    }
    Ok(())
}
