//! Correction of a whole dm-verity image: every round of its FEC input
//! read from the data, hash and FEC devices by position, decoded, and the
//! changed blocks collected.

use mdu_core::io::IoError;

use super::ReadAt;
use super::decode::correct_round;
use super::device::Corrections;
use super::layout::{Area, VerityLayout};
use crate::Error;

/// What [`correct`] found: the blocks it corrected, and the rounds beyond
/// repair (whose blocks it left as they were).
///
/// ```
/// use mdu_verity::dmverity::fec::Decoded;
/// let d = Decoded::default();
/// assert!(d.corrections.is_empty() && d.uncorrectable.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decoded {
    /// The corrected blocks.
    pub corrections: Corrections,
    /// The rounds beyond repair, in order, each with the first byte
    /// offset within its blocks whose codeword failed.
    pub uncorrectable: Vec<(u64, usize)>,
}

/// Decodes every round of the FEC input of `layout`, reading one round at
/// a time from `data`, `hash` and `fec` (all untrusted): the blocks that
/// change, and the rounds that cannot be corrected. A data or hash device
/// that ends early counts its missing blocks as erasures (known-bad blocks
/// of zeros); a FEC device that ends before a round's parity is
/// [`Error::FecParityShort`]; other read errors are [`Error::FecIo`],
/// naming the device. Nothing is written.
///
/// ```
/// use mdu_verity::dmverity::{self, fec::{self, Area, FecParams, Layout}};
///
/// let p = dmverity::Params { superblock: false, ..Default::default() };
/// let data: Vec<u8> = (0..8 * 4096).map(|i| (i % 251) as u8).collect();
/// let mut hash = std::io::Cursor::new(Vec::new());
/// dmverity::format(&data[..], &mut hash, &p)?;
/// let hash = hash.into_inner();
/// let layout = Layout::for_verity(&p, 8, hash.len() as u64, &FecParams::default())?;
/// let mut input = data.clone();
/// input.extend_from_slice(&hash);
/// let parity = fec::encode_bytes(&input, 4096, 2)?;
///
/// let mut bad = data.clone();
/// bad[5 * 4096 + 10] ^= 0xff;
/// let d = fec::correct(&layout, &bad, &hash, &parity)?;
/// assert!(d.uncorrectable.is_empty());
/// let fixed: Vec<(u64, &[u8])> = d.corrections.blocks(Area::Data).collect();
/// assert_eq!(fixed, [(5 * 4096, &data[5 * 4096..6 * 4096])]);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub fn correct<D, H, F>(
    layout: &VerityLayout,
    data: &D,
    hash: &H,
    fec: &F,
) -> Result<Decoded, Error>
where
    D: ReadAt + ?Sized,
    H: ReadAt + ?Sized,
    F: ReadAt + ?Sized,
{
    let l = layout.layout();
    let bs = u64::from(l.block_size());
    let round_parity = layout.round_parity_len();
    let mut parity = vec![0u8; round_parity as usize];
    let mut out = Decoded {
        corrections: Corrections {
            block_size: bs,
            ..Corrections::default()
        },
        uncorrectable: Vec::new(),
    };
    for round in 0..l.rounds() {
        let ks: Vec<u64> = l.round_blocks(round).collect();
        let mut buf = vec![0u8; ks.len() * bs as usize];
        let mut erased = Vec::new();
        let mut place = Vec::with_capacity(ks.len());
        for (i, (&k, slot)) in ks.iter().zip(buf.chunks_exact_mut(bs as usize)).enumerate() {
            let (area, at) = layout.block(k).ok_or_else(|| Error::FecInput {
                reason: format!("block {k} is past the {} blocks of the input", l.blocks()),
            })?;
            let (dev, device): (&dyn ReadAt, _) = match area {
                Area::Data => (&data, "data"),
                Area::Hash => (&hash, "hash"),
            };
            match dev.read_exact_at(slot, at) {
                Ok(()) => {}
                Err(IoError::OutOfRange { .. }) => {
                    slot.fill(0);
                    erased.push(i);
                }
                Err(error) => {
                    return Err(Error::FecIo {
                        device,
                        offset: at,
                        error: error.into(),
                    });
                }
            }
            place.push((area, at));
        }
        // Checked by `VerityLayout`: every round has a parity offset.
        let at = layout.parity_offset(round).unwrap_or(u64::MAX);
        fec.read_exact_at(&mut parity, at)
            .map_err(|error| match error {
                IoError::OutOfRange { .. } => Error::FecParityShort {
                    round,
                    rounds: l.rounds(),
                    offset: at,
                    end: at.saturating_add(round_parity),
                },
                error => Error::FecIo {
                    device: "FEC",
                    offset: at,
                    error: error.into(),
                },
            })?;
        match correct_round(l, round, &mut buf, &parity, &erased) {
            Ok(fix) => {
                for &i in &fix.blocks {
                    let (area, at) = place[i];
                    let block = buf[i * bs as usize..(i + 1) * bs as usize].to_vec();
                    let map = match area {
                        Area::Data => &mut out.corrections.data,
                        Area::Hash => &mut out.corrections.hash,
                    };
                    map.insert(at, block);
                }
                out.corrections.bytes += fix.bytes;
            }
            Err(Error::FecUncorrectable { round, byte }) => out.uncorrectable.push((round, byte)),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}
