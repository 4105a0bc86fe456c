//! VAES on ymm registers (AVX2, no AVX-512 needed): sixteen units' CBC
//! chains side by side when encrypting, sixteen blocks in flight when
//! decrypting.
//!
//! * Encryption: lane `k` of a ymm register is one unit, so block `j` of
//!   units `u` and `u + 1` are gathered into one register (two loads and a
//!   `vinserti128`) and scattered back (a store of each half). Eight
//!   registers are sixteen independent chains: AES latency times throughput
//!   on the cores with VAES on ymm if the latency is 4 cycles at two
//!   instructions per cycle; where it is longer, eight chains leave part of
//!   the ymm AES throughput idle (measured on a Xeon with AVX-512: 75 to 80%
//!   of the ymm ECB rate, where zmm's four chains at one per cycle reach
//!   93%). The gathers and scatters run on the
//!   load, store and shuffle ports, away from the AES unit, which stays the
//!   bottleneck: encryption measures at the rate of decryption (the ECB
//!   rate), so transposing two consecutive blocks of each unit instead
//!   (fewer loads, more live registers where ymm has only sixteen) has
//!   nothing left to win.
//! * Decryption: two consecutive blocks per register; the ciphertext one
//!   block back is `vperm2i128` of the register and the one before it.
//! * Eight states and eight inputs fill the sixteen ymm registers: the
//!   round keys (broadcast to both lanes once per request) are memory
//!   operands, one fused load per round.

// In flight: eight ymm registers: sixteen units or blocks.
crate::backend::driver::entry_points!(mdu_aes::__private::vector::Ymm, 8, Vaes256);
