//! `fanorona play` (a game in the terminal: a person against a player, or two players) and
//! `fanorona match` (many games between two players, with statistics).

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;

use crate::cli::game_batch::{self, GameBatch};
use crate::cli::output::{
    CliResult, Failure, check_output, counted, input, print_json, write_atomically,
};
use crate::out;
use fanorona::daemon::answers::RoteRow;
use fanorona::daemon::protocol::RoteExport;
use fanorona::egdb::Database;
use fanorona::egdb::file::board_dir;
use fanorona::play::arena::{GameRow, MatchSpec, run_match, summarise};
use fanorona::play::mcts::Rollout;
use fanorona::play::perfect::{Sources, move_values, rank};
use fanorona::play::report::{MatchPlayed, MovesFrom};
use fanorona::play::strategy::Library;
use fanorona::play::{Agent, Game, Spec, Tools, make, record};
use fanorona::search::rote::RoteTable;
use fanorona::{Board, Position, diagram, legal_moves};

/// A player on the command line: a person, or a player by kind and level.
fn spec(text: &str) -> Result<Option<Spec>, Failure> {
    if text.trim().eq_ignore_ascii_case("human") {
        return Ok(None);
    }
    input(text.parse::<Spec>()).map(Some)
}

/// The whole tables of `board` for players that use them: those under `db` (which must be
/// whole), else those under the config's db_dir if it has the board; none otherwise.
fn tables(
    db: Option<&Path>,
    default: &Path,
    board: Board,
    needed_by: &[Spec],
    hints: bool,
) -> Result<Option<Arc<Database>>, Failure> {
    let wants = hints || needed_by.iter().any(|s| s.plays_perfectly());
    let dir = match db {
        // Only perfect play and WINIMAX read tables.
        Some(_) if !wants => return Ok(None),
        Some(d) => d,
        None if wants && board_dir(default, board).is_dir() => default,
        None => return Ok(None),
    };
    crate::cli::args::open_tables(dir, board).map(|d| Some(Arc::new(d)))
}

/// Perfect play on a board whose start no search within its budget can value wins nothing:
/// say which tables to build.
fn warn_without_tables(specs: &[Spec], db: Option<&Database>, board: Board) {
    let big = board.size() > 21;
    if db.is_none() && big && specs.iter().any(|s| s.plays_perfectly()) {
        eprintln!(
            "note: perfect play on {board} without tables values few moves; build them with `fanorona db build --board {board} --pieces {} --db DIR` and pass --db DIR",
            if board.size() > 35 { 7 } else { 8 }
        );
    }
}

#[derive(clap::Args)]
pub struct PlayArgs {
    /// A board (RxC, its start) or a position; 5x9 by default.
    pub target: Option<String>,
    /// The start of this board (RxC), instead of a position.
    ///
    /// The form show, moves and match take; the same as giving the board as the target.
    #[arg(long, value_name = "RxC", conflicts_with_all = ["target", "load"])]
    pub board: Option<String>,
    /// Who plays White: human (the default) or a player such as mcts:hard.
    ///
    /// The players: random, minimax, alphabeta, mcts, perfect, winimax, proof; a level after a
    /// colon: easy, medium, hard, perfect. A loaded game keeps its record's players unless
    /// this is given.
    #[arg(long)]
    pub white: Option<String>,
    /// Who plays Black (as --white). Default alphabeta.
    #[arg(long)]
    pub black: Option<String>,
    /// Tables for perfect play and hints (default: db_dir of the config).
    ///
    /// The config's are used if they have the board.
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// Continue the game in this record instead of starting one.
    #[arg(long, value_name = "FILE", conflicts_with = "target")]
    pub load: Option<PathBuf>,
    /// Write the game's record here after every move.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Plies after which the game is drawn (0: no cap); 200 by default.
    ///
    /// A loaded game keeps its record's cap unless this is given.
    #[arg(long, value_name = "N")]
    pub max_plies: Option<usize>,
    #[command(flatten)]
    pub options: PlayerOptions,
    /// Seed of the players' random choices.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Settings of the players that have them.
#[derive(clap::Args)]
pub struct PlayerOptions {
    /// Seconds a move for players with a time budget (default: the level's).
    #[arg(long, value_name = "SECONDS")]
    pub move_time: Option<f64>,
    /// MCTS's exploration constant (default: sqrt 2, 1.414).
    #[arg(long, value_name = "C")]
    pub mcts_c: Option<f64>,
    /// MCTS's rollouts: random, captures or evaluation.
    ///
    /// Default: random when easy, captures above.
    #[arg(long, value_name = "KIND")]
    pub mcts_rollouts: Option<Rollout>,
    /// Perfect play and WINIMAX also consult the data directory's rote store.
    ///
    /// The positions solved sessions learned.
    #[arg(long)]
    pub rote: bool,
    /// Certificates the proof player follows (default: DATA_DIR/certificates).
    ///
    /// Each is checked with the rules and the tables the first time a game reaches its
    /// root, and never followed otherwise. The published ones: docs/certificates.
    #[arg(long, value_name = "DIR")]
    pub certificates: Option<PathBuf>,
}

impl PlayerOptions {
    /// The tools for players with these settings, the tables and a seed.
    fn tools(
        &self,
        db: Option<Arc<Database>>,
        rote: Option<Arc<RoteTable>>,
        certificates: Option<Arc<Library>>,
        seed: u64,
    ) -> Result<Tools, Failure> {
        if let Some(c) = self.mcts_c
            && !(0.0..=100.0).contains(&c)
        {
            return Err(Failure::input(anyhow!(
                "--mcts-c {c}: give a constant from 0 to 100"
            )));
        }
        Ok(Tools {
            db,
            move_time: duration(self.move_time)?,
            seed,
            mcts_c: self.mcts_c,
            mcts_rollout: self.mcts_rollouts,
            rote,
            certificates,
        })
    }

    /// The certificates for the proof player, if one of `specs` is it: those of
    /// `--certificates` (which must be readable) or of DATA_DIR/certificates (if it is
    /// there); their headers read now, each checked when a game first reaches its root.
    fn load_certificates(
        &self,
        config: &fanorona::config::Config,
        db: Option<&Arc<Database>>,
        specs: &[Spec],
    ) -> Result<Option<Arc<Library>>, Failure> {
        if !specs.iter().any(|s| s.follows_certificates()) {
            return Ok(None);
        }
        let dir = match &self.certificates {
            Some(d) => d.clone(),
            None => {
                let d = config.data_dir.join("certificates");
                if !d.is_dir() {
                    eprintln!(
                        "note: the proof player has no certificates ({} is not there): give --certificates DIR (the published ones: docs/certificates)",
                        d.display()
                    );
                    return Ok(None);
                }
                d
            }
        };
        let library = input(Library::open(&dir, db.cloned()))?;
        for (name, why) in &library.unreadable {
            eprintln!(
                "note: {}/{name} is not a certificate the proof player reads: {why}",
                dir.display()
            );
        }
        eprintln!(
            "proof player: {} in {}",
            counted(library.len(), "certificate", "certificates"),
            dir.display()
        );
        Ok(Some(Arc::new(library)))
    }

    /// The rote store's entries for `board` (and its transpose), if asked for.
    fn load_rote(
        &self,
        config: &fanorona::config::Config,
        board: Board,
    ) -> Result<Option<Arc<RoteTable>>, Failure> {
        if !self.rote {
            return Ok(None);
        }
        let (rows, _) = crate::cli::session::ask(config, RoteExport {})?;
        let table = RoteRow::table(&rows, board);
        eprintln!("rote store: {} entries for {board}", table.len());
        Ok(Some(Arc::new(table)))
    }
}

fn duration(seconds: Option<f64>) -> Result<Option<Duration>, Failure> {
    match seconds {
        None => Ok(None),
        Some(s) if s > 0.0 && s < 86_400.0 => Ok(Some(Duration::from_secs_f64(s))),
        Some(s) => Err(Failure::input(anyhow!(
            "--move-time {s}: give more than 0 and less than 86400 seconds"
        ))),
    }
}

fn start(target: Option<&str>) -> Result<Position, Failure> {
    match target {
        None => Ok(Position::initial(Board::STANDARD)),
        Some(t) => crate::cli::args::target_position(t),
    }
}

/// The game so far as a record file, written whole (through a temporary file).
fn save(path: &Path, game: &Game, tags: &[(String, String)]) -> Result<(), Failure> {
    write_atomically(path, record::write(game, tags).as_bytes())
}

fn show_position(game: &Game) {
    let pos = game.position();
    out!("{}", diagram::draw(pos).trim_end());
    out!("{pos}");
}

/// The moves, numbered, in notation.
fn numbered(game: &Game) -> Vec<String> {
    let board = game.position().board();
    legal_moves(game.position())
        .iter()
        .map(|m| m.notation(board))
        .collect()
}

/// Every move with what perfect play's sources know of it (tables, search within a small
/// budget), best first, and the alpha-beta score where nothing is known.
fn hint(game: &Game, db: Option<&Database>) {
    let sources = Sources {
        db,
        rote: None,
        ignore_history: false,
    };
    let mut values = move_values(game, sources, 50_000, Some(Duration::from_secs(3)));
    rank(&mut values);
    let board = game.position().board();
    for (i, v) in values.iter().enumerate() {
        let what = match v.info.value {
            Some((verdict, source)) => format!(
                "{verdict} ({}{})",
                source.name(),
                v.info
                    .distance
                    .map(|d| format!(", {d} plies to a capture or the end"))
                    .unwrap_or_default()
            ),
            None => format!("unknown (evaluation {:+.3})", v.info.score.unwrap_or(0.0)),
        };
        out!(
            "  {}{}: {what}",
            v.info.mv.notation(board),
            if i == 0 { " (best)" } else { "" }
        );
    }
}

/// Who plays a side, and the record's tag for it: the player given, else the loaded
/// record's (kept as it is written there: a name that is no player's is a person's), else
/// the default.
fn player(
    given: Option<&str>,
    tags: &[(String, String)],
    side: &str,
    default: &str,
) -> Result<(Option<Spec>, String), Failure> {
    let recorded = tags.iter().find(|(k, _)| k == side).map(|(_, v)| v);
    match (given, recorded) {
        (None, Some(name)) => Ok((spec(name).unwrap_or(None), name.clone())),
        (given, _) => {
            let s = spec(given.unwrap_or(default))?;
            Ok((s, s.map_or("human".to_string(), |s| s.to_string())))
        }
    }
}

pub fn play(args: PlayArgs, config: &fanorona::config::Config) -> CliResult {
    // Bad names are refused before a record is read.
    for given in [&args.white, &args.black].into_iter().flatten() {
        spec(given)?;
    }
    let (mut game, mut tags) = load_or_start(&args)?;
    let (white, white_tag) = player(args.white.as_deref(), &tags, "White", "human")?;
    let (black, black_tag) = player(args.black.as_deref(), &tags, "Black", "alphabeta")?;
    if let Some(p) = &args.save {
        check_output("--save", p)?;
    }
    let board = game.position().board();
    let specs: Vec<Spec> = [white, black].into_iter().flatten().collect();
    // A person gets hints, which read the tables too.
    let human = white.is_none() || black.is_none();
    let db = tables(args.db.as_deref(), &config.db_dir, board, &specs, human)?;
    warn_without_tables(&specs, db.as_deref(), board);
    let rote = args.options.load_rote(config, board)?;
    let certificates = args
        .options
        .load_certificates(config, db.as_ref(), &specs)?;
    let mut agents: [Option<Box<dyn Agent>>; 2] = [
        match white {
            Some(s) => Some(make(
                s,
                &args
                    .options
                    .tools(db.clone(), rote.clone(), certificates.clone(), args.seed)?,
            )),
            None => None,
        },
        match black {
            Some(s) => Some(make(
                s,
                &args.options.tools(
                    db.clone(),
                    rote.clone(),
                    certificates.clone(),
                    args.seed.wrapping_add(1),
                )?,
            )),
            None => None,
        },
    ];
    tags.retain(|(k, _)| k != "White" && k != "Black");
    tags.push(("White".into(), white_tag));
    tags.push(("Black".into(), black_tag));
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let interactive = std::io::stdin().is_terminal();
    show_position(&game);
    while game.end().is_none() {
        let mover = game.position().side_to_move();
        let slot = match mover {
            fanorona::Color::White => 0,
            fanorona::Color::Black => 1,
        };
        if let Some(agent) = agents[slot].as_mut() {
            let choice = agent.choose(&game);
            let what = choice
                .info
                .value
                .map(|(v, s)| format!(" ({v} for {mover}, {})", s.name()))
                .unwrap_or_default();
            let why = choice
                .why
                .as_ref()
                .map(|w| format!(": {}", w.text))
                .unwrap_or_default();
            out!(
                "{} {mover} plays {}{what}{why}",
                game.plies() + 1,
                choice.mv.notation(board)
            );
            game.play(&choice.mv)
                .map_err(|e| Failure::other(anyhow!("a player chose an illegal move: {e}")))?;
        } else {
            let other_is_player = agents[1 - slot].is_some();
            let turn = human_turn(
                &mut game,
                &tags,
                &mut lines,
                interactive,
                db.as_deref(),
                other_is_player,
                mover,
                board,
            )?;
            match turn {
                Turn::Played => {}
                Turn::Again => continue,
                Turn::Quit => break,
            }
        }
        if let Some(p) = &args.save {
            save(p, &game, &tags)?;
        }
        if game.end().is_none() {
            show_position(&game);
        }
    }
    if let Some(end) = game.end() {
        show_position(&game);
        out!("{end} after {}", counted(game.plies(), "ply", "plies"));
    }
    if let Some(p) = &args.save {
        save(p, &game, &tags)?;
        out!("record in {}", p.display());
    }
    Ok(())
}

/// The game `--load` reads (refused if it is over), or a new one at the board's start or
/// the position given; with the record's tags.
fn load_or_start(args: &PlayArgs) -> Result<(Game, Vec<(String, String)>), Failure> {
    let cap = |n: usize| (n > 0).then_some(n);
    Ok(match &args.load {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::input(anyhow!("cannot read {}: {e}", path.display())))?;
            let (mut g, tags) = record::parse(&text)
                .map_err(|e| Failure::input(anyhow!("{}: {e}", path.display())))?;
            if let Some(n) = args.max_plies {
                g.max_plies = cap(n);
            }
            // A finished game is not played on (its record would be overwritten with
            // another result).
            if let Some(end) = g.end() {
                let more = if end == fanorona::play::End::MoveCap {
                    "; --max-plies N with a larger cap continues a game the cap ended"
                } else {
                    ""
                };
                return Err(Failure::input(anyhow!(
                    "{}: the game is over after {}: {} ({}){more}",
                    path.display(),
                    counted(g.plies(), "ply", "plies"),
                    end.result(),
                    end
                )));
            }
            (g, tags)
        }
        None => (
            Game::new(
                match &args.board {
                    Some(b) => Position::initial(input(b.parse::<Board>())?),
                    None => start(args.target.as_deref())?,
                },
                cap(args.max_plies.unwrap_or(200)),
            ),
            Vec::new(),
        ),
    })
}

/// Whether a person's input played a move, asks for another, or ends the game.
enum Turn {
    Played,
    Again,
    Quit,
}

/// A person's turn: the moves listed, one line read and done (a move, its number, or hint,
/// undo, resign, save, quit). `other_is_player`: an undo takes back the program's reply too.
#[allow(clippy::too_many_arguments)]
fn human_turn(
    game: &mut Game,
    tags: &[(String, String)],
    lines: &mut dyn Iterator<Item = std::io::Result<String>>,
    interactive: bool,
    db: Option<&Database>,
    other_is_player: bool,
    mover: fanorona::Color,
    board: Board,
) -> Result<Turn, Failure> {
    let moves = numbered(game);
    out!(
        "{mover} to move: {}",
        moves
            .iter()
            .enumerate()
            .map(|(i, m)| format!("{}) {m}", i + 1))
            .collect::<Vec<_>>()
            .join("  ")
    );
    if interactive {
        print!("move, number, hint, undo, resign, save FILE or quit> ");
        let _ = std::io::stdout().flush();
    }
    let Some(line) = lines.next() else {
        out!("(input ended: the game is left unfinished)");
        return Ok(Turn::Quit);
    };
    let line = line.map_err(|e| Failure::other(anyhow!("reading a move: {e}")))?;
    let word = line.trim();
    match word.split_whitespace().next().unwrap_or("") {
        "" => return Ok(Turn::Again),
        "help" | "?" => {
            out!(
                "type a move in notation (such as b2-c2A) or its number in the list, or: hint (every move's value where it is known), undo, resign, save FILE, quit"
            );
            return Ok(Turn::Again);
        }
        "quit" => {
            out!("left unfinished");
            return Ok(Turn::Quit);
        }
        "hint" => {
            hint(game, db);
            return Ok(Turn::Again);
        }
        "resign" => game.resign(),
        "undo" => {
            // Back to this side's previous turn: the other side's reply too, if a
            // player made it.
            let steps = if other_is_player { 2 } else { 1 };
            if game.plies() < steps {
                out!("nothing to undo");
                return Ok(Turn::Again);
            }
            for _ in 0..steps {
                game.undo();
            }
        }
        "save" => {
            let Some(file) = word.split_whitespace().nth(1) else {
                out!("save needs a file: save game.txt");
                return Ok(Turn::Again);
            };
            match check_output("save", Path::new(file))
                .and_then(|()| save(Path::new(file), game, tags))
            {
                Ok(()) => out!("saved to {file}"),
                Err(Failure::Input(e) | Failure::Other(e)) => out!("not saved: {e:#}"),
                Err(Failure::Reported(_)) => {}
            }
            return Ok(Turn::Again);
        }
        _ => {
            // A number from the list, or a move in notation.
            let chosen = match word.parse::<i64>() {
                Ok(n) if (1..=moves.len() as i64).contains(&n) => {
                    game.play_text(&moves[n as usize - 1])
                }
                Ok(n) => {
                    out!("{n} is not in the list (1 to {})", moves.len());
                    return Ok(Turn::Again);
                }
                Err(_) => game.play_text(word),
            };
            if let Err(e) = chosen {
                out!("not played: {e} (help lists what else can be typed)");
                return Ok(Turn::Again);
            }
            // Said as a program's move is, for a record of the game on screen.
            if let Some(m) = game.moves().last() {
                out!("{} {mover} plays {}", game.plies(), m.notation(board));
            }
        }
    }
    Ok(Turn::Played)
}

#[derive(clap::Args)]
pub struct MatchArgs {
    /// Player A, such as alphabeta:hard.
    ///
    /// The players: random, minimax, alphabeta, mcts, perfect, winimax, proof; a level after a
    /// colon: easy, medium, hard, perfect.
    pub a: String,
    /// Player B.
    pub b: String,
    /// The board (RxC) or position every game begins from.
    #[arg(long, default_value = "5x9")]
    pub board: String,
    /// Start the games from these positions instead, one a line.
    ///
    /// Each is played with both colours, in turn.
    #[arg(long, value_name = "FILE", conflicts_with = "board")]
    pub starts: Option<PathBuf>,
    #[arg(long, default_value_t = 100)]
    /// Games to play; A is White in the even-numbered ones.
    pub games: usize,
    /// Games played at once (default: threads of the config).
    #[arg(long, value_parser = crate::cli::args::threads)]
    pub threads: Option<usize>,
    /// Seed of the match.
    ///
    /// Each game's players are seeded from it and the game's number.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Plies after which a game is drawn (0: no cap).
    #[arg(long, default_value_t = 200)]
    pub max_plies: usize,
    #[command(flatten)]
    pub options: PlayerOptions,
    /// Endgame tables for perfect play (default: db_dir of the config).
    ///
    /// The config's are used if they have the board.
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// Write one CSV row a game, under a header.
    ///
    /// The columns: game (its index), a, b (the players), board, a_colour, result (1-0
    /// White won, 0-1 Black won, 1/2-1/2), termination, winner (a, b or draw), plies,
    /// seconds, a_seconds_per_move, b_seconds_per_move, seed (the match's: game i's players
    /// are seeded from it and i), start (the position the game began from), moves. Written
    /// after a Ctrl-C too, with the games finished.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn match_cmd(args: MatchArgs, config: &fanorona::config::Config) -> CliResult {
    let a = input(args.a.parse::<Spec>())?;
    let b = input(args.b.parse::<Spec>())?;
    if args.games == 0 {
        return Err(Failure::input(anyhow!("--games 0: a match needs a game")));
    }
    if let Some(p) = &args.csv {
        check_output("--csv", p)?;
    }
    let starts = match &args.starts {
        Some(path) => read_starts(path)?,
        None => {
            let pos = start(Some(&args.board))?;
            if fanorona::movegen::is_lost(&pos) {
                return Err(Failure::input(anyhow!(
                    "--board {}: the game is already over there ({} has lost)",
                    args.board,
                    pos.side_to_move().name()
                )));
            }
            vec![pos]
        }
    };
    let start = starts[0];
    let db = tables(
        args.db.as_deref(),
        &config.db_dir,
        start.board(),
        &[a, b],
        false,
    )?;
    warn_without_tables(&[a, b], db.as_deref(), start.board());
    let certificates = args
        .options
        .load_certificates(config, db.as_ref(), &[a, b])?;
    let spec = MatchSpec {
        a,
        b,
        starts,
        games: args.games,
        threads: args.threads.unwrap_or(config.threads),
        seed: args.seed,
        max_plies: (args.max_plies > 0).then_some(args.max_plies),
        tools: args.options.tools(
            db,
            args.options.load_rote(config, start.board())?,
            certificates,
            0,
        )?,
    };
    let batch = GameBatch::start(format!("{a} vs {b}"), args.games, args.json);
    let t = std::time::Instant::now();
    let rows = run_match(&spec, &|_| batch.inc(), batch.stop());
    let interrupted = batch.finish(rows.len())?;
    let seconds = t.elapsed().as_secs_f64();
    let s = summarise(&rows);
    if let Some(p) = &args.csv {
        write_csv(p, &rows, a, b, &spec)?;
    }
    let mean = |f: fn(&GameRow) -> f64| rows.iter().map(f).sum::<f64>() / rows.len() as f64;
    let plies = mean(|r| r.plies as f64);
    let a_from = MovesFrom::total(rows.iter().map(|r| &r.a_from));
    let b_from = MovesFrom::total(rows.iter().map(|r| &r.b_from));
    let (a_time, b_time) = (
        mean(|r| r.a_seconds_per_move),
        mean(|r| r.b_seconds_per_move),
    );
    if args.json {
        print_json(&MatchPlayed {
            a: a.to_string(),
            b: b.to_string(),
            board: start.board(),
            start,
            starts: spec.starts.len(),
            score: s.clone(),
            mean_plies: plies,
            a_seconds_per_move: a_time,
            b_seconds_per_move: b_time,
            seconds,
            threads: spec.threads,
            seed: spec.seed,
            games_asked: spec.games,
            interrupted: interrupted.is_some(),
            a_moves_from: a_from,
            b_moves_from: b_from,
        })?;
    } else {
        out!(
            "{a} vs {b} on {}, {}: {}, {}, {} for {a}",
            start.board(),
            counted(s.games, "game", "games"),
            counted(s.wins, "win", "wins"),
            counted(s.draws, "draw", "draws"),
            counted(s.losses, "loss", "losses")
        );
        // A score of 0 or 1 has no finite Elo difference: what half a game less (more)
        // would give is a bound.
        let bound = if s.score >= 1.0 {
            ">= "
        } else if s.score <= 0.0 {
            "<= "
        } else {
            ""
        };
        // So is an interval's end at 0 or 1: no finite number.
        let end = |infinite: bool, inf: &str, elo: f64| {
            if infinite {
                inf.to_string()
            } else {
                format!("{elo:+.0}")
            }
        };
        let low = end(s.score_low <= 0.0, "-inf", s.elo_low);
        let high = end(s.score_high >= 1.0, "+inf", s.elo_high);
        out!(
            "score {:.3} (95% interval {:.3} to {:.3}), Elo {bound}{:+.0} ({low} to {high})",
            s.score,
            s.score_low,
            s.score_high,
            s.elo,
        );
        out!(
            "{plies:.1} plies a game; {} a move for {a}, {} for {b}; {seconds:.1} s on {}",
            per_move(a_time),
            per_move(b_time),
            counted(spec.threads, "thread", "threads")
        );
        for (who, from) in [(a, a_from), (b, b_from)] {
            if let Some(f) = from {
                out!("{who}'s moves: {f}");
            }
        }
    }
    game_batch::end(interrupted, args.json)
}

/// A time a move, in milliseconds below a second (fast players take microseconds).
fn per_move(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{seconds:.2} s")
    }
}

/// Starting positions, one a line (blank lines and `#` comments skipped), all on one board.
fn read_starts(path: &Path) -> Result<Vec<Position>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(anyhow!("cannot read {}: {e}", path.display())))?;
    let mut starts: Vec<Position> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let pos: Position = line
            .parse()
            .map_err(|e| Failure::input(anyhow!("{} line {}: {e}", path.display(), i + 1)))?;
        if starts.first().is_some_and(|s| s.board() != pos.board()) {
            return Err(Failure::input(anyhow!(
                "{} line {}: a {} position among {} ones",
                path.display(),
                i + 1,
                pos.board(),
                starts[0].board()
            )));
        }
        if fanorona::movegen::is_lost(&pos) || fanorona::target::playable(&pos).is_err() {
            return Err(Failure::input(anyhow!(
                "{} line {}: the game is already over there",
                path.display(),
                i + 1
            )));
        }
        starts.push(pos);
    }
    if starts.is_empty() {
        return Err(Failure::input(anyhow!("{}: no positions", path.display())));
    }
    Ok(starts)
}

fn write_csv(
    path: &Path,
    rows: &[GameRow],
    a: Spec,
    b: Spec,
    spec: &MatchSpec,
) -> Result<(), Failure> {
    let start_board = spec.starts[0].board();
    let mut text = String::from(
        "game,a,b,board,a_colour,result,termination,winner,plies,seconds,a_seconds_per_move,b_seconds_per_move,seed,start,moves\n",
    );
    for r in rows {
        let winner = match r.a_score {
            1.0 => "a",
            0.0 => "b",
            _ => "draw",
        };
        text.push_str(&format!(
            "{},{a},{b},{},{},{},{},{winner},{},{:.4},{:.6},{:.6},{},{},{}\n",
            r.index,
            start_board,
            if r.a_white { "white" } else { "black" },
            r.end.result(),
            r.end.termination(),
            r.plies,
            r.seconds,
            r.a_seconds_per_move,
            r.b_seconds_per_move,
            spec.seed,
            spec.start_of(r.index),
            r.moves
        ));
    }
    write_atomically(path, text.as_bytes())
}
