//! base64url without padding (fscrypt's encoding): every mdu backend against
//! the `base64` crate (scalar and SIMD engines), `base64-simd`,
//! `base64-turbo`, the kernel's two C encoders (the 2021 bit-stream one and the 3-byte block one that
//! replaced it), and memcpy of the same bytes as the ceiling.

use mdu_base64::Backend;
use mdu_bench::kernel_c;
use mdu_bench::registry::base64::{self as registry, BULK, SMALL};

use super::{Ctx, Suite, measure_group};
use crate::measure::Kind;
use crate::report::{CaseResult, Table, Unit};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "base64",
        run,
        backends: || {
            vec![(
                "base64 backend".to_string(),
                format!(
                    "{:?} (available: {:?})",
                    Backend::detect(),
                    Backend::available()
                ),
            )]
        },
    }
}

/// The `base64-turbo` the report measures (its Cargo metadata, kept equal
/// to Cargo.lock by a test).
const TURBO_VERSION: &str = "0.5.0";

/// Which mdu backends are forced, and what that means for the AVX2 one.
fn forced_note() -> String {
    let detected = Backend::detect();
    let mut note = format!(
        "Every mdu backend this CPU runs is timed, pinned with \
         `Engine::with_backend`; the one it detects is {}.",
        detected.name()
    );
    if detected != Backend::Avx2 && Backend::Avx2.is_available() {
        note.push_str(
            " So the `mdu avx2` column is the AVX2 backend forced on a CPU with \
             wider vectors; an AVX2-only CPU (Zen 3, Haswell to Alder Lake) selects \
             it by itself.",
        );
    }
    note
}

/// The kernel base64-turbo runs for `n` raw bytes in one direction. Its API
/// does not say; this is its dispatch rule (CPUID once, then the length).
fn turbo_kernel(n: usize, encode: bool) -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        // Encode goes by input bytes, decode by input characters.
        let len = if encode { n } else { kernel_c::encoded_len(n) };
        let (vbmi_min, avx2_min) = if encode { (16, 48) } else { (28, 36) };
        if has!("avx512f") && has!("avx512bw") && has!("avx512vbmi") {
            if len >= vbmi_min {
                return "AVX-512 VBMI";
            }
        } else if has!("avx2") && len >= avx2_min {
            return "AVX2";
        }
        "scalar"
    }
    #[cfg(target_arch = "aarch64")]
    {
        let len = if encode { n } else { kernel_c::encoded_len(n) };
        if len >= if encode { 16 } else { 20 } {
            "NEON"
        } else {
            "scalar"
        }
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (n, encode);
        "scalar"
    }
}

/// What base64-turbo is and which of its kernels ran at `sizes`.
fn turbo_note(sizes: &[usize], encode: bool) -> String {
    let mut kernels: Vec<(&str, Vec<String>)> = Vec::new();
    for &n in sizes {
        let k = turbo_kernel(n, encode);
        match kernels.iter_mut().find(|(name, _)| *name == k) {
            Some((_, at)) => at.push(n.to_string()),
            None => kernels.push((k, vec![n.to_string()])),
        }
    }
    let ran: Vec<String> = kernels
        .iter()
        .map(|(k, at)| format!("{k} at {} bytes", at.join(", ")))
        .collect();
    format!(
        "base64-turbo {TURBO_VERSION}: its `URL_SAFE_NO_PAD` engine, the same encoding \
         (URL-safe alphabet, no padding; its decoder also refuses padding and non-zero \
         trailing bits). Its API does not report the kernel it picks; by its dispatch rule \
         (AVX-512 VBMI where the CPU has AVX-512 F, BW and VBMI, else AVX2, else scalar; \
         inputs under 16 bytes (VBMI) or 48 bytes (AVX2) to encode, or under 28 or 36 \
         characters to decode, take its scalar kernel) it ran {} here.",
        ran.join("; ")
    )
}

/// Bytes of raw data per cycle of every mdu backend and of the SIMD peers,
/// per bulk case, at the clock measured in this run.
fn per_cycle_note(cases: &[CaseResult], ghz: f64) -> String {
    let cells: Vec<String> = cases
        .iter()
        .map(|c| {
            let each: Vec<String> = c
                .results
                .iter()
                .filter(|s| {
                    s.kind == Kind::Mdu
                        || matches!(
                            s.name.as_str(),
                            "base64-simd" | "base64 (Simd)" | "base64-turbo"
                        )
                })
                .map(|s| format!("{} {:.2}", s.name, c.bytes as f64 / s.median() / ghz))
                .collect();
            format!("{}: {}", c.name, each.join(", "))
        })
        .collect();
    format!(
        "Bytes of raw data per cycle at {ghz:.2} GHz (the clock measured in this run): {}.",
        cells.join("; ")
    )
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    let note = "Sizes count raw bytes (decoded side) in both directions; 189 bytes is the \
                largest fscrypt no-key name and encodes to 252 characters; 64 KiB fits in L2. \
                memcpy copies the raw bytes."
        .to_string();
    let kernel_note = "kernel C: the fscrypt base64url encoders in C (-O2): the 2021-2025 \
                       bit-accumulator loop and the 3-byte block loop of the generic \
                       rework."
        .to_string();
    let mut tables = Vec::new();
    for (dir, is_enc) in [("encode", true), ("decode", false)] {
        for (sizes, unit, label) in [
            (&SMALL[..], Unit::Latency, "fscrypt name sizes"),
            (&BULK[..], Unit::Throughput, "bulk"),
        ] {
            let group = registry::sizes(is_enc, sizes);
            let id = group.name.clone();
            let cases = measure_group(ctx, group)?;
            let mut notes = vec![note.clone()];
            if is_enc {
                notes.push(kernel_note.clone());
            }
            notes.push(turbo_note(sizes, is_enc));
            notes.push(forced_note());
            if unit == Unit::Throughput
                && let Some(ghz) = ctx.clock_ghz
            {
                notes.push(per_cycle_note(&cases, ghz));
            }
            tables.push(Table {
                id,
                title: format!("base64url (no padding) {dir}, {label}"),
                unit,
                x_label: Some("input size (bytes)".to_string()),
                notes,
                cases,
            });
        }
    }
    for (dir, encode) in [("encode", true), ("decode", false)] {
        let group = registry::by_alphabet(encode);
        tables.push(Table {
            id: group.name.clone(),
            title: format!("base64 {dir} of 64 KiB, by alphabet (no padding)"),
            unit: Unit::Throughput,
            x_label: None,
            notes: vec![
                "Every alphabet's lookup tables are built once, when the `Alphabet` is \
                 made. AVX2 encodes in one lookup where values 0..=25 and 26..=51 are runs \
                 (the RFC 4648 alphabets), in four otherwise; it decodes in three lookups \
                 where each row of 16 bytes holds symbols of at most two offsets (also \
                 crypt(3)), in six otherwise. AVX-512 VBMI costs the same for every \
                 alphabet."
                    .to_string(),
                forced_note(),
            ],
            cases: measure_group(ctx, group)?,
        });
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    /// The version the report prints is the one Cargo.lock resolves.
    #[test]
    fn turbo_version_is_the_locked_one() {
        let lock = include_str!("../../../../Cargo.lock");
        let entry = lock
            .split("[[package]]")
            .find(|p| p.contains("name = \"base64-turbo\"\n"))
            .expect("base64-turbo in Cargo.lock");
        assert!(
            entry.contains(&format!("version = \"{}\"\n", super::TURBO_VERSION)),
            "TURBO_VERSION is {}, Cargo.lock has:{entry}",
            super::TURBO_VERSION
        );
    }
}
