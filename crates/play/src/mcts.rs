//! The MCTS player: UCT (Kocsis and Szepesvári 2006) with MCTS-Solver (Winands, Björnsson
//! and Saito 2008): a won or lost position is proven inside the tree and backed up, so a
//! proven win is played and a proven loss avoided. Rollouts play random moves, or moves
//! biased to captures (the largest most often), or to the evaluation (the best-evaluated
//! move most often), to the end of the game or a cap, where the evaluation decides.

use std::time::{Duration, Instant};

use crate::agent::{Agent, Choice, Level, Source, Tools, Verdict};
use crate::eval;
use crate::game::Game;
use crate::rng::Rng;
use fanorona_rules::movegen::successors_into;
use fanorona_rules::moves::legal_moves;
use fanorona_rules::position::Position;

/// The exploration constant by default: UCB1's sqrt(2).
pub const DEFAULT_C: f64 = std::f64::consts::SQRT_2;

/// Rollout plies before the evaluation decides.
const ROLLOUT_CAP: usize = 200;

/// A tree node. `reward` and `proven` are for the side that moved into it.
struct Node {
    pos: Position,
    parent: u32,
    first_child: u32,
    children: u32,
    expanded: bool,
    visits: u32,
    reward: f64,
    /// 1: the side that moved here wins; -1: it loses; 0: not proven.
    proven: i8,
    /// A position of the game's history: a draw by repetition, not searched further.
    repeated: bool,
}

pub use crate::agent::Rollout;

pub struct Settings {
    pub playouts: u64,
    pub time: Option<Duration>,
    pub c: f64,
    pub rollout: Rollout,
}

pub struct Mcts {
    settings: Settings,
    rng: Rng,
    nodes: Vec<Node>,
    buffer: Vec<Position>,
    playouts_done: u64,
}

impl Mcts {
    /// MCTS at a level: easy 300 playouts a move, medium 3000, hard 30000 within 1 second
    /// (or the tools' move time), rollouts biased to captures from medium on (the tools may
    /// set the rollouts and the exploration constant).
    pub fn for_level(level: Level, tools: &Tools) -> Mcts {
        let (playouts, time, rollout) = match level {
            Level::Easy => (300, None, Rollout::Random),
            Level::Medium => (3_000, None, Rollout::Captures),
            Level::Hard | Level::Perfect => {
                (30_000, Some(Duration::from_secs(1)), Rollout::Captures)
            }
        };
        Mcts::new(
            Settings {
                playouts,
                time: tools.move_time.or(time),
                c: tools.mcts_c.unwrap_or(DEFAULT_C),
                rollout: tools.mcts_rollout.unwrap_or(rollout),
            },
            tools.seed,
        )
    }

    pub fn new(settings: Settings, seed: u64) -> Mcts {
        Mcts {
            settings,
            rng: Rng::new(seed),
            nodes: Vec::new(),
            buffer: Vec::with_capacity(64),
            playouts_done: 0,
        }
    }

    /// Playouts run so far (for benchmarks).
    pub fn playouts(&self) -> u64 {
        self.playouts_done
    }

    fn node(&mut self, pos: Position, parent: u32, game: &Game) -> u32 {
        let mut buffer = std::mem::take(&mut self.buffer);
        successors_into(&pos, &mut buffer);
        let lost = buffer.is_empty();
        self.buffer = buffer;
        // A repetition of the game, or of the tree's own path to this node, is a draw.
        let repeated = parent != u32::MAX && (game.occurred(&pos) || self.on_path(parent, &pos));
        self.nodes.push(Node {
            pos,
            parent,
            first_child: 0,
            children: 0,
            expanded: false,
            visits: 0,
            reward: 0.0,
            // The side to move here has no move: the side that moved here has won.
            proven: if lost { 1 } else { 0 },
            repeated,
        });
        (self.nodes.len() - 1) as u32
    }

    /// Whether `pos` is `from` or one of its ancestors (only positions with as many pieces
    /// can be equal).
    fn on_path(&self, from: u32, pos: &Position) -> bool {
        let mut at = from;
        while at != u32::MAX {
            let node = &self.nodes[at as usize];
            if node.pos.piece_count() != pos.piece_count() {
                return false;
            }
            if node.pos == *pos {
                return true;
            }
            at = node.parent;
        }
        false
    }

    fn expand(&mut self, n: u32, game: &Game) {
        let mut children = Vec::new();
        successors_into(&self.nodes[n as usize].pos, &mut children);
        let first = self.nodes.len() as u32;
        for c in &children {
            self.node(*c, n, game);
        }
        let node = &mut self.nodes[n as usize];
        node.first_child = first;
        node.children = children.len() as u32;
        node.expanded = true;
    }

    /// The child to descend to: a proven win at once, else the best upper confidence bound
    /// among children not proven lost (all proven lost: any).
    fn select(&self, n: u32) -> u32 {
        let node = &self.nodes[n as usize];
        let range = node.first_child..node.first_child + node.children;
        if let Some(win) = range.clone().find(|&c| self.nodes[c as usize].proven == 1) {
            return win;
        }
        let log_n = (node.visits.max(1) as f64).ln();
        let mut best = (f64::NEG_INFINITY, node.first_child);
        for c in range {
            let child = &self.nodes[c as usize];
            if child.proven == -1 {
                continue;
            }
            let ucb = if child.visits == 0 {
                f64::INFINITY
            } else {
                child.reward / child.visits as f64
                    + self.settings.c * (log_n / child.visits as f64).sqrt()
            };
            if ucb > best.0 {
                best = (ucb, c);
            }
        }
        best.1
    }

    /// A rollout from `pos`: the reward (1 win, 0 loss, between by evaluation at the cap)
    /// for the side to move at `pos`.
    fn rollout(&mut self, pos: Position) -> f64 {
        let mut p = pos;
        let mut buffer = std::mem::take(&mut self.buffer);
        let mut flip = false;
        let mut reward = None;
        for _ in 0..ROLLOUT_CAP {
            successors_into(&p, &mut buffer);
            if buffer.is_empty() {
                // The side to move at `p` has lost.
                reward = Some(0.0);
                break;
            }
            let next = match self.settings.rollout {
                Rollout::Captures => {
                    let least = buffer.iter().map(Position::piece_count).min().unwrap_or(0);
                    if least < p.piece_count() && self.rng.unit() < 0.9 {
                        // The largest captures: one of them at random.
                        let captures = buffer.iter().filter(|c| c.piece_count() == least).count();
                        let k = self.rng.below(captures);
                        *buffer
                            .iter()
                            .filter(|c| c.piece_count() == least)
                            .nth(k)
                            .expect("k is below their count")
                    } else {
                        buffer[self.rng.below(buffer.len())]
                    }
                }
                Rollout::Evaluation if self.rng.unit() < 0.8 => {
                    // The child whose side to move (the opponent) stands worst.
                    *buffer
                        .iter()
                        .min_by(|a, b| eval::score(a).total_cmp(&eval::score(b)))
                        .expect("there are moves")
                }
                _ => buffer[self.rng.below(buffer.len())],
            };
            p = next;
            flip = !flip;
        }
        self.buffer = buffer;
        let r = reward.unwrap_or_else(|| 0.5 + 0.5 * eval::score(&p));
        if flip { 1.0 - r } else { r }
    }

    fn playout(&mut self, game: &Game) {
        let mut n = 0u32;
        // Selection.
        loop {
            let node = &self.nodes[n as usize];
            if node.proven != 0 || node.repeated || !node.expanded {
                break;
            }
            n = self.select(n);
        }
        // Expansion and simulation; `r` is for the side that moved into `n`.
        let (proven, repeated, visits, pos) = {
            let node = &self.nodes[n as usize];
            (node.proven, node.repeated, node.visits, node.pos)
        };
        let r = if proven != 0 {
            if proven == 1 { 1.0 } else { 0.0 }
        } else if repeated {
            0.5
        } else {
            // A leaf is expanded on its second visit; its first only rolls out.
            if visits > 0 {
                self.expand(n, game);
            }
            1.0 - self.rollout(pos)
        };
        self.playouts_done += 1;
        // Back-propagation, with the solver's proofs.
        let mut r = r;
        let mut at = n;
        loop {
            let node = &mut self.nodes[at as usize];
            node.visits += 1;
            node.reward += r;
            let parent = node.parent;
            if node.expanded && node.proven == 0 {
                self.prove(at);
            }
            if parent == u32::MAX {
                break;
            }
            at = parent;
            r = 1.0 - r;
        }
    }

    /// The side to move at a node wins if one of its moves wins (the node is then lost for
    /// the side that moved into it) and loses if every move loses (won for that side).
    fn prove(&mut self, n: u32) {
        let node = &self.nodes[n as usize];
        let range = node.first_child..node.first_child + node.children;
        if range.clone().any(|c| self.nodes[c as usize].proven == 1) {
            self.nodes[n as usize].proven = -1;
        } else if node.children > 0 && range.clone().all(|c| self.nodes[c as usize].proven == -1) {
            self.nodes[n as usize].proven = 1;
        }
    }
}

impl Agent for Mcts {
    fn name(&self) -> String {
        format!(
            "mcts ({} playouts{}, c {:.2}, rollouts {})",
            self.settings.playouts,
            self.settings
                .time
                .map(|t| format!(" or {t:?}"))
                .unwrap_or_default(),
            self.settings.c,
            self.settings.rollout.name()
        )
    }

    fn choose(&mut self, game: &Game) -> Choice {
        let pos = *game.position();
        self.nodes.clear();
        self.node(pos, u32::MAX, game);
        self.expand(0, game);
        let deadline = self.settings.time.map(|t| Instant::now() + t);
        let start = self.playouts_done;
        while self.playouts_done - start < self.settings.playouts
            && self.nodes[0].proven == 0
            && deadline.is_none_or(|d| Instant::now() < d)
        {
            self.playout(game);
        }
        // A proven win; else the most visited move not proven lost.
        let root = &self.nodes[0];
        let range = root.first_child..root.first_child + root.children;
        let pick = range
            .clone()
            .find(|&c| self.nodes[c as usize].proven == 1)
            .or_else(|| {
                range
                    .clone()
                    .filter(|&c| self.nodes[c as usize].proven != -1)
                    .max_by_key(|&c| self.nodes[c as usize].visits)
            })
            .unwrap_or(root.first_child);
        let chosen = &self.nodes[pick as usize];
        let child = chosen.pos;
        let value = match chosen.proven {
            1 => Some((Verdict::Win, Source::Search)),
            -1 => Some((Verdict::Loss, Source::Search)),
            _ => None,
        };
        let score = Some(2.0 * chosen.reward / chosen.visits.max(1) as f64 - 1.0);
        // The move that leads to the chosen position (several may: any of them).
        let mv = legal_moves(&pos)
            .into_iter()
            .find(|m| m.apply(&pos) == child)
            .expect("a child is reached by a legal move");
        Choice::of(mv, value, score, self.playouts_done - start)
    }
}
