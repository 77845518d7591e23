//! Playing: players (random, minimax, alpha-beta, MCTS, perfect play, WINIMAX, and the proof
//! player that follows checked certificates) behind one interface, games with the rules'
//! draws in play, game records, and matches. It uses the rules, the tables, the searches and
//! the certificate checker; nothing below it uses it (it sits beside the session layer).

pub mod agent;
pub mod alphabeta;
pub mod arena;
pub mod eval;
pub mod game;
pub mod mcts;
pub mod perfect;
pub mod pool;
pub mod proof;
pub mod random;
pub mod record;
pub mod report;
pub mod rng {
    //! The seeded generator, from the rules crate (the value model's training draws from it too).
    pub use fanorona_rules::rng::Rng;
}
pub mod roster;
pub mod stats;
pub mod strategy;
pub mod winimax;

pub use agent::{
    Agent, Choice, Kind, Level, MoveFrom, MoveInfo, Source, Spec, Tools, Verdict, Why,
};
pub use game::{End, Game, GameError};
pub use roster::make;
