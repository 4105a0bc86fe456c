//! x86_64 backends: the AES-NI key schedule and the single-block pieces
//! (serial tweak doubling, ciphertext stealing) that all three share.
//!
//! Conventions: a tweak is a 128-bit little-endian integer in an xmm
//! register (or in each 128-bit lane of a ymm/zmm register); multiplying by
//! x shifts it left by one and folds bit 127 back as 0x87.

use core::arch::x86_64::*;

pub(crate) mod aesni;
pub(crate) mod vaes256;
pub(crate) mod vaes512;

use zeroize::Zeroize;

pub(crate) use super::simd::{RoundKeys, Schedule, bulk_blocks, iv_batch};

/// One step of the key schedule: `prev` with its words prefix-XORed, then
/// XORed with the (already shuffled) `aeskeygenassist` output `t`.
#[inline]
#[target_feature(enable = "aes")]
fn expand_step(prev: __m128i, t: __m128i) -> __m128i {
    let mut k = prev;
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
    _mm_xor_si128(k, t)
}

macro_rules! assist {
    ($k:expr, $rcon:literal, $word:literal) => {
        _mm_shuffle_epi32::<$word>(_mm_aeskeygenassist_si128::<$rcon>($k))
    };
}

/// The AES-128 encryption schedule of `key` (rounds 0..=10).
#[inline]
#[target_feature(enable = "aes")]
fn expand128(key: __m128i) -> [__m128i; 15] {
    let mut rk = [_mm_setzero_si128(); 15];
    rk[0] = key;
    rk[1] = expand_step(rk[0], assist!(rk[0], 0x01, 0xff));
    rk[2] = expand_step(rk[1], assist!(rk[1], 0x02, 0xff));
    rk[3] = expand_step(rk[2], assist!(rk[2], 0x04, 0xff));
    rk[4] = expand_step(rk[3], assist!(rk[3], 0x08, 0xff));
    rk[5] = expand_step(rk[4], assist!(rk[4], 0x10, 0xff));
    rk[6] = expand_step(rk[5], assist!(rk[5], 0x20, 0xff));
    rk[7] = expand_step(rk[6], assist!(rk[6], 0x40, 0xff));
    rk[8] = expand_step(rk[7], assist!(rk[7], 0x80, 0xff));
    rk[9] = expand_step(rk[8], assist!(rk[8], 0x1b, 0xff));
    rk[10] = expand_step(rk[9], assist!(rk[9], 0x36, 0xff));
    rk
}

/// The AES-256 encryption schedule of `lo || hi` (rounds 0..=14).
#[inline]
#[target_feature(enable = "aes")]
fn expand256(lo: __m128i, hi: __m128i) -> [__m128i; 15] {
    let mut rk = [_mm_setzero_si128(); 15];
    rk[0] = lo;
    rk[1] = hi;
    rk[2] = expand_step(rk[0], assist!(rk[1], 0x01, 0xff));
    rk[3] = expand_step(rk[1], assist!(rk[2], 0x00, 0xaa));
    rk[4] = expand_step(rk[2], assist!(rk[3], 0x02, 0xff));
    rk[5] = expand_step(rk[3], assist!(rk[4], 0x00, 0xaa));
    rk[6] = expand_step(rk[4], assist!(rk[5], 0x04, 0xff));
    rk[7] = expand_step(rk[5], assist!(rk[6], 0x00, 0xaa));
    rk[8] = expand_step(rk[6], assist!(rk[7], 0x08, 0xff));
    rk[9] = expand_step(rk[7], assist!(rk[8], 0x00, 0xaa));
    rk[10] = expand_step(rk[8], assist!(rk[9], 0x10, 0xff));
    rk[11] = expand_step(rk[9], assist!(rk[10], 0x00, 0xaa));
    rk[12] = expand_step(rk[10], assist!(rk[11], 0x20, 0xff));
    rk[13] = expand_step(rk[11], assist!(rk[12], 0x00, 0xaa));
    rk[14] = expand_step(rk[12], assist!(rk[13], 0x40, 0xff));
    rk
}

/// The encryption schedule of a 16- or 32-byte AES key.
#[inline]
#[target_feature(enable = "aes")]
fn expand(key: &[u8]) -> [__m128i; 15] {
    let mut bytes = [[0u8; 16]; 2];
    for (dst, src) in bytes.iter_mut().zip(key.chunks(16)) {
        dst.copy_from_slice(src);
    }
    let lo = load(&bytes[0]);
    let hi = load(&bytes[1]);
    bytes.zeroize();
    if key.len() == 32 {
        expand256(lo, hi)
    } else {
        expand128(lo)
    }
}

fn store(rk: &[__m128i; 15]) -> Schedule {
    let mut out = [[0u8; 16]; 15];
    for (dst, src) in out.iter_mut().zip(rk) {
        *dst = u128::to_le_bytes(to_u128(*src));
    }
    out
}

/// The 16 bytes of an xmm register.
#[inline]
fn to_u128(v: __m128i) -> u128 {
    let mut out = [0u8; 16];
    // SAFETY: `out` is 16 writable bytes; `storeu` has no alignment need.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), v) };
    u128::from_le_bytes(out)
}

/// Loads 16 bytes.
#[inline]
pub(crate) fn load(bytes: &[u8; 16]) -> __m128i {
    // SAFETY: `bytes` is 16 readable bytes; `loadu` has no alignment need.
    unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
}

impl RoundKeys {
    /// Expands the halves `k1` (data) and `k2` (tweak), each 16 or 32 bytes.
    #[target_feature(enable = "aes")]
    pub(crate) fn new(k1: &[u8], k2: &[u8]) -> RoundKeys {
        let nr = if k1.len() == 32 { 14 } else { 10 };
        let mut enc = expand(k1);
        let mut tweak = expand(k2);
        let mut dec = [_mm_setzero_si128(); 15];
        dec[0] = enc[nr];
        for i in 1..nr {
            dec[i] = _mm_aesimc_si128(enc[nr - i]);
        }
        dec[nr] = enc[0];
        let keys = RoundKeys {
            enc: store(&enc),
            dec: store(&dec),
            tweak: store(&tweak),
        };
        for rk in [&mut enc, &mut dec, &mut tweak] {
            rk.iter_mut().for_each(|k| *k = _mm_setzero_si128());
        }
        keys
    }
}

/// Loads a stored schedule into xmm registers.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn load_schedule(s: &Schedule) -> [__m128i; 15] {
    let mut rk = [_mm_setzero_si128(); 15];
    for (dst, src) in rk.iter_mut().zip(s) {
        *dst = load(src);
    }
    rk
}

/// `t * x` in GF(2^128), one tweak per xmm register.
///
/// Both 64-bit halves are doubled; bit 63 carries into bit 64 and bit 127
/// reduces to 0x87, selected by sign-extended masks of those two bits.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn mul_x(t: __m128i) -> __m128i {
    let poly = _mm_set_epi64x(1, 0x87);
    let doubled = _mm_add_epi64(t, t);
    let carries = _mm_srai_epi32::<31>(_mm_shuffle_epi32::<0x13>(t));
    _mm_xor_si128(doubled, _mm_and_si128(carries, poly))
}

/// XTS on one block: `E(b ^ t) ^ t` (or D), with the final tweak XOR folded
/// into the last round key.
#[inline]
#[target_feature(enable = "aes")]
pub(crate) fn xts_block<const NR: usize, const ENC: bool>(
    rk: &[__m128i; 15],
    b: __m128i,
    t: __m128i,
) -> __m128i {
    let mut s = _mm_xor_si128(_mm_xor_si128(b, t), rk[0]);
    for k in &rk[1..NR] {
        s = if ENC {
            _mm_aesenc_si128(s, *k)
        } else {
            _mm_aesdec_si128(s, *k)
        };
    }
    let last = _mm_xor_si128(rk[NR], t);
    if ENC {
        _mm_aesenclast_si128(s, last)
    } else {
        _mm_aesdeclast_si128(s, last)
    }
}

/// The first tweak of a unit: `E_K2(iv)` with the tweak key's schedule.
#[inline]
#[target_feature(enable = "aes")]
pub(crate) fn encrypt_iv<const NR: usize>(k2: &[__m128i; 15], iv: u128) -> __m128i {
    xts_block::<NR, true>(k2, load(&iv.to_le_bytes()), _mm_setzero_si128())
}

/// The bytes of an xmm register.
#[inline(always)]
fn bytes(v: __m128i) -> [u8; 16] {
    to_u128(v).to_le_bytes()
}

/// Ciphertext stealing, encryption side.
///
/// The `m = off / 16` full blocks are done: `dst[off - 16..off]` holds CC,
/// the last full block encrypted under its own tweak. `t_m` is the tweak of
/// block `m`. Writes the `r` stolen bytes to `dst[off..off + r]` and the
/// re-encrypted block to `dst[off - 16..off]`.
///
/// # Safety
///
/// `src` and `dst` are valid for `off + r` bytes, `off >= 16`, `r < 16`, and
/// the two are the same buffer or do not overlap; AES-NI is available.
#[inline]
#[target_feature(enable = "aes")]
pub(crate) unsafe fn cts_encrypt<const NR: usize>(
    rk: &[__m128i; 15],
    t_m: __m128i,
    src: *const u8,
    dst: *mut u8,
    off: usize,
    r: usize,
) {
    let mut pp = [0u8; 16];
    // SAFETY: the caller guarantees `off + r` valid bytes behind both
    // pointers; the partial source is read before the partial destination is
    // written, so an in-place call reads plaintext.
    unsafe {
        core::ptr::copy_nonoverlapping(src.add(off), pp.as_mut_ptr(), r);
        let cc = bytes(_mm_loadu_si128(dst.add(off - 16).cast()));
        core::ptr::copy_nonoverlapping(cc.as_ptr(), dst.add(off), r);
        pp[r..].copy_from_slice(&cc[r..]);
        let out = xts_block::<NR, true>(rk, load(&pp), t_m);
        _mm_storeu_si128(dst.add(off - 16).cast(), out);
    }
}

/// Ciphertext stealing, decryption side.
///
/// Blocks before `off / 16` are done; `src[off..off + 16]` is the last full
/// ciphertext block and `src[off + 16..off + 16 + r]` the partial one.
/// `t_prev` is the tweak of the last full block, `t_m` the next one.
///
/// # Safety
///
/// `src` and `dst` are valid for `off + 16 + r` bytes, `r < 16`, and the two
/// are the same buffer or do not overlap; AES-NI is available.
#[inline]
#[target_feature(enable = "aes")]
pub(crate) unsafe fn cts_decrypt<const NR: usize>(
    rk: &[__m128i; 15],
    t_prev: __m128i,
    t_m: __m128i,
    src: *const u8,
    dst: *mut u8,
    off: usize,
    r: usize,
) {
    let mut cc = [0u8; 16];
    // SAFETY: the caller guarantees `off + 16 + r` valid bytes behind both
    // pointers; every source byte is read before the destination byte at the
    // same offset is written, so an in-place call reads ciphertext.
    unsafe {
        let c = _mm_loadu_si128(src.add(off).cast());
        let pp = bytes(xts_block::<NR, false>(rk, c, t_m));
        core::ptr::copy_nonoverlapping(src.add(off + 16), cc.as_mut_ptr(), r);
        core::ptr::copy_nonoverlapping(pp.as_ptr(), dst.add(off + 16), r);
        cc[r..].copy_from_slice(&pp[r..]);
        let out = xts_block::<NR, false>(rk, load(&cc), t_prev);
        _mm_storeu_si128(dst.add(off).cast(), out);
    }
}

/// Finishes a unit after its bulk: `bulk_end` bytes are done and `t` is the
/// tweak of the next block. Handles the ragged end (`r = len % 16`) with
/// ciphertext stealing; nothing to do when `r == 0`.
///
/// # Safety
///
/// As for [`cts_encrypt`] / [`cts_decrypt`], with `len` valid bytes.
#[inline]
#[target_feature(enable = "aes")]
pub(crate) unsafe fn finish_unit<const NR: usize, const ENC: bool>(
    rk: &[__m128i; 15],
    t: __m128i,
    src: *const u8,
    dst: *mut u8,
    bulk_end: usize,
    r: usize,
) {
    if r == 0 {
        return;
    }
    // SAFETY: forwarded from the caller: for encryption `bulk_end` is
    // `16 * m` (m >= 1 full blocks done), for decryption `bulk_end + 16 + r`
    // is the unit length.
    unsafe {
        if ENC {
            cts_encrypt::<NR>(rk, t, src, dst, bulk_end, r);
        } else {
            cts_decrypt::<NR>(rk, t, mul_x(t), src, dst, bulk_end, r);
        }
    }
}
