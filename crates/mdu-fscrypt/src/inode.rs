//! What one inode's ciphers need besides its context: the file system's
//! UUID and block size, and the IV of each data unit.

use mdu_core::Iv;

use crate::Error;
use crate::key::MasterKey;
use crate::policy::Policy;

/// The file system facts fscrypt's keys and IVs depend on.
///
/// ```
/// use mdu_fscrypt::FsInfo;
///
/// // ext4: s_uuid at superblock offset 0x68, as stored.
/// let fs = FsInfo { uuid: [0x5b; 16], block_size: 4096 };
/// assert_eq!(fs.block_size, 4096);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FsInfo {
    /// The file system UUID as stored (the IV_INO_LBLK keys depend on it).
    pub uuid: [u8; 16],
    /// The block size in bytes.
    pub block_size: u32,
}

/// How a policy numbers an inode's data units in their IVs. An IV is
/// 32 bytes, zero past what the scheme fills: the AES modes take its first
/// 16 bytes, HCTR2 and Adiantum all 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IvScheme {
    /// `le64(index)`.
    Index,
    /// `le32(index) || le32(ino)`.
    Lblk64 { ino: u32 },
    /// `le32(hashed_ino + index mod 2^32)`.
    Lblk32 { hashed: u32 },
    /// DIRECT_KEY: `le64(index) || nonce`, 24 bytes (Adiantum only: the
    /// policy refuses DIRECT_KEY with any mode of a 16-byte IV).
    DirectKey { nonce: [u8; 16] },
}

impl IvScheme {
    /// The scheme of inode `ino`, whose nonce is `nonce`, under `policy`.
    pub(crate) fn new(
        master: &MasterKey,
        policy: &Policy,
        nonce: &[u8; 16],
        ino: u64,
    ) -> Result<IvScheme, Error> {
        let flags = policy.flags();
        if flags.direct_key() {
            return Ok(IvScheme::DirectKey { nonce: *nonce });
        }
        if !(flags.iv_ino_lblk_64() || flags.iv_ino_lblk_32()) {
            return Ok(IvScheme::Index);
        }
        let ino32 = u32::try_from(ino).map_err(|_| Error::InodeNumber { ino })?;
        Ok(if flags.iv_ino_lblk_64() {
            IvScheme::Lblk64 { ino: ino32 }
        } else {
            IvScheme::Lblk32 {
                hashed: master.inode_hash_key().hash(ino),
            }
        })
    }

    /// The 32-byte IV of data unit `index` (0 for names and symlink
    /// targets).
    pub(crate) fn wide_iv(self, index: u64) -> Result<Iv<32>, Error> {
        Ok(match self {
            IvScheme::Index => Iv::from_low_u128(u128::from(index)),
            IvScheme::Lblk64 { ino } => {
                let index = u32::try_from(index).map_err(|_| Error::UnitIndex { index })?;
                Iv::from_low_u128(u128::from(ino) << 32 | u128::from(index))
            }
            IvScheme::Lblk32 { hashed } => {
                Iv::from_low_u128(u128::from(hashed.wrapping_add(index as u32)))
            }
            IvScheme::DirectKey { nonce } => {
                let mut iv = [0u8; 32];
                iv[..8].copy_from_slice(&index.to_le_bytes());
                iv[8..24].copy_from_slice(&nonce);
                Iv(iv)
            }
        })
    }

    /// How many units from `index` on (at most `count`) have IVs that
    /// count up by one as a 128-bit little-endian counter: all of them,
    /// except where an IV_INO_LBLK_32 IV wraps at 2^32 (the counter would
    /// carry into byte 4) or an IV_INO_LBLK_64 index reaches 2^32.
    pub(crate) fn run(self, index: u64, count: u64) -> Result<u64, Error> {
        Ok(match self {
            // The index is the low 64 bits: it never carries into the nonce.
            IvScheme::Index | IvScheme::DirectKey { .. } => count,
            IvScheme::Lblk64 { .. } => {
                let last = index.checked_add(count.saturating_sub(1));
                match last {
                    Some(last) if last <= u64::from(u32::MAX) => count,
                    _ => {
                        return Err(Error::UnitIndex {
                            index: index.max(1 << 32),
                        });
                    }
                }
            }
            IvScheme::Lblk32 { hashed } => {
                let first = u64::from(hashed.wrapping_add(index as u32));
                count.min((1 << 32) - first)
            }
        })
    }
}
