//! The cost of a new keyslot's key derivation, benchmarked to a time as
//! cryptsetup does (`lib/utils_pbkdf.c`, `lib/crypto_backend/pbkdf_check.c`):
//! PBKDF2 iterations per second scaled to `--iter-time`; Argon2 memory
//! raised up to `--pbkdf-memory` first, then passes, until a derivation
//! takes the time asked for (within -5 % and +10 %). The memory is capped
//! at half the physical memory and the threads at the CPUs online.
//!
//! The search is a pure function of a measuring function, so its bounds
//! are tested without a clock; [`KdfBenchmark::run`] measures the real
//! KDFs.

use std::time::Instant;

use crate::choices::{FormatChoices, Pbkdf};
use crate::kdf::{Argon2Variant, Hash};
use crate::{Error, KdfParams};

/// Fewest PBKDF2 iterations of a keyslot or digest (cryptsetup's floor).
const PBKDF2_MIN_ITERATIONS: u32 = 1000;
/// Fewest Argon2 passes (cryptsetup's floor).
const ARGON2_MIN_TIME: u32 = 4;
/// Least Argon2 memory in KiB (cryptsetup's floor; at least 8 per lane).
const ARGON2_MIN_MEMORY_KIB: u32 = 32;
/// Most Argon2 threads (cryptsetup's ceiling).
const ARGON2_MAX_PARALLEL: u32 = 4;
/// A PBKDF2 run that times the rate takes longer than this (500 ms).
const PBKDF2_MIN_US: u64 = 500_000;
/// An Argon2 run that starts the estimates takes at least this (250 ms).
const ARGON2_MIN_US: u64 = 250_000;
/// The time the volume-key digest's PBKDF2 is benchmarked to.
pub(crate) const DIGEST_ITER_TIME_MS: u32 = 125;

/// A benchmark of a new keyslot's KDF, as `cryptsetup luksFormat` and
/// `luksAddKey` run it: the parameters that make one derivation take
/// `iter_time_ms` on this machine.
///
/// ```
/// use mdu_luks2::{Hash, KdfBenchmark, KdfParams, Pbkdf};
/// // PBKDF2 for 1 ms: at least cryptsetup's 1000 iterations.
/// let b = KdfBenchmark { pbkdf: Pbkdf::Pbkdf2, iter_time_ms: 1, ..KdfBenchmark::default() };
/// let KdfParams::Pbkdf2 { hash, iterations } = b.run()? else { unreachable!() };
/// assert_eq!(hash, Hash::Sha256);
/// assert!(iterations >= 1000);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KdfBenchmark {
    /// The KDF.
    pub pbkdf: Pbkdf,
    /// The hash of PBKDF2.
    pub hash: Hash,
    /// The time one derivation should take (`--iter-time`, default 2000).
    pub iter_time_ms: u32,
    /// The most Argon2 memory, in KiB (`--pbkdf-memory`, default 1 GiB).
    pub max_memory_kib: u32,
    /// Argon2 threads (`--pbkdf-parallel`, default 4).
    pub parallel: u32,
    /// The length of the derived key (the keyslot's key size).
    pub key_size: usize,
}

impl Default for KdfBenchmark {
    /// cryptsetup's defaults for a LUKS2 keyslot of aes-xts-plain64 with a
    /// 512-bit key.
    fn default() -> Self {
        KdfBenchmark {
            pbkdf: Pbkdf::Argon2id,
            hash: Hash::Sha256,
            iter_time_ms: 2000,
            max_memory_kib: FormatChoices::ARGON2_MEMORY_KIB,
            parallel: FormatChoices::ARGON2_PARALLEL,
            key_size: 64,
        }
    }
}

impl KdfBenchmark {
    /// The same benchmark within this machine's means, as cryptsetup caps
    /// it: Argon2 memory at most half of `phys_memory_kib`, threads at
    /// most `cpus` (and 4), each at least 1.
    ///
    /// ```
    /// use mdu_luks2::KdfBenchmark;
    /// let b = KdfBenchmark::default().capped(1 << 20, 2);
    /// assert_eq!((b.max_memory_kib, b.parallel), (1 << 19, 2));
    /// ```
    pub fn capped(self, phys_memory_kib: u64, cpus: u32) -> KdfBenchmark {
        let half = u32::try_from(phys_memory_kib / 2).unwrap_or(u32::MAX);
        KdfBenchmark {
            max_memory_kib: self.max_memory_kib.min(half.max(ARGON2_MIN_MEMORY_KIB)),
            parallel: self.parallel.min(cpus.max(1)).min(ARGON2_MAX_PARALLEL),
            ..self
        }
    }

    /// [`capped`](Self::capped) to this machine: its physical memory
    /// (`MemTotal` of `/proc/meminfo`; uncapped where that cannot be read)
    /// and the CPUs this process may run on.
    ///
    /// ```
    /// let b = mdu_luks2::KdfBenchmark::default().capped_to_this_machine();
    /// assert!((1..=4).contains(&b.parallel));
    /// ```
    pub fn capped_to_this_machine(self) -> KdfBenchmark {
        let mem_kib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| {
                let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .unwrap_or(u64::MAX);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.capped(mem_kib, u32::try_from(cpus).unwrap_or(u32::MAX))
    }

    /// Benchmarks the KDF on this machine and returns its parameters.
    ///
    /// # Errors
    ///
    /// [`Error::Params`] for parameters no search can start from (no
    /// time, no key, less memory than the threads need);
    /// [`Error::OutOfMemory`] or [`Error::Kdf`] from a derivation.
    ///
    /// ```
    /// use mdu_luks2::{KdfBenchmark, KdfParams, Pbkdf};
    /// let b = KdfBenchmark { pbkdf: Pbkdf::Argon2i, iter_time_ms: 1, max_memory_kib: 64, parallel: 1, ..KdfBenchmark::default() };
    /// let KdfParams::Argon2 { time, memory, cpus, .. } = b.run()? else { unreachable!() };
    /// assert!(time >= 4 && (32..=64).contains(&memory) && cpus == 1);
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn run(&self) -> Result<KdfParams, Error> {
        self.search(&mut measure_us(self.key_size))
    }

    /// cryptsetup's search, over `measure` (the microseconds one
    /// derivation with the given parameters takes).
    pub(crate) fn search(
        &self,
        measure: &mut dyn FnMut(&KdfParams) -> Result<u64, Error>,
    ) -> Result<KdfParams, Error> {
        if self.iter_time_ms == 0 || self.key_size == 0 {
            return Err(Error::Params {
                problem: "a KDF benchmark needs a time and a key length".into(),
            });
        }
        match self.pbkdf {
            Pbkdf::Pbkdf2 => Ok(KdfParams::Pbkdf2 {
                hash: self.hash,
                iterations: pbkdf2_iterations(self.hash, self.iter_time_ms, measure)?,
            }),
            Pbkdf::Argon2i | Pbkdf::Argon2id => {
                let target_us = u64::from(self.iter_time_ms) * 1000;
                self.argon2(target_us, ARGON2_MIN_US, measure)
            }
        }
    }

    /// `crypt_argon2_check`: small parameters that take at least
    /// `min_us` (250 ms; memory first, then passes, by 16 while a run
    /// takes under 1/25 of that), then estimates toward `target_us` until
    /// a measurement lands within -5 % and +10 % of it or no better
    /// estimate exists.
    pub(crate) fn argon2(
        &self,
        target_us: u64,
        min_us: u64,
        measure: &mut dyn FnMut(&KdfParams) -> Result<u64, Error>,
    ) -> Result<KdfParams, Error> {
        let (min_ms, min_ms_fast) = (min_us, min_us / 25);
        let variant = if self.pbkdf == Pbkdf::Argon2i {
            Argon2Variant::Argon2i
        } else {
            Argon2Variant::Argon2id
        };
        let cpus = self.parallel.clamp(1, ARGON2_MAX_PARALLEL);
        let min_m = ARGON2_MIN_MEMORY_KIB.max(cpus * 8);
        let max_m = self.max_memory_kib;
        if max_m < min_m {
            return Err(Error::Params {
                problem: format!(
                    "Argon2 memory {max_m} KiB is below the {min_m} KiB that {cpus} threads need"
                ),
            });
        }
        let target = target_us;
        let (at_least, at_most) = (target * 95 / 100, target * 110 / 100);
        let params = |time, memory| KdfParams::Argon2 {
            variant,
            time,
            memory,
            cpus,
        };
        let (mut t, mut m) = (ARGON2_MIN_TIME, min_m);
        // 1. Parameters that take at least min_us (best of three).
        let mut ms;
        loop {
            ms = (0..3)
                .map(|_| measure(&params(t, m)))
                .try_fold(u64::MAX, |best, r| r.map(|ms| best.min(ms)))?;
            if ms >= min_ms {
                break;
            }
            let grow = |v: u32| -> u32 {
                if ms < min_ms_fast {
                    v.saturating_mul(16)
                } else {
                    (u64::from(v) * min_ms / ms).try_into().unwrap_or(u32::MAX)
                }
            };
            if m == max_m {
                let new = grow(t);
                if new == t {
                    break;
                }
                t = new;
            } else {
                let new = grow(m);
                if new == m {
                    break;
                }
                m = new.min(max_m);
            }
        }
        // 2. Estimates from the last measurement, measured in turn.
        let mut best = (t, m);
        // cryptsetup loops until it lands; a noisy clock could keep an
        // estimate from landing, so the tries are bounded.
        for _ in 0..16 {
            let Some((nt, nm)) = next_argon2(t, m, min_m, max_m, ms, target) else {
                break;
            };
            (t, m) = (nt, nm);
            ms = measure(&params(t, m))?;
            best = (t, m);
            if (at_least..=at_most).contains(&ms) {
                break;
            }
        }
        Ok(params(best.0, best.1))
    }
}

/// `next_argon2_params`: the next estimate from `(t, m)` measured at
/// `ms`, or `None` when it is the same (converged). Too slow: fewer
/// passes, then less memory; too fast: more memory, then more passes.
fn next_argon2(t: u32, m: u32, min_m: u32, max_m: u32, ms: u64, target: u64) -> Option<(u32, u32)> {
    // In 128 bits: a product of three u32 and a u64 time does not fit 64.
    let (ms, target) = (u128::from(ms.max(1)), u128::from(target));
    let sat = |v: u128| u32::try_from(v).unwrap_or(u32::MAX);
    let (t128, m128, min_t) = (u128::from(t), u128::from(m), u128::from(ARGON2_MIN_TIME));
    let (nt, nm) = if ms > target {
        let new_t = sat(t128 * target / ms);
        if new_t < ARGON2_MIN_TIME {
            let new_m = sat(t128 * m128 * target / (min_t * ms));
            (ARGON2_MIN_TIME, new_m.max(min_m))
        } else {
            (new_t, m)
        }
    } else {
        let new_m = m128 * target / ms;
        if new_m > u128::from(max_m) {
            let new_t = sat(t128 * m128 * target / (u128::from(max_m) * ms));
            (new_t.max(ARGON2_MIN_TIME), max_m)
        } else {
            (t, sat(new_m).max(min_m))
        }
    };
    ((nt, nm) != (t, m)).then_some((nt, nm))
}

/// `crypt_pbkdf_check` scaled to `time_ms`: the rate of
/// [`pbkdf2_rate`] over 500 ms, times the time; at least 1000.
pub(crate) fn pbkdf2_iterations(
    hash: Hash,
    time_ms: u32,
    measure: &mut dyn FnMut(&KdfParams) -> Result<u64, Error>,
) -> Result<u32, Error> {
    let rate = pbkdf2_rate(hash, PBKDF2_MIN_US, measure)?;
    let scaled = rate.saturating_mul(u64::from(time_ms)) / 1000;
    Ok(u32::try_from(scaled)
        .unwrap_or(u32::MAX)
        .max(PBKDF2_MIN_ITERATIONS))
}

/// `crypt_pbkdf_check`: PBKDF2 iterations per second, from 2^15
/// iterations grown (by 16, 8, 4 or 2 as a run takes up to 1/8, 1/4, 1/2
/// of `min_us` or more) until one run takes more than `min_us`.
pub(crate) fn pbkdf2_rate(
    hash: Hash,
    min_us: u64,
    measure: &mut dyn FnMut(&KdfParams) -> Result<u64, Error>,
) -> Result<u64, Error> {
    let mut iterations: u32 = 1 << 15;
    for _ in 0..=10 {
        let us = measure(&KdfParams::Pbkdf2 { hash, iterations })?;
        if us > min_us {
            return Ok(u64::from(iterations) * 1_000_000 / us);
        }
        let shift = match us {
            u if u <= min_us / 8 => 4,
            u if u <= min_us / 4 => 3,
            u if u <= min_us / 2 => 2,
            _ => 1,
        };
        iterations = match iterations.checked_shl(shift) {
            Some(i) if i >> shift == iterations => i,
            _ => break,
        };
    }
    Err(Error::Params {
        problem: "the PBKDF2 benchmark found no iteration count that takes long enough to time"
            .into(),
    })
}

/// A measuring function of the real KDFs, for a `key_size`-byte key: the
/// microseconds one derivation takes on the monotonic clock.
pub(crate) fn measure_us(key_size: usize) -> impl FnMut(&KdfParams) -> Result<u64, Error> {
    move |kdf: &KdfParams| {
        let kdf = kdf.salted(vec![0x5a; 32]);
        let start = Instant::now();
        kdf.derive(b"foobarfo", key_size.max(1), 0)?;
        Ok(start.elapsed().as_micros().try_into().unwrap_or(u64::MAX))
    }
}

/// The PBKDF2 iterations of a new LUKS1 keyslot and of the volume-key
/// digest of a new LUKS1 header, benchmarked as cryptsetup's
/// `LUKS_generate_phdr` and `LUKS_set_key` do: the keyslot's take
/// `iter_time_ms` (at least 1000), the digest's are the same rate over
/// 125 ms (at least 1000).
///
/// # Errors
///
/// What [`KdfBenchmark::run`] refuses.
///
/// ```
/// use mdu_luks2::{Hash, luks1_iterations};
/// let (slot, digest) = luks1_iterations(Hash::Sha256, 32, 1)?;
/// assert!(slot >= 1000 && digest >= 1000);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn luks1_iterations(
    hash: Hash,
    key_size: usize,
    iter_time_ms: u32,
) -> Result<(u32, u32), Error> {
    let b = KdfBenchmark {
        pbkdf: Pbkdf::Pbkdf2,
        hash,
        iter_time_ms,
        key_size,
        ..KdfBenchmark::default()
    };
    match b.run()? {
        KdfParams::Pbkdf2 { iterations, .. } => Ok((
            iterations,
            luks1_digest_iterations(iterations, iter_time_ms),
        )),
        KdfParams::Argon2 { .. } => unreachable!("a PBKDF2 benchmark gives PBKDF2"),
    }
}

/// cryptsetup's LUKS1 digest iterations from the keyslot's `iterations`
/// for `iter_time_ms`: per millisecond times 125, at least 1000 (the
/// largest count where that overflows).
fn luks1_digest_iterations(iterations: u32, iter_time_ms: u32) -> u32 {
    let per =
        u64::from(iterations) * u64::from(DIGEST_ITER_TIME_MS) / u64::from(iter_time_ms.max(1));
    u32::try_from(per)
        .unwrap_or(u32::MAX)
        .max(PBKDF2_MIN_ITERATIONS)
}

/// A keyslot KDF of the same kind and hash as `kdf`, its cost benchmarked
/// to `iter_time_ms` within this machine's means (cryptsetup's defaults
/// for the Argon2 memory and threads), for a `key_size`-byte key.
pub(crate) fn benchmarked_like(
    kdf: KdfParams,
    iter_time_ms: u32,
    key_size: usize,
) -> Result<KdfParams, Error> {
    let (pbkdf, hash) = match kdf {
        KdfParams::Pbkdf2 { hash, .. } => (Pbkdf::Pbkdf2, hash),
        KdfParams::Argon2 {
            variant: Argon2Variant::Argon2i,
            ..
        } => (Pbkdf::Argon2i, Hash::Sha256),
        KdfParams::Argon2 { .. } => (Pbkdf::Argon2id, Hash::Sha256),
    };
    KdfBenchmark {
        pbkdf,
        hash,
        iter_time_ms,
        key_size,
        ..KdfBenchmark::default()
    }
    .capped_to_this_machine()
    .run()
}

/// The iterations of the volume-key digest, benchmarked to 125 ms of
/// PBKDF2-SHA-256 as cryptsetup does (at least 1000).
pub(crate) fn digest_iterations() -> Result<u32, Error> {
    let b = KdfBenchmark {
        pbkdf: Pbkdf::Pbkdf2,
        iter_time_ms: DIGEST_ITER_TIME_MS,
        key_size: 32,
        ..KdfBenchmark::default()
    };
    match b.run()? {
        KdfParams::Pbkdf2 { iterations, .. } => Ok(iterations),
        KdfParams::Argon2 { .. } => unreachable!("a PBKDF2 benchmark gives PBKDF2"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine where a derivation takes `per` ms per pass and MiB
    /// (Argon2) or per 2^15 iterations (PBKDF2), in microseconds.
    fn machine(per: f64) -> impl FnMut(&KdfParams) -> Result<u64, Error> {
        let per = per * 1000.0;
        move |k: &KdfParams| {
            Ok(match *k {
                KdfParams::Pbkdf2 { iterations, .. } => {
                    (f64::from(iterations) / f64::from(1u32 << 15) * per) as u64
                }
                KdfParams::Argon2 { time, memory, .. } => {
                    (f64::from(time) * f64::from(memory) / 1024.0 * per) as u64
                }
            })
        }
    }

    #[test]
    fn pbkdf2_scales_to_the_time_and_keeps_the_floor() {
        let b = KdfBenchmark {
            pbkdf: Pbkdf::Pbkdf2,
            ..KdfBenchmark::default()
        };
        // 10 ms per 2^15 iterations: 2000 ms is 200 * 2^15.
        let KdfParams::Pbkdf2 { iterations, .. } = b.search(&mut machine(10.0)).unwrap() else {
            panic!()
        };
        assert!(
            (6_400_000..=6_600_000).contains(&iterations),
            "{iterations}"
        );
        // A slow machine and a short time: the floor of 1000.
        let short = KdfBenchmark {
            iter_time_ms: 1,
            ..b
        };
        let KdfParams::Pbkdf2 { iterations, .. } = short.search(&mut machine(600.0)).unwrap()
        else {
            panic!()
        };
        assert_eq!(iterations, 1000);
        // A clock that never moves: refused, not a loop.
        assert!(b.search(&mut |_: &KdfParams| Ok(0)).is_err());
    }

    #[test]
    fn argon2_fills_the_memory_first_then_adds_passes() {
        let b = KdfBenchmark::default();
        // 1 ms per pass and MiB: 4 passes of 1 GiB take 4 s, too long:
        // the floor of 4 passes, less memory.
        let KdfParams::Argon2 {
            time, memory, cpus, ..
        } = b.search(&mut machine(1.0)).unwrap()
        else {
            panic!()
        };
        assert_eq!((time, cpus), (4, 4));
        assert!((450 << 10..=560 << 10).contains(&memory), "{memory}");
        // A fast machine: all the memory, more passes.
        let KdfParams::Argon2 { time, memory, .. } = b.search(&mut machine(0.05)).unwrap() else {
            panic!()
        };
        assert_eq!(memory, 1 << 20);
        assert!((36..=44).contains(&time), "{time}");
    }

    #[test]
    fn argon2_keeps_every_bound() {
        for per in [0.0, 0.001, 0.3, 5.0, 1e6] {
            for (max_m, parallel, ms) in [(1 << 20, 4, 2000), (64, 1, 1), (4 << 20, 9, 10_000)] {
                let b = KdfBenchmark {
                    max_memory_kib: max_m,
                    parallel,
                    iter_time_ms: ms,
                    ..KdfBenchmark::default()
                };
                let KdfParams::Argon2 {
                    time, memory, cpus, ..
                } = b.search(&mut machine(per)).unwrap()
                else {
                    panic!()
                };
                assert!(time >= 4, "{per} {max_m}: {time}");
                assert!(
                    (32.max(cpus * 8)..=max_m).contains(&memory),
                    "{per}: {memory}"
                );
                assert!((1..=4).contains(&cpus));
            }
        }
        let tiny = KdfBenchmark {
            max_memory_kib: 16,
            ..KdfBenchmark::default()
        };
        assert!(tiny.search(&mut machine(1.0)).is_err());
    }

    #[test]
    fn the_benchmark_tables_run_the_same_searches_on_a_scaled_clock() {
        // A 1 ms threshold on 10 ms per 2^15 iterations: one run times it.
        let rate = pbkdf2_rate(Hash::Sha256, 1000, &mut machine(10.0)).unwrap();
        assert_eq!(rate, 3_276_800);
        // Argon2 to 1 us: the floor of passes and memory.
        let b = KdfBenchmark {
            max_memory_kib: 64,
            parallel: 1,
            ..KdfBenchmark::default()
        };
        let KdfParams::Argon2 { time, memory, .. } = b.argon2(1, 0, &mut machine(1.0)).unwrap()
        else {
            panic!()
        };
        assert_eq!((time, memory), (4, 32));
    }

    #[test]
    fn luks1_digests_take_125_ms_of_the_keyslots_rate() {
        assert_eq!(luks1_digest_iterations(2_000_000, 2000), 125_000);
        assert_eq!(luks1_digest_iterations(1000, 2000), 1000);
        assert_eq!(luks1_digest_iterations(1000, 1), 125_000);
        assert_eq!(luks1_digest_iterations(u32::MAX, 1), u32::MAX);
        assert_eq!(luks1_digest_iterations(5000, 0), 625_000);
    }

    #[test]
    fn caps_follow_the_machine() {
        let b = KdfBenchmark::default();
        assert_eq!(b.capped(8 << 20, 16), b);
        let small = b.capped(100 << 10, 1);
        assert_eq!((small.max_memory_kib, small.parallel), (50 << 10, 1));
        let none = b.capped(0, 0);
        assert_eq!((none.max_memory_kib, none.parallel), (32, 1));
    }
}
