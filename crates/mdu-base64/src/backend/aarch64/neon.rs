//! NEON kernels: 48 bytes <-> 64 symbols per step.
//!
//! Encode: `ld3` splits 48 input bytes into the first, second and third
//! bytes of the 16 groups, shifts and shift-inserts (`sli`) make the four
//! 6-bit fields of every group, `tbl` with the 64-symbol alphabet in four
//! registers turns values into symbols, and `st4` interleaves the four
//! symbol registers back into text order. Any alphabet works.
//!
//! Decode: `ld4` splits 64 symbols into the first, second, third and fourth
//! symbols of the 16 groups; two `tbx` lookups in the first 128 entries of
//! the alphabet's reverse table (the first for bytes 0..=63, the second for
//! 64..=127, both starting from the invalid marker, so bytes >= 128 keep
//! it) give the 6-bit values, one OR over the four registers and a
//! horizontal maximum test them all, and shift-inserts merge four values
//! into three bytes for `st3`.
//!
//! The last, partial step (fewer than 48 bytes or 64 symbols) runs through
//! a stack buffer, padded with zero bytes (encode) or with the symbol of
//! value 0 (decode). A step that holds an invalid byte or a non-canonical
//! last symbol writes nothing and hands over to the scalar kernel, which
//! stops at the first error and reports it.

use core::arch::aarch64::*;

use super::{BodyError, scalar};
use crate::alphabet::{Alphabet, INVALID};

/// One encode step: 16 groups of 3 bytes (deinterleaved) -> 64 symbols
/// (deinterleaved: register `k` holds symbol `k` of every group).
#[target_feature(enable = "neon")]
#[inline]
fn encode_step(lut: uint8x16x4_t, x: uint8x16x3_t) -> uint8x16x4_t {
    let low6 = vdupq_n_u8(63);
    // b0 >> 2 | b0 << 4 | b1 >> 4 | b1 << 2 | b2 >> 6 | b2, each masked to
    // 6 bits; `sli` keeps the low bits of its first operand.
    let s0 = vshrq_n_u8::<2>(x.0);
    let s1 = vandq_u8(vsliq_n_u8::<4>(vshrq_n_u8::<4>(x.1), x.0), low6);
    let s2 = vandq_u8(vsliq_n_u8::<2>(vshrq_n_u8::<6>(x.2), x.1), low6);
    let s3 = vandq_u8(x.2, low6);
    uint8x16x4_t(
        vqtbl4q_u8(lut, s0),
        vqtbl4q_u8(lut, s1),
        vqtbl4q_u8(lut, s2),
        vqtbl4q_u8(lut, s3),
    )
}

crate::backend::needs::target_features!(Neon =>
    /// Encodes all of `src` without padding into `dst`.
    ///
    /// # Safety
    /// The CPU supports NEON, and `dst.len()` is the unpadded encoded length of
    /// `src` (`4 * (len / 3)` plus 0, 2 or 3).
    pub(super) unsafe fn encode(enc: &[u8; 64], src: &[u8], dst: &mut [u8]) {
        // SAFETY: `enc` has 64 readable bytes.
        let lut = unsafe { vld1q_u8_x4(enc.as_ptr()) };
        let n = src.len();
        let mut si = 0;
        let mut di = 0;
        // Invariant: `dst.len() - di` is the unpadded encoded length of
        // `n - si` bytes, so 48 input bytes left means 64 symbols of room.
        while n - si >= 48 {
            // SAFETY: `si + 48 <= n` bytes of `src`, `di + 64 <= dst.len()`
            // symbols of `dst` (the invariant above).
            unsafe {
                let x = vld3q_u8(src.as_ptr().add(si));
                vst4q_u8(dst.as_mut_ptr().add(di), encode_step(lut, x));
            }
            si += 48;
            di += 64;
        }
        if si < n {
            // 1..=47 bytes left: zero bytes past the end make the unused bits
            // of the last symbol zero; only the symbols of the real bytes
            // (`dst.len() - di` of them) are copied out.
            let mut inb = [0u8; 48];
            for (b, s) in inb.iter_mut().zip(src.get(si..).unwrap_or_default()) {
                *b = *s;
            }
            let mut outb = [0u8; 64];
            // SAFETY: `inb` has 48 readable bytes, `outb` 64 writable ones.
            unsafe { vst4q_u8(outb.as_mut_ptr(), encode_step(lut, vld3q_u8(inb.as_ptr()))) };
            for (d, s) in dst.get_mut(di..).unwrap_or_default().iter_mut().zip(&outb) {
                *d = *s;
            }
        }
    }
);

/// Registers of the decoder: the two 64-entry halves of the first 128
/// entries of the reverse table, and two constants.
struct DecodeTables {
    lo: uint8x16x4_t,
    hi: uint8x16x4_t,
    invalid: uint8x16_t,
    sixty_four: uint8x16_t,
}

impl DecodeTables {
    #[target_feature(enable = "neon")]
    #[inline]
    fn load(dec: &[u8; 256]) -> DecodeTables {
        // SAFETY: `dec` has 256 bytes, so offsets 0 and 64 leave 64
        // readable bytes each.
        let (lo, hi) = unsafe { (vld1q_u8_x4(dec.as_ptr()), vld1q_u8_x4(dec.as_ptr().add(64))) };
        DecodeTables {
            lo,
            hi,
            invalid: vdupq_n_u8(INVALID),
            sixty_four: vdupq_n_u8(64),
        }
    }

    /// Symbol -> 6-bit value, [`INVALID`] for bytes outside the alphabet.
    /// `tbx` leaves a lane unchanged when its index is 64 or more: bytes
    /// 0..=63 hit the first table, 64..=127 (moved down by 64) the second,
    /// and bytes >= 128 neither.
    #[target_feature(enable = "neon")]
    #[inline]
    fn lookup(&self, x: uint8x16_t) -> uint8x16_t {
        let v = vqtbx4q_u8(self.invalid, self.lo, x);
        vqtbx4q_u8(v, self.hi, vsubq_u8(x, self.sixty_four))
    }

    /// 64 symbols (deinterleaved) -> their values, and whether all are valid.
    #[target_feature(enable = "neon")]
    #[inline]
    fn values(&self, x: uint8x16x4_t) -> (uint8x16x4_t, bool) {
        let v = uint8x16x4_t(
            self.lookup(x.0),
            self.lookup(x.1),
            self.lookup(x.2),
            self.lookup(x.3),
        );
        let any = vorrq_u8(vorrq_u8(v.0, v.1), vorrq_u8(v.2, v.3));
        (v, vmaxvq_u8(any) & 0x80 == 0)
    }
}

/// Four registers of 6-bit values -> three registers of bytes:
/// `v0 << 2 | v1 >> 4`, `v1 << 4 | v2 >> 2`, `v2 << 6 | v3`.
#[target_feature(enable = "neon")]
#[inline]
fn pack(v: uint8x16x4_t) -> uint8x16x3_t {
    uint8x16x3_t(
        vsliq_n_u8::<2>(vshrq_n_u8::<4>(v.1), v.0),
        vsliq_n_u8::<4>(vshrq_n_u8::<2>(v.2), v.1),
        vsliq_n_u8::<6>(v.3, v.2),
    )
}

crate::backend::needs::target_features!(Neon =>
    /// Decodes a body (see the contract in `backend/mod.rs`), its 2- or 3-symbol
    /// tail included.
    ///
    /// # Safety
    /// The CPU supports NEON, `src.len() % 4 != 1` and `dst.len()` is the
    /// decoded length of `src`.
    pub(super) unsafe fn decode_body(
        alphabet: &Alphabet,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), BodyError> {
        let dec = &alphabet.decode;
        let t = DecodeTables::load(dec);
        let n = src.len();
        let mut si = 0;
        let mut di = 0;
        // Invariant: `dst.len() - di` is the decoded length of `n - si`
        // symbols, so 64 symbols left means 48 bytes of room.
        while n - si >= 64 {
            // SAFETY: `si + 64 <= n`.
            let x = unsafe { vld4q_u8(src.as_ptr().add(si)) };
            let (v, ok) = t.values(x);
            if !ok {
                return scalar::decode_body_from(dec, src, dst, si);
            }
            // SAFETY: `di + 48 <= dst.len()` (the invariant above).
            unsafe { vst3q_u8(dst.as_mut_ptr().add(di), pack(v)) };
            si += 64;
            di += 48;
        }
        let rest = src.get(si..).unwrap_or_default();
        let Some(&last) = rest.last() else {
            return Ok(());
        };
        // 2..=63 symbols left. Symbols past the end read as value 0 and their
        // bytes are not copied out. Unused low bits of the last symbol: none
        // for whole groups, 4 after 2 symbols, 2 after 3.
        let unused = (0x030f_0000u32 >> (8 * (rest.len() % 4))) as u8;
        let mut inb = [alphabet.encode[0]; 64];
        for (b, s) in inb.iter_mut().zip(rest) {
            *b = *s;
        }
        // SAFETY: `inb` has 64 readable bytes.
        let (v, ok) = t.values(unsafe { vld4q_u8(inb.as_ptr()) });
        if !ok || dec[usize::from(last)] & unused != 0 {
            return scalar::decode_body_from(dec, src, dst, si);
        }
        let mut outb = [0u8; 48];
        // SAFETY: `outb` has 48 writable bytes.
        unsafe { vst3q_u8(outb.as_mut_ptr(), pack(v)) };
        for (d, s) in dst.get_mut(di..).unwrap_or_default().iter_mut().zip(&outb) {
            *d = *s;
        }
        Ok(())
    }
);
