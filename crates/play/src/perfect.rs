//! The perfect player: it never plays a move that lowers the position's value. Each move's
//! value comes from the rules (a move that leaves the opponent without a move wins; one that
//! repeats a position of the game draws), the endgame tables, or df-pn within a node budget.
//! Winning, it takes the quickest win it can see: an immediate one, then the fewest plies
//! the tables' distances give (where they were built with `--distances`), else a capture,
//! else the win whose proof took the fewest nodes; losing, the longest defence. Drawing, it
//! keeps the draw (WINIMAX chooses among such moves with more care). Where no move's value
//! is known (a 5x9 opening beyond its budget), alpha-beta chooses among them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::agent::{Agent, Choice, MoveInfo, Source, Tools, Verdict};
use crate::alphabeta::AlphaBeta;
use crate::eval;
use crate::game::Game;
use crate::rng::Rng;
use fanorona_rules::moves::legal_moves;
use fanorona_rules::position::Position;
use fanorona_rules::repetition::since_capture_of;
use fanorona_search::dfpn::DfPn;
use fanorona_search::rote::{Rote, RoteKey, RoteTable};
use fanorona_search::{LeafEval, Limits, game_value};
use fanorona_tables::Database;

/// Nodes each df-pn question may create per move considered, by default.
pub const DEFAULT_BUDGET: u64 = 300_000;

/// Entries df-pn keeps at most (the cheapest go when it is full).
const TABLE: usize = 1 << 20;

/// The most a df-pn table may take while valuing one move.
const MEMORY: u64 = 256 << 20;

/// A move with its value and how hard its value was to find.
#[derive(Clone, Debug)]
pub struct Valued {
    pub info: MoveInfo,
    /// Search nodes its value took (0 for the rules and the tables).
    pub effort: u64,
    /// Pieces captured by the move.
    pub captures: u32,
}

/// Where values come from besides the rules and df-pn.
#[derive(Clone, Copy, Default)]
pub struct Sources<'a> {
    pub db: Option<&'a Database>,
    pub rote: Option<&'a RoteTable>,
    /// Value a position on its own, as the tables and proofs do, instead of a game in play:
    /// no draw by repeating the game's earlier positions (for analysis of a set-up position).
    pub ignore_history: bool,
}

/// The value for the side to move in `game` of every legal move, as far as the rules, the
/// tables, the rote store and df-pn within `budget` nodes per question (and `time` in all)
/// can tell.
pub fn move_values(
    game: &Game,
    sources: Sources<'_>,
    budget: u64,
    time: Option<Duration>,
) -> Vec<Valued> {
    let pos = *game.position();
    let moves = legal_moves(&pos);
    let per_move = time.map(|t| t / moves.len().max(1) as u32);
    moves
        .into_iter()
        .map(|mv| {
            let child = mv.apply(&pos);
            let (value, distance, effort) = child_value(game, &child, sources, budget, per_move);
            Valued {
                info: MoveInfo {
                    mv,
                    value,
                    distance,
                    score: Some(-eval::score(&child)),
                },
                effort,
                captures: pos.piece_count() - child.piece_count(),
            }
        })
        .collect()
}

/// What the rote store knows of `child`, reached from the game's position, for the side that
/// moved into it.
fn rote_value(game: &Game, child: &Position, rote: &RoteTable) -> Option<Verdict> {
    // Keyed by the positions since the last capture before `child` (none after a capture).
    let history = if child.piece_count() < game.position().piece_count() {
        0
    } else {
        since_capture_of(game.positions())
    };
    let mover = child.side_to_move().opponent();
    let key = |attacker| RoteKey {
        pos: *child,
        history,
        attacker,
    };
    match rote.lookup(&key(mover))? {
        true => Some(Verdict::Win),
        false => match rote.lookup(&key(mover.opponent()))? {
            true => Some(Verdict::Loss),
            false => Some(Verdict::Draw),
        },
    }
}

/// The value for the side that moved into `child`, its distance where the tables keep one,
/// and the search nodes it took.
pub fn child_value(
    game: &Game,
    child: &Position,
    sources: Sources<'_>,
    budget: u64,
    time: Option<Duration>,
) -> (Option<(Verdict, Source)>, Option<u32>, u64) {
    let db = sources.db;
    if fanorona_rules::movegen::is_lost(child) {
        return (Some((Verdict::Win, Source::Rules)), Some(0), 0);
    }
    if !sources.ignore_history && game.occurred(child) {
        return (Some((Verdict::Draw, Source::Rules)), None, 0);
    }
    // A win the opponent can answer by repeating a position of the game is a draw in play:
    // the tables, the rote store and df-pn know nothing of the game's past.
    let in_play = |v: Verdict, source: Source| {
        if v == Verdict::Win && !sources.ignore_history && opponent_can_repeat(game, child) {
            (Verdict::Draw, Source::Rules)
        } else {
            (v, source)
        }
    };
    if let Some(db) = db
        && let Ok(v) = db.lookup(child)
    {
        // The child's side to move is the mover's opponent.
        return (
            Some(in_play(v.flipped(), Source::Tables)),
            db.distance(child),
            0,
        );
    }
    if let Some(rote) = sources.rote
        && let Some(v) = rote_value(game, child, rote)
    {
        return (Some(in_play(v, Source::Rote)), None, 0);
    }
    let leaf = LeafEval::new(db);
    let limits = Limits {
        nodes: Some(budget),
        time,
        memory: Some(MEMORY),
    };
    let solution = game_value(child, |goal| {
        DfPn::new(goal, leaf, limits, TABLE).result(child, |_| {})
    });
    let mover = child.side_to_move().opponent();
    let verdict = solution.value.map(|v| v.for_side(mover));
    (
        verdict.map(|v| in_play(v, Source::Search)),
        None,
        solution.nodes(),
    )
}

/// Whether the side to move at `child` (reached from the game's position) has a move back
/// to a position the game has already had: the game would end there, drawn.
pub fn opponent_can_repeat(game: &Game, child: &Position) -> bool {
    let mut found = false;
    fanorona_rules::movegen::for_each_child(child, |c| {
        // A capture makes a position the game never had (pieces do not come back).
        found |= c.piece_count() == child.piece_count() && game.occurred(&c);
    });
    found
}

/// Best first: wins (the quickest first), draws, moves of unknown value (by the
/// evaluation), losses (the longest first).
pub fn rank(moves: &mut [Valued]) {
    fn key(v: &Valued) -> (u8, i64, i64, i64) {
        let verdict = v.info.value.map(|(x, _)| x);
        let score = (v.info.score.unwrap_or(0.0) * 1e6) as i64;
        match verdict {
            Some(Verdict::Win) => (
                0,
                v.info.distance.map_or(i64::MAX / 2, |d| d as i64),
                // Without distances: a capture, the largest first, then the smallest proof,
                // then the best evaluation (so a table win makes headway).
                -(v.captures as i64) * (1 << 40) + v.effort as i64,
                -score,
            ),
            Some(Verdict::Draw) => (1, -score, 0, 0),
            None => (2, -score, 0, 0),
            Some(Verdict::Loss) => (
                3,
                -(v.info.distance.map_or(0, |d| d as i64)),
                -(v.effort as i64),
                -score,
            ),
        }
    }
    moves.sort_by_key(key);
}

pub struct Perfect {
    /// Where no value is known: alpha-beta (hard: deepening within what is left of the move
    /// time, 1 s without one) among the unknown moves.
    fallback: AlphaBeta,
    db: Option<Arc<Database>>,
    rote: Option<Arc<RoteTable>>,
    pub budget: u64,
    /// The whole move's time, if given: half for valuing the moves, the rest for alpha-beta
    /// where it is needed.
    time: Option<Duration>,
    /// When the move being chosen was started.
    started: Instant,
    rng: Rng,
}

impl Perfect {
    pub fn new(tools: &Tools) -> Perfect {
        Perfect {
            fallback: AlphaBeta::for_level(crate::Level::Hard, tools),
            db: tools.db.clone(),
            rote: tools.rote.clone(),
            budget: DEFAULT_BUDGET,
            time: tools.move_time,
            started: Instant::now(),
            rng: Rng::new(tools.seed),
        }
    }

    /// Every move valued and ranked, best first.
    pub fn ranked(&mut self, game: &Game) -> Vec<Valued> {
        self.started = Instant::now();
        let mut v = move_values(game, self.sources(), self.budget, self.time.map(|t| t / 2));
        rank(&mut v);
        v
    }

    /// The tables and the rote store, as this player has them.
    pub fn sources(&self) -> Sources<'_> {
        Sources {
            db: self.db.as_deref(),
            rote: self.rote.as_deref(),
            ignore_history: false,
        }
    }

    /// Among the best moves of equal standing, one at random (draws: any draw).
    fn pick(&mut self, ranked: &[Valued]) -> usize {
        let best = &ranked[0];
        let equal = |v: &Valued| match best.info.value.map(|x| x.0) {
            Some(Verdict::Draw) => v.info.value.map(|x| x.0) == Some(Verdict::Draw),
            _ => false,
        };
        let n = ranked.iter().take_while(|v| equal(v)).count();
        if n > 1 { self.rng.below(n) } else { 0 }
    }
}

/// The choice for a ranked list: its `i`-th move.
pub fn choice(ranked: &[Valued], i: usize) -> Choice {
    let work = ranked.iter().map(|v| v.effort).sum();
    Choice {
        mv: ranked[i].info.mv,
        info: ranked[i].info.clone(),
        work,
        why: None,
    }
}

impl Agent for Perfect {
    fn name(&self) -> String {
        format!(
            "perfect ({}, df-pn {} nodes a question)",
            if self.db.is_some() {
                "tables"
            } else {
                "no tables"
            },
            self.budget
        )
    }

    fn choose(&mut self, game: &Game) -> Choice {
        let ranked = self.ranked(game);
        self.decide(game, &ranked)
    }

    fn analyse(&mut self, game: &Game) -> Vec<MoveInfo> {
        self.ranked(game).into_iter().map(|v| v.info).collect()
    }
}

impl Perfect {
    /// The move perfect play makes from its ranked moves.
    pub fn decide(&mut self, game: &Game, ranked: &[Valued]) -> Choice {
        if ranked[0].info.value.is_none() {
            // Nothing better is known, and the value of the best moves is not: alpha-beta
            // (hard) chooses among those of unknown value (never a move known to lose).
            let unknown: Vec<_> = ranked
                .iter()
                .filter(|v| v.info.value.is_none())
                .map(|v| v.info.mv)
                .collect();
            // What is left of the move's time (a tenth of it at least, for a move at all).
            if let Some(t) = self.time {
                let left = t.saturating_sub(self.started.elapsed()).max(t / 10);
                self.fallback.set_time(Some(left));
            }
            let (mv, score, nodes) = self.fallback.best_of(game, &unknown);
            let i = ranked
                .iter()
                .position(|v| v.info.mv == mv)
                .expect("the move is among the ranked ones");
            let mut c = choice(ranked, i);
            c.info.score = Some(score);
            c.work += nodes;
            return c;
        }
        let i = self.pick(ranked);
        choice(ranked, i)
    }
}
