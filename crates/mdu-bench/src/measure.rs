//! Timing: calibrated samples, taken round-robin across the implementations
//! of one case so that machine noise hits them all alike.

use std::time::{Duration, Instant};

pub(crate) use mdu_bench::registry::{Imp, Kind};

/// How long and how often to measure.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    /// Samples per implementation.
    pub(crate) samples: usize,
    /// Target length of one sample.
    pub(crate) sample_time: Duration,
}

impl Plan {
    pub(crate) const SMOKE: Plan = Plan {
        samples: 3,
        sample_time: Duration::from_micros(200),
    };
    pub(crate) const QUICK: Plan = Plan {
        samples: 11,
        sample_time: Duration::from_millis(15),
    };
    pub(crate) const FULL: Plan = Plan {
        samples: 41,
        sample_time: Duration::from_millis(60),
    };
}

/// The samples of one implementation: nanoseconds per iteration.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Samples {
    pub(crate) name: String,
    pub(crate) kind: Kind,
    pub(crate) ns_per_iter: Vec<f64>,
    pub(crate) iters_per_sample: u64,
    /// [`Imp::same_code`], when the row has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) code: Option<String>,
}

impl Samples {
    pub(crate) fn median(&self) -> f64 {
        median(&self.ns_per_iter)
    }

    pub(crate) fn min(&self) -> f64 {
        self.ns_per_iter
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
    }

    pub(crate) fn max(&self) -> f64 {
        self.ns_per_iter.iter().copied().fold(0.0, f64::max)
    }

    /// The spread of the samples: (slowest − fastest) / median.
    pub(crate) fn spread(&self) -> f64 {
        (self.max() - self.min()) / self.median()
    }
}

pub(crate) fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn time_iters(run: &mut dyn FnMut(), iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        run();
    }
    start.elapsed()
}

/// Measures every implementation: calibrates an iteration count per
/// implementation, warms up, then takes `plan.samples` samples round-robin.
pub(crate) fn measure(imps: &mut [Imp], plan: Plan) -> Vec<Samples> {
    let mut iters = Vec::with_capacity(imps.len());
    for imp in imps.iter_mut() {
        // Calibrate: double until one batch takes at least a tenth of a sample.
        let mut n = 1u64;
        loop {
            let t = time_iters(&mut imp.run, n);
            if t >= plan.sample_time / 10 || n >= 1 << 30 {
                let per = t.as_secs_f64() / n as f64;
                let want = (plan.sample_time.as_secs_f64() / per.max(1e-10)).ceil() as u64;
                iters.push(want.max(1));
                break;
            }
            n *= 2;
        }
        // Warm up for one sample.
        time_iters(&mut imp.run, *iters.last().expect("pushed above"));
    }
    let mut out: Vec<Samples> = imps
        .iter()
        .zip(&iters)
        .map(|(imp, &n)| Samples {
            name: imp.name.clone(),
            kind: imp.kind,
            ns_per_iter: Vec::with_capacity(plan.samples),
            iters_per_sample: n,
            code: imp.code.clone(),
        })
        .collect();
    for _ in 0..plan.samples {
        for (i, imp) in imps.iter_mut().enumerate() {
            let t = time_iters(&mut imp.run, iters[i]);
            out[i]
                .ns_per_iter
                .push(t.as_nanos() as f64 / iters[i] as f64);
        }
    }
    out
}
