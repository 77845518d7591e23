//! Games and analysis, in this process. The API keeps no games: each request carries the
//! start and the moves played, so any number of tabs play at once and a restart loses
//! nothing the page holds.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::answers::{
    AgentMove, AnalysedGame, Analysis, AppInfo, BoardInfo, GameEnd, GameState, MoveAnalysed,
    MovePlayed, PlayerInfo, TablesRead,
};
use super::certificates::Bounds;
use super::{ApiError, AppState, blocking, view};
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use fanorona_play::agent::{Kind, Level, Source, Spec, Tools, Verdict};
use fanorona_play::game::Game;
use fanorona_play::perfect::{Sources, move_values, rank};
use fanorona_play::record;
use fanorona_play::roster::make;
use fanorona_rules::geometry::Board;
use fanorona_rules::position::Position;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The longest game the API replays (plies), and the longest text it reads.
const MAX_PLIES: usize = 2000;

/// Nodes df-pn may spend on each question of each move an analysis values, and the time of
/// the whole analysis.
const ANALYSIS_BUDGET: u64 = 50_000;
const ANALYSIS_TIME: Duration = Duration::from_secs(3);

/// A request body as `T`, or a 400 that says what is wrong with it.
pub fn parse_body<T: DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad(format!("the body is not the JSON this address takes: {e}")))
}

/// A game: where it started (a board such as `5x9`, or a position) and the moves played.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameText {
    /// A board (`RxC`, its start) or a position; 5x9 when left out.
    #[serde(default)]
    pub start: Option<String>,
    #[serde(default)]
    pub moves: Vec<String>,
}

/// Refuses a game longer than a game here may be.
fn at_most_max_plies(moves: usize) -> Result<(), ApiError> {
    if moves > MAX_PLIES {
        return Err(ApiError::bad(format!(
            "{moves} moves: a game here has at most {MAX_PLIES}"
        )));
    }
    Ok(())
}

impl GameText {
    /// The game replayed, every move checked.
    pub fn replay(&self) -> Result<Game, ApiError> {
        let start = match self.start.as_deref().map(str::trim) {
            None | Some("") => Position::initial(Board::STANDARD),
            Some(t) => {
                fanorona_rules::target::parse_target(t).map_err(|e| ApiError::bad(e.to_string()))?
            }
        };
        at_most_max_plies(self.moves.len())?;
        let mut game = Game::new(start, None);
        for (i, m) in self.moves.iter().enumerate() {
            game.play_text(m.trim())
                .map_err(|e| ApiError::bad(format!("move {} '{}': {e}", i + 1, m.trim())))?;
        }
        Ok(game)
    }
}

/// What the page shows of a game: the board, the pieces, the legal moves step by step, the
/// moves so far and how it ended.
pub fn game_state(game: &Game, tags: &[(String, String)]) -> GameState {
    let pos = game.position();
    let board = pos.board();
    let end = game.end();
    // Moves played, in notation, with the side that played each.
    let history = game
        .moves()
        .iter()
        .zip(game.positions())
        .map(|(m, before)| MovePlayed::of(m, before))
        .collect();
    GameState {
        board: view::board(board),
        start: *game.start(),
        position: *pos,
        side: pos.side_to_move(),
        cells: view::cells(pos),
        moves: if end.is_some() {
            Vec::new()
        } else {
            view::moves(pos)
        },
        history,
        end: end.map(|e| GameEnd {
            result: e.result(),
            winner: e.winner(),
            termination: e.termination(),
            text: e.to_string(),
        }),
        record: record::write(game, tags),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameRequest {
    #[serde(flatten)]
    game: GameText,
    /// The players' names for the record (`human`, `perfect`, `alphabeta:hard`).
    #[serde(default)]
    white: Option<String>,
    #[serde(default)]
    black: Option<String>,
    /// The side to move resigned after the moves.
    #[serde(default)]
    resigned: bool,
}

/// POST /api/game: the state of a game given its start and moves.
pub async fn game(body: Bytes) -> Result<Json<GameState>, ApiError> {
    let req: GameRequest = parse_body(&body)?;
    let mut game = req.game.replay()?;
    if req.resigned {
        if let Some(end) = game.end() {
            return Err(ApiError::bad(format!("the game is over: {end}")));
        }
        game.resign();
    }
    let mut tags = Vec::new();
    for (tag, name) in [("White", &req.white), ("Black", &req.black)] {
        if let Some(n) = name {
            player_name(n)?;
            tags.push((tag.to_string(), n.clone()));
        }
    }
    Ok(Json(game_state(&game, &tags)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordRequest {
    /// A game record, as `play --save` and the page's download write it.
    text: String,
}

/// POST /api/record: a game record read back (every move checked, its tags too), as
/// /api/game shows the game; the page continues it from there.
pub async fn record(body: Bytes) -> Result<Json<GameState>, ApiError> {
    let req: RecordRequest = parse_body(&body)?;
    let (game, tags) = record::parse(&req.text).map_err(|e| ApiError::bad(e.to_string()))?;
    at_most_max_plies(game.moves().len())?;
    Ok(Json(game_state(&game, &tags)))
}

/// `human` or a player's name (`KIND[:LEVEL]`), checked.
fn player_name(name: &str) -> Result<Option<Spec>, ApiError> {
    if name == "human" {
        return Ok(None);
    }
    name.parse::<Spec>()
        .map(Some)
        .map_err(|e| ApiError::bad(e.to_string()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentRequest {
    #[serde(flatten)]
    game: GameText,
    /// Who moves: `KIND[:LEVEL]`.
    player: String,
    #[serde(default)]
    seed: Option<u64>,
}

/// POST /api/agent: the move a player chooses in the game, with what it knows of it.
pub async fn agent(
    State(state): State<Arc<AppState>>,
    body: Bytes,
) -> Result<Json<AgentMove>, ApiError> {
    let req: AgentRequest = parse_body(&body)?;
    let game = req.game.replay()?;
    let spec = player_name(&req.player)?
        .ok_or_else(|| ApiError::bad("a person does not move through the API: name a player"))?;
    if let Some(end) = game.end() {
        return Err(ApiError::bad(format!("the game is over: {end}")));
    }
    let permit = state.think().await?;
    let board = game.position().board();
    let reads_tables = spec.plays_perfectly();
    let seed = req.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    blocking(move || {
        let _permit = permit;
        let (db, rote) = if reads_tables {
            (state.tables(board), state.rote(board))
        } else {
            (None, None)
        };
        let certificates = if spec.follows_certificates() {
            state.strategies(board)
        } else {
            None
        };
        let tools = Tools {
            db,
            rote,
            seed,
            certificates,
            ..Tools::default()
        };
        let mut player = make(spec, &tools);
        let started = Instant::now();
        let choice = player.choose(&game);
        let board = game.position().board();
        Ok(Json(AgentMove {
            player: spec.to_string(),
            mv: choice.mv.notation(board),
            value: choice.info.value.map(|(v, _)| v),
            source: choice.info.value.map(|(_, s)| s.name()),
            work: choice.work,
            seconds: started.elapsed().as_secs_f64(),
            reason: choice.why.map(|w| w.text),
        }))
    })
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnalyseRequest {
    #[serde(flatten)]
    game: GameText,
    /// The line that reached a position set up on its own (the analysis board's root and
    /// moves): the certificates rooted at its start are walked along it, as the proof
    /// explorer walks them.
    #[serde(default)]
    line_from: Option<GameText>,
}

/// POST /api/analyse: every legal move, best first, with its value for the side to move
/// where the tables (with distances), the rote store or a small search know it, and where
/// the value came from. A position set up on its own (no moves) is valued as the tables and
/// proofs value it; after moves, as a game in play (repeating one of its positions draws).
pub async fn analyse(
    State(state): State<Arc<AppState>>,
    body: Bytes,
) -> Result<Json<AnalysedGame>, ApiError> {
    let req: AnalyseRequest = parse_body(&body)?;
    let game = req.game.replay()?;
    let line_from = match &req.line_from {
        Some(l) => {
            let g = l.replay()?;
            if g.position() != game.position() {
                return Err(ApiError::bad(
                    "line_from does not lead to the position analysed".to_string(),
                ));
            }
            Some(g)
        }
        None => None,
    };
    let board = game.position().board();
    let permit = state.think().await?;
    let in_play = !req.game.moves.is_empty();
    blocking(move || {
        let _permit = permit;
        let db = state.tables(board);
        let rote = state.rote(board);
        let pos = *game.position();
        let sources = Sources {
            db: db.as_deref(),
            rote: rote.as_deref(),
            ignore_history: !in_play,
        };
        let ended = game.end();
        let mut values = if ended.is_some() {
            Vec::new()
        } else {
            move_values(&game, sources, ANALYSIS_BUDGET, Some(ANALYSIS_TIME))
        };
        // A checked certificate is surer than a small search, and may bound a value nothing
        // else knows: those rooted at the game's start, walked along its moves (the game's
        // past is the certificate's line), and for a position set up on its own those
        // rooted at it or at the position after a move.
        let certificates = state.certificates();
        let walked = match &line_from {
            Some(g) if !in_play => g,
            _ => &game,
        };
        let line: Vec<String> = walked.moves().iter().map(|m| m.notation(board)).collect();
        let judged =
            crate::proofs::judge(&state, &certificates, walked.start(), &line, &pos, !in_play).ok();
        let proved: std::collections::HashMap<String, Bounds> = judged
            .iter()
            .flat_map(|j| j.moves.iter())
            .filter_map(|m| m.bounds.map(|b| (m.notation.clone(), b)))
            .collect();
        // What the certificates bound of the moves nothing else values exactly.
        let mut partial: std::collections::HashMap<String, Bounds> = Default::default();
        for v in values.iter_mut() {
            let notation = v.info.mv.notation(board);
            let Some(&(mut b)) = proved.get(&notation) else {
                continue;
            };
            // In play, a win the game's past can turn into a draw (a position repeated) is
            // a draw at least, not a win.
            let after = v.info.mv.apply(&pos);
            if in_play
                && b.low == Verdict::Win
                && (game.occurred(&after)
                    || fanorona_play::perfect::opponent_can_repeat(&game, &after))
            {
                b.low = Verdict::Draw;
            }
            let weaker = matches!(v.info.value, None | Some((_, Source::Search)));
            if b.low == b.high && weaker {
                v.info.value = Some((b.low, Source::Certificate));
            } else if v.info.value.is_none() {
                partial.insert(notation, b);
            }
        }
        // Each move's bounds: its value, or a certificate's bounds, or none at all.
        let bounds_of = |v: &fanorona_play::perfect::Valued| match v.info.value {
            Some((x, _)) => Bounds { low: x, high: x },
            None => partial
                .get(&v.info.mv.notation(board))
                .copied()
                .unwrap_or(Bounds {
                    low: Verdict::Loss,
                    high: Verdict::Win,
                }),
        };
        rank(&mut values);
        // Bounded moves among the rest: at least a draw beside the draws, at most a draw
        // before the losses (the sort keeps the ranking within each group).
        values.sort_by_key(|v| {
            let b = bounds_of(v);
            match (b.low, b.high) {
                (Verdict::Win, _) => 0,
                (Verdict::Draw, _) => 1,
                (Verdict::Loss, Verdict::Win) => 2,
                (Verdict::Loss, Verdict::Draw) => 3,
                (Verdict::Loss, Verdict::Loss) => 4,
            }
        });
        let moves: Vec<MoveAnalysed> = values
            .iter()
            .map(|v| {
                let notation = v.info.mv.notation(board);
                let bound = partial.get(&notation);
                MoveAnalysed {
                    value: bounds_of(v).words().unwrap_or("unknown"),
                    source: v
                        .info
                        .value
                        .map(|(_, s)| s.name())
                        .or(bound.map(|_| "certificate")),
                    notation,
                    distance: v.info.distance,
                    score: v.info.score,
                    after: v.info.mv.apply(&pos),
                }
            })
            .collect();
        // The position's value: the best its moves can be.
        let (low, high) = values
            .iter()
            .map(bounds_of)
            .fold((Verdict::Loss, Verdict::Loss), |(l, h), b| {
                (l.max(b.low), h.max(b.high))
            });
        let value = if let Some(e) = ended {
            match e.winner() {
                Some(w) if w == pos.side_to_move() => "win",
                Some(_) => "loss",
                None => "draw",
            }
        } else {
            Bounds { low, high }.words().unwrap_or("unknown")
        };
        let analysis = Analysis {
            value,
            moves,
            tables: db.as_ref().map(|d| TablesRead {
                pieces: d.max_pieces(),
            }),
            rote: rote.as_ref().map(|r| r.len()),
            certificates: Some(certificates.len()),
            certificates_refused: Some(certificates.refused.len()),
            certificates_checking: state
                .checking
                .progress()
                .and_then(|p| crate::answers::CheckingView::of(&p)),
            in_play,
        };
        Ok(Json(AnalysedGame {
            game: game_state(&game, &[]),
            analysis,
            last: line_from.and_then(|g| game_state(&g, &[]).history.pop()),
        }))
    })
    .await
}

/// GET /api/info: the boards, the players and their levels, and where values come from.
pub async fn info(State(state): State<Arc<AppState>>) -> Json<AppInfo> {
    let boards = Board::all()
        .map(|b| BoardInfo {
            name: b,
            start: Position::initial(b),
            tables: state.has_tables(b),
        })
        .collect();
    let players = Kind::ALL
        .iter()
        .map(|k| PlayerInfo {
            kind: k.name(),
            levels: if k.has_levels() {
                Level::ALL.iter().map(|l| l.name()).collect()
            } else {
                Vec::new()
            },
        })
        .collect();
    Json(AppInfo { boards, players })
}
