//! File contents: the data units of one regular file, encrypted and
//! decrypted in batches through the cipher crates.
//!
//! A file's data unit `i` (its block `lblk` holds units `lblk · b/u ..`,
//! `b/u` units per block) is one unit of the contents mode under the IV
//! of `i` (see [`ContentsCipher`]). Runs of units are one batched call:
//! AES-256-XTS through `mdu-xts`, AES-128-CBC-ESSIV through `mdu-cbc` with
//! the ESSIV IVs encrypted in one batch, Adiantum through `mdu-adiantum`
//! (32-byte IVs: DIRECT_KEY puts the nonce in bytes 8..24).

use alloc::vec::Vec;

use mdu_adiantum::Adiantum;
use mdu_aes::{Aes128, Essiv};
use mdu_cbc::Cbc;
use mdu_core::{DataUnitCipher, DataUnitSize, Direction, Iv};
use mdu_xts::XtsAes256;

use crate::Error;
use crate::inode::{FsInfo, IvScheme};
use crate::key::MasterKey;
use crate::policy::{Context, Mode};

/// The contents cipher of one regular file: its key, its data-unit size
/// and the IVs of its units.
///
/// ```
/// use mdu_fscrypt::{ContentsCipher, FsInfo, key::MasterKey, policy::{Context, Flags, KeySpec, Mode, Policy}};
///
/// let master = MasterKey::new(&[7; 64])?;
/// let policy = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::from_bits(3).unwrap(), 0,
///     KeySpec::V2 { identifier: master.identifier().0 })?;
/// let ctx = Context::new(policy, [1; 16]);
/// let fs = FsInfo { uuid: [2; 16], block_size: 4096 };
/// let file = ContentsCipher::new(&master, &ctx, 13, &fs)?;
///
/// // Blocks 5 and 6 of the file, in one call.
/// let mut blocks = vec![0x61u8; 2 * 4096];
/// file.encrypt_blocks(5, &mut blocks)?;
/// file.decrypt_blocks(5, &mut blocks)?;
/// assert!(blocks.iter().all(|&b| b == 0x61));
/// # Ok::<(), mdu_fscrypt::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ContentsCipher {
    cipher: Contents,
    ivs: IvScheme,
    unit: DataUnitSize,
    units_per_block: u64,
}

#[derive(Clone, Debug)]
enum Contents {
    Xts(XtsAes256),
    Essiv { cbc: Cbc<Aes128>, essiv: Essiv },
    Adiantum(Adiantum),
}

impl ContentsCipher {
    /// The contents cipher of inode `ino`, whose context is `ctx`, on the
    /// file system `fs`, under `master` (checked against the policy).
    ///
    /// # Errors
    ///
    /// [`Error::Key`] for the wrong key; [`Error::Unsupported`] for a mode
    /// not implemented here (SM4-XTS);
    /// [`Error::DataUnitSize`] when the policy's unit does not divide the
    /// block; [`Error::InodeNumber`] for an IV_INO_LBLK policy on an
    /// inode number beyond 32 bits.
    ///
    /// See [`ContentsCipher`] for an example.
    pub fn new(
        master: &MasterKey,
        ctx: &Context,
        ino: u64,
        fs: &FsInfo,
    ) -> Result<ContentsCipher, Error> {
        let policy = ctx.policy();
        master.check(policy)?;
        let mode = policy.contents();
        let unit_len = policy.data_unit_size(fs.block_size);
        if unit_len < 16 || !fs.block_size.is_multiple_of(unit_len) {
            return Err(Error::DataUnitSize {
                unit: unit_len,
                block: fs.block_size,
            });
        }
        let unit = DataUnitSize::new(unit_len as usize)?;
        let key = master.derive(policy, mode, ctx.nonce(), &fs.uuid)?;
        let cipher = match mode {
            Mode::Aes256Xts => Contents::Xts(XtsAes256::new(key.as_bytes())?),
            Mode::Aes128CbcEssiv => Contents::Essiv {
                cbc: Cbc::new(key.as_bytes())?,
                essiv: Essiv::new(key.as_bytes())?,
            },
            Mode::Adiantum => Contents::Adiantum(Adiantum::new(key.as_bytes())?),
            mode => return Err(Error::Unsupported { mode }),
        };
        Ok(ContentsCipher {
            cipher,
            ivs: IvScheme::new(master, policy, ctx.nonce(), ino)?,
            unit,
            units_per_block: u64::from(fs.block_size / unit_len),
        })
    }

    /// The data-unit size in bytes.
    ///
    /// ```
    /// # use mdu_fscrypt::{ContentsCipher, FsInfo, key::MasterKey, policy::{Context, Flags, KeySpec, Mode, Policy}};
    /// # let master = MasterKey::new(&[7; 64])?;
    /// let policy = Policy::new(Mode::Aes256Xts, Mode::Aes256Cts, Flags::default(), 9,
    ///     KeySpec::V2 { identifier: master.identifier().0 })?;
    /// let fs = FsInfo { uuid: [0; 16], block_size: 4096 };
    /// let file = ContentsCipher::new(&master, &Context::new(policy, [1; 16]), 12, &fs)?;
    /// assert_eq!(file.unit_len(), 512);
    /// # Ok::<(), mdu_fscrypt::Error>(())
    /// ```
    pub fn unit_len(&self) -> usize {
        self.unit.get()
    }

    /// Decrypts the file's data units from `first_unit` on, in place;
    /// `buf` is a whole number of units.
    ///
    /// # Errors
    ///
    /// [`Error::Request`] when `buf` is not a whole number of units;
    /// [`Error::UnitIndex`] past the IV_INO_LBLK_64 limit. `buf` is then
    /// unchanged.
    ///
    /// See [`ContentsCipher`] for the block-wise form.
    pub fn decrypt_units(&self, first_unit: u64, buf: &mut [u8]) -> Result<(), Error> {
        self.crypt(Direction::Decrypt, first_unit, buf)
    }

    /// Encrypts the file's data units from `first_unit` on, in place.
    ///
    /// # Errors
    ///
    /// As for [`decrypt_units`](Self::decrypt_units).
    ///
    /// See [`ContentsCipher`] for the block-wise form.
    pub fn encrypt_units(&self, first_unit: u64, buf: &mut [u8]) -> Result<(), Error> {
        self.crypt(Direction::Encrypt, first_unit, buf)
    }

    /// Decrypts whole file-system blocks from logical block `lblk` on, in
    /// place.
    ///
    /// # Errors
    ///
    /// As for [`decrypt_units`](Self::decrypt_units).
    ///
    /// See [`ContentsCipher`].
    pub fn decrypt_blocks(&self, lblk: u64, buf: &mut [u8]) -> Result<(), Error> {
        self.crypt(Direction::Decrypt, self.first_unit(lblk)?, buf)
    }

    /// Encrypts whole file-system blocks from logical block `lblk` on, in
    /// place.
    ///
    /// # Errors
    ///
    /// As for [`decrypt_units`](Self::decrypt_units).
    ///
    /// See [`ContentsCipher`].
    pub fn encrypt_blocks(&self, lblk: u64, buf: &mut [u8]) -> Result<(), Error> {
        self.crypt(Direction::Encrypt, self.first_unit(lblk)?, buf)
    }

    fn first_unit(&self, lblk: u64) -> Result<u64, Error> {
        lblk.checked_mul(self.units_per_block)
            .ok_or(Error::UnitIndex { index: u64::MAX })
    }

    fn crypt(&self, dir: Direction, first_unit: u64, buf: &mut [u8]) -> Result<(), Error> {
        let unit = self.unit.get();
        if !buf.len().is_multiple_of(unit) {
            return Err(Error::Request(mdu_core::Error::LengthNotMultiple {
                len: buf.len(),
                unit,
            }));
        }
        let count = (buf.len() / unit) as u64;
        // Check every run before the first byte changes.
        let mut runs = Vec::new();
        let (mut index, mut left) = (first_unit, count);
        while left > 0 {
            let n = self.ivs.run(index, left)?;
            runs.push((self.ivs.wide_iv(index)?, n));
            index = index.wrapping_add(n);
            left -= n;
        }
        let mut rest = buf;
        for (wide, n) in runs {
            let (run, tail) = rest.split_at_mut(n as usize * unit);
            let iv = Iv::from_slice(&wide.0[..16]).expect("16 bytes");
            match &self.cipher {
                Contents::Xts(xts) => xts.crypt_units(dir, iv, 1, self.unit, run)?,
                Contents::Adiantum(a) => a.crypt_units(dir, wide, 1, self.unit, run)?,
                Contents::Essiv { cbc, essiv } => {
                    // IV' = AES-256(SHA-256(key), IV), every unit's in one
                    // batch.
                    let mut ivs: Vec<Iv> = (0..n).map(|i| iv.advance(u128::from(i))).collect();
                    essiv.encrypt_ivs(&mut ivs);
                    cbc.crypt_units_with_ivs(dir, &ivs, self.unit, run)?;
                }
            }
            rest = tail;
        }
        Ok(())
    }
}
