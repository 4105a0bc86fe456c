//! Merkle trees over 64 MiB in memory: the fs-verity file digest, the
//! dm-verity hash area and its verification, on one thread and on every
//! thread, against the same trees built (and checked) with the `sha2`
//! crate one block at a time; dm-verity FEC parity against the byte-serial
//! encoder and Intel ISA-L's `ec_encode_data` (when `libisal` is there).

use mdu_bench::isal;
#[cfg(mdu_isal)]
use mdu_bench::registry::verity::ISAL_RANGE;

use super::{Ctx, Suite, measure_group};
use crate::report::{Table, Unit};

pub(crate) fn suite() -> Suite {
    Suite {
        name: "verity",
        run,
        backends: Vec::new,
    }
}

fn run(ctx: &Ctx) -> Result<Vec<Table>, String> {
    let len: usize = if ctx.full { 256 << 20 } else { 64 << 20 };
    let mb = len >> 20;
    let [trees, fec] = mdu_bench::registry::verity::groups(len, ctx.threads);
    Ok(vec![
        Table {
            id: trees.name.clone(),
            title: format!("Merkle trees over {mb} MiB in memory (SHA-256, 4 KiB blocks)"),
            unit: Unit::Throughput,
            x_label: None,
            notes: vec![
                "dm-verity: 32-byte salt, no superblock, hash area written to memory and \
             verified from there. The sha2 rows build (and check) the same tree with the \
             generic backend (the sha2 crate's block function), one block at a time."
                    .to_string(),
            ],
            cases: measure_group(ctx, trees)?,
        },
        Table {
            id: fec.name.clone(),
            title: format!(
                "dm-verity FEC parity over {mb} MiB in memory (RS(255, 255 - roots), 4 KiB blocks)"
            ),
            unit: Unit::Throughput,
            x_label: Some("roots".to_string()),
            notes: vec![
                "Throughput of the FEC input (data area). mdu steps a column of 32 or 64 codewords \
                 through 16 blocks at a time in vector registers (GFNI on zmm or ymm, or AVX2 \
                 nibble lookups); its parity is checked against the byte-serial encoder at every \
                 root count before timing. The byte-serial row, timed at roots 2 only, is how \
                 veritysetup computes the parity."
                    .to_string(),
                isal_note(),
            ],
            cases: measure_group(ctx, fec)?,
        },
    ])
}

/// What the ISA-L rows are, or why there are none.
fn isal_note() -> String {
    #[cfg(mdu_isal)]
    {
        format!(
            "ISA-L {} `ec_encode_data` (its {} kernel, by its own CPUID dispatch), as \
             erasure-code libraries use it: RS(255, k) parity is a linear map, so the \
             roots × k matrix whose column i is mdu's parity of the unit message e_i goes \
             to `ec_init_tables` once, outside the timing. Its k sources are the input in \
             place: source i is blocks i·R to (i+1)·R - 1 (R rounds), so that byte c of every \
             source belongs to codeword c (round c div bs, byte c mod bs); only the source \
             straddling the end is copied, padded with zeros, and the sources past it are one \
             zero buffer. ISA-L is called per {ISAL_RANGE} codewords (spread over the pool in \
             the all-threads row) and its roots output rows are transposed into dm-verity's \
             order, inside the timing as mdu's own reordering is. Its parity is checked \
             byte for byte against mdu's at every root count, on 1 and on all threads, \
             before timing.",
            isal::VERSION,
            isal::kernel(),
        )
    }
    #[cfg(not(mdu_isal))]
    {
        format!(
            "ISA-L `ec_encode_data` peer skipped: {}.",
            isal::skipped().unwrap_or("not built")
        )
    }
}
