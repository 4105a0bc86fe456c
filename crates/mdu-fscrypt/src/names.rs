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
        out.truncate(end);
        if out.is_empty() {
            return Err(Error::InvalidName);
        }
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
    /// [`Error::InvalidName`] when it decrypts to an empty name or one
    /// with a `/`: a damaged entry or the wrong key.
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
    /// for names.
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
