//! The one shape of backend selection: a family of interchangeable
//! implementations ([`BackendSet`]), each declaring what it needs of the
//! CPU, and the selection written once over them.
//!
//! Every family of kernels in mdu (the AES modes, base64, SHA-256, FEC)
//! is an enum of backends that produce the same bytes and differ in speed
//! and in the CPU features they need. A family lists its backends in order
//! of preference and says, per backend, what it needs and whether this
//! build compiled it; [`BackendSet`] provides the rest: which backends a
//! CPU runs ([`BackendSet::available_on`]), the best of them
//! ([`BackendSet::detect_on`]), and the same for the running CPU
//! ([`BackendSet::available`], [`BackendSet::detect`],
//! [`BackendSet::is_available`]). Because the selection is a pure
//! function of a [`Profile`], every family is tested on the profiles of
//! CPUs other than the one running the tests.

use crate::cpu::{Features, Profile, Vendor};

/// The most backends one family may list (the portable one included).
const MAX: usize = 6;

/// A family of backends: interchangeable implementations of one set of
/// kernels, best first, the last one portable.
///
/// An implementation names its backends in order of preference
/// ([`PREFERENCE`](Self::PREFERENCE)), what each needs of the CPU
/// ([`needs`](Self::needs), from its [`Needs`](crate::cpu::Needs)
/// declaration) and whether this build compiled it
/// ([`compiled`](Self::compiled)); the selection is provided. The last
/// backend of the preference is the portable one: it needs nothing, is
/// compiled everywhere, and every CPU runs it.
///
/// ```
/// use mdu_platform::backend::{BackendSet, Preference};
/// use mdu_platform::cpu::{Features, Profile, Vendor};
///
/// #[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// enum Backend {
///     Avx512,
///     Avx2,
///     Generic,
/// }
///
/// impl BackendSet for Backend {
///     const PREFERENCE: &'static Preference<Backend> =
///         &Preference::new(&[Backend::Avx512, Backend::Avx2, Backend::Generic]);
///     // Intel's cores run the AVX2 kernel faster (say).
///     const PREFERENCE_ON_INTEL: &'static Preference<Backend> =
///         &Preference::new(&[Backend::Avx2, Backend::Avx512, Backend::Generic]);
///
///     fn needs(self) -> Features {
///         match self {
///             Backend::Avx512 => Features { avx512f: true, ..Features::NONE },
///             Backend::Avx2 => Features { avx2: true, ..Features::NONE },
///             Backend::Generic => Features::NONE,
///         }
///     }
///
///     fn compiled(self) -> bool {
///         self == Backend::Generic || cfg!(target_arch = "x86_64")
///     }
/// }
///
/// let haswell = Features { avx2: true, ..Features::NONE };
/// let zen4 = Profile {
///     features: Features { avx512f: true, ..haswell },
///     vendor: Vendor::Amd,
/// };
/// let sapphire_rapids = Profile { vendor: Vendor::Intel, ..zen4 };
/// if cfg!(target_arch = "x86_64") {
///     assert_eq!(Backend::available_on(haswell), [Backend::Avx2, Backend::Generic]);
///     assert_eq!(Backend::detect_on(zen4), Backend::Avx512);
///     assert_eq!(Backend::detect_on(sapphire_rapids), Backend::Avx2);
/// }
/// assert_eq!(Backend::available_on(Features::NONE), [Backend::Generic]);
/// assert_eq!(Backend::available().first(), Some(&Backend::detect()));
/// assert!(Backend::Generic.is_available());
/// ```
pub trait BackendSet: Copy + Eq + 'static {
    /// Every backend of the family, best first; the portable one, which
    /// needs nothing, last.
    const PREFERENCE: &'static Preference<Self>;

    /// The same backends in their order on Intel CPUs, where it differs
    /// (SHA-256: sixteen AVX-512 lanes beat two-way SHA-NI on Intel's
    /// cores, not on AMD's). By default [`PREFERENCE`](Self::PREFERENCE).
    const PREFERENCE_ON_INTEL: &'static Preference<Self> = Self::PREFERENCE;

    /// The CPU features the backend needs: the union of its kernels'
    /// `#[target_feature]` lists, as its [`Needs`](crate::cpu::Needs)
    /// types declare them; [`Features::NONE`] for the portable one.
    fn needs(self) -> Features;

    /// Whether this build has the backend's kernels (their target, and not
    /// under Miri).
    fn compiled(self) -> bool;

    /// Whether a CPU with features `f` runs the backend in this build: it
    /// is compiled and `f` has everything it [`needs`](Self::needs).
    #[inline]
    fn runs_on(self, f: Features) -> bool {
        self.compiled() && f.contains(self.needs())
    }

    /// The backends a CPU runs in this build, best first for its vendor;
    /// the portable one always last. A pure function of `cpu` (a
    /// [`Profile`], or [`Features`] alone for a CPU of no particular
    /// vendor).
    fn available_on(cpu: impl Into<Profile>) -> &'static [Self] {
        let cpu = cpu.into();
        let order = match cpu.vendor {
            Vendor::Intel => Self::PREFERENCE_ON_INTEL,
            _ => Self::PREFERENCE,
        };
        order.runs_on(|b| b.runs_on(cpu.features))
    }

    /// The best backend a CPU runs in this build: the first of
    /// [`available_on`](Self::available_on).
    fn detect_on(cpu: impl Into<Profile>) -> Self {
        Self::available_on(cpu)[0]
    }

    /// The backends this CPU runs, best first; the portable one always
    /// last. The CPU is asked once per process.
    fn available() -> &'static [Self] {
        Self::available_on(Profile::get())
    }

    /// The best backend this CPU runs.
    fn detect() -> Self {
        Self::available()[0]
    }

    /// Whether this CPU runs the backend in this build.
    fn is_available(self) -> bool {
        self.runs_on(Features::get())
    }
}

/// Backends in order of preference, the portable one last, with every
/// list of them a CPU can have: what a [`BackendSet`] declares, made at
/// compile time so that the lists are handed out as `&'static` slices
/// without `std` or an allocation. At most six backends.
///
/// ```
/// use mdu_platform::backend::Preference;
///
/// const ORDER: Preference<char> = Preference::new(&['a', 'b', 'c', 'g']);
/// assert_eq!(ORDER.all(), ['a', 'b', 'c', 'g']);
/// ```
#[derive(Debug)]
pub struct Preference<T> {
    /// Every list, indexed by the set of the non-portable backends a CPU
    /// runs (bit `i` for backend `i`): those backends in order, then the
    /// portable one, and the list's length.
    lists: [([T; MAX], u8); 1 << (MAX - 1)],
    /// The number of backends.
    len: usize,
}

impl<T: Copy> Preference<T> {
    /// The order `all`: best first, the portable one last.
    ///
    /// # Panics
    ///
    /// Unless `all` holds one to six backends (at compile time, where the
    /// preference is a constant).
    pub const fn new(all: &[T]) -> Preference<T> {
        assert!(
            !all.is_empty() && all.len() <= MAX,
            "a family lists one to six backends"
        );
        let simd = all.len() - 1;
        let portable = all[simd];
        let mut lists = [([portable; MAX], 0); 1 << (MAX - 1)];
        let mut mask = 0;
        while mask < 1 << simd {
            let mut n = 0;
            let mut i = 0;
            while i < simd {
                if mask & (1 << i) != 0 {
                    lists[mask].0[n] = all[i];
                    n += 1;
                }
                i += 1;
            }
            lists[mask].0[n] = portable;
            lists[mask].1 = n as u8 + 1;
            mask += 1;
        }
        Preference {
            lists,
            len: all.len(),
        }
    }

    /// Every backend, best first.
    pub fn all(&self) -> &[T] {
        let (list, _) = &self.lists[(1 << (self.len - 1)) - 1];
        &list[..self.len]
    }

    /// The backends for which `runs` holds, best first, then the portable
    /// one.
    fn runs_on(&self, runs: impl Fn(T) -> bool) -> &[T] {
        let simd = &self.all()[..self.len - 1];
        let mask = simd
            .iter()
            .enumerate()
            .fold(0, |mask, (i, &b)| mask | usize::from(runs(b)) << i);
        let (list, len) = &self.lists[mask];
        &list[..usize::from(*len)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds_every_subset_in_order() {
        let p = Preference::new(&['a', 'b', 'c', 'd', 'g']);
        assert_eq!(p.all(), ['a', 'b', 'c', 'd', 'g']);
        assert_eq!(p.runs_on(|c| c == 'a' || c == 'c'), ['a', 'c', 'g']);
        assert_eq!(p.runs_on(|_| true), ['a', 'b', 'c', 'd', 'g']);
        assert_eq!(p.runs_on(|_| false), ['g']);
        let one = Preference::new(&['g']);
        assert_eq!(one.all(), ['g']);
        assert_eq!(one.runs_on(|_| true), ['g']);
    }
}
