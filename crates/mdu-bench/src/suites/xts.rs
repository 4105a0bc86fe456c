//! XTS-AES: mdu batched against mdu one unit at a time, the `xts-mode`
//! crate, OpenSSL's EVP interface and the AES-ECB bound.

use mdu_bench::bound::AesBound;
use mdu_bench::registry::xts as registry;
use mdu_xts::{Backend, Direction};

use super::{Ctx, Suite, measure_group, per_cycle_cell, recent_openssl_note};
use crate::report::{Table, Unit};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "xts",
        run,
        backends: || {
            vec![
                (
                    "XTS-AES backend".to_string(),
                    format!(
                        "{:?} (available: {:?})",
                        Backend::detect(),
                        Backend::available()
                    ),
                ),
                (
                    "AES bound".to_string(),
                    AesBound::detect().label().to_string(),
                ),
            ]
        },
    }
}

/// One table: a key size and a direction over unit sizes.
fn table(ctx: &Ctx, key_len: usize, dir: Direction) -> Result<Table, String> {
    let group = registry::requests(key_len, dir);
    let (id, best, bits, verb) = (
        group.name.clone(),
        Backend::detect(),
        key_len * 4,
        mdu_bench::registry::verb(dir),
    );
    Ok(Table {
        id,
        title: format!("XTS-AES-{bits} {verb}, 1 MiB requests"),
        unit: Unit::Throughput,
        x_label: Some("data-unit size (bytes)".to_string()),
        notes: vec![
            format!(
                "mdu backend: {best:?}. OpenSSL: one EVP context, IV re-set per unit, out of \
                 place; \"one 1 MiB message\" is the same context on the whole request as one \
                 data unit (a different, easier workload: its best case). xts-mode: \
                 `encrypt_sector` per unit. The bound is AES-{bits}-ECB over the same bytes with \
                 the widest AES instructions of the CPU and no tweak work."
            ),
            format!("System OpenSSL: {}.", openssl::version::version()),
            recent_openssl_note(),
        ],
        cases: measure_group(ctx, group)?,
    })
}

/// Every backend on the same workload: what the dispatch chooses between.
fn backends(ctx: &Ctx) -> Result<Table, String> {
    let group = registry::backends();
    Ok(Table {
        id: group.name.clone(),
        title: "XTS-AES-256 encrypt by backend, 1 MiB of 4096-byte units".to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes: vec!["Ratios are against the first (best) backend.".to_string()],
        cases: measure_group(ctx, group)?,
    })
}

/// Every SIMD backend, forced, against the AES bound of its own vector
/// width: what each width achieves of what its AES instructions allow, in
/// bytes per cycle at the clock measured in the same run.
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
        let mut notes = Vec::new();
        let mut per_cycle_cells = Vec::new();
        let mut long_cells = Vec::new();
        #[allow(unused_mut)] // filled only when the recent OpenSSL is built
        let mut openssl_cells: Vec<String> = Vec::new();
        for c in &cases {
            per_cycle_cells.extend(per_cycle_cell(ctx, c));
            // The batched rate over the rate of the row `name` (medians are
            // times).
            let over = |name: &str| {
                let long = c.results.iter().find(|s| s.name == name)?;
                Some(format!(
                    "{} {:.2}",
                    c.name,
                    long.median() / c.results[0].median()
                ))
            };
            long_cells.extend(over(&registry::long_row(b)));
            #[cfg(mdu_openssl_peer)]
            openssl_cells.extend(over(&registry::recent_long_row()));
        }
        notes.push(format!(
            "Units ÷ one long message (the batched rate over the rate of one 1 MiB message \
             on the same backend; the goal is ≥ 0.95 at 512 bytes and ≥ 0.98 at 4 KiB): {}.",
            long_cells.join("; ")
        ));
        if !openssl_cells.is_empty() {
            notes.push(format!(
                "Units ÷ the recent OpenSSL's one long message on the same vector width (the \
                 goal is ≥ 1): {}.",
                openssl_cells.join("; ")
            ));
        }
        if let Some(ghz) = ctx.clock_ghz {
            notes.push(format!(
                "Bytes per cycle at {ghz:.2} GHz (batched / bound): {}.",
                per_cycle_cells.join("; ")
            ));
        }
        let width = own.map_or("its own width", |(_, w)| w);
        notes.insert(
            0,
            format!(
                "{b:?} forced. The bound is AES-ECB with the same key size on {width} \
                 registers, eight vectors in flight, over the same bytes: the AES \
                 instruction throughput of that width. Decryption is compared with the \
                 encryption bound (the rounds cost the same)."
            ),
        );
        tables.push(Table {
            id,
            title: format!("XTS-AES, backend {b:?} against the AES bound of its width"),
            unit: Unit::Throughput,
            x_label: None,
            notes,
            cases,
        });
    }
    Ok(tables)
}

/// The batched API must not slow down the common single-unit request.
fn single_unit(ctx: &Ctx) -> Result<Table, String> {
    let group = registry::single_unit();
    Ok(Table {
        id: group.name.clone(),
        title: "XTS-AES-256: one-unit request through DataUnits vs the direct call".to_string(),
        unit: Unit::Latency,
        x_label: None,
        notes: vec!["×1.00 means no overhead from the batched API.".to_string()],
        cases: measure_group(ctx, group)?,
    })
}

/// `par_encrypt` on 1, 2, 4, ... threads up to every core: one case per
/// thread count, so the throughput chart draws the scaling as a line.
fn parallel(ctx: &Ctx) -> Result<Table, String> {
    let len = if ctx.full { 256 << 20 } else { 64 << 20 };
    let group = registry::parallel(len, ctx.threads);
    let id = group.name.clone();
    let cases = measure_group(ctx, group)?;
    let one = cases[0].results[0].median();
    let scaling: Vec<String> = cases
        .iter()
        .zip(registry::thread_counts(ctx.threads))
        .filter(|&(_, n)| n > 1)
        .map(|(c, n)| format!("{n} threads {:.2}×", one / c.results[0].median()))
        .collect();
    Ok(Table {
        id,
        title: format!(
            "XTS-AES-256 encrypt across threads, {} MiB of 4096-byte units",
            len >> 20
        ),
        unit: Unit::Throughput,
        x_label: Some("threads".to_string()),
        notes: vec![if scaling.is_empty() {
            "One logical core: nothing to scale to.".to_string()
        } else {
            format!(
                "Against one thread: {} ({} logical cores).",
                scaling.join(", "),
                ctx.threads
            )
        }],
        cases,
    })
}

/// XTS over the other block ciphers of dm-crypt (`BlockXts`): batched
/// requests go through the auto-splitter, one unit per call, so batching
/// buys them nothing; the table shows that, and the xts-mode crate over
/// the same RustCrypto cipher beside them.
fn block_ciphers(ctx: &Ctx) -> Result<Table, String> {
    let group = registry::block_ciphers();
    Ok(Table {
        id: group.name.clone(),
        title: "XTS over other block ciphers (BlockXts, portable), encrypt, 1 MiB requests"
            .to_string(),
        unit: Unit::Throughput,
        x_label: None,
        notes: vec![
            "A generic block cipher has no multi-unit kernel: a batched request is split into \
             one call per unit, so batched and one-at-a-time are the same code, and both run \
             the portable XTS of mdu-xts over the RustCrypto cipher."
                .to_string(),
        ],
        cases: measure_group(ctx, group)?,
    })
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    Ok(vec![
        table(ctx, 64, Direction::Encrypt)?,
        table(ctx, 64, Direction::Decrypt)?,
        table(ctx, 32, Direction::Encrypt)?,
        table(ctx, 32, Direction::Decrypt)?,
        backends(ctx)?,
    ]
    .into_iter()
    .chain(widths(ctx)?)
    .chain([single_unit(ctx)?, block_ciphers(ctx)?, parallel(ctx)?])
    .collect())
}
