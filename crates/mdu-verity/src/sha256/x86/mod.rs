//! x86_64 backends.

pub(super) mod shani;
