//! Criterion benchmarks of fscrypt contents and names: every case of
//! `mdu_bench::registry::fscrypt` (the report's fscrypt tables), each
//! checked before it is timed, as criterion groups `<table>/<case>`.
#![allow(missing_docs)]

mdu_bench::criterion_registry!(mdu_bench::registry::fscrypt::groups());
