//! Hardware bounds the report measures beside mdu: AES-ECB over the same
//! bytes with as many blocks in flight as the widest AES instructions of the
//! CPU allow (no tweaks, no chaining: the most any AES mode can do), and
//! memcpy.
//!
//! The bound is real AES: its output is checked against the `aes` crate
//! before it is timed.

/// The widest AES implementation this module can run here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AesBound {
    /// VAES on 512-bit registers, 8 registers (32 blocks) in flight.
    Vaes512,
    /// VAES on 256-bit registers, 8 registers (16 blocks) in flight.
    Vaes256,
    /// AES-NI, 8 blocks in flight.
    AesNi,
    /// No AES instructions: no bound is measured.
    None,
}

impl AesBound {
    /// The best bound this CPU runs.
    pub fn detect() -> AesBound {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("vaes") && has!("avx512f") {
                return AesBound::Vaes512;
            }
            if has!("vaes") && has!("avx2") {
                return AesBound::Vaes256;
            }
            if has!("aes") && has!("sse2") {
                return AesBound::AesNi;
            }
        }
        AesBound::None
    }

    /// A short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            AesBound::Vaes512 => "AES-ECB (VAES zmm)",
            AesBound::Vaes256 => "AES-ECB (VAES ymm)",
            AesBound::AesNi => "AES-ECB (AES-NI)",
            AesBound::None => "none",
        }
    }
}

/// The AES S-box, computed (multiplicative inverse in GF(2^8) followed by
/// the affine map) rather than tabulated.
fn sbox() -> [u8; 256] {
    fn mul(mut a: u8, mut b: u8) -> u8 {
        let mut p = 0u8;
        while b != 0 {
            if b & 1 != 0 {
                p ^= a;
            }
            let hi = a & 0x80;
            a <<= 1;
            if hi != 0 {
                a ^= 0x1b;
            }
            b >>= 1;
        }
        p
    }
    let mut s = [0u8; 256];
    for (x, out) in s.iter_mut().enumerate() {
        let inv = (1..=255u8).find(|&y| mul(x as u8, y) == 1).unwrap_or(0);
        let mut v = inv;
        let mut r = inv;
        for _ in 0..4 {
            r = r.rotate_left(1);
            v ^= r;
        }
        *out = v ^ 0x63;
    }
    s
}

/// The AES encryption key schedule (FIPS 197) for a 16- or 32-byte key:
/// 11 or 15 round keys.
///
/// ```
/// let rk = mdu_bench::bound::expand_key(&[0u8; 16]);
/// assert_eq!(rk.len(), 11);
/// assert_eq!(rk[10][0], 0xb4); // FIPS 197 appendix A-style check
/// ```
pub fn expand_key(key: &[u8]) -> Vec<[u8; 16]> {
    assert!(key.len() == 16 || key.len() == 32, "AES-128 or AES-256 key");
    let s = sbox();
    let nk = key.len() / 4;
    let rounds = nk + 6;
    let mut w: Vec<[u8; 4]> = key.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    let mut rcon = 1u8;
    for i in nk..4 * (rounds + 1) {
        let mut t = w[i - 1];
        if i % nk == 0 {
            t = [
                s[t[1] as usize] ^ rcon,
                s[t[2] as usize],
                s[t[3] as usize],
                s[t[0] as usize],
            ];
            rcon = if rcon & 0x80 != 0 {
                (rcon << 1) ^ 0x1b
            } else {
                rcon << 1
            };
        } else if nk > 6 && i % nk == 4 {
            t = t.map(|b| s[b as usize]);
        }
        let prev = w[i - nk];
        w.push([
            prev[0] ^ t[0],
            prev[1] ^ t[1],
            prev[2] ^ t[2],
            prev[3] ^ t[3],
        ]);
    }
    w.chunks(4)
        .map(|c| {
            let mut k = [0u8; 16];
            for (j, word) in c.iter().enumerate() {
                k[4 * j..4 * j + 4].copy_from_slice(word);
            }
            k
        })
        .collect()
}

/// Whether `how` runs on this CPU.
pub fn runs(how: AesBound) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        match how {
            AesBound::Vaes512 => has!("vaes") && has!("avx512f"),
            AesBound::Vaes256 => has!("vaes") && has!("avx2"),
            AesBound::AesNi => has!("aes") && has!("sse2"),
            AesBound::None => false,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = how;
        false
    }
}

/// Encrypts `buf` in place as AES-ECB with the round keys `rk` (from
/// [`expand_key`]) using `how`: mdu's batched ECB kernel of that width
/// (`mdu_aes::__private::ecb_kernels`), the AES rounds of the vector layer every mode
/// is written over. Returns `false`, and does nothing, unless this CPU
/// runs that kernel (a witness of the features it needs can be made), `rk`
/// holds 11 or 15 round keys and `buf.len()` is a multiple of 512.
pub fn ecb_encrypt(how: AesBound, rk: &[[u8; 16]], buf: &mut [u8]) -> bool {
    if !buf.len().is_multiple_of(512) || !(rk.len() == 11 || rk.len() == 15) {
        return false;
    }
    #[cfg(x86_simd)]
    {
        use mdu_aes::__private::ecb_kernels::{xmm, ymm, zmm};
        use mdu_platform::cpu::Witness;
        let mut s = [[0u8; 16]; 15];
        s[..rk.len()].copy_from_slice(rk);
        let (p, len) = (buf.as_mut_ptr(), buf.len());
        let aes256 = rk.len() == 15;
        // SAFETY: each kernel is called with the witness of the features
        // it enables; the schedule has the rounds `NR` says; `p` covers
        // `len` bytes, a multiple of 16, in place.
        unsafe {
            match how {
                AesBound::Vaes512 => match Witness::detect() {
                    Some(w) if aes256 => zmm::<14, true>(w, &s, p, p, len),
                    Some(w) => zmm::<10, true>(w, &s, p, p, len),
                    None => return false,
                },
                AesBound::Vaes256 => match Witness::detect() {
                    Some(w) if aes256 => ymm::<14, true>(w, &s, p, p, len),
                    Some(w) => ymm::<10, true>(w, &s, p, p, len),
                    None => return false,
                },
                AesBound::AesNi => match Witness::detect() {
                    Some(w) if aes256 => xmm::<14, true>(w, &s, p, p, len),
                    Some(w) => xmm::<10, true>(w, &s, p, p, len),
                    None => return false,
                },
                AesBound::None => return false,
            }
        }
        true
    }
    #[cfg(not(x86_simd))]
    {
        let _ = how;
        false
    }
}
