//! `mdu luks benchmark` (and `mdu benchmark`): cryptsetup benchmark's two
//! tables, measured on mdu's own engines, with no kernel crypto API.

use std::time::Duration;

use mdu_luks2::Argon2Variant;
use mdu_luks2::benchmark::{argon2_cost, cipher_speed, pbkdf2_per_second};

use super::*;

/// The KDF of `--pbkdf`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum BenchPbkdf {
    /// PBKDF2 (with --hash).
    Pbkdf2,
    /// Argon2i.
    Argon2i,
    /// Argon2id.
    Argon2id,
}

/// `mdu luks benchmark`: cryptsetup benchmark's options.
#[derive(Args, Debug)]
pub(crate) struct BenchmarkArgs {
    /// Measure this cipher only (`aes-xts`, `serpent-cbc-essiv:sha256`,
    /// `xchacha12,aes-adiantum`; the IV mode defaults to plain64).
    #[arg(short = 'c', long, value_name = "SPEC")]
    cipher: Option<String>,
    /// The key size in bits for --cipher and the KDF lines (default 256).
    #[arg(short = 's', long, value_name = "BITS")]
    key_size: Option<usize>,
    /// Measure PBKDF2 with this hash only.
    #[arg(long, value_name = "HASH")]
    hash: Option<String>,
    /// Measure this KDF only.
    #[arg(long, value_enum)]
    pbkdf: Option<BenchPbkdf>,
    /// The time the Argon2 cost is searched for, in ms (default 2000).
    #[arg(short = 'i', long, value_name = "MS", default_value_t = 2000)]
    iter_time: u32,
    /// The Argon2 memory cap in KiB (default 1048576, 1 GiB).
    #[arg(long, value_name = "KIB", default_value_t = 1 << 20)]
    pbkdf_memory: u32,
    /// The Argon2 threads (default: the CPUs online, at most 4).
    #[arg(long, value_name = "N")]
    pbkdf_parallel: Option<u32>,
    /// Each cipher measurement and the PBKDF2 target, in ms (1000, as
    /// cryptsetup; the Argon2 search scales with it).
    #[arg(long, value_name = "MS", default_value_t = 1000, hide = true)]
    duration_ms: u64,
    /// The cipher buffer in bytes (1 MiB, as cryptsetup).
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20, hide = true)]
    buffer_size: usize,
}

/// cryptsetup's table: cipher, mode and key bytes.
const CIPHERS: [(&str, &str, usize); 13] = [
    ("aes", "cbc", 16),
    ("serpent", "cbc", 16),
    ("twofish", "cbc", 16),
    ("aes", "cbc", 32),
    ("serpent", "cbc", 32),
    ("twofish", "cbc", 32),
    ("aes", "xts", 32),
    ("serpent", "xts", 32),
    ("twofish", "xts", 32),
    ("aes", "xts", 64),
    ("serpent", "xts", 64),
    ("twofish", "xts", 64),
    // Not in cryptsetup's table (its kernel-only cipher): mdu has it.
    ("xchacha12,aes", "adiantum", 32),
];

/// cryptsetup's PBKDF2 hashes; a hash mdu lacks is `N/A`, as cryptsetup
/// prints one its backend lacks.
const HASHES: [&str; 5] = ["sha1", "sha256", "sha512", "ripemd160", "whirlpool"];

fn line(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(|e| CliError::io(Path::new("<stdout>"), "write", e))
}

pub(crate) fn benchmark(a: BenchmarkArgs) -> Result<(), CliError> {
    let bits = a.key_size.unwrap_or(256);
    if bits == 0 || !bits.is_multiple_of(8) {
        return Err(CliError::Usage(format!(
            "--key-size {bits}: a key size is a non-zero multiple of 8 bits"
        )));
    }
    let key_bytes = bits / 8;
    let duration = Duration::from_millis(a.duration_ms);
    // A spec first: a bad one, or a key size it does not take, is refused
    // before anything is measured.
    let spec = a.cipher.as_deref().map(parse_spec).transpose()?;
    if let Some((name, spec)) = &spec {
        spec.check_key_len(key_bytes)
            .map_err(|e| CliError::Usage(format!("cipher {name} with a {bits}-bit key: {e}")))?;
    }
    line("# Tests are approximate using memory only (no storage IO).")?;
    if a.pbkdf.is_some() || a.hash.is_some() {
        let hash = a.hash.as_deref().unwrap_or("sha256");
        return match a.pbkdf.unwrap_or(BenchPbkdf::Pbkdf2) {
            BenchPbkdf::Pbkdf2 => pbkdf2_line(hash, key_bytes, duration),
            BenchPbkdf::Argon2i => argon2_line(&a, Argon2Variant::Argon2i, key_bytes),
            BenchPbkdf::Argon2id => argon2_line(&a, Argon2Variant::Argon2id, key_bytes),
        };
    }
    if let Some((name, spec)) = spec {
        let (cipher, mode) = name.split_once('-').unwrap_or((&name, ""));
        let (enc, dec) = measure(spec, key_bytes, &a, &name)?;
        let width = (name.len()).max(11);
        line(&format!(
            "#{:w$} Algorithm |       Key |      Encryption |      Decryption",
            "",
            w = width - 11
        ))?;
        return line(&format!(
            "{cipher:>w$}-{mode}  {:9}b  {enc:10.1} MiB/s  {dec:10.1} MiB/s",
            key_bytes * 8,
            w = width - mode.len() - 1
        ));
    }
    for hash in HASHES {
        pbkdf2_line(hash, key_bytes, duration)?;
    }
    argon2_line(&a, Argon2Variant::Argon2i, key_bytes)?;
    argon2_line(&a, Argon2Variant::Argon2id, key_bytes)?;
    line("#     Algorithm |       Key |      Encryption |      Decryption")?;
    for (cipher, mode, key) in CIPHERS {
        let name = format!("{cipher}-{mode}");
        let spec = parse_spec(&name)?.1;
        let (enc, dec) = measure(spec, key, &a, &name)?;
        line(&format!(
            "{name:>15}  {:9}b  {enc:10.1} MiB/s  {dec:10.1} MiB/s",
            key * 8
        ))?;
    }
    Ok(())
}

/// `CIPHER-MODE[-IVMODE]` as cryptsetup takes it for --cipher: the name
/// shown (`aes-xts`) and the spec (plain64 when no IV mode is given).
fn parse_spec(text: &str) -> Result<(String, CipherSpec), CliError> {
    let spec = CipherSpec::parse(text)
        .or_else(|_| CipherSpec::parse(&format!("{text}-plain64")))
        .map_err(|e| {
            CliError::Usage(format!(
                "--cipher {text}: not a cipher specification mdu runs ({e})"
            ))
        })?;
    let name = format!("{}-{}", spec.cipher().name(), spec.chain().name());
    Ok((name, spec))
}

fn measure(
    spec: CipherSpec,
    key_bytes: usize,
    a: &BenchmarkArgs,
    name: &str,
) -> Result<(f64, f64), CliError> {
    let duration = Duration::from_millis(a.duration_ms);
    cipher_speed(spec, key_bytes, a.buffer_size, duration).map_err(|e| {
        CliError::Usage(format!(
            "cipher {name} with a {}-bit key is not available: {e}",
            key_bytes * 8
        ))
    })
}

fn pbkdf2_line(hash: &str, key_bytes: usize, target: Duration) -> Result<(), CliError> {
    match Hash::parse(hash) {
        Some(h) => {
            let rate = pbkdf2_per_second(h, key_bytes, target)
                .map_err(|e| CliError::Usage(format!("PBKDF2-{hash}: {e}")))?;
            line(&format!(
                "PBKDF2-{hash:<9} {rate:7} iterations per second for {}-bit key",
                key_bytes * 8
            ))
        }
        None => line(&format!("PBKDF2-{hash:<9}     N/A")),
    }
}

fn argon2_line(
    a: &BenchmarkArgs,
    variant: Argon2Variant,
    key_bytes: usize,
) -> Result<(), CliError> {
    let threads = a.pbkdf_parallel.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4) as u32)
    });
    // The requested time, scaled as the other measurements are.
    let target = Duration::from_millis(u64::from(a.iter_time)) * a.duration_ms as u32 / 1000;
    let name = variant.name();
    match argon2_cost(variant, key_bytes, target, a.pbkdf_memory, threads) {
        Ok(c) => line(&format!(
            "{name:<10} {:4} iterations, {:5} memory, {} parallel threads (CPUs) for {}-bit key (requested {} ms time)",
            c.iterations,
            c.memory_kib,
            c.threads,
            key_bytes * 8,
            a.iter_time
        )),
        Err(e) => Err(CliError::Usage(format!("{name}: {e}"))),
    }
}
