//! Criterion benchmarks of AES-CBC, the dm-crypt IV modes and explicit-IV
//! batches: every case of `mdu_bench::registry::cbc` (the report's CBC
//! tables), each checked before it is timed, as criterion groups
//! `<table>/<case>`.
#![allow(missing_docs)]

mdu_bench::criterion_registry!(mdu_bench::registry::cbc::groups());
