//! Option values: the weak-key opt-in, hex, sizes and thread counts.

use crate::error::CliError;

/// `--allow-weak-key`, the one opt-in of `mdu crypt` and `mdu luks` to the
/// weak-key policy of `mdu_dmcrypt::WeakKeys`.
#[derive(clap::Args, Debug, Clone, Copy)]
pub(crate) struct WeakKeyArg {
    /// Accept an aes-xts key whose two halves (the data key and the tweak
    /// key) are equal.
    ///
    /// Such a key is weak: XTS is only secure with two independent keys,
    /// and the kernel refuses equal halves wherever weak keys are forbidden
    /// (FIPS mode). Without this option mdu refuses it, whether it comes
    /// from a key file or from a LUKS2 image. aes-cbc has no weak keys.
    #[arg(long)]
    pub(crate) allow_weak_key: bool,
}

impl WeakKeyArg {
    /// The policy the option asks for.
    pub(crate) fn policy(self) -> mdu_dmcrypt::WeakKeys {
        mdu_dmcrypt::WeakKeys::allow_if(self.allow_weak_key)
    }
}

/// Parse a hex string of any even length (upper or lower case).
pub(crate) fn parse_hex(what: &str, s: &str) -> Result<Vec<u8>, CliError> {
    let bad = || {
        CliError::Usage(format!(
            "{what} {s:?} is not a valid hex string: it must be an even number of hex digits"
        ))
    };
    if !s.len().is_multiple_of(2) {
        return Err(bad());
    }
    s.as_bytes()
        .chunks(2)
        .map(|p| {
            let hi = (p[0] as char).to_digit(16);
            let lo = (p[1] as char).to_digit(16);
            match (hi, lo) {
                (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
                _ => Err(bad()),
            }
        })
        .collect()
}

/// Lowercase hex.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The most threads `--threads` starts: far above any core count, low enough
/// that a typo cannot exhaust the machine.
pub(crate) const MAX_THREADS: usize = 1024;

/// `--threads N`: 0 (every core) to [`MAX_THREADS`], checked while the
/// arguments are parsed, before anything is read or changed.
pub(crate) fn threads_arg(s: &str) -> Result<usize, String> {
    let n: usize = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of threads"))?;
    if n > MAX_THREADS {
        return Err(format!("{n} threads: at most {MAX_THREADS}"));
    }
    Ok(n)
}

/// A size in bytes: digits, optionally followed by K, M or G (powers of
/// 1024, either case, or KiB, MiB, GiB).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a size (bytes, or with K, M or G)"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use K, M or G)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

#[cfg(test)]
mod size_tests {
    use super::parse_size;

    #[test]
    fn sizes_with_and_without_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("32M"), Ok(32 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("8KiB"), Ok(8 << 10));
        assert!(parse_size("").is_err());
        assert!(parse_size("12T").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
        assert!(parse_size("17179869184G").is_err());
    }
}
