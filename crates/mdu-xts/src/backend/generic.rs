//! The portable backend: XTS on top of the RustCrypto `aes` crate.
//!
//! It compiles on every target, contains no `unsafe`, and is the reference
//! every other backend is tested against byte for byte.
#![deny(unsafe_code)]

use alloc::boxed::Box;

use aes::Block;
use aes::cipher::Key;
use mdu_aes::__private::{BlockAes, Ivs};
use mdu_core::{Direction, Iv};

/// The data key K1 and the tweak key K2. The `aes` ciphers zeroize their
/// round keys on drop (its `zeroize` feature).
///
/// The `aes` crate expands a key into a value it returns, so its schedule
/// may pass through the stack on the way to the heap; [`Keys::boxed`] and
/// [`Keys::boxed_clone`] are not inlined, and their callers wipe the stack
/// they used once they return (`mdu_aes::__private::wipe::after_key_setup`).
pub struct Keys<A> {
    data: A,
    tweak: A,
}

impl<A: BlockAes> Keys<A> {
    /// The keys `k1` and `k2`, which have the AES key length of `A`
    /// (checked by the caller), expanded into a new heap allocation. The
    /// key bytes are read in place, never copied.
    #[inline(never)]
    pub(crate) fn boxed(k1: &[u8], k2: &[u8]) -> Box<Keys<A>> {
        // The caller passes the two halves of a key whose length it checked.
        let key = |k| <&Key<A>>::try_from(k).unwrap_or_else(|_| unreachable!("checked key length"));
        let (k1, k2) = (key(k1), key(k2));
        Box::write(
            Box::new_uninit(),
            Keys {
                data: A::new(k1),
                tweak: A::new(k2),
            },
        )
    }

    /// The keys `k1` and `k2`, of any lengths `A` accepts
    /// (`KeyInit::new_from_slice`: Serpent and Twofish take 16, 24 or 32
    /// bytes), expanded into a new heap allocation; `None` when `A`
    /// refuses either length.
    #[inline(never)]
    pub(crate) fn boxed_from_slices(k1: &[u8], k2: &[u8]) -> Option<Box<Keys<A>>> {
        let data = A::new_from_slice(k1).ok()?;
        let tweak = A::new_from_slice(k2).ok()?;
        Some(Box::write(Box::new_uninit(), Keys { data, tweak }))
    }

    /// A copy in a new heap allocation.
    #[inline(never)]
    pub(crate) fn boxed_clone(&self) -> Box<Keys<A>> {
        Box::write(
            Box::new_uninit(),
            Keys {
                data: self.data.clone(),
                tweak: self.tweak.clone(),
            },
        )
    }
}

/// Both keys are block ciphers of [`BlockAes`], which zeroize their
/// schedules on drop.
impl<A: BlockAes> zeroize::ZeroizeOnDrop for Keys<A> {}

/// Multiplies a tweak by x in GF(2^128) (little-endian convention).
#[inline]
fn mul_x(t: u128) -> u128 {
    (t << 1) ^ (((t >> 127) as u8 as u128) * 0x87)
}

/// Blocks handed to the `aes` crate at once (it pipelines them).
const CHUNK: usize = 16;

/// Encrypts or decrypts `blocks.len() / 16` whole blocks, block `j` under
/// tweak `t * x^j`; returns the tweak of the block after the last.
fn crypt_blocks<A: BlockAes>(keys: &Keys<A>, enc: bool, mut t: u128, data: &mut [u8]) -> u128 {
    let mut scratch = [Block::default(); CHUNK];
    let mut tweaks = [0u128; CHUNK];
    for chunk in data.chunks_mut(16 * CHUNK) {
        let n = chunk.len() / 16;
        for ((block, tweak), bytes) in scratch.iter_mut().zip(&mut tweaks).zip(chunk.chunks(16)) {
            *tweak = t;
            let v = u128::from_le_bytes(bytes.try_into().unwrap_or([0; 16])) ^ t;
            block.copy_from_slice(&v.to_le_bytes());
            t = mul_x(t);
        }
        if enc {
            keys.data.encrypt_blocks(&mut scratch[..n]);
        } else {
            keys.data.decrypt_blocks(&mut scratch[..n]);
        }
        for ((block, tweak), bytes) in scratch.iter().zip(&tweaks).zip(chunk.chunks_mut(16)) {
            let v = u128::from_le_bytes(block.0) ^ tweak;
            bytes.copy_from_slice(&v.to_le_bytes());
        }
    }
    // The blocks and tweaks of the last chunk: cleared, and kept cleared
    // through optimization (`optimization_barrier`), once per call.
    scratch.fill(Block::default());
    tweaks.fill(0);
    zeroize::optimization_barrier(&scratch);
    zeroize::optimization_barrier(&tweaks);
    t
}

/// One block under tweak `t`.
fn crypt_block<A: BlockAes>(keys: &Keys<A>, enc: bool, t: u128, block: &mut [u8; 16]) {
    let mut b = Block::from((u128::from_le_bytes(*block) ^ t).to_le_bytes());
    if enc {
        keys.data.encrypt_block(&mut b);
    } else {
        keys.data.decrypt_block(&mut b);
    }
    *block = (u128::from_le_bytes(b.0) ^ t).to_le_bytes();
}

/// One data unit (any length >= 16) in place, with ciphertext stealing.
pub(crate) fn crypt_unit<A: BlockAes>(keys: &Keys<A>, enc: bool, iv: Iv, unit: &mut [u8]) {
    let mut t = Block::from(iv.0);
    keys.tweak.encrypt_block(&mut t);
    let t = u128::from_le_bytes(t.0);
    let full = unit.len() / 16;
    let rem = unit.len() % 16;
    if rem == 0 {
        crypt_blocks(keys, enc, t, unit);
        return;
    }
    // Stealing: the last full block and the partial one are handled apart.
    let bulk = 16 * (full - 1);
    let t_last = crypt_blocks(keys, enc, t, &mut unit[..bulk]);
    let t_next = mul_x(t_last);
    let (last, partial) = unit[bulk..].split_at_mut(16);
    let mut block: [u8; 16] = (&*last).try_into().unwrap_or([0; 16]);
    // Encryption: the last full block goes first under its own tweak, the
    // rebuilt block under the next. Decryption swaps the two tweaks.
    let (first_tweak, second_tweak) = if enc {
        (t_last, t_next)
    } else {
        (t_next, t_last)
    };
    crypt_block(keys, enc, first_tweak, &mut block);
    let mut rebuilt = block;
    rebuilt[..rem].copy_from_slice(partial);
    partial.copy_from_slice(&block[..rem]);
    crypt_block(keys, enc, second_tweak, &mut rebuilt);
    last.copy_from_slice(&rebuilt);
}

/// Runs a validated request in place: `buf` holds whole units of `unit`
/// bytes, unit `i` under IV `i` of `ivs`.
pub(crate) fn crypt<A: BlockAes>(
    keys: &Keys<A>,
    dir: Direction,
    ivs: &Ivs<'_>,
    unit: usize,
    buf: &mut [u8],
) {
    let enc = dir.is_encrypt();
    for (i, chunk) in buf.chunks_exact_mut(unit).enumerate() {
        crypt_unit(keys, enc, Iv::from_u128(ivs.get(i)), chunk);
    }
}
