//! VAES on ymm registers (AVX2, no AVX-512 needed): sixteen units' CBC
//! chains side by side when encrypting, sixteen blocks in flight when
//! decrypting.
//!
//! * Encryption: lane `k` of a ymm register is one unit, so block `j` of
//!   units `u` and `u + 1` are gathered into one register (two loads and a
//!   `vinserti128`) and scattered back (a store of each half). Eight
//!   registers are sixteen independent chains: AES latency times throughput
//!   on the cores with VAES on ymm if the latency is 4 cycles at two
//!   instructions per cycle; where it is longer, eight chains leave part of
//!   the ymm AES throughput idle (measured on a Xeon with AVX-512: 75 to 80%
//!   of the ymm ECB rate, where zmm's four chains at one per cycle reach
//!   93%). The gathers and scatters run on the
//!   load, store and shuffle ports, away from the AES unit, which stays the
//!   bottleneck: encryption measures at the rate of decryption (the ECB
//!   rate), so transposing two consecutive blocks of each unit instead
//!   (fewer loads, more live registers where ymm has only sixteen) has
//!   nothing left to win.
//! * Decryption: two consecutive blocks per register; the ciphertext one
//!   block back is `vperm2i128` of the register and the one before it.
//! * Eight states and eight inputs fill the sixteen ymm registers: the
//!   round keys (broadcast to both lanes once per request) are memory
//!   operands, one fused load per round.

use core::arch::x86_64::*;

use mdu_aes::x86::{broadcast256, iv_vector, load_schedule};
use mdu_aes::{Ivs, RoundKeys};
use mdu_core::Iv;

use super::{chain, unchain};
use crate::backend::driver::{self, Lanes};

/// Vectors in flight: sixteen units or blocks.
const WIDTH: usize = 8;

/// The round keys of one direction, broadcast to ymm; made only by
/// [`encrypt`] and [`decrypt`].
struct Ymm {
    /// Encryption order in `encrypt`, the equivalent inverse cipher's in
    /// `decrypt`, in both lanes.
    rk: [__m256i; 15],
    /// The same as xmm, for single blocks.
    rk_x: [__m128i; 15],
}

impl Lanes for Ymm {
    type V = __m256i;
    type B = __m128i;
    const BLOCKS: usize = 2;

    #[inline(always)]
    fn ivs(&self, ivs: &Ivs<'_>, start: usize) -> __m256i {
        // From general-purpose registers, never through an array in memory
        // (a 32-byte load of two IVs just stored cannot be forwarded).
        let (lo, hi) = (iv_vector(ivs.get(start)), iv_vector(ivs.get(start + 1)));
        // SAFETY: AVX2 is enabled wherever a `Ymm` exists.
        unsafe { _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi) }
    }

    #[inline(always)]
    unsafe fn gather(src: *const u8, stride: usize) -> __m256i {
        // SAFETY: 16 readable bytes at `src` and at `src + stride` (the
        // caller); AVX2 is enabled wherever a `Ymm` exists.
        unsafe {
            let lo = _mm_loadu_si128(src.cast());
            let hi = _mm_loadu_si128(src.add(stride).cast());
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
        }
    }

    #[inline(always)]
    unsafe fn scatter(dst: *mut u8, stride: usize, v: __m256i) {
        // SAFETY: 16 writable bytes at `dst` and at `dst + stride` (the
        // caller); AVX2 as above.
        unsafe {
            _mm_storeu_si128(dst.cast(), _mm256_castsi256_si128(v));
            _mm_storeu_si128(dst.add(stride).cast(), _mm256_extracti128_si256::<1>(v));
        }
    }

    #[inline(always)]
    fn chain<const NR: usize, const N: usize>(&self, s: &mut [__m256i; N], x: &[__m256i; N]) {
        let rk = &self.rk;
        // SAFETY: a `Ymm` exists only inside the entry points, which run
        // with AVX2 and VAES enabled.
        unsafe {
            for (s, x) in s.iter_mut().zip(x) {
                *s = _mm256_xor_si256(_mm256_xor_si256(*s, *x), rk[0]);
            }
            for k in &rk[1..NR] {
                for s in s.iter_mut() {
                    *s = _mm256_aesenc_epi128(*s, *k);
                }
            }
            for s in s.iter_mut() {
                *s = _mm256_aesenclast_epi128(*s, rk[NR]);
            }
        }
    }

    #[inline(always)]
    unsafe fn load(src: *const u8) -> __m256i {
        // SAFETY: 32 readable bytes (the caller); AVX as above.
        unsafe { _mm256_loadu_si256(src.cast()) }
    }

    #[inline(always)]
    unsafe fn store(dst: *mut u8, v: __m256i) {
        // SAFETY: 32 writable bytes (the caller); AVX as above.
        unsafe { _mm256_storeu_si256(dst.cast(), v) }
    }

    #[inline(always)]
    fn shift_in(&self, carry: __m256i, v: __m256i) -> __m256i {
        // [carry.hi, v.lo].
        // SAFETY: AVX2 is enabled wherever a `Ymm` exists.
        unsafe { _mm256_permute2x128_si256::<0x21>(carry, v) }
    }

    #[inline(always)]
    fn unchain<const NR: usize, const N: usize>(
        &self,
        c: &[__m256i; N],
        p: &[__m256i; N],
    ) -> [__m256i; N] {
        let rk = &self.rk;
        let mut s = *c;
        // SAFETY: as in `chain`.
        unsafe {
            for s in s.iter_mut() {
                *s = _mm256_xor_si256(*s, rk[0]);
            }
            for k in &rk[1..NR] {
                for s in s.iter_mut() {
                    *s = _mm256_aesdec_epi128(*s, *k);
                }
            }
            for (s, p) in s.iter_mut().zip(p) {
                *s = _mm256_aesdeclast_epi128(*s, _mm256_xor_si256(rk[NR], *p));
            }
        }
        s
    }

    #[inline(always)]
    fn carry_iv(&self, iv: u128) -> __m256i {
        // SAFETY: AVX2 is enabled wherever a `Ymm` exists.
        unsafe { _mm256_broadcastsi128_si256(iv_vector(iv)) }
    }

    #[inline(always)]
    fn last(&self, v: __m256i) -> __m128i {
        // SAFETY: as in `carry_iv`.
        unsafe { _mm256_extracti128_si256::<1>(v) }
    }

    #[inline(always)]
    fn iv1(&self, iv: u128) -> __m128i {
        iv_vector(iv)
    }

    #[inline(always)]
    unsafe fn load1(src: *const u8) -> __m128i {
        // SAFETY: 16 readable bytes (the caller).
        unsafe { _mm_loadu_si128(src.cast()) }
    }

    #[inline(always)]
    unsafe fn store1(dst: *mut u8, b: __m128i) {
        // SAFETY: 16 writable bytes (the caller).
        unsafe { _mm_storeu_si128(dst.cast(), b) }
    }

    #[inline(always)]
    fn chain1<const NR: usize, const N: usize>(&self, s: &mut [__m128i; N], x: &[__m128i; N]) {
        // SAFETY: as in `chain` (AES-NI is among the features).
        unsafe { chain::<NR, N>(&self.rk_x, s, x) }
    }

    #[inline(always)]
    fn unchain1<const NR: usize>(&self, c: __m128i, p: __m128i) -> __m128i {
        // SAFETY: as in `chain1`.
        unsafe { unchain::<NR, 1>(&self.rk_x, &[c], &[p])[0] }
    }
}

/// The `Ymm` of the schedule `s`.
#[inline]
#[target_feature(enable = "avx2")]
fn lanes(s: &mdu_aes::Schedule) -> Ymm {
    let rk_x = load_schedule(s);
    Ymm {
        rk: broadcast256(&rk_x),
        rk_x,
    }
}

/// CBC-encrypts `count` data units of `unit_len` bytes from `src` to `dst`;
/// unit `i` uses IV `i` of `Ivs::from_parts(first, step, list)`.
///
/// # Safety
///
/// The CPU has AES-NI, AVX2 and VAES; `src` and `dst` are valid for
/// `count * unit_len` bytes and are equal or disjoint; `unit_len` is a
/// non-zero multiple of 16; `NR` is 10 or 14 and matches the schedules in
/// `keys`; a `list` holds `count` IVs.
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,avx2,vaes")]
pub(crate) unsafe fn encrypt<const NR: usize>(
    keys: &RoundKeys,
    first: u128,
    step: u64,
    list: Option<&[Iv]>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let l = lanes(&keys.enc);
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `l` holds the encryption schedule.
    unsafe { driver::encrypt::<Ymm, NR, WIDTH>(&l, &ivs, unit_len, count, src, dst) }
}

/// CBC-decrypts `count` data units; see [`encrypt`].
///
/// # Safety
///
/// As for [`encrypt`].
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,avx2,vaes")]
pub(crate) unsafe fn decrypt<const NR: usize>(
    keys: &RoundKeys,
    first: u128,
    step: u64,
    list: Option<&[Iv]>,
    unit_len: usize,
    count: usize,
    src: *const u8,
    dst: *mut u8,
) {
    let l = lanes(&keys.dec);
    let ivs = Ivs::from_parts(first, step, list);
    // SAFETY: forwarded from the caller; `l` holds the decryption schedule.
    unsafe { driver::decrypt::<Ymm, NR, WIDTH>(&l, &ivs, unit_len, count, src, dst) }
}
