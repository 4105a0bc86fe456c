//! CPU features as data, from the workspace's one vocabulary
//! (`mdu_platform::cpu`); and the table of backend lists that
//! `Backend::available` hands out without `std`.

/// The CPU features the backends depend on, detected once per process:
/// `mdu_platform::cpu::Features` under the name the AES modes use. Each
/// crate's selection (`Backend::runs_on`) is a pure function of this value,
/// tested on the profiles of real CPUs.
///
/// ```
/// use mdu_aes::CpuFeatures;
///
/// let westmere = CpuFeatures { aes: true, pclmulqdq: true, ..CpuFeatures::default() };
/// assert!(!westmere.avx2);
/// assert_eq!(CpuFeatures::get(), mdu_platform::cpu::Features::get());
/// ```
pub use mdu_platform::cpu::Features as CpuFeatures;

/// Every list of backends a CPU can have: entry `mask` holds the first
/// four of `all` whose bit is set in `mask`, in order, then `all[4]` (the
/// portable backend, always available), and its length.
///
/// A crate keeps the table in a `static` and hands out
/// `&TABLE[mask].0[..TABLE[mask].1]` as its `&'static [Backend]`, with no
/// allocation and no `std`.
///
/// ```
/// let t = mdu_aes::subsets(['a', 'b', 'c', 'd', 'g']);
/// assert_eq!(&t[0b0101].0[..t[0b0101].1], ['a', 'c', 'g']);
/// assert_eq!(&t[0].0[..t[0].1], ['g']);
/// ```
pub const fn subsets<T: Copy>(all: [T; 5]) -> [([T; 5], usize); 16] {
    let mut out = [(all, 0); 16];
    let mut mask = 0;
    while mask < 16 {
        let mut n = 0;
        let mut i = 0;
        while i < 4 {
            if mask & (1 << i) != 0 {
                out[mask].0[n] = all[i];
                n += 1;
            }
            i += 1;
        }
        out[mask].0[n] = all[4];
        out[mask].1 = n + 1;
        mask += 1;
    }
    out
}
