//! The demo's pictures (SVG): divergence and render delay over time per
//! client, true and shown paths of a few objects from above, and who held
//! which object when.

use std::path::Path;

use glam::Vec3;
use plotters::prelude::*;

use super::metrics::{Metrics, BUCKET};

type Result<T> = std::result::Result<T, String>;

fn err(e: impl std::fmt::Display) -> String {
    format!("plot: {e}")
}

/// A distinct colour per client (or holder).
fn colour(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(23, 190, 207),
    ];
    PALETTE[i % PALETTE.len()]
}

/// One line per client of `value` over time.
fn per_client_series(
    file: &Path,
    title: &str,
    y_desc: &str,
    clients: &[&Metrics],
    value: impl Fn(&super::metrics::Bucket) -> Option<f64>,
) -> Result<()> {
    let lines: Vec<Vec<(f64, f64)>> = clients
        .iter()
        .map(|m| {
            m.series
                .iter()
                .enumerate()
                .filter_map(|(i, b)| value(b).map(|v| ((i as f64 + 0.5) * BUCKET, v)))
                .collect()
        })
        .collect();
    let t_max = lines.iter().flatten().map(|p| p.0).fold(1.0_f64, f64::max);
    let y_max = lines.iter().flatten().map(|p| p.1).fold(1e-3_f64, f64::max) * 1.1;
    let root = SVGBackend::new(file, (900, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..t_max, 0.0..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_desc)
        .draw()
        .map_err(err)?;
    for (i, line) in lines.into_iter().enumerate() {
        let c = colour(i);
        chart
            .draw_series(LineSeries::new(line, c.stroke_width(2)))
            .map_err(err)?
            .label(format!("client {i}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

pub fn divergence(file: &Path, clients: &[&Metrics]) -> Result<()> {
    per_client_series(
        file,
        "Divergence of shown objects from their holder's truth (RMS per 0.5 s)",
        "metres",
        clients,
        |b| b.rms(),
    )
}

pub fn render_delay(file: &Path, clients: &[&Metrics]) -> Result<()> {
    per_client_series(
        file,
        "Render delay (adaptive interpolation, behind the server clock)",
        "seconds",
        clients,
        |b| b.delay(),
    )
}

/// One entity's path: where its holders had it and where a viewer
/// showed it, as (time, position).
pub struct TrackedPath {
    pub entity: u64,
    pub truth: Vec<(f64, Vec3)>,
    pub shown: Vec<(f64, Vec3)>,
}

/// Top-down (x, z): thick the holders' true paths, thin black what one
/// client showed.
pub fn paths(file: &Path, tracked: &[TrackedPath], half: f32) -> Result<()> {
    let root = SVGBackend::new(file, (760, 760)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let h = half as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Paths from above: truth (thick) and shown on client 1 (thin)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(44)
        .build_cartesian_2d(-h..h, -h..h)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("x (m)")
        .y_desc("z (m)")
        .draw()
        .map_err(err)?;
    for (
        i,
        TrackedPath {
            entity,
            truth,
            shown,
        },
    ) in tracked.iter().enumerate()
    {
        let c = colour(i);
        chart
            .draw_series(LineSeries::new(
                truth.iter().map(|(_, p)| (p.x as f64, p.z as f64)),
                c.stroke_width(4),
            ))
            .map_err(err)?
            .label(if *entity < 1000 {
                format!("ball of client {}", entity - 1)
            } else {
                format!("object {entity}")
            })
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(4)));
        chart
            .draw_series(LineSeries::new(
                shown.iter().map(|(_, p)| (p.x as f64, p.z as f64)),
                BLACK.stroke_width(1),
            ))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// One row per object: a bar coloured by its holder (grey: nobody) over
/// time, as the first client saw the relay announce it.
pub fn rights(
    file: &Path,
    rows: &[(u64, Vec<(f64, u32)>)],
    client_ids: &[u32],
    end: f64,
) -> Result<()> {
    let height = 80 + 26 * rows.len().max(1) as u32;
    let root = SVGBackend::new(file, (900, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Send right of each object over time (colour: holder; grey: nobody)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..end.max(1.0), 0.0..rows.len().max(1) as f64)
        .map_err(err)?;
    let labels: Vec<String> = rows.iter().map(|(e, _)| format!("object {e}")).collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows.len().max(1) * 2)
        .y_label_formatter(&|y| labels.get(*y as usize).cloned().unwrap_or_default())
        .x_desc("time (s)")
        .draw()
        .map_err(err)?;
    for (row, (_, changes)) in rows.iter().enumerate() {
        for (k, &(t, holder)) in changes.iter().enumerate() {
            let until = changes.get(k + 1).map_or(end, |c| c.0);
            let fill = match client_ids
                .iter()
                .position(|&id| id == holder && holder != 0)
            {
                Some(i) => colour(i).filled(),
                None => RGBColor(200, 200, 200).filled(),
            };
            let y = row as f64;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(t, y + 0.15), (until, y + 0.85)],
                    fill,
                )))
                .map_err(err)?;
        }
    }
    root.present().map_err(err)
}
