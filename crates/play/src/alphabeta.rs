//! The minimax and alpha-beta players: a depth-limited negamax over the evaluation of
//! `eval` (Teixeira and Aslani's), the end of the game scored as a win or loss, and a
//! position repeated on the game's or the search's path as a draw. Alpha-beta adds pruning,
//! iterative deepening, a transposition table and move ordering (the table's move first,
//! then captures, the largest first); minimax searches every line to its depth.

use std::time::{Duration, Instant};

use crate::agent::{Agent, Choice, Level, MoveInfo, Source, Tools, Verdict};
use crate::eval;
use crate::game::Game;
use crate::rng::Rng;
use fanorona_rules::movegen::successors_into;
use fanorona_rules::moves::{Move, legal_moves};
use fanorona_rules::position::Position;
use fanorona_rules::repetition::position_key;

/// A won game's score, less the plies to it (so the quickest win scores highest).
const MATE: f64 = 1000.0;

/// Transposition table entries (a power of two).
const TT_SIZE: usize = 1 << 18;

#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    depth: u8,
    /// 0 exact, 1 lower bound, 2 upper bound.
    bound: u8,
    /// Index of the best child among the sorted successors, plus one (0: none).
    best: u16,
    /// For a won or lost end, the plies from this node (not from the root), so the entry
    /// holds wherever the node is met.
    score: f64,
}

/// The settings of a level.
pub struct Settings {
    pub depth: u32,
    pub time: Option<Duration>,
    pub prune: bool,
    /// Each leaf's score gets a uniform random amount in [-noise, noise] (the paper's
    /// "random factor"; 0 for none).
    pub noise: f64,
    /// Stones alone (the paper's material), instead of Teixeira and Aslani's points.
    pub material_only: bool,
}

pub struct AlphaBeta {
    settings: Settings,
    rng: Rng,
    tt: Vec<Entry>,
    nodes: u64,
    deadline: Option<Instant>,
    stopped: bool,
    /// The game's positions and the search's path, for repetitions.
    path: Vec<Position>,
    /// One successor buffer per ply, reused.
    buffers: Vec<Vec<Position>>,
}

impl AlphaBeta {
    /// Alpha-beta at a level: easy searches 2 plies, medium 4, hard deepens to 12 plies
    /// within 1 second a move (or the tools' move time).
    pub fn for_level(level: Level, tools: &Tools) -> AlphaBeta {
        let (depth, time) = match level {
            Level::Easy => (2, None),
            Level::Medium => (4, None),
            Level::Hard | Level::Perfect => {
                (12, Some(tools.move_time.unwrap_or(Duration::from_secs(1))))
            }
        };
        AlphaBeta::new(
            Settings {
                depth,
                time: tools.move_time.or(time),
                prune: true,
                noise: 0.0,
                material_only: false,
            },
            tools.seed,
        )
    }

    /// Plain minimax at a level: easy 1 ply, medium 3, hard 4.
    pub fn minimax(level: Level, tools: &Tools) -> AlphaBeta {
        let depth = match level {
            Level::Easy => 1,
            Level::Medium => 3,
            Level::Hard | Level::Perfect => 4,
        };
        AlphaBeta::new(
            Settings {
                depth,
                time: tools.move_time,
                prune: false,
                noise: 0.0,
                material_only: false,
            },
            tools.seed,
        )
    }

    pub fn new(settings: Settings, seed: u64) -> AlphaBeta {
        AlphaBeta {
            tt: if settings.prune {
                vec![Entry::default(); TT_SIZE]
            } else {
                Vec::new()
            },
            settings,
            rng: Rng::new(seed),
            nodes: 0,
            deadline: None,
            stopped: false,
            path: Vec::new(),
            buffers: Vec::new(),
        }
    }

    /// Nodes searched so far (for benchmarks).
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    fn leaf(&mut self, pos: &Position) -> f64 {
        let s = if self.settings.material_only {
            eval::material(pos)
        } else {
            eval::score(pos)
        };
        if self.settings.noise > 0.0 {
            s + (self.rng.unit() * 2.0 - 1.0) * self.settings.noise
        } else {
            s
        }
    }

    fn repeats(&self, pos: &Position) -> bool {
        self.path
            .iter()
            .rev()
            .take_while(|p| p.piece_count() == pos.piece_count())
            .any(|p| p == pos)
    }

    /// Negamax with alpha-beta (when pruning): the score of `pos` for its side to move.
    fn negamax(
        &mut self,
        pos: &Position,
        depth: u32,
        ply: usize,
        mut alpha: f64,
        beta: f64,
    ) -> f64 {
        self.nodes += 1;
        // A 5x9 node takes about 2 µs: the clock is read every half millisecond or so.
        if self.nodes & 255 == 0
            && let Some(d) = self.deadline
            && Instant::now() >= d
        {
            self.stopped = true;
        }
        if self.stopped {
            return 0.0;
        }
        while self.buffers.len() <= ply {
            self.buffers.push(Vec::with_capacity(64));
        }
        let mut children = std::mem::take(&mut self.buffers[ply]);
        successors_into(pos, &mut children);
        if children.is_empty() {
            self.buffers[ply] = children;
            return -(MATE - ply as f64);
        }
        if depth == 0 {
            self.buffers[ply] = children;
            return self.leaf(pos);
        }
        let key = position_key(pos);
        let slot = (key as usize) & (TT_SIZE - 1);
        let mut first = None;
        let alpha0 = alpha;
        if self.settings.prune {
            let e = self.tt[slot];
            if e.key == key {
                first = (e.best > 0).then(|| e.best as usize - 1);
                if e.depth as u32 >= depth {
                    let s = from_table(e.score, ply);
                    let usable = match e.bound {
                        0 => true,
                        1 => s >= beta,
                        _ => s <= alpha,
                    };
                    if usable {
                        self.buffers[ply] = children;
                        return s;
                    }
                }
            }
        }
        // The table's move, then captures (fewer pieces left first), then the rest.
        let mut order: Vec<u16> = (0..children.len() as u16).collect();
        order.sort_by_key(|&i| {
            (
                Some(i as usize) != first,
                children[i as usize].piece_count(),
            )
        });
        let mut best = f64::NEG_INFINITY;
        let mut best_index = 0;
        for &i in &order {
            let child = children[i as usize];
            let score = if self.repeats(&child) {
                0.0
            } else {
                self.path.push(*pos);
                let s = -self.negamax(&child, depth - 1, ply + 1, -beta, -alpha);
                self.path.pop();
                s
            };
            if score > best {
                best = score;
                best_index = i;
            }
            if self.settings.prune {
                alpha = alpha.max(score);
                if alpha >= beta {
                    break;
                }
            }
        }
        if self.settings.prune && !self.stopped {
            let bound = if best <= alpha0 {
                2
            } else if best >= beta {
                1
            } else {
                0
            };
            self.tt[slot] = Entry {
                key,
                depth: depth.min(255) as u8,
                bound,
                best: best_index + 1,
                score: to_table(best, ply),
            };
        }
        self.buffers[ply] = children;
        best
    }

    /// Scores of every root move at `depth` (a full window each), or `None` if time ran out.
    fn root_scores(&mut self, game: &Game, moves: &[Move], depth: u32) -> Option<Vec<f64>> {
        let pos = *game.position();
        let mut scores = Vec::with_capacity(moves.len());
        let mut alpha = -2.0 * MATE;
        for m in moves {
            let child = m.apply(&pos);
            let s = if game.occurred(&child) {
                0.0
            } else {
                self.path.clear();
                self.path.extend_from_slice(game.positions());
                // Pruned: only the best needs an exact score, the others a bound below it
                // (just below, so a move as good as the best is scored exactly: a tie).
                let a = if self.settings.prune {
                    alpha - 1e-6
                } else {
                    -2.0 * MATE
                };
                -self.negamax(&child, depth - 1, 1, -2.0 * MATE, -a)
            };
            if self.stopped {
                return None;
            }
            alpha = alpha.max(s);
            scores.push(s);
        }
        Some(scores)
    }

    /// The best move after the deepest search finished in time, with its score.
    fn search(&mut self, game: &Game) -> (Move, f64, u64) {
        let moves = legal_moves(game.position());
        self.best_of(game, &moves)
    }

    /// The time each later move may take (`None`: the depth alone bounds it).
    pub fn set_time(&mut self, time: Option<Duration>) {
        self.settings.time = time;
    }

    /// `search` among `moves` only (some of the legal moves, none empty): the best, its
    /// score, and the nodes searched.
    pub fn best_of(&mut self, game: &Game, moves: &[Move]) -> (Move, f64, u64) {
        let moves = moves.to_vec();
        let start = self.nodes;
        self.stopped = false;
        // 1% of the time is kept for answering, so the move arrives within the budget.
        self.deadline = self.settings.time.map(|t| Instant::now() + t.mul_f64(0.99));
        let mut best = (moves[0], 0.0);
        for depth in 1..=self.settings.depth.max(1) {
            let Some(scores) = self.root_scores(game, &moves, depth) else {
                break;
            };
            let top = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            // Ties broken at random, so games between the same players differ.
            let ties: Vec<usize> = (0..moves.len())
                .filter(|&i| scores[i] >= top - 1e-9)
                .collect();
            let pick = ties[self.rng.below(ties.len())];
            best = (moves[pick], top);
            if top.abs() >= MATE - 100.0
                || self.settings.time.is_none() && depth == self.settings.depth
            {
                break;
            }
        }
        (best.0, best.1, self.nodes - start)
    }
}

/// A score as the table keeps it: a forced end counted in plies from the node.
fn to_table(score: f64, ply: usize) -> f64 {
    if score >= MATE - 100.0 {
        score + ply as f64
    } else if score <= -(MATE - 100.0) {
        score - ply as f64
    } else {
        score
    }
}

/// A table score back at `ply` from the root.
fn from_table(score: f64, ply: usize) -> f64 {
    if score >= MATE - 100.0 {
        score - ply as f64
    } else if score <= -(MATE - 100.0) {
        score + ply as f64
    } else {
        score
    }
}

/// What a search score says of the game, when it is a forced end.
fn verdict_of(score: f64) -> Option<(Verdict, Source)> {
    if score >= MATE - 100.0 {
        Some((Verdict::Win, Source::Search))
    } else if score <= -(MATE - 100.0) {
        Some((Verdict::Loss, Source::Search))
    } else {
        None
    }
}

impl Agent for AlphaBeta {
    fn name(&self) -> String {
        let kind = if self.settings.prune {
            "alphabeta"
        } else {
            "minimax"
        };
        match self.settings.time {
            Some(t) => format!("{kind} (depth {}, {:?} a move)", self.settings.depth, t),
            None => format!("{kind} (depth {})", self.settings.depth),
        }
    }

    fn choose(&mut self, game: &Game) -> Choice {
        let (mv, score, work) = self.search(game);
        Choice::of(mv, verdict_of(score), Some(score), work)
    }

    fn analyse(&mut self, game: &Game) -> Vec<MoveInfo> {
        let moves = legal_moves(game.position());
        self.deadline = None;
        self.stopped = false;
        let prune = self.settings.prune;
        // Exact scores for every move: no bounds from the others.
        self.settings.prune = false;
        let depth = self.settings.depth.min(4);
        let scores = self.root_scores(game, &moves, depth).unwrap_or_default();
        self.settings.prune = prune;
        let mut out: Vec<MoveInfo> = moves
            .iter()
            .zip(scores)
            .map(|(&mv, s)| MoveInfo {
                mv,
                value: verdict_of(s),
                distance: None,
                score: Some(s),
            })
            .collect();
        out.sort_by(|a, b| {
            b.score
                .partial_cmp(&a.score)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        out
    }
}
