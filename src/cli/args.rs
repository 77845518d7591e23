//! What several commands take alike, and how each becomes a value: the position to work on
//! (`Target`), `--json`, thread counts, materials, `--algo` and `--goal`, and the tables
//! a command opens whole.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::output::{Failure, input};
use fanorona::egdb::Database;
use fanorona::search::Algorithm;
use fanorona::{Board, Color, Move, Position};

/// A slice's material, A-B (the side to move has A pieces, its opponent B).
pub fn material(s: &str) -> Result<fanorona::egdb::Material, String> {
    s.parse()
        .map_err(|e| format!("'{s}' is not a material A-B with A, B at least 1: {e}"))
}

/// Worker threads: at least 1, at most 256.
pub fn threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=256).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a thread count from 1 to 256")),
    }
}

/// A position to work on: a position's text, or a board's start, then moves played.
#[derive(clap::Args)]
pub struct Target {
    /// A position such as 'BBB/B.W/WWW w', or a board (RxC) for its start.
    ///
    /// A position is its rows from the top, separated by '/', with W, B and '.' for the
    /// points, then a space and w or b for the side to move.
    pub position: Option<String>,
    /// The start of this board (RxC) instead of a position; 5x9 by default.
    #[arg(long, conflicts_with = "position")]
    pub board: Option<String>,
    /// Start from the end of this game record (as `play --save` writes it).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["position", "board"])]
    pub record: Option<PathBuf>,
    /// Play these moves first, in the paper's notation.
    ///
    /// Repeat the flag, or separate moves by spaces: --play d3-e3A --play "d4-d3A ...".
    #[arg(long, value_name = "MOVES")]
    pub play: Vec<String>,
}

/// The output form every command offers.
#[derive(clap::Args)]
pub struct JsonFlag {
    /// Print one JSON object (an error too).
    ///
    /// An error is then {"error": ..., "exit_code": ...} on stdout.
    #[arg(long)]
    pub json: bool,
}

/// The position named by a positional text or `--board`, else the 5x9 start.
pub fn resolve_position(position: Option<&str>, board: Option<&str>) -> Result<Position, Failure> {
    match (position, board) {
        // A board's name stands for its start, as solve and play take it.
        (Some(p), _) => target_position(p),
        (None, Some(b)) => Ok(Position::initial(input(b.parse::<Board>())?)),
        (None, None) => Ok(Position::initial(Board::STANDARD)),
    }
}

/// A board (its start) or a position, read as every command and the daemon read a target
/// (`parse_target`: a finished game is refused).
pub fn target_position(text: &str) -> Result<Position, Failure> {
    fanorona::parse_target(text).map_err(|e| Failure::input(anyhow::anyhow!(e)))
}

/// The position of a `Target`: its text or board start, with `--play`'s moves played.
pub fn resolve_target(target: &Target) -> Result<Position, Failure> {
    let mut pos = match &target.record {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Failure::input(anyhow::anyhow!("cannot read {}: {e}", path.display()))
            })?;
            let (game, _) = fanorona::play::record::parse(&text)
                .map_err(|e| Failure::input(anyhow::anyhow!("{}: {e}", path.display())))?;
            *game.position()
        }
        None => resolve_position(target.position.as_deref(), target.board.as_deref())?,
    };
    for (i, text) in target
        .play
        .iter()
        .flat_map(|p| p.split_whitespace())
        .enumerate()
    {
        let m = input(
            Move::parse(&pos, text).with_context(|| format!("move {} '{text}' in {pos}", i + 1)),
        )?;
        pos = m.apply(&pos);
    }
    Ok(pos)
}

/// `--algo`'s parser: one of `choices` by name, each listed with what it is.
pub fn algorithm_parser(
    choices: &'static [Algorithm],
) -> impl clap::builder::TypedValueParser<Value = Algorithm> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let names = choices
        .iter()
        .map(|a| PossibleValue::new(a.name()).help(a.about()));
    PossibleValuesParser::new(names).map(|name| name.parse::<Algorithm>().expect("a listed name"))
}

/// The whole tables of `board` under `dir`, or the refusal that names what is missing (exit
/// 2: build it) or damaged (exit 1).
pub fn open_tables(dir: &Path, board: Board) -> Result<Database, Failure> {
    Database::open_whole(dir, board).map_err(|e| {
        if e.is_missing() {
            Failure::input(e)
        } else {
            Failure::other(e)
        }
    })
}

/// `--goal`'s parser: "white" or "black".
pub fn color_parser() -> impl clap::builder::TypedValueParser<Value = Color> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(["white", "black"])
        .map(|name| Color::from_name(&name).expect("a listed name"))
}

/// Refuses the config's own weights where `what` can use only the built-in ones (the
/// cluster's workers have no others), then first numbers that cannot run on `board`.
pub fn builtin_init(
    config: &fanorona::search::config::Config,
    board: fanorona::Board,
    what: &str,
) -> Result<(), crate::cli::output::Failure> {
    if let (fanorona::search::Init::Learned, Some(w)) = (config.init, &config.weights) {
        return Err(crate::cli::output::Failure::input(anyhow::anyhow!(
            "{what} uses the built-in weights only (the workers have no others), and the config names {}: remove `weights` from it, or solve as a session (`fanorona solve`, whose jobs then stay on this machine)",
            w.display()
        )));
    }
    usable_init(config.init, board)
}

/// The model of learned first numbers from the file `weights` (the config's, or
/// `--weights`), read for `board`; `None` for the built-in weights and the other inits,
/// refused where they cannot run on `board`. Before any search starts.
pub fn own_model(
    init: fanorona::search::Init,
    weights: Option<&std::path::Path>,
    board: fanorona::Board,
) -> Result<Option<fanorona::search::learned::Model>, crate::cli::output::Failure> {
    match weights {
        Some(path) if init == fanorona::search::Init::Learned => {
            fanorona::search::learned::Model::load(path, board)
                .map(Some)
                .map_err(crate::cli::output::Failure::input)
        }
        _ => usable_init(init, board).map(|()| None),
    }
}

/// Refuses first numbers that cannot run on `board` (learned ones where no weights are built
/// in), before any search starts.
pub fn usable_init(
    init: fanorona::search::Init,
    board: fanorona::Board,
) -> Result<(), crate::cli::output::Failure> {
    init.refused_on(board).map_or(Ok(()), |why| {
        Err(crate::cli::output::Failure::input(anyhow::anyhow!(why)))
    })
}
