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
    /// `rustc --version` of the compiler that built the binary.
    #[serde(default)]
    pub(crate) rustc: String,
    /// The commit the binary was built from (`+dirty` with uncommitted
    /// changes), or why it is unknown.
    #[serde(default)]
    pub(crate) commit: String,
    /// The target triple and the cargo profile of the build.
    #[serde(default)]
    pub(crate) build: String,
    /// The running kernel (`/proc/sys/kernel/osrelease`).
    #[serde(default)]
    pub(crate) kernel: String,
}

/// How [`Table::markdown`] shows its cells: bytes per cycle at the run's
/// clock, and the rows that disagree with another timing of the same code.
#[derive(Clone, Debug, Default)]
pub(crate) struct Render {
    pub(crate) clock_ghz: Option<f64>,
    /// `(table id, case, implementation)` of every flagged row.
    pub(crate) flagged: Vec<(String, String, String)>,
}

impl Render {
    fn flagged(&self, table: &Table, case: &CaseResult, s: &Samples) -> bool {
        self.flagged
            .iter()
            .any(|(t, c, n)| *t == table.id && *c == case.name && *n == s.name)
    }
}

/// Where a row is: its table, case and implementation, with its median.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RowRef {
    pub(crate) table: String,
    pub(crate) case: String,
    pub(crate) name: String,
    pub(crate) bytes: u64,
    pub(crate) median_ns: f64,
    pub(crate) spread: f64,
}

/// Two rows of one run that time the same code ([`Samples::code`]) and
/// whose medians are further apart than either row's spread (and than
/// [`Disagreement::FLOOR`]): one of them measured something besides the
/// code (placement, frequency, a neighbour), and neither should be quoted
/// alone.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Disagreement {
    pub(crate) code: String,
    pub(crate) a: RowRef,
    pub(crate) b: RowRef,
    /// |median a − median b| / the smaller median.
    pub(crate) apart: f64,
}

impl Disagreement {
    /// Medians closer than this never count as a disagreement, whatever
    /// the spreads: a few percent is what two placements of one loop can
    /// differ by.
    pub(crate) const FLOOR: f64 = 0.03;
}

/// A whole report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Report {
    pub(crate) meta: Meta,
    pub(crate) tables: Vec<Table>,
}

/// `s`, or `unknown` when empty (a report from an older build).
fn or_unknown(s: &str) -> &str {
    if s.is_empty() { "unknown" } else { s }
}

/// Median throughput in GB/s of `s` for `bytes` per iteration.
pub(crate) fn gbps(bytes: u64, ns: f64) -> f64 {
    bytes as f64 / ns
}

/// A rate with two decimals, or three significant digits below 0.1 (a
/// portable Twofish runs at a few MB/s: `0.00` would say nothing).
pub(crate) fn fmt_rate(x: f64) -> String {
    if x >= 0.1 || x <= 0.0 || !x.is_finite() {
        return format!("{x:.2}");
    }
    // Digits after the point for three significant ones.
    let places = (2.0 - x.log10().floor()) as usize;
    format!("{x:.places$}")
}

fn fmt_value(unit: Unit, bytes: u64, ns: f64) -> String {
    match unit {
        Unit::Throughput => fmt_rate(gbps(bytes, ns)),
        Unit::Latency if ns >= 10_000.0 => format!("{:.1} µs", ns / 1000.0),
        Unit::Latency => format!("{ns:.0} ns"),
    }
}

/// ` · N.NN B/c`: bytes per cycle at `ghz`, for a throughput; empty
/// without a clock or for a latency.
fn fmt_per_cycle(unit: Unit, bytes: u64, ns: f64, ghz: Option<f64>) -> String {
    match (unit, ghz) {
        (Unit::Throughput, Some(ghz)) => format!(" · {} B/c", fmt_rate(gbps(bytes, ns) / ghz)),
        _ => String::new(),
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

    /// The table in Markdown, its cells shown as `render` says.
    pub(crate) fn markdown(&self, render: &Render) -> String {
        let mut out = String::new();
        let cols = self.columns();
        let _ = writeln!(out, "### {}\n", self.title);
        let what = match (self.unit, render.clock_ghz) {
            (Unit::Throughput, Some(ghz)) => format!(
                "median GB/s and bytes per cycle at the run's {ghz:.2} GHz [min–max GB/s over all samples]"
            ),
            (Unit::Throughput, None) => "median GB/s [min–max] over all samples".to_string(),
            (Unit::Latency, _) => "median time per operation [min–max]".to_string(),
        };
        let _ = writeln!(
            out,
            "Cells: {what}. `×N`: the first mdu column is N times as fast as that \
             column. `N%`: the first mdu column as a share of that bound. \
             spread: (slowest − fastest sample) / median of the first mdu column. \
             ⚠: another row of this run times the same code and disagrees beyond \
             the spread (see Consistency).\n"
        );
        out.push_str("| case | spread |");
        for (name, kind) in &cols {
            let tag = match kind {
                Kind::Mdu => "",
                Kind::Peer => "",
                Kind::Bound => " (bound)",
            };
            let _ = write!(out, " {name}{tag} |");
        }
        out.push_str("\n|---|---:|");
        for _ in &cols {
            out.push_str("---:|");
        }
        out.push('\n');
        for case in &self.cases {
            let primary = case.primary();
            let spread =
                primary.map_or("–".to_string(), |p| format!("{:.0}%", 100.0 * p.spread()));
            let _ = write!(out, "| {} | {spread} |", case.name);
            for (name, _) in &cols {
                let Some(s) = case.results.iter().find(|s| s.name == *name) else {
                    out.push_str(" – |");
                    continue;
                };
                let med = s.median();
                let value = fmt_value(self.unit, case.bytes, med);
                let per_cycle = fmt_per_cycle(self.unit, case.bytes, med, render.clock_ghz);
                let mut cell = match primary {
                    Some(p) if std::ptr::eq(p, s) => format!(
                        "**{value}**{per_cycle} [{}–{}]",
                        fmt_value(self.unit, case.bytes, self.range_end(s, true)),
                        fmt_value(self.unit, case.bytes, self.range_end(s, false)),
                    ),
                    Some(p) if s.kind == Kind::Bound => {
                        format!("{value}{per_cycle} · {:.0}%", 100.0 * med / p.median())
                    }
                    Some(p) => format!("{value}{per_cycle} · ×{:.2}", med / p.median()),
                    None => format!("{value}{per_cycle}"),
                };
                if render.flagged(self, case, s) {
                    cell.push_str(" ⚠");
                }
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
                    Unit::Throughput => format!(
                        "{} GB/s{}",
                        fmt_rate(gbps(c.bytes, s.median())),
                        fmt_per_cycle(t.unit, c.bytes, s.median(), self.meta.clock_ghz)
                    ),
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

    /// Every row that times code another row of the run also times
    /// ([`Samples::code`]): the number of such codes, and the pairs whose
    /// medians disagree beyond their spread ([`Disagreement`]).
    pub(crate) fn same_code(&self) -> (usize, Vec<Disagreement>) {
        let mut rows: Vec<(&str, RowRef)> = Vec::new();
        for t in &self.tables {
            for c in &t.cases {
                for s in &c.results {
                    let Some(code) = &s.code else { continue };
                    rows.push((
                        code,
                        RowRef {
                            table: t.id.clone(),
                            case: c.name.clone(),
                            name: s.name.clone(),
                            bytes: c.bytes,
                            median_ns: s.median(),
                            spread: s.spread(),
                        },
                    ));
                }
            }
        }
        let mut codes: Vec<&str> = rows.iter().map(|r| r.0).collect();
        codes.sort_unstable();
        codes.dedup();
        let mut shared = 0;
        let mut out = Vec::new();
        for code in codes {
            let group: Vec<&RowRef> = rows.iter().filter(|r| r.0 == code).map(|r| &r.1).collect();
            if group.len() < 2 {
                continue;
            }
            shared += 1;
            for (i, a) in group.iter().enumerate() {
                for b in &group[i + 1..] {
                    let (fast, slow) = if a.median_ns <= b.median_ns {
                        (a.median_ns, b.median_ns)
                    } else {
                        (b.median_ns, a.median_ns)
                    };
                    let apart = (slow - fast) / fast;
                    if apart > a.spread.max(b.spread).max(Disagreement::FLOOR) {
                        out.push(Disagreement {
                            code: code.to_string(),
                            a: (*a).clone(),
                            b: (*b).clone(),
                            apart,
                        });
                    }
                }
            }
        }
        (shared, out)
    }

    /// The Consistency section: the rows that time the same code, and
    /// those that disagree.
    fn consistency(&self, shared: usize, found: &[Disagreement]) -> String {
        let mut out = String::from("## Consistency\n\n");
        if shared == 0 {
            out.push_str("No two rows of this run time the same code.\n");
            return out;
        }
        if found.is_empty() {
            let _ = writeln!(
                out,
                "{shared} codes are timed by more than one row of this run (the same \
                 backend on the same workload in different tables); every such pair \
                 agrees within its spread (or {:.0}%).",
                100.0 * Disagreement::FLOOR
            );
            return out;
        }
        let _ = writeln!(
            out,
            "{shared} codes are timed by more than one row of this run. These pairs \
             disagree beyond their spread (rows marked ⚠): quote neither alone.\n\n\
             | code | row | median | spread | other row | median | spread | apart |\n\
             |---|---|---:|---:|---|---:|---:|---:|"
        );
        let unit = |t: &str| {
            self.tables
                .iter()
                .find(|x| x.id == t)
                .map_or(Unit::Throughput, |x| x.unit)
        };
        for d in found {
            let row = |r: &RowRef| {
                format!(
                    "{} / {} / {} | {} | {:.0}%",
                    r.table,
                    r.case,
                    r.name,
                    fmt_value(unit(&r.table), r.bytes, r.median_ns),
                    100.0 * r.spread
                )
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {:.0}% |",
                d.code,
                row(&d.a),
                row(&d.b),
                100.0 * d.apart
            );
        }
        out
    }

    /// The whole report in Markdown.
    pub(crate) fn markdown(&self) -> String {
        let m = &self.meta;
        let (shared, found) = self.same_code();
        let render = Render {
            clock_ghz: m.clock_ghz,
            flagged: found
                .iter()
                .flat_map(|d| [&d.a, &d.b])
                .map(|r| (r.table.clone(), r.case.clone(), r.name.clone()))
                .collect(),
        };
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
        let _ = writeln!(out, "* Kernel: {}", or_unknown(&m.kernel));
        let _ = writeln!(
            out,
            "* Build: mdu {}, commit {}, {}, {}",
            m.version,
            or_unknown(&m.commit),
            or_unknown(&m.rustc),
            or_unknown(&m.build)
        );
        let _ = writeln!(
            out,
            "* Mode: {}; every implementation's output was checked \
             against the reference before it was timed; samples are taken \
             round-robin across the implementations of a case.\n",
            m.mode
        );
        for note in &m.notes {
            let _ = writeln!(out, "> **Note.** {note}\n");
        }
        out.push_str("## Summary\n\n");
        out.push_str(&self.summary());
        out.push('\n');
        out.push_str(&self.consistency(shared, &found));
        out.push_str("\n## Details\n\n");
        for t in &self.tables {
            out.push_str(&t.markdown(&render));
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

    #[test]
    fn slow_rates_keep_three_significant_digits() {
        assert_eq!(fmt_rate(12.345), "12.35");
        assert_eq!(fmt_rate(0.1), "0.10");
        assert_eq!(fmt_rate(0.0876), "0.0876");
        assert_eq!(fmt_rate(0.004123), "0.00412");
        assert_eq!(fmt_rate(0.0), "0.00");
    }

    fn samples(name: &str, kind: Kind, ns: &[f64]) -> Samples {
        Samples {
            name: name.to_string(),
            kind,
            ns_per_iter: ns.to_vec(),
            iters_per_sample: 1,
            code: None,
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
        let md = table(1.0).markdown(&Render::default());
        // 1000 bytes in 100 ns = 10 GB/s; range from the slowest to the
        // fastest sample; spread (110 − 90) / 100.
        assert!(
            md.contains("| 1000 bytes | 20% | **10.00** [9.09–11.11]"),
            "{md}"
        );
        assert!(md.contains("2.50 · ×4.00"), "{md}");
        assert!(md.contains("12.50 · 80%"), "{md}");
        assert!(md.contains("a note"));
        assert!(
            md.contains("| case | spread | mdu | peer | bound (bound) |"),
            "{md}"
        );
        assert!(!md.contains("B/c") && !md.contains("] ⚠"), "{md}");
    }

    #[test]
    fn every_throughput_has_its_bytes_per_cycle_at_the_run_clock() {
        let md = table(1.0).markdown(&Render {
            clock_ghz: Some(2.5),
            flagged: vec![],
        });
        // 10 GB/s at 2.5 GHz = 4 bytes per cycle.
        assert!(md.contains("**10.00** · 4.00 B/c [9.09–11.11]"), "{md}");
        assert!(md.contains("2.50 · 1.00 B/c · ×4.00"), "{md}");
        assert!(md.contains("12.50 · 5.00 B/c · 80%"), "{md}");
    }

    /// Two tables timing the same code: `scale` times apart, each row with
    /// a spread of `spread`.
    fn twice(scale: f64, spread: f64) -> Report {
        let row = |id: &str, ns: f64| {
            let mut s = samples(
                "mdu",
                Kind::Mdu,
                &[ns * (1.0 - spread / 2.0), ns, ns * (1.0 + spread / 2.0)],
            );
            s.code = Some("xts/aes256/encrypt/Zmm/4096/batched".to_string());
            let mut t = table(1.0);
            t.id = id.to_string();
            t.cases[0].results[0] = s;
            t
        };
        Report {
            meta: Meta::default(),
            tables: vec![row("a", 100.0), row("b", 100.0 * scale)],
        }
    }

    #[test]
    fn rows_of_the_same_code_are_flagged_only_beyond_their_spread() {
        // 50% apart, spreads of 4%: flagged, both rows marked.
        let r = twice(1.5, 0.04);
        let (shared, found) = r.same_code();
        assert_eq!((shared, found.len()), (1, 1));
        assert!((found[0].apart - 0.5).abs() < 1e-9, "{found:?}");
        let md = r.markdown();
        assert!(md.contains("disagree beyond their spread"), "{md}");
        assert!(md.contains("**10.00** [9.80–10.20] ⚠"), "{md}");
        assert!(md.contains("**6.67** [6.54–6.80] ⚠"), "{md}");
        assert!(
            md.contains(
                "| a / 1000 bytes / mdu | 10.00 | 4% | b / 1000 bytes / mdu | 6.67 | 4% | 50% |"
            ),
            "{md}"
        );
        // 10% apart but a spread of 20%: within it.
        let (shared, found) = twice(1.1, 0.2).same_code();
        assert_eq!((shared, found.len()), (1, 0));
        assert!(
            twice(1.1, 0.2)
                .markdown()
                .contains("every such pair agrees")
        );
        // 2% apart with no spread: under the floor.
        assert!(twice(1.02, 0.0).same_code().1.is_empty());
        // No code named: nothing to compare.
        let plain = Report {
            meta: Meta::default(),
            tables: vec![table(1.0)],
        };
        assert_eq!(plain.same_code(), (0, vec![]));
        assert!(
            plain
                .markdown()
                .contains("No two rows of this run time the same code")
        );
    }

    #[test]
    fn the_header_says_build_kernel_and_clock() {
        let r = Report {
            meta: Meta {
                cpu: "Some CPU".to_string(),
                cores: 2,
                clock_ghz: Some(3.5),
                rustc: "rustc 1.95.0".to_string(),
                commit: "0123abcd".to_string(),
                build: "x86_64-unknown-linux-gnu, release".to_string(),
                kernel: "6.1.0".to_string(),
                version: "0.1.0".to_string(),
                ..Meta::default()
            },
            tables: vec![],
        };
        let md = r.markdown();
        assert!(md.contains("* Kernel: 6.1.0"), "{md}");
        assert!(
            md.contains("* Build: mdu 0.1.0, commit 0123abcd, rustc 1.95.0, x86_64-unknown-linux-gnu, release"),
            "{md}"
        );
        assert!(md.contains("* Clock: 3.50 GHz"), "{md}");
        // An older report.json without these fields still reads.
        let old: Meta = serde_json::from_str(
            r#"{"cpu":"c","cores":1,"features":[],"backends":[],"mode":"quick","unix_time":0,"version":"0.1.0"}"#,
        )
        .unwrap();
        assert!(old.rustc.is_empty() && old.kernel.is_empty());
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
