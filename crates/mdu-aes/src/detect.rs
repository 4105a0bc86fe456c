//! CPU features as data, from the workspace's one vocabulary
//! (`mdu_platform::cpu`).

/// The CPU features the backends depend on, detected once per process:
/// `mdu_platform::cpu::Features` under the name the AES modes use. Each
/// crate's selection (`Backend::runs_on`) is a pure function of this value,
/// tested on the profiles of real CPUs.
///
/// ```
/// use mdu_aes::__private::CpuFeatures;
///
/// let westmere = CpuFeatures { aes: true, pclmulqdq: true, ..CpuFeatures::default() };
/// assert!(!westmere.avx2);
/// assert_eq!(CpuFeatures::get(), mdu_platform::cpu::Features::get());
/// ```
pub use mdu_platform::cpu::Features as CpuFeatures;
