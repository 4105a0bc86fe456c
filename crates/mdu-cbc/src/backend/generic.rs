//! The portable backend: CBC on top of the RustCrypto `aes` crate.
//!
//! It compiles on every target, contains no `unsafe`, and is the reference
//! every other backend is tested against byte for byte.
#![deny(unsafe_code)]

use alloc::boxed::Box;

use aes::Block;
use aes::cipher::Key;
use mdu_aes::__private::{BlockAes, Ivs};
use mdu_core::Direction;

/// The key `key`, which has the AES key length of `A` (checked by the
/// caller), expanded into a new heap allocation; the `aes` ciphers zeroize
/// their round keys on drop (its `zeroize` feature). The crate returns the
/// schedule by value, so it may pass through the stack: this is not
/// inlined, and the caller wipes the stack once it returns.
#[inline(never)]
pub(crate) fn boxed<A: BlockAes>(key: &[u8]) -> Box<A> {
    let key = <&Key<A>>::try_from(key).unwrap_or_else(|_| unreachable!("checked key length"));
    Box::write(Box::new_uninit(), A::new(key))
}

/// A key of any length `A` accepts (`KeyInit::new_from_slice`: Serpent
/// and Twofish take 16, 24 or 32 bytes), expanded into a new heap
/// allocation; `None` when `A` refuses the length (the caller wipes the
/// stack).
#[inline(never)]
pub(crate) fn boxed_from_slice<A: BlockAes>(key: &[u8]) -> Option<Box<A>> {
    let a = A::new_from_slice(key).ok()?;
    Some(Box::write(Box::new_uninit(), a))
}

/// A copy in a new heap allocation (the caller wipes the stack).
#[inline(never)]
pub(crate) fn boxed_clone<A: BlockAes>(a: &A) -> Box<A> {
    Box::write(Box::new_uninit(), a.clone())
}

/// Blocks handed to the `aes` crate at once when decrypting (it pipelines
/// them).
const CHUNK: usize = 16;

/// One unit (a whole number of blocks) in place under `iv`.
pub(crate) fn crypt_unit<A: BlockAes>(aes: &A, dir: Direction, iv: [u8; 16], unit: &mut [u8]) {
    let (blocks, _) = unit.as_chunks_mut::<16>();
    match dir {
        Direction::Encrypt => {
            // One serial chain: each block waits for the one before.
            let mut prev = iv;
            for b in blocks {
                let mut x = Block::from(xor(b, &prev));
                aes.encrypt_block(&mut x);
                prev = x.into();
                *b = prev;
            }
        }
        Direction::Decrypt => {
            // Every block decrypts on its own: `CHUNK` at a time, then each
            // is XORed with the ciphertext before it (kept aside, since an
            // in-place request overwrites it).
            let mut prev = iv;
            let mut cts = [[0u8; 16]; CHUNK];
            let mut scratch = [Block::default(); CHUNK];
            for chunk in blocks.chunks_mut(CHUNK) {
                let n = chunk.len();
                for ((c, s), b) in cts.iter_mut().zip(scratch.iter_mut()).zip(chunk.iter()) {
                    *c = *b;
                    *s = Block::from(*b);
                }
                aes.decrypt_blocks(&mut scratch[..n]);
                for (i, b) in chunk.iter_mut().enumerate() {
                    let before = if i == 0 { prev } else { cts[i - 1] };
                    *b = xor(&scratch[i].into(), &before);
                }
                prev = cts[n - 1];
            }
            // The plaintext of the last chunk: cleared, and kept cleared
            // through optimization (`optimization_barrier`), once per unit.
            scratch.fill(Block::default());
            zeroize::optimization_barrier(&scratch);
        }
    }
}

/// `a ^ b` for two blocks.
#[inline]
fn xor(a: &[u8; 16], b: &[u8; 16]) -> [u8; 16] {
    (u128::from_ne_bytes(*a) ^ u128::from_ne_bytes(*b)).to_ne_bytes()
}

/// Runs a validated request in place: `buf` holds whole units of `unit`
/// bytes (a multiple of 16), unit `i` under IV `i` of `ivs`.
pub(crate) fn crypt<A: BlockAes>(
    aes: &A,
    dir: Direction,
    ivs: &Ivs<'_>,
    unit: usize,
    buf: &mut [u8],
) {
    for (i, chunk) in buf.chunks_exact_mut(unit).enumerate() {
        crypt_unit(aes, dir, ivs.get(i).to_le_bytes(), chunk);
    }
}
