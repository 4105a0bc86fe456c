//! File names and symlink targets: NUL-padded to the policy's padding,
//! encrypted with the names mode under the directory's (or the
//! symlink's) key and the IV of index 0.
//!
//! An encrypted name of a `n`-byte name is `min(round_up(max(n, 16), pad),
//! max)` bytes: `max` is 255 for names and the block size less 3 for
//! symlink targets. A symlink stores `le16(len) || ciphertext || 0`.

use alloc::vec::Vec;

use mdu_adiantum::Adiantum;
use mdu_cbc::{AesCtsCbc128, AesCtsCbc256};
use mdu_core::Iv;
use mdu_hctr2::Hctr2Aes256;

use crate::Error;
use crate::inode::{FsInfo, IvScheme};
use crate::key::MasterKey;
use crate::policy::{Context, Mode};

/// The longest file name, and so the longest encrypted name.
pub const NAME_MAX: usize = 255;

/// The length of the encrypted form of an `n`-byte name with padding
/// `pad` (4, 8, 16 or 32) and longest form `max`.
///
/// # Errors
///
/// [`Error::NameLength`] unless `1 <= n <= max`.
///
/// ```
/// use mdu_fscrypt::names::padded_len;
/// assert_eq!(padded_len(1, 32, 255)?, 32);
/// assert_eq!(padded_len(17, 4, 255)?, 20);
/// assert_eq!(padded_len(240, 32, 255)?, 255);
/// # Ok::<(), mdu_fscrypt::Error>(())
/// ```
pub fn padded_len(n: usize, pad: usize, max: usize) -> Result<usize, Error> {
    if n == 0 || n > max {
        return Err(Error::NameLength { len: n, max });
    }
    Ok(n.max(16).next_multiple_of(pad).min(max))
}

/// The names cipher of one directory (for its entries) or one symlink
/// (for its target).
///
/// ```
/// use mdu_fscrypt::{FsInfo, NamesCipher, key::MasterKey, policy::{Context, Flags, KeySpec, Mode, Policy}};
///
/// let master = MasterKey::new(&[3; 32])?;
/// let policy = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::from_bits(3).unwrap(), 0,
///     KeySpec::V2 { identifier: master.identifier().0 })?;
/// let dir = NamesCipher::new(&master, &Context::new(policy, [4; 16]), 12,
///     &FsInfo { uuid: [0; 16], block_size: 4096 })?;
/// let stored = dir.encrypt_name(b"notes.txt")?;
/// assert_eq!(stored.len(), 32);
/// assert_eq!(dir.decrypt_name(&stored)?, b"notes.txt");
/// # Ok::<(), mdu_fscrypt::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct NamesCipher {
    cipher: Names,
    /// The IV of index 0: the AES-CTS modes take its first 16 bytes.
    iv: Iv<32>,
    pad: usize,
    symlink_max: usize,
}

#[derive(Clone, Debug)]
enum Names {
    Cts256(AesCtsCbc256),
    Cts128(AesCtsCbc128),
    Hctr2(Hctr2Aes256),
    Adiantum(Adiantum),
}

impl NamesCipher {
    /// The names cipher of inode `ino` (a directory or a symlink), whose
    /// context is `ctx`, on file system `fs`, under `master`.
    ///
    /// # Errors
    ///
    /// [`Error::Key`] for the wrong key; [`Error::Unsupported`] for a
    /// names mode not implemented here (SM4);
    /// [`Error::InodeNumber`] for an IV_INO_LBLK policy on an inode
    /// number beyond 32 bits.
    ///
    /// See [`NamesCipher`].
    pub fn new(
        master: &MasterKey,
        ctx: &Context,
        ino: u64,
        fs: &FsInfo,
    ) -> Result<NamesCipher, Error> {
        let policy = ctx.policy();
        master.check(policy)?;
        let mode = policy.filenames();
        let key = master.derive(policy, mode, ctx.nonce(), &fs.uuid)?;
        let cipher = match mode {
            Mode::Aes256Cts => Names::Cts256(AesCtsCbc256::new(key.as_bytes())?),
            Mode::Aes128Cts => Names::Cts128(AesCtsCbc128::new(key.as_bytes())?),
            Mode::Aes256Hctr2 => Names::Hctr2(Hctr2Aes256::new(key.as_bytes())?),
            Mode::Adiantum => Names::Adiantum(Adiantum::new(key.as_bytes())?),
            mode => return Err(Error::Unsupported { mode }),
        };
        Ok(NamesCipher {
            cipher,
            iv: IvScheme::new(master, policy, ctx.nonce(), ino)?.wide_iv(0)?,
            pad: policy.flags().name_padding(),
            symlink_max: (fs.block_size as usize).saturating_sub(3),
        })
    }

    fn encrypt(&self, buf: &mut [u8]) -> Result<(), Error> {
        match &self.cipher {
            Names::Cts256(c) => c.encrypt(self.narrow_iv(), buf)?,
            Names::Cts128(c) => c.encrypt(self.narrow_iv(), buf)?,
            Names::Hctr2(c) => c.encrypt(self.iv, buf)?,
            Names::Adiantum(c) => c.encrypt(self.iv, buf)?,
        }
        Ok(())
    }

    fn decrypt(&self, buf: &mut [u8]) -> Result<(), Error> {
        match &self.cipher {
            Names::Cts256(c) => c.decrypt(self.narrow_iv(), buf)?,
            Names::Cts128(c) => c.decrypt(self.narrow_iv(), buf)?,
            Names::Hctr2(c) => c.decrypt(self.iv, buf)?,
            Names::Adiantum(c) => c.decrypt(self.iv, buf)?,
        }
        Ok(())
    }

    /// The first 16 bytes of the IV, for the AES-CTS modes.
    fn narrow_iv(&self) -> Iv {
        Iv::from_slice(&self.iv.0[..16]).expect("16 bytes")
    }

    fn seal(&self, plain: &[u8], max: usize) -> Result<Vec<u8>, Error> {
        let mut out = alloc::vec![0u8; padded_len(plain.len(), self.pad, max)?];
        out[..plain.len()].copy_from_slice(plain);
        self.encrypt(&mut out)?;
        Ok(out)
    }

    fn open(&self, ciphertext: &[u8], max: usize) -> Result<Vec<u8>, Error> {
        if !(16..=max).contains(&ciphertext.len()) {
            return Err(Error::CiphertextLength {
                len: ciphertext.len(),
                max,
            });
        }
        let mut out = ciphertext.to_vec();
        self.decrypt(&mut out)?;
        let end = out.iter().position(|&b| b == 0).unwrap_or(out.len());
        // What the kernel wrote: the name, then NULs up to its padded
        // length, which is the stored length. Anything else is a damaged
        // entry or the wrong key (the only check a v1 key gets).
        let padded = out[end..].iter().all(|&b| b == 0)
            && padded_len(end, self.pad, max).is_ok_and(|l| l == ciphertext.len());
        if !padded {
            return Err(Error::InvalidName);
        }
        out.truncate(end);
        Ok(out)
    }

    /// A directory entry's name as stored: NUL-padded and encrypted.
    ///
    /// # Errors
    ///
    /// [`Error::NameLength`] for an empty name or one over 255 bytes;
    /// [`Error::InvalidName`] for a name with a `/` or a NUL, or `.` and
    /// `..` (stored in clear).
    ///
    /// See [`NamesCipher`].
    pub fn encrypt_name(&self, name: &[u8]) -> Result<Vec<u8>, Error> {
        if name.contains(&b'/') || name.contains(&0) || name == b"." || name == b".." {
            return Err(Error::InvalidName);
        }
        self.seal(name, NAME_MAX)
    }

    /// The name of a directory entry from its stored (encrypted) name.
    ///
    /// # Errors
    ///
    /// [`Error::CiphertextLength`] unless 16 to 255 bytes;
    /// [`Error::InvalidName`] when it does not decrypt to what the kernel
    /// writes: a name of 1 to 255 bytes without a `/` or a NUL, then NULs
    /// up to the padded length of that name, which must be the stored
    /// length. A damaged entry or the wrong key: this is the only check a
    /// v1 key gets. Under a wrong key a stored name of `L` bytes decrypts
    /// to random bytes, which pass when none of them is a NUL or a `/`:
    /// with a probability of about `(254/256)^L` (0.88 for the shortest
    /// names, 16 bytes; 0.14 for 255), so only many names make the check
    /// sure.
    ///
    /// See [`NamesCipher`].
    pub fn decrypt_name(&self, stored: &[u8]) -> Result<Vec<u8>, Error> {
        let name = self.open(stored, NAME_MAX)?;
        if name.contains(&b'/') {
            return Err(Error::InvalidName);
        }
        Ok(name)
    }

    /// A symlink's stored payload for `target`: `le16(len)`, the
    /// encrypted target, a NUL.
    ///
    /// # Errors
    ///
    /// [`Error::NameLength`] for an empty target or one longer than the
    /// block size less 3; [`Error::InvalidName`] for a target with a
    /// NUL.
    ///
    /// ```
    /// use mdu_fscrypt::{FsInfo, NamesCipher, key::MasterKey, policy::{Context, Flags, KeySpec, Mode, Policy}};
    ///
    /// let master = MasterKey::new(&[3; 32])?;
    /// let policy = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::from_bits(3).unwrap(), 0,
    ///     KeySpec::V2 { identifier: master.identifier().0 })?;
    /// let link = NamesCipher::new(&master, &Context::new(policy, [5; 16]), 18,
    ///     &FsInfo { uuid: [0; 16], block_size: 4096 })?;
    /// let payload = link.encrypt_symlink(b"target-of-the-symlink")?;
    /// assert_eq!(payload.len(), 2 + 32 + 1);
    /// assert_eq!(link.decrypt_symlink(&payload)?, b"target-of-the-symlink");
    /// # Ok::<(), mdu_fscrypt::Error>(())
    /// ```
    pub fn encrypt_symlink(&self, target: &[u8]) -> Result<Vec<u8>, Error> {
        if target.contains(&0) {
            return Err(Error::InvalidName);
        }
        let ciphertext = self.seal(target, self.symlink_max)?;
        let mut out = Vec::with_capacity(ciphertext.len() + 3);
        out.extend_from_slice(&(ciphertext.len() as u16).to_le_bytes());
        out.extend_from_slice(&ciphertext);
        out.push(0);
        Ok(out)
    }

    /// A symlink's target from its stored payload (`le16(len) ||
    /// ciphertext`, bytes after it ignored).
    ///
    /// # Errors
    ///
    /// [`Error::SymlinkPayload`] when the stated length overruns the
    /// payload; [`Error::CiphertextLength`] and [`Error::InvalidName`] as
    /// for names (a target may hold a `/`, not a NUL, and is padded as a
    /// name is, up to the block size less 3).
    ///
    /// See [`encrypt_symlink`](Self::encrypt_symlink).
    pub fn decrypt_symlink(&self, payload: &[u8]) -> Result<Vec<u8>, Error> {
        let stated = match payload {
            [a, b, ..] => usize::from(u16::from_le_bytes([*a, *b])),
            _ => {
                return Err(Error::SymlinkPayload {
                    stated: 0,
                    len: payload.len(),
                });
            }
        };
        let ciphertext = payload.get(2..2 + stated).ok_or(Error::SymlinkPayload {
            stated,
            len: payload.len().saturating_sub(2),
        })?;
        self.open(ciphertext, self.symlink_max.max(16))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Flags, KeySpec, Policy};
    use alloc::vec;

    fn v1_dir(pad_flags: u8) -> NamesCipher {
        let master = MasterKey::new(&[0x42; 64]).unwrap();
        let policy = Policy::new(
            Mode::Aes256Xts,
            Mode::Aes256Cts,
            Flags::from_bits(pad_flags).unwrap(),
            0,
            KeySpec::V1 { descriptor: [1; 8] },
        )
        .unwrap();
        let fs = FsInfo {
            uuid: [0; 16],
            block_size: 4096,
        };
        NamesCipher::new(&master, &Context::new(policy, [9; 16]), 12, &fs).unwrap()
    }

    /// `plain` encrypted as it stands (any padding), as a stored name.
    fn stored(c: &NamesCipher, plain: &[u8]) -> Vec<u8> {
        let mut b = plain.to_vec();
        c.encrypt(&mut b).unwrap();
        b
    }

    #[test]
    fn names_not_padded_as_the_kernel_pads_them_are_refused() {
        // Padding 4: "abc" is stored in 16 bytes, NULs after it.
        let c = v1_dir(0);
        let mut good = b"abc".to_vec();
        good.resize(16, 0);
        assert_eq!(c.decrypt_name(&stored(&c, &good)).unwrap(), b"abc");
        // Anything but NUL after the first NUL.
        let mut junk = good.clone();
        junk[9] = b'x';
        assert_eq!(c.decrypt_name(&stored(&c, &junk)), Err(Error::InvalidName));
        // A NUL inside what would otherwise be a full-length name.
        let mut inner = vec![b'n'; 20];
        inner[4] = 0;
        assert_eq!(c.decrypt_name(&stored(&c, &inner)), Err(Error::InvalidName));
        // "abc" and NULs, but 20 bytes long: the kernel stores it in 16.
        let mut long = b"abc".to_vec();
        long.resize(20, 0);
        assert_eq!(c.decrypt_name(&stored(&c, &long)), Err(Error::InvalidName));
        // 17 to 20 bytes are stored in 20: all of them read back.
        for n in 17..=20 {
            let mut p = vec![b'q'; n];
            p.resize(20, 0);
            assert_eq!(c.decrypt_name(&stored(&c, &p)).unwrap(), vec![b'q'; n]);
        }
        // Padding 32: "abc" in 32 bytes, not in 16.
        let c = v1_dir(3);
        let mut short = b"abc".to_vec();
        short.resize(16, 0);
        assert_eq!(c.decrypt_name(&stored(&c, &short)), Err(Error::InvalidName));
        short.resize(32, 0);
        assert_eq!(c.decrypt_name(&stored(&c, &short)).unwrap(), b"abc");
        // A slash, and an empty name.
        let mut slash = b"a/b".to_vec();
        slash.resize(32, 0);
        assert_eq!(c.decrypt_name(&stored(&c, &slash)), Err(Error::InvalidName));
        assert_eq!(
            c.decrypt_name(&stored(&c, &[0; 32])),
            Err(Error::InvalidName)
        );
    }

    #[test]
    fn symlink_targets_not_padded_as_the_kernel_pads_them_are_refused() {
        let c = v1_dir(0);
        let payload = c.encrypt_symlink(b"../x").unwrap();
        assert_eq!(c.decrypt_symlink(&payload).unwrap(), b"../x");
        let mut junk = b"../x".to_vec();
        junk.resize(16, 0);
        junk[15] = 1;
        let mut p = 16u16.to_le_bytes().to_vec();
        p.extend_from_slice(&stored(&c, &junk));
        assert_eq!(c.decrypt_symlink(&p), Err(Error::InvalidName));
    }
}
