//! VAES on zmm registers (AVX-512): sixteen units' CBC chains side by side
//! when encrypting, sixteen blocks in flight when decrypting.
//!
//! * Encryption: lane `k` of a zmm register is one unit, so block `j` of
//!   four units is gathered into one register (four loads, two ymm
//!   `vinserti128` from memory, one `vinserti64x4`) and scattered back (one
//!   `vextracti64x4`, two stores, two ymm `vextracti128` to memory): two
//!   512-bit shuffles per block instead of the six of `vinserti32x4` /
//!   `vextracti32x4`, 2-12% faster on Zen 4, whose zmm shuffles share the
//!   pipes of the AES rounds. Four registers are sixteen independent
//!   chains: VAES on zmm issues one instruction per cycle at a latency of
//!   four (measured on Zen 4), so four registers of chains keep it busy
//!   only if nothing else competes for its pipes. On a Xeon (Emerald
//!   Rapids) encryption measured 93% of the zmm ECB rate; on Zen 4 it
//!   measures 63-70%, below the ymm backend's sixteen chains in eight
//!   registers on the same CPU, and eight zmm registers of chains (spilled
//!   round keys) gained 0-9% more at 512-byte units and lost at 4 KiB.
//!   "Block `j` of the input ^ state ^ round key 0" is one `vpternlogq`.
//! * Decryption: four consecutive blocks per register; the ciphertext one
//!   block back is one `valignq` of the register and the one before it.
//! * Four states, four inputs and the fifteen round keys (broadcast to all
//!   lanes once per request) fit the 32 zmm registers.

// In flight: four zmm registers: sixteen units or blocks.
crate::backend::driver::entry_points!(mdu_aes::__private::vector::Zmm, 4, Vaes512);
