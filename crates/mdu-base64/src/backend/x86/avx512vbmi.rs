//! AVX-512 VBMI kernels: 48 bytes <-> 64 symbols per step.
//!
//! Encode: `vpermb` spreads each 3-byte group over a 32-bit lane as
//! `[b1, b0, b2, b1]`, `vpmultishiftqb` pulls the four 6-bit fields out of
//! each lane (bit offsets 10, 4, 22, 16), and a second `vpermb` with the
//! 64-symbol alphabet as its table turns values into symbols (it reads only
//! the low 6 bits of each index, so no masking is needed). Any alphabet works.
//!
//! Decode: `vpermi2b` looks every symbol up in the first 128 entries of the
//! alphabet's reverse table (every symbol is ASCII); a byte is invalid when
//! the looked-up value or the byte itself has its high bit set. Two
//! multiply-adds merge four 6-bit values into one 24-bit lane and a `vpermb`
//! packs 16 lanes into 48 bytes. Long inputs first decode whole groups until
//! the output is 64-byte aligned, then run four steps at a time whose 192
//! bytes leave as three aligned 64-byte stores, each packed from two steps'
//! lanes by one `vpermt2b` (no store is split over two cache lines, none is
//! masked).
//!
//! Short inputs and the rest after the bulk loops (under 256 symbols, or
//! under 64 bytes) take at most four steps resp. two, with plain loads and
//! stores wherever they stay in bounds; the decoder tests all of its steps
//! at once before storing any. Only the last load and store are masked
//! (fault suppression covers the masked-off bytes); BMI2 (`bzhi`, present
//! on every AVX-512 CPU and checked with it) builds the masks.

use core::arch::x86_64::*;

use super::{BodyError, scalar};

/// For lane `i`, bytes `[3i+1, 3i, 3i+2, 3i+1]` of the 48-byte input.
const ENC_SPREAD: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 16 {
        let b = 3 * i as u8;
        t[4 * i] = b + 1;
        t[4 * i + 1] = b;
        t[4 * i + 2] = b + 2;
        t[4 * i + 3] = b + 1;
        i += 1;
    }
    t
};

/// Bit offsets of the four 6-bit fields in each 32-bit lane, two lanes per
/// 64-bit word: 10, 4, 22, 16 and 42, 36, 54, 48.
const ENC_SHIFTS: i64 = 0x3036_242a_1016_040a;

/// Output byte `j` of 48 is byte `2 - j % 3` of 24-bit lane `j / 3`.
const DEC_PACK: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut j = 0;
    while j < 48 {
        t[j] = (4 * (j / 3) + 2 - j % 3) as u8;
        j += 1;
    }
    t
};

/// Four steps' 192 output bytes as three 64-byte vectors: vector `k` is
/// bytes `64k .. 64k + 64` of the four packed steps, taken from the 24-bit
/// lanes of steps `k` (indices below 64) and `k + 1` (indices 64 and up)
/// with one two-source `vpermt2b`.
const DEC_PACK3: [[u8; 64]; 3] = {
    let mut t = [[0u8; 64]; 3];
    let mut k = 0;
    while k < 3 {
        let mut j = 0;
        while j < 64 {
            // Output byte `o` of the 192 is byte `o % 48` of step `o / 48`.
            let o = 64 * k + j;
            let step = o / 48;
            t[k][j] = DEC_PACK[o % 48] + if step == k { 0 } else { 64 };
            j += 1;
        }
        k += 1;
    }
    t
};

/// The low `n` bits set (all 64 for `n >= 64`): one `bzhi`.
#[target_feature(enable = "bmi2")]
#[inline]
fn mask_low(n: usize) -> u64 {
    _bzhi_u64(u64::MAX, n as u32)
}

/// Encodes all of `src` without padding into `dst`.
///
/// # Safety
/// The CPU supports AVX-512 F, BW, VBMI and BMI2, and `dst.len()` is the unpadded
/// encoded length of `src` (`4 * (len / 3)` plus 0, 2 or 3).
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
pub(super) unsafe fn encode(enc: &[u8; 64], src: &[u8], dst: &mut [u8]) {
    // SAFETY: both tables are 64 bytes long; unaligned loads.
    let (lut, spread) = unsafe {
        (
            _mm512_loadu_si512(enc.as_ptr().cast()),
            _mm512_loadu_si512(ENC_SPREAD.as_ptr().cast()),
        )
    };
    let shifts = _mm512_set1_epi64(ENC_SHIFTS);
    let step = |x: __m512i| {
        let lanes = _mm512_permutexvar_epi8(spread, x);
        let values = _mm512_multishift_epi64_epi8(shifts, lanes);
        _mm512_permutexvar_epi8(values, lut)
    };
    let n = src.len();
    let mut si = 0;
    let mut di = 0;
    // Long inputs: one short masked step first so that the 64-byte stores
    // of the main loop are aligned (a store split over two cache lines costs
    // about twice as much). Possible when `dst` is 4-byte aligned.
    let misalign = dst.as_ptr() as usize & 63;
    if n >= 512 && misalign != 0 && misalign.is_multiple_of(4) {
        let groups = (64 - misalign) / 4;
        // SAFETY: `3 * groups <= 45 < n` input bytes and `4 * groups`
        // output symbols (fewer than the `4 * n / 3` of `dst`) are in
        // bounds; masked-off bytes are not accessed.
        unsafe {
            let x = _mm512_maskz_loadu_epi8(mask_low(3 * groups), src.as_ptr().cast());
            _mm512_mask_storeu_epi8(dst.as_mut_ptr().cast(), mask_low(4 * groups), step(x));
        }
        si = 3 * groups;
        di = 4 * groups;
    }
    // Four steps at a time while their last 64-byte load (from `si + 144`)
    // is in bounds, then one: plain loads of 64 bytes of which 48 are used.
    // After a step at `si` at least 16 input bytes remain, so at least 22
    // symbols follow its 64 and its 64-byte store is in bounds too.
    while n - si >= 208 {
        // SAFETY: `si + 144 + 64 <= n` bytes of `src`; the stores end at
        // `di + 256`, at most the symbols of `si + 192` input bytes, below
        // `dst.len()` as `n - si >= 208`.
        unsafe {
            let x: [__m512i; 4] =
                core::array::from_fn(|k| _mm512_loadu_si512(src.as_ptr().add(si + 48 * k).cast()));
            for (k, &x) in x.iter().enumerate() {
                _mm512_storeu_si512(dst.as_mut_ptr().add(di + 64 * k).cast(), step(x));
            }
        }
        si += 192;
        di += 256;
    }
    while n - si >= 64 {
        // SAFETY: `si + 64 <= n` bytes of `src`; `di + 64 <= dst.len()` as
        // argued above.
        unsafe {
            let x = _mm512_loadu_si512(src.as_ptr().add(si).cast());
            _mm512_storeu_si512(dst.as_mut_ptr().add(di).cast(), step(x));
        }
        si += 48;
        di += 64;
    }
    // Fewer than 64 bytes are left: at most two masked steps, the first of
    // them a whole 48 bytes whose 64 symbols are followed by at least 2
    // more (so its store needs no mask).
    if n - si > 48 {
        // SAFETY: 48 bytes of `src` from `si` under the mask; `di + 64 <
        // dst.len()` as 49 or more bytes remain.
        unsafe {
            let x = _mm512_maskz_loadu_epi8(mask_low(48), src.as_ptr().add(si).cast());
            _mm512_storeu_si512(dst.as_mut_ptr().add(di).cast(), step(x));
        }
        si += 48;
        di += 64;
    }
    if si < n {
        // SAFETY: the masks cover the last `n - si` bytes of `src` and the
        // last `dst.len() - di` bytes of `dst`; masked-off bytes are not
        // accessed (fault suppression). Zeroed input bytes past the end
        // make the last symbol's unused bits zero.
        unsafe {
            let x = _mm512_maskz_loadu_epi8(mask_low(n - si), src.as_ptr().add(si).cast());
            _mm512_mask_storeu_epi8(
                dst.as_mut_ptr().add(di).cast(),
                mask_low(dst.len() - di),
                step(x),
            );
        }
    }
}

/// Decodes a body (see the contract in `backend/mod.rs`), its 2- or 3-symbol
/// tail included: an aligning head (long inputs), the bulk loop, and the
/// rest of fewer than 256 symbols. Each is validated in pieces of up to four
/// steps before anything of the piece is stored; a piece that holds an
/// invalid byte or a non-canonical last symbol writes nothing and hands
/// over to the scalar kernel, which stops at the first error and reports
/// it.
///
/// # Safety
/// The CPU supports AVX-512 F, BW, VBMI and BMI2, `src.len() % 4 != 1` and
/// `dst.len()` is the decoded length of `src`.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
pub(super) unsafe fn decode_body(
    dec: &[u8; 256],
    src: &[u8],
    dst: &mut [u8],
) -> Result<(), BodyError> {
    let n = src.len();
    let (mut si, mut di) = (0, 0);
    if n >= 1024 {
        // A head of whole groups first, so that the bulk loop's stores are
        // 64-byte aligned: `h = m + 64k` output bytes put `dst + h` on a
        // boundary, and as 64 = 1 mod 3, `k = -m mod 3` makes `h` a
        // multiple of 3; at most 189 bytes, 252 symbols.
        let m = (64 - dst.as_ptr() as usize % 64) % 64;
        let h = m + 64 * ((3 - m % 3) % 3);
        // SAFETY: the preconditions of this function; `4 * h / 3 <= 252`
        // symbols, a whole number of groups, lie in bounds (`n >= 1024`).
        unsafe { decode_short(dec, src, dst, 0, 4 * h / 3)? };
        (si, di) = (4 * h / 3, h);
    }
    if n - si >= 256 {
        // SAFETY: the preconditions of this function are those of the bulk
        // loop (same CPU features, same slices); `si` and `di` correspond.
        (si, di) = unsafe { decode_bulk(dec, src, dst, si, di)? };
    }
    debug_assert_eq!(di, si / 4 * 3);
    // SAFETY: the preconditions of this function; fewer than 256 symbols
    // remain after the bulk loop.
    unsafe { decode_short(dec, src, dst, si, n) }
}

/// Decodes symbols `si .. end` (fewer than 256; `end - si` not 1 mod 4)
/// in at most four steps, validated together and only then stored: a short
/// input pays one validity branch, every step but the last loads 64 plain
/// bytes, and every step but the last stores 64 plain bytes where the
/// piece's own output has room (the 16 bytes past a step's 48 are then
/// bytes of the later steps, which overwrite them). The last step's load
/// and store are masked, so nothing past `end` is read and nothing past
/// the piece's decoded bytes is written.
///
/// # Safety
/// As [`decode_body`], with `si % 4 == 0`, `si <= end <= src.len()`,
/// `end - si < 256` and either `end == src.len()` or `end - si` a multiple
/// of 4.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
#[inline]
unsafe fn decode_short(
    dec: &[u8; 256],
    src: &[u8],
    dst: &mut [u8],
    si: usize,
    end: usize,
) -> Result<(), BodyError> {
    // SAFETY: forwarded; `S` is the number of 64-symbol steps.
    unsafe {
        match (end - si).div_ceil(64) {
            0 => Ok(()),
            1 => decode_steps::<1>(dec, src, dst, si, end),
            2 => decode_steps::<2>(dec, src, dst, si, end),
            3 => decode_steps::<3>(dec, src, dst, si, end),
            _ => decode_steps::<4>(dec, src, dst, si, end),
        }
    }
}

/// [`decode_short`] of `S` steps: `64 * (S - 1) < end - si <= 64 * S`.
///
/// # Safety
/// As [`decode_short`], and `S` is the number of steps.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
#[inline]
unsafe fn decode_steps<const S: usize>(
    dec: &[u8; 256],
    src: &[u8],
    dst: &mut [u8],
    si: usize,
    end: usize,
) -> Result<(), BodyError> {
    let t = DecodeTables::load(dec);
    // 1..=64 symbols, not 1 mod 4 (neither are `end - si` and 64).
    let last = end - si - 64 * (S - 1);
    let last_mask = mask_low(last);
    // SAFETY: steps before the last have 64 bytes in bounds from
    // `si + 64j`; the last step's mask covers its `last` bytes, in bounds,
    // and masked-off bytes are not accessed (they read as zero).
    let x: [__m512i; S] = core::array::from_fn(|j| unsafe {
        let p = src.as_ptr().add(si + 64 * j);
        if j + 1 < S {
            _mm512_loadu_si512(p.cast())
        } else {
            _mm512_maskz_loadu_epi8(last_mask, p.cast())
        }
    });
    // Masked-off lanes of the last step look up as 0, so a partial group
    // packs as if its missing symbols were 'A'.
    let v: [__m512i; S] = core::array::from_fn(|j| {
        if j + 1 < S {
            t.lookup(x[j])
        } else {
            _mm512_maskz_permutex2var_epi8(last_mask, t.lut_lo, x[j], t.lut_hi)
        }
    });
    // Invalid bytes (high bit in the byte or its looked-up value) in any
    // step and, for a 2- or 3-symbol tail, unused low bits of the last
    // symbol (0x0f resp. 0x03), in one test.
    let any = (0..S).fold(_mm512_setzero_si512(), |a, j| {
        _mm512_or_si512(a, _mm512_or_si512(x[j], v[j]))
    });
    let unused = (0x030f_0000u32 >> (8 * (last % 4))) as u8;
    let bad = _mm512_movepi8_mask(any)
        | _mm512_mask_test_epi8_mask(1u64 << (last - 1), v[S - 1], _mm512_set1_epi8(unused as i8));
    if bad != 0 {
        return scalar::decode_body_from(dec, src, dst, si);
    }
    let di = si / 4 * 3;
    // The end of this piece's output: a full store must not reach past it,
    // or bytes that a later piece with an error leaves alone would change.
    let out_end = if end == src.len() {
        dst.len()
    } else {
        end / 4 * 3
    };
    for (j, &v) in v.iter().enumerate() {
        let (o, out) = (di + 48 * j, t.pack48(v));
        let p = dst.as_mut_ptr();
        // SAFETY: a full 64-byte store only before the last step and where
        // `o + 64 <= out_end <= dst.len()`; otherwise the mask covers the
        // step's decoded bytes (48, or the last step's `last * 3 / 4`), in
        // bounds of `dst` from `o`, and masked-off bytes are not written.
        unsafe {
            if j + 1 < S && o + 64 <= out_end {
                _mm512_storeu_si512(p.add(o).cast(), out);
            } else {
                let olen = if j + 1 < S { 48 } else { last * 3 / 4 };
                _mm512_mask_storeu_epi8(p.add(o).cast(), mask_low(olen), out);
            }
        }
    }
    Ok(())
}

/// Registers of the decoder: the two halves of the 128-entry reverse table,
/// the 48-of-64 byte pack permutation and the two multiply-add constants.
struct DecodeTables {
    lut_lo: __m512i,
    lut_hi: __m512i,
    pack: __m512i,
    merge6: __m512i,
    merge12: __m512i,
}

impl DecodeTables {
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
    #[inline]
    fn load(dec: &[u8; 256]) -> DecodeTables {
        // SAFETY: `dec` has 256 bytes, so offsets 0 and 64 leave 64 readable
        // bytes each; `DEC_PACK` has 64.
        let (lut_lo, lut_hi, pack) = unsafe {
            (
                _mm512_loadu_si512(dec.as_ptr().cast()),
                _mm512_loadu_si512(dec.as_ptr().add(64).cast()),
                _mm512_loadu_si512(DEC_PACK.as_ptr().cast()),
            )
        };
        DecodeTables {
            lut_lo,
            lut_hi,
            pack,
            merge6: _mm512_set1_epi32(0x0140_0140),
            merge12: _mm512_set1_epi32(0x0001_1000),
        }
    }

    /// Symbol -> 6-bit value (high bit set for bytes outside the alphabet).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
    #[inline]
    fn lookup(&self, x: __m512i) -> __m512i {
        _mm512_permutex2var_epi8(self.lut_lo, x, self.lut_hi)
    }

    /// 64 values -> 16 lanes of 24 bits (in the low three bytes of each
    /// 32-bit lane, most significant first).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
    #[inline]
    fn merge(&self, v: __m512i) -> __m512i {
        let pairs = _mm512_maddubs_epi16(v, self.merge6);
        _mm512_madd_epi16(pairs, self.merge12)
    }

    /// 64 values -> 48 bytes in the low part of the register.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
    #[inline]
    fn pack48(&self, v: __m512i) -> __m512i {
        _mm512_permutexvar_epi8(self.pack, self.merge(v))
    }
}

/// Four steps (256 symbols) at a time from symbol `si` (output byte `di`)
/// while at least 256 symbols remain, with one validity test per four
/// steps; returns the position reached. Kept out of line so short inputs
/// do not pay for its registers.
///
/// # Safety
/// As [`decode_body`], and `di == si / 4 * 3` with `si % 4 == 0`.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
#[inline(never)]
unsafe fn decode_bulk(
    dec: &[u8; 256],
    src: &[u8],
    dst: &mut [u8],
    mut si: usize,
    mut di: usize,
) -> Result<(usize, usize), BodyError> {
    let t = DecodeTables::load(dec);
    // SAFETY: each row of `DEC_PACK3` has 64 bytes.
    let pack3: [__m512i; 3] =
        core::array::from_fn(|k| unsafe { _mm512_loadu_si512(DEC_PACK3[k].as_ptr().cast()) });
    let n = src.len();
    // Nothing of the 192 output bytes is stored unless all 256 symbols are
    // valid; they go out as three full 64-byte stores (no store overlaps the
    // next, none is masked).
    while n - si >= 256 {
        // SAFETY: `si + 256 <= n`.
        let x: [__m512i; 4] = core::array::from_fn(|k| unsafe {
            _mm512_loadu_si512(src.as_ptr().add(si + 64 * k).cast())
        });
        let v: [__m512i; 4] = core::array::from_fn(|k| t.lookup(x[k]));
        let any = _mm512_or_si512(
            _mm512_or_si512(_mm512_or_si512(x[0], v[0]), _mm512_or_si512(x[1], v[1])),
            _mm512_or_si512(_mm512_or_si512(x[2], v[2]), _mm512_or_si512(x[3], v[3])),
        );
        if _mm512_movepi8_mask(any) != 0 {
            return scalar::decode_body_from(dec, src, dst, si).map(|()| (n, dst.len()));
        }
        let lanes: [__m512i; 4] = core::array::from_fn(|k| t.merge(v[k]));
        // SAFETY: `dst.len() - di == (n - si) * 3 / 4 >= 192`; the stores
        // cover `di .. di + 192`.
        unsafe {
            let p = dst.as_mut_ptr().add(di);
            for k in 0..3 {
                let out = _mm512_permutex2var_epi8(lanes[k], pack3[k], lanes[k + 1]);
                _mm512_storeu_si512(p.add(64 * k).cast(), out);
            }
        }
        si += 256;
        di += 192;
    }
    Ok((si, di))
}
