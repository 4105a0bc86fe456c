//! Criterion benchmarks of the Merkle trees and FEC parity over 64 MiB on
//! one thread and on every core: every case of
//! `mdu_bench::registry::verity` (the report's verity tables), each
//! checked before it is timed, as criterion groups `<table>/<case>`.
#![allow(missing_docs)]

mdu_bench::criterion_registry!(mdu_bench::registry::verity::groups(
    64 << 20,
    std::thread::available_parallelism().map_or(1, |n| n.get())
));
