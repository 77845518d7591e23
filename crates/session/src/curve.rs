//! The root's proof and disproof numbers over a solve (the paper's Figures 7–9): CSV for
//! analysis, and a plot with a log-scale y axis as PNG or SVG (for a paper), of a chosen
//! size, against iterations or nodes.

use std::io::Write;
use std::path::Path;

use plotters::prelude::*;

use crate::bitmap_text::BitmapText;
use crate::bitmap_text::label_font;
use fanorona_search::CurvePoint;

/// One row of a curve: the goal's attacker ("white"/"black") and the point.
pub type Row = (String, CurvePoint);

#[derive(Debug, thiserror::Error)]
pub enum CurveError {
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
    #[error("the curve has no points yet")]
    Empty,
    #[error("{path}: {message}")]
    Read { path: String, message: String },
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

/// At most about `most` points of each goal's rows: every k-th, and each goal's first and
/// last (a plot or a published CSV needs no more than its resolution).
pub fn thin(rows: &[Row], most: usize) -> Vec<&Row> {
    let mut by_goal: Vec<(&str, Vec<&Row>)> = Vec::new();
    for r in rows {
        match by_goal.iter_mut().find(|(g, _)| *g == r.0) {
            Some((_, v)) => v.push(r),
            None => by_goal.push((&r.0, vec![r])),
        }
    }
    let mut out = Vec::new();
    for (_, v) in by_goal {
        let step = v.len().div_ceil(most.max(1)).max(1);
        for (i, r) in v.iter().enumerate() {
            if i % step == 0 || i + 1 == v.len() {
                out.push(*r);
            }
        }
    }
    out
}

/// A proof or disproof number as text: `inf` for infinity.
pub fn number(n: u64) -> String {
    if n >= fanorona_search::INFINITE {
        "inf".to_string()
    } else {
        n.to_string()
    }
}

/// Writes `rows` as CSV (through a temporary file, so a failed write leaves no half file).
pub fn write_csv(path: &Path, rows: &[Row]) -> Result<(), CurveError> {
    let text = csv_text(rows);
    let tmp = path.with_extension("csv.tmp");
    std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|_| f.sync_all()))
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| write_err(path, e))
}

/// `rows` as CSV text, header first.
pub fn csv_text(rows: &[Row]) -> String {
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
    text
}

/// Reads a curve `write_csv` wrote (or `session curve --csv`): an earlier run to draw beside
/// a session's. A line that is not a curve's row is named with its number.
pub fn read_csv(path: &Path) -> Result<Vec<Row>, CurveError> {
    let err = |message: String| CurveError::Read {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some(CSV_HEADER) {
        return Err(err(format!(
            "not a curve (its first line is not \"{CSV_HEADER}\")"
        )));
    }
    let number = |f: &str| -> Option<u64> {
        match f {
            "inf" => Some(fanorona_search::INFINITE),
            f => f.parse().ok(),
        }
    };
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let f: Vec<&str> = line.trim().split(',').collect();
        let point = (f.len() == 6)
            .then(|| {
                Some(CurvePoint {
                    iteration: f[0].parse().ok()?,
                    nodes: f[1].parse().ok()?,
                    seconds: f[2].parse().ok()?,
                    pn: number(f[3])?,
                    dn: number(f[4])?,
                })
            })
            .flatten()
            .filter(|_| matches!(f[5], "white" | "black"));
        match point {
            Some(p) => rows.push((f[5].to_string(), p)),
            None => return Err(err(format!("line {}: not a curve's row: {line}", i + 2))),
        }
    }
    if rows.is_empty() {
        return Err(err("a curve without points".to_string()));
    }
    Ok(rows)
}

/// The rows of `earlier` that a plot of `own` shows beside it: each question's as far as
/// its own curve goes on the `x` axis (so that thinning them afterwards keeps the points in
/// view, not those of a longer run's whole length).
pub fn within(earlier: Vec<Row>, own: &[Row], x: Axis) -> Vec<Row> {
    // Each question's end once (a curve has one or two questions and may have hundreds of
    // thousands of points: looking it up again for every earlier point was quadratic).
    let mut ends: Vec<(&str, u64)> = Vec::new();
    for (g, p) in own {
        match ends.iter_mut().find(|(e, _)| e == g) {
            Some((_, end)) => *end = (*end).max(x.of(p)),
            None => ends.push((g, x.of(p))),
        }
    }
    earlier
        .into_iter()
        .filter(|(g, p)| ends.iter().any(|(e, end)| e == g && x.of(p) <= *end))
        .collect()
}

/// How a question's curve ends: its last point's outcome, in words.
fn outcome(last: &CurvePoint) -> &'static str {
    if last.pn == 0 {
        "proven"
    } else if last.dn == 0 {
        "disproven"
    } else {
        "open"
    }
}

/// A count on an axis or in a title, short: 950, 12k, 3.8M, 1.2G (below 10,000 in full).
fn tick(v: f64) -> String {
    let short = |x: f64, unit: &str| {
        let text = format!("{x:.1}");
        format!("{}{unit}", text.strip_suffix(".0").unwrap_or(&text))
    };
    match v {
        v if v >= 1e9 => short(v / 1e9, "G"),
        v if v >= 1e6 => short(v / 1e6, "M"),
        v if v >= 1e4 => short(v / 1e3, "k"),
        v => format!("{v:.0}"),
    }
}

/// What the x axis counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Axis {
    /// PN iterations (the paper's figures).
    #[default]
    Iterations,
    /// Nodes searched, second level included: comparable across algorithms.
    Nodes,
}

impl std::str::FromStr for Axis {
    type Err = String;

    fn from_str(s: &str) -> Result<Axis, String> {
        match s {
            "iterations" => Ok(Axis::Iterations),
            "nodes" => Ok(Axis::Nodes),
            _ => Err(format!("'{s}': the x axis counts iterations or nodes")),
        }
    }
}

impl Axis {
    fn of(self, p: &CurvePoint) -> u64 {
        match self {
            Axis::Iterations => p.iteration,
            Axis::Nodes => p.nodes,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Axis::Iterations => "iteration",
            Axis::Nodes => "nodes",
        }
    }
}

/// How a plot is drawn: its width, each question's panel height (pixels; SVG units), and
/// its x axis.
#[derive(Clone, Copy, Debug)]
pub struct Plot {
    pub width: u32,
    pub panel_height: u32,
    pub x: Axis,
}

impl Default for Plot {
    fn default() -> Plot {
        Plot {
            width: 1100,
            panel_height: 440,
            x: Axis::Iterations,
        }
    }
}

/// The points of one number that a log scale can show: 0 (the decided end) and infinity
/// (the other number there) are left out, so a line ends at its last finite value instead
/// of dropping to the axis; the end is marked apart.
fn plotted(points: &[&CurvePoint], x: Axis, number: fn(&CurvePoint) -> u64) -> Vec<(f64, f64)> {
    points
        .iter()
        .filter(|p| (1..fanorona_search::INFINITE).contains(&number(p)))
        .map(|p| (x.of(p).max(1) as f64, number(p) as f64))
        .collect()
}

/// The colour of a resume's line.
const RESUMED: RGBColor = RGBColor(235, 140, 0);

/// Width of the legend column right of each plot.
const LEGEND_WIDTH: u32 = 220;

/// What a figure says besides its points: its title, how the session searched (a few short
/// lines under the legend: algorithm, second level, tables), and where each question's
/// search resumed from a checkpoint (after a restart, a crash or a pause), so a reader can
/// tell a jump in the numbers from a new run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figure {
    pub title: String,
    pub about: Vec<String>,
    /// (question's attacker, iteration at which a resumed run began).
    pub resumed: Vec<(String, u64)>,
    /// An earlier run of the same questions drawn beside, in paler colours, as far as the
    /// session's own curve goes (compared at the same iterations or nodes).
    pub beside: Option<Beside>,
}

/// An earlier run's curve (`read_csv`) and what the legend calls it, such as "material".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Beside {
    pub label: String,
    pub rows: Vec<Row>,
}

/// The colours of an earlier run's proof and disproof numbers.
const BESIDE_PN: RGBColor = RGBColor(245, 160, 160);
const BESIDE_DN: RGBColor = RGBColor(150, 170, 245);

/// Where each resume of `goal` falls on the x axis: the first point at or after its
/// iteration (its node count on a nodes axis). A resume past the last point (no iteration
/// since) is not drawn.
fn resumes_on_axis(figure: &Figure, goal: &str, points: &[&CurvePoint], x: Axis) -> Vec<f64> {
    figure
        .resumed
        .iter()
        .filter(|(g, _)| g == goal)
        .filter_map(|&(_, it)| points.iter().find(|p| p.iteration >= it))
        .map(|p| x.of(p).max(1) as f64)
        .collect()
}

/// The smallest plot drawn: its width, and a question's panel height.
pub const MIN_SIZE: (u32, u32) = (LEGEND_WIDTH + 200, 120);

/// Draws the root's pn (red) and dpn (blue) against the iteration (or nodes), log scale,
/// one panel per goal, as the paper's Figures 7–9: each panel titled with its question and
/// how it ended, the legend beside the plot with what `figure` says of the search, the
/// decided end and each resume marked. A PNG, or an SVG when `path` ends in `.svg`.
pub fn draw_plot(
    path: &Path,
    figure: &Figure,
    rows: &[Row],
    plot: &Plot,
) -> Result<(), CurveError> {
    if rows.is_empty() {
        return Err(CurveError::Empty);
    }
    if plot.width < MIN_SIZE.0 || plot.panel_height < MIN_SIZE.1 {
        return Err(write_err(
            path,
            format!(
                "a plot {}x{} is too small: at least {}x{} a question",
                plot.width, plot.panel_height, MIN_SIZE.0, MIN_SIZE.1
            ),
        ));
    }
    let mut goals: Vec<&str> = Vec::new();
    for (g, _) in rows {
        if !goals.contains(&g.as_str()) {
            goals.push(g);
        }
    }
    let svg = path.extension().is_some_and(|e| e == "svg");
    let size = (plot.width, plot.panel_height * goals.len() as u32);
    // Drawn to a temporary file, renamed at the end: a failure leaves nothing half-written.
    // Creating it here first turns an unwritable place into a plain OS error.
    let tmp = path.with_extension(if svg { "tmp.svg" } else { "tmp.png" });
    std::fs::File::create(&tmp).map_err(|e| write_err(path, e))?;
    let drawn = if svg {
        draw(
            SVGBackend::new(&tmp, size).into_drawing_area(),
            figure,
            rows,
            &goals,
            plot,
        )
    } else {
        draw(
            BitmapText(BitMapBackend::new(&tmp, size)).into_drawing_area(),
            figure,
            rows,
            &goals,
            plot,
        )
    }
    .map_err(|e| write_err(path, format!("the plot failed: {e}")))
    .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| write_err(path, e)));
    if drawn.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    drawn
}

/// Plots every goal's panel onto `root`.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    figure: &Figure,
    rows: &[Row],
    goals: &[&str],
    how: &Plot,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let labels = label_font();
    let title = &figure.title;
    root.fill(&WHITE)?;
    let panels = root.split_evenly((goals.len(), 1));
    for (panel, goal) in panels.iter().zip(goals) {
        let points: Vec<&CurvePoint> = rows
            .iter()
            .filter(|(g, _)| g == goal)
            .map(|(_, p)| p)
            .collect();
        let last = **points.last().expect("each goal has a point");
        let (pn, dn) = (
            plotted(&points, how.x, |p| p.pn),
            plotted(&points, how.x, |p| p.dn),
        );
        let earlier: Vec<&CurvePoint> = figure
            .beside
            .iter()
            .flat_map(|b| &b.rows)
            .filter(|(g, p)| g == goal && how.x.of(p) <= how.x.of(&last))
            .map(|(_, p)| p)
            .collect();
        let (pn_before, dn_before) = (
            plotted(&earlier, how.x, |p| p.pn),
            plotted(&earlier, how.x, |p| p.dn),
        );
        let all = || pn.iter().chain(&dn).chain(&pn_before).chain(&dn_before);
        let max_y = all().map(|&(_, y)| y).fold(2.0, f64::max);
        let max_x = how.x.of(&last).max(2) as f64;
        let (plot, legend) = panel.split_horizontally(panel.dim_in_pixel().0 - LEGEND_WIDTH);
        let ended = outcome(&last);
        let mut chart = ChartBuilder::on(&plot);
        chart.margin(15);
        if labels {
            let caption = match ended {
                "open" => format!(
                    "{title}: {goal} wins? open after {} iterations",
                    last.iteration
                ),
                e => format!(
                    "{title}: {goal} wins? {e} at iteration {} ({} nodes)",
                    last.iteration,
                    tick(last.nodes as f64)
                ),
            };
            // 24 points, smaller when the caption would not fit the plot's width (a glyph is
            // about half its size wide).
            let width = plot.dim_in_pixel().0 as f64 - 30.0;
            let size = (width / (0.55 * caption.chars().count() as f64)).clamp(12.0, 24.0);
            chart
                .caption(caption, ("sans-serif", size))
                .x_label_area_size(50)
                .y_label_area_size(80);
        }
        let mut chart =
            chart.build_cartesian_2d(1f64..max_x * 1.02, (1f64..max_y * 2.0).log_scale())?;
        let mut mesh = chart.configure_mesh();
        if labels {
            // About one label per 90 pixels: more run into each other.
            let x_labels = (plot.dim_in_pixel().0 / 90).max(2) as usize;
            mesh.x_desc(how.x.name())
                .x_labels(x_labels)
                .y_desc("root proof / disproof number")
                .axis_desc_style(("sans-serif", 18))
                .label_style(("sans-serif", 15))
                .x_label_formatter(&|v| tick(*v))
                .y_label_formatter(&|v| tick(*v));
        } else {
            mesh.x_labels(0).y_labels(0);
        }
        mesh.draw()?;
        // The earlier run first, so the session's own lines are drawn over it.
        chart.draw_series(LineSeries::new(pn_before, BESIDE_PN.stroke_width(2)))?;
        chart.draw_series(LineSeries::new(dn_before, BESIDE_DN.stroke_width(2)))?;
        chart.draw_series(LineSeries::new(pn, RED.stroke_width(2)))?;
        chart.draw_series(LineSeries::new(dn, BLUE.stroke_width(2)))?;
        // The decided end: a dashed line at its iteration (the number that reached 0 has
        // no point on a log scale).
        if ended != "open" {
            let x = how.x.of(&last).max(1) as f64;
            let dashes = (0..40).map(|i| {
                let y = |k: f64| (max_y * 2.0).powf(k / 40.0);
                PathElement::new([(x, y(i as f64)), (x, y(i as f64 + 0.5))], BLACK)
            });
            chart.draw_series(dashes)?;
        }
        // Each resume: an orange line the height of the plot.
        let resumes = resumes_on_axis(figure, goal, &points, how.x);
        chart.draw_series(
            resumes
                .iter()
                .map(|&x| PathElement::new([(x, 1.0), (x, max_y * 2.0)], RESUMED.stroke_width(2))),
        )?;
        if labels {
            let font = ("sans-serif", 16).into_font();
            let entries: [(&str, RGBColor); 2] = [("proof number", RED), ("disproof number", BLUE)];
            for (i, (text, color)) in entries.iter().enumerate() {
                let y = 80 + 28 * i as i32;
                legend.draw(&PathElement::new([(8, y), (40, y)], color.stroke_width(2)))?;
                legend.draw(&Text::new(*text, (48, y - 8), font.clone()))?;
            }
            let mut y = 80 + 28 * 2;
            if let Some(b) = figure.beside.as_ref().filter(|_| !earlier.is_empty()) {
                let small = ("sans-serif", 14).into_font();
                for (what, color) in [("proof", BESIDE_PN), ("disproof", BESIDE_DN)] {
                    legend.draw(&PathElement::new([(8, y), (40, y)], color.stroke_width(2)))?;
                    let text = format!("{what}, {}", b.label);
                    legend.draw(&Text::new(text, (48, y - 8), small.clone()))?;
                    y += 28;
                }
            }
            if ended != "open" {
                legend.draw(&PathElement::new([(8, y), (16, y)], BLACK))?;
                legend.draw(&PathElement::new([(24, y), (32, y)], BLACK))?;
                legend.draw(&Text::new(ended, (48, y - 8), font.clone()))?;
                y += 28;
            }
            if !resumes.is_empty() {
                legend.draw(&PathElement::new(
                    [(8, y), (40, y)],
                    RESUMED.stroke_width(2),
                ))?;
                let text = match resumes.len() {
                    1 => "resumed".to_string(),
                    n => format!("resumed ({n} times)"),
                };
                legend.draw(&Text::new(text, (48, y - 8), font.clone()))?;
                y += 28;
            }
            let small = ("sans-serif", 14).into_font();
            for line in &figure.about {
                y += 20;
                legend.draw(&Text::new(line.as_str(), (8, y - 8), small.clone()))?;
            }
        }
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(iteration: u64, pn: u64, dn: u64) -> CurvePoint {
        CurvePoint {
            iteration,
            nodes: iteration * 10,
            seconds: 0.0,
            pn,
            dn,
        }
    }

    #[test]
    fn a_decided_end_is_not_drawn_as_a_drop_to_one() {
        let inf = fanorona_search::INFINITE;
        let points = [point(1, 3, 4), point(2, 2, 9), point(3, 0, inf)];
        let refs: Vec<&CurvePoint> = points.iter().collect();
        assert_eq!(
            plotted(&refs, Axis::Iterations, |p| p.pn),
            vec![(1.0, 3.0), (2.0, 2.0)]
        );
        assert_eq!(
            plotted(&refs, Axis::Iterations, |p| p.dn),
            vec![(1.0, 4.0), (2.0, 9.0)]
        );
        assert_eq!(outcome(&points[2]), "proven");
        assert_eq!(outcome(&point(5, inf, 0)), "disproven");
        assert_eq!(outcome(&points[1]), "open");
        assert_eq!(number(inf), "inf");
        assert_eq!(number(7), "7");
    }

    #[test]
    fn a_written_curve_reads_back_and_a_bad_row_is_named() {
        let dir = std::env::temp_dir().join(format!("curve-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.csv");
        let inf = fanorona_search::INFINITE;
        let rows: Vec<Row> = vec![
            ("black".to_string(), point(1, 3, 4)),
            ("black".to_string(), point(2, inf, 0)),
            ("white".to_string(), point(1, 7, 2)),
        ];
        write_csv(&path, &rows).unwrap();
        assert_eq!(read_csv(&path).unwrap(), rows);
        std::fs::write(
            &path,
            format!("{CSV_HEADER}\n1,10,0.0,3,4,black\n2,x,0,1,1,black\n"),
        )
        .unwrap();
        let e = read_csv(&path).unwrap_err().to_string();
        assert!(e.contains("c.csv") && e.contains("line 3"), "{e}");
        std::fs::write(&path, "a,b\n").unwrap();
        assert!(
            read_csv(&path)
                .unwrap_err()
                .to_string()
                .contains("not a curve")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_earlier_curve_is_kept_as_far_as_each_question_of_the_own_goes() {
        let row = |g: &str, i: u64| (g.to_string(), point(i, 1, 1));
        let own = vec![
            row("black", 1),
            row("black", 5),
            row("white", 1),
            row("white", 2),
        ];
        let earlier: Vec<Row> = (1..=9)
            .flat_map(|i| [row("black", i), row("white", i)])
            .collect();
        let kept = within(earlier.clone(), &own, Axis::Iterations);
        let at = |g: &str| {
            kept.iter()
                .filter(|(x, _)| x == g)
                .map(|(_, p)| p.iteration)
                .max()
        };
        assert_eq!((at("black"), at("white")), (Some(5), Some(2)));
        assert_eq!(kept.len(), 7);
        // On nodes (ten a point here) the same cut.
        assert_eq!(within(earlier, &own, Axis::Nodes).len(), 7);
    }

    #[test]
    fn counts_are_short_on_axes_and_titles() {
        let shown: Vec<String> = [
            1.0,
            950.0,
            9999.0,
            10_000.0,
            12_345.0,
            3_816_065.0,
            8e7,
            1.25e9,
        ]
        .into_iter()
        .map(tick)
        .collect();
        assert_eq!(
            shown,
            ["1", "950", "9999", "10k", "12.3k", "3.8M", "80M", "1.2G"]
        );
    }

    #[test]
    fn thinning_keeps_each_goals_ends() {
        let mut rows: Vec<Row> = (1..=10_000)
            .map(|i| ("white".to_string(), point(i, 1, 1)))
            .collect();
        rows.extend((1..=7).map(|i| ("black".to_string(), point(i, 1, 1))));
        let t = thin(&rows, 1500);
        let white: Vec<u64> = t
            .iter()
            .filter(|r| r.0 == "white")
            .map(|r| r.1.iteration)
            .collect();
        assert!(white.len() <= 1501, "{}", white.len());
        assert_eq!((white[0], *white.last().unwrap()), (1, 10_000));
        // A goal with fewer points than the bound keeps them all.
        assert_eq!(t.iter().filter(|r| r.0 == "black").count(), 7);
    }
}
