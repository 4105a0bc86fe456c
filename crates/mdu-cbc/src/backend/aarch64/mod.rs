//! arm64 backends; the key schedule, the vectors and the AES rounds are
//! `mdu-aes`'s, the CBC algorithm itself is `backend::driver`.

pub(crate) mod ce;
