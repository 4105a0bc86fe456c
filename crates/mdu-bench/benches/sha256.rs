//! Criterion benchmarks of SHA-256: every case of
//! `mdu_bench::registry::sha256` (the report's SHA-256 tables), each
//! checked before it is timed, as criterion groups `<table>/<case>`.
#![allow(missing_docs)]

mdu_bench::criterion_registry!(mdu_bench::registry::sha256::groups());
