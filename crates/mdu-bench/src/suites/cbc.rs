//! AES-CBC: mdu batched (many units' chains side by side) against mdu one
//! unit at a time, OpenSSL's EVP interface and the AES-ECB bound of each
//! width; dm-crypt IV modes through mdu-dmcrypt; and batches of units with
//! unrelated IVs for CBC and XTS.

use mdu_bench::registry::cbc::{self as registry, chains};
use mdu_bench::registry::{key, verb};
use mdu_cbc::{AesCbc256, Backend, Direction};
use mdu_xts::XtsAes256;

use super::{Ctx, Suite, measure_group, per_cycle_cell};
use crate::report::{Table, Unit};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "cbc",
        run,
        backends: || {
            vec![(
                "AES-CBC backend".to_string(),
                format!(
                    "{:?} (available: {:?})",
                    Backend::detect(),
                    Backend::available()
                ),
            )]
        },
    }
}

/// AES-256-CBC over unit sizes in one direction, on the best backend.
fn table(ctx: &Ctx, dir: Direction) -> Result<Table, String> {
    let best = Backend::detect();
    let group = registry::requests(dir);
    Ok(Table {
        id: group.name.clone(),
        title: format!("AES-256-CBC {}, 1 MiB requests", verb(dir)),
        unit: Unit::Throughput,
        x_label: Some("data-unit size (bytes)".to_string()),
        notes: vec![
            format!(
                "mdu backend: {best:?}. \"mdu one unit at a time\" is mdu-cbc called once per \
                 unit (one CBC chain at a time), listed as a peer so that the ratio shows what \
                 batching gains. OpenSSL: one EVP context, IV re-set per unit, no padding, out \
                 of place. The bound is AES-256-ECB over the same bytes with the widest AES \
                 instructions of the CPU. Decryption is compared with the encryption bound \
                 (the rounds cost the same)."
            ),
            format!("System OpenSSL: {}.", openssl::version::version()),
            super::recent_openssl_note(),
        ],
        cases: measure_group(ctx, group)?,
    })
}

/// Every SIMD backend, forced, against the AES bound of its own vector
/// width, in bytes per cycle at the clock measured in the same run.
fn widths(ctx: &Ctx) -> Result<Vec<Table>, String> {
    let mut tables = Vec::new();
    for &b in Backend::available() {
        if b == Backend::Generic {
            continue;
        }
        let own = registry::own_bound(b);
        let group = registry::width(b);
        let id = group.name.clone();
        let cases = measure_group(ctx, group)?;
        let mut per_cycle_cells = Vec::new();
        let mut ceiling_cells = Vec::new();
        for c in &cases {
            per_cycle_cells.extend(per_cycle_cell(ctx, c));
            if let Some(l) = c
                .results
                .iter()
                .find(|s| s.name == registry::ceiling_row(b))
            {
                // Medians are times: the ceiling's over the units'.
                ceiling_cells.push(format!(
                    "{} {:.2}",
                    c.name,
                    l.median() / c.results[0].median()
                ));
            }
        }
        let width = own.map_or("its own width", |(_, w)| w);
        let mut notes = vec![format!(
            "{b:?} forced. The bound is AES-ECB with the same key size on {width} registers, \
             eight vectors in flight, over the same bytes: the AES instruction throughput \
             of that width. Encryption runs {} units' chains side by side; decryption runs \
             a unit's blocks in parallel. Decryption is compared with the encryption bound.",
            chains(b)
        )];
        notes.push(format!(
            "Encryption's units ÷ its ceiling ({} chains of one long message each: the \
             request cut into {} units; the goal is ≥ 0.95 at 512 bytes and ≥ 0.98 at \
             4 KiB): {}.",
            chains(b),
            chains(b),
            ceiling_cells.join("; ")
        ));
        if let Some(ghz) = ctx.clock_ghz {
            notes.push(format!(
                "Bytes per cycle at {ghz:.2} GHz (batched / bound): {}.",
                per_cycle_cells.join("; ")
            ));
        }
        tables.push(Table {
            id,
            title: format!("AES-CBC, backend {b:?} against the AES bound of its width"),
            unit: Unit::Throughput,
            x_label: None,
            notes,
            cases,
        });
    }
    Ok(tables)
}

/// dm-crypt through mdu-dmcrypt: plain64 (one batched request per affine
/// run) against essiv:sha256 (explicit-IV batches of 64 sectors, their IVs
/// in one ECB pass), and essiv one sector at a time.
fn dmcrypt(ctx: &Ctx) -> Result<Table, String> {
    let group = registry::dmcrypt();
    Ok(Table {
        id: group.name.clone(),
        title: "dm-crypt IV modes through mdu-dmcrypt, AES-256".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes: vec![
            "IvGenerator::encrypt over 1 MiB. plain64 is one batched request with \
             consecutive IVs; essiv:sha256 goes in explicit-IV batches of 64 sectors whose \
             IVs are computed in one AES-256-ECB pass. \"One sector at a time\" computes \
             each IV and encrypts each sector with its own call. The ×N of the plain64 \
             batched column is how much faster plain64 is than essiv (the issue's target: \
             within 10%)."
                .to_string(),
        ],
        cases: measure_group(ctx, group)?,
    })
}

/// Units with unrelated IVs (a flat list, as a cache writing back
/// scattered sectors or an offload descriptor batch): one explicit-IV call
/// against one call per unit.
fn explicit_ivs(ctx: &Ctx) -> Result<Table, String> {
    let group = registry::explicit_ivs();
    let cbc = AesCbc256::new(&key(32)).map_err(|e| e.to_string())?;
    let xts = XtsAes256::new(&key(64)).map_err(|e| e.to_string())?;
    Ok(Table {
        id: group.name.clone(),
        title: "Units with unrelated IVs: one explicit-IV batch vs one call per unit".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes: vec![format!(
            "1 MiB of 512-byte units, each with an IV unrelated to its neighbours' (a \
             multiplicative hash of its index). The batch is \
             DataUnitCipher::crypt_units_with_ivs on the best backend (CBC: {:?}, XTS: {:?}).",
            cbc.backend(),
            xts.backend()
        )],
        cases: measure_group(ctx, group)?,
    })
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    Ok(vec![
        table(ctx, Direction::Encrypt)?,
        table(ctx, Direction::Decrypt)?,
    ]
    .into_iter()
    .chain(widths(ctx)?)
    .chain([dmcrypt(ctx)?, explicit_ivs(ctx)?])
    .collect())
}
