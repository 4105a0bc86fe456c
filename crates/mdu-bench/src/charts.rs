//! SVG charts of a report: throughput against the data size (or the
//! thread count), and speedup bars of mdu against every other
//! implementation on a log axis.

use std::path::Path;

use plotters::prelude::*;

use crate::measure::Kind;
use crate::report::{Table, Unit, gbps};

/// Throughput (GB/s) against the cases' `x` values, one line per
/// implementation. Returns `false` when the table has nothing to plot.
pub(crate) fn throughput(table: &Table, path: &Path) -> Result<bool, Box<dyn std::error::Error>> {
    if table.unit != Unit::Throughput || table.cases.iter().any(|c| c.x.is_none()) {
        return Ok(false);
    }
    let xs: Vec<f64> = table.cases.iter().filter_map(|c| c.x).collect();
    let (xmin, xmax) = xs.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| {
        (lo.min(x), hi.max(x))
    });
    if xs.len() < 2 || xmin <= 0.0 || xmin == xmax {
        return Ok(false);
    }
    let mut ymax = 0.0f64;
    for c in &table.cases {
        for s in &c.results {
            ymax = ymax.max(gbps(c.bytes, s.median()));
        }
    }
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&table.title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((xmin * 0.8..xmax * 1.25).log_scale(), 0.0..ymax * 1.45)?;
    chart
        .configure_mesh()
        .x_desc(table.x_label.as_deref().unwrap_or("size (bytes)"))
        .y_desc("GB/s (median)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()?;
    for (i, (name, _)) in table.columns().iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let points: Vec<(f64, f64)> = table
            .cases
            .iter()
            .filter_map(|c| {
                let s = c.results.iter().find(|s| s.name == *name)?;
                Some((c.x?, gbps(c.bytes, s.median())))
            })
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 4, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(true)
}

/// Horizontal bars: how many times faster the first mdu implementation is
/// than each other implementation, per case (a bound shows below 1).
pub(crate) fn speedups(table: &Table, path: &Path) -> Result<bool, Box<dyn std::error::Error>> {
    let mut bars: Vec<(String, f64, Kind)> = Vec::new();
    for c in &table.cases {
        let Some(p) = c.primary() else { continue };
        for s in &c.results {
            if std::ptr::eq(s, p) {
                continue;
            }
            bars.push((
                format!("{} vs {}", c.name, s.name),
                s.median() / p.median(),
                s.kind,
            ));
        }
    }
    if bars.is_empty() {
        return Ok(false);
    }
    let n = bars.len();
    let height = 90 + 26 * n as u32;
    // A log axis: a 0.5× bound and an 80× peer both read, and equal
    // ratios either side of 1× are equal lengths.
    let xmax = bars.iter().map(|b| b.1).fold(1.0f64, f64::max) * 1.6;
    let xmin = bars.iter().map(|b| b.1).fold(1.0f64, f64::min) / 1.6;
    let root = SVGBackend::new(path, (1000, height)).into_drawing_area();
    root.fill(&WHITE)?;
    // Bar 0 at the top: row `n - 1 - i` of the y axis.
    let labels: Vec<String> = bars.iter().rev().map(|b| b.0.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{}: speedup of mdu", table.title),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(380)
        .build_cartesian_2d((xmin..xmax).log_scale(), (0..n).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(WHITE)
        .y_labels(n)
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .x_label_formatter(&|x| match *x {
            x if x >= 10.0 => format!("{x:.0}×"),
            x if x >= 1.0 => format!("{x:.1}×"),
            x => format!("{x:.2}×"),
        })
        .x_desc("× (log scale; mdu is this many times as fast; < 1 for a bound)")
        .draw()?;
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, ratio, kind))| {
        let row = n - 1 - i;
        let color = match kind {
            Kind::Bound => RGBColor(150, 150, 150),
            Kind::Mdu => RGBColor(90, 140, 200),
            Kind::Peer => RGBColor(220, 120, 50),
        };
        // From the 1× line to the ratio: right when mdu is faster.
        let mut bar = Rectangle::new(
            [
                (1.0, SegmentValue::Exact(row)),
                (*ratio, SegmentValue::Exact(row + 1)),
            ],
            color.filled(),
        );
        bar.set_margin(3, 3, 0, 0);
        bar
    }))?;
    chart.draw_series(bars.iter().enumerate().map(|(i, (_, ratio, _))| {
        Text::new(
            format!(" {ratio:.2}×"),
            (*ratio, SegmentValue::CenterOf(n - 1 - i)),
            ("sans-serif", 13),
        )
    }))?;
    // The line at 1×: equal speed.
    chart.draw_series(LineSeries::new(
        vec![(1.0, SegmentValue::Exact(0)), (1.0, SegmentValue::Exact(n))],
        BLACK.stroke_width(1),
    ))?;
    root.present()?;
    Ok(true)
}
