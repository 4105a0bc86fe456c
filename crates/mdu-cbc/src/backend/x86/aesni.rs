//! AES-NI on xmm registers: eight units' CBC chains side by side when
//! encrypting, eight blocks in flight when decrypting.
//!
//! One block per register, so a unit's block is a plain load (no gather)
//! and the ciphertext one block back is the previous register. Eight
//! chains at AES-NI's latency of 3 to 4 cycles and throughput of one or two
//! per cycle keep the AES unit busy; the round keys are memory operands
//! (eight states and eight inputs fill the sixteen xmm registers).

// In flight: eight units or blocks.
crate::backend::driver::entry_points!(mdu_aes::__private::vector::Xmm, 8, AesNi);
