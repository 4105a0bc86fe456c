//! The FEC encoder's LFSR step on x86_64: the feedback bytes of 32
//! codewords at a time multiplied by each generator coefficient, with two
//! `vpshufb` nibble lookups (AVX2) or one GFNI affine transform.
//!
//! Both kernels keep the contract of `fec::step_generic`: `state` holds
//! `roots` rows of `bs` bytes, `block` is `bs` bytes, `bs` is a multiple
//! of 32, and the result is byte-identical.

use core::arch::x86_64::*;

use super::fec::Code;

/// Whether the CPU runs [`step_avx2`].
pub(crate) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// Whether the CPU runs [`step_gfni`].
pub(crate) fn has_gfni() -> bool {
    std::arch::is_x86_feature_detected!("gfni") && std::arch::is_x86_feature_detected!("avx2")
}

/// Feedback bytes handled per pass over the rows: small enough for the
/// stack, large enough that a row's multiplier is loaded once per pass.
const SEGMENT: usize = 1024;

/// The step, generic over how a vector of bytes is multiplied by the
/// generator coefficient `j`.
#[inline(always)]
fn step(code: &Code, state: &mut [u8], block: &[u8], mul: impl Fn(usize, __m256i) -> __m256i) {
    let bs = block.len();
    let roots = code.roots;
    debug_assert!(bs.is_multiple_of(32) && state.len() == roots * bs);
    let mut fb = [0u8; SEGMENT];
    let mut base = 0;
    while base < bs {
        let n = SEGMENT.min(bs - base);
        // SAFETY: every offset is `base + k` with `k < n`, in steps of 32
        // and `n` a multiple of 32, so each 32-byte access lies inside
        // `block`, `fb` (n <= SEGMENT) and each `bs`-byte row of `state`;
        // the caller runs with AVX2 enabled.
        unsafe {
            let s = state.as_mut_ptr();
            for k in (0..n).step_by(32) {
                let m = _mm256_loadu_si256(block.as_ptr().add(base + k).cast());
                let r = _mm256_loadu_si256(s.add(base + k).cast());
                _mm256_storeu_si256(fb.as_mut_ptr().add(k).cast(), _mm256_xor_si256(m, r));
            }
            for j in 0..roots {
                let row = s.add(j * bs + base);
                for k in (0..n).step_by(32) {
                    let f = _mm256_loadu_si256(fb.as_ptr().add(k).cast());
                    let mut v = mul(j, f);
                    if j + 1 < roots {
                        let next = _mm256_loadu_si256(row.add(bs + k).cast());
                        v = _mm256_xor_si256(v, next);
                    }
                    _mm256_storeu_si256(row.add(k).cast(), v);
                }
            }
        }
        base += n;
    }
}

/// The LFSR step with nibble lookups.
///
/// # Safety
///
/// The CPU has AVX2 ([`has_avx2`]); `block.len()` is a multiple of 32 and
/// `state.len() == code.roots * block.len()`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn step_avx2(code: &Code, state: &mut [u8], block: &[u8]) {
    let mut lo = [_mm256_setzero_si256(); 24];
    let mut hi = [_mm256_setzero_si256(); 24];
    for (j, m) in code.mul.iter().enumerate() {
        // SAFETY: each table is 16 readable bytes.
        unsafe {
            lo[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128(m.lo.as_ptr().cast()));
            hi[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128(m.hi.as_ptr().cast()));
        }
    }
    let nibble = _mm256_set1_epi8(0x0f);
    step(code, state, block, |j, f| {
        let l = _mm256_shuffle_epi8(lo[j], _mm256_and_si256(f, nibble));
        let h = _mm256_shuffle_epi8(hi[j], _mm256_and_si256(_mm256_srli_epi16::<4>(f), nibble));
        _mm256_xor_si256(l, h)
    })
}

/// The LFSR step with the GFNI affine transform (multiplication by a
/// constant is linear over GF(2), whatever the field polynomial).
///
/// # Safety
///
/// The CPU has GFNI and AVX2 ([`has_gfni`]); sizes as for [`step_avx2`].
#[target_feature(enable = "avx2,gfni")]
pub(crate) unsafe fn step_gfni(code: &Code, state: &mut [u8], block: &[u8]) {
    let mut a = [_mm256_setzero_si256(); 24];
    for (j, m) in code.mul.iter().enumerate() {
        a[j] = _mm256_set1_epi64x(m.matrix as i64);
    }
    step(code, state, block, |j, f| {
        _mm256_gf2p8affine_epi64_epi8::<0>(f, a[j])
    })
}
