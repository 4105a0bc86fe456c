//! The FEC encoder's LFSR steps on x86_64: the feedback bytes of 32 or 64
//! codewords at a time multiplied by each generator coefficient, with two
//! `vpshufb` nibble lookups (AVX2) or one GFNI affine transform (ymm, or
//! zmm with AVX-512).
//!
//! Every kernel keeps the contract of `fec::run_generic`: `state` holds
//! `roots` rows of `bs` bytes, the blocks are `bs` bytes each, `bs` is a
//! multiple of 64, and the result is byte-identical. A column of 32 or 64
//! codewords keeps its `roots` registers in vector registers while every
//! block of the run goes through it, so the state is read and written once
//! per run, not once per block.

use core::arch::x86_64::*;

use super::fec::{Blocks, Code};

/// Whether the CPU runs [`run_avx2`].
pub(crate) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// Whether the CPU runs [`run_gfni`].
pub(crate) fn has_gfni() -> bool {
    std::arch::is_x86_feature_detected!("gfni") && std::arch::is_x86_feature_detected!("avx2")
}

/// Whether the CPU runs [`run_gfni512`].
pub(crate) fn has_gfni512() -> bool {
    std::arch::is_x86_feature_detected!("gfni") && std::arch::is_x86_feature_detected!("avx512f")
}

/// One vector width and way of multiplying by the generator coefficients.
/// A value exists only inside the `#[target_feature]` entry point that
/// built it, so its methods run with that entry point's features.
trait Lanes {
    type V: Copy;
    /// Bytes per vector.
    const W: usize;
    /// # Safety
    /// `p` is valid for reading `W` bytes.
    unsafe fn load(p: *const u8) -> Self::V;
    /// # Safety
    /// `p` is valid for writing `W` bytes.
    unsafe fn store(p: *mut u8, v: Self::V);
    fn xor(a: Self::V, b: Self::V) -> Self::V;
    /// `f` times generator coefficient `j + 1`, bytewise in GF(2^8).
    fn mul(&self, j: usize, f: Self::V) -> Self::V;
}

/// Blocks of a run that go through a column before the next column: few
/// enough that the hardware prefetchers follow every block's page (a
/// column touches one line of each), many enough that the registers are
/// loaded and stored rarely.
const GROUP: usize = 16;

/// `r0 = r1 ^ g_1 f, r1 = r2 ^ g_2 f, ..., r_last = g_roots f`: one LFSR
/// shift of a column's registers, named so that they stay in vector
/// registers (an array of more than four of them would live on the stack).
macro_rules! shift {
    ($l:ident, $f:ident, $j:expr; $a:ident) => {
        $a = $l.mul($j, $f);
    };
    ($l:ident, $f:ident, $j:expr; $a:ident $b:ident $($rest:ident)*) => {
        $a = L::xor($l.mul($j, $f), $b);
        shift!($l, $f, $j + 1; $b $($rest)*);
    };
}

/// The steps of a run of blocks, column by column, with one named
/// register variable per root.
#[inline(always)]
fn run_roots<L: Lanes>(lanes: &L, code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
    let bs = blocks.block_size;
    assert!(state.len() == code.roots * bs && bs.is_multiple_of(L::W));
    assert!(blocks.count == 0 || blocks.last_end() <= blocks.input.len());
    let s = state.as_mut_ptr();
    let input = blocks.input.as_ptr();
    macro_rules! by_roots {
        ($($roots:literal => [$r0:ident $($r:ident)*]),* $(,)?) => {
            match code.roots {
                $($roots => for g in (0..blocks.count).step_by(GROUP) {
                let group = GROUP.min(blocks.count - g);
                for c in (0..bs).step_by(L::W) {
                    // SAFETY: `c + W <= bs`, so every row access lies in
                    // `state` (`roots` rows of `bs` bytes) and every block
                    // access inside block `i` of the run, which lies in
                    // `input` (both checked above).
                    unsafe {
                        let mut row = 0;
                        let mut next = || {
                            row += 1;
                            s.add((row - 1) * bs + c)
                        };
                        let mut $r0 = L::load(next());
                        $(let mut $r = L::load(next());)*
                        for i in g..g + group {
                            let m = L::load(input.add(blocks.first + i * blocks.stride + c));
                            let f = L::xor(m, $r0);
                            shift!(lanes, f, 0; $r0 $($r)*);
                        }
                        let mut row = 0;
                        let mut next = || {
                            row += 1;
                            s.add((row - 1) * bs + c)
                        };
                        L::store(next(), $r0);
                        $(L::store(next(), $r);)*
                    }
                }},)*
                r => unreachable!("{r} roots: Code::new takes 2..=24"),
            }
        };
    }
    by_roots! {
        2 => [a0 a1],
        3 => [a0 a1 a2],
        4 => [a0 a1 a2 a3],
        5 => [a0 a1 a2 a3 a4],
        6 => [a0 a1 a2 a3 a4 a5],
        7 => [a0 a1 a2 a3 a4 a5 a6],
        8 => [a0 a1 a2 a3 a4 a5 a6 a7],
        9 => [a0 a1 a2 a3 a4 a5 a6 a7 a8],
        10 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9],
        11 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10],
        12 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11],
        13 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12],
        14 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13],
        15 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14],
        16 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15],
        17 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16],
        18 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17],
        19 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18],
        20 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19],
        21 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20],
        22 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20 a21],
        23 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20 a21 a22],
        24 => [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 a20 a21 a22 a23],
    }
}

struct Avx2 {
    lo: [__m256i; 24],
    hi: [__m256i; 24],
    nibble: __m256i,
}

impl Lanes for Avx2 {
    type V = __m256i;
    const W: usize = 32;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> __m256i {
        // SAFETY: the caller's contract; AVX2 is on (see the trait).
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: __m256i) {
        // SAFETY: as for `load`.
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }
    #[inline(always)]
    fn xor(a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: AVX2 is on wherever a `Lanes` value exists.
        unsafe { _mm256_xor_si256(a, b) }
    }
    #[inline(always)]
    fn mul(&self, j: usize, f: __m256i) -> __m256i {
        // SAFETY: as for `xor`.
        unsafe {
            let l = _mm256_shuffle_epi8(self.lo[j], _mm256_and_si256(f, self.nibble));
            let h = _mm256_shuffle_epi8(
                self.hi[j],
                _mm256_and_si256(_mm256_srli_epi16::<4>(f), self.nibble),
            );
            _mm256_xor_si256(l, h)
        }
    }
}

struct Gfni256 {
    a: [__m256i; 24],
}

impl Lanes for Gfni256 {
    type V = __m256i;
    const W: usize = 32;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> __m256i {
        // SAFETY: the caller's contract; AVX2 is on (see the trait).
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: __m256i) {
        // SAFETY: as for `load`.
        unsafe { _mm256_storeu_si256(p.cast(), v) }
    }
    #[inline(always)]
    fn xor(a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: AVX2 is on wherever a `Lanes` value exists.
        unsafe { _mm256_xor_si256(a, b) }
    }
    #[inline(always)]
    fn mul(&self, j: usize, f: __m256i) -> __m256i {
        // SAFETY: GFNI and AVX2 are on wherever a `Gfni256` exists.
        unsafe { _mm256_gf2p8affine_epi64_epi8::<0>(f, self.a[j]) }
    }
}

struct Gfni512 {
    a: [__m512i; 24],
}

impl Lanes for Gfni512 {
    type V = __m512i;
    const W: usize = 64;
    #[inline(always)]
    unsafe fn load(p: *const u8) -> __m512i {
        // SAFETY: the caller's contract; AVX-512F is on (see the trait).
        unsafe { _mm512_loadu_si512(p.cast()) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut u8, v: __m512i) {
        // SAFETY: as for `load`.
        unsafe { _mm512_storeu_si512(p.cast(), v) }
    }
    #[inline(always)]
    fn xor(a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: AVX-512F is on wherever a `Gfni512` exists.
        unsafe { _mm512_xor_si512(a, b) }
    }
    #[inline(always)]
    fn mul(&self, j: usize, f: __m512i) -> __m512i {
        // SAFETY: GFNI and AVX-512F are on wherever a `Gfni512` exists.
        unsafe { _mm512_gf2p8affine_epi64_epi8::<0>(f, self.a[j]) }
    }
}

/// The steps of a run of blocks with nibble lookups.
///
/// # Safety
///
/// The CPU has AVX2 ([`has_avx2`]).
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn run_avx2(code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
    let mut lanes = Avx2 {
        lo: [_mm256_setzero_si256(); 24],
        hi: [_mm256_setzero_si256(); 24],
        nibble: _mm256_set1_epi8(0x0f),
    };
    for (j, m) in code.mul.iter().enumerate() {
        // SAFETY: each table is 16 readable bytes.
        unsafe {
            lanes.lo[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128(m.lo.as_ptr().cast()));
            lanes.hi[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128(m.hi.as_ptr().cast()));
        }
    }
    run_roots(&lanes, code, state, blocks)
}

/// The steps of a run of blocks with the GFNI affine transform on ymm
/// (multiplication by a constant is linear over GF(2), whatever the field
/// polynomial).
///
/// # Safety
///
/// The CPU has GFNI and AVX2 ([`has_gfni`]).
#[target_feature(enable = "avx2,gfni")]
pub(crate) unsafe fn run_gfni(code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
    let mut lanes = Gfni256 {
        a: [_mm256_setzero_si256(); 24],
    };
    for (j, m) in code.mul.iter().enumerate() {
        lanes.a[j] = _mm256_set1_epi64x(m.matrix as i64);
    }
    run_roots(&lanes, code, state, blocks)
}

/// The steps of a run of blocks with the GFNI affine transform on zmm.
///
/// # Safety
///
/// The CPU has GFNI and AVX-512F ([`has_gfni512`]).
#[target_feature(enable = "avx512f,gfni")]
pub(crate) unsafe fn run_gfni512(code: &Code, state: &mut [u8], blocks: &Blocks<'_>) {
    let mut lanes = Gfni512 {
        a: [_mm512_setzero_si512(); 24],
    };
    for (j, m) in code.mul.iter().enumerate() {
        lanes.a[j] = _mm512_set1_epi64(m.matrix as i64);
    }
    run_roots(&lanes, code, state, blocks)
}
