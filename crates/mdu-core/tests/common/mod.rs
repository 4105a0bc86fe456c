//! Test-only toy ciphers. They are NOT secure; they only make every IV, byte
//! position and direction visible in the output.

#![allow(dead_code, unreachable_pub, unused_imports)]

use std::cell::Cell;

use mdu_core::{DataUnitCipher, DataUnitSize, Direction, Error, Iv, check_request};

/// The keystream byte for position `pos` of a unit under `iv`: depends on
/// every IV byte, the position and the key.
fn pad(key: u64, iv: Iv, pos: usize) -> u8 {
    let mut x = key ^ iv.to_u128() as u64 ^ ((iv.to_u128() >> 64) as u64).rotate_left(17);
    x ^= (pos as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (x ^ (x >> 32)) as u8
}

/// Adds a keystream on encryption and subtracts it on decryption, and also
/// mixes each byte into the next, so that byte order and direction matter.
#[derive(Clone, Copy, Debug)]
pub struct Toy {
    pub key: u64,
}

impl Toy {
    fn enc(&self, iv: Iv, unit: &mut [u8]) {
        let mut prev = 0u8;
        for (i, b) in unit.iter_mut().enumerate() {
            *b = b.wrapping_add(pad(self.key, iv, i)).wrapping_add(prev);
            prev = *b;
        }
    }

    fn dec(&self, iv: Iv, unit: &mut [u8]) {
        let mut prev = 0u8;
        for (i, b) in unit.iter_mut().enumerate() {
            let c = *b;
            *b = c.wrapping_sub(prev).wrapping_sub(pad(self.key, iv, i));
            prev = c;
        }
    }
}

impl DataUnitCipher for Toy {
    type Iv = Iv;
    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(unit.len())?;
        self.enc(iv, unit);
        Ok(())
    }

    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(unit.len())?;
        self.dec(iv, unit);
        Ok(())
    }
}

/// The same cipher with a "native" multi-unit path that walks the buffer
/// back to front and derives each IV by multiplication rather than by
/// repeated addition, so it shares no loop with the auto-splitter.
#[derive(Clone, Copy, Debug)]
pub struct NativeToy(pub Toy);

impl NativeToy {
    fn units(
        &self,
        dir: Direction,
        iv: Iv,
        step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        check_request::<Self>(unit, buf.len())?;
        let n = buf.len() / unit.get();
        for i in (0..n).rev() {
            let iv_i = iv.advance(i as u128 * u128::from(step));
            let chunk = &mut buf[i * unit.get()..(i + 1) * unit.get()];
            if dir.is_encrypt() {
                self.0.enc(iv_i, chunk);
            } else {
                self.0.dec(iv_i, chunk);
            }
        }
        Ok(())
    }
}

impl DataUnitCipher for NativeToy {
    type Iv = Iv;
    const NATIVE_MULTI_UNIT: bool = true;

    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.0.encrypt_unit(iv, unit)
    }
    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.0.decrypt_unit(iv, unit)
    }
    fn crypt_units(
        &self,
        dir: Direction,
        iv: Iv,
        step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.units(dir, iv, step, unit, buf)
    }
    fn crypt_units_with_ivs(
        &self,
        dir: Direction,
        ivs: &[Iv],
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        let n = mdu_core::check_request_with_ivs::<Self>(unit, ivs.len(), buf.len())?;
        // Back to front, like the consecutive path.
        for i in (0..n).rev() {
            let chunk = &mut buf[i * unit.get()..(i + 1) * unit.get()];
            if dir.is_encrypt() {
                self.0.enc(ivs[i], chunk);
            } else {
                self.0.dec(ivs[i], chunk);
            }
        }
        Ok(())
    }
}

/// Counts how the cipher is called, to check the walks' shape.
#[derive(Debug, Default)]
pub struct Counting {
    pub toy: Option<Toy>,
    pub unit_calls: Cell<usize>,
    pub multi_calls: Cell<usize>,
    pub multi_units: Cell<usize>,
}

impl Counting {
    fn toy(&self) -> Toy {
        self.toy.unwrap_or(Toy { key: 1 })
    }
}

impl DataUnitCipher for Counting {
    type Iv = Iv;
    const NATIVE_MULTI_UNIT: bool = true;

    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.unit_calls.set(self.unit_calls.get() + 1);
        self.toy().encrypt_unit(iv, unit)
    }
    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.unit_calls.set(self.unit_calls.get() + 1);
        self.toy().decrypt_unit(iv, unit)
    }
    fn crypt_units(
        &self,
        dir: Direction,
        iv: Iv,
        step: u64,
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.multi_calls.set(self.multi_calls.get() + 1);
        self.multi_units
            .set(self.multi_units.get() + buf.len() / unit.get());
        NativeToy(self.toy()).crypt_units(dir, iv, step, unit, buf)
    }
    fn crypt_units_with_ivs(
        &self,
        dir: Direction,
        ivs: &[Iv],
        unit: DataUnitSize,
        buf: &mut [u8],
    ) -> Result<(), Error> {
        self.multi_calls.set(self.multi_calls.get() + 1);
        self.multi_units
            .set(self.multi_units.get() + buf.len() / unit.get());
        NativeToy(self.toy()).crypt_units_with_ivs(dir, ivs, unit, buf)
    }
}

pub use mdu_core::testing::{split, split_mut};

/// A block cipher shape: units must be whole 16-byte blocks (like CBC).
#[derive(Clone, Copy, Debug)]
pub struct BlockToy(pub Toy);

impl DataUnitCipher for BlockToy {
    type Iv = Iv;
    const UNIT_ALIGN: usize = 16;

    fn encrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(unit.len())?;
        self.0.encrypt_unit(iv, unit)
    }
    fn decrypt_unit(&self, iv: Iv, unit: &mut [u8]) -> Result<(), Error> {
        self.check_unit_len(unit.len())?;
        self.0.decrypt_unit(iv, unit)
    }
}
