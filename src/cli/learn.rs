//! `fanorona learn`: the value model trained on the endgame tables, its accuracy printed by
//! piece count against the material baseline, its weights written.

use std::path::PathBuf;

use anyhow::anyhow;

use crate::cli::output::{CliResult, Failure, print_json};
use crate::out;
use fanorona::search::learned::train::{self, Settings};

#[derive(clap::Args)]
pub struct LearnArgs {
    /// The endgame tables to learn from (default: db_dir of the config).
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// The board (RxC); its transpose reads the same weights.
    #[arg(long, default_value = "5x9")]
    pub board: String,
    /// Tables of 2 to this many pieces are sampled (all must be built).
    #[arg(long, default_value_t = 9)]
    pub pieces: usize,
    /// Positions drawn for each material (the side to move's pieces and the other's).
    #[arg(long, default_value_t = 40_000)]
    pub samples: u64,
    /// Seed of the samples, of the held-out tenth and of the training's order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Passes over the training samples.
    #[arg(long, default_value_t = 6)]
    pub epochs: usize,
    /// How many times a quiet position (no capture for either side) counts.
    #[arg(long, default_value_t = 4.0)]
    pub quiet_weight: f32,
    /// Random games from the board's start whose positions within the tables (the first of
    /// each piece count in a game) are sampled too, a tenth of the games held out to test.
    #[arg(long, default_value_t = 0)]
    pub playouts: u64,
    /// How many times a position from those games counts in training (in place of
    /// --quiet-weight); 0: they only test. The held-out tenth is the same at any weight.
    #[arg(long, default_value_t = 1.0, requires = "playouts")]
    pub play_weight: f32,
    /// Threads drawing samples (default: threads of the config).
    #[arg(long, value_parser = crate::cli::args::threads)]
    pub threads: Option<usize>,
    /// Certificates (files, or directories of .cert.gz files) whose decided positions of 10
    /// to 12 pieces test how the model carries over above the tables (those of other boards
    /// are passed over).
    #[arg(long, value_name = "PATH")]
    pub certificates: Vec<PathBuf>,
    /// Files of `fanorona rote export` whose positions of 10 to 12 pieces, decided by the
    /// sessions (won by the attacker or not), test how the model carries over too.
    #[arg(long, value_name = "FILE")]
    pub rote: Vec<PathBuf>,
    /// Files of `fanorona rote export` whose positions above the tables, decided by the
    /// sessions, are trained on (keep them apart from the `--rote` files that test).
    #[arg(long, value_name = "FILE")]
    pub rote_train: Vec<PathBuf>,
    /// How many times a position of the `--rote-train` files counts in training (in place of
    /// --quiet-weight).
    #[arg(long, default_value_t = 1.0, requires = "rote_train")]
    pub rote_weight: f32,
    /// Where to write the weights.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(serde::Serialize)]
struct Learned {
    board: String,
    weights: String,
    samples: u64,
    seed: u64,
    /// Held-out positions by piece count (index: pieces), all and quiet ones alone.
    held_out: Vec<(usize, train::Score)>,
    held_out_quiet: Vec<(usize, train::Score)>,
    /// Held-out positions of random games (`--playouts`), by piece count.
    held_out_play: Vec<(usize, train::Score)>,
    /// Positions of 10 to 12 pieces the certificates decide, by piece count.
    decided: Vec<(usize, train::CarryOver)>,
    /// Positions of 10 to 12 pieces of the rote exports, by piece count.
    rote: Vec<(usize, train::CarryOver)>,
}

/// The decided positions of 10 to 12 pieces of the certificates at `paths` (a directory
/// stands for its .cert.gz files) whose board is `board` or its transpose.
fn decided(
    paths: &[PathBuf],
    board: fanorona::Board,
) -> Result<Vec<(fanorona::Position, fanorona::Color, bool)>, Failure> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let entries = std::fs::read_dir(p)
                .map_err(|e| Failure::input(anyhow!("{}: {e}", p.display())))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.to_string_lossy().ends_with(".cert.gz"))
                .collect();
            found.sort();
            files.extend(found);
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            return Err(Failure::input(anyhow!(
                "--certificates: {}: no such file or directory",
                p.display()
            )));
        }
    }
    let mut out = Vec::new();
    for f in files {
        let positions = fanorona::certificate::decided::decided_positions(&f, 10..=12)
            .map_err(Failure::input)?;
        out.extend(
            positions
                .into_iter()
                .filter(|d| d.position.board() == board || d.position.board() == board.transposed())
                .map(|d| (d.position, d.attacker, d.attacker_wins)),
        );
    }
    Ok(out)
}

/// The positions of `pieces` of the `rote export` files at `paths` whose board is `board` or
/// its transpose, each once for each attacker, with whether it wins. An entry holds for its
/// past (the positions since the last capture, which a repetition would draw): a win under
/// some past is a win with none (a past only takes moves away), but "does not win" is kept
/// only where it was found with no past; a position given both ways is left out.
fn rote_decided(
    flag: &str,
    paths: &[PathBuf],
    board: fanorona::Board,
    pieces: std::ops::RangeInclusive<u32>,
) -> Result<Vec<(fanorona::Position, fanorona::Color, bool)>, Failure> {
    // (position, attacker) -> (a win under any past, "does not win" with no past).
    let mut found = std::collections::BTreeMap::new();
    for p in paths {
        let text = std::fs::read_to_string(p)
            .map_err(|e| Failure::input(anyhow!("{flag}: {}: {e}", p.display())))?;
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let row: fanorona::daemon::answers::RoteRow =
                serde_json::from_str(line).map_err(|e| {
                    Failure::input(anyhow!(
                        "{flag}: {} line {}: not a line of `fanorona rote export FILE` ({e})",
                        p.display(),
                        i + 1
                    ))
                })?;
            let pos = row.position;
            if (pos.board() == board || pos.board() == board.transposed())
                && pieces.contains(&pos.piece_count())
            {
                let e = found.entry((pos, row.attacker)).or_insert((false, false));
                e.0 |= row.attacker_wins;
                e.1 |= !row.attacker_wins && row.history == 0;
            }
        }
    }
    let decided: Vec<_> = found
        .into_iter()
        .filter(|(_, (wins, holds))| wins != holds)
        .map(|((pos, attacker), (wins, _))| (pos, attacker, wins))
        .collect();
    if !paths.is_empty() {
        eprintln!(
            "{flag}: {} decided positions of {} to {} pieces",
            decided.len(),
            pieces.start(),
            pieces.end()
        );
    }
    Ok(decided)
}

pub fn learn(args: LearnArgs, config: &fanorona::config::Config) -> CliResult {
    let board: fanorona::Board = args
        .board
        .parse()
        .map_err(|e| Failure::input(anyhow!("--board: {e}")))?;
    let root = args.db.clone().unwrap_or_else(|| config.db_dir.clone());
    if !root.is_dir() {
        return Err(Failure::input(anyhow!(
            "{}: no such directory; build the tables first: fanorona db build --board {board} --pieces {} --db {}",
            root.display(),
            args.pieces,
            root.display()
        )));
    }
    if let Some(dir) = args
        .out
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        return Err(Failure::input(anyhow!(
            "--out: {} is not a directory",
            dir.display()
        )));
    }
    // Read before the training, so that a bad path costs nothing.
    let decided = decided(&args.certificates, board)?;
    let mut rote = rote_decided("--rote", &args.rote, board, 10..=12)?;
    let rote_train = rote_decided(
        "--rote-train",
        &args.rote_train,
        board,
        args.pieces as u32 + 1..=45,
    )?;
    // A position trained on tests nothing: the test keeps only those it has not seen.
    if !rote.is_empty() && !rote_train.is_empty() {
        let seen: std::collections::BTreeSet<_> =
            rote_train.iter().map(|(p, a, _)| (*p, *a)).collect();
        let before = rote.len();
        rote.retain(|(p, a, _)| !seen.contains(&(*p, *a)));
        if rote.len() < before {
            eprintln!(
                "--rote: {} positions also in --rote-train left out of the test",
                before - rote.len()
            );
        }
    }
    let settings = Settings {
        pieces: args.pieces,
        samples: args.samples,
        seed: args.seed,
        epochs: args.epochs.max(1),
        quiet_weight: args.quiet_weight.max(0.0),
        threads: args.threads.unwrap_or(config.threads),
        playouts: args.playouts,
        play_weight: args.play_weight.max(0.0),
        rote_weight: args.rote_weight.max(0.0),
    };
    let db = fanorona::egdb::Database::new(&root, board);
    let started = std::time::Instant::now();
    let last = std::sync::Mutex::new(std::time::Instant::now());
    let samples = train::sample(&db, &settings, &|done, total| {
        let mut last = last.lock().expect("progress");
        if last.elapsed().as_secs() >= 10 {
            eprintln!("sampling: {done} of {total} positions valued");
            *last = std::time::Instant::now();
        }
    })
    .map_err(Failure::input)?;
    let mut samples = samples;
    samples.extend(train::decided_samples(board, &rote_train, args.pieces));
    eprintln!(
        "sampled {} positions in {:.0} s; training",
        samples.len(),
        started.elapsed().as_secs_f64()
    );
    let model = train::train(board, &samples, &settings, &|epoch, loss| {
        eprintln!("epoch {epoch}: training loss {loss:.4}");
    });
    std::fs::write(&args.out, model.to_bytes())
        .map_err(|e| Failure::other(anyhow!("{}: {e}", args.out.display())))?;
    let scores = |keep: &dyn Fn(&train::Sample) -> bool| {
        train::evaluate(&model, &samples, keep)
            .into_iter()
            .enumerate()
            .filter(|(_, s)| s.positions > 0)
            .collect::<Vec<_>>()
    };
    let carried = |decided: &[(fanorona::Position, fanorona::Color, bool)]| {
        train::carry_over(&model, decided)
            .into_iter()
            .enumerate()
            .filter(|(_, s)| s.positions > 0)
            .collect::<Vec<_>>()
    };
    let result = Learned {
        board: board.to_string(),
        weights: args.out.display().to_string(),
        samples: model.samples,
        seed: args.seed,
        held_out: scores(&|s| s.source == train::Source::Uniform),
        held_out_quiet: scores(&|s| s.source == train::Source::Uniform && s.quiet),
        held_out_play: scores(&|s| s.source == train::Source::Play),
        decided: carried(&decided),
        rote: carried(&rote),
    };
    if args.json {
        return print_json(&result);
    }
    out!(
        "{}: weights of {board} from {} positions (seed {}), in {:.0} s",
        result.weights,
        result.samples,
        result.seed,
        started.elapsed().as_secs_f64()
    );
    out!("held-out positions: the model's accuracy against the material baseline's");
    out!("pieces  positions  accuracy  material  log-loss   quiet: positions  accuracy  material");
    for ((n, s), (_, q)) in result.held_out.iter().zip(&result.held_out_quiet) {
        out!(
            "{n:>6} {:>10} {:>8.1}% {:>8.1}% {:>9.3}   {:>16} {:>8.1}% {:>8.1}%",
            s.positions,
            100.0 * s.accuracy,
            100.0 * s.material_accuracy,
            s.log_loss,
            q.positions,
            100.0 * q.accuracy,
            100.0 * q.material_accuracy
        );
    }
    if !result.held_out_play.is_empty() {
        out!("held-out positions of random games: the model against material");
        out!("pieces  positions  accuracy  material  log-loss");
        for (n, s) in &result.held_out_play {
            out!(
                "{n:>6} {:>10} {:>8.1}% {:>8.1}% {:>9.3}",
                s.positions,
                100.0 * s.accuracy,
                100.0 * s.material_accuracy,
                s.log_loss
            );
        }
    }
    for (rows, what) in [
        (&result.decided, "positions of the certificates"),
        (&result.rote, "positions of the rote exports"),
    ] {
        if rows.is_empty() {
            continue;
        }
        out!("{what} (attacker wins or not): the model against material");
        out!("pieces  positions  attacker wins  accuracy  material");
        for (n, c) in rows {
            out!(
                "{n:>6} {:>10} {:>13.1}% {:>8.1}% {:>8.1}%",
                c.positions,
                100.0 * c.attacker_wins,
                100.0 * c.accuracy,
                100.0 * c.material_accuracy
            );
        }
    }
    Ok(())
}
