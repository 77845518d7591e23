//! `fanorona stats`: the paper's Section 3 measured again (Table 1, Figures 4 and 5).

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use plotters::prelude::*;

use crate::cli::game_batch::{self, GameBatch};
use crate::cli::output::{CliResult, Failure, counted, print_json};
use crate::out;
use fanorona::Position;
use fanorona::play::report::{GamesMeasured, PaperMeans};
use fanorona::play::stats::{GameStats, StatsSpec, measure};
use fanorona::session::bitmap_text::BitmapText;

#[derive(clap::Args)]
pub struct StatsArgs {
    /// The board whose start the games begin from (RxC).
    #[arg(long, default_value = "5x9")]
    pub board: String,
    /// Games to play.
    #[arg(long, default_value_t = 10_000)]
    pub games: usize,
    /// Plies each alpha-beta player searches.
    #[arg(long, default_value_t = 4)]
    pub depth: u32,
    /// The noise in each leaf's score.
    ///
    /// 0.2 gives the paper's branching factor. Each leaf's material score (from -1 to 1) gets a uniform amount in [-noise, noise];
    /// see docs/results.md.
    #[arg(long, default_value_t = 0.2)]
    pub noise: f64,
    /// Games played at once (default: threads of the config).
    #[arg(long, value_parser = crate::cli::args::threads)]
    pub threads: Option<usize>,
    #[arg(long, default_value_t = 1)]
    /// Seed of the players' random factors.
    pub seed: u64,
    /// Plies after which a game is drawn (0: no cap).
    #[arg(long, default_value_t = 400)]
    pub max_plies: usize,
    /// Where to write the table and figures (CSV and PNG).
    ///
    /// table1.csv, figure4-captures.{csv,png} and figure5-branching.{csv,png}; made if it
    /// is not there.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The paper's Table 1 without a database: 43.81 plies, 11.19 moves.
const PAPER_LENGTH: f64 = 43.81;
const PAPER_BRANCHING: f64 = 11.19;

pub fn stats(args: StatsArgs, config: &fanorona::config::Config) -> CliResult {
    let board = args
        .board
        .parse()
        .map_err(|e| Failure::input(anyhow!("--board: {e}")))?;
    // The first flag out of range, by name.
    let bad = [
        (
            args.games == 0,
            format!("--games {}: give at least 1", args.games),
        ),
        (
            args.depth == 0,
            format!("--depth {}: give at least 1", args.depth),
        ),
        (
            !(0.0..=1.0).contains(&args.noise),
            format!("--noise {}: give a share from 0 to 1", args.noise),
        ),
    ];
    if let Some((_, message)) = bad.into_iter().find(|(b, _)| *b) {
        return Err(Failure::input(anyhow!(message)));
    }
    // An output directory not there yet is made (its files are the command's own), once
    // the rest of the input is known good.
    if args.out.exists() && !args.out.is_dir() {
        return Err(Failure::input(anyhow!(
            "--out {}: a file, not a directory",
            args.out.display()
        )));
    }
    std::fs::create_dir_all(&args.out).map_err(|e| {
        Failure::input(anyhow!("--out {}: cannot be made: {e}", args.out.display()))
    })?;
    // Writable now, not found out after every game is played.
    crate::cli::output::check_output("--out", &args.out.join("table1.csv"))?;

    let spec = StatsSpec {
        start: Position::initial(board),
        games: args.games,
        depth: args.depth,
        noise: args.noise,
        threads: args.threads.unwrap_or(config.threads),
        seed: args.seed,
        // 0 is no cap, as for play and match.
        max_plies: if args.max_plies == 0 {
            usize::MAX
        } else {
            args.max_plies
        },
    };
    let batch = GameBatch::start(format!("games on {board}"), args.games, args.json);
    let t = std::time::Instant::now();
    let s = measure(&spec, &|| batch.inc(), batch.stop());
    let interrupted = batch.finish(s.games)?;
    let seconds = t.elapsed().as_secs_f64();
    write_outputs(&args.out, &s, &board.to_string())?;
    let none = s.cuts[0];
    if args.json {
        print_json(&GamesMeasured {
            board,
            games: s.games,
            draws: s.draws,
            depth: spec.depth,
            noise: spec.noise,
            seed: spec.seed,
            mean_length: none.mean_length,
            mean_branching: none.mean_branching,
            paper: (board == fanorona::Board::STANDARD).then_some(PaperMeans {
                mean_length: PAPER_LENGTH,
                mean_branching: PAPER_BRANCHING,
            }),
            virtual_databases: s.cuts.iter().skip(1).copied().collect(),
            seconds,
            games_asked: spec.games,
            interrupted: interrupted.is_some(),
        })?;
    } else {
        // The paper measured 5x9 only.
        let paper = if board == fanorona::Board::STANDARD {
            format!(" (the paper: {PAPER_LENGTH} and {PAPER_BRANCHING})")
        } else {
            String::new()
        };
        out!(
            "{} on {board} ({} drawn), {}-ply alpha-beta on material with noise {}: {:.2} plies a game, {:.2} moves a position{paper}",
            counted(s.games, "game", "games"),
            s.draws,
            spec.depth,
            spec.noise,
            none.mean_length,
            none.mean_branching
        );
        out!("virtual database   plies   branching   games cut");
        for c in s.cuts.iter().skip(1) {
            out!(
                "{:>2} pieces        {:>7.2}   {:>9.2}   {:>9}",
                c.k,
                c.mean_length,
                c.mean_branching,
                c.games_cut
            );
        }
        out!(
            "table1.csv, figure4-captures.{{csv,png}}, figure5-branching.{{csv,png}} in {}; {seconds:.1} s",
            args.out.display()
        );
    }
    game_batch::end(interrupted, args.json)
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    crate::cli::output::write_atomically(path, text.as_bytes())
}

fn write_outputs(dir: &Path, s: &GameStats, board: &str) -> Result<(), Failure> {
    let mut t1 = String::from("pieces_in_database,mean_length,mean_branching,games_cut\n");
    for c in &s.cuts {
        t1.push_str(&format!(
            "{},{:.4},{:.4},{}\n",
            c.k, c.mean_length, c.mean_branching, c.games_cut
        ));
    }
    write(&dir.join("table1.csv"), &t1)?;
    let mut f4 = String::from("pieces,positions,capture_positions,capture_percent\n");
    let mut f5 = String::from("pieces,positions,mean_branching\n");
    let mut captures = Vec::new();
    let mut branching = Vec::new();
    for r in &s.by_pieces {
        let pct = 100.0 * r.capture_positions as f64 / r.positions as f64;
        let b = r.moves as f64 / r.positions as f64;
        f4.push_str(&format!(
            "{},{},{},{pct:.3}\n",
            r.pieces, r.positions, r.capture_positions
        ));
        f5.push_str(&format!("{},{},{b:.4}\n", r.pieces, r.positions));
        captures.push((r.pieces as f64, pct));
        branching.push((r.pieces as f64, b));
    }
    write(&dir.join("figure4-captures.csv"), &f4)?;
    write(&dir.join("figure5-branching.csv"), &f5)?;
    let paika: Vec<(f64, f64)> = captures.iter().map(|&(x, y)| (x, 100.0 - y)).collect();
    plot(
        &dir.join("figure4-captures.png"),
        &format!("{board}: capture and paika positions by pieces on the board"),
        "% of positions",
        &[("capture", &captures, RED), ("paika", &paika, BLUE)],
        SeriesLabelPosition::MiddleLeft,
    )?;
    plot(
        &dir.join("figure5-branching.png"),
        &format!("{board}: branching factor by pieces on the board"),
        "legal moves",
        &[("branching factor", &branching, BLUE)],
        SeriesLabelPosition::UpperRight,
    )
}

type Series<'a> = (&'a str, &'a [(f64, f64)], RGBColor);

/// A line chart against the pieces on the board (most pieces on the left, as a game goes).
fn plot(
    path: &Path,
    title: &str,
    y_label: &str,
    series: &[Series<'_>],
    legend: SeriesLabelPosition,
) -> Result<(), Failure> {
    let fail =
        |e: &dyn std::fmt::Display| Failure::other(anyhow!("cannot draw {}: {e}", path.display()));
    fanorona::session::bitmap_text::label_font();
    let max_x = series
        .iter()
        .flat_map(|(_, p, _)| p.iter().map(|&(x, _)| x))
        .fold(2.0, f64::max);
    let max_y = series
        .iter()
        .flat_map(|(_, p, _)| p.iter().map(|&(_, y)| y))
        .fold(1.0, f64::max);
    // Ticks on a small scale fall between whole numbers: enough decimals to tell them apart.
    let decimals = if max_y >= 20.0 {
        0
    } else if max_y >= 2.0 {
        1
    } else {
        2
    };
    let y_tick = move |v: &f64| format!("{v:.decimals$}");
    let root = BitmapText(BitMapBackend::new(path, (1000, 500))).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .margin(15)
        .caption(title, ("sans-serif", 22))
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((max_x + 1.0)..1.0, 0.0..max_y * 1.05)
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .x_desc("pieces on the board")
        .y_desc(y_label)
        .axis_desc_style(("sans-serif", 18))
        .label_style(("sans-serif", 15))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&y_tick)
        .draw()
        .map_err(|e| fail(&e))?;
    for &(name, points, color) in series {
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| fail(&e))?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(legend)
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))
}
