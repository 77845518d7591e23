//! A plain alpha-beta solver: the exact value of a position by searching every line to its
//! end (the end of the game, a table, or a repetition of the path, which is a draw). No
//! transposition table and no proof numbers: a separate way to the same answers, for
//! cross-checking the proof-number solvers on positions small enough for it.

use crate::Value;
use fanorona_rules::movegen::{is_lost, successors};
use fanorona_rules::position::Position;
use fanorona_tables::{Database, Wdl};

/// The alpha-beta solver and its node budget.
pub struct AlphaBeta<'a> {
    db: Option<&'a Database>,
    budget: u64,
    pub nodes: u64,
}

impl<'a> AlphaBeta<'a> {
    pub fn new(db: Option<&'a Database>, budget: u64) -> AlphaBeta<'a> {
        AlphaBeta {
            db,
            budget,
            nodes: 0,
        }
    }

    /// The value of `pos` under perfect play, or `None` if the budget ran out.
    pub fn value(&mut self, pos: &Position) -> Option<Value> {
        let mut path = Vec::new();
        let score = self.negamax(pos, -1, 1, &mut path)?;
        let mover = pos.side_to_move();
        Some(match score {
            1 => Value::Win(mover),
            -1 => Value::Win(mover.opponent()),
            _ => Value::Draw,
        })
    }

    /// +1 if the side to move wins, 0 for a draw, -1 if it loses; `path` holds the positions
    /// before `pos`.
    fn negamax(
        &mut self,
        pos: &Position,
        mut alpha: i8,
        beta: i8,
        path: &mut Vec<Position>,
    ) -> Option<i8> {
        self.nodes += 1;
        if self.nodes > self.budget {
            return None;
        }
        if path.contains(pos) {
            return Some(0);
        }
        if let Some(v) = self.db.and_then(|d| d.probe(pos)) {
            return Some(match v {
                Wdl::Win => 1,
                Wdl::Draw => 0,
                Wdl::Loss => -1,
            });
        }
        if is_lost(pos) {
            return Some(-1);
        }
        path.push(*pos);
        let mut best = -1;
        for child in successors(pos) {
            let score = -self.negamax(&child, -beta, -alpha, path)?;
            best = best.max(score);
            alpha = alpha.max(score);
            if alpha >= beta {
                break;
            }
        }
        path.pop();
        Some(best)
    }
}
