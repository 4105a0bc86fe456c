//! ext4's directory hashes (`half_md4`, `tea`, legacy), in their signed and
//! unsigned variants: the pair a no-key name starts with.

/// A directory hash algorithm and how it reads name bytes.
///
/// ```
/// use mdu_fscrypt::ext4::HashVersion;
///
/// // Version 1 on disk, with the superblock's "unsigned" flag.
/// assert_eq!(HashVersion::from_disk(1, true), HashVersion::HalfMd4 { unsigned: true });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HashVersion {
    /// 0 (3 unsigned): the legacy hash.
    Legacy {
        /// Name bytes are read as unsigned.
        unsigned: bool,
    },
    /// 1 (4 unsigned): half MD4, the default.
    HalfMd4 {
        /// Name bytes are read as unsigned.
        unsigned: bool,
    },
    /// 2 (5 unsigned): TEA.
    Tea {
        /// Name bytes are read as unsigned.
        unsigned: bool,
    },
    /// Any other value (6 is casefold's SipHash, stored in the entries
    /// themselves): the kernel computes no hash from the name.
    Other(u8),
}

impl HashVersion {
    /// The version a `dx_root` or the superblock stores, with the
    /// superblock's choice of signedness for versions 0 to 2 (the kernel
    /// adds 3 to them when `s_flags` says "unsigned").
    ///
    /// See [`HashVersion`].
    pub const fn from_disk(version: u8, unsigned_flag: bool) -> HashVersion {
        match version {
            0 => HashVersion::Legacy {
                unsigned: unsigned_flag,
            },
            1 => HashVersion::HalfMd4 {
                unsigned: unsigned_flag,
            },
            2 => HashVersion::Tea {
                unsigned: unsigned_flag,
            },
            3 => HashVersion::Legacy { unsigned: true },
            4 => HashVersion::HalfMd4 { unsigned: true },
            5 => HashVersion::Tea { unsigned: true },
            v => HashVersion::Other(v),
        }
    }
}

/// The hash and minor hash of a name, as `ext4fs_dirhash` returns them.
///
/// ```
/// use mdu_fscrypt::ext4::{DirHash, HashVersion};
///
/// let h = DirHash::new(HashVersion::HalfMd4 { unsigned: false }, [0; 4], b"lost+found");
/// assert_eq!(h.hash & 1, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DirHash {
    /// The major hash, its low bit clear.
    pub hash: u32,
    /// The minor hash (0 for the legacy hash).
    pub minor_hash: u32,
}

const DEFAULT_SEED: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

impl DirHash {
    /// Hashes `name` with `version` and the superblock's `seed` (all zero
    /// means the default seed).
    ///
    /// See [`DirHash`].
    pub fn new(version: HashVersion, seed: [u32; 4], name: &[u8]) -> DirHash {
        let mut buf = if seed == [0; 4] { DEFAULT_SEED } else { seed };
        let (hash, minor_hash) = match version {
            HashVersion::Legacy { unsigned } => (legacy(name, unsigned), 0),
            HashVersion::HalfMd4 { unsigned } => {
                let mut input = [0u32; 8];
                for chunk in chunks(name, 32) {
                    words(chunk, unsigned, &mut input);
                    half_md4(&mut buf, &input);
                }
                (buf[1], buf[2])
            }
            HashVersion::Tea { unsigned } => {
                let mut input = [0u32; 4];
                for chunk in chunks(name, 16) {
                    words(chunk, unsigned, &mut input);
                    tea(&mut buf, &input);
                }
                (buf[0], buf[1])
            }
            HashVersion::Other(_) => (0, 0),
        };
        let mut hash = hash & !1;
        // The kernel keeps the 32-bit end-of-directory cookie free.
        if hash == 0x7fff_ffff << 1 {
            hash = (0x7fff_ffff - 1) << 1;
        }
        DirHash { hash, minor_hash }
    }
}

/// The suffixes of `name` the kernel feeds, one per step of `step` bytes
/// (`len` counts down from the full length, so each sees the rest).
fn chunks(name: &[u8], step: usize) -> impl Iterator<Item = &[u8]> {
    (0..name.len()).step_by(step).map(move |at| &name[at..])
}

/// `str2hashbuf`: packs up to `4 * out.len()` bytes of `msg` big-end-first
/// into words, padding with the length of all of `msg`.
fn words(msg: &[u8], unsigned: bool, out: &mut [u32]) {
    let len = msg.len() as u32;
    let mut pad = len | (len << 8);
    pad |= pad << 16;
    let mut val = pad;
    let take = msg.len().min(out.len() * 4);
    let mut n = 0;
    for (i, &byte) in msg[..take].iter().enumerate() {
        let c = if unsigned {
            u32::from(byte)
        } else {
            i32::from(byte as i8) as u32
        };
        val = c.wrapping_add(val << 8);
        if i % 4 == 3 {
            out[n] = val;
            n += 1;
            val = pad;
        }
    }
    if n < out.len() {
        out[n] = val;
        n += 1;
    }
    for w in &mut out[n..] {
        *w = pad;
    }
}

fn half_md4(buf: &mut [u32; 4], x: &[u32; 8]) {
    const K2: u32 = 0o13240474631;
    const K3: u32 = 0o15666365641;
    let f = |x: u32, y: u32, z: u32| z ^ (x & (y ^ z));
    let g = |x: u32, y: u32, z: u32| (x & y).wrapping_add((x ^ y) & z);
    let h = |x: u32, y: u32, z: u32| x ^ y ^ z;
    let [mut a, mut b, mut c, mut d] = *buf;
    macro_rules! round {
        ($f:ident, $k:expr, [$($i:literal),*], [$s0:literal, $s1:literal, $s2:literal, $s3:literal]) => {
            let idx = [$($i),*];
            for pair in idx.chunks_exact(4) {
                a = a.wrapping_add($f(b, c, d)).wrapping_add(x[pair[0]].wrapping_add($k)).rotate_left($s0);
                d = d.wrapping_add($f(a, b, c)).wrapping_add(x[pair[1]].wrapping_add($k)).rotate_left($s1);
                c = c.wrapping_add($f(d, a, b)).wrapping_add(x[pair[2]].wrapping_add($k)).rotate_left($s2);
                b = b.wrapping_add($f(c, d, a)).wrapping_add(x[pair[3]].wrapping_add($k)).rotate_left($s3);
            }
        };
    }
    round!(f, 0, [0, 1, 2, 3, 4, 5, 6, 7], [3, 7, 11, 19]);
    round!(g, K2, [1, 3, 5, 7, 0, 2, 4, 6], [3, 5, 9, 13]);
    round!(h, K3, [3, 7, 2, 6, 1, 5, 0, 4], [3, 9, 11, 15]);
    buf[0] = buf[0].wrapping_add(a);
    buf[1] = buf[1].wrapping_add(b);
    buf[2] = buf[2].wrapping_add(c);
    buf[3] = buf[3].wrapping_add(d);
}

fn tea(buf: &mut [u32; 4], x: &[u32; 4]) {
    const DELTA: u32 = 0x9e37_79b9;
    let (mut b0, mut b1) = (buf[0], buf[1]);
    let mut sum = 0u32;
    for _ in 0..16 {
        sum = sum.wrapping_add(DELTA);
        b0 = b0.wrapping_add(
            ((b1 << 4).wrapping_add(x[0])) ^ b1.wrapping_add(sum) ^ ((b1 >> 5).wrapping_add(x[1])),
        );
        b1 = b1.wrapping_add(
            ((b0 << 4).wrapping_add(x[2])) ^ b0.wrapping_add(sum) ^ ((b0 >> 5).wrapping_add(x[3])),
        );
    }
    buf[0] = buf[0].wrapping_add(b0);
    buf[1] = buf[1].wrapping_add(b1);
}

fn legacy(name: &[u8], unsigned: bool) -> u32 {
    let (mut h0, mut h1) = (0x12a3_fe2du32, 0x37ab_e8f9u32);
    for &byte in name {
        let c = if unsigned {
            u32::from(byte)
        } else {
            i32::from(byte as i8) as u32
        };
        let mut h = h1.wrapping_add(h0 ^ c.wrapping_mul(7_152_373));
        if h & 0x8000_0000 != 0 {
            h = h.wrapping_sub(0x7fff_ffff);
        }
        h1 = h0;
        h0 = h;
    }
    h0 << 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_pad_with_the_length() {
        let mut out = [0u32; 4];
        words(b"abcde", true, &mut out);
        let pad = 0x0505_0505;
        assert_eq!(out, [0x6162_6364, (pad << 8) + 0x65, pad, pad]);
        // Signed bytes sign-extend before the add.
        words(&[0xff], false, &mut out);
        assert_eq!(out[0], (0x0101_0101u32 << 8).wrapping_sub(1));
    }

    #[test]
    fn unsigned_and_signed_differ_only_on_high_bytes() {
        let seed = [1, 2, 3, 4];
        for v in [
            (
                HashVersion::HalfMd4 { unsigned: false },
                HashVersion::HalfMd4 { unsigned: true },
            ),
            (
                HashVersion::Tea { unsigned: false },
                HashVersion::Tea { unsigned: true },
            ),
            (
                HashVersion::Legacy { unsigned: false },
                HashVersion::Legacy { unsigned: true },
            ),
        ] {
            assert_eq!(
                DirHash::new(v.0, seed, b"ascii name"),
                DirHash::new(v.1, seed, b"ascii name")
            );
            // Only a byte in the last, partial word keeps its sign.
            assert_ne!(
                DirHash::new(v.0, seed, b"name\xff"),
                DirHash::new(v.1, seed, b"name\xff")
            );
        }
    }
}
