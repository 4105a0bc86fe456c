//! Criterion benchmarks of XTS-AES: every case of
//! `mdu_bench::registry::xts` (the report's XTS tables), each checked
//! before it is timed, as criterion groups `<table>/<case>`.
#![allow(missing_docs)]

mdu_bench::criterion_registry!(mdu_bench::registry::xts::groups());
