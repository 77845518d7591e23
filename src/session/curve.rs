//! The root's proof and disproof numbers over a solve (the paper's Figures 7–9): CSV for
//! analysis and a PNG with a log-scale y axis.

use std::io::Write;
use std::path::Path;

use plotters::prelude::*;

use crate::search::CurvePoint;

/// One row of a curve: the goal's attacker ("white"/"black") and the point.
pub type Row = (String, CurvePoint);

#[derive(Debug, thiserror::Error)]
pub enum CurveError {
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
    #[error("the curve has no points yet")]
    Empty,
}

fn write_err(path: &Path, e: impl std::fmt::Display) -> CurveError {
    CurveError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The CSV header; `goal` names the attacker of the search the row belongs to. A proof or
/// disproof number that is infinite (the question decided the other way) is written `inf`.
pub const CSV_HEADER: &str = "iteration,nodes,seconds,root_pn,root_dpn,goal";

/// A proof or disproof number as text: `inf` for infinity.
pub fn number(n: u64) -> String {
    if n >= crate::search::INFINITE {
        "inf".to_string()
    } else {
        n.to_string()
    }
}

/// Writes `rows` as CSV (through a temporary file, so a failed write leaves no half file).
pub fn write_csv(path: &Path, rows: &[Row]) -> Result<(), CurveError> {
    let mut text = String::with_capacity(rows.len() * 48);
    text.push_str(CSV_HEADER);
    text.push('\n');
    for (goal, p) in rows {
        text.push_str(&format!(
            "{},{},{:.6},{},{},{}\n",
            p.iteration,
            p.nodes,
            p.seconds,
            number(p.pn),
            number(p.dn),
            goal
        ));
    }
    let tmp = path.with_extension("csv.tmp");
    std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|_| f.sync_all()))
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| write_err(path, e))
}

/// A TrueType font for the labels, if the system has one (labels are left out otherwise).
fn label_font() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        const CANDIDATES: [&str; 4] = [
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/TTF/DejaVuSans.ttf",
            "/usr/share/fonts/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        ];
        CANDIDATES.iter().any(|p| match std::fs::read(p) {
            Ok(bytes) => {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
            }
            Err(_) => false,
        })
    })
}

/// Draws the root's pn (red) and dpn (blue) against the iteration, log scale, one panel per
/// goal, as the paper's Figures 7–9.
pub fn draw_png(path: &Path, title: &str, rows: &[Row]) -> Result<(), CurveError> {
    if rows.is_empty() {
        return Err(CurveError::Empty);
    }
    let mut goals: Vec<&str> = Vec::new();
    for (g, _) in rows {
        if !goals.contains(&g.as_str()) {
            goals.push(g);
        }
    }
    let labels = label_font();
    let root = BitMapBackend::new(path, (1000, 420 * goals.len() as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| write_err(path, e))?;
    let panels = root.split_evenly((goals.len(), 1));
    for (panel, goal) in panels.iter().zip(&goals) {
        let points: Vec<&CurvePoint> = rows
            .iter()
            .filter(|(g, _)| g == goal)
            .map(|(_, p)| p)
            .collect();
        // Proven or disproven ends at 0 and starts the other at "infinity": clip both to
        // the finite range the plot can show.
        let finite = |v: u64| v < crate::search::INFINITE;
        let max_y = points
            .iter()
            .flat_map(|p| [p.pn, p.dn])
            .filter(|&v| finite(v))
            .max()
            .unwrap_or(1)
            .max(2) as f64;
        let max_x = points.last().map_or(1, |p| p.iteration).max(2) as f64;
        let mut chart = ChartBuilder::on(panel);
        chart.margin(15);
        if labels {
            chart
                .caption(format!("{title}: {goal} wins?"), ("sans-serif", 22))
                .x_label_area_size(40)
                .y_label_area_size(70);
        }
        let mut chart = chart
            .build_cartesian_2d(1f64..max_x, (1f64..max_y * 2.0).log_scale())
            .map_err(|e| write_err(path, e))?;
        let mut mesh = chart.configure_mesh();
        if labels {
            mesh.x_desc("iteration")
                .y_desc("root pn / dpn")
                .x_label_formatter(&|v| format!("{v:.0}"))
                .y_label_formatter(&|v| format!("{v:.0}"));
        } else {
            mesh.x_labels(0).y_labels(0);
        }
        mesh.draw().map_err(|e| write_err(path, e))?;
        let series = |f: fn(&CurvePoint) -> u64| {
            points
                .iter()
                .map(move |p| {
                    (
                        p.iteration.max(1) as f64,
                        (f(p).clamp(1, max_y as u64)) as f64,
                    )
                })
                .collect::<Vec<_>>()
        };
        let pn = chart
            .draw_series(LineSeries::new(series(|p| p.pn), &RED))
            .map_err(|e| write_err(path, e))?;
        if labels {
            pn.label("proof number")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], RED));
        }
        let dn = chart
            .draw_series(LineSeries::new(series(|p| p.dn), &BLUE))
            .map_err(|e| write_err(path, e))?;
        if labels {
            dn.label("disproof number")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLUE));
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|e| write_err(path, e))?;
        }
    }
    root.present().map_err(|e| write_err(path, e))
}
