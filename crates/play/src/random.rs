//! The random player: a legal move chosen uniformly.

use crate::agent::{Agent, Choice};
use crate::game::Game;
use crate::rng::Rng;
use fanorona_rules::moves::legal_moves;

pub struct Random {
    rng: Rng,
}

impl Random {
    pub fn new(seed: u64) -> Random {
        Random {
            rng: Rng::new(seed),
        }
    }
}

impl Agent for Random {
    fn name(&self) -> String {
        "random".to_string()
    }

    fn choose(&mut self, game: &Game) -> Choice {
        let moves = legal_moves(game.position());
        let mv = moves[self.rng.below(moves.len())];
        Choice::of(mv, None, None, 0)
    }
}
