//! What `cryptsetup benchmark` measures, on this crate's own engines (no
//! kernel crypto API): PBKDF2 iterations per second, the Argon2 cost that
//! takes a requested time, and the speed of a dm-crypt cipher.
//!
//! Measurements use the monotonic clock. They are approximate: a loaded
//! machine gives lower figures, and nothing here is a test of speed.

use std::time::{Duration, Instant};

use mdu_dmcrypt::{CipherSpec, Geometry, SectorCipher, WeakKeys};

use crate::{Argon2Variant, Direction, Error, Hash, Kdf};

/// cryptsetup's benchmark passphrase and salt (any bytes would do).
const PASSPHRASE: &[u8] = b"foobarfo";
const SALT: &[u8] = b"0123456789abcdef0123456789abcdef";

/// PBKDF2 iterations per second of `hash` for a `key_len`-byte key, as
/// cryptsetup finds them: rounds of growing iteration counts until one
/// takes more than half of `target`, scaled to `target` and reported per
/// second of it (cryptsetup's `target` is 1 s).
///
/// ```
/// use std::time::Duration;
/// let n = mdu_luks2::benchmark::pbkdf2_per_second(mdu_luks2::Hash::Sha256, 32, Duration::from_millis(2));
/// assert!(n > 0);
/// ```
pub fn pbkdf2_per_second(hash: Hash, key_len: usize, target: Duration) -> u64 {
    let target_s = target.as_secs_f64().max(1e-6);
    let mut out = vec![0u8; key_len];
    let mut iterations: u32 = 1000;
    loop {
        let t = Instant::now();
        hash.pbkdf2(PASSPHRASE, &SALT[..16], iterations, &mut out);
        let s = t.elapsed().as_secs_f64().max(1e-9);
        // Per second of the target, as cryptsetup reports for 1 s.
        let per_target = f64::from(iterations) * target_s / s;
        if s > target_s / 2.0 || iterations >= u32::MAX / 16 {
            return (per_target / target_s) as u64;
        }
        let grow = match s / target_s {
            f if f <= 0.062 => 16,
            f if f <= 0.125 => 8,
            f if f <= 0.25 => 4,
            _ => 2,
        };
        iterations = iterations.saturating_mul(grow);
    }
}

/// An Argon2 cost: passes, memory and lanes.
///
/// ```
/// let c = mdu_luks2::benchmark::Argon2Cost { iterations: 4, memory_kib: 1 << 20, threads: 4 };
/// assert_eq!(c.memory_kib, 1048576);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Argon2Cost {
    /// Passes (`time`), at least 4.
    pub iterations: u32,
    /// Memory in KiB.
    pub memory_kib: u32,
    /// Lanes (`cpus`).
    pub threads: u32,
}

/// The Argon2 cost that takes about `target` with `threads` lanes and at
/// most `max_memory_kib` KiB, searched as cryptsetup searches it: from 4
/// passes and the smallest benchmark memory (64 MiB, or less when the cap
/// is lower), grow memory first, then passes, until one run takes an
/// eighth of the target; then scale to the target (memory before passes
/// when growing, passes before memory when shrinking) and measure again
/// until a run lands within 95..110 % of it.
///
/// # Errors
///
/// [`Error::Kdf`] when Argon2 refuses the parameters (a memory cap below
/// 8 KiB per lane, no lane).
///
/// ```
/// use std::time::Duration;
/// use mdu_luks2::{Argon2Variant, benchmark::argon2_cost};
/// let c = argon2_cost(Argon2Variant::Argon2id, 32, Duration::from_millis(1), 64, 1)?;
/// assert!(c.iterations >= 4 && c.memory_kib <= 64);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn argon2_cost(
    variant: Argon2Variant,
    key_len: usize,
    target: Duration,
    max_memory_kib: u32,
    threads: u32,
) -> Result<Argon2Cost, Error> {
    const MIN_ITERATIONS: u32 = 4;
    let target_s = target.as_secs_f64().max(1e-6);
    let min_memory = (64 * 1024).min(max_memory_kib).max(8 * threads);
    if max_memory_kib < min_memory {
        return Err(Error::Kdf {
            slot: None,
            message: format!(
                "an Argon2 memory cap of {max_memory_kib} KiB is below 8 KiB for each of {threads} threads"
            ),
        });
    }
    let measure = |iterations: u32, memory: u32| -> Result<f64, Error> {
        let kdf = Kdf::Argon2 {
            variant,
            time: iterations,
            memory,
            cpus: threads,
            salt: SALT.to_vec(),
        };
        let t = Instant::now();
        kdf.derive(PASSPHRASE, key_len, 0)?;
        Ok(t.elapsed().as_secs_f64())
    };
    let (mut t, mut m) = (MIN_ITERATIONS, min_memory);
    // 1. Small parameters that take an eighth of the target (cryptsetup's
    // 250 ms of 2 s); at least 1/200 of it (10 ms) before scaling.
    let mut s;
    loop {
        s = measure(t, m)?;
        if s >= target_s / 8.0 {
            break;
        }
        let fast = s < target_s / 200.0;
        let scaled = |x: u32| ((f64::from(x) * target_s / 8.0 / s.max(1e-9)) as u32).max(x);
        if m == max_memory_kib {
            let next = if fast {
                t.saturating_mul(16)
            } else {
                scaled(t)
            };
            if next == t {
                break;
            }
            t = next;
        } else {
            let next = if fast {
                m.saturating_mul(16)
            } else {
                scaled(m)
            };
            if next == m {
                break;
            }
            m = next.min(max_memory_kib);
        }
    }
    // 2. Scale to the target and measure until within 95..110 %.
    for _ in 0..16 {
        let (old_t, old_m) = (t, m);
        let ratio = target_s / s.max(1e-9);
        let mut last = false;
        if ratio < 1.0 {
            let new_t = (f64::from(t) * ratio) as u32;
            if new_t < MIN_ITERATIONS {
                let new_m =
                    (f64::from(t) * f64::from(m) * ratio / f64::from(MIN_ITERATIONS)) as u32;
                t = MIN_ITERATIONS;
                m = new_m.max(min_memory);
                last = new_m <= min_memory;
            } else {
                t = new_t;
            }
        } else {
            let new_m = f64::from(m) * ratio;
            if new_m > f64::from(max_memory_kib) {
                let new_t =
                    (f64::from(t) * f64::from(m) * ratio / f64::from(max_memory_kib)) as u32;
                m = max_memory_kib;
                t = new_t.max(MIN_ITERATIONS);
                last = new_t <= MIN_ITERATIONS;
            } else {
                m = (new_m as u32).max(min_memory);
                last = (new_m as u32) < min_memory;
            }
        }
        if last || (old_t, old_m) == (t, m) {
            break;
        }
        s = measure(t, m)?;
        if (0.95..=1.10).contains(&(s / target_s)) {
            break;
        }
    }
    Ok(Argon2Cost {
        iterations: t,
        memory_kib: m,
        threads,
    })
}

/// Encryption and decryption speed of `spec` with a `key_len`-byte key,
/// in MiB/s: a `buffer`-byte buffer of 512-byte sectors (IVs from sector
/// 0) encrypted again and again for at least `duration`, then decrypted
/// likewise. cryptsetup measures the kernel's cipher on 1 MiB; this is
/// the dm-crypt engine of this crate, IV generation included.
///
/// # Errors
///
/// [`Error::Cipher`] when the key length does not fit the spec.
///
/// ```
/// use std::time::Duration;
/// let spec = "aes-xts-plain64".parse()?;
/// let (enc, dec) = mdu_luks2::benchmark::cipher_speed(spec, 64, 4096, Duration::from_millis(1))?;
/// assert!(enc > 0.0 && dec > 0.0);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn cipher_speed(
    spec: CipherSpec,
    key_len: usize,
    buffer: usize,
    duration: Duration,
) -> Result<(f64, f64), Error> {
    // A key whose XTS halves differ.
    let key: Vec<u8> = (0..key_len)
        .map(|i| (i as u8).wrapping_mul(37) ^ 0x5c)
        .collect();
    let cipher = SectorCipher::new(spec, &key, Geometry::new(512, 0, false)?, WeakKeys::Refuse)?;
    let len = buffer.max(512) / 512 * 512;
    let mut buf = vec![0u8; len];
    let mut speed = |dir: Direction| -> Result<f64, Error> {
        let start = Instant::now();
        let mut bytes = 0u64;
        loop {
            cipher.crypt(dir, 0, &mut buf)?;
            bytes += len as u64;
            let s = start.elapsed();
            if s >= duration {
                return Ok(bytes as f64 / (1024.0 * 1024.0) / s.as_secs_f64().max(1e-9));
            }
        }
    };
    let enc = speed(Direction::Encrypt)?;
    let dec = speed(Direction::Decrypt)?;
    Ok((enc, dec))
}
