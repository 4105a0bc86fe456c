//! fscrypt: a file's contents decrypted through `mdu-fscrypt` per policy,
//! against the cipher crate's own batched rate on the same units and the
//! AES bound; file names encrypted and decrypted per names mode; no-key
//! names built and encoded.

use mdu_bench::registry::fscrypt::{self as registry, FIRST_BLOCK};

use super::{Ctx, Suite, measure_group, per_cycle_cell};
use crate::report::{Table, Unit};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "fscrypt",
        run,
        backends: || {
            vec![(
                "fscrypt contents (AES-256-XTS)".to_string(),
                format!("{:?}", mdu_xts::Backend::detect()),
            )]
        },
    }
}

/// Decryption of 1 MiB of one file per policy: `mdu-fscrypt` (key
/// derivation outside the loop, IV runs, the batched cipher call), the
/// XTS cipher alone on the same units where the policy's IVs are a plain
/// counter, and the AES bound.
fn contents(ctx: &Ctx) -> Result<Table, String> {
    let group = registry::contents();
    let id = group.name.clone();
    let cases = measure_group(ctx, group)?;
    let mut notes = vec![format!(
        "1 MiB of one file (256 blocks of 4 KiB) from logical block {FIRST_BLOCK}, decrypted \
         in place (the bytes were checked once before timing; the timed calls decrypt \
         whatever the last one left, the same work). mdu-fscrypt: ContentsCipher::decrypt_blocks with the key derived once. \"mdu-xts \
         batched, same units\": the XTS cipher alone on the same units and IVs (per-file-key \
         policies), the rate the contents path should reach. The bound is AES-256-ECB over \
         the same bytes with the widest AES instructions of the CPU (Adiantum is \
         XChaCha12 and NH, with one AES block per unit: the AES bound is not its bound)."
    )];
    if ctx.clock_ghz.is_some() {
        let cells: Vec<String> = cases
            .iter()
            .filter_map(|c| per_cycle_cell(ctx, c))
            .collect();
        notes.push(format!(
            "Bytes per cycle (first row / bound where there is one): {}.",
            cells.join("; ")
        ));
    }
    Ok(Table {
        id,
        title: "fscrypt contents decryption, 1 MiB of one file, by policy".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes,
        cases,
    })
}

/// One name through each names mode, both directions, and the no-key name
/// of a long ciphertext name.
fn names(ctx: &Ctx) -> Result<Table, String> {
    let group = registry::names();
    Ok(Table {
        id: group.name.clone(),
        title: "fscrypt names: one name per call".to_string(),
        unit: Unit::Latency,
        x_label: None,
        notes: vec![
            "Per name, with the directory's key derived once (v2 policy, padding 16). \
             encrypt_name pads and encrypts; decrypt_name decrypts and strips the padding. \
             The no-key row builds the name `ls` shows without the key (half-MD4 directory \
             hash, SHA-256 of the ciphertext past 149 bytes, base64url) and, as a lookup \
             does, decodes one and matches it against the stored name."
                .to_string(),
        ],
        cases: measure_group(ctx, group)?,
    })
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    Ok(vec![contents(ctx)?, names(ctx)?])
}
