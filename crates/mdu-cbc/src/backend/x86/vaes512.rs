//! VAES on zmm registers (AVX-512): sixteen units' CBC chains side by side
//! when encrypting, sixteen blocks in flight when decrypting.
//!
//! * Encryption: lane `k` of a zmm register is one unit, so block `j` of
//!   four units is gathered into one register (four loads, three
//!   `vinserti32x4`) and scattered back (a store and three
//!   `vextracti32x4` to memory). Four registers are sixteen independent
//!   chains: VAES on zmm issues one instruction per cycle at a latency of
//!   about four, so four registers of chains keep it busy. The gathers run
//!   on the load and shuffle ports, away from the AES unit, which stays the
//!   bottleneck: encryption measures within a few percent of decryption,
//!   which runs at the ECB rate, so transposing four consecutive blocks of
//!   each unit instead (fewer loads, sixteen more live registers) cannot
//!   gain more than those few percent.
//!   "Block `j` of the input ^ state ^ round key 0" is one `vpternlogq`.
//! * Decryption: four consecutive blocks per register; the ciphertext one
//!   block back is one `valignq` of the register and the one before it.
//! * Four states, four inputs and the fifteen round keys (broadcast to all
//!   lanes once per request) fit the 32 zmm registers.

// In flight: four zmm registers: sixteen units or blocks.
crate::backend::driver::entry_points!(mdu_aes::vector::Zmm, 4, "aes,avx2,avx512f,vaes", Vaes512);
