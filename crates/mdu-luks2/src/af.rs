//! The anti-forensic splitter of LUKS keyslots.
//!
//! A key of k bytes is stored as `stripes` blocks of k bytes, so that
//! destroying any one block (one sector of the keyslot area) destroys the
//! key. With `diffuse` a hash-based mixing of a block:
//!
//! ```text
//! merge: buf = 0^k; for s in 0..stripes-1: buf = diffuse(buf XOR S_s);
//!        key = S_last XOR buf
//! split: S_0 .. S_{stripes-2} random, S_last = key XOR buf
//! ```
//!
//! `diffuse(x)` hashes each digest-sized piece j of x as
//! `H(BE32(j) || piece)`; a shorter last piece of r bytes becomes the first
//! r bytes of its hash.
//!
//! ```
//! use mdu_luks2::{af, Hash};
//! let key = [7u8; 32];
//! let material = af::split(&key, 10, Hash::Sha1, &mut mdu_luks2::os_random)?;
//! assert_eq!(material.len(), 320);
//! assert_eq!(&af::merge(&material, 32, 10, Hash::Sha1)?[..], &key[..]);
//! # Ok::<(), mdu_luks2::Error>(())
//! ```

use zeroize::{Zeroize, Zeroizing};

use crate::{Error, Hash};

/// `diffuse` in place.
fn diffuse(hash: Hash, buf: &mut [u8]) {
    let d = hash.output_len();
    let mut out = Zeroizing::new([0u8; 64]);
    for (j, piece) in buf.chunks_mut(d).enumerate() {
        let n = piece.len();
        hash.hash_into(&[&(j as u32).to_be_bytes(), piece], &mut out[..n]);
        piece.copy_from_slice(&out[..n]);
    }
}

/// The number of bytes the split material of a `key_len`-byte key takes:
/// `key_len * stripes`, or `None` if that overflows.
///
/// ```
/// assert_eq!(mdu_luks2::af::split_len(64, 4000), Some(256000));
/// ```
pub fn split_len(key_len: usize, stripes: u32) -> Option<usize> {
    key_len.checked_mul(usize::try_from(stripes).ok()?)
}

/// Merges split material back into the `key_len`-byte key.
///
/// `material` must hold at least `key_len * stripes` bytes (more is
/// ignored: the keyslot area's padding); `stripes` must be at least 1.
///
/// ```
/// use mdu_luks2::{af, Hash};
/// // FORMATS-2 9.3: 16-byte key, 4000 stripes, source byte i = i & 0xff.
/// let src: Vec<u8> = (0..16 * 4000).map(|i| i as u8).collect();
/// let key = af::merge(&src, 16, 4000, Hash::Sha256)?;
/// assert_eq!(key[..4], [0xe1, 0xbd, 0x61, 0xa6]);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn merge(
    material: &[u8],
    key_len: usize,
    stripes: u32,
    hash: Hash,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let need = split_len(key_len, stripes)
        .filter(|&n| n <= material.len() && stripes > 0 && key_len > 0)
        .ok_or_else(|| Error::Params {
            problem: format!(
                "AF merge of a {key_len}-byte key in {stripes} stripes needs more than the {} bytes given",
                material.len()
            ),
        })?;
    let mut buf = Zeroizing::new(vec![0u8; key_len]);
    let blocks = material[..need].chunks_exact(key_len);
    let last = stripes as usize - 1;
    for (s, block) in blocks.enumerate() {
        xor_into(&mut buf, block);
        if s < last {
            diffuse(hash, &mut buf);
        }
    }
    Ok(buf)
}

/// Splits `key` into `stripes` blocks, the first `stripes - 1` of them
/// filled by `random`; the result has `key.len() * stripes` bytes.
///
/// ```
/// use mdu_luks2::{af, Hash};
/// let key = [0x5au8; 64];
/// let mut n = 0u8;
/// let material = af::split(&key, 4000, Hash::Sha256, &mut |b: &mut [u8]| {
///     for x in b { n = n.wrapping_add(1); *x = n; }
///     Ok(())
/// })?;
/// assert_eq!(&af::merge(&material, 64, 4000, Hash::Sha256)?[..], &key[..]);
/// # Ok::<(), mdu_luks2::Error>(())
/// ```
pub fn split(
    key: &[u8],
    stripes: u32,
    hash: Hash,
    random: &mut dyn FnMut(&mut [u8]) -> Result<(), Error>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let k = key.len();
    let total = split_len(k, stripes)
        .filter(|_| stripes > 0 && k > 0)
        .ok_or_else(|| Error::Params {
            problem: format!("cannot split a {k}-byte key into {stripes} stripes"),
        })?;
    let mut out = Zeroizing::new(vec![0u8; total]);
    let last = (stripes as usize - 1) * k;
    random(&mut out[..last])?;
    let mut buf = Zeroizing::new(vec![0u8; k]);
    for block in out[..last].chunks_exact(k) {
        xor_into(&mut buf, block);
        diffuse(hash, &mut buf);
    }
    xor_into(&mut buf, key);
    out[last..].copy_from_slice(&buf);
    buf.zeroize();
    Ok(out)
}

fn xor_into(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn diffuse_matches_the_vectors() {
        let mut a = [0u8; 32];
        diffuse(Hash::Sha256, &mut a);
        assert_eq!(
            hex(&a),
            "6db65fd59fd356f6729140571b5bcd6bb3b83492a16e1bf0a3884442fc3c8a0e"
        );
        let mut b = [0u8; 16];
        diffuse(Hash::Sha256, &mut b);
        assert_eq!(hex(&b), "de47c9b27eb8d300dbb5f2c353e632c3");
        // 40 bytes: one full piece and a short one of 8 bytes.
        let mut c: Vec<u8> = (0..40).collect();
        diffuse(Hash::Sha256, &mut c);
        assert_eq!(
            hex(&c),
            "bff51a6d513395979e3a870c8483769a5a70002e6e32c146c53e1d2edc4670029168dfa0b824fbae"
        );
    }

    #[test]
    fn merge_matches_the_vector() {
        let src: Vec<u8> = (0..16 * 4000).map(|i| i as u8).collect();
        let key = merge(&src, 16, 4000, Hash::Sha256).unwrap();
        assert_eq!(hex(&key), "e1bd61a6bc5bfbf77d0d5b0091ade064");
    }

    #[test]
    fn split_then_merge_gives_the_key_for_every_hash_and_odd_sizes() {
        for hash in Hash::ALL {
            for (k, stripes) in [(16, 1), (32, 2), (33, 7), (64, 4000), (65, 3)] {
                let key: Vec<u8> = (0..k).map(|i| (i * 7 + 3) as u8).collect();
                let mut ctr = 0u32;
                let m = split(&key, stripes, hash, &mut |b: &mut [u8]| {
                    for x in b {
                        ctr = ctr.wrapping_mul(1_103_515_245).wrapping_add(12345);
                        *x = (ctr >> 16) as u8;
                    }
                    Ok(())
                })
                .unwrap();
                assert_eq!(m.len(), k * stripes as usize);
                assert_eq!(&merge(&m, k, stripes, hash).unwrap()[..], &key[..]);
                // Damage one stripe: the key is gone.
                if stripes > 1 {
                    let mut d = m.clone();
                    d[0] ^= 1;
                    assert_ne!(&merge(&d, k, stripes, hash).unwrap()[..], &key[..]);
                }
            }
        }
    }

    #[test]
    fn short_material_is_an_error() {
        assert!(merge(&[0u8; 100], 16, 7, Hash::Sha256).is_err());
        assert!(merge(&[0u8; 100], 16, 0, Hash::Sha256).is_err());
        assert!(merge(&[0u8; 100], 0, 1, Hash::Sha256).is_err());
    }
}
