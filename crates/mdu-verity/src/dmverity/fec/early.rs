//! The parity of a new image fed while [`format()`](crate::dmverity::format())
//! hashes its data, so that the data is read once.

use std::sync::Mutex;

use super::layout::{FecParams, Layout, VerityLayout};
use super::parity::VerityEncoder;
use crate::dmverity::Params;

/// A [`VerityEncoder`] for the predicted layout of a new image
/// ([`Layout::for_new_verity`]), shared with the threads that hash the
/// data: each piece of the data device goes through [`take`](Self::take)
/// on its way to the hasher. A piece it cannot take (a part block before
/// the last data block) drops the encoder; [`into_encoder`](Self::into_encoder)
/// then gives `None`, as it does when the written image's layout is not
/// the predicted one, and the caller encodes from the devices instead.
///
/// ```
/// use std::cell::RefCell;
/// use mdu_verity::dmverity::{self, fec::{self, EarlyEncoder, FecParams, Layout}};
///
/// let p = dmverity::Params::default();
/// let data: Vec<u8> = (0..64 * 4096).map(|i| (i % 251) as u8).collect();
/// let early = EarlyEncoder::predict(&p, 64, &FecParams::default(), true).unwrap();
/// for piece in data.chunks(16 * 4096) {
///     early.take(piece); // as format reads it
/// }
/// let mut hash = std::io::Cursor::new(Vec::new());
/// let out = dmverity::format(&data[..], &mut hash, &p)?;
/// let hash = hash.into_inner();
/// let layout = Layout::for_verity(&p, 64, out.hash_device_size(), &FecParams::default())?;
/// let mut enc = early.into_encoder(&layout).unwrap();
/// assert_eq!(enc.data_blocks_taken(), 64);
/// enc.read_hash(&hash)?;
/// let parity = RefCell::new(Vec::new());
/// enc.write_to(&parity)?;
/// assert_eq!(parity.into_inner(), fec::encode_verity(&layout, &data, &hash)?);
/// # Ok::<(), mdu_verity::Error>(())
/// ```
pub struct EarlyEncoder(Mutex<Option<VerityEncoder>>);

impl EarlyEncoder {
    /// An encoder for the image of `data_blocks` blocks that
    /// [`format()`](crate::dmverity::format()) writes with `params`, when
    /// its FEC layout can be known before the tree is written: the parity
    /// shares the hash device (the protected area ends at the parity), or
    /// the hash device is new (`hash_device_is_new`: it ends with the
    /// tree). `None` otherwise, as bytes past the tree of an existing
    /// device are protected too, or when `params` and `fec` have no FEC
    /// layout.
    ///
    /// ```
    /// use mdu_verity::dmverity::{Params, fec::{EarlyEncoder, FecParams}};
    /// let f = FecParams::default();
    /// assert!(EarlyEncoder::predict(&Params::default(), 8, &f, true).is_some());
    /// assert!(EarlyEncoder::predict(&Params::default(), 8, &f, false).is_none());
    /// let shared = FecParams { offset: 1 << 20, in_hash_device: true, ..f };
    /// assert!(EarlyEncoder::predict(&Params::default(), 8, &shared, false).is_some());
    /// ```
    pub fn predict(
        params: &Params,
        data_blocks: u64,
        fec: &FecParams,
        hash_device_is_new: bool,
    ) -> Option<EarlyEncoder> {
        if !fec.in_hash_device && !hash_device_is_new {
            return None;
        }
        let layout = Layout::for_new_verity(params, data_blocks, fec).ok()?;
        let enc = VerityEncoder::new(layout).ok()?;
        Some(EarlyEncoder(Mutex::new(Some(enc))))
    }

    /// Takes the next piece of the data device, from where the last one
    /// ended ([`VerityEncoder::push_data`]); a piece it refuses drops the
    /// encoder.
    ///
    /// ```
    /// use mdu_verity::dmverity::{Params, fec::{EarlyEncoder, FecParams, Layout}};
    /// let p = Params::default();
    /// let early = EarlyEncoder::predict(&p, 8, &FecParams::default(), true).unwrap();
    /// early.take(&[0u8; 100]); // a part block: refused
    /// let layout = Layout::for_new_verity(&p, 8, &FecParams::default())?;
    /// assert!(early.into_encoder(&layout).is_none());
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn take(&self, piece: &[u8]) {
        if let Ok(mut slot) = self.0.lock()
            && let Some(enc) = slot.as_mut()
            && enc.push_data(piece).is_err()
        {
            *slot = None;
        }
    }

    /// The encoder with what it took, if it took every piece and its
    /// predicted layout is `layout`, the written image's.
    ///
    /// ```
    /// use mdu_verity::dmverity::{Params, fec::{EarlyEncoder, FecParams, Layout}};
    /// let p = Params::default();
    /// let early = EarlyEncoder::predict(&p, 8, &FecParams::default(), true).unwrap();
    /// // The hash device turned out longer than the tree.
    /// let layout = Layout::for_verity(&p, 8, 1 << 20, &FecParams::default())?;
    /// assert!(early.into_encoder(&layout).is_none());
    /// # Ok::<(), mdu_verity::Error>(())
    /// ```
    pub fn into_encoder(self, layout: &VerityLayout) -> Option<VerityEncoder> {
        let enc = self.0.into_inner().ok()??;
        (enc.layout() == layout).then_some(enc)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;
    use crate::dmverity::{self, fec};

    /// The parity an early encoder makes from pieces of any whole-block
    /// size, and the tail of a device longer than the data, is the parity
    /// of the image read from its devices.
    #[test]
    fn pieces_of_any_size_give_the_parity_of_the_devices() {
        let p = dmverity::Params {
            data_block_size: 512,
            hash_block_size: 512,
            data_blocks: Some(77),
            ..Default::default()
        };
        let data: Vec<u8> = (0..80 * 512).map(|i| (i * 31 % 251) as u8).collect();
        let fec_params = FecParams {
            roots: 5,
            ..FecParams::default()
        };
        let early = EarlyEncoder::predict(&p, 77, &fec_params, true).unwrap();
        for piece in [&data[..512], &data[512..3 * 1024], &data[3 * 1024..]] {
            early.take(piece);
        }
        let mut hash = Cursor::new(Vec::new());
        let out = dmverity::format(&data[..], &mut hash, &p).unwrap();
        let hash = hash.into_inner();
        let layout = fec::Layout::for_verity(&p, 77, out.hash_device_size(), &fec_params).unwrap();
        let mut enc = early.into_encoder(&layout).unwrap();
        enc.read_hash(&hash).unwrap();
        let expected = fec::encode_verity(&layout, &data[..77 * 512], &hash).unwrap();
        let got = std::cell::RefCell::new(Vec::new());
        enc.write_to(&got).unwrap();
        assert_eq!(got.into_inner(), expected);
    }

    #[test]
    fn no_fec_layout_no_encoder() {
        let p = dmverity::Params {
            hash_block_size: 512,
            ..Default::default()
        };
        assert!(EarlyEncoder::predict(&p, 8, &FecParams::default(), true).is_none());
    }
}
