//! Criterion benchmarks of base64: every case of
//! `mdu_bench::registry::base64` (the report's base64 tables), each
//! checked before it is timed, as criterion groups `<table>/<case>`, with
//! short warm-ups and measurements (the cases take nanoseconds to
//! microseconds).
#![allow(missing_docs)]

mdu_bench::criterion_registry!(
    mdu_bench::registry::base64::groups(),
    config = criterion::Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_millis(1200))
);
