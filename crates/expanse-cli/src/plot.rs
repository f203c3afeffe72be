//! `--plot FILE.svg`: memory over a replay, one or several allocators
//! overlaid. Top: reserved, allocated and requested bytes; bottom: page
//! maps and page moves so far. SVG only (plotters' SVG backend writes
//! text as `<text>`, no font files needed).

use std::path::Path;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::watch::Sample;

/// One replay's samples and its name in the legend.
pub struct Run<'a> {
    pub label: &'a str,
    pub samples: &'a [Sample],
}

/// The legend's colour of a line drawn in every run's colour.
const GREY: RGBColor = RGBColor(128, 128, 128);
const GIB: f64 = (1u64 << 30) as f64;
const WIDTH: u32 = 1000;
const HEIGHT: u32 = 720;
/// Height of the bytes panel; the pages panel takes the rest.
const TOP: u32 = 450;
/// Line colours, one per run (colour-blind safe: Okabe-Ito).
const COLOURS: [RGBColor; 5] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
];

fn named(what: &str, label: &str, several: bool) -> String {
    if several {
        format!("{what}, {label}")
    } else {
        what.to_owned()
    }
}

/// The same line with the inner points of every flat stretch left out
/// (a smaller SVG; the picture is unchanged).
fn flat_runs_shortened(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let n = points.len();
    (0..n)
        .filter(|&i| i == 0 || i + 1 == n || points[i - 1].1 != points[i].1 || points[i + 1].1 != points[i].1)
        .map(|i| points[i])
        .collect()
}

/// Draw `runs` (of one trace, so their event axes agree) into `path`.
pub fn draw(path: &Path, title: &str, runs: &[Run]) -> Result<(), String> {
    draw_svg(path, title, runs).map_err(|e| format!("{}: cannot draw the plot: {e}", path.display()))
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn draw_svg(path: &Path, title: &str, runs: &[Run]) -> DrawResult {
    let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (top, bottom) = root.split_vertically(TOP);
    let events = runs.iter().flat_map(|r| r.samples.last()).map(|s| s.event).max().unwrap_or(0).max(1) as f64;
    bytes_panel(&top, events, runs)?;
    pages_panel(&bottom, events, runs)?;
    root.present()?;
    Ok(())
}

fn bytes_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    events: f64,
    runs: &[Run],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let several = runs.len() > 1;
    let top = runs.iter().flat_map(|r| r.samples).map(|s| s.reserved.max(s.requested)).max().unwrap_or(0);
    // Head room for the legend, top left (seven lines for three runs).
    let room = if several { 1.45 } else { 1.3 };
    let ymax = (top as f64 / GIB * room).max(1e-3);
    let mut chart = panel(area, events, ymax, "memory (GiB)", false)?;
    solid_and_dashed(&mut chart, runs, GIB, ("reserved", |s| s.reserved), ("allocated", |s| s.allocated))?;
    if let Some(r) = runs.first() {
        // Requested bytes are the trace's: the same for every allocator.
        chart
            .draw_series(LineSeries::new(series(r, |s| s.requested, GIB), BLACK.stroke_width(1)))?
            .label("requested (live bytes)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(1)));
    }
    legend(&mut chart)
}

fn pages_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    events: f64,
    runs: &[Run],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let several = runs.len() > 1;
    let top = runs.iter().flat_map(|r| r.samples).map(|s| s.pages_mapped.max(s.pages_moved)).max().unwrap_or(0);
    let ymax = (top as f64 * if several { 1.7 } else { 1.5 }).max(1.0);
    let mut chart = panel(area, events, ymax, "pages (so far)", true)?;
    solid_and_dashed(&mut chart, runs, 1.0, ("pages mapped", |s| s.pages_mapped), ("pages moved", |s| s.pages_moved))?;
    legend(&mut chart)
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A chart over `0..events` trace events and `0..ymax`, its axes labelled.
fn panel<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    events: f64,
    ymax: f64,
    y_desc: &str,
    whole_y: bool,
) -> Result<Chart<'a, DB>, Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..events, 0.0..ymax)?;
    let y_whole = |y: &f64| format!("{y:.0}");
    let mut mesh = chart.configure_mesh();
    mesh.x_desc("trace event")
        .y_desc(y_desc)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .light_line_style(WHITE.mix(0.0));
    if whole_y {
        mesh.y_label_formatter(&y_whole);
    }
    mesh.draw()?;
    Ok(chart)
}

/// The legend, top left.
fn legend<'a, DB: DrawingBackend + 'a>(chart: &mut Chart<'a, DB>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// `f` of every sample of `r`, divided by `scale`, against the event index.
fn series(r: &Run, f: fn(&Sample) -> u64, scale: f64) -> Vec<(f64, f64)> {
    flat_runs_shortened(r.samples.iter().map(|s| (s.event as f64, f(s) as f64 / scale)).collect())
}

/// For every run, a solid line of `solid` in the run's colour (labelled
/// per run) and a dashed line of `dashed` (labelled once).
fn solid_and_dashed<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    runs: &[Run],
    scale: f64,
    solid: (&str, fn(&Sample) -> u64),
    dashed: (&str, fn(&Sample) -> u64),
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let several = runs.len() > 1;
    for (i, r) in runs.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        chart
            .draw_series(LineSeries::new(series(r, solid.1, scale), c.stroke_width(2)))?
            .label(named(solid.0, r.label, several))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
    }
    for (i, r) in runs.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let line = chart.draw_series(DashedLineSeries::new(series(r, dashed.1, scale), 6, 4, c.stroke_width(1)))?;
        if i == 0 {
            let label = if several {
                format!("{} (dashed, each allocator's colour)", dashed.0)
            } else {
                format!("{} (dashed)", dashed.0)
            };
            let c = if several { GREY } else { c };
            line.label(label).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(1)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_stretches_keep_their_ends() {
        let pts = vec![(0.0, 1.0), (1.0, 1.0), (2.0, 1.0), (3.0, 2.0), (4.0, 2.0), (5.0, 0.0)];
        assert_eq!(flat_runs_shortened(pts), [(0.0, 1.0), (2.0, 1.0), (3.0, 2.0), (4.0, 2.0), (5.0, 0.0)]);
        assert_eq!(flat_runs_shortened(vec![(0.0, 3.0)]), [(0.0, 3.0)]);
    }
}
