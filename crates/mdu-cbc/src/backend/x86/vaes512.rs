//! VAES on zmm registers (AVX-512): sixteen units' CBC chains side by side
//! when encrypting, sixteen blocks in flight when decrypting.
//!
//! * Encryption: lane `k` of a zmm register is one unit, so block `j` of
//!   four units is gathered into one register (four loads, three
//!   `vinserti32x4`) and scattered back (a store and three
//!   `vextracti32x4` to memory). Four registers are sixteen independent
//!   chains: VAES on zmm issues one instruction per cycle at a latency of
//!   about four, so four registers of chains keep it busy. The gathers run
//!   on the load and shuffle ports, away from the AES unit, which stays the
//!   bottleneck: encryption measures within a few percent of decryption,
//!   which runs at the ECB rate, so transposing four consecutive blocks of
//!   each unit instead (fewer loads, sixteen more live registers) cannot
//!   gain more than those few percent.
//!   "Block `j` of the input ^ state ^ round key 0" is one `vpternlogq`.
//! * Decryption: four consecutive blocks per register; the ciphertext one
//!   block back is one `valignq` of the register and the one before it.
//! * Four states, four inputs and the fifteen round keys (broadcast to all
//!   lanes once per request) fit the 32 zmm registers.

use core::arch::x86_64::*;

use mdu_aes::x86::{broadcast512, iv_vector, load_schedule};
use mdu_aes::{Ivs, RoundKeys};
use mdu_core::Iv;

use super::{chain, unchain};
use crate::backend::driver::{self, Lanes};

/// Vectors in flight: sixteen units or blocks.
const WIDTH: usize = 4;

/// The round keys of one direction, broadcast to zmm; made only by
/// [`encrypt`] and [`decrypt`].
struct Zmm {
    /// Encryption order in `encrypt`, the equivalent inverse cipher's in
    /// `decrypt`, in all four lanes.
    rk: [__m512i; 15],
    /// The same as xmm, for single blocks.
    rk_x: [__m128i; 15],
}

impl Lanes for Zmm {
    type V = __m512i;
    type B = __m128i;
    const BLOCKS: usize = 4;

    #[inline(always)]
    fn ivs(&self, ivs: &Ivs<'_>, start: usize) -> __m512i {
        // From general-purpose registers lane by lane, never through an
        // array in memory: a 64-byte load of four IVs just stored cannot be
        // forwarded from the store buffer, and stalled this path by half
        // for one-block units.
        let at = |k: usize| iv_vector(ivs.get(start + k));
        let (a, b, c, d) = (at(0), at(1), at(2), at(3));
        // SAFETY: AVX-512 F is enabled wherever a `Zmm` exists.
        unsafe {
            let v = _mm512_castsi128_si512(a);
            let v = _mm512_inserti32x4::<1>(v, b);
            let v = _mm512_inserti32x4::<2>(v, c);
            _mm512_inserti32x4::<3>(v, d)
        }
    }

    #[inline(always)]
    unsafe fn gather(src: *const u8, stride: usize) -> __m512i {
        // SAFETY: 16 readable bytes at `src + k * stride` for k < 4 (the
        // caller); AVX-512 F as above.
        unsafe {
            let at = |k: usize| _mm_loadu_si128(src.add(k * stride).cast());
            let v = _mm512_castsi128_si512(at(0));
            let v = _mm512_inserti32x4::<1>(v, at(1));
            let v = _mm512_inserti32x4::<2>(v, at(2));
            _mm512_inserti32x4::<3>(v, at(3))
        }
    }

    #[inline(always)]
    unsafe fn scatter(dst: *mut u8, stride: usize, v: __m512i) {
        // SAFETY: 16 writable bytes at `dst + k * stride` for k < 4 (the
        // caller); AVX-512 F as above.
        unsafe {
            let at = |k: usize| dst.add(k * stride).cast::<__m128i>();
            _mm_storeu_si128(at(0), _mm512_castsi512_si128(v));
            _mm_storeu_si128(at(1), _mm512_extracti32x4_epi32::<1>(v));
            _mm_storeu_si128(at(2), _mm512_extracti32x4_epi32::<2>(v));
            _mm_storeu_si128(at(3), _mm512_extracti32x4_epi32::<3>(v));
        }
    }

    #[inline(always)]
    fn chain<const NR: usize, const N: usize>(&self, s: &mut [__m512i; N], x: &[__m512i; N]) {
        let rk = &self.rk;
        // SAFETY: a `Zmm` exists only inside the entry points, which run
        // with AVX-512 F and VAES enabled.
        unsafe {
            for (s, x) in s.iter_mut().zip(x) {
                *s = _mm512_ternarylogic_epi64::<0x96>(*s, *x, rk[0]);
            }
            for k in &rk[1..NR] {
                for s in s.iter_mut() {
                    *s = _mm512_aesenc_epi128(*s, *k);
                }
            }
            for s in s.iter_mut() {
                *s = _mm512_aesenclast_epi128(*s, rk[NR]);
            }
        }
    }

    #[inline(always)]
    unsafe fn load(src: *const u8) -> __m512i {
        // SAFETY: 64 readable bytes (the caller); AVX-512 F as above.
        unsafe { _mm512_loadu_si512(src.cast()) }
    }

    #[inline(always)]
    unsafe fn store(dst: *mut u8, v: __m512i) {
        // SAFETY: 64 writable bytes (the caller); AVX-512 F as above.
        unsafe { _mm512_storeu_si512(dst.cast(), v) }
    }

    #[inline(always)]
    fn shift_in(&self, carry: __m512i, v: __m512i) -> __m512i {
        // (v : carry) shifted down by six qwords: [carry.3, v.0, v.1, v.2].
        // SAFETY: AVX-512 F is enabled wherever a `Zmm` exists.
        unsafe { _mm512_alignr_epi64::<6>(v, carry) }
    }

    #[inline(always)]
    fn unchain<const NR: usize, const N: usize>(
        &self,
        c: &[__m512i; N],
        p: &[__m512i; N],
    ) -> [__m512i; N] {
        let rk = &self.rk;
        let mut s = *c;
        // SAFETY: as in `chain`.
        unsafe {
            for s in s.iter_mut() {
                *s = _mm512_xor_si512(*s, rk[0]);
            }
            for k in &rk[1..NR] {
                for s in s.iter_mut() {
                    *s = _mm512_aesdec_epi128(*s, *k);
                }
            }
            for (s, p) in s.iter_mut().zip(p) {
                *s = _mm512_aesdeclast_epi128(*s, _mm512_xor_si512(rk[NR], *p));
            }
        }
        s
    }

    #[inline(always)]
    fn carry_iv(&self, iv: u128) -> __m512i {
        // SAFETY: AVX-512 F is enabled wherever a `Zmm` exists.
        unsafe { _mm512_broadcast_i32x4(iv_vector(iv)) }
    }

    #[inline(always)]
    fn last(&self, v: __m512i) -> __m128i {
        // SAFETY: as in `carry_iv`.
        unsafe { _mm512_extracti32x4_epi32::<3>(v) }
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

/// The `Zmm` of the schedule `s`.
#[inline]
#[target_feature(enable = "avx512f")]
fn lanes(s: &mdu_aes::Schedule) -> Zmm {
    let rk_x = load_schedule(s);
    Zmm {
        rk: broadcast512(&rk_x),
        rk_x,
    }
}

/// CBC-encrypts `count` data units of `unit_len` bytes from `src` to `dst`;
/// unit `i` uses IV `i` of `Ivs::from_parts(first, step, list)`.
///
/// # Safety
///
/// The CPU has AES-NI, AVX2, AVX-512 F and VAES; `src` and `dst` are valid
/// for `count * unit_len` bytes and are equal or disjoint; `unit_len` is a
/// non-zero multiple of 16; `NR` is 10 or 14 and matches the schedules in
/// `keys`; a `list` holds `count` IVs.
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,avx2,avx512f,vaes")]
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
    unsafe { driver::encrypt::<Zmm, NR, WIDTH>(&l, &ivs, unit_len, count, src, dst) }
}

/// CBC-decrypts `count` data units; see [`encrypt`].
///
/// # Safety
///
/// As for [`encrypt`].
// The IVs come as plain arguments, in registers (see `Ivs::parts`).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "aes,avx2,avx512f,vaes")]
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
    unsafe { driver::decrypt::<Zmm, NR, WIDTH>(&l, &ivs, unit_len, count, src, dst) }
}
