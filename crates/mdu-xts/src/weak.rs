//! The weak-key rule of XTS, written once: a key whose two halves (the
//! data key K1 and the tweak key K2) are equal is weak. The XTS ciphers of
//! this crate apply it in their constructors, and every policy of the
//! workspace (dm-crypt's `WeakKeys`, hence LUKS2 and the `mdu` tool) calls
//! [`verify_key`].

use crate::SetupError;

/// What [`SetupError::WeakKey`] says of an XTS key with equal halves.
const EQUAL_HALVES: &str = "the two key halves are equal (XTS data key = tweak key), which \
                            the kernel refuses wherever weak keys are forbidden; accepting it \
                            takes an explicit opt-in";

/// The weak-key rule of XTS, as the kernel's `xts_verify_key` applies it
/// where weak keys are forbidden: the two halves of `key` (both XTS keys
/// together, 32 or 64 bytes) must differ. They are compared without an
/// early exit. A key of odd length has no equal halves.
///
/// # Errors
///
/// [`SetupError::WeakKey`] if the halves are equal.
///
/// ```
/// use mdu_xts::{SetupError, verify_key};
/// assert!(verify_key(&(0..64).collect::<Vec<u8>>()).is_ok());
/// assert!(matches!(verify_key(&[7; 64]), Err(SetupError::WeakKey { .. })));
/// ```
pub fn verify_key(key: &[u8]) -> Result<(), SetupError> {
    let (k1, k2) = key.split_at(key.len() / 2);
    let equal =
        k1.len() == k2.len() && k1.iter().zip(k2).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    if equal {
        return Err(SetupError::WeakKey {
            reason: EQUAL_HALVES,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_differing_byte_anywhere_makes_a_key_strong() {
        for len in [32, 64] {
            let mut key = alloc::vec![0x5au8; len];
            assert!(verify_key(&key).is_err());
            for i in [0, len / 2 - 1, len / 2, len - 1] {
                key[i] ^= 1;
                assert!(verify_key(&key).is_ok(), "{len} {i}");
                key[i] ^= 1;
            }
        }
        assert!(verify_key(&[1, 1, 1]).is_ok());
    }
}
