//! Every player by kind and level: the one place that knows each agent's type.

use crate::agent::{Agent, Kind, Level, Spec, Tools};
use crate::{alphabeta, mcts, perfect, proof, random, winimax};

/// A player of the given kind and level.
pub fn make(spec: Spec, tools: &Tools) -> Box<dyn Agent> {
    // The perfect level of a searcher is the perfect player (docs/guide/players.md: `alphabeta:perfect`).
    if spec.level == Level::Perfect && spec.kind.has_levels() {
        return Box::new(perfect::Perfect::new(tools));
    }
    match spec.kind {
        Kind::Random => Box::new(random::Random::new(tools.seed)),
        Kind::Minimax => Box::new(alphabeta::AlphaBeta::minimax(spec.level, tools)),
        Kind::AlphaBeta => Box::new(alphabeta::AlphaBeta::for_level(spec.level, tools)),
        Kind::Mcts => Box::new(mcts::Mcts::for_level(spec.level, tools)),
        Kind::Perfect => Box::new(perfect::Perfect::new(tools)),
        Kind::Winimax => Box::new(winimax::Winimax::new(tools)),
        Kind::Proof => Box::new(proof::Proof::new(tools)),
    }
}
