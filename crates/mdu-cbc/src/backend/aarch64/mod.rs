//! arm64 backends; the key schedule, the round functions and the round-key
//! loading are `mdu-aes`'s, the CBC algorithm itself is `backend::driver`.

pub(crate) mod ce;
