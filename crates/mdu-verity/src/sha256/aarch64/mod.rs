//! aarch64 backends.

pub(super) mod ce;
