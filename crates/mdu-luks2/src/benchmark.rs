//! What `cryptsetup benchmark` measures, on this crate's own engines (no
//! kernel crypto API): PBKDF2 iterations per second, the Argon2 cost that
//! takes a requested time, and the speed of a dm-crypt cipher.
//!
//! Measurements use the monotonic clock. They are approximate: a loaded
//! machine gives lower figures, and nothing here is a test of speed.

use std::time::{Duration, Instant};

use mdu_dmcrypt::{CipherSpec, Geometry, SectorCipher, WeakKeys};

use crate::{Argon2Variant, Direction, Error, Hash, KdfBenchmark, KdfParams, Pbkdf, cost};

/// PBKDF2 iterations per second of `hash` for a `key_len`-byte key, as
/// cryptsetup finds them (the rate a new keyslot's iterations come from,
/// [`KdfBenchmark`]'s): rounds of growing iteration counts until one
/// takes more than half of `target` (cryptsetup's `target` is 1 s).
///
/// # Errors
///
/// [`Error::Params`] when no iteration count takes long enough to time.
///
/// ```
/// use std::time::Duration;
/// let n = mdu_luks2::benchmark::pbkdf2_per_second(mdu_luks2::Hash::Sha256, 32, Duration::from_millis(2))?;
/// assert!(n > 0);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn pbkdf2_per_second(hash: Hash, key_len: usize, target: Duration) -> Result<u64, Error> {
    let min_us = u64::try_from(target.as_micros() / 2).unwrap_or(u64::MAX);
    cost::pbkdf2_rate(hash, min_us, &mut cost::measure_us(key_len))
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

/// The Argon2 cost that takes about `target` with `threads` lanes (at most
/// 4) and at most `max_memory_kib` KiB: [`KdfBenchmark`]'s search (the one
/// a new keyslot's cost comes from), its first stage scaled with the
/// target (an eighth of it: cryptsetup's 250 ms of 2 s).
///
/// # Errors
///
/// [`Error::Params`] for a memory cap below 8 KiB per lane (and 32 KiB);
/// [`Error::Kdf`] when Argon2 refuses the parameters.
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
    let b = KdfBenchmark {
        pbkdf: match variant {
            Argon2Variant::Argon2i => Pbkdf::Argon2i,
            Argon2Variant::Argon2id => Pbkdf::Argon2id,
        },
        max_memory_kib,
        parallel: threads,
        key_size: key_len,
        ..KdfBenchmark::default()
    };
    let target_us = u64::try_from(target.as_micros()).unwrap_or(u64::MAX);
    match b.argon2(target_us, target_us / 8, &mut cost::measure_us(key_len))? {
        KdfParams::Argon2 {
            time, memory, cpus, ..
        } => Ok(Argon2Cost {
            iterations: time,
            memory_kib: memory,
            threads: cpus,
        }),
        KdfParams::Pbkdf2 { .. } => unreachable!("an Argon2 search gives Argon2"),
    }
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
