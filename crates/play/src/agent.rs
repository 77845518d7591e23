//! One interface for every player: a game in, a move out, with what the player knows about
//! the move's value; and the players by name and level.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

use crate::game::Game;
use fanorona_rules::moves::Move;
use fanorona_tables::Database;

/// A move's value for the side that plays it, where it is known: the tables' word for a
/// side-to-move result, ordered from loss to win.
pub use fanorona_tables::Wdl as Verdict;

/// Where a known value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The move ends the game (the opponent has no move) or repeats a position (a draw).
    Rules,
    /// The endgame tables.
    Tables,
    /// The rote store of positions solved by earlier searches.
    Rote,
    /// A proof-number search within the player's budget.
    Search,
    /// A proof certificate, checked (the web app's analysis reads them).
    Certificate,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Rules => "rules",
            Source::Tables => "tables",
            Source::Rote => "rote store",
            Source::Search => "search",
            Source::Certificate => "certificate",
        }
    }
}

/// What a player says about one move.
#[derive(Clone, Debug)]
pub struct MoveInfo {
    pub mv: Move,
    /// The game-theoretic value for the mover, if known, and from where.
    pub value: Option<(Verdict, Source)>,
    /// Plies to the end or a capture under best play, where the tables keep distances.
    pub distance: Option<u32>,
    /// A heuristic score for the mover (-1 to 1; search scores beyond that are mates).
    pub score: Option<f64>,
}

/// A player's decision.
#[derive(Clone, Debug)]
pub struct Choice {
    pub mv: Move,
    /// What the player knows of the chosen move.
    pub info: MoveInfo,
    /// Work done: nodes searched or playouts run.
    pub work: u64,
    /// Why it chose the move, for players that say (the proof player).
    pub why: Option<Why>,
}

impl Choice {
    /// `mv`, with its value and score where the player knows them, and the work it took.
    pub fn of(mv: Move, value: Option<(Verdict, Source)>, score: Option<f64>, work: u64) -> Choice {
        Choice {
            mv,
            info: MoveInfo {
                mv,
                value,
                distance: None,
                score,
            },
            work,
            why: None,
        }
    }
}

/// Why the proof player made a move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    pub from: MoveFrom,
    /// In words, naming the certificate or what the player fell back on.
    pub text: String,
}

/// Where the proof player's move came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveFrom {
    /// A checked certificate's move.
    Certificate,
    /// The endgame tables (at or below a certificate's table leaf, or anywhere they reach).
    Tables,
    /// A win a bounded search proved, taken instead of the certificate's move.
    Win,
    /// Outside every certificate and the tables: perfect play's choice.
    Fallback,
}

impl MoveFrom {
    pub const ALL: [MoveFrom; 4] = [
        MoveFrom::Certificate,
        MoveFrom::Tables,
        MoveFrom::Win,
        MoveFrom::Fallback,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MoveFrom::Certificate => "certificate",
            MoveFrom::Tables => "tables",
            MoveFrom::Win => "win",
            MoveFrom::Fallback => "fallback",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// A player. `choose` is only called on a game that has not ended.
pub trait Agent: Send {
    /// Its name and settings, as a match reports them ("alphabeta:hard").
    fn name(&self) -> String;

    fn choose(&mut self, game: &Game) -> Choice;

    /// Every legal move with what the player knows of it, best first (for hints). The
    /// default knows only its own choice.
    fn analyse(&mut self, game: &Game) -> Vec<MoveInfo> {
        let choice = self.choose(game);
        vec![choice.info]
    }
}

/// How strong a player is asked to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Easy,
    Medium,
    Hard,
    Perfect,
}

impl Level {
    pub const ALL: [Level; 4] = [Level::Easy, Level::Medium, Level::Hard, Level::Perfect];

    pub fn name(self) -> &'static str {
        match self {
            Level::Easy => "easy",
            Level::Medium => "medium",
            Level::Hard => "hard",
            Level::Perfect => "perfect",
        }
    }
}

/// The kinds of player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Random,
    Minimax,
    AlphaBeta,
    Mcts,
    Perfect,
    Winimax,
    /// The proof player: the certificates' moves, the tables, then perfect play.
    Proof,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Random,
        Kind::Minimax,
        Kind::AlphaBeta,
        Kind::Mcts,
        Kind::Perfect,
        Kind::Winimax,
        Kind::Proof,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Random => "random",
            Kind::Minimax => "minimax",
            Kind::AlphaBeta => "alphabeta",
            Kind::Mcts => "mcts",
            Kind::Perfect => "perfect",
            Kind::Winimax => "winimax",
            Kind::Proof => "proof",
        }
    }

    /// Whether it takes a level: the searchers do; random, perfect play and WINIMAX play one
    /// way only.
    pub fn has_levels(self) -> bool {
        matches!(self, Kind::Minimax | Kind::AlphaBeta | Kind::Mcts)
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SpecError {
    #[error(
        "unknown player '{0}': use random, minimax, alphabeta, mcts, perfect, winimax or proof, with a level after a colon (alphabeta:hard)"
    )]
    Kind(String),
    #[error("unknown level '{0}': use easy, medium, hard or perfect")]
    Level(String),
    #[error("'{0}': {1} has no levels (only minimax, alphabeta and mcts have them)")]
    NoLevels(String, &'static str),
}

/// A player named on the command line: `KIND[:LEVEL]`, such as `alphabeta:hard` or `mcts`.
/// The level defaults to medium (perfect for perfect and winimax).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub kind: Kind,
    pub level: Level,
}

impl Spec {
    /// Whether it plays perfectly where it can (perfect play, WINIMAX, the proof player, or
    /// a searcher's perfect level, which is perfect play): those read the tables and the rote
    /// store.
    pub fn plays_perfectly(self) -> bool {
        matches!(self.kind, Kind::Perfect | Kind::Winimax | Kind::Proof)
            || self.level == Level::Perfect
    }

    /// Whether it follows certificates (the proof player).
    pub fn follows_certificates(self) -> bool {
        self.kind == Kind::Proof
    }
}

impl std::str::FromStr for Spec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Spec, SpecError> {
        // Names in any case (`AlphaBeta:Hard`); a colon needs a level after it.
        let (kind, level) = match s.split_once(':') {
            Some((kind, level)) => (kind, Some(level.trim().to_ascii_lowercase())),
            None => (s, None),
        };
        let kind = Kind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(kind.trim()))
            .ok_or_else(|| SpecError::Kind(s.to_string()))?;
        // A level these players would ignore is refused rather than dropped.
        if !kind.has_levels() && level.is_some() {
            return Err(SpecError::NoLevels(s.to_string(), kind.name()));
        }
        let level = match level.as_deref() {
            None if matches!(kind, Kind::Perfect | Kind::Winimax | Kind::Proof) => Level::Perfect,
            None => Level::Medium,
            Some(l) => Level::ALL
                .into_iter()
                .find(|x| x.name() == l)
                .ok_or_else(|| SpecError::Level(l.to_string()))?,
        };
        Ok(Spec { kind, level })
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The perfect level of a searcher is the perfect player: named as what plays.
        if self.kind.has_levels() && self.level == Level::Perfect {
            f.write_str(Kind::Perfect.name())
        } else if self.kind.has_levels() {
            write!(f, "{}:{}", self.kind.name(), self.level.name())
        } else {
            f.write_str(self.kind.name())
        }
    }
}

/// What players may use: the endgame tables, a time limit per move, and a seed.
#[derive(Clone, Default)]
pub struct Tools {
    pub db: Option<Arc<Database>>,
    /// A limit on each move's thinking time (the level's own budget otherwise).
    pub move_time: Option<Duration>,
    pub seed: u64,
    /// MCTS's exploration constant (sqrt 2 by default).
    pub mcts_c: Option<f64>,
    /// MCTS's rollouts (by level by default).
    pub mcts_rollout: Option<Rollout>,
    /// Positions solved by earlier searches (the sessions' rote store), for perfect play.
    pub rote: Option<Arc<fanorona_search::rote::RoteTable>>,
    /// Certificates the proof player may follow.
    pub certificates: Option<Arc<crate::strategy::Library>>,
}

/// How rollouts choose their moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rollout {
    Random,
    /// A capture 9 times in 10 where there is one, the largest.
    Captures,
    /// The move after which the evaluation is best for the mover, 8 times in 10.
    Evaluation,
}

impl Rollout {
    pub fn name(self) -> &'static str {
        match self {
            Rollout::Random => "random",
            Rollout::Captures => "captures",
            Rollout::Evaluation => "evaluation",
        }
    }
}

impl std::str::FromStr for Rollout {
    type Err = String;

    fn from_str(s: &str) -> Result<Rollout, String> {
        [Rollout::Random, Rollout::Captures, Rollout::Evaluation]
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| format!("'{s}' is not a rollout: use random, captures or evaluation"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roster::make;

    #[test]
    fn players_are_named_kind_and_level() {
        let s: Spec = "alphabeta:hard".parse().unwrap();
        assert_eq!((s.kind, s.level), (Kind::AlphaBeta, Level::Hard));
        assert_eq!(s.to_string(), "alphabeta:hard");
        assert_eq!("mcts".parse::<Spec>().unwrap().level, Level::Medium);
        assert_eq!("perfect".parse::<Spec>().unwrap().level, Level::Perfect);
        assert!(matches!("chess".parse::<Spec>(), Err(SpecError::Kind(_))));
        assert_eq!(
            "mcts:insane".parse::<Spec>(),
            Err(SpecError::Level("insane".into()))
        );
        // Any case; a colon with no level after it is refused, for every kind.
        let s: Spec = "AlphaBeta:EASY".parse().unwrap();
        assert_eq!((s.kind, s.level), (Kind::AlphaBeta, Level::Easy));
        assert_eq!(
            "alphabeta:".parse::<Spec>(),
            Err(SpecError::Level("".into()))
        );
        assert!(matches!(
            "perfect:".parse::<Spec>(),
            Err(SpecError::NoLevels(..))
        ));
        // A searcher's perfect level is named as the player it is.
        assert_eq!(
            "mcts:perfect".parse::<Spec>().unwrap().to_string(),
            "perfect"
        );
        // The perfect level of a searcher is perfect play: in a position where four of ten
        // moves win (the 5x5 tables: a1-a2, a3-a4, a1-b1, d1-c1; the others draw or lose;
        // minimax:perfect played the losing a3-b2 as hard) each plays a win, and knows it.
        let pos: fanorona_rules::Position = ".W.../...../B..../...W./B..B. b".parse().unwrap();
        let game = crate::game::Game::new(pos, None);
        for name in ["minimax:perfect", "alphabeta:perfect", "mcts:perfect"] {
            let spec: Spec = name.parse().unwrap();
            let mut player = make(spec, &Tools::default());
            assert!(
                player.name().starts_with("perfect "),
                "{name}: {}",
                player.name()
            );
            let choice = player.choose(&game);
            let played = choice.mv.notation(pos.board());
            assert!(
                ["a1-a2", "a3-a4", "a1-b1", "d1-c1"].contains(&played.as_str()),
                "{name}: {played}"
            );
            assert!(
                matches!(choice.info.value, Some((Verdict::Win, _))),
                "{name}: {:?}",
                choice.info.value
            );
        }
        // Players without levels refuse one instead of ignoring it.
        for name in ["random:hard", "perfect:easy", "winimax:perfect"] {
            assert!(
                matches!(name.parse::<Spec>(), Err(SpecError::NoLevels(..))),
                "{name}"
            );
        }
    }
}
