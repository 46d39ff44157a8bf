//! The single part's chart: inserts per second against tasks, a line per strategy beside
//! the two baselines (a plain `insert_one` and the tutorial's two calls by hand), each point
//! the median over rounds with a bar from the slowest round to the fastest. An SVG drawn
//! with plotters, for BENCHMARKS.md to show.

use plotters::prelude::*;

use crate::Config;
use crate::model::{BoxError, Contender};
use crate::single::{Results, Trial};
use crate::stats::{median, min_max};

/// The contenders drawn, in the legend's order.
const DRAWN: [Contender; 6] = [
    Contender::Plain,
    Contender::Tutorial,
    Contender::Counters,
    Contender::Optimistic,
    Contender::Block10,
    Contender::Block100,
];

/// A contender's label, colour, and whether its line is dashed: the baselines are, in black
/// and grey, so that the strategies stand out against them.
fn look(contender: Contender) -> (&'static str, RGBColor, bool) {
    match contender {
        Contender::Plain => ("insert_one, ObjectId", RGBColor(0, 0, 0), true),
        Contender::Tutorial => ("tutorial, by hand", RGBColor(140, 140, 140), true),
        Contender::Counters => ("seqid counters", RGBColor(31, 119, 180), false),
        Contender::Optimistic => ("seqid optimistic", RGBColor(255, 127, 14), false),
        Contender::Block10 => ("seqid block 10", RGBColor(148, 103, 189), false),
        Contender::Block100 => ("seqid block 100", RGBColor(44, 160, 44), false),
        other => (other.label(), RGBColor(0, 0, 0), false),
    }
}

/// One contender's (tasks, median, slowest round, fastest round).
fn points(results: &Results, contender: Contender, config: &Config) -> Vec<(f64, f64, f64, f64)> {
    config
        .tasks
        .iter()
        .map(|&tasks| {
            let rates: Vec<f64> = results[&(contender, tasks)]
                .iter()
                .map(Trial::per_second)
                .collect();
            let (lo, hi) = min_max(&rates);
            (tasks as f64, median(&rates), lo, hi)
        })
        .collect()
}

/// Draws the chart into `config.chart`; `server` names the server in the caption.
pub fn draw(results: &Results, config: &Config, server: &str) -> Result<(), BoxError> {
    if let Some(dir) = config.chart.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let lines: Vec<_> = DRAWN
        .into_iter()
        .map(|contender| {
            let (label, color, dashed) = look(contender);
            (points(results, contender, config), label, color, dashed)
        })
        .collect();
    let top = lines
        .iter()
        .flat_map(|(points, ..)| points.iter().map(|p| p.3))
        .fold(0.0, f64::max)
        * 1.1;
    let (first, last) = match (config.tasks.first(), config.tasks.last()) {
        (Some(&first), Some(&last)) => (first as f64, last as f64),
        _ => return Err("no task counts to draw".into()),
    };
    // A log scale, so that 1, 16 and 64 tasks sit apart; a little room on either side.
    let x_range = (first / 1.25..last * 1.25)
        .log_scale()
        .with_key_points(config.tasks.iter().map(|&t| t as f64).collect());

    let root = SVGBackend::new(&config.chart, (900, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let server = server.split(" on ").next().unwrap_or(server);
    let caption = match config.rounds {
        1 => format!("Single inserts on {server}, one round"),
        rounds => format!(
            "Single inserts on {server}: medians of {rounds} rounds, bars from the slowest to the fastest"
        ),
    };
    let root = root.titled(&caption, ("sans-serif", 18))?;
    // The legend beside the plot, where no line can run under it.
    let (plot, legend) = root.split_horizontally(720);
    let mut chart = ChartBuilder::on(&plot)
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x_range, 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc("tasks inserting at once")
        .y_desc("inserts per second")
        .x_label_formatter(&|tasks| format!("{tasks:.0}"))
        .y_label_formatter(&|rate| format!("{rate:.0}"))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    for (row, (points, label, color, dashed)) in lines.iter().enumerate() {
        let style = color.stroke_width(2);
        let medians = points.iter().map(|&(x, median, ..)| (x, median));
        let y = 40 + 24 * row as i32;
        if *dashed {
            chart.draw_series(DashedLineSeries::new(medians, 8, 5, style))?;
            for x in [0, 16] {
                legend.draw(&PathElement::new(vec![(x, y), (x + 10, y)], style))?;
            }
        } else {
            chart.draw_series(LineSeries::new(medians, style))?;
            legend.draw(&PathElement::new(vec![(0, y), (26, y)], style))?;
        }
        legend.draw(&Text::new(*label, (34, y - 7), ("sans-serif", 14)))?;
        chart.draw_series(points.iter().map(|&(x, _, lo, hi)| {
            PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(1))
        }))?;
        chart.draw_series(
            points
                .iter()
                .map(|&(x, median, ..)| Circle::new((x, median), 3, color.filled())),
        )?;
    }
    root.present()?;
    Ok(())
}
