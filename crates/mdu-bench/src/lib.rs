//! The mdu benchmarks, used by both the criterion benches and the
//! `mdu-bench` report: the registry of every case they measure, the AES
//! and memcpy bounds, the C baselines
//! (built with `cc`), the ISA-L peer of the FEC encoder (when `libisal`
//! is installed) and a recent OpenSSL as a peer of XTS and CBC (release
//! builds).

pub mod bound;
pub mod buffer;
pub mod isal;
pub mod kernel_c;
pub mod openssl_peer;
pub mod registry;
