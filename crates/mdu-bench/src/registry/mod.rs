//! Every benchmark case, declared once: the `mdu-bench` report's suites
//! measure these cases and the criterion benches (`benches/`) register
//! them.
//!
//! A [`Group`] is a list of cases ([`CaseFn`]) that are built only when
//! run: building a [`Case`] makes its buffers and checks every
//! implementation's output against the reference, and fails rather than
//! hand back one that computes wrong bytes. A case's implementations
//! ([`Imp`]) are named, marked as mdu, a peer or a bound ([`Kind`]), and
//! own everything one iteration touches.
//!
//! ```
//! use mdu_bench::registry::{Case, Group, Imp, Kind};
//!
//! let group = Group::new("copy", false).case(|| {
//!     let mut out = vec![0u8; 64];
//!     Ok(Case::new("64 bytes", 64, None).imp(Imp::new("memcpy", Kind::Bound, move || {
//!         out.copy_from_slice(&[7; 64]);
//!     })))
//! });
//! for build in group.cases {
//!     let mut case = build().expect("checked");
//!     (case.imps[0].run)();
//! }
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use mdu_core::Direction;

use crate::bound::{self, AesBound};
use crate::buffer::Buf;

pub mod base64;
pub mod cbc;
pub mod evp;
pub mod fscrypt;
pub mod sha256;
pub mod verity;
pub mod xts;

/// Who an implementation belongs to; decides how a report shows it.
///
/// ```
/// assert_ne!(mdu_bench::registry::Kind::Mdu, mdu_bench::registry::Kind::Peer);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// mdu's own implementation: the row the ratios are taken from.
    Mdu,
    /// Another library or tool doing the same work.
    Peer,
    /// A hardware bound (AES rounds only, memcpy, ...).
    Bound,
}

/// One implementation of a case: a closure that owns its buffers and does
/// one iteration of the case's work.
///
/// ```
/// use mdu_bench::registry::{Imp, Kind};
/// let mut n = 0u64;
/// let mut imp = Imp::new("count", Kind::Mdu, move || n += 1).same_code("count/1");
/// (imp.run)();
/// assert_eq!(imp.code.as_deref(), Some("count/1"));
/// ```
pub struct Imp {
    /// The row's name in the report and the function's in criterion.
    pub name: String,
    /// mdu, a peer or a bound.
    pub kind: Kind,
    /// One iteration.
    pub run: Box<dyn FnMut()>,
    /// What code this row times, where another row of the report times the
    /// same code ([`Imp::same_code`]).
    pub code: Option<String>,
}

impl core::fmt::Debug for Imp {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Imp")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("code", &self.code)
            .finish_non_exhaustive()
    }
}

impl Imp {
    /// An implementation named `name` whose iteration is `run`.
    ///
    /// ```
    /// let imp = mdu_bench::registry::Imp::new("nothing", mdu_bench::registry::Kind::Peer, || {});
    /// assert_eq!(imp.name, "nothing");
    /// ```
    pub fn new(name: impl Into<String>, kind: Kind, run: impl FnMut() + 'static) -> Self {
        Imp {
            name: name.into(),
            kind,
            run: Box::new(run),
            code: None,
        }
    }

    /// Names the code this row times (e.g. `xts/aes256/encrypt/Vaes512/
    /// 4096/batched`): rows of a report with the same name time the same
    /// code on the same workload, and the report flags them where their
    /// medians disagree beyond their spread.
    ///
    /// ```
    /// use mdu_bench::registry::{Imp, Kind};
    /// let imp = Imp::new("a", Kind::Mdu, || {}).same_code("x");
    /// assert_eq!(imp.code.as_deref(), Some("x"));
    /// ```
    #[must_use]
    pub fn same_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }
}

/// One workload and the implementations that do it, checked.
///
/// ```
/// use mdu_bench::registry::{Case, Imp, Kind};
/// let case = Case::new("4 KiB", 4096, Some(4096.0)).imp(Imp::new("a", Kind::Mdu, || {}));
/// assert_eq!(case.imps.len(), 1);
/// ```
#[derive(Debug)]
pub struct Case {
    /// The case's name (a row of the report's table).
    pub name: String,
    /// Bytes of work in one iteration.
    pub bytes: usize,
    /// Where the case sits on a chart's x axis, if it has one.
    pub x: Option<f64>,
    /// The implementations, the first one the reference of the ratios.
    pub imps: Vec<Imp>,
}

impl Case {
    /// A case without implementations yet.
    ///
    /// ```
    /// let case = mdu_bench::registry::Case::new("one", 1, None);
    /// assert!(case.imps.is_empty());
    /// ```
    pub fn new(name: impl Into<String>, bytes: usize, x: Option<f64>) -> Case {
        Case {
            name: name.into(),
            bytes,
            x,
            imps: Vec::new(),
        }
    }

    /// The case with `imp` added last.
    ///
    /// ```
    /// use mdu_bench::registry::{Case, Imp, Kind};
    /// let case = Case::new("one", 1, None).imp(Imp::new("a", Kind::Mdu, || {}));
    /// assert_eq!(case.imps[0].name, "a");
    /// ```
    #[must_use]
    pub fn imp(mut self, imp: Imp) -> Case {
        self.imps.push(imp);
        self
    }
}

/// A case declared: it makes its buffers and checks its implementations
/// when called.
pub type CaseFn = Box<dyn FnOnce() -> Result<Case, String>>;

/// Cases that belong together: a table of the report, a criterion group.
///
/// ```
/// use mdu_bench::registry::{Case, Group};
/// let g = Group::new("g", false).case(|| Ok(Case::new("c", 1, None)));
/// assert_eq!(g.cases.len(), 1);
/// ```
pub struct Group {
    /// The group's name: the report table's id, criterion's group prefix.
    pub name: String,
    /// Whether some implementation runs on other threads (a rayon pool):
    /// timed by the wall clock, never by the calling thread's CPU time.
    pub wall_clock: bool,
    /// The cases, in order.
    pub cases: Vec<CaseFn>,
}

impl core::fmt::Debug for Group {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Group")
            .field("name", &self.name)
            .field("wall_clock", &self.wall_clock)
            .field("cases", &self.cases.len())
            .finish()
    }
}

impl Group {
    /// A group without cases yet.
    ///
    /// ```
    /// assert!(mdu_bench::registry::Group::new("g", true).cases.is_empty());
    /// ```
    pub fn new(name: impl Into<String>, wall_clock: bool) -> Group {
        Group {
            name: name.into(),
            wall_clock,
            cases: Vec::new(),
        }
    }

    /// The group with the case `build` added last.
    ///
    /// ```
    /// use mdu_bench::registry::{Case, Group};
    /// let g = Group::new("g", false).case(|| Err("wrong bytes".to_string()));
    /// assert!(g.cases.into_iter().next().expect("one case")().is_err());
    /// ```
    #[must_use]
    pub fn case(mut self, build: impl FnOnce() -> Result<Case, String> + 'static) -> Group {
        self.cases.push(Box::new(build));
        self
    }
}

/// Fails with a message when an implementation's output differs from the
/// reference.
///
/// ```
/// assert!(mdu_bench::registry::check("same", b"ab", b"ab").is_ok());
/// assert!(mdu_bench::registry::check("differs", b"ab", b"ac").is_err());
/// ```
///
/// # Errors
///
/// When `got` is not `want`.
pub fn check(what: &str, got: &[u8], want: &[u8]) -> Result<(), String> {
    if got == want {
        return Ok(());
    }
    let at = got.iter().zip(want).position(|(a, b)| a != b);
    Err(format!(
        "{what}: output differs from the reference (lengths {} and {}, first difference at {:?}); \
         refusing to benchmark wrong bytes",
        got.len(),
        want.len(),
        at
    ))
}

/// The data-unit sizes of the XTS and CBC request tables.
pub const UNITS: [usize; 3] = [512, 4096, 65536];

/// "encrypt" or "decrypt".
///
/// ```
/// assert_eq!(mdu_bench::registry::verb(mdu_core::Direction::Decrypt), "decrypt");
/// ```
pub fn verb(dir: Direction) -> &'static str {
    match dir {
        Direction::Encrypt => "encrypt",
        Direction::Decrypt => "decrypt",
    }
}

/// The key of `len` bytes the XTS and CBC cases use.
///
/// ```
/// assert_eq!(mdu_bench::registry::key(2), [101, 130]);
/// ```
pub fn key(len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(101))
        .collect()
}

/// The row of the widest AES-ECB bound of this CPU over `len` bytes with
/// the schedule of `key` (one AES key), if the CPU has AES instructions.
///
/// ```
/// let row = mdu_bench::registry::aes_bound_row(&[0; 16], 64);
/// assert_eq!(row.is_some(), mdu_bench::bound::AesBound::detect() != mdu_bench::bound::AesBound::None);
/// ```
pub fn aes_bound_row(key: &[u8], len: usize) -> Option<Imp> {
    let widest = AesBound::detect();
    if widest == AesBound::None {
        return None;
    }
    let rk = bound::expand_key(key);
    let mut e = Buf::random(len, 5);
    Some(Imp::new(widest.label(), Kind::Bound, move || {
        black_box(bound::ecb_encrypt(widest, &rk, e.bytes_mut()));
    }))
}

/// The AES-ECB bound `how` with its register name, if this CPU runs it:
/// the bound of a backend's own vector width in the width tables.
///
/// ```
/// use mdu_bench::bound::AesBound;
/// assert_eq!(mdu_bench::registry::width_bound(AesBound::None), None);
/// ```
pub fn width_bound(how: AesBound) -> Option<(AesBound, &'static str)> {
    let width = match how {
        AesBound::Vaes512 => "zmm",
        AesBound::Vaes256 => "ymm",
        AesBound::AesNi => "xmm",
        AesBound::None => return None,
    };
    bound::runs(how).then_some((how, width))
}

/// The bound row of a width table: AES-ECB on `width` registers with the
/// schedule of `key` (one AES key) over `len` bytes.
///
/// ```
/// use mdu_bench::bound::AesBound;
/// if let Some((how, width)) = mdu_bench::registry::width_bound(AesBound::AesNi) {
///     let row = mdu_bench::registry::ecb_bound_row(how, width, &[0; 16], 64);
///     assert_eq!(row.name, "AES-ECB on xmm");
/// }
/// ```
pub fn ecb_bound_row(how: AesBound, width: &str, key: &[u8], len: usize) -> Imp {
    let rk = bound::expand_key(key);
    let mut e = Buf::random(len, 5);
    Imp::new(format!("AES-ECB on {width}"), Kind::Bound, move || {
        black_box(bound::ecb_encrypt(how, &rk, e.bytes_mut()));
    })
}

/// The time of `iters` iterations of `run`: by the wall clock where
/// `wall_clock` (work on other threads), else in the calling thread's CPU
/// time (`CLOCK_THREAD_CPUTIME_ID` on Linux), so that time spent preempted
/// on a shared machine does not count. The criterion benches time with it.
///
/// ```
/// let mut n = 0u64;
/// let t = mdu_bench::registry::time(&mut || n += 1, 10, true);
/// assert!(t.as_secs() < 10);
/// ```
pub fn time(run: &mut dyn FnMut(), iters: u64, wall_clock: bool) -> Duration {
    if wall_clock {
        let start = Instant::now();
        for _ in 0..iters {
            run();
        }
        return start.elapsed();
    }
    let start = thread_time();
    for _ in 0..iters {
        run();
    }
    thread_time().saturating_sub(start)
}

/// CPU time consumed so far by the calling thread.
#[cfg(target_os = "linux")]
fn thread_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a Linux
    // constant, and on failure `ts` stays zero (never the case in practice).
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall-clock fallback where no thread CPU clock is wired up.
#[cfg(not(target_os = "linux"))]
fn thread_time() -> Duration {
    use std::sync::OnceLock;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

/// A criterion bench of registry groups: `main`, registering every case of
/// `$groups` (an iterator of [`Group`]s) as a criterion group
/// `<group>/<case>` with one function per implementation, timed by
/// [`time`]; a case whose check fails stops the bench.
///
/// `config = ...` gives the `Criterion` to run them with (its default
/// otherwise).
///
/// ```ignore
/// mdu_bench::criterion_registry!(mdu_bench::registry::sha256::groups());
/// ```
#[macro_export]
macro_rules! criterion_registry {
    ($groups:expr) => {
        $crate::criterion_registry!($groups, config = ::criterion::Criterion::default());
    };
    ($groups:expr, config = $config:expr) => {
        fn registry(c: &mut ::criterion::Criterion) {
            for group in $groups {
                let wall_clock = group.wall_clock;
                for build in group.cases {
                    let case = build().unwrap_or_else(|e| panic!("{}: {e}", group.name));
                    let mut g = c.benchmark_group(format!("{}/{}", group.name, case.name));
                    g.throughput(::criterion::Throughput::Bytes(case.bytes as u64));
                    if wall_clock {
                        g.sample_size(10);
                    }
                    for mut imp in case.imps {
                        g.bench_function(imp.name.as_str(), |b| {
                            b.iter_custom(|iters| {
                                $crate::registry::time(&mut imp.run, iters, wall_clock)
                            })
                        });
                    }
                    g.finish();
                }
            }
        }
        ::criterion::criterion_group! {
            name = benches;
            config = $config;
            targets = registry
        }
        ::criterion::criterion_main!(benches);
    };
}
