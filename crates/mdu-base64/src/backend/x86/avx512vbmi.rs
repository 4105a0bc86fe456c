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
//! Short inputs (one or two pieces of up to 256 symbols below 512) and the
//! rest after the bulk loops (under 256 symbols, or under 208 bytes) take
//! at most four steps resp. five per piece, all loaded before any is
//! stored, with plain stores wherever they stay in bounds; the decoder
//! tests all of its steps at once before storing any. Masks cover
//! the ends (fault suppression covers the masked-off bytes); BMI2 (`bzhi`,
//! present on every AVX-512 CPU and checked with it) builds them. The
//! decoder is one function with its tables loaded once: for a name, the
//! calls and loads around the kernel are a good part of the cost.

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

crate::backend::needs::target_features!(Avx512Vbmi =>
    /// Encodes all of `src` without padding into `dst`.
    ///
    /// # Safety
    /// The CPU supports AVX-512 F, BW, VBMI and BMI2, and `dst.len()` is the unpadded
    /// encoded length of `src` (`4 * (len / 3)` plus 0, 2 or 3).
    pub(super) unsafe fn encode(enc: &[u8; 64], src: &[u8], dst: &mut [u8]) {
        let e = EncodeTables::load(enc);
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
                _mm512_mask_storeu_epi8(dst.as_mut_ptr().cast(), mask_low(4 * groups), e.step(x));
            }
            si = 3 * groups;
            di = 4 * groups;
        }
        // Four steps at a time while their last 64-byte load (from `si + 144`)
        // is in bounds: plain loads of 64 bytes of which 48 are used. After a
        // step at `si` at least 16 input bytes remain, so at least 22 symbols
        // follow its 64 and its 64-byte store is in bounds too. The rest goes
        // to `encode_rest`.
        while n - si >= 208 {
            // SAFETY: `si + 144 + 64 <= n` bytes of `src`; the stores end at
            // `di + 256`, at most the symbols of `si + 192` input bytes, below
            // `dst.len()` as `n - si >= 208`.
            unsafe {
                let x: [__m512i; 4] =
                    core::array::from_fn(|k| _mm512_loadu_si512(src.as_ptr().add(si + 48 * k).cast()));
                for (k, &x) in x.iter().enumerate() {
                    _mm512_storeu_si512(dst.as_mut_ptr().add(di + 64 * k).cast(), e.step(x));
                }
            }
            si += 192;
            di += 256;
        }
        // SAFETY: the preconditions of this function; `si` and `di`
        // correspond and fewer than 208 bytes remain.
        unsafe { encode_rest(&e, src, dst, si, di) }
    }
);

/// Encodes the last `src.len() - si` bytes (fewer than 208) in at most
/// five steps, `src[si..]` into `dst[di..]`. Inlined into [`encode`]
/// (not a `#[target_feature]` function), like the decoder's pieces.
///
/// # Safety
/// As [`encode`], with `di` the encoded length of `si` bytes (`si` a
/// multiple of 3) and `src.len() - si < 208`.
#[inline(always)]
unsafe fn encode_rest(e: &EncodeTables, src: &[u8], dst: &mut [u8], si: usize, di: usize) {
    let rest = src.len() - si;
    // SAFETY: forwarded; `S` is the number of 48-byte steps. Compares, not
    // a division and a jump table: short inputs come first.
    unsafe {
        if rest <= 96 {
            if rest > 48 {
                encode_steps::<2>(e, src, dst, si, di);
            } else if rest > 0 {
                encode_steps::<1>(e, src, dst, si, di);
            }
        } else if rest <= 144 {
            encode_steps::<3>(e, src, dst, si, di);
        } else if rest <= 192 {
            encode_steps::<4>(e, src, dst, si, di);
        } else {
            encode_steps::<5>(e, src, dst, si, di);
        }
    }
}

/// [`encode_rest`] of `S` steps: `48 * (S - 1) < src.len() - si <= 48 * S`.
/// Every load is masked (48 bytes, or the rest for the last step); every
/// step but the last writes its 64 symbols with a plain store, the last
/// writes its own under a mask. All loads come first, so the steps overlap.
///
/// # Safety
/// As [`encode_rest`], and `S` is the number of steps.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
#[inline]
unsafe fn encode_steps<const S: usize>(
    e: &EncodeTables,
    src: &[u8],
    dst: &mut [u8],
    si: usize,
    di: usize,
) {
    let last = src.len() - si - 48 * (S - 1);
    // SAFETY: steps before the last have 48 bytes in bounds from
    // `si + 48j`, the last one `last`; masked-off bytes are not accessed
    // and read as zero, which makes the last symbol's unused bits zero.
    let x: [__m512i; S] = core::array::from_fn(|j| unsafe {
        let m = mask_low(if j + 1 < S { 48 } else { last });
        _mm512_maskz_loadu_epi8(m, src.as_ptr().add(si + 48 * j).cast())
    });
    for (j, &x) in x.iter().enumerate() {
        let (o, out) = (di + 64 * j, e.step(x));
        // SAFETY: a step before the last writes its 64 symbols, in bounds
        // as more input follows it; the last step's mask covers the rest
        // of `dst` from `o`, and masked-off bytes are not written.
        unsafe {
            if j + 1 < S {
                _mm512_storeu_si512(dst.as_mut_ptr().add(o).cast(), out);
            } else {
                let m = mask_low(dst.len() - o);
                _mm512_mask_storeu_epi8(dst.as_mut_ptr().add(o).cast(), m, out);
            }
        }
    }
}

/// Registers of the encoder: the alphabet, the spreading permutation and the
/// field offsets.
struct EncodeTables {
    lut: __m512i,
    spread: __m512i,
    shifts: __m512i,
}

impl EncodeTables {
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
    #[inline]
    fn load(enc: &[u8; 64]) -> EncodeTables {
        // SAFETY: both tables are 64 bytes long; unaligned loads.
        let (lut, spread) = unsafe {
            (
                _mm512_loadu_si512(enc.as_ptr().cast()),
                _mm512_loadu_si512(ENC_SPREAD.as_ptr().cast()),
            )
        };
        EncodeTables {
            lut,
            spread,
            shifts: _mm512_set1_epi64(ENC_SHIFTS),
        }
    }

    /// 48 bytes (the low part of `x`) -> 64 symbols.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
    #[inline]
    fn step(&self, x: __m512i) -> __m512i {
        let lanes = _mm512_permutexvar_epi8(self.spread, x);
        let values = _mm512_multishift_epi64_epi8(self.shifts, lanes);
        _mm512_permutexvar_epi8(values, self.lut)
    }
}

crate::backend::needs::target_features!(Avx512Vbmi =>
    /// Decodes a body (see the contract in `backend/mod.rs`), its 2- or 3-symbol
    /// tail included: under 512 symbols one or two pieces of up to 256;
    /// otherwise an aligning head (from 1024 symbols), the bulk loop, and the
    /// rest of fewer than 256 symbols. Each is validated in pieces of up to four
    /// steps before anything of the piece is stored; a piece that holds an
    /// invalid byte or a non-canonical last symbol writes nothing and hands
    /// over to the scalar kernel, which stops at the first error and reports
    /// it.
    ///
    /// # Safety
    /// The CPU supports AVX-512 F, BW, VBMI and BMI2, `src.len() % 4 != 1` and
    /// `dst.len()` is the decoded length of `src`.
    pub(super) unsafe fn decode_body(
        dec: &[u8; 256],
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), BodyError> {
        // One function with its pieces inlined and the tables loaded once:
        // for names (up to 340 symbols) calls and reloads cost as much as a
        // step.
        let t = DecodeTables::load(dec);
        let n = src.len();
        if n <= 256 {
            // SAFETY: the preconditions of this function; one piece of at most
            // 256 symbols.
            return unsafe { decode_short(&t, dec, src, dst, 0, n) };
        }
        if n < 512 {
            // Two pieces: the bulk loop's setup costs more than it saves for
            // one round (a 252-byte name: 17-18 -> 15.5 ns).
            // SAFETY: the preconditions of this function; two pieces of at most
            // 256 symbols, the first of 256 (whole groups).
            return unsafe {
                decode_short(&t, dec, src, dst, 0, 256)?;
                decode_short(&t, dec, src, dst, 256, n)
            };
        }
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
            unsafe { decode_short(&t, dec, src, dst, 0, 4 * h / 3)? };
            (si, di) = (4 * h / 3, h);
        }
        // SAFETY: the preconditions of this function are those of the bulk
        // loop (same CPU features, same slices); `si` and `di` correspond.
        (si, di) = unsafe { decode_bulk(&t, dec, src, dst, si, di)? };
        debug_assert_eq!(di, si / 4 * 3);
        // SAFETY: the preconditions of this function; fewer than 256 symbols
        // remain after the bulk loop.
        unsafe { decode_short(&t, dec, src, dst, si, n) }
    }
);

/// Decodes symbols `si .. end` (at most 256; `end - si` not 1 mod 4)
/// in at most four steps, validated together and only then stored: a short
/// input pays one validity branch, every step but the last loads 64 plain
/// bytes, and every step but the last stores 64 plain bytes where the
/// piece's own output has room (the 16 bytes past a step's 48 are then
/// bytes of the later steps, which overwrite them). The last step's load
/// and store are masked, so nothing past `end` is read and nothing past
/// the piece's decoded bytes is written. Not a `#[target_feature]`
/// function, so that it is inlined at each of its five calls in
/// [`decode_body`] (which has the features), tables in registers.
///
/// # Safety
/// As [`decode_body`], with `si % 4 == 0`, `si <= end <= src.len()`,
/// `end - si <= 256` and either `end == src.len()` or `end - si` a multiple
/// of 4.
#[inline(always)]
unsafe fn decode_short(
    t: &DecodeTables,
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
            1 => decode_steps::<1>(t, dec, src, dst, si, end),
            2 => decode_steps::<2>(t, dec, src, dst, si, end),
            3 => decode_steps::<3>(t, dec, src, dst, si, end),
            _ => decode_steps::<4>(t, dec, src, dst, si, end),
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
    t: &DecodeTables,
    dec: &[u8; 256],
    src: &[u8],
    dst: &mut [u8],
    si: usize,
    end: usize,
) -> Result<(), BodyError> {
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
    // The piece decodes to `48 * (S - 1) + tail` bytes from `di`. A full
    // 64-byte store of a step reaches 16 bytes into the next step's output,
    // which that step then overwrites; it must not reach past the piece's
    // output, or bytes that a later piece with an error leaves alone would
    // change. Steps before the last two always have room, the one before
    // the last has it when the last decodes 16 bytes or more (an all-ones
    // mask), and the last is masked to its own bytes.
    let (di, tail) = (si / 4 * 3, last * 3 / 4);
    let before_last = if tail >= 16 { u64::MAX } else { mask_low(48) };
    for (j, &v) in v.iter().enumerate() {
        let out = t.pack48(v);
        // SAFETY: step `j`'s output starts at `di + 48j`, inside `dst`; the
        // store covers at most the piece's output, as argued above, and
        // masked-off bytes are not written.
        unsafe {
            let p = dst.as_mut_ptr().add(di + 48 * j);
            if j + 2 < S {
                _mm512_storeu_si512(p.cast(), out);
            } else if j + 2 == S {
                _mm512_mask_storeu_epi8(p.cast(), before_last, out);
            } else {
                _mm512_mask_storeu_epi8(p.cast(), mask_low(tail), out);
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
/// steps; returns the position reached.
///
/// # Safety
/// As [`decode_body`], and `di == si / 4 * 3` with `si % 4 == 0`.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,bmi2")]
#[inline]
unsafe fn decode_bulk(
    t: &DecodeTables,
    dec: &[u8; 256],
    src: &[u8],
    dst: &mut [u8],
    mut si: usize,
    mut di: usize,
) -> Result<(usize, usize), BodyError> {
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
