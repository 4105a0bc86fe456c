//! The one read -> crypt -> write pipeline of `mdu crypt` and `mdu luks`:
//! `mdu_io::pipeline` with a [`SectorCipher`] as its transform (split
//! across a rayon pool) and a progress bar on a terminal.
//!
//! The bytes are those of the cipher run over the whole input at once:
//! the buffer at byte `offset` of the data starts at sector
//! `offset / sector_size`.

use mdu_dmcrypt::{Direction, SectorCipher};
pub(crate) use mdu_io::pipeline::{Sink, Source};

use crate::error::CliError;
use crate::{process, progress};

/// Streams the input through `cipher` (its first sector is sector 0) into
/// the output, with `threads` crypt threads (default: every core). Returns
/// the number of bytes written; the caller commits the output.
pub(crate) fn run(
    dir: Direction,
    cipher: &SectorCipher,
    src: Source<'_>,
    sink: Sink<'_>,
    threads: Option<usize>,
) -> Result<u64, CliError> {
    let pool = process::pool(threads)?;
    let parallel = pool.current_num_threads() > 1;
    let ss = u64::from(cipher.sector_size());
    let pb = progress::progress(src.len.unwrap_or(0), dir.name());
    let inc = |n: u64| pb.inc(n);
    let result = mdu_io::pipeline::Pipeline::new(ss as usize)
        .threads(pool.current_num_threads())
        .progress(&inc)
        .run(src, sink, |piece: &mut [u8], offset: u64| {
            let sector = offset / ss;
            if parallel {
                pool.install(|| cipher.par_crypt(dir, sector, piece))
            } else {
                cipher.crypt(dir, sector, piece)
            }
        });
    pb.finish_and_clear();
    Ok(result?)
}
