//! x86_64 backends.

pub(super) mod avx512;
pub(super) mod shani;
