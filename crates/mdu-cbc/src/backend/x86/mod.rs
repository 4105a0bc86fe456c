//! x86_64 backends: one `#[target_feature]` entry point pair per width; the
//! vectors and AES rounds are `mdu_aes::vector`'s, the key schedule
//! `mdu-aes`'s, the CBC algorithm itself is `backend::driver`.

pub(crate) mod aesni;
pub(crate) mod vaes256;
pub(crate) mod vaes512;
