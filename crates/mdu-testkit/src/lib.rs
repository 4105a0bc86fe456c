//! Test support of the mdu workspace. Not published: the crates list it
//! as a dev-dependency, so it never reaches a user's build.
//!
//! * [`backends`]: which x86-64 SIMD backends a test run exercised, and the
//!   `MDU_REQUIRE_X86_BACKENDS` switch that makes a missing one a failure.
//!   The registry of backends is read from the crates themselves.
//! * [`cpus`]: the profiles of real CPUs (Westmere to Zen 4, Neoverse N1,
//!   Cortex-A72) and [`check_selection`](cpus::check_selection), which
//!   runs a family's backend selection on each of them.
//! * [`tools`]: the outside reference tools of the interop tests
//!   (`cryptsetup`, `veritysetup`, `fsverity`, Python's `cryptography`),
//!   and `MDU_REQUIRE_TOOLS` / `MDU_SKIP_TOOLS`, which decide what a
//!   missing one means.
//! * [`fixtures`]: [`hex`] and [`unhex`], and [`Rng`], the deterministic
//!   generator of the tests' inputs (seeded per test with
//!   `MDU_TEST_SEED` to replay one).
//!
//! The conformance harness every cipher runs (`check_cipher`) is part of
//! the published API and stays in `mdu_core::testing`.

pub mod backends;
pub mod cpus;
pub mod fixtures;
pub mod tools;

pub use fixtures::{Rng, hex, unhex};
