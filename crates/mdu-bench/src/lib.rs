//! Shared pieces of the mdu benchmarks, used by both the criterion benches
//! and the `mdu-bench` report: the AES and memcpy bounds, and the C
//! baselines (built with `cc`).

pub mod bound;
pub mod buffer;
pub mod kernel_c;
