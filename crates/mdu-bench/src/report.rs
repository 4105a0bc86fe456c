//! The report: its data (saved as JSON with every sample), its Markdown
//! tables, and the comparison with an earlier report.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::measure::{Kind, Samples};

/// How a table's numbers read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Unit {
    /// Bytes per second, shown as GB/s (10^9 bytes).
    Throughput,
    /// Time per operation, shown in ns.
    Latency,
}

/// One workload measured across implementations.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct CaseResult {
    pub(crate) name: String,
    /// Bytes processed by one iteration.
    pub(crate) bytes: u64,
    /// Position on a chart's x axis (e.g. the data-unit size), if any.
    pub(crate) x: Option<f64>,
    pub(crate) results: Vec<Samples>,
}

/// One Markdown table of the report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Table {
    /// Short identifier, used for file names and by `--compare`.
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) unit: Unit,
    /// Label of the x axis of the throughput chart (when cases have `x`).
    pub(crate) x_label: Option<String>,
    pub(crate) notes: Vec<String>,
    pub(crate) cases: Vec<CaseResult>,
}

/// Facts about the machine and the run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Meta {
    pub(crate) cpu: String,
    pub(crate) cores: usize,
    pub(crate) features: Vec<String>,
    pub(crate) backends: Vec<(String, String)>,
    pub(crate) mode: String,
    pub(crate) unix_time: u64,
    pub(crate) version: String,
    /// Caveats a reader must see before the figures.
    #[serde(default)]
    pub(crate) notes: Vec<String>,
    /// The core clock measured at the start of the run (GHz), for bytes
    /// per cycle.
    #[serde(default)]
    pub(crate) clock_ghz: Option<f64>,
}

/// A whole report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Report {
    pub(crate) meta: Meta,
    pub(crate) tables: Vec<Table>,
}

/// Median throughput in GB/s of `s` for `bytes` per iteration.
pub(crate) fn gbps(bytes: u64, ns: f64) -> f64 {
    bytes as f64 / ns
}

fn fmt_value(unit: Unit, bytes: u64, ns: f64) -> String {
    match unit {
        Unit::Throughput => format!("{:.2}", gbps(bytes, ns)),
        Unit::Latency if ns >= 10_000.0 => format!("{:.1} µs", ns / 1000.0),
        Unit::Latency => format!("{ns:.0} ns"),
    }
}

impl CaseResult {
    /// The implementation the ratios are taken from: the first of mdu's.
    pub(crate) fn primary(&self) -> Option<&Samples> {
        self.results.iter().find(|s| s.kind == Kind::Mdu)
    }
}

impl Table {
    /// Implementation names in order of first appearance.
    pub(crate) fn columns(&self) -> Vec<(String, Kind)> {
        let mut cols: Vec<(String, Kind)> = Vec::new();
        for case in &self.cases {
            for s in &case.results {
                if !cols.iter().any(|(n, _)| *n == s.name) {
                    cols.push((s.name.clone(), s.kind));
                }
            }
        }
        cols
    }

    /// The table in Markdown.
    pub(crate) fn markdown(&self) -> String {
        let mut out = String::new();
        let cols = self.columns();
        let _ = writeln!(out, "### {}\n", self.title);
        let what = match self.unit {
            Unit::Throughput => "median GB/s [min–max] over all samples",
            Unit::Latency => "median time per operation [min–max]",
        };
        let _ = writeln!(
            out,
            "Cells: {what}. `×N`: the first mdu column is N times as fast as that \
             column. `N%`: the first mdu column as a share of that bound.\n"
        );
        out.push_str("| case |");
        for (name, kind) in &cols {
            let tag = match kind {
                Kind::Mdu => "",
                Kind::Peer => "",
                Kind::Bound => " (bound)",
            };
            let _ = write!(out, " {name}{tag} |");
        }
        out.push_str("\n|---|");
        for _ in &cols {
            out.push_str("---:|");
        }
        out.push('\n');
        for case in &self.cases {
            let _ = write!(out, "| {} |", case.name);
            let primary = case.primary();
            for (name, _) in &cols {
                let Some(s) = case.results.iter().find(|s| s.name == *name) else {
                    out.push_str(" – |");
                    continue;
                };
                let med = s.median();
                let value = fmt_value(self.unit, case.bytes, med);
                let cell = match primary {
                    Some(p) if std::ptr::eq(p, s) => format!(
                        "**{value}** [{}–{}]",
                        fmt_value(self.unit, case.bytes, self.range_end(s, true)),
                        fmt_value(self.unit, case.bytes, self.range_end(s, false)),
                    ),
                    Some(p) if s.kind == Kind::Bound => {
                        format!("{value} · {:.0}%", 100.0 * med / p.median())
                    }
                    Some(p) => format!("{value} · ×{:.2}", med / p.median()),
                    None => value,
                };
                let _ = write!(out, " {cell} |");
            }
            out.push('\n');
        }
        for note in &self.notes {
            let _ = writeln!(out, "\n{note}");
        }
        out
    }

    /// The low or high end of the range, in display order (for throughput
    /// the slowest sample is the low end).
    fn range_end(&self, s: &Samples, low: bool) -> f64 {
        match (self.unit, low) {
            (Unit::Throughput, true) | (Unit::Latency, false) => s.max(),
            _ => s.min(),
        }
    }
}

impl Report {
    /// One row per case: mdu's first implementation against the fastest
    /// peer and against the bound, for every table that has peers or a
    /// bound.
    pub(crate) fn summary(&self) -> String {
        let mut out = String::from(
            "| table | case | mdu | fastest peer | mdu ÷ peer | share of bound |\n\
             |---|---|---:|---|---:|---:|\n",
        );
        for t in &self.tables {
            for c in &t.cases {
                let Some(p) = c.primary() else { continue };
                let peer = c
                    .results
                    .iter()
                    .filter(|s| s.kind == Kind::Peer)
                    .min_by(|a, b| a.median().total_cmp(&b.median()));
                let bound = c.results.iter().find(|s| s.kind == Kind::Bound);
                if peer.is_none() && bound.is_none() {
                    continue;
                }
                let value = |s: &Samples| match t.unit {
                    Unit::Throughput => format!("{:.2} GB/s", gbps(c.bytes, s.median())),
                    Unit::Latency => fmt_value(t.unit, c.bytes, s.median()),
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | {} ({}) | {} | {} | {} |",
                    t.title,
                    c.name,
                    value(p),
                    p.name,
                    peer.map_or("–".to_string(), |s| format!("{} ({})", s.name, value(s))),
                    peer.map_or("–".to_string(), |s| format!(
                        "×{:.2}",
                        s.median() / p.median()
                    )),
                    bound.map_or("–".to_string(), |b| format!(
                        "{:.0}%",
                        100.0 * b.median() / p.median()
                    )),
                );
            }
        }
        out
    }

    /// The whole report in Markdown.
    pub(crate) fn markdown(&self) -> String {
        let m = &self.meta;
        let mut out = String::from("# mdu benchmark report\n\n");
        let _ = writeln!(out, "* CPU: {} ({} logical cores)", m.cpu, m.cores);
        if let Some(ghz) = m.clock_ghz {
            let _ = writeln!(
                out,
                "* Clock: {ghz:.2} GHz, measured at the start of this run (a \
                 dependent chain of register adds, one per cycle)"
            );
        }
        let _ = writeln!(out, "* Features detected: {}", m.features.join(", "));
        for (prim, backend) in &m.backends {
            let _ = writeln!(out, "* {prim}: {backend}");
        }
        let _ = writeln!(
            out,
            "* Mode: {} (mdu {}); every implementation's output was checked \
             against the reference before it was timed; samples are taken \
             round-robin across the implementations of a case.\n",
            m.mode, m.version
        );
        for note in &m.notes {
            let _ = writeln!(out, "> **Note.** {note}\n");
        }
        out.push_str("## Summary\n\n");
        out.push_str(&self.summary());
        out.push_str("\n## Details\n\n");
        for t in &self.tables {
            out.push_str(&t.markdown());
            out.push('\n');
        }
        out
    }

    /// The change of every median against an earlier report.
    pub(crate) fn compare(&self, old: &Report) -> String {
        let mut out = String::from("| table | case | implementation | before | after | change |\n");
        out.push_str("|---|---|---|---:|---:|---:|\n");
        let mut matched = 0;
        for t in &self.tables {
            let Some(ot) = old.tables.iter().find(|o| o.id == t.id) else {
                continue;
            };
            for c in &t.cases {
                let Some(oc) = ot.cases.iter().find(|o| o.name == c.name) else {
                    continue;
                };
                for s in &c.results {
                    let Some(os) = oc.results.iter().find(|o| o.name == s.name) else {
                        continue;
                    };
                    matched += 1;
                    let (before, after) = (os.median(), s.median());
                    // Positive change = faster, whatever the unit.
                    let change = 100.0 * (before / after - 1.0);
                    let _ = writeln!(
                        out,
                        "| {} | {} | {} | {} | {} | {:+.1}% |",
                        t.id,
                        c.name,
                        s.name,
                        fmt_value(t.unit, oc.bytes, before),
                        fmt_value(t.unit, c.bytes, after),
                        change
                    );
                }
            }
        }
        if matched == 0 {
            out.push_str("| (no case in common) | | | | | |\n");
        }
        out.push_str("\nchange: + is faster than before, − is slower.\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(name: &str, kind: Kind, ns: &[f64]) -> Samples {
        Samples {
            name: name.to_string(),
            kind,
            ns_per_iter: ns.to_vec(),
            iters_per_sample: 1,
        }
    }

    fn table(scale: f64) -> Table {
        Table {
            id: "t".to_string(),
            title: "T".to_string(),
            unit: Unit::Throughput,
            x_label: None,
            notes: vec!["a note".to_string()],
            cases: vec![CaseResult {
                name: "1000 bytes".to_string(),
                bytes: 1000,
                x: Some(1000.0),
                results: vec![
                    samples(
                        "mdu",
                        Kind::Mdu,
                        &[100.0 * scale, 90.0 * scale, 110.0 * scale],
                    ),
                    samples("peer", Kind::Peer, &[400.0, 400.0, 400.0]),
                    samples("bound", Kind::Bound, &[80.0, 80.0, 80.0]),
                ],
            }],
        }
    }

    #[test]
    fn markdown_shows_medians_ranges_ratios_and_bound_shares() {
        let md = table(1.0).markdown();
        // 1000 bytes in 100 ns = 10 GB/s; range from the slowest to the
        // fastest sample.
        assert!(md.contains("**10.00** [9.09–11.11]"), "{md}");
        assert!(md.contains("2.50 · ×4.00"), "{md}");
        assert!(md.contains("12.50 · 80%"), "{md}");
        assert!(md.contains("a note"));
        assert!(md.contains("| case | mdu | peer | bound (bound) |"), "{md}");
    }

    #[test]
    fn compare_reports_the_change_of_each_median() {
        let meta = Meta::default();
        let old = Report {
            meta: meta.clone(),
            tables: vec![table(1.0)],
        };
        let new = Report {
            meta,
            tables: vec![table(0.5)],
        };
        let cmp = new.compare(&old);
        // mdu twice as fast: +100%; the others unchanged.
        assert!(
            cmp.contains("| t | 1000 bytes | mdu | 10.00 | 20.00 | +100.0% |"),
            "{cmp}"
        );
        assert!(
            cmp.contains("| t | 1000 bytes | peer | 2.50 | 2.50 | +0.0% |"),
            "{cmp}"
        );
        let json = serde_json::to_string(&new).unwrap();
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(
            back.tables[0].cases[0].results[0].ns_per_iter,
            vec![50.0, 45.0, 55.0]
        );
    }

    #[test]
    fn compare_with_nothing_in_common_says_so() {
        let a = Report {
            meta: Meta::default(),
            tables: vec![table(1.0)],
        };
        let b = Report {
            meta: Meta::default(),
            tables: vec![],
        };
        assert!(a.compare(&b).contains("no case in common"));
    }

    #[test]
    fn summary_names_the_fastest_peer_and_the_bound_share() {
        let r = Report {
            meta: Meta::default(),
            tables: vec![table(1.0)],
        };
        let s = r.summary();
        assert!(
            s.contains("| T | 1000 bytes | 10.00 GB/s (mdu) | peer (2.50 GB/s) | ×4.00 | 80% |"),
            "{s}"
        );
    }
}
