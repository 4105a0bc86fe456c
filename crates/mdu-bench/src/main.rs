//! `mdu-bench`: measures mdu against its peers in one run and writes a
//! report a person can read at a glance.
//!
//! ```text
//! cargo run --release -p mdu-bench                 # quick mode (default)
//! cargo run --release -p mdu-bench -- --full       # more and longer samples
//! cargo run --release -p mdu-bench -- --compare old/report.json
//! ```
//!
//! Output: the tables on stdout, and `report.md`, `report.json` (every
//! sample), SVG charts and `index.html` in `target/mdu-report/`.

mod charts;
mod measure;
mod report;
mod suites;
mod sysinfo;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

use measure::Plan;
use report::{Meta, Report};

/// Benchmarks mdu against its peers and writes a report.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// More samples, longer samples and more cases (several minutes).
    #[arg(long, conflicts_with = "smoke")]
    full: bool,
    /// Check every implementation and time each only briefly (for CI).
    #[arg(long)]
    smoke: bool,
    /// Where to write the report files.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the change of every median against an earlier report.json.
    #[arg(long, value_name = "OLD.json")]
    compare: Option<PathBuf>,
    /// Run only these suites (comma-separated: xts, cbc, sha256, verity, base64, fscrypt).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

fn default_out() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir).join("mdu-report");
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mdu-report")
}

fn write_files(report: &Report, out: &Path) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(out)?;
    let md = report.markdown();
    std::fs::write(out.join("report.md"), &md)?;
    std::fs::write(out.join("report.json"), serde_json::to_vec_pretty(report)?)?;
    let mut charts = Vec::new();
    for t in &report.tables {
        let p = out.join(format!("{}-throughput.svg", t.id));
        if charts::throughput(t, &p)? {
            charts.push(p);
        }
        let p = out.join(format!("{}-speedup.svg", t.id));
        if charts::speedups(t, &p)? {
            charts.push(p);
        }
    }
    let mut html = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>mdu benchmark report</title>\
         <style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}\
         img{max-width:100%;border:1px solid #ddd;margin:1em 0}pre{white-space:pre-wrap}</style>\
         </head><body>\n<h1>mdu benchmark report</h1>\n\
         <p><a href=\"report.md\">report.md</a> · <a href=\"report.json\">report.json</a> (every sample)</p>\n",
    );
    // The machine and the summary first: what a reader needs to judge the
    // figures, before the charts and the full tables.
    let m = &report.meta;
    html.push_str("<h2>Machine</h2>\n<ul>\n");
    html.push_str(&format!(
        "<li>CPU: {} ({} logical cores)</li>\n",
        escape(&m.cpu),
        m.cores
    ));
    if let Some(ghz) = m.clock_ghz {
        html.push_str(&format!(
            "<li>Clock: {ghz:.2} GHz, measured at the start of the run</li>\n"
        ));
    }
    html.push_str(&format!(
        "<li>Features: {}</li>\n<li>Kernel: {}</li>\n<li>Build: mdu {}, commit {}, {}, {}</li>\n<li>Mode: {}</li>\n",
        escape(&m.features.join(", ")),
        escape(&m.kernel),
        escape(&m.version),
        escape(&m.commit),
        escape(&m.rustc),
        escape(&m.build),
        escape(&m.mode)
    ));
    for note in &m.notes {
        html.push_str(&format!("<li>{}</li>\n", escape(note)));
    }
    html.push_str("</ul>\n<h2>Summary</h2>\n");
    html.push_str(&md_table_to_html(&report.summary()));
    for c in &charts {
        let name = c.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        html.push_str(&format!("<p><img src=\"{name}\" alt=\"{name}\"></p>\n"));
    }
    html.push_str("<h2>Full report</h2>\n<pre>");
    html.push_str(&escape(&md));
    html.push_str("</pre>\n</body></html>\n");
    std::fs::write(out.join("index.html"), html)?;
    Ok(charts)
}

/// Text for HTML.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A Markdown table (header, separator, rows) as an HTML table.
fn md_table_to_html(md: &str) -> String {
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| escape(c.trim()))
            .collect()
    };
    let mut lines = md.lines().filter(|l| l.trim_start().starts_with('|'));
    let mut out =
        String::from("<table border=\"1\" cellpadding=\"4\" style=\"border-collapse:collapse\">\n");
    if let Some(head) = lines.next() {
        out.push_str("<tr>");
        for c in cells(head) {
            out.push_str(&format!("<th>{c}</th>"));
        }
        out.push_str("</tr>\n");
    }
    for row in lines.skip(1) {
        out.push_str("<tr>");
        for c in cells(row) {
            out.push_str(&format!("<td>{c}</td>"));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

fn main() -> ExitCode {
    let args = Args::parse();
    let (plan, mode) = if args.smoke {
        (Plan::SMOKE, "smoke")
    } else if args.full {
        (Plan::FULL, "full")
    } else {
        (Plan::QUICK, "quick")
    };
    let clock_ghz = sysinfo::clock_ghz();
    let ctx = suites::Ctx {
        plan,
        full: args.full,
        threads: sysinfo::cores(),
        clock_ghz,
    };
    let suites = suites::all();
    for name in &args.only {
        if !suites.iter().any(|s| s.name == name) {
            let known: Vec<&str> = suites.iter().map(|s| s.name).collect();
            eprintln!(
                "error: unknown suite {name:?}; known suites: {}",
                known.join(", ")
            );
            return ExitCode::from(2);
        }
    }
    let mut notes = Vec::new();
    if let Some(why) = sysinfo::emulation() {
        if !args.smoke {
            eprintln!(
                "error: {why}; emulated timings mean nothing, so no report is \
                 made. `--smoke` still checks every implementation against its \
                 reference."
            );
            return ExitCode::from(2);
        }
        let mut why = why;
        why[..1].make_ascii_uppercase();
        notes.push(format!(
            "{why}: the timings below mean nothing; this run only checks every \
             implementation against its reference."
        ));
    }
    if !cfg!(target_arch = "aarch64") {
        notes.push(
            "arm64: the arm64 backends are verified under qemu-user only. \
             Emulated timings mean nothing, so there are no arm64 figures \
             until real arm64 hardware measures them."
                .to_string(),
        );
    }
    let mut meta = Meta {
        cpu: sysinfo::cpu_model(),
        cores: sysinfo::cores(),
        features: sysinfo::features(),
        backends: Vec::new(),
        mode: mode.to_string(),
        unix_time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        version: env!("CARGO_PKG_VERSION").to_string(),
        notes,
        clock_ghz,
        rustc: env!("MDU_BENCH_RUSTC").to_string(),
        commit: env!("MDU_BENCH_COMMIT").to_string(),
        build: env!("MDU_BENCH_BUILD").to_string(),
        kernel: sysinfo::kernel(),
    };
    eprintln!(
        "mdu-bench ({mode} mode) on {} ({} cores)",
        meta.cpu, meta.cores
    );
    eprintln!("features: {}", meta.features.join(", "));
    let mut tables = Vec::new();
    let mut failed = false;
    for suite in &suites {
        if !args.only.is_empty() && !args.only.iter().any(|n| n == suite.name) {
            continue;
        }
        meta.backends.extend((suite.backends)());
        eprintln!("[{}]", suite.name);
        match (suite.run)(&ctx) {
            Ok(t) => tables.extend(t),
            Err(e) => {
                eprintln!("error in suite {}: {e}", suite.name);
                failed = true;
            }
        }
    }
    for (prim, backend) in &meta.backends {
        eprintln!("{prim}: {backend}");
    }
    let report = Report { meta, tables };
    println!("{}", report.markdown());
    let mut out = args.out.unwrap_or_else(default_out);
    if std::fs::create_dir_all(&out).is_ok() {
        out = out.canonicalize().unwrap_or(out);
    }
    match write_files(&report, &out) {
        Ok(charts) => eprintln!(
            "wrote {}/report.md, report.json, index.html and {} charts",
            out.display(),
            charts.len()
        ),
        Err(e) => {
            eprintln!("error: cannot write the report to {}: {e}", out.display());
            return ExitCode::FAILURE;
        }
    }
    if let Some(old) = &args.compare {
        let parsed = std::fs::read(old)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<Report>(&b).map_err(|e| e.to_string()));
        match parsed {
            Ok(old_report) => println!(
                "## Change against {}\n\n{}",
                old.display(),
                report.compare(&old_report)
            ),
            Err(e) => {
                eprintln!("error: cannot read {} as a report: {e}", old.display());
                return ExitCode::from(2);
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
