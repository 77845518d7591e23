//! WINIMAX (Raboanary et al. 2015): perfect play that, where the position is a draw,
//! chooses among the moves that keep the draw the one most likely to make a fallible
//! opponent go wrong. The opponent is modelled as choosing uniformly among its moves; a
//! move's chance is the share of the replies that lose, and, `depth` replies deep, the
//! best chance after each reply that keeps the draw.

use std::time::Duration;

use crate::agent::{Agent, Choice, MoveInfo, Tools, Verdict};
use crate::game::Game;
use crate::perfect::{self, Perfect, Sources, child_value, choice, move_values, rank};
use fanorona_rules::moves::legal_moves;

/// Opponent replies looked at by default.
pub const DEFAULT_DEPTH: u32 = 1;

pub struct Winimax {
    inner: Perfect,
    pub depth: u32,
    /// Nodes each question inside the look-ahead may take.
    pub inner_budget: u64,
    time: Option<Duration>,
}

impl Winimax {
    pub fn new(tools: &Tools) -> Winimax {
        Winimax {
            inner: Perfect::new(tools),
            depth: DEFAULT_DEPTH,
            inner_budget: perfect::DEFAULT_BUDGET / 10,
            time: tools.move_time,
        }
    }

    /// The chance that a uniform opponent, to move in `game`, goes wrong within `depth`
    /// replies (the side that just moved keeps the draw in between); with the search nodes
    /// spent.
    fn trap(&self, game: &Game, depth: u32, sources: Sources<'_>) -> (f64, u64) {
        let pos = *game.position();
        let replies = legal_moves(&pos);
        if replies.is_empty() {
            return (1.0, 0);
        }
        let (mut sum, mut work) = (0.0, 0);
        for r in &replies {
            let child = r.apply(&pos);
            let (value, _, effort) = child_value(game, &child, sources, self.inner_budget, None);
            work += effort;
            match value.map(|v| v.0) {
                // The reply loses for the opponent.
                Some(Verdict::Loss) => sum += 1.0,
                Some(Verdict::Draw) if depth > 1 => {
                    let mut after = game.clone();
                    if after.play(r).is_err() || after.end().is_some() {
                        continue;
                    }
                    let ours = move_values(&after, sources, self.inner_budget, None);
                    let mut best: f64 = 0.0;
                    for m in ours
                        .iter()
                        .filter(|v| v.info.value.map(|x| x.0) == Some(Verdict::Draw))
                    {
                        let mut next = after.clone();
                        if next.play(&m.info.mv).is_ok() && next.end().is_none() {
                            let (p, w) = self.trap(&next, depth - 1, sources);
                            work += w;
                            best = best.max(p);
                        }
                    }
                    sum += best;
                }
                _ => {}
            }
        }
        (sum / replies.len() as f64, work)
    }
}

impl Agent for Winimax {
    fn name(&self) -> String {
        format!("winimax (depth {}, {})", self.depth, self.inner.name())
    }

    fn choose(&mut self, game: &Game) -> Choice {
        let ranked = self.inner.ranked(game);
        let draws: Vec<usize> = (0..ranked.len())
            .filter(|&i| ranked[i].info.value.map(|x| x.0) == Some(Verdict::Draw))
            .collect();
        // Not a draw, or one way to keep it: perfect play decides.
        if ranked[0].info.value.map(|x| x.0) != Some(Verdict::Draw) || draws.len() < 2 {
            return self.inner.decide(game, &ranked);
        }
        let sources = self.inner.sources();
        let mut best = (f64::NEG_INFINITY, draws[0]);
        let mut work: u64 = ranked.iter().map(|v| v.effort).sum();
        for &i in &draws {
            let mut after = game.clone();
            if after.play(&ranked[i].info.mv).is_err() || after.end().is_some() {
                continue;
            }
            let (p, w) = self.trap(&after, self.depth, sources);
            work += w;
            if p > best.0 {
                best = (p, i);
            }
        }
        let mut c = choice(&ranked, best.1);
        c.info.score = Some(best.0);
        c.work = work;
        c
    }

    fn analyse(&mut self, game: &Game) -> Vec<MoveInfo> {
        let mut v = move_values(game, self.inner.sources(), self.inner.budget, self.time);
        rank(&mut v);
        v.into_iter().map(|x| x.info).collect()
    }
}
