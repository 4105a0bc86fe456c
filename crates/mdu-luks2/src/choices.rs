//! What a user chooses for a new image, with cryptsetup's defaults for
//! what they leave out: the one place those defaults are written.

use mdu_dmcrypt::{CipherSpec, WeakKeys};

use crate::format::FormatParams;
use crate::kdf::{Argon2Variant, Hash};
use crate::{Error, KdfParams};

/// The key derivation of a new keyslot, as `cryptsetup --pbkdf` names it.
///
/// ```
/// assert_eq!(mdu_luks2::Pbkdf::default(), mdu_luks2::Pbkdf::Argon2id);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pbkdf {
    /// PBKDF2-HMAC.
    Pbkdf2,
    /// Argon2i.
    Argon2i,
    /// Argon2id (cryptsetup's default).
    #[default]
    Argon2id,
}

/// The options of a new image as `cryptsetup luksFormat` takes them; each
/// one left out (`None`) takes cryptsetup's default, and
/// [`params`](Self::params) turns them into checked [`FormatParams`].
/// Every command that makes a header (format, encrypt, an encrypting
/// reencryption) goes through here, so the defaults are written once.
///
/// ```
/// use mdu_luks2::{FormatChoices, KdfParams};
/// let p = FormatChoices::default().params()?;
/// assert_eq!((p.cipher.to_string(), p.key_size), ("aes-xts-plain64".into(), 64));
/// assert_eq!((p.sector_size, p.data_offset, p.digest_iterations), (4096, 16 << 20, 100_000));
/// assert!(matches!(p.kdf, KdfParams::Argon2 { time: 4, memory: 1048576, cpus: 4, .. }));
///
/// // Forced iterations: the volume-key digest takes the minimum, as cryptsetup.
/// let c = FormatChoices { iterations: Some(1000), ..FormatChoices::default() };
/// assert_eq!(c.params()?.digest_iterations, 1000);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FormatChoices {
    /// The cipher ([`CIPHER`](Self::CIPHER) if `None`).
    pub cipher: Option<CipherSpec>,
    /// The volume key size in bytes (the cipher's default if `None`).
    pub key_size: Option<usize>,
    /// The encryption sector size ([`SECTOR_SIZE`](Self::SECTOR_SIZE) if `None`).
    pub sector_size: Option<u32>,
    /// The key derivation of keyslot 0.
    pub pbkdf: Pbkdf,
    /// PBKDF2 iterations or Argon2 passes (`--pbkdf-force-iterations`):
    /// [`PBKDF2_ITERATIONS`](Self::PBKDF2_ITERATIONS) or
    /// [`ARGON2_TIME`](Self::ARGON2_TIME) if `None`. Given, the
    /// volume-key digest takes the minimum 1000 iterations.
    pub iterations: Option<u32>,
    /// Benchmark the KDF to this many milliseconds (`--iter-time`) when
    /// `iterations` is `None`, as cryptsetup does: the keyslot's
    /// iterations (and Argon2 memory, up to `memory_kib`) and the digest's
    /// iterations (125 ms) come from [`KdfBenchmark`](crate::KdfBenchmark),
    /// within this machine's memory and CPUs. `None`: the fixed costs
    /// above, without a benchmark.
    pub iter_time_ms: Option<u32>,
    /// Argon2 memory in KiB ([`ARGON2_MEMORY_KIB`](Self::ARGON2_MEMORY_KIB) if `None`).
    pub memory_kib: Option<u32>,
    /// Argon2 threads ([`ARGON2_PARALLEL`](Self::ARGON2_PARALLEL) if `None`).
    pub parallel: Option<u32>,
    /// The hash of PBKDF2 ([`HASH`](Self::HASH) if `None`).
    pub hash: Option<Hash>,
    /// The UUID (random if `None`).
    pub uuid: Option<String>,
    /// The label.
    pub label: String,
    /// The subsystem.
    pub subsystem: String,
    /// Where the data segment starts, in bytes ([`DATA_OFFSET`](Self::DATA_OFFSET) if `None`).
    pub data_offset: Option<u64>,
    /// Whether a volume key with equal XTS halves is accepted.
    pub weak_keys: WeakKeys,
}

impl FormatChoices {
    /// The cipher of a new image.
    pub const CIPHER: &'static str = "aes-xts-plain64";
    /// The sector size luksFormat picks for a file.
    pub const SECTOR_SIZE: u32 = 4096;
    /// PBKDF2 iterations of a new keyslot.
    pub const PBKDF2_ITERATIONS: u32 = 1_000_000;
    /// Argon2 passes of a new keyslot.
    pub const ARGON2_TIME: u32 = 4;
    /// Argon2 memory of a new keyslot, in KiB (1 GiB).
    pub const ARGON2_MEMORY_KIB: u32 = 1 << 20;
    /// Argon2 threads of a new keyslot.
    pub const ARGON2_PARALLEL: u32 = 4;
    /// The hash of PBKDF2.
    pub const HASH: &'static str = "sha256";
    /// Where the data segment starts (16 MiB).
    pub const DATA_OFFSET: u64 = 16 << 20;
    /// Iterations of the volume-key digest.
    pub const DIGEST_ITERATIONS: u32 = 100_000;
    /// Iterations of the volume-key digest when the keyslot's are forced.
    pub const FORCED_DIGEST_ITERATIONS: u32 = 1000;
    /// The time a new keyslot's KDF is benchmarked to, in milliseconds
    /// (`--iter-time`).
    pub const ITER_TIME_MS: u32 = 2000;

    /// A data offset given in 512-byte sectors, as cryptsetup's `--offset`
    /// takes it, in bytes: a multiple of 8 sectors (4096 bytes), and at
    /// most [`MAX_DATA_OFFSET`](crate::MAX_DATA_OFFSET).
    ///
    /// # Errors
    ///
    /// [`Error::Params`] saying which rule the count breaks.
    ///
    /// ```
    /// use mdu_luks2::FormatChoices;
    /// assert_eq!(FormatChoices::data_offset_sectors(32768)?, 16 << 20);
    /// let e = FormatChoices::data_offset_sectors(9).unwrap_err();
    /// assert_eq!(e.to_string(), "must be a multiple of 8 sectors (4096 bytes)");
    /// assert!(FormatChoices::data_offset_sectors(1 << 60).is_err());
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn data_offset_sectors(sectors: u64) -> Result<u64, Error> {
        if !sectors.is_multiple_of(8) {
            return Err(Error::Params {
                problem: "must be a multiple of 8 sectors (4096 bytes)".into(),
            });
        }
        sectors
            .checked_mul(512)
            .filter(|&b| b <= crate::MAX_DATA_OFFSET)
            .ok_or_else(|| Error::Params {
                problem: format!(
                    "{sectors} sectors of 512 bytes lie beyond the largest data offset, {} \
                     bytes (a file offset is below 2^63)",
                    crate::MAX_DATA_OFFSET
                ),
            })
    }

    /// A cipher as cryptsetup's `--cipher` names it, and a volume key size
    /// in bits as `--key-size` gives it: the spec, and the key size in
    /// bytes if given, checked against the cipher.
    ///
    /// # Errors
    ///
    /// [`Error::Cipher`] for a spec that does not parse;
    /// [`Error::Params`] naming the sizes the cipher takes for a size
    /// it does not.
    ///
    /// ```
    /// use mdu_luks2::FormatChoices;
    /// let (spec, bytes) = FormatChoices::cipher_and_key_bits("aes-xts-plain64", Some(256))?;
    /// assert_eq!((spec.to_string(), bytes), ("aes-xts-plain64".into(), Some(32)));
    /// let e = FormatChoices::cipher_and_key_bits("aes-xts-plain64", Some(128)).unwrap_err();
    /// assert_eq!(e.to_string(), "aes-xts-plain64 takes 256 or 512");
    /// # Ok::<(), mdu_luks2::Error>(())
    /// ```
    pub fn cipher_and_key_bits(
        cipher: &str,
        key_bits: Option<u32>,
    ) -> Result<(CipherSpec, Option<usize>), Error> {
        let spec = CipherSpec::parse(cipher).map_err(Error::Cipher)?;
        let Some(bits) = key_bits else {
            return Ok((spec, None));
        };
        let bytes = (bits / 8) as usize;
        if !bits.is_multiple_of(8) || spec.check_key_len(bytes).is_err() {
            let lens: Vec<String> = spec
                .key_lens()
                .iter()
                .map(|n| (n * 8).to_string())
                .collect();
            return Err(Error::Params {
                problem: format!("{cipher} takes {}", lens.join(" or ")),
            });
        }
        Ok((spec, Some(bytes)))
    }

    /// The parameters of the new image, every default filled in and the
    /// whole checked with [`FormatParams::validate`].
    ///
    /// # Errors
    ///
    /// What [`FormatParams::validate`] refuses.
    ///
    /// ```
    /// use mdu_luks2::FormatChoices;
    /// let c = FormatChoices { sector_size: Some(300), ..FormatChoices::default() };
    /// assert!(c.params().is_err());
    /// ```
    pub fn params(&self) -> Result<FormatParams, Error> {
        let cipher = match self.cipher {
            Some(c) => c,
            None => CipherSpec::parse(Self::CIPHER)?,
        };
        let hash = match self.hash {
            Some(h) => h,
            None => Hash::parse(Self::HASH).ok_or_else(|| Error::Params {
                problem: format!("unknown hash {}", Self::HASH),
            })?,
        };
        let key_size = self.key_size.unwrap_or(cipher.default_key_len());
        if let (Some(ms), None) = (self.iter_time_ms, self.iterations) {
            let bench = crate::KdfBenchmark {
                pbkdf: self.pbkdf,
                hash,
                iter_time_ms: ms,
                max_memory_kib: self.memory_kib.unwrap_or(Self::ARGON2_MEMORY_KIB),
                parallel: self.parallel.unwrap_or(Self::ARGON2_PARALLEL),
                key_size,
            }
            .capped_to_this_machine();
            let params = FormatParams {
                kdf: bench.run()?,
                digest_iterations: crate::cost::digest_iterations()?,
                ..self.fixed_cost_params(cipher, hash, key_size)
            };
            params.validate()?;
            return Ok(params);
        }
        let params = self.fixed_cost_params(cipher, hash, key_size);
        params.validate()?;
        Ok(params)
    }

    /// The parameters with the fixed (or forced) KDF costs.
    fn fixed_cost_params(&self, cipher: CipherSpec, hash: Hash, key_size: usize) -> FormatParams {
        let kdf = match self.pbkdf {
            Pbkdf::Pbkdf2 => KdfParams::Pbkdf2 {
                hash,
                iterations: self.iterations.unwrap_or(Self::PBKDF2_ITERATIONS),
            },
            Pbkdf::Argon2i | Pbkdf::Argon2id => KdfParams::Argon2 {
                variant: if self.pbkdf == Pbkdf::Argon2i {
                    Argon2Variant::Argon2i
                } else {
                    Argon2Variant::Argon2id
                },
                time: self.iterations.unwrap_or(Self::ARGON2_TIME),
                memory: self.memory_kib.unwrap_or(Self::ARGON2_MEMORY_KIB),
                cpus: self.parallel.unwrap_or(Self::ARGON2_PARALLEL),
            },
        };
        FormatParams {
            cipher,
            weak_keys: self.weak_keys,
            key_size,
            sector_size: self.sector_size.unwrap_or(Self::SECTOR_SIZE),
            kdf,
            digest_iterations: match self.iterations {
                Some(_) => Self::FORCED_DIGEST_ITERATIONS,
                None => Self::DIGEST_ITERATIONS,
            },
            uuid: self.uuid.clone(),
            label: self.label.clone(),
            subsystem: self.subsystem.clone(),
            data_offset: self.data_offset.unwrap_or(Self::DATA_OFFSET),
            ..FormatParams::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_offsets_in_sectors_keep_to_4096_bytes_and_file_offsets() {
        assert_eq!(FormatChoices::data_offset_sectors(0).unwrap(), 0);
        assert_eq!(FormatChoices::data_offset_sectors(8).unwrap(), 4096);
        let last = crate::MAX_DATA_OFFSET / 512;
        assert_eq!(
            FormatChoices::data_offset_sectors(last).unwrap(),
            crate::MAX_DATA_OFFSET
        );
        for bad in [1, 4, last + 8, !7] {
            assert!(FormatChoices::data_offset_sectors(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn key_sizes_in_bits_are_checked_against_the_cipher() {
        let ok = FormatChoices::cipher_and_key_bits("aes-cbc-essiv:sha256", Some(128)).unwrap();
        assert_eq!(ok.1, Some(16));
        for bits in [100, 64, 1024] {
            let e = FormatChoices::cipher_and_key_bits("aes-xts-plain64", Some(bits));
            assert!(matches!(e, Err(Error::Params { .. })), "{bits}");
        }
        assert!(matches!(
            FormatChoices::cipher_and_key_bits("rot13-ecb", None),
            Err(Error::Cipher(_))
        ));
    }

    #[test]
    fn every_choice_left_out_takes_cryptsetups_default() {
        let p = FormatChoices::default().params().unwrap();
        let d = FormatParams::default();
        assert_eq!(p.cipher, d.cipher);
        assert_eq!(
            (p.key_size, p.kdf, p.data_offset),
            (d.key_size, d.kdf, d.data_offset)
        );
        assert_eq!((p.sector_size, p.digest_iterations), (4096, 100_000));
    }

    #[test]
    fn every_choice_given_is_kept() {
        let c = FormatChoices {
            cipher: Some(CipherSpec::parse("aes-cbc-essiv:sha256").unwrap()),
            key_size: Some(16),
            sector_size: Some(512),
            pbkdf: Pbkdf::Pbkdf2,
            iterations: Some(2000),
            hash: Some(Hash::Sha512),
            uuid: Some("2b9e4a4e-0c1e-4e0e-9d4c-2f0e1f9b6a11".into()),
            label: "l".into(),
            subsystem: "s".into(),
            data_offset: Some(8 << 20),
            weak_keys: WeakKeys::Allow,
            ..FormatChoices::default()
        };
        let p = c.params().unwrap();
        assert_eq!(
            (p.cipher.to_string(), p.key_size),
            ("aes-cbc-essiv:sha256".into(), 16)
        );
        let kdf = KdfParams::Pbkdf2 {
            hash: Hash::Sha512,
            iterations: 2000,
        };
        assert_eq!(
            (p.sector_size, p.kdf, p.digest_iterations),
            (512, kdf, 1000)
        );
        assert_eq!((p.label.as_str(), p.subsystem.as_str()), ("l", "s"));
        assert_eq!((p.data_offset, p.weak_keys), (8 << 20, WeakKeys::Allow));
        assert_eq!(p.uuid, c.uuid);
    }

    #[test]
    fn a_benchmark_sets_the_costs_and_forced_iterations_skip_it() {
        let c = FormatChoices {
            pbkdf: Pbkdf::Pbkdf2,
            iter_time_ms: Some(1),
            ..FormatChoices::default()
        };
        let p = c.params().unwrap();
        assert!(matches!(p.kdf, KdfParams::Pbkdf2 { iterations, .. } if iterations >= 1000));
        assert!(p.digest_iterations >= 1000);
        let forced = FormatChoices {
            iterations: Some(1000),
            ..c
        };
        let p = forced.params().unwrap();
        assert_eq!(
            (p.kdf, p.digest_iterations),
            (
                KdfParams::Pbkdf2 {
                    hash: Hash::Sha256,
                    iterations: 1000
                },
                1000
            )
        );
    }

    #[test]
    fn argon2_choices_and_refusals() {
        let c = FormatChoices {
            pbkdf: Pbkdf::Argon2i,
            iterations: Some(5),
            memory_kib: Some(64),
            parallel: Some(2),
            ..FormatChoices::default()
        };
        let want = KdfParams::Argon2 {
            variant: Argon2Variant::Argon2i,
            time: 5,
            memory: 64,
            cpus: 2,
        };
        assert_eq!(c.params().unwrap().kdf, want);
        for bad in [
            FormatChoices {
                key_size: Some(24),
                ..FormatChoices::default()
            },
            FormatChoices {
                data_offset: Some(4097),
                ..FormatChoices::default()
            },
            FormatChoices {
                pbkdf: Pbkdf::Pbkdf2,
                iterations: Some(999),
                ..FormatChoices::default()
            },
        ] {
            assert!(bad.params().is_err(), "{bad:?}");
        }
    }
}
