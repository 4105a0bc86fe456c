//! The Armv8 Crypto Extensions (`AESE`/`AESMC`, `AESD`/`AESIMC`) on 128-bit
//! vector registers: eight units' CBC chains side by side when encrypting,
//! eight blocks in flight when decrypting.
//!
//! One block per register, so a unit's block is a plain load and the
//! ciphertext one block back is the previous register. `AESE` adds its
//! round key first, so a chain step is `AESE(x ^ s, rk0)`, `AESMC`, ...,
//! `AESE(.., rk[NR-1])` and a plain XOR with the last round key; decryption
//! folds the previous ciphertext into that last XOR. Eight states, eight
//! inputs and the fifteen round keys of AES-256 fit the 32 vector
//! registers.

// In flight: eight units or blocks.
crate::backend::driver::entry_points!(mdu_aes::__private::vector::Neon, 8, ArmCe);
